#!/usr/bin/env bash
# The NPU-ready models (models/yolox-nano-npu-*) on cpu-ort against the float model, 1 thread:
# does the CPU gain anything from the integer models? One `vigil bench` per model per round, the
# models in alternation, ROUNDS rounds; prints each model's median inference time (median over
# rounds of each run's median) and the median of its per-round ratio to the float model.
#   scripts/bench-npu-models.sh [ROUNDS] [IMAGE]      (default 5 rounds, a dev photograph)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
image=${2:-${VIGIL_SHARED:-../shared}/data/coco-person-dev/images/000000000139.jpg}
vigil=${VIGIL_BIN:-build/vigil}
models=(models/yolox-nano models/yolox-nano-npu-float models/yolox-nano-npu-a16w8
        models/yolox-nano-npu-a8w8 models/yolox-nano-npu-xint8)
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for m in "${models[@]}"; do
    ms=$("$vigil" bench --model "$m" --backend cpu-ort --threads 1 --warmup 5 --iterations 40 \
      --json "$image" 2>/dev/null | /usr/bin/python3 -c \
      'import json, sys; print(json.load(sys.stdin)["ms"]["inference"]["median"])')
    echo "$r $m $ms" >>"$results"
  done
done
/usr/bin/python3 - "$results" "${models[0]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
base = sys.argv[2]
by = {}
for r, m, ms in rows:
    by.setdefault(m, {})[r] = float(ms)
print("| model | inference median ms | ratio to float (median of rounds) |")
print("|---|---|---|")
for m, runs in by.items():
    ratios = [runs[r] / by[base][r] for r in runs]
    print(f"| {m} | {statistics.median(runs.values()):.2f} | {statistics.median(ratios):.2f} |")
PY
