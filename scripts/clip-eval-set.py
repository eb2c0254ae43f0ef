#!/usr/bin/python3
"""Turns a clip with MOT-style person ground truth (videos/*.person.json) into an evaluation set
for `vigil eval`: every frame as a lossless PNG numbered from 1 (%06d.png) and an annotations.json
whose images are those frames, following ../shared/data/README.md: image id = frame_index, boxes
shifted by -1 pixel (MOT is 1-based) and clipped to the frame, `mot_consider: 0` boxes become
iscrowd (ignore regions).

Example: scripts/clip-eval-set.py ../shared/data/videos/TUD-Campus.mp4 /tmp/tud-campus
"""

import json
import os
import sys

import cv2


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    clip, out = sys.argv[1:]
    truth_path = os.path.splitext(clip)[0] + ".person.json"
    with open(truth_path) as f:
        truth = json.load(f)
    os.makedirs(out, exist_ok=True)
    capture = cv2.VideoCapture(clip)
    if not capture.isOpened():
        sys.exit(f"clip-eval-set: {clip}: not a readable video")
    frames = 0
    while True:
        ok, img = capture.read()
        if not ok:
            break
        frames += 1
        cv2.imwrite(os.path.join(out, f"{frames:06d}.png"), img)
    images = []
    for image in truth["images"]:
        if image["frame_index"] > frames:
            sys.exit(f"clip-eval-set: {truth_path}: frame {image['frame_index']} past the clip's "
                     f"{frames} frames")
        images.append({"id": image["frame_index"], "file_name": f"{image['frame_index']:06d}.png",
                       "width": image["width"], "height": image["height"]})
    by_id = {i["id"]: i for i in truth["images"]}
    annotations = []
    for a in truth["annotations"]:
        image = by_id[a["image_id"]]
        x, y, w, h = a["bbox"]
        x0, y0 = max(0.0, x - 1), max(0.0, y - 1)
        x1, y1 = min(float(image["width"]), x - 1 + w), min(float(image["height"]), y - 1 + h)
        if x1 <= x0 or y1 <= y0:
            continue
        annotations.append({"id": a["id"], "image_id": image["frame_index"], "category_id": 1,
                            "bbox": [x0, y0, x1 - x0, y1 - y0], "area": (x1 - x0) * (y1 - y0),
                            "iscrowd": 1 if a.get("mot_consider", 1) == 0 else a.get("iscrowd", 0)})
    with open(os.path.join(out, "annotations.json"), "w") as f:
        json.dump({"images": images, "annotations": annotations,
                   "categories": truth["categories"]}, f)
    print(f"clip-eval-set: {out}: {frames} frames, {len(annotations)} boxes")


if __name__ == "__main__":
    main()
