#!/usr/bin/env python3
"""scripts/bench-cpu-threads.sh's table: each thread count's runs in OUT (their summaries), as
medians over the rounds.

    cpu_threads_table.py OUT ROUNDS DETECT_FPS
"""
import glob, json, re, statistics, sys
out, rounds, detect_fps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rows = {}
for f in sorted(glob.glob(f"{out}/r*-c*-*.json")):
    m = re.match(r".*/r(\d+)-c(\d+)-(.+)-t(\d+)\.json$", f)
    n, backend, threads = int(m[2]), m[3], int(m[4])
    s = json.load(open(f))
    detected = sum(c["detected"] for c in s["cameras"].values())
    p50 = statistics.median(c["latency_ms"]["p50"] for c in s["cameras"].values())
    row = rows.setdefault((n, backend, threads), {"cpu_ms": [], "fps": [], "util": [], "p50": []})
    row["cpu_ms"].append(1000 * s["cpu_seconds"] / detected)
    row["fps"].append(detected / s["seconds"])
    row["util"].append(s["cpu_seconds"] / s["seconds"])
    row["p50"].append(p50)
print(f"| cameras x detect_fps | backend | threads | CPU ms per detected frame | detected frames/s (asked {detect_fps:g} per camera) | CPU utilisation (cores) | latency p50 (ms) | runs |")
print("|---|---|---|---|---|---|---|---|")
for (n, backend, threads), r in sorted(rows.items()):
    med = {k: statistics.median(v) for k, v in r.items()}
    print(f"| {n} x {detect_fps:g} | {backend} | {threads if threads else '0 (all)'} | {med['cpu_ms']:.1f} "
          f"({min(r['cpu_ms']):.1f}-{max(r['cpu_ms']):.1f}) | {med['fps']:.2f} | {med['util']:.2f} | "
          f"{med['p50']:.0f} | {len(r['cpu_ms'])} |")
