#!/usr/bin/env python3
"""scripts/bench-backends.sh's table: the rounds' JSON lines of each backend and thread count
in OUT, as medians over the rounds (markdown on standard output).

    backends_table.py OUT ROUNDS
"""
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
