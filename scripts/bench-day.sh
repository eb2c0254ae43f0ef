#!/usr/bin/env bash
# A home day, measured: N 1080p30 H.264 cameras whose scene has people in view about a tenth of
# the time (6 s of TUD-Stadtmitte's walkers, then 54 s of an empty room with sensor noise:
# one-by-one's first, empty frame), looped, each camera with detect_fps 5, cpu-ort on one thread.
# Configurations, run one after the other in each round (R rounds, so a busy machine weighs on
# all alike; medians over the rounds):
#   today      the camera's 1080p stream detected, today's defaults (motion gating on);
#   substream  the same scene as a 640x360 detect stream, the 1080p stream its picture_source
#              (decoded keyframes only: nobody watches, MQTT snapshots off);
#   mjpeg      the 1080p scene as MJPEG files (a camera without a substream), gating on;
#   substream-keyframes  substream, its detect stream decoding keyframes only while idle
#              (motion.idle_keyframes_only: true; off by default, bench/gating-default.md);
#   NAME-square  any of them with `detector: {square_input: true}`: every picture padded to
#              the 416x416 square, as before cpu-ort fitted its input (bench/fitted-input.md).
# Per run: the whole process's CPU as a user's `top` counts it (/usr/bin/time: every thread,
# start-up and the model's loading included) per second of the run, per camera, and cameras per
# core (1000 ms/s over the per-camera figure); beside it the settled CPU (10 s after the start
# to the end, from /proc) and the person events each camera started (the same events in every
# configuration: the cost is not bought with missed people).
#   scripts/bench-day.sh [--cameras 4] [--rounds 2] [--seconds 75] [--configs "today substream mjpeg"]
#                        [--out DIR]
# Needs ffmpeg; the clips are made once into .cache/bench-day.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/options.sh

cameras=4 rounds=2 seconds=75 configs="today substream mjpeg" out=""
parse_options bench-day "cameras rounds seconds configs out" "$@"
command -v ffmpeg > /dev/null || { echo "bench-day: needs ffmpeg (apt-get install ffmpeg)" >&2; exit 2; }
build=${VIGIL_BUILD_DIR:-build}
vigil=$(realpath "$build/vigil")
videos=${VIGIL_VIDEOS:-../shared/data/videos}
media=.cache/bench-day
model=$(realpath models/yolox-nano)
out=${out:-$(mktemp -d)}
mkdir -p "$media" "$out"
((seconds >= 20)) || { echo "bench-day: --seconds must be at least 20" >&2; exit 2; }

# day SIZE RATE FILE: the day's minute at SIZE, H.264 30 fps at most RATE bits a second (as an IP
# camera's encoder keeps it: 4M for its 1080p main stream, 512k for a 640x360 substream), a
# keyframe every 2 s, no B-frames: the walkers' 6 s and the empty room's 54 s encoded apart and
# joined (FFmpeg's concat demuxer, no re-encoding).
day() {
  local size=$1 rate=$2 file=$3 x264
  [[ -s $file ]] && return
  x264=(-c:v libx264 -preset veryfast -bf 0 -g 60 -b:v "$rate" -maxrate "$rate" -bufsize "$rate"
        -pix_fmt yuv420p -an)
  ffmpeg -v error -y -i "$videos/TUD-Stadtmitte.mp4" -t 6 -vf "scale=$size,fps=30,setsar=1" \
    "${x264[@]}" "$file.people.mp4"
  ffmpeg -v error -y -i "$videos/one-by-one-person-detection.mp4" -frames:v 1 \
    -vf "scale=$size,setsar=1" "$file.empty.png"
  ffmpeg -v error -y -loop 1 -i "$file.empty.png" -t 54 -r 30 -vf "noise=alls=6:allf=t" \
    "${x264[@]}" "$file.empty.mp4"
  printf "file '%s'\n" "$(realpath "$file.people.mp4")" "$(realpath "$file.empty.mp4")" > "$file.list"
  ffmpeg -v error -y -f concat -safe 0 -i "$file.list" -c copy "$file.part.mp4"
  mv "$file.part.mp4" "$file"
  rm -f "$file.people.mp4" "$file.empty.png" "$file.empty.mp4" "$file.list"
}
day 1920:1080 4M "$media/day-1080p.mp4"
day 640:360 512k "$media/day-360p.mp4"
if [[ ! -s $media/day-1080p-mjpeg.avi ]]; then
  ffmpeg -v error -y -i "$media/day-1080p.mp4" -c:v mjpeg -q:v 6 "$media/day.part.avi"
  mv "$media/day.part.avi" "$media/day-1080p-mjpeg.avi"
fi

# run CONFIG DIR: one daemon with the cameras of CONFIG; writes DIR/{summary.json,time.txt,settled.txt}.
run() {
  local config=$1 dir=$2 i source square=""
  mkdir -p "$dir"
  if [[ $config == *-square ]]; then
    config=${config%-square}
    square=", square_input: true"
  fi
  {
    echo "version: 1"
    echo "detector: {model: '$model', backend: cpu-ort, threads: 1, min_score: 0.5$square}"
    echo "cameras:"
    for ((i = 0; i < cameras; i++)); do
      case $config in
        today) source="source: 'file:$(realpath "$media/day-1080p.mp4")'" ;;
        substream) source="source: 'file:$(realpath "$media/day-360p.mp4")', picture_source: 'file:$(realpath "$media/day-1080p.mp4")'" ;;
        substream-keyframes) source="source: 'file:$(realpath "$media/day-360p.mp4")', picture_source: 'file:$(realpath "$media/day-1080p.mp4")', motion: {idle_keyframes_only: true}" ;;
        mjpeg) source="source: 'file:$(realpath "$media/day-1080p-mjpeg.avi")'" ;;
        *) echo "bench-day: unknown configuration $config" >&2; exit 2 ;;
      esac
      echo "  - {name: cam$i, $source, loop: true, detect_fps: 5}"
    done
  } > "$dir/cameras.yaml"
  /usr/bin/time -f "%e %U %S" -o "$dir/time.txt" "$vigil" run --config "$dir/cameras.yaml" \
    --duration "$seconds" --summary-json "$dir/summary.json" > "$dir/vigil.log" 2>&1 &
  local pid=$! first
  sleep 10
  # The daemon's CPU seconds 10 s in (every thread, from /proc): the settled figure starts there.
  first=$(python3 -c 'import os, sys
f = open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")", 1)[1].split()
print((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))' "$(pgrep -P "$pid" -x vigil)")
  wait "$pid" || { echo "bench-day: run failed, see $dir/vigil.log" >&2; exit 1; }
  echo "10 $first" > "$dir/settled.txt"
}

{
  echo "started $(date -u +%FT%TZ) on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $cameras cameras, $seconds s a run"
} | tee "$out/machine.txt"
: > "$out/runs.tsv"
for ((round = 1; round <= rounds; round++)); do
  for config in $configs; do
    echo "round $round: $config ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
    run "$config" "$out/r$round-$config"
    echo "$round $config $out/r$round-$config" >> "$out/runs.tsv"
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"
python3 scripts/lib/day_table.py "$out"
echo "bench-day: files in $out"
