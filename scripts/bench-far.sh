#!/usr/bin/env bash
# People far away (bench/far.md, issue 59): both TUD clips as they are (640x480), placed at their
# own size in the middle of a 1920x1080 view and of a 3840x2160 view (scripts/make-far-clip.py:
# the rest a blurred, darkened copy of the first frame), tracked at 5 detections a second with
# `vigil track --regions off` (the whole picture shrunk into the input) and `--regions auto` (the
# daemon's default: regions around motion and tracks for a picture at least twice the input;
# the 640x480 clips stay on the whole picture), the two alternated clip by clip. Prints a
# markdown table: MOTA, IDF1, missed and false boxes, Stadtmitte's line error (its lines of
# scripts/bench-lines.sh moved with the clip), inferences a detection, and the command's CPU
# (user + system, video decoding included) per tracked frame. Accuracy is deterministic; the
# CPU is one run's (repeat with --rounds N for the median of N alternated runs).
#   scripts/bench-far.sh [--rounds N] [--backend cpu-ort]
# Environment: VIGIL_BUILD_DIR (default build), VIGIL_VIDEOS (default ../shared/data/videos),
# VIGIL_FAR (default .cache/far: the far clips, made once).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/detect-stride.sh

build=${VIGIL_BUILD_DIR:-build}
videos=${VIGIL_VIDEOS:-../shared/data/videos}
far=${VIGIL_FAR:-.cache/far}
rounds=1
backend=cpu-ort
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    *) echo "bench-far: unknown argument $1" >&2; exit 2 ;;
  esac
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[[ -x $build/vigil ]] || { echo "bench-far: $build/vigil missing (cmake --build $build)" >&2; exit 1; }
mkdir -p "$far"

declare -A offset
offset[640x480]="0 0"
make_far() {  # make_far CLIP VIEW: the far clip's path without .mp4; its offset in offset[]
  local clip=$1 view=$2 target
  [[ $view == 640x480 ]] && { echo "$videos/$clip"; return; }
  target=$far/$clip-$view
  if [[ ! -s $target.mp4 || ! -s $target.offset ]]; then
    scripts/make-far-clip.py "$videos/$clip.mp4" "$target.mp4" --view "$view" > "$target.offset"
  fi
  echo "$target"
}

# Stadtmitte's lines (scripts/bench-lines.sh), in the clip's pixels.
stadtmitte_lines="v160=160,0,160,480 v320=320,0,320,480 v480=480,0,480,480 h280=0,280,640,280"
moved_lines() {  # moved_lines DX DY: --line arguments moved by the clip's offset
  local dx=$1 dy=$2 l name points
  for l in $stadtmitte_lines; do
    name=${l%%=*}
    points=${l#*=}
    printf -- '--line\n%s=%s\n' "$name" "$(/usr/bin/python3 -c "
v = [float(c) for c in '$points'.split(',')]
print(','.join('%g' % (c + ($dx if i % 2 == 0 else $dy)) for i, c in enumerate(v)))")"
  done
}

echo "| clip | view | regions | MOTA | IDF1 | missed boxes | false boxes | line error (Stadtmitte, 4 lines) | inferences a detection | CPU ms a tracked frame (median of $rounds) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for clip in TUD-Stadtmitte TUD-Campus; do
  for view in 640x480 1920x1080 3840x2160; do
    video=$(make_far "$clip" "$view")
    read -r dx dy < <([[ $view == 640x480 ]] && echo "0 0" || cat "$video.offset")
    stride=$(detect_stride "$video.mp4" 5)
    for round in $(seq "$rounds"); do
      for regions in off auto; do
        /usr/bin/time -f "%U %S" -o "$out/time" "$build/vigil" track "$video.mp4" \
          --out "$out/$regions.txt" --backend "$backend" --threads 1 --detect-fps 5 \
          --regions "$regions" > "$out/$regions.log" 2>> "$out/err" || { cat "$out/err" >&2; exit 1; }
        frames=$(grep -o '^[^:]*: [0-9]* frame' "$out/$regions.log" | grep -o '[0-9]* frame' | grep -o '[0-9]*')
        /usr/bin/python3 -c "
u, s = map(float, open('$out/time').read().split()[-2:])
print('%.1f' % (1000 * (u + s) / $frames))" >> "$out/$regions.cpu"
      done
    done
    for regions in off auto; do
      scores=$("$build/vigil" eval-tracks --gt "$video.person.json" --tracks "$out/$regions.txt" \
        --stride "$stride" --json | tail -1)
      line_error="-"
      if [[ $clip == TUD-Stadtmitte ]]; then
        mapfile -t line_args < <(moved_lines "$dx" "$dy")
        line_error=$("$build/vigil" eval-lines --gt "$video.person.json" --tracks "$out/$regions.txt" \
          --stride "$stride" "${line_args[@]}" --json | tail -1 |
          /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print('%d of %d (%.0f%%)' % (d['abs_error'], d['truth'], 100 * d['abs_error_fraction']))")
      fi
      inferences=$(grep -o '[0-9.]* inferences a detection' "$out/$regions.log" | grep -o '^[0-9.]*' || echo 1.00)
      cpu=$(sort -n "$out/$regions.cpu" | /usr/bin/python3 -c "import sys; v = [float(l) for l in sys.stdin]; print('%.1f' % v[len(v) // 2])")
      echo "$scores" | /usr/bin/python3 -c "
import json, sys
d = json.load(sys.stdin)
print('| %s | %s | %s | %.3f | %.3f | %d | %d | %s | %s | %s |' % (*sys.argv[1:4], d['MOTA'],
      d['IDF1'], d['FN'], d['FP'], *sys.argv[4:]))" "$clip" "$view" "$regions" "$line_error" \
        "$inferences" "$cpu"
      rm -f "$out/$regions.cpu"
    done
  done
done

# The daemon's CPU per detection: `vigil run` on the clip replayed as a file camera (motion
# gating on, as by default), regions off and auto alternated, each run 9 s (the clip is 7.2 s):
# the whole process' CPU seconds over the detections it made.
echo
echo "| clip | view | regions | detections | inferences a detection | daemon CPU ms a detection (median of $rounds) | ratio to off |"
echo "|---|---|---|---|---|---|---|"
model=${VIGIL_MODEL:-models/yolox-nano}
for view in 640x480 1920x1080 3840x2160; do
  clip=TUD-Stadtmitte
  video=$(make_far "$clip" "$view")
  for round in $(seq "$rounds"); do
    for regions in off auto; do
      cat > "$out/run.yaml" << YAML
version: 1
node: bench-far
http: {enabled: false}
detector: {model: $(realpath "$model"), backend: $backend, threads: 1}
cameras:
  - name: far
    source: 'file:$(realpath "$video.mp4")'
    fps: 25
    detect_fps: 5
    regions: {mode: $regions}
YAML
      "$build/vigil" run --config "$out/run.yaml" --duration 9 --summary-json "$out/run.json" \
        > /dev/null 2>> "$out/err" || { cat "$out/err" >&2; exit 1; }
      /usr/bin/python3 -c "
import json
s = json.load(open('$out/run.json'))
c = s['cameras']['far']
runs = sum(c['regions']['inferences'].values())
print('%d %.3f %.2f' % (c['detected'], runs / max(1, c['detected']), 1000 * s['cpu_seconds'] / max(1, c['detected'])))" >> "$out/daemon-$regions"
    done
  done
  for regions in off auto; do
    /usr/bin/python3 -c "
rows = [l.split() for l in open('$out/daemon-$regions')]
off = sorted(float(l.split()[2]) for l in open('$out/daemon-off'))
cpu = sorted(float(r[2]) for r in rows)
mid = lambda v: v[len(v) // 2]
print('| $clip | $view | $regions | %s | %s | %.1f | %.2f |' % (rows[0][0], rows[0][1], mid(cpu), mid(cpu) / mid(off)))"
  done
  rm -f "$out"/daemon-*
done
