#!/usr/bin/env python3
"""Scores a MOTChallenge tracks file against a *.person.json ground truth with TrackEval's own
CLEAR, Identity and HOTA classes, to compare with `vigil eval-tracks` on the same inputs.

    scripts/compare-trackeval.py TRACKEVAL_DIR GT.json TRACKS.txt [--stride N]

TRACKEVAL_DIR: a checkout of https://github.com/JonathonLuiten/TrackEval (the folder that holds
the `trackeval` package); it needs numpy and scipy (Debian: python3-numpy python3-scipy). Not a
test dependency: this is how the agreement stated in docs/tracking.md was checked. Ignore regions
(iscrowd 1) are not handled here; the shared clips have none.
"""
import argparse
import json
import sys

import numpy as np


def ious(gt, hyp):
    out = np.zeros((len(gt), len(hyp)))
    for i, a in enumerate(gt):
        for j, b in enumerate(hyp):
            w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
            h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
            inter = w * h if w > 0 and h > 0 else 0.0
            union = a[2] * a[3] + b[2] * b[3] - inter
            out[i, j] = inter / union if union > 0 else 0.0
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trackeval")
    p.add_argument("gt")
    p.add_argument("tracks")
    p.add_argument("--stride", type=int, default=1)
    a = p.parse_args()
    sys.path.insert(0, a.trackeval)
    # TrackEval still names np.float and np.int, which numpy 1.24 (Debian 12) removed.
    np.float = float
    np.int = int
    from trackeval.metrics import CLEAR, HOTA, Identity

    gt = json.load(open(a.gt))
    frame_of = {im["id"]: im["frame_index"] for im in gt["images"]}
    frames = sorted(f for f in set(frame_of.values()) if (f - 1) % a.stride == 0)
    gt_boxes = {f: [] for f in frames}
    for ann in gt["annotations"]:
        f = frame_of[ann["image_id"]]
        if f in gt_boxes:
            gt_boxes[f].append((ann["track_id"], ann["bbox"]))
    hyp_boxes = {f: [] for f in frames}
    for line in open(a.tracks):
        v = line.strip().split(",")
        if len(v) >= 6 and int(float(v[0])) in hyp_boxes:
            hyp_boxes[int(float(v[0]))].append((int(float(v[1])), [float(x) for x in v[2:6]]))
    gt_ids = {i: k for k, i in enumerate(sorted({i for f in frames for i, _ in gt_boxes[f]}))}
    hyp_ids = {i: k for k, i in enumerate(sorted({i for f in frames for i, _ in hyp_boxes[f]}))}
    data = {
        "num_timesteps": len(frames),
        "num_gt_ids": len(gt_ids),
        "num_tracker_ids": len(hyp_ids),
        "num_gt_dets": sum(len(gt_boxes[f]) for f in frames),
        "num_tracker_dets": sum(len(hyp_boxes[f]) for f in frames),
        "gt_ids": [np.array([gt_ids[i] for i, _ in gt_boxes[f]], dtype=int) for f in frames],
        "tracker_ids": [np.array([hyp_ids[i] for i, _ in hyp_boxes[f]], dtype=int) for f in frames],
        "similarity_scores": [ious([b for _, b in gt_boxes[f]], [b for _, b in hyp_boxes[f]])
                              for f in frames],
    }
    clear = CLEAR().eval_sequence(data)
    ident = Identity().eval_sequence(data)
    hota = HOTA().eval_sequence(data)
    print(json.dumps({
        "MOTA": clear["MOTA"], "MOTP": clear["MOTP"], "IDSW": int(clear["IDSW"]),
        "FP": int(clear["CLR_FP"]), "FN": int(clear["CLR_FN"]), "MT": int(clear["MT"]),
        "ML": int(clear["ML"]), "IDF1": ident["IDF1"], "IDP": ident["IDP"], "IDR": ident["IDR"],
        "HOTA": float(np.mean(hota["HOTA"])), "DetA": float(np.mean(hota["DetA"])),
        "AssA": float(np.mean(hota["AssA"]))}))


if __name__ == "__main__":
    main()
