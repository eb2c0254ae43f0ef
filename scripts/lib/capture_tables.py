#!/usr/bin/env python3
"""scripts/bench-capture.sh's tables: every case's runs in OUT (whole-run and settled CPU) beside
the floors measured in the same run, medians over the rounds (markdown on standard output).

    capture_tables.py OUT
"""
import json, statistics, sys, collections
out = sys.argv[1]
floors = [tuple(map(float, l.split()[1:])) for l in open(f"{out}/floors.tsv")]
h264_ms = statistics.median(f[0] for f in floors)
jpeg_ms = statistics.median(f[1] for f in floors)
infer_ms = statistics.median(f[2] for f in floors)
print(f"floors (median of {len(floors)}): FFmpeg H.264 1080p decode {h264_ms:.2f} ms/frame, "
      f"JPEG 1080p full decode {jpeg_ms:.2f} ms, inference {infer_ms:.2f} ms CPU/detection")
runs = collections.defaultdict(list)
by_round = collections.defaultdict(dict)  # (round, side) -> case -> whole-run CPU s/s
for line in open(f"{out}/runs.tsv"):
    rnd, case, side, d = line.split()
    s = json.load(open(f"{d}/summary.json"))
    cams = s["cameras"]
    detected = sum(c["detected"] for c in cams.values()) / s["seconds"]
    captured = sum(c["captured"] for c in cams.values()) / s["seconds"]
    t0, c0, t1, c1 = map(float, open(f"{d}/settled.txt").read().split())
    runs[(case, side)].append((1000 * s["cpu_seconds"] / s["seconds"], detected, captured, len(cams),
                               1000 * (c1 - c0) / (t1 - t0)))
    by_round[(rnd, side)][case] = s["cpu_seconds"] / s["seconds"]
print()
print("| case | side | cameras | captured/s | detected/s | daemon CPU ms/s | per camera | floor ms/s | CPU / floor | settled ms/s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (case, side), rs in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1] != "before")):
    cpu = statistics.median(r[0] for r in rs)
    det = statistics.median(r[1] for r in rs)
    cap = statistics.median(r[2] for r in rs)
    settled = statistics.median(r[4] for r in rs)
    n = rs[0][3]
    if "bframes" in case or "substream" in case or "watched" in case:
        print(f"| {case} | {side} | {n} | {cap:.1f} | {det:.2f} | {cpu:.0f} | {cpu / n:.0f} | - | - | "
              f"{settled:.0f} |")
        continue
    if "mjpeg" in case:
        floor = det * (jpeg_ms + infer_ms)
    else:
        floor = cap * h264_ms + det * infer_ms
    print(f"| {case} | {side} | {n} | {cap:.1f} | {det:.2f} | {cpu:.0f} | {cpu / n:.0f} | "
          f"{floor:.0f} | {cpu / floor:.2f}x | {settled:.0f} |")
# The detect stream beside the picture stream against detecting on the picture stream itself,
# round by round (the two ran one after the other).
for a, b in (("substream-h264", "h264-file"), ("substream-h264-watched", "h264-file-watched"),
             ("h264-file-watched", "h264-file"), ("substream-h264-watched", "substream-h264"),
             ("mjpeg-http", "mjpeg-http-checked")):
    ratios = [r[a] / r[b] for r in by_round.values() if a in r and b in r]
    if ratios:
        print()
        print(f"{a} / {b}, whole daemon CPU, round by round: "
              f"{', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})")
print()
print("runs per configuration:", {f"{k[0]}/{k[1]}": len(v) for k, v in runs.items()})
