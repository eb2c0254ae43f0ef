#!/usr/bin/env bash
# systemd/vigil.service as systemd itself reads it: `systemd-analyze verify` (syntax, known
# directives, executables) and `systemd-analyze security --offline` with the exposure goal of
# 2.0 or lower. The unit names /usr/bin/vigil; a copy pointing at the built binary is checked.
# Exit 77 (skipped) without systemd-analyze.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
binary=${VIGIL_BINARY:?VIGIL_BINARY must name the built vigil}
command -v systemd-analyze > /dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s|/usr/bin/vigil|$binary|g" "$source_dir/systemd/vigil.service" > "$work/vigil.service"

echo "== systemd-analyze verify"
# verify prints problems and may still exit 0: any output is a failure.
out=$(cd "$work" && systemd-analyze verify ./vigil.service 2>&1) || { echo "$out"; exit 1; }
if [[ -n $out ]]; then
  echo "$out"
  echo "FAIL: systemd-analyze verify complained"
  exit 1
fi
echo "clean"

echo "== systemd-analyze security (goal: exposure 2.0 or lower)"
report=$(cd "$work" && systemd-analyze security --offline=true ./vigil.service 2>&1) || true
echo "$report" | grep -E "✗|Overall exposure"
level=$(echo "$report" | sed -n 's/.*Overall exposure level for vigil.service: \([0-9.]*\).*/\1/p')
[[ -n $level ]] || { echo "FAIL: no exposure level in the report"; exit 1; }
if ! awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
  echo "FAIL: exposure $level is above 2.0"
  exit 1
fi
echo "PASS: exposure $level"
