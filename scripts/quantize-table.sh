#!/usr/bin/env bash
# Measures what each quantization preset and method step costs in accuracy: person AP / AP50 on
# `cpu-ort` for the float model, the float NPU part, and every variant below, on the dev
# photographs and on both TUD clips' ground truth. Prints the markdown table of
# models/README.md. Calibration: the one-by-one clip (never evaluated on here).
#   scripts/quantize-table.sh [WORK_DIR]      (about 35 minutes on a 2-core machine)
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${VIGIL_SHARED:-../shared}
work=${1:-$(mktemp -d)}
vigil=${VIGIL_BIN:-build/vigil}
videos="$shared/data/videos"
calibration="$videos/one-by-one-person-detection.mp4"
for need in "$calibration" "$shared/data/coco-person-dev/annotations.json"; do
  [[ -e $need ]] || { echo "quantize-table: $need missing" >&2; exit 1; }
done

sets=("$shared/data/coco-person-dev/images|$shared/data/coco-person-dev/annotations.json")
for clip in TUD-Campus TUD-Stadtmitte; do
  [[ -d $work/eval/$clip ]] || /usr/bin/python3 scripts/clip-eval-set.py "$videos/$clip.mp4" \
    "$work/eval/$clip" >&2
  sets+=("$work/eval/$clip|$work/eval/$clip/annotations.json")
done

row() {  # row LABEL MODEL_DIR
  local cells=""
  for set in "${sets[@]}"; do
    local result
    result=$("$vigil" eval --images "${set%%|*}" --annotations "${set##*|}" --model "$2" \
      --backend cpu-ort --json 2>/dev/null | tail -1)
    cells+=$(/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)
print(" %.3f / %.3f |" % (r["AP"], r["AP50"]), end="")' <<<"$result")
  done
  echo "| $1 |$cells"
}

variant() {  # variant LABEL TAG quantize-model.py ARGS...
  local label=$1 tag=$2
  shift 2
  [[ -d $work/$tag ]] || /usr/bin/python3 scripts/quantize-model.py --model models/yolox-nano \
    --calibration "$calibration" --out "$work/$tag" "$@" >&2
  row "$label" "$work/$tag"
}

echo "| model | dev photos AP / AP50 | TUD-Campus AP / AP50 | TUD-Stadtmitte AP / AP50 |"
echo "|---|---|---|---|"
row "float (models/yolox-nano)" models/yolox-nano
variant "float NPU part + CPU head (preset float)" float --preset float
variant "xint8 methods off: per-tensor power-of-two, MinMSE" xint8-plain --preset xint8 \
  --equalize none --no-bias-correction
variant "xint8 + equalization by weights, SiLU left as is" xint8-eqw-approx --preset xint8 \
  --equalize weights-approximate --no-bias-correction
variant "xint8 + equalization by weights, scale inside the sigmoid" xint8-eqw --preset xint8 \
  --equalize weights --no-bias-correction
variant "xint8 + equalization by activations instead" xint8-eqa --preset xint8 \
  --no-bias-correction
variant "xint8 + bias correction (preset xint8)" xint8 --preset xint8
variant "a8w8 methods off: per-channel weights, MinMax" a8w8-plain --preset a8w8 \
  --activation-range minmax --equalize none --no-bias-correction
variant "a8w8 + MinMSE ranges" a8w8-minmse --preset a8w8 --equalize none --no-bias-correction
variant "a8w8 + equalization by weights" a8w8-eqw --preset a8w8 --equalize weights \
  --no-bias-correction
variant "a8w8 + equalization by activations instead" a8w8-eqa --preset a8w8 --no-bias-correction
variant "a8w8 + bias correction (preset a8w8)" a8w8 --preset a8w8
variant "a16w8 methods off" a16w8-plain --preset a16w8 --no-bias-correction
variant "a16w8 + bias correction (preset a16w8)" a16w8 --preset a16w8
