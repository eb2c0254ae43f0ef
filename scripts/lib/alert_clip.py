#!/usr/bin/env python3
"""scripts/bench-alert.sh's clip: an idle lead-in, then the clip from a little before a person.

    alert_clip.py CLIP GROUND_TRUTH OUT_DIR LEAD_SECONDS

The person's start is the first frame of the ground truth (COCO-like, frame_index from 1) with
a person box at least 40 px tall. The lead is a still picture for LEAD_SECONDS: a frame of the
clip without any annotated person if one exists, else the per-pixel median of all its frames
(ffmpeg's tmedian: walking people vanish), with the box of every person who stays in place over
half the clip (the median keeps them) painted out (ffmpeg's delogo). After the lead comes the
clip from up to a second before the start frame, at the clip's own frame rate. Writes
OUT_DIR/clip.mp4, OUT_DIR/still.png and OUT_DIR/clip.json: the source, fps, the start frame,
`person_frame` (its 0-based number in clip.mp4, as the daemon counts frames) and `person_s`.
"""
import json, statistics, subprocess, sys
from fractions import Fraction

MIN_HEIGHT = 40


def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets",
                          "-show_entries", "stream=avg_frame_rate,width,height,nb_read_packets",
                          "-of", "json", path], check=True, capture_output=True, text=True)
    s = json.loads(out.stdout)["streams"][0]
    return Fraction(s["avg_frame_rate"]), s["width"], s["height"], int(s["nb_read_packets"])


def still_persons(frames, tracks):
    """Boxes (x, y, w, h) of the persons who stay in place: in over half of the frames, their
    box's centre moving less than its width and height over the whole clip."""
    boxes = []
    for track in tracks.values():
        if len(track) * 2 < frames:
            continue
        cx = [b[0] + b[2] / 2 for b in track]
        cy = [b[1] + b[3] / 2 for b in track]
        w, h = (statistics.median(b[i] for b in track) for i in (2, 3))
        if max(cx) - min(cx) < w and max(cy) - min(cy) < h:
            boxes.append((min(b[0] for b in track), min(b[1] for b in track),
                          max(b[0] + b[2] for b in track), max(b[1] + b[3] for b in track)))
    return boxes


def make_still(clip, gt, out, size):
    index = {im["id"]: im["frame_index"] for im in gt["images"]}
    annotated = {index[a["image_id"]] for a in gt["annotations"]}
    free = sorted(set(index.values()) - annotated)
    if free:
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", clip, "-vf",
                        f"select=eq(n\\,{free[0] - 1})", "-frames:v", "1", out], check=True)
        return f"frame {free[0]}, no person annotated"
    tracks = {}
    for a in gt["annotations"]:
        tracks.setdefault(a["track_id"], []).append(a["bbox"])
    frames, (width, height) = len(index), size
    step = -(-frames // 255)  # tmedian's window is at most 255 frames
    radius = (-(-frames // step) - 1) // 2
    filters = [f"select=not(mod(n\\,{step}))", f"tmedian=radius={radius}"]
    painted = still_persons(frames, tracks)
    for x0, y0, x1, y1 in painted:
        x0, y0 = max(1, int(x0) - 4), max(1, int(y0) - 4)
        x1, y1 = min(width - 2, int(x1) + 4), min(height - 2, int(y1) + 4)
        filters.append(f"delogo=x={x0}:y={y0}:w={x1 - x0}:h={y1 - y0}")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", clip, "-vf", ",".join(filters),
                    "-frames:v", "1", "-update", "1", out], check=True)
    return (f"median of {-(-frames // step)} frames, {len(painted)} standing person(s) "
            "painted out")


def main():
    clip, gt_path, out, lead = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    gt = json.load(open(gt_path))
    index = {im["id"]: im["frame_index"] for im in gt["images"]}
    start = min(index[a["image_id"]] for a in gt["annotations"] if a["bbox"][3] >= MIN_HEIGHT)
    fps, width, height, frames = probe(clip)
    how = make_still(clip, gt, f"{out}/still.png", (width, height))
    lead_frames = round(lead * fps)
    first = max(1, start - round(fps))  # up to a second before the person
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-loop", "1", "-framerate", str(fps), "-i",
         f"{out}/still.png", "-i", clip, "-filter_complex",
         f"[0:v]trim=end_frame={lead_frames},format=yuv420p,setsar=1[a];"
         f"[1:v]trim=start_frame={first - 1},setpts=PTS-STARTPTS,format=yuv420p,setsar=1[b];"
         "[a][b]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-r", str(fps), "-c:v", "libx264",
         "-preset", "veryfast", "-crf", "18", f"{out}/clip.mp4"], check=True)
    made = probe(f"{out}/clip.mp4")[3]
    expected = lead_frames + frames - (first - 1)
    if made != expected:
        sys.exit(f"alert_clip: {out}/clip.mp4 has {made} frames, expected {expected}")
    person = lead_frames + start - first
    info = {"source": clip, "fps": float(fps), "frames": made, "still": how,
            "start_frame": start, "person_frame": person, "person_s": float(person / fps)}
    json.dump(info, open(f"{out}/clip.json", "w"), indent=1)
    print(f"{clip}: person from frame {start}; made clip {made} frames, the person at frame "
          f"{person} ({info['person_s']:.2f} s); still: {how}")


if __name__ == "__main__":
    main()
