#!/usr/bin/env bash
# scripts/fetch-onnxruntime.sh with VIGIL_ORT_FROM copies a local ONNX Runtime and never reaches
# for the network: apt-get, npm and curl are stubs that fail loudly, and the proxies point at a
# closed port. Made-up files stand for the headers and the library: the script only copies them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fetch="$here/scripts/fetch-onnxruntime.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/stubs"
for tool in apt-get npm curl wget; do
  printf '#!/bin/sh\necho "%s $*" >> "%s/network"\nexit 1\n' "$tool" "$work" > "$work/stubs/$tool"
  chmod +x "$work/stubs/$tool"
done
export PATH="$work/stubs:$PATH" http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
run() {  # run FROM DEST: fetch-onnxruntime.sh DEST with VIGIL_ORT_FROM=FROM, output in $work/out
  VIGIL_ORT_FROM=$1 "$fetch" "$2" > "$work/out" 2>&1
}
check_dest() {  # check_dest DEST LIBRARY_TEXT VERSION_PATTERN
  [[ -f $1/include/onnxruntime/onnxruntime_c_api.h ]] || fail "$1: no header"
  [[ -f $1/lib/libonnxruntime.so.1 && ! -L $1/lib/libonnxruntime.so.1 ]] || fail "$1: no library file"
  [[ $(readlink "$1/lib/libonnxruntime.so") == libonnxruntime.so.1 ]] || fail "$1: no libonnxruntime.so link"
  [[ $(cat "$1/lib/libonnxruntime.so.1") == "$2" ]] || fail "$1: wrong library"
  grep -qE "$3" "$1/VERSION" || fail "$1: VERSION is '$(cat "$1/VERSION")'"
}

# 1. A copy of what the script makes (another machine's .cache/onnxruntime), as a directory.
cache=$work/cache-copy
mkdir -p "$cache/include/onnxruntime" "$cache/lib"
echo '#define ORT_API_VERSION 21' > "$cache/include/onnxruntime/onnxruntime_c_api.h"
echo 'cxx' > "$cache/include/onnxruntime/onnxruntime_cxx_api.h"
echo 'library 1.30.0' > "$cache/lib/libonnxruntime.so.1"
ln -s libonnxruntime.so.1 "$cache/lib/libonnxruntime.so"
echo 'headers libonnxruntime-dev 1.21.0+dfsg-1 (trixie); runtime onnxruntime-node 1.30.0' > "$cache/VERSION"
run "$cache" "$work/dest1" || fail "directory copy: $(cat "$work/out")"
check_dest "$work/dest1" 'library 1.30.0' '^headers libonnxruntime-dev 1.21.0'
[[ -f $work/dest1/include/onnxruntime/onnxruntime_cxx_api.h ]] || fail "not every header copied"

# 2. Run again: present, untouched (the build does not relink).
touch -d '2001-01-01' "$work/dest1/lib/libonnxruntime.so.1"
run "$cache" "$work/dest1" || fail "second run: $(cat "$work/out")"
grep -q "present in" "$work/out" || fail "second run did not see it present: $(cat "$work/out")"
[[ $(stat -c %Y "$work/dest1/lib/libonnxruntime.so.1") == $(date -d 2001-01-01 +%s) ]] ||
  fail "second run rewrote the library"

# 3. An ONNX Runtime release archive: one top directory, headers in include/, versioned library.
rel=$work/onnxruntime-linux-x64-1.20.1
mkdir -p "$rel/include" "$rel/lib"
echo '#define ORT_API_VERSION 20' > "$rel/include/onnxruntime_c_api.h"
echo 'library 1.20.1' > "$rel/lib/libonnxruntime.so.1.20.1"
ln -s libonnxruntime.so.1.20.1 "$rel/lib/libonnxruntime.so.1"
echo '1.20.1' > "$rel/VERSION_NUMBER"
tar -czf "$work/release.tgz" -C "$work" "$(basename "$rel")"
run "$work/release.tgz" "$work/dest1" || fail "release archive: $(cat "$work/out")"
check_dest "$work/dest1" 'library 1.20.1' '^onnxruntime 1\.20\.1 '
[[ ! -e $work/dest1/include/onnxruntime/onnxruntime_cxx_api.h ]] || fail "the old copy's files were kept"

# 4. Something else is refused with the reason; the present copy stays.
mkdir "$work/empty"
run "$work/empty" "$work/dest1" && fail "an empty directory was accepted"
grep -q "no include/.../onnxruntime_c_api.h" "$work/out" || fail "bad message: $(cat "$work/out")"
run "$work/nonexistent" "$work/dest1" && fail "a missing path was accepted"
grep -q "no such file or directory" "$work/out" || fail "bad message: $(cat "$work/out")"
check_dest "$work/dest1" 'library 1.20.1' '^onnxruntime 1\.20\.1 '

[[ ! -e $work/network ]] || fail "reached for the network: $(cat "$work/network")"
echo "fetch-onnxruntime VIGIL_ORT_FROM: 4 scenarios passed, no network"
