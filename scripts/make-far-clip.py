#!/usr/bin/python3
"""A clip with ground truth placed far away: the same pixels inside a 1080p or 4K view.

Issue 59's recipe ("people far away"): the clip is put at its own pixel size (or scaled by
--scale) in the middle of a larger picture, 1920x1080 or 3840x2160; the rest of the picture is
the clip's first frame scaled to the whole view, blurred (a Gaussian of sigma 60 pixels in a 1080p
view, 120 in 4K) and darkened (brightness -0.35, contrast 0.6), so that what surrounds the
persons looks like a scene and not a flat border, but holds nobody who could be detected: with a
milder blur (boxblur 20, twice, brightness -0.25) the clip's passers-by became blurred
silhouettes 460-640 px tall that YOLOX took for persons at scores up to 0.74, and the view
measured the background, not the persons placed in it. Checked: `vigil detect --conf 0.1` finds
nobody in the backgrounds of both TUD clips and the one-by-one clip, 1080p and 4K. Every ground-truth box is moved (and scaled) with the
clip; nothing else of the ground truth changes. A person 60-200 px tall in the 640x480 clip is
60-200 px tall in the 1080p view, and reaches a whole-picture detector's 416-pixel input 13-43
px tall (4K: 6-22 px). Encoded with the ffmpeg CLI as MPEG-4 at q 2, at the clip's rate.

  scripts/make-far-clip.py CLIP.mp4 OUT.mp4 [--view 1920x1080] [--scale 1.0]

CLIP.person.json beside CLIP.mp4 is read; OUT.person.json is written beside OUT.mp4. The
offset of the clip in the view is printed (x y, in pixels), to move lines with it.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile


def probe(video):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height,r_frame_rate", "-of", "json", video],
        check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["streams"][0]
    return int(s["width"]), int(s["height"]), s["r_frame_rate"]


def placed_truth(gt, view, offset, scale):
    out = copy.deepcopy(gt)
    for image in out["images"]:
        image["width"], image["height"] = view
    for a in out["annotations"]:
        x, y, w, h = a["bbox"]
        # MOT's 1-based pixels: (1, 1) of the clip is (offset + 1) of the view.
        a["bbox"] = [(x - 1) * scale + 1 + offset[0], (y - 1) * scale + 1 + offset[1],
                     w * scale, h * scale]
        a["area"] = a["bbox"][2] * a["bbox"][3]
    out.setdefault("info", {})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clip")
    parser.add_argument("out")
    parser.add_argument("--view", default="1920x1080", help="WIDTHxHEIGHT of the picture")
    parser.add_argument("--scale", type=float, default=1.0, help="the clip's scale in the view")
    args = parser.parse_args()
    view = tuple(int(v) for v in args.view.split("x"))
    width, height, rate = probe(args.clip)
    placed = (round(width * args.scale) // 2 * 2, round(height * args.scale) // 2 * 2)
    if placed[0] > view[0] or placed[1] > view[1]:
        sys.exit(f"make-far-clip: the clip at {args.scale}x ({placed[0]}x{placed[1]}) does not "
                 f"fit in {args.view}")
    offset = ((view[0] - placed[0]) // 2, (view[1] - placed[1]) // 2)
    truth_in = os.path.splitext(args.clip)[0] + ".person.json"
    gt = json.load(open(truth_in))
    with tempfile.TemporaryDirectory() as tmp:
        background = os.path.join(tmp, "background.png")
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-i", args.clip, "-frames:v", "1", "-vf",
             f"scale={view[0]}:{view[1]},gblur=sigma={60 * view[0] / 1920:g},"
             "eq=brightness=-0.35:contrast=0.6", background],
            check=True)
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-i", args.clip, "-framerate", rate, "-loop", "1",
             "-i", background, "-filter_complex",
             f"[0:v]scale={placed[0]}:{placed[1]}[clip];"
             f"[1:v][clip]overlay={offset[0]}:{offset[1]}:shortest=1,format=yuv420p",
             "-r", rate, "-c:v", "mpeg4", "-q:v", "2", "-an", args.out],
            check=True)
    truth = placed_truth(gt, view, offset, args.scale)
    truth["info"]["variant"] = (f"{os.path.basename(args.clip)} at {args.scale}x in a {args.view} "
                                f"view at {offset[0]},{offset[1]} (scripts/make-far-clip.py)")
    with open(os.path.splitext(args.out)[0] + ".person.json", "w") as f:
        json.dump(truth, f)
    print(f"{offset[0]} {offset[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
