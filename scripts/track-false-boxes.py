#!/usr/bin/python3
"""Where a tracker's false boxes come from (bench/tracking.md, issue 37).

  scripts/track-false-boxes.py GT.json TRACKS.txt DETECTIONS.txt [--stride N] [--list]

TRACKS.txt is `vigil track --out`, DETECTIONS.txt its `--detections-out` (what the detector gave
the tracker). On each scored frame the tracker's boxes are matched one to one to the ground
truth at IoU >= 0.5 (greedy by IoU, as a per-frame stand-in for CLEAR MOT's matching; boxes on
ignore regions are left out first), and each unmatched box (a false positive) is put in the
first class that fits:

  low score      written from a detection under 0.5 (ByteTrack's second association)
  filter off     the detection it was matched with hits a person (IoU >= 0.5) but the box written,
                 the Kalman filter's, does not
  beside person  a person is there (IoU 0.1 to 0.5) but the box and its detection are off
  duplicate      a person is there at IoU >= 0.5, already matched by another box
  no person      nothing annotated under it (IoU < 0.1): a false detection or a box left behind

and, across classes: at the frame's edge (within 2 px), of a short track (at most 3 boxes
written), and the score of the detection that started its track (under 0.6, ByteTrack's
det_thresh, or not).
"""

import argparse
import collections
import json
import sys


def iou(a, b):
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    w = min(ax2, bx2) - max(a[0], b[0])
    h = min(ay2, by2) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def read_mot(path):
    frames = collections.defaultdict(list)
    for line in open(path):
        f = line.strip().split(",")
        if len(f) < 7:
            continue
        frames[int(f[0])].append((int(float(f[1])), [float(v) for v in f[2:6]], float(f[6])))
    return frames


def greedy(boxes_a, boxes_b, minimum):
    pairs = sorted(((iou(a, b), i, j) for i, a in enumerate(boxes_a) for j, b in enumerate(boxes_b)),
                   reverse=True)
    used_a, used_b, matched = set(), set(), {}
    for v, i, j in pairs:
        if v < minimum:
            break
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        matched[i] = j
    return matched


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("gt")
    p.add_argument("tracks")
    p.add_argument("detections")
    p.add_argument("--stride", type=int, default=1)
    p.add_argument("--list", action="store_true", help="one line per false box")
    args = p.parse_args()

    gt = json.load(open(args.gt))
    frame_of = {im["id"]: im["frame_index"] for im in gt["images"]}
    size = {im["frame_index"]: (im["width"], im["height"]) for im in gt["images"]}
    truth = collections.defaultdict(list)
    ignore = collections.defaultdict(list)
    for a in gt["annotations"]:
        (ignore if a.get("iscrowd") else truth)[frame_of[a["image_id"]]].append(a["bbox"])
    tracks = read_mot(args.tracks)
    dets = read_mot(args.detections)

    # Each track's boxes in order, and the score of the detection that started it: the best
    # detection under its first written box on the tracked frame before (unconfirmed then).
    by_track = collections.defaultdict(list)
    for f in sorted(tracks):
        for tid, box, score in tracks[f]:
            by_track[tid].append(f)
    tracked_frames = sorted(dets)
    start_score = {}
    for tid, frames in by_track.items():
        first = frames[0]
        earlier = [f for f in tracked_frames if f < first]
        box = next(b for t, b, s in tracks[first] if t == tid)
        cands = [(iou(box, d[1]), d[2]) for d in dets.get(earlier[-1], [])] if earlier else []
        best = max(cands, default=(0, None))
        start_score[tid] = best[1] if best[0] > 0.3 else None

    classes = collections.Counter()
    across = collections.Counter()
    tp = fp = 0
    for f in sorted(size):
        if (f - 1) % args.stride:
            continue
        hyp = tracks.get(f, [])
        if ignore[f]:
            on_ignore = greedy([h[1] for h in hyp], ignore[f], 0.5)
            hyp = [h for i, h in enumerate(hyp) if i not in on_ignore]
        matched = greedy([h[1] for h in hyp], truth[f], 0.5)
        tp += len(matched)
        w, h = size[f]
        for i, (tid, box, score) in enumerate(hyp):
            if i in matched:
                continue
            fp += 1
            det = max(dets.get(f, []), key=lambda d: iou(box, d[1]), default=None)
            det_best = max((iou(det[1], g) for g in truth[f]), default=0) if det else 0
            best = max((iou(box, g) for g in truth[f]), default=0)
            if score < 0.5:
                c = "low score"
            elif det_best >= 0.5 and best < 0.5:
                c = "filter off"
            elif best >= 0.5:
                c = "duplicate"
            elif best >= 0.1:
                c = "beside person"
            else:
                c = "no person"
            classes[c] += 1
            edge = box[0] < 3 or box[1] < 3 or box[0] + box[2] > w - 1 or box[1] + box[3] > h - 1
            short = len(by_track[tid]) <= 3
            s0 = start_score.get(tid)
            across["at the edge"] += edge
            across["short track"] += short
            across["track started < 0.6"] += s0 is not None and s0 < 0.6
            if args.list:
                print(f"frame {f} id {tid} score {score:.2f} box {[round(v) for v in box]} {c}"
                      f" iou {best:.2f} det-iou {det_best:.2f}{' edge' if edge else ''}"
                      f"{' short' if short else ''} start {s0}")
    print(f"{tp} true boxes, {fp} false: " + ", ".join(f"{k} {v}" for k, v in classes.most_common())
          + " | " + ", ".join(f"{k} {v}" for k, v in across.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
