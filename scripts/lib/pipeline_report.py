#!/usr/bin/env python3
"""scripts/bench-pipeline.sh's report of one daemon run: OUT/summary.json's rates, latencies
and CPU, against the detect rate asked for.

    pipeline_report.py OUT DETECT_FPS
"""
import json, sys
out, fps = sys.argv[1], float(sys.argv[2])
s = json.load(open(f"{out}/summary.json"))
cams = s["cameras"]
det = {k: v["detected"] for k, v in cams.items()}
lo, hi = min(det.values()), max(det.values())
print(f"run: {s['seconds']:.0f} s, {len(cams)} cameras at detect_fps {fps:g}, detection failures {s['detection_failures']}")
print("| camera | captured | detected | detected/s | skipped | gated | latency p50 ms | p99 ms |")
print("|---|---|---|---|---|---|---|---|")
for k, v in sorted(cams.items()):
    print(f"| {k} | {v['captured']} | {v['detected']} | {v['detected']/s['seconds']:.2f} | {v['skipped']} | {v['gated']} | {v['latency_ms']['p50']:.0f} | {v['latency_ms']['p99']:.0f} |")
print(f"CPU: {s['cpu_seconds']:.1f} s over {s['seconds']:.0f} s ({100*s['cpu_seconds']/s['seconds']:.0f}% of one core)")
print(f"spread of detections: (max-min)/max = {100*(hi-lo)/hi:.1f}%")
rows = [tuple(map(int, l.split())) for l in open(f"{out}/rss.tsv").readlines()[1:]]
if rows:
    warm = [r for r in rows if r[0] >= 60] or rows
    print(f"RSS: first sample {rows[0][1]/1024:.1f} MiB, after 60 s {warm[0][1]/1024:.1f} MiB, "
          f"max {max(r[1] for r in rows)/1024:.1f} MiB, last {rows[-1][1]/1024:.1f} MiB ({len(rows)} samples)")
