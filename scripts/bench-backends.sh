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

python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys, os
out, rounds = sys.argv[1], int(sys.argv[2])
med = statistics.median
print(f"Median over {rounds} rounds.\n")
print("| threads | backend | inference median (ms) | inference p95 (ms) | frame total median (ms) | process CPU per frame (ms) | speed-up vs cpu (median of per-frame ratios) |")
print("|---|---|---|---|---|---|---|")
for t in (1, 2):
    runs = [json.loads(l) for l in open(os.path.join(out, f"side-by-side-{t}.jsonl"))]
    for i, b in enumerate(runs[0]["backends"]):
        rows = [r["backends"][i] for r in runs]
        inf = med(x["ms"]["inference"]["median"] for x in rows)
        p95 = med(x["ms"]["inference"]["p95"] for x in rows)
        tot = med(x["ms"]["total"]["median"] for x in rows)
        cpu = med(x["cpu_ms_per_frame"]["mean"] for x in rows)
        ratio = med(x.get("inference_speedup_vs_first_median", 1.0) for x in rows)
        print(f"| {t} | {b['backend']} ({b['device']}) | {inf:.2f} | {p95:.2f} | {tot:.2f} | {cpu:.2f} | {ratio:.2f}x |")
print()
print("| threads | standalone ONNX Runtime median / p95 (ms) | vigil cpu-ort median / p95 (ms) | cpu-ort / standalone (median of per-round ratios) | per run |")
print("|---|---|---|---|---|")
for t in (1, 2):
    runs = [json.loads(l) for l in open(os.path.join(out, f"standalone-{t}.jsonl"))]
    s = med(r["standalone_ms"]["median"] for r in runs)
    sp = med(r["standalone_ms"]["p95"] for r in runs)
    o = med(r["cpu_ort_ms"]["median"] for r in runs)
    op = med(r["cpu_ort_ms"]["p95"] for r in runs)
    ratio = med(r["ratio_median"] for r in runs)
    each = ", ".join(f"{r['ratio_median']:.3f}" for r in runs)
    print(f"| {t} | {s:.2f} / {sp:.2f} | {o:.2f} / {op:.2f} | {ratio:.3f} | {each} |")
EOF
