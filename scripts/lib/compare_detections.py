#!/usr/bin/env python3
"""Persons of two `vigil detect --json` outputs matched one to one (track-false-boxes.py's
greedy matching at IoU >= 0.5): how many match, their mean IoU and score difference
(scripts/bench-loop-filter.sh's compare).

    compare_detections.py A.json B.json
"""
import json, sys
sys.path.insert(0, "scripts/lib")
from script_module import load_script
boxes = load_script("track-false-boxes")
def load(path):
    return {json.loads(l)["source"].rsplit("/", 1)[-1]:
            [d for d in json.loads(l)["detections"] if d["class"] == "person" and d["score"] >= 0.5]
            for l in open(path)}
a, b = load(sys.argv[1]), load(sys.argv[2])
ious, diffs = [], []
for k in a:
    pa, pb = a[k], b.get(k, [])
    for i, j in boxes.greedy([d["bbox"] for d in pa], [d["bbox"] for d in pb], 0.5).items():
        ious.append(boxes.iou(pa[i]["bbox"], pb[j]["bbox"]))
        diffs.append(abs(pa[i]["score"] - pb[j]["score"]))
print("%d | %d | %d | %.3f | %.4f" % (sum(map(len, a.values())), sum(map(len, b.values())),
      len(ious), sum(ious) / len(ious), sum(diffs) / len(diffs)))
