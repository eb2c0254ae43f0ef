#!/usr/bin/env bash
# The backends side by side (bench/README.md, "Backends"): OpenCV DNN (cpu) against ONNX Runtime
# (cpu-ort) with 1 and 2 threads, in alternation frame by frame in one process (`vigil bench
# --backend cpu,cpu-ort`), and the cpu-ort backend against ONNX Runtime used directly, also in
# alternation (build/bench/vigil_ort_standalone_bench). Repeated ROUNDS times, the thread counts
# interleaved; prints the median over rounds of each figure as a markdown table.
#   scripts/bench-backends.sh [ROUNDS]      (default 5)
# Environment: VIGIL_BUILD_DIR (default build), VIGIL_BENCH_IMAGES (default the 50 COCO
# photographs in ../shared/data/coco-person-dev/images), VIGIL_BENCH_ITERATIONS (default 60).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds=${1:-5}
build=${VIGIL_BUILD_DIR:-build}
images=${VIGIL_BENCH_IMAGES:-../shared/data/coco-person-dev/images}
iterations=${VIGIL_BENCH_ITERATIONS:-60}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for tool in "$build/vigil" "$build/bench/vigil_ort_standalone_bench"; do
  [[ -x $tool ]] || { echo "bench-backends: $tool missing (cmake --build $build)" >&2; exit 1; }
done
[[ -d $images ]] || { echo "bench-backends: no images at $images" >&2; exit 1; }

for ((r = 1; r <= rounds; r++)); do
  for threads in 1 2; do
    echo "bench-backends: round $r/$rounds, $threads thread(s)" >&2
    "$build/vigil" bench --backend cpu,cpu-ort --threads "$threads" --warmup 5 \
      --iterations "$iterations" --json "$images" 2>>"$out/log" >>"$out/side-by-side-$threads.jsonl" ||
      { cat "$out/log" >&2; exit 1; }
    "$build/bench/vigil_ort_standalone_bench" --threads "$threads" --warmup 10 \
      --iterations $((iterations * 2)) --json >>"$out/standalone-$threads.jsonl"
  done
done

python3 scripts/lib/backends_table.py "$out" "$rounds"
