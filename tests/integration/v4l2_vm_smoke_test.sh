#!/usr/bin/env bash
# Smoke test of the vivid test VM (scripts/v4l2-vm): build the base into $VIGIL_VM_WORK, boot a
# VM with 2 vivid devices, stream 10 frames of 640x480 YUYV from both at once with v4l2-ctl.
#   VIGIL_VM_WORK=$PWD/build/v4l2-vm bash tests/integration/v4l2_vm_smoke_test.sh
# Exit 0 pass, 1 fail, 77 skip (no Debian kernel package reachable, or host tools missing);
# VIGIL_VM_REQUIRED=1 turns a skip into a failure (for CI that must run it).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm=$root/scripts/v4l2-vm

fail() { echo "FAIL: $*"; exit 1; }
skip() {
  [[ ${VIGIL_VM_REQUIRED:-0} == 1 ]] && fail "$* (VIGIL_VM_REQUIRED=1, so not skipping)"
  echo "SKIP: $*"
  exit 77
}
since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'; }
[[ -n ${VIGIL_VM_WORK:-} ]] || fail "VIGIL_VM_WORK is not set (e.g. VIGIL_VM_WORK=\$PWD/build/v4l2-vm)"

# (a) The base: kernel package download, extraction, initramfs (cached after the first run).
echo "== mkbase.sh (VIGIL_VM_WORK=$VIGIL_VM_WORK)"
t0=$(date +%s.%N)
mkbase_log=$(mktemp)
trap 'rm -f "$mkbase_log"' EXIT
"$vm/mkbase.sh" 2>&1 | tee "$mkbase_log"
mkbase_rc=${PIPESTATUS[0]}
case $mkbase_rc in
  0) ;;
  3) skip "Debian kernel package not available: $(grep -m1 'error:' "$mkbase_log" | sed 's/.*error: //')" ;;
  4) skip "host tools missing: $(grep -m1 'error:' "$mkbase_log" | sed 's/.*error: //')" ;;
  *) fail "mkbase.sh failed (exit $mkbase_rc)" ;;
esac
echo "== mkbase.sh took $(since "$t0") s"

# (b) A VM with 2 vivid devices runs a job script from a job directory in the work directory.
mkdir -p "$VIGIL_VM_WORK/jobs"
job=$(mktemp -d "$VIGIL_VM_WORK/jobs/smoke.XXXXXX")
cat > "$job/smoke.sh" <<'EOF'
#!/bin/sh
# Runs in the VM: stream 10 frames from each device at the same time, then report per device.
# Frames go to the guest's /tmp: writing 12 MB back to the host over 9p would add seconds.
set -u
for d in 0 1; do
  v4l2-ctl --device /dev/video$d --set-fmt-video=width=640,height=480,pixelformat=YUYV \
    --stream-mmap --stream-count=10 --stream-to=/tmp/video$d.yuv > video$d.log 2>&1 &
  eval "pid$d=\$!"
done
status=0
for d in 0 1; do
  eval "wait \$pid$d"; rc=$?
  echo "smoke: /dev/video$d v4l2-ctl exit=$rc bytes=$(wc -c < /tmp/video$d.yuv) v4l2-ctl said: $(tr -s '<>\n ' ' ' < video$d.log | sed 's/^ //; s/ $//')"
  [ "$rc" -eq 0 ] || status=1
done
exit $status
EOF
chmod +x "$job/smoke.sh"
echo "== run-vivid.sh -n 2 (job directory $job)"
t0=$(date +%s.%N)
"$vm/run-vivid.sh" -n 2 -t 60 "$job" smoke.sh
rc=$?
echo "== VM run took $(since "$t0") s, exit $rc"

# (c) Checks on the host side.
[[ $rc -eq 0 ]] || fail "run-vivid.sh exited $rc (console: $job/vm-console.log)"
grep -qx '@@VIVID_READY uptime=[0-9.]* nodes: /dev/video0 /dev/video1' "$job/vm-console.log" ||
  fail "no READY marker with exactly 2 nodes in $job/vm-console.log"
grep -qx '@@VIVID_RC=0@@' "$job/vm-console.log" || fail "no @@VIVID_RC=0@@ marker"
for d in 0 1; do
  grep -q "^smoke: /dev/video$d v4l2-ctl exit=0 " "$job/vm-job.stdout" ||
    fail "/dev/video$d: no successful v4l2-ctl run in $job/vm-job.stdout"
  grep -q "^smoke: /dev/video$d .* bytes=$((10 * 640 * 480 * 2)) " "$job/vm-job.stdout" ||
    fail "/dev/video$d: not 10 frames of 614400 bytes captured (see $job/vm-job.stdout)"
done
rm -rf "$job"
echo "PASS: 2 vivid devices streamed 10 frames of 640x480 YUYV each inside the VM"
