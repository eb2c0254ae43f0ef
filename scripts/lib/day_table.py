#!/usr/bin/env python3
"""scripts/bench-day.sh's table: per configuration, medians over the rounds of the whole process's
CPU (start-up included, as `top` counts it) per second, per camera, cameras per core, the settled
CPU (from 10 s in), and the person events each camera started (markdown on standard output).

    day_table.py OUT
"""
import collections
import json
import statistics
import sys

out = sys.argv[1]
runs = collections.defaultdict(list)
order = []
for line in open(f"{out}/runs.tsv"):
    rnd, config, d = line.split()
    if config not in order:
        order.append(config)
    elapsed, user, system = map(float, open(f"{d}/time.txt").read().split()[-3:])
    at, cpu_at = map(float, open(f"{d}/settled.txt").read().split())
    summary = json.load(open(f"{d}/summary.json"))
    cams = summary["cameras"]
    whole = 1000 * (user + system) / elapsed
    settled = 1000 * (user + system - cpu_at) / (elapsed - at)
    events = sorted(len(c.get("person_events", [])) for c in cams.values())
    runs[config].append((whole, settled, len(cams), events))

print("| configuration | cameras | whole process CPU ms/s | per camera | cameras per core | "
      "settled ms/s per camera | person events per camera |")
print("|---|---|---|---|---|---|---|")
for config in order:
    rs = runs[config]
    n = rs[0][2]
    whole = statistics.median(r[0] for r in rs)
    settled = statistics.median(r[1] for r in rs)
    events = "; ".join(",".join(map(str, r[3])) for r in rs)
    print(f"| {config} | {n} | {whole:.0f} | {whole / n:.1f} | {1000 * n / whole:.0f} | "
          f"{settled / n:.1f} | {events} |")
# A configuration against its square-input twin (NAME-square), round by round: the two ran one
# after the other, so the ratio holds better than the medians of runs minutes apart.
for config in order:
    twin = runs.get(config + "-square")
    if twin:
        ratios = [a[0] / b[0] for a, b in zip(runs[config], twin)]
        print(f"\n{config} / {config}-square, whole process CPU, round by round: "
              f"{', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})")
print()
print("runs per configuration:", {k: len(v) for k, v in runs.items()})
