#!/usr/bin/env python3
"""Line counts and tracking figures with motion gating on, against off, where a camera goes idle.

The clips with ground truth (TUD-Campus, TUD-Stadtmitte) are crowded from their first frame to
their last, so a camera never goes idle on them. Each is made into a "visits" clip: the clip, an
empty room for EMPTY seconds (one-by-one's first, empty frame at the clip's size with a sensor's
temporal noise), the clip again, the empty room, the clip a third time, encoded as one H.264
stream (a keyframe a second); the ground truth is shifted along, each visit's tracks apart. The
real daemon runs it as a file camera three times at once: twice ungated (`motion: {enabled:
false}`: their difference is the runs' own noise) and once at the built-in defaults (`motion:
{enabled: true}`), each with --tracks-out. `vigil eval-lines --frames-in-tracks` counts the
crossings of bench-lines.sh's lines on each run's tracks (the counts the daemon publishes:
LineDaemonTest), `vigil eval-tracks --frames-in-tracks` scores them.

  scripts/bench-gating-lines.py [--vigil build/vigil] [--videos ../shared/data/videos]
                                [--empty 12] [--detect-fps 5] [--variants original noisier]
                                [--work build/bench-gating-lines]

Prints two Markdown tables (line counts per run against the truth on every frame; tracking
figures per run) for every clip and variant. A run scores only the frames it tracked, so the
frames and ground-truth boxes scored are printed beside MOTA: a gated run that tracked fewer
frames while people were in view shows there.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from script_module import load_script  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
gating_events = load_script("bench-gating-events")

# bench-lines.sh's lines (pixels of the 640x480 clips; `beside` lines are where nobody walks).
LINES = {
    "TUD-Campus": "v160=160,0,160,480 v320=320,0,320,480 v500=500,0,500,480 h390=0,390,640,390 "
                  "h300-beside=0,300,640,300 v320-top-beside=320,0,320,200",
    "TUD-Stadtmitte": "v160=160,0,160,480 v320=320,0,320,480 v480=480,0,480,480 "
                      "h280=0,280,640,280 h380-beside=0,380,640,380 v320-top-beside=320,0,320,180",
}
VISITS = 3
NOISE = {"original": "", "noisier": ",noise=alls=24:allf=t"}


def make_visits(clip, variant, empty_seconds, work):
    """The visits clip of `clip` (H.264, the clip's rate, a keyframe a second): (path, fps,
    frames of one visit, frames of one empty stretch)."""
    fps, _ = gating_events.probe(clip)
    visit = frame_count(clip)
    empty = round(fps * empty_seconds)
    out = work / f"{clip.stem}.visits-{empty_seconds:g}s.{variant}.mp4"
    if not out.exists():
        room = work / f"{clip.stem}.empty.png"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i",
                        str(clip.parent / "one-by-one-person-detection.mp4"), "-frames:v", "1",
                        "-vf", "scale=640:480,setsar=1", str(room)], check=True)
        inputs, chain = [], ""
        for i in range(2 * VISITS - 1):
            if i % 2 == 0:
                inputs += ["-i", str(clip)]
                chain += f"[{i}:v]fps={fps:g},setsar=1[s{i}];"
            else:
                inputs += ["-loop", "1", "-framerate", f"{fps:g}", "-t", f"{empty_seconds:g}",
                           "-i", str(room)]
                chain += f"[{i}:v]noise=alls=6:allf=t,format=yuv420p,setsar=1[s{i}];"
        chain += "".join(f"[s{i}]" for i in range(2 * VISITS - 1))
        chain += f"concat=n={2 * VISITS - 1}:v=1:a=0{NOISE[variant]}[v]"
        subprocess.run(["ffmpeg", "-v", "error", "-y", *inputs, "-filter_complex", chain,
                        "-map", "[v]", "-c:v", "libx264", "-crf", "20", "-bf", "0",
                        "-g", f"{round(fps)}", "-pix_fmt", "yuv420p", str(out)], check=True)
    if frame_count(out) != VISITS * visit + (VISITS - 1) * empty:
        sys.exit(f"{out}: {frame_count(out)} frames, not {VISITS} x {visit} + "
                 f"{VISITS - 1} x {empty}: the ground truth would not line up")
    return out, fps, visit, empty


def frame_count(video):
    return int(subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
         "stream=nb_read_frames", "-of", "csv=p=0", str(video)],
        check=True, capture_output=True, text=True).stdout.strip())


def shifted_truth(truth_file, visit, empty, out):
    """The clip's ground truth repeated for each visit, frame numbers shifted past the empty
    stretches, each visit's track ids apart (a person back after the room was empty is a new
    track for any tracker)."""
    truth = json.loads(truth_file.read_text())
    width, height = truth["images"][0]["width"], truth["images"][0]["height"]
    by_id = {im["id"]: im["frame_index"] for im in truth["images"]}
    images, annotations = [], []
    total = VISITS * visit + (VISITS - 1) * empty
    images = [{"id": f, "file_name": out.name, "frame_index": f, "width": width, "height": height}
              for f in range(1, total + 1)]
    for v in range(VISITS):
        offset = v * (visit + empty)
        for a in truth["annotations"]:
            b = dict(a)
            b["id"] = len(annotations) + 1
            b["image_id"] = by_id[a["image_id"]] + offset
            if "track_id" in b:
                b["track_id"] = a["track_id"] + 1000 * v
            annotations.append(b)
    out.write_text(json.dumps({**truth, "images": images, "annotations": annotations}))
    return out


def evaluate(vigil, command, truth, tracks, extra):
    result = subprocess.run([vigil, command, "--gt", str(truth), "--tracks", str(tracks),
                             "--frames-in-tracks", "--json", *extra],
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_clip(args, clip, variant, work):
    source, fps, visit, empty = make_visits(clip, variant, args.empty, work)
    truth = shifted_truth(clip.with_suffix(".person.json"), visit, empty,
                          work / f"{source.stem}.person.json")
    duration = int((VISITS * visit + (VISITS - 1) * empty) / fps + 3)
    base = work / source.stem
    names = (("off", "{enabled: false}"), ("off-again", "{enabled: false}"),
             ("gated", "{enabled: true}"))
    runs = []
    for name, motion in names:
        (base / name / "tracks").mkdir(parents=True, exist_ok=True)
        camera = f"source: 'file:{source}', detect_fps: {args.detect_fps}, motion: {motion}"
        runs.append(gating_events.launch(args.vigil, camera, args.model, duration, base / name,
                                         False, ["--tracks-out", str(base / name / "tracks")]))
    lines = [a for l in LINES[clip.stem].split() for a in ("--line", l)]
    results = {}
    for (name, _), run in zip(names, runs):
        camera = gating_events.camera_summary(run)
        tracks = base / name / "tracks" / "cam.txt"
        results[name] = (camera, evaluate(args.vigil, "eval-lines", truth, tracks, lines),
                         evaluate(args.vigil, "eval-tracks", truth, tracks, []))
    return results


def print_tables(rows):
    print("| clip | variant | run | gated frames | counted (in+out, every line) | truth on every "
          "frame | absolute error | error per line and direction |")
    print("|---|---|---|---|---|---|---|---|")
    for clip, variant, name, (camera, lines, _) in rows:
        per_line = ", ".join(f"{l['name']} {l['in']['tracks'] - l['truth_every_frame']['in']:+d}/"
                             f"{l['out']['tracks'] - l['truth_every_frame']['out']:+d}"
                             for l in lines["lines"])
        error = sum(abs(l[d]["tracks"] - l["truth_every_frame"][d])
                    for l in lines["lines"] for d in ("in", "out"))
        print(f"| {clip} | {variant} | {name} | {camera.get('gated', 0)} | {lines['tracks']} "
              f"| {lines['truth_every_frame']} | {error} | {per_line} |")
    print()
    print("| clip | variant | run | frames scored | ground-truth boxes scored | MOTA | IDF1 | HOTA "
          "| FP | FN | ID switches |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for clip, variant, name, (_, _, t) in rows:
        print(f"| {clip} | {variant} | {name} | {t['frames']} | {t['gt_boxes']} | {t['MOTA']:.3f} "
              f"| {t['IDF1']:.3f} | {t['HOTA']:.3f} | {t['FP']} | {t['FN']} | {t['IDSW']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vigil", default=str(REPO / "build" / "vigil"))
    ap.add_argument("--model", default=str(REPO / "models" / "yolox-nano"))
    ap.add_argument("--videos", default=str(REPO.parent / "shared" / "data" / "videos"))
    ap.add_argument("--empty", type=float, default=12, help="seconds of empty room between visits")
    ap.add_argument("--detect-fps", type=float, default=5)
    ap.add_argument("--variants", nargs="*", default=list(NOISE), choices=list(NOISE))
    ap.add_argument("--work", default=str(REPO / "build" / "bench-gating-lines"))
    args = ap.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for stem in LINES:
        clip = Path(args.videos) / f"{stem}.mp4"
        if not clip.exists():
            sys.exit(f"{clip}: missing")
        for variant in args.variants:
            for name, result in run_clip(args, clip, variant, work).items():
                rows.append((stem, variant, name, result))
    print_tables(rows)


if __name__ == "__main__":
    main()
