#!/usr/bin/python3
"""Lost tracks found again: the same person or someone else, by how much the box's height changed
(bench/tracking.md, "A lost track's height"; issue 37).

  scripts/track-refinds.py [--videos DIR] [--variants DIR] [--build DIR] [--list]

Runs `vigil track` (cpu-ort, 1 thread) with `--lost-height-ratio 0` (a lost track found again by
a box of any height) on both TUD clips and every variant scripts/make-track-variants.py made, at
every frame and at 5 detections a second. A track found again is one whose written frames have a
gap longer than the tracked frames' stride: it was lost and a box took it back. The height ratio
is the larger of the box it was found by and its last box before the gap over the smaller (the
filter's boxes as written; the tracker compares the detection with the lost box's held height,
which differs from the written one by its last step). Both boxes are matched to the ground
truth (the annotated box of highest IoU, at least 0.5): the same annotated id before and after is
the same person, another id someone else; a box matching nobody is left out. Prints the counts
per ratio range, and with --list every re-find above 1.1.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from script_module import load_script  # noqa: E402

RANGES = [(1.0, 1.1), (1.1, 1.2), (1.2, 1.3), (1.3, 1.5), (1.5, float("inf"))]

iou = load_script("track-false-boxes").iou


def truth_by_frame(path):
    data = json.load(open(path))
    frame_of = {image["id"]: image["frame_index"] for image in data["images"]}
    frames = collections.defaultdict(list)
    for a in data["annotations"]:
        if not a.get("iscrowd", 0):
            frames[frame_of[a["image_id"]]].append((a["track_id"], a["bbox"]))
    return frames


def person_at(truth, frame, box):
    best, who = 0.5, None
    for track_id, annotated in truth.get(frame, []):
        overlap = iou(annotated, box)
        if overlap >= best:
            best, who = overlap, track_id
    return who


def stride_of(video, fps):
    """vigil track --detect-fps's N on `video`: scripts/lib/detect-stride.sh's detect_stride."""
    lib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "detect-stride.sh")
    out = subprocess.run(["bash", "-c", 'source "$0"; detect_stride "$1" "$2"', lib, video,
                          str(fps)], capture_output=True, text=True, check=True).stdout
    return int(out)


def refinds(build, video, truth, fps):
    with tempfile.TemporaryDirectory() as tmp:
        tracks = os.path.join(tmp, "tracks.txt")
        rate = ["--detect-fps", str(fps)] if fps else []
        subprocess.run([os.path.join(build, "vigil"), "track", video, "--out", tracks, "--backend",
                        "cpu-ort", "--threads", "1", "--lost-height-ratio", "0"] + rate,
                       check=True, capture_output=True)
        boxes = collections.defaultdict(list)
        for line in open(tracks):
            f = line.split(",")
            boxes[int(f[1])].append((int(f[0]), [float(v) for v in f[2:6]]))
    stride = stride_of(video, fps) if fps else 1
    for track_id, seen in boxes.items():
        seen.sort()
        for (before, a), (after, b) in zip(seen, seen[1:]):
            if after - before <= stride:
                continue
            ratio = max(a[3], b[3]) / max(1.0, min(a[3], b[3]))
            who_before, who_after = person_at(truth, before, a), person_at(truth, after, b)
            if who_before is None or who_after is None:
                continue
            yield ratio, who_before == who_after, f"track {track_id} frames {before} -> {after}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", default="../shared/data/videos")
    parser.add_argument("--variants", default=".cache/track-variants")
    parser.add_argument("--build", default=os.environ.get("VIGIL_BUILD_DIR", "build"))
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    clips = []
    for clip in ("TUD-Campus", "TUD-Stadtmitte"):
        clips.append(os.path.join(args.videos, clip))
        for variant in ("small", "half", "skip", "crop", "small-skip"):
            path = os.path.join(args.variants, f"{clip}-{variant}")
            if os.path.exists(path + ".mp4"):
                clips.append(path)
    found = []
    for clip in clips:
        truth = truth_by_frame(clip + ".person.json")
        for fps in (0, 5):
            for ratio, same, where in refinds(args.build, clip + ".mp4", truth, fps):
                found.append((ratio, same, f"{os.path.basename(clip)} "
                              f"{'5/s' if fps else 'every frame'} {where}"))
    print(f"{len(clips)} clips, {len(found)} lost tracks found again (matched to the ground truth)")
    print("| height ratio | the same person | someone else |")
    print("|---|---|---|")
    for low, high in RANGES:
        inside = [same for ratio, same, _ in found if low <= ratio < high]
        print(f"| {low:g} to {high:g} | {sum(inside)} | {len(inside) - sum(inside)} |")
    if args.list:
        for ratio, same, where in sorted(found):
            if ratio >= 1.1:
                print(f"{ratio:.3f} {'same' if same else 'other'} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
