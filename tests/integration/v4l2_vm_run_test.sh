#!/usr/bin/env bash
# `vigil run` against real V4L2 devices: Debian's kernel with 3 vivid webcams in a QEMU VM
# (scripts/v4l2-vm). Every camera must capture and be detected on; /dev/video1 is unplugged
# mid-stream with vivid's `disconnect` control and must come back while the others go on.
#   VIGIL_VM_WORK=$PWD/build/v4l2-vm VIGIL_BINARY=$PWD/build/vigil bash tests/integration/v4l2_vm_run_test.sh
# Exit 0 pass, 1 fail, 77 skip (no kernel package or host tools; VIGIL_VM_REQUIRED=1 fails).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm=$root/scripts/v4l2-vm
fail() { echo "FAIL: $*"; exit 1; }
skip() {
  [[ ${VIGIL_VM_REQUIRED:-0} == 1 ]] && fail "$* (VIGIL_VM_REQUIRED=1, so not skipping)"
  echo "SKIP: $*"
  exit 77
}
[[ -n ${VIGIL_VM_WORK:-} ]] || fail "VIGIL_VM_WORK is not set"
[[ -x ${VIGIL_BINARY:-} ]] || fail "VIGIL_BINARY is not an executable: '${VIGIL_BINARY:-}'"
model=${VIGIL_MODEL_DIR:-$root/models/yolox-nano}
[[ -f $model/yolox_nano.onnx ]] || skip "model weights not installed in $model"

"$vm/mkbase.sh" > "$VIGIL_VM_WORK.mkbase.log" 2>&1
case $? in
  0) ;;
  3) skip "Debian kernel package not available ($(grep -m1 'error:' "$VIGIL_VM_WORK.mkbase.log"))" ;;
  4) skip "host tools missing ($(grep -m1 'error:' "$VIGIL_VM_WORK.mkbase.log"))" ;;
  *) cat "$VIGIL_VM_WORK.mkbase.log"; fail "mkbase.sh failed" ;;
esac

mkdir -p "$VIGIL_VM_WORK/jobs"
job=$(mktemp -d "$VIGIL_VM_WORK/jobs/run.XXXXXX")
# The guest mounts its own tmpfs over /tmp, so a checkout under /tmp is invisible inside the VM
# except for the job directory itself: give the job its own copy of the binary and the model.
cp "$VIGIL_BINARY" "$job/vigil"
# Libraries from outside the system directories (ONNX Runtime fetched into .cache/) go along.
mkdir -p "$job/lib"
ldd "$VIGIL_BINARY" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case $lib in
    /usr/* | /lib/* | /lib64/*) ;;
    *) cp -L "$lib" "$job/lib/" ;;
  esac
done
mkdir -p "$job/model"
cp "$model/model.yaml" "$model/yolox_nano.onnx" "$job/model/"
# Inference under TCG emulation takes about 6 s a frame, so detection is slow on purpose here:
# the scheduler shares it fairly, which is part of what this test checks.
cat > "$job/cameras.yaml" <<EOF
version: 1
detector: {model: $job/model, min_score: 0.3}
cameras:
  - {name: cam0, source: /dev/video0, format: yuyv, width: 640, height: 480, fps: 10, detect_fps: 1}
  - {name: cam1, source: /dev/video1, format: auto, width: 640, height: 480, fps: 10, detect_fps: 1}
  - {name: cam2, source: /dev/video2, format: yuyv, width: 640, height: 480, fps: 10, detect_fps: 1}
EOF
cat > "$job/job.sh" <<EOF
#!/bin/sh
# In the VM: run the daemon, unplug /dev/video1 after 35 s, let it come back, stop after 80 s.
LD_LIBRARY_PATH="$job/lib" "$job/vigil" run --config cameras.yaml --duration 80 --summary-json summary.json > vigil.log 2>&1 &
pid=\$!
sleep 35
echo "job: disconnecting /dev/video1"
v4l2-ctl -d /dev/video1 -c disconnect=1
wait \$pid
rc=\$?
echo "job: vigil exit \$rc"
exit \$rc
EOF
chmod +x "$job/job.sh"
echo "== run-vivid.sh -n 3 (job $job)"
"$vm/run-vivid.sh" -n 3 -t 180 "$job" ./job.sh
rc=$?
echo "== vigil log (from the VM):"
cat "$job/vigil.log" 2>/dev/null
[[ $rc -eq 0 ]] || fail "the job exited $rc"
[[ -f $job/summary.json ]] || fail "no summary.json"
python3 - "$job/summary.json" "$job/vigil.log" <<'PY' || fail "assertions on the summary failed"
import json, sys
s = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok = ok and cond
for name, c in sorted(s["cameras"].items()):
    check(c["captured"] >= 100, f"{name} captured {c['captured']} frames (>= 100)")
    check(c["detected"] >= 1, f"{name} detected on {c['detected']} frames (>= 1)")
    check(c["state"] == "streaming", f"{name} streaming at the end ({c['state']})")
check(s["cameras"]["cam1"]["reconnects"] >= 1, f"cam1 reconnected after the unplug ({s['cameras']['cam1']['reconnects']})")
check(s["cameras"]["cam0"]["reconnects"] == 0 and s["cameras"]["cam2"]["reconnects"] == 0,
      "cam0 and cam2 never lost their device")
check("[cam=cam1] source lost, reconnecting with backoff" in log, "the unplug is logged")
check("[cam=cam0] source lost" not in log and "[cam=cam2] source lost" not in log, "no other camera lost")
check("YUYV" in log, "the negotiated pixel format is logged")
sys.exit(0 if ok else 1)
PY
rm -rf "$job"
echo "PASS: 3 vivid cameras captured and detected; the unplugged one came back"
