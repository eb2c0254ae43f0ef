#!/usr/bin/python3
"""Harder variants of the tracking clips, with their ground truth transformed alike.

bench/tracking.md's "variants" section: the TUD clips are 640x480 at 25 fps with persons 150 to
300 px tall; the tracker must also hold on small persons far from the camera, on fewer frames
per second and where persons enter and leave the picture. Each variant is made with the ffmpeg
CLI (MPEG-4 at high quality, as the originals) and its `*.person.json` moves every box the same
way:

  small       the frame scaled to 0.5 and centred on a 640x480 mid-grey canvas: the detector
              sees persons half as tall (scaling the whole frame alone would not: the
              detector's letterbox scales it back up)
  half        the frame scaled to 320x240 (the detector's input is upscaled and blurred)
  skip        every other frame dropped: 12.5 fps, twice the motion between frames
  crop        the centre 480x360: persons enter and leave at the edges, cut boxes; a box cut
              to less than half its area is an ignore region (iscrowd), as MOT does for
              persons barely in the picture
  small-skip  small and skip together: nearest to a 480x360 10 fps street clip of small persons

  scripts/make-track-variants.py [--videos DIR] [--out DIR] [CLIP...]

Writes OUT/<clip>-<variant>.mp4 and OUT/<clip>-<variant>.person.json (default OUT:
.cache/track-variants, not in git). Existing outputs are kept unless their source is newer.
"""

import argparse
import copy
import json
import os
import subprocess
import sys

SIZE = (640, 480)


def small_point(x, y):
    """A point (MOT's 1-based pixels) of the original frame in the "small" variant's frame."""
    return (x - 1) * 0.5 + 1 + SIZE[0] / 4, (y - 1) * 0.5 + 1 + SIZE[1] / 4


def half_point(x, y):
    return (x - 1) * 0.5 + 1, (y - 1) * 0.5 + 1


def small_box(b):
    x, y, w, h = b
    return [*small_point(x, y), w * 0.5, h * 0.5]


def half_box(b):
    x, y, w, h = b
    return [*half_point(x, y), w * 0.5, h * 0.5]


CROP = (80, 60, 480, 360)  # x, y, width, height


def crop_point(x, y):
    return x - CROP[0], y - CROP[1]


def crop_box(b):
    """The box in the crop's pixels (1-based like MOT), cut to the crop; None if nothing is left."""
    x, y, w, h = b
    _, _, cw, ch = CROP
    x0, y0 = crop_point(x, y)
    x1, y1 = max(x0, 1.0), max(y0, 1.0)
    x2, y2 = min(x0 + w, cw + 1.0), min(y0 + h, ch + 1.0)
    if x2 <= x1 or y2 <= y1:
        return None, 0.0
    visible = (x2 - x1) * (y2 - y1) / max(w * h, 1e-9)
    return [x1, y1, x2 - x1, y2 - y1], visible


VARIANTS = {
    # name: (ffmpeg filter, output fps or None, keep every Nth frame, box transform)
    "small": ("scale=320:240,pad=640:480:160:120:color=0x808080", None, 1, small_box),
    "half": ("scale=320:240", None, 1, half_box),
    "skip": ("select='not(mod(n\\,2))',setpts=N/(12.5*TB)", 12.5, 2, None),
    "crop": ("crop=480:360:80:60", None, 1, "crop"),
    "small-skip": ("select='not(mod(n\\,2))',setpts=N/(12.5*TB),"
                   "scale=320:240,pad=640:480:160:120:color=0x808080", 12.5, 2, small_box),
}


# How each variant moves a point of the original frame (scripts/bench-lines.sh moves its lines
# with these, so that a line crosses the same persons in a variant).
MOVE_POINT = {
    "small": small_point,
    "half": half_point,
    "skip": lambda x, y: (x, y),
    "crop": crop_point,
    "small-skip": small_point,
}


def transform_truth(gt, keep_every, box_fn, width, height):
    out = copy.deepcopy(gt)
    frames = {}
    images = []
    for image in gt["images"]:
        f = image["frame_index"]
        if (f - 1) % keep_every != 0:
            continue
        new = dict(image, frame_index=(f - 1) // keep_every + 1, width=width, height=height)
        frames[image["id"]] = new
        images.append(new)
    annotations = []
    for a in gt["annotations"]:
        if a["image_id"] not in frames:
            continue
        a = dict(a)
        if box_fn == "crop":
            box, visible = crop_box(a["bbox"])
            if box is None:
                continue
            a["bbox"] = box
            if visible < 0.5:
                a["iscrowd"] = 1
        elif box_fn is not None:
            a["bbox"] = box_fn(a["bbox"])
        a["area"] = a["bbox"][2] * a["bbox"][3]
        annotations.append(a)
    out["images"] = images
    out["annotations"] = annotations
    out["info"] = dict(gt.get("info", {}))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", default=os.path.join(here, "..", "..", "shared", "data", "videos"))
    parser.add_argument("--out", default=os.path.join(here, "..", ".cache", "track-variants"))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("clips", nargs="*", default=["TUD-Campus", "TUD-Stadtmitte"])
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for clip in args.clips:
        video = os.path.join(args.videos, clip + ".mp4")
        gt = json.load(open(os.path.join(args.videos, clip + ".person.json")))
        for name in args.variants.split(","):
            vf, fps, keep_every, box_fn = VARIANTS[name]
            target = os.path.join(args.out, f"{clip}-{name}.mp4")
            if not os.path.exists(target) or os.path.getmtime(target) < os.path.getmtime(video):
                cmd = ["ffmpeg", "-v", "error", "-y", "-i", video, "-vf", vf]
                if fps:
                    cmd += ["-r", str(fps)]
                cmd += ["-c:v", "mpeg4", "-q:v", "2", "-an", target]
                subprocess.run(cmd, check=True)
            width, height = (480, 360) if name == "crop" else (320, 240) if name == "half" else SIZE
            truth = transform_truth(gt, keep_every, box_fn, width, height)
            truth["info"]["variant"] = f"{name} of {clip} (scripts/make-track-variants.py)"
            with open(os.path.join(args.out, f"{clip}-{name}.person.json"), "w") as f:
                json.dump(truth, f)
            print(f"{target}: {len(truth['images'])} frames, {len(truth['annotations'])} boxes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
