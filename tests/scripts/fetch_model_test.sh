#!/usr/bin/env bash
# scripts/fetch-model.sh installs only weights whose size and sha256 the manifest lists.
# Uses a copy of the shipped manifest with a made-up small "model" whose hash is written into it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fetch="$here/scripts/fetch-model.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

mkdir -p "$work/model" "$work/src"
printf 'pretend weights\n' > "$work/src/yolox_nano.onnx"
good_sha=$(sha256sum "$work/src/yolox_nano.onnx" | cut -d' ' -f1)
good_size=$(stat -c %s "$work/src/yolox_nano.onnx")
sed "s/sha256: c789161e[0-9a-f]*, size: [0-9]*/sha256: $good_sha, size: $good_size/" \
  "$here/models/yolox-nano/model.yaml" > "$work/model/model.yaml"
grep -q "$good_sha" "$work/model/model.yaml" || { echo "FAIL: test manifest not rewritten"; exit 1; }

fail() { echo "FAIL: $*"; exit 1; }

# 1. A listed file is installed from a directory, then recognised as already installed.
"$fetch" --model "$work/model" --from "$work/src" > "$work/out" 2>&1 || fail "listed file refused: $(cat "$work/out")"
grep -q "verified" "$work/out" || fail "no 'verified' in: $(cat "$work/out")"
cmp -s "$work/src/yolox_nano.onnx" "$work/model/yolox_nano.onnx" || fail "installed file differs"
"$fetch" --model "$work/model" --from /nonexistent > "$work/out" 2>&1 || fail "re-run did not see the installed file"
grep -q "already installed and verified" "$work/out" || fail "re-run: $(cat "$work/out")"

# 2. An unlisted file is refused, nothing is installed, and the message names the hash.
rm "$work/model/yolox_nano.onnx"
printf 'tampered\n' > "$work/src/yolox_nano.onnx"
if "$fetch" --model "$work/model" --from "$work/src/yolox_nano.onnx" > "$work/out" 2>&1; then
  fail "unlisted file accepted"
fi
bad_sha=$(sha256sum "$work/src/yolox_nano.onnx" | cut -d' ' -f1)
grep -q "$bad_sha" "$work/out" || fail "refusal does not name the hash: $(cat "$work/out")"
[[ ! -e $work/model/yolox_nano.onnx ]] || fail "refused file was installed"
ls -A "$work/model" | grep -q '^\.' && fail "temporary file left behind"

# 3. --allow-unverified installs it, says so loudly, and exits 1.
if "$fetch" --model "$work/model" --from "$work/src" --allow-unverified > "$work/out" 2>&1; then
  fail "--allow-unverified exited 0"
fi
grep -q "UNVERIFIED" "$work/out" || fail "no warning: $(cat "$work/out")"
[[ -f $work/model/yolox_nano.onnx ]] || fail "--allow-unverified did not install"

# 4. Unknown arguments and a missing manifest are clear errors.
"$fetch" --bogus > "$work/out" 2>&1 && fail "--bogus accepted"
grep -q "unknown argument '--bogus'" "$work/out" || fail "bad message: $(cat "$work/out")"
"$fetch" --model "$work/src" > "$work/out" 2>&1 && fail "missing manifest accepted"
grep -q "no model manifest" "$work/out" || fail "bad message: $(cat "$work/out")"

echo "fetch-model: 4 scenarios passed"
