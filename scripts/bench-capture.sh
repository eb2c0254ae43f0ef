#!/usr/bin/env bash
# Capture's CPU: the whole daemon's CPU per second (getrusage in the daemon over the run, model
# loading excluded: --summary-json's cpu_seconds) for cameras of each kind at 1080p and 30 frames
# a second, detect_fps 5, cpu-ort on one thread; beside the floors measured in the same run:
#   - FFmpeg's software decode of every frame of the H.264 clip (ffmpeg -threads 1 -f null, CPU
#     from /usr/bin/time), times 30 frames a second;
#   - a full-size JPEG decode of one frame (libjpeg-turbo through OpenCV, as the daemon links it,
#     process CPU), times the frames detected a second;
#   - inference alone (vigil bench, cpu-ort, 1 thread, process CPU per frame of a picture already
#     at the detector's size, 200 ms apart as at 5 detections a second: --pace-ms 200), times
#     the frames detected a second.
# "settled ms/s" is the daemon's CPU from 10 s after its start to 3 s before its end (from /proc,
# every thread): without the model's loading and the seconds before an idle camera is idle.
# With --before BIN the same runs are made with an earlier vigil binary too, in alternation
# (before, after, before, ...), so a busy machine weighs on both alike; tables give medians over
# the rounds. With --before-capture YAML instead, "before" is the same binary with
# `capture: {YAML}` in its configuration (one capture setting against its default, e.g.
# "skip_loop_filter: false").
#   scripts/bench-capture.sh [--before BIN | --before-capture YAML] [--rounds 3] [--seconds 40] [--out DIR]
#                            [--cases "h264-file h264-http mjpeg-http four-h264 idle-mjpeg idle-h264
#                                      idle-h264-http h264-bframes-http substream-h264
#                                      h264-file-watched substream-h264-watched mjpeg-http-checked"]
# Cases: h264-file (an H.264 file, no B-frames, GOP 2 s), h264-http (the same as an HTTP MPEG-TS
# stream, served by ffmpeg -c copy), mjpeg-http (MJPEG over HTTP, ffmpeg -f mpjpeg -c copy),
# four-h264 (four H.264 file cameras at once), idle-mjpeg, idle-h264 and idle-h264-http (an empty
# still scene under motion gating, idle_after 1 s, idle_detect_interval 2 s, as MJPEG over HTTP,
# an H.264 file, and an H.264 HTTP stream, whose idle camera decodes only its keyframes),
# h264-bframes-http (H.264 with libx264's default B-frames over HTTP: a network camera skips the
# pictures nothing refers to; no floor is given, the floors' decode being of the clip without
# B-frames), substream-h264 (the H.264 file's scene as a 640x360 30 fps detect stream, the 1080p
# file as its picture_source, nobody watching; compared with h264-file round by round),
# h264-file-watched and substream-h264-watched (the same two with somebody watching the camera's
# MJPEG stream, /api/cameras/cam0/stream.mjpeg, for the whole run; the viewer's CPU not counted),
# mjpeg-http-checked (mjpeg-http with still_detect_interval 0.2, a detect period: the motion
# check runs every period also while a person is seen, as before 5ce24c1 made it rest then;
# compared with mjpeg-http round by round).
# Needs ffmpeg (Debian's package) for making the clips and serving the streams, and Debian's
# python3-opencv (/usr/bin/python3) for the JPEG floor; the clips are
# made once from ../shared's TUD-Stadtmitte (people walking) and one-by-one (an empty first
# frame) into .cache/bench-capture.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/options.sh

before="" before_capture="" rounds=3 seconds=40 out=""
cases="h264-file h264-http mjpeg-http four-h264 idle-mjpeg idle-h264 idle-h264-http h264-bframes-http substream-h264"
cases+=" h264-file-watched substream-h264-watched"
parse_options bench-capture "before before_capture rounds seconds out cases" "$@"
command -v ffmpeg > /dev/null || { echo "bench-capture: needs ffmpeg (apt-get install ffmpeg)" >&2; exit 2; }
build=${VIGIL_BUILD_DIR:-build}
after=$(realpath "$build/vigil")
[[ -z $before ]] || before=$(realpath "$before")
if [[ -n $before_capture ]]; then
  [[ -z $before ]] || { echo "bench-capture: --before or --before-capture, not both" >&2; exit 2; }
  before=$after
fi
videos=${VIGIL_VIDEOS:-../shared/data/videos}
model=$(realpath models/yolox-nano)
out=${out:-$(mktemp -d)}
mkdir -p "$out"
media=.cache/bench-capture
mkdir -p "$media"
settle=10  # seconds after the start before the settled CPU is measured
((seconds >= settle + 8)) || { echo "bench-capture: --seconds must be at least $((settle + 8))" >&2; exit 2; }

# stadtmitte FILE SIZE [X264 OPTION...]: TUD-Stadtmitte looped to 20 s at SIZE, 30 frames a
# second, H.264 with a keyframe every 2 s; made once.
stadtmitte() {
  local file=$1 size=$2
  shift 2
  [[ -s $file ]] && return
  ffmpeg -v error -y -stream_loop 2 -i "$videos/TUD-Stadtmitte.mp4" -t 20 \
    -vf "scale=$size,fps=30" -c:v libx264 -preset veryfast "$@" -g 60 -pix_fmt yuv420p -an "$file"
}
# The clips: 1920x1080 (without B-frames, and with libx264's default ones), and the same scene as
# a camera's 640x360 substream.
stadtmitte "$media/h264.mp4" 1920:1080 -bf 0
stadtmitte "$media/h264-bframes.mp4" 1920:1080
stadtmitte "$media/h264-360p.mp4" 640:360 -bf 0
if [[ ! -s $media/mjpeg.avi ]]; then
  ffmpeg -v error -y -i "$media/h264.mp4" -c:v mjpeg -q:v 4 -an "$media/mjpeg.avi"
fi
if [[ ! -s $media/still.png ]]; then
  ffmpeg -v error -y -i "$videos/one-by-one-person-detection.mp4" -frames:v 1 \
    -vf scale=1920:1080 "$media/still.png"
fi
if [[ ! -s $media/still-h264.mp4 ]]; then
  ffmpeg -v error -y -loop 1 -i "$media/still.png" -t 20 -r 30 -c:v libx264 -preset veryfast \
    -bf 0 -g 60 -pix_fmt yuv420p "$media/still-h264.mp4"
fi
if [[ ! -s $media/still-mjpeg.avi ]]; then
  ffmpeg -v error -y -i "$media/still-h264.mp4" -c:v mjpeg -q:v 4 -an "$media/still-mjpeg.avi"
fi
if [[ ! -d $media/jpeg ]]; then
  mkdir -p "$media/jpeg.part"
  ffmpeg -v error -y -i "$media/mjpeg.avi" -frames:v 60 -c copy -f image2 "$media/jpeg.part/%03d.jpg"
  mv "$media/jpeg.part" "$media/jpeg"
fi
if [[ ! -s $media/detector-input.png ]]; then
  ffmpeg -v error -y -i "$media/h264.mp4" -frames:v 1 -vf scale=416:234 "$media/detector-input.png"
fi

# serve KIND FILE: an ffmpeg serving FILE over HTTP in real time (-c copy), looped; prints
# "PID PORT".
serve() {
  local kind=$1 file=$2 port format
  port=$(scripts/free-port.sh)
  format=$([[ $kind == mjpeg ]] && echo mpjpeg || echo mpegts)
  ffmpeg -v error -re -stream_loop -1 -i "$file" -c copy -f "$format" -listen 1 \
    "http://127.0.0.1:$port/" > /dev/null 2>&1 &
  echo "$! $port"
}

# run_case BIN CASE DIR [CAPTURE]: one daemon run (with `capture: {CAPTURE}` when given); writes
# DIR/summary.json and DIR/vigil.log.
run_case() {
  local bin=$1 case=$2 dir=$3 capture=${4:-} server="" port="" cameras="" motion="" i
  local rate="detect_fps: 5" viewer="" http_port=""
  mkdir -p "$dir"
  if [[ $case == *-watched ]]; then
    http_port=$(scripts/free-port.sh)
    case=${case%-watched}
  fi
  case $case in
    h264-file) cameras="  - {name: cam0, source: 'file:$(realpath "$media/h264.mp4")', loop: true, $rate}" ;;
    substream-h264)
      cameras="  - {name: cam0, source: 'file:$(realpath "$media/h264-360p.mp4")', picture_source: 'file:$(realpath "$media/h264.mp4")', loop: true, $rate}"
      ;;
    four-h264)
      for i in 0 1 2 3; do
        cameras+="  - {name: cam$i, source: 'file:$(realpath "$media/h264.mp4")', loop: true, $rate}"$'\n'
      done
      ;;
    idle-h264)
      motion=", motion: {idle_after: 1, idle_detect_interval: 2, idle_keyframes_only: true}"
      cameras="  - {name: cam0, source: 'file:$(realpath "$media/still-h264.mp4")', loop: true, $rate$motion}"
      ;;
    h264-http | mjpeg-http | mjpeg-http-checked | idle-mjpeg | idle-h264-http | h264-bframes-http)
      local kind=h264 file=$media/h264.mp4
      [[ $case == h264-bframes-http ]] && file=$media/h264-bframes.mp4
      [[ $case == mjpeg-http* ]] && kind=mjpeg file=$media/mjpeg.avi
      [[ $case == mjpeg-http-checked ]] && motion=", motion: {still_detect_interval: 0.2}"
      [[ $case == idle-mjpeg ]] && kind=mjpeg file=$media/still-mjpeg.avi
      [[ $case == idle-h264-http ]] && file=$media/still-h264.mp4
      [[ $case == idle-* ]] && motion=", motion: {idle_after: 1, idle_detect_interval: 2, idle_keyframes_only: true}"
      read -r server port < <(serve "$kind" "$file")
      cameras="  - {name: cam0, source: 'http://127.0.0.1:$port/', $rate$motion}"
      ;;
    *) echo "bench-capture: unknown case $case" >&2; exit 2 ;;
  esac
  {
    echo "version: 1"
    echo "detector: {model: '$model', backend: cpu-ort, threads: 1, min_score: 0.5}"
    [[ -z $capture ]] || echo "capture: {$capture}"
    [[ -z $http_port ]] || echo "http: {listen: '127.0.0.1:$http_port'}"
    echo "cameras:"
    echo "${cameras%$'\n'}"
  } > "$dir/cameras.yaml"
  "$bin" run --config "$dir/cameras.yaml" --duration "$seconds" \
    --summary-json "$dir/summary.json" > "$dir/vigil.log" 2>&1 &
  local pid=$! first last
  if [[ -n $http_port ]]; then
    # The viewer: connects as soon as the daemon listens (curl retries a refused connection) and
    # reads the stream until the daemon ends it; the bytes it read are kept.
    curl -sN --retry 60 --retry-connrefused --retry-delay 1 --max-time $((seconds + 30)) \
      -o /dev/null -w '%{size_download}\n' \
      "http://127.0.0.1:$http_port/api/cameras/cam0/stream.mjpeg" > "$dir/viewed-bytes.txt" &
    viewer=$!
  fi
  # Settled: the daemon's CPU from $settle s after the start (model loaded, an idle camera idle)
  # to 3 s before its end, from /proc (every thread), beside the summary's whole run.
  sleep "$settle"
  first=$(cpu_sample "$pid")
  sleep $((seconds - settle - 3))
  last=$(cpu_sample "$pid")
  wait "$pid" ||
    { echo "bench-capture: run failed, see $dir/vigil.log" >&2; [[ -z $server ]] || kill "$server"; exit 1; }
  echo "$first $last" > "$dir/settled.txt"
  if [[ -n $viewer ]]; then
    wait "$viewer" || true
    (($(cat "$dir/viewed-bytes.txt" 2> /dev/null || echo 0) > 0)) ||
      { echo "bench-capture: the viewer of $dir read nothing" >&2; exit 1; }
  fi
  [[ -z $server ]] || { kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; }
}

# cpu_sample PID: "SECONDS CPU_SECONDS", the monotonic time and the process's user+system CPU.
cpu_sample() {
  python3 -c 'import os, sys, time
f = open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")", 1)[1].split()
print(time.monotonic(), (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))' "$1"
}

# Floors, measured in every round.
floor_h264_ms() {  # CPU ms per frame of FFmpeg's decode of every frame, one thread
  local t frames
  frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
    -of csv=p=0 "$media/h264.mp4")
  t=$( { /usr/bin/time -f "%U %S" ffmpeg -v error -threads 1 -i "$media/h264.mp4" -an -f null - ; } 2>&1 | tail -1)
  python3 -c "import sys; u, s = map(float, '$t'.split()); print(1000 * (u + s) / $frames)"
}
floor_jpeg_ms() {  # CPU ms of one full-size 1080p JPEG decode (libjpeg-turbo through OpenCV)
  # Python's imdecode allocates a new 6 MB picture each time, which glibc maps and unmaps, and
  # page faults then cost 3-5 times the decode here; the daemon decodes into reused storage.
  # The allocator is told to keep its memory, so that only the decode is measured.
  MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=1073741824 \
    /usr/bin/python3 - "$media/jpeg" <<'PY'
import cv2, glob, sys, time, numpy as np
files = sorted(glob.glob(sys.argv[1] + "/*.jpg"))
data = [np.fromfile(f, np.uint8) for f in files]
for d in data[:5]: cv2.imdecode(d, cv2.IMREAD_COLOR)
t = time.process_time()
for _ in range(3):
    for d in data: cv2.imdecode(d, cv2.IMREAD_COLOR)
print(1000 * (time.process_time() - t) / (3 * len(data)))
PY
}
floor_inference_ms() {  # CPU ms per detection of a picture already at the detector's size, at a
  # camera's cadence (200 ms between runs: 5 detections a second; caches cool between runs)
  "$after" bench --model "$model" --backend cpu-ort --threads 1 --warmup 5 --iterations 40 \
    --pace-ms 200 --json \
    "$media/detector-input.png" 2> /dev/null |
    python3 -c 'import json, sys; j = json.load(sys.stdin); j = j[0] if isinstance(j, list) else j
print(j["cpu_ms_per_frame"]["median"])'
}

{
  echo "started $(date -u +%FT%TZ) on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "after: $after${before:+; before: $before}${before_capture:+ with capture: {$before_capture\}}"
} | tee "$out/machine.txt"
: > "$out/runs.tsv"
: > "$out/floors.tsv"
for ((round = 1; round <= rounds; round++)); do
  echo "round $round: floors ($(date -u +%T))"
  echo "$round $(floor_h264_ms) $(floor_jpeg_ms) $(floor_inference_ms)" >> "$out/floors.tsv"
  for case in $cases; do
    for side in ${before:+before} after; do
      bin=$after
      [[ $side == before ]] && bin=$before
      dir="$out/r$round-$case-$side"
      echo "round $round: $case, $side ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
      capture=""
      [[ $side == before ]] && capture=$before_capture
      run_case "$bin" "$case" "$dir" "$capture"
      echo "$round $case $side $dir" >> "$out/runs.tsv"
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

python3 scripts/lib/capture_tables.py "$out"
echo "bench-capture: files in $out"
