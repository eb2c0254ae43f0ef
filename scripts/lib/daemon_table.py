#!/usr/bin/env python3
"""scripts/bench-daemon.sh's table: every configuration's runs in OUT (frames detected a
second, latency, CPU, CPU per minute of video), medians over the rounds.

    daemon_table.py OUT
"""
import json, statistics, sys
out = sys.argv[1]
clip_fps = 10.0  # the one-by-one clip
rows = {}
for line in open(f"{out}/runs.tsv"):
    rnd, n, mode, d = line.split()
    s = json.load(open(f"{d}/summary.json"))
    cams = s["cameras"].values()
    video_min = sum(c["captured"] for c in cams) / clip_fps / 60
    r = {
        "det_s": sum(c["detected"] for c in cams) / s["seconds"],
        "p50": max(c["latency_ms"]["p50"] for c in cams),
        "p99": max(c["latency_ms"]["p99"] for c in cams),
        "cpu": s["cpu_seconds"],
        "util": 100 * s["cpu_seconds"] / s["seconds"],
        "cpu_per_min": s["cpu_seconds"] / video_min if video_min else float("nan"),
        "gated": sum(c["gated"] for c in cams),
        "events": sum(len(c.get("person_events", [])) for c in cams),
    }
    rows.setdefault((int(n), mode), []).append(r)
med = lambda rs, k: statistics.median(x[k] for x in rs)
print("| cameras | gating | runs | detected/s | latency p50 ms | p99 ms | CPU % of one core | CPU s per min of video | vs off | gated frames | person events |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (n, mode), rs in sorted(rows.items(), key=lambda kv: (kv[0][0], ["off", "rule", "still"].index(kv[0][1]))):
    base = rows.get((n, "off"))
    vs = ""
    if base and mode != "off":
        vs = f"{100 * (med(rs, 'cpu_per_min') / med(base, 'cpu_per_min') - 1):+.0f}%"
    print(f"| {n} | {mode} | {len(rs)} | {med(rs, 'det_s'):.2f} | {med(rs, 'p50'):.0f} | {med(rs, 'p99'):.0f} | "
          f"{med(rs, 'util'):.0f} | {med(rs, 'cpu_per_min'):.1f} | {vs} | {med(rs, 'gated'):.0f} | {med(rs, 'events'):.0f} |")
print("\nEvery run (CPU s per min of video): ")
for (n, mode), rs in sorted(rows.items()):
    print(f"  {n} camera(s), {mode}: " + ", ".join(f"{r['cpu_per_min']:.1f}" for r in rs))
