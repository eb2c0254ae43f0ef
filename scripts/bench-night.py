#!/usr/bin/env python3
"""Does Vigil find persons at night, and does it invent them? (bench/night.md)

Night variants of every clip in the videos folder are made with FFmpeg (not stored: into
--work), each run as a file camera by the real daemon under one or more configurations (a JSON
object: the camera's `denoise` and `presence`), several
runs at once:

  day                the clip as it is
  grey               colour removed (an IR camera at night gives grey pictures)
  dark               brightness -0.18, contrast 0.75, gamma 0.55
  noisy              temporal sensor noise in every colour plane (FFmpeg's noise, strength 16)
  night              grey, dark and noisy together (the noise in the brightness only, as an IR
                     camera's grey pictures have it)
  night-colour       a colour camera at night without IR light: dark, noise in every plane
  night-glare        night with an IR illuminator's glare: a bright blob up to +230 near a corner
  night-low-bitrate  night at 150 kbit/s constant bitrate (a camera's substream on a weak link)

Per clip, variant and configuration it prints the person events the daemon started, how many
of the day version's events (under the first configuration) it found and how late, how many started while
nobody was in view (inside the clip's empty stretches, EMPTY below, for clips that have them)
and how many started again while a person was still in view (the event ended under them: a
person lost for presence.clear_after). With --ap, also the detector's person AP and AP50 on
every frame of the clips with ground truth (videos/*.person.json), per variant and denoise
setting (`vigil eval`).

  scripts/bench-night.py [--vigil build/vigil] [--videos ../shared/data/videos] [--work DIR]
      [--config NAME='{"denoise": true, "presence": {...}}' ...] [--variants ...] [--clips ...]
      [--parallel 3] [--reuse] [--ap]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts" / "lib"))
from script_module import load_script  # noqa: E402

gating = load_script("bench-gating-events")  # its probe, launch and camera_summary
probe = gating.probe  # (frames a second, seconds) of a clip

DARK = "eq=brightness=-0.18:contrast=0.75:gamma=0.55"
NOISE = "noise=alls=16:allf=t"
# An IR camera's night picture is grey: its sensor's noise is in the brightness only.
NIGHT = f"hue=s=0,{DARK},noise=c0s=16:c0f=t"
GLARE = ("geq=lum='min(255,lum(X,Y)+230*exp(-((X-0.72*W)*(X-0.72*W)+(Y-0.28*H)*(Y-0.28*H))"
         "/(2*(0.09*W)*(0.09*W))))':cb=128:cr=128")
HIGH_QUALITY = ["-c:v", "libx264", "-crf", "18"]
VARIANTS = {
    "day": None,
    "grey": ["-vf", "hue=s=0", *HIGH_QUALITY],
    "dark": ["-vf", DARK, *HIGH_QUALITY],
    "noisy": ["-vf", NOISE, *HIGH_QUALITY],
    "night": ["-vf", NIGHT, *HIGH_QUALITY],
    "night-colour": ["-vf", f"{DARK},{NOISE}", *HIGH_QUALITY],
    "night-glare": ["-vf", f"{NIGHT},{GLARE}", *HIGH_QUALITY],
    "night-low-bitrate": ["-vf", NIGHT, "-c:v", "libx264", "-b:v", "150k", "-maxrate", "150k",
                          "-bufsize", "300k"],
}

# Seconds of a clip in which nobody is in view. one-by-one: every second of the clip looked at
# (one frame a second, 2026-12-06); a stretch runs from one second after the last second showing
# any part of a person to one second before the next, so a person between two looked-at frames
# cannot be in it.
EMPTY = {
    "one-by-one-person-detection": [(0, 5), (20, 22), (46, 49), (70, 74), (87, 91), (120, 123),
                                    (136, 139.4)],
}


def make_variant(clip, variant, work):
    """The variant's video, made once; beside it a link to the clip's ground truth."""
    if VARIANTS[variant] is None:
        return clip
    out = work / "clips" / f"{clip.stem}.{variant}.mp4"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(clip), *VARIANTS[variant],
                        "-g", "25", "-an", str(out)], check=True)
    truth = clip.with_suffix(".person.json")
    link = out.with_suffix(".person.json")
    if truth.exists() and not link.exists():
        link.symlink_to(truth)
    return out


def start_run(args, source, config_json, duration, folder):
    settings = json.loads(config_json)
    camera = (f"source: 'file:{source}', detect_fps: {args.detect_fps}, "
              f"denoise: {json.dumps(settings.get('denoise', False))}, "
              f"presence: {json.dumps(settings.get('presence', {}))}")
    return gating.launch(args.vigil, camera, args.model, duration, folder, args.reuse)


def finish(run):
    """The start frames of the run's person events."""
    return [e["start_frame"] for e in gating.camera_summary(run)["person_events"]]


def judge(day, starts, fps, empty, seconds):
    """(day events found, the largest delay in seconds, events started with nobody in view,
    events started again while somebody was in view). A day event is found by the first event
    not yet taken that starts from 2 s before it up to the next day event (or the clip's end)."""
    found = 0
    delay = 0.0
    bounds = [s / fps for s in day] + [seconds]
    times = sorted(s / fps for s in starts)
    taken = set()
    for i, start in enumerate(bounds[:-1]):
        hits = [k for k, t in enumerate(times) if k not in taken and start - 2 <= t < bounds[i + 1]]
        if hits:
            taken.add(hits[0])
            found += 1
            delay = max(delay, times[hits[0]] - start)
    false = sum(1 for t in times if any(a <= t <= b for a, b in empty))
    return found, delay, false, len(times) - found - false


def run_events(args, clips, work):
    """Runs every clip x variant x presence section (args.parallel at once) and returns
    {(clip, variant, presence name): start frames}."""
    jobs = []
    for clip in clips:
        _, seconds = probe(clip)
        for variant in args.variants:
            source = make_variant(clip, variant, work)
            for name, config_json in args.config:
                folder = work / "runs" / f"{clip.stem}.{variant}.{name}"
                jobs.append(((clip.stem, variant, name), source, config_json, int(seconds + 3),
                             folder))
    results = {}
    for i in range(0, len(jobs), args.parallel):
        batch = jobs[i:i + args.parallel]
        runs = [start_run(args, source, config_json, duration, folder)
                for _, source, config_json, duration, folder in batch]
        for (key, *_), run in zip(batch, runs):
            results[key] = finish(run)
    return results


def print_events(args, clips, results):
    print("| clip | variant | configuration | events | day events found | largest delay, s "
          "| events with nobody in view | events again with a person in view | start frames |")
    print("|---|---|---|---|---|---|---|---|---|")
    for clip in clips:
        fps, seconds = probe(clip)
        empty = EMPTY.get(clip.stem, [])
        day = results[(clip.stem, "day", args.config[0][0])]  # the first configuration's
        for name, _ in args.config:
            for variant in args.variants:
                starts = results[(clip.stem, variant, name)]
                found, delay, false, again = judge(day, starts, fps, empty, seconds)
                nobody = str(false) if empty else "-"
                print(f"| {clip.stem} | {variant} | {name} | {len(starts)} | {found} of {len(day)} "
                      f"| {delay:.1f} | {nobody} | {again} | {starts} |", flush=True)


def print_ap(args, clips, work):
    denoise = sorted({json.loads(c).get("denoise", False) for _, c in args.config})
    print("\n| clip | variant | denoise | person AP | AP50 |")
    print("|---|---|---|---|---|")
    for clip in clips:
        if not clip.with_suffix(".person.json").exists():
            continue
        for variant in args.variants:
            source = make_variant(clip, variant, work)
            frames = work / "frames" / f"{clip.stem}.{variant}"
            if not (frames / "annotations.json").exists():
                subprocess.run(["/usr/bin/python3", str(REPO / "scripts" / "clip-eval-set.py"),
                                str(source), str(frames)], check=True, capture_output=True)
            for on in denoise:
                out = subprocess.run([args.vigil, "eval", "--model", args.model, "--backend",
                                      "cpu-ort", *(["--denoise"] if on else []), "--images",
                                      str(frames), "--annotations",
                                      str(frames / "annotations.json"), "--json"],
                                     check=True, capture_output=True, text=True).stdout
                metrics = json.loads(out.strip().splitlines()[-1])
                print(f"| {clip.stem} | {variant} | {'on' if on else 'off'} "
                      f"| {metrics['AP']:.3f} | {metrics['AP50']:.3f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vigil", default=str(REPO / "build" / "vigil"))
    ap.add_argument("--model", default=str(REPO / "models" / "yolox-nano"))
    ap.add_argument("--videos", default=str(REPO.parent / "shared" / "data" / "videos"))
    ap.add_argument("--work", default=str(REPO / ".cache" / "bench-night"))
    ap.add_argument("--detect-fps", type=float, default=5)
    ap.add_argument("--config", nargs="*", default=['defaults={}'],
                    help='NAME=\'{"denoise": false, "presence": {...}}\': a configuration to run '
                         "(default: defaults={}, the built-in defaults)")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--clips", nargs="*", help="clip names (stems); default: all")
    ap.add_argument("--parallel", type=int, default=3)
    ap.add_argument("--reuse", action="store_true", help="keep runs whose summary.json exists")
    ap.add_argument("--ap", action="store_true", help="also the detector's AP per variant")
    args = ap.parse_args()
    args.config = [tuple(c.split("=", 1)) for c in args.config]
    if "day" not in args.variants:
        args.variants.insert(0, "day")
    work = Path(args.work).resolve()
    clips = [c for c in sorted(Path(args.videos).glob("*.mp4"))
             if not args.clips or c.stem in args.clips]
    if not clips:
        sys.exit(f"no clips (*.mp4) in {args.videos}")
    print_events(args, clips, run_events(args, clips, work))
    if args.ap:
        print_ap(args, clips, work)


if __name__ == "__main__":
    main()
