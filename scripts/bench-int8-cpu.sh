#!/usr/bin/env bash
# Does an integer model pay on the CPU? ONNX Runtime's per-operator profile (cpu-ort's session
# options, 1 thread, the models in alternation, one letterboxed dev photograph) of:
#   float         models/yolox-nano
#   float-stem    the same with its Focus stem as one 6x6 conv (scripts/rewrite-focus.py)
#   a8w8          models/yolox-nano-npu-a8w8/npu.onnx (the shipped bundle's integer part)
#   xint8         models/yolox-nano-npu-xint8/npu.onnx
#   a8w8-noeq     a8w8 without cross-layer equalization (no per-channel Mul before each sigmoid;
#                 made here, 16 calibration frames: timing only, its accuracy is the models
#                 README's "a8w8 methods off" row)
# The bundles' npu.onnx leaves out the head (the score sigmoids and a transpose) that the float
# model includes. bench/int8-cpu.md has the figures and what they say.
#   scripts/bench-int8-cpu.sh [ITERATIONS]        (default 60 measured runs per model)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-60}
profile=${VIGIL_OP_PROFILE:-build/bench/vigil_ort_op_profile}
shared=${VIGIL_SHARED:-../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -x $profile ]] || { echo "bench-int8-cpu: build $profile first (cmake --build build --target vigil_ort_op_profile)" >&2; exit 2; }
/usr/bin/python3 scripts/rewrite-focus.py models/yolox-nano/yolox_nano.onnx "$work/float-stem.onnx"
/usr/bin/python3 scripts/quantize-model.py --model models/yolox-nano --preset a8w8 --equalize none \
  --calibration "$shared/data/videos/one-by-one-person-detection.mp4" --frames 16 \
  --out "$work/a8w8-noeq" >/dev/null
"$profile" --iterations "$iterations" models/yolox-nano/yolox_nano.onnx "$work/float-stem.onnx" \
  models/yolox-nano-npu-a8w8/npu.onnx models/yolox-nano-npu-xint8/npu.onnx "$work/a8w8-noeq/npu.onnx"
