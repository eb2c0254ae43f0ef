#!/usr/bin/env python3
"""Does motion gating, at its built-in defaults, lose or delay a person event?

Every clip in the videos folder, and variants made from it with FFmpeg (darker, noisier, at a
low bitrate), is run by the real daemon as a file camera three times at once: twice without
gating (their difference is the runs' own noise) and once with `motion: {enabled: true}` and
nothing else, the built-in defaults. Each event both ungated runs have must be in the gated run,
starting at most one detect period (in the clip's frames) after the later of the two: two
ungated runs detect different frames and differ by a few frames themselves, which is printed
beside it. An event only one ungated run has (a flicker) is listed, not required.

  scripts/bench-gating-events.py [--vigil build/vigil] [--videos ../shared/data/videos]
                                 [--detect-fps 5] [--work build/bench-gating] [--variants ...]
                                 [--reuse]   (runs whose summary.json exists are not run again)

Prints a Markdown table (clip, variant, events, gated frames, start frames per run, the largest
delay) and exits 1 if an event is lost or late. The runs are paced at the clips' frame rate, so
the whole takes about the clips' length per variant (three runs at once on 2 cores).
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# FFmpeg filters and encoder options that make a harder variant of a clip.
VARIANTS = {
    "original": None,
    "darker": ["-vf", "eq=brightness=-0.25:gamma=0.6", "-c:v", "libx264", "-crf", "20"],
    "noisier": ["-vf", "noise=alls=24:allf=t", "-c:v", "libx264", "-crf", "20"],
    "low-bitrate": ["-c:v", "libx264", "-b:v", "150k", "-maxrate", "150k", "-bufsize", "300k"],
}


def probe(clip):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=r_frame_rate,duration", "-of", "json", str(clip)],
        check=True, capture_output=True, text=True).stdout
    stream = json.loads(out)["streams"][0]
    num, den = stream["r_frame_rate"].split("/")
    return float(num) / float(den), float(stream["duration"])


def make_variant(clip, variant, work):
    if VARIANTS[variant] is None:
        return clip
    out = work / f"{clip.stem}.{variant}.mp4"
    if not out.exists():
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(clip), *VARIANTS[variant],
                        "-g", "25", "-an", str(out)], check=True)
    return out


def launch(vigil, camera, model, duration, folder, reuse, options=()):
    """`vigil run` for `duration` seconds on one file camera (`camera`: its flow mapping's keys
    after the name), cpu-ort on one thread, in `folder` (cameras.yaml, log, summary.json), with
    `vigil run`'s further `options`; (process, folder), the process None when `reuse` and the
    folder has its summary already."""
    if reuse and (folder / "summary.json").exists():
        return None, folder
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "cameras.yaml"
    config.write_text(
        "version: 1\n"
        f"detector: {{backend: cpu-ort, model: '{model}', threads: 1}}\n"
        "http: {listen: '127.0.0.1:0'}\n"
        "cameras:\n"
        f"  - {{name: cam, {camera}}}\n")
    log = open(folder / "log", "w")
    proc = subprocess.Popen([str(vigil), "run", "--config", str(config), "--duration",
                             str(duration), "--summary-json", str(folder / "summary.json"),
                             *options],
                            stdout=log, stderr=subprocess.STDOUT)
    return proc, folder


def camera_summary(run):
    """Waits for a launch()ed run; its camera's part of summary.json."""
    proc, folder = run
    if proc is not None and proc.wait(timeout=900) != 0:
        sys.exit(f"vigil failed in {folder}: see {folder / 'log'}")
    camera = json.loads((folder / "summary.json").read_text())["cameras"]["cam"]
    if camera["detected"] == 0:
        sys.exit(f"{folder}: the camera detected no frame: see {folder / 'log'}")
    return camera


def start_run(vigil, model, clip, detect_fps, motion, duration, folder, reuse):
    return launch(vigil, f"source: 'file:{clip}', detect_fps: {detect_fps}, motion: {motion}",
                  model, duration, folder, reuse)


def finish(run):
    camera = camera_summary(run)
    return [e["start_frame"] for e in camera["person_events"]], camera.get("gated", 0)


def match(start, candidates, frames_per_period):
    """The candidate start nearest `start` within four detect periods either way, or None."""
    near = [c for c in candidates if abs(c - start) <= 4 * frames_per_period]
    return min(near, key=lambda c: abs(c - start)) if near else None


def compare(off, again, gated, frames_per_period):
    """(largest delay of a gated event after the later ungated start, or None if one is lost;
    the largest spread of the two ungated runs; the events only one ungated run has)."""
    worst = 0
    spread = 0
    flickers = []
    remaining_again = list(again)
    remaining_gated = list(gated)
    for start in off:
        twin = match(start, remaining_again, frames_per_period)
        if twin is None:
            flickers.append(start)
            continue
        remaining_again.remove(twin)
        spread = max(spread, abs(start - twin))
        found = match(start, remaining_gated, frames_per_period)
        if found is None:
            return None, spread, flickers
        remaining_gated.remove(found)
        worst = max(worst, found - max(start, twin))
    return worst, spread, flickers + remaining_again


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vigil", default=str(REPO / "build" / "vigil"))
    ap.add_argument("--model", default=str(REPO / "models" / "yolox-nano"))
    ap.add_argument("--videos", default=str(REPO.parent / "shared" / "data" / "videos"))
    ap.add_argument("--detect-fps", type=float, default=5)
    ap.add_argument("--work", default=str(REPO / "build" / "bench-gating"))
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--clips", nargs="*", help="clip names (stems) to run; default: all")
    ap.add_argument("--gated", default="{enabled: true}",
                    help="the gated run's motion section (default: the built-in defaults)")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    clips = [c for c in sorted(Path(args.videos).glob("*.mp4"))
             if not args.clips or c.stem in args.clips]
    if not clips:
        sys.exit(f"no clips (*.mp4) in {args.videos}")
    print("| clip | variant | events (off, off again) | gated frames | starts: off | off again "
          "| gated | largest delay after the later ungated start, frames (allowed) "
          "| ungated runs apart, frames | in one ungated run only |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    failures = 0
    for clip in clips:
        fps, seconds = probe(clip)
        frames_per_period = round(fps / args.detect_fps)
        for variant in args.variants:
            source = make_variant(clip, variant, work)
            base = work / f"{clip.stem}.{variant}"
            duration = int(seconds + 3)
            runs = [start_run(args.vigil, args.model, source, args.detect_fps, motion, duration,
                              base / name, args.reuse)
                    for name, motion in (("off", "{enabled: false}"),
                                         ("off-again", "{enabled: false}"),
                                         ("gated", args.gated))]
            (off, _), (again, _), (gated, gated_frames) = (finish(r) for r in runs)
            delay, spread, flickers = compare(off, again, gated, frames_per_period)
            verdict = "lost" if delay is None else f"{delay}"
            if delay is None or delay > frames_per_period:
                failures += 1
                verdict += " FAIL"
            print(f"| {clip.stem} | {variant} | {len(off)}, {len(again)} | {gated_frames} "
                  f"| {off} | {again} | {gated} | {verdict} ({frames_per_period}) | {spread} "
                  f"| {flickers or ''} |", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
