#!/usr/bin/env bash
# /metrics under load while 4 cameras run: detection throughput for S seconds without load,
# then for S seconds while wrk hammers /metrics (C connections, 1 thread), from the daemon's own
# frame counters. Prints wrk's request rate and latency percentiles and the throughput change.
#   scripts/bench-metrics-load.sh [--seconds 30] [--connections 10] [--out DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=30 connections=10 out=""
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench-metrics-load: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${VIGIL_BUILD_DIR:-build}
videos=${VIGIL_VIDEOS:-../shared/data/videos}
out=${out:-$(mktemp -d)}
mkdir -p "$out"
port=$(scripts/free-port.sh)

clips=("$videos/TUD-Campus.mp4" "$videos/TUD-Stadtmitte.mp4" "$videos/one-by-one-person-detection.mp4")
{
  echo "version: 1"
  echo "http: {listen: '127.0.0.1:$port'}"
  echo "cameras:"
  for i in 0 1 2 3; do
    echo "  - {name: cam$i, source: 'file:$(realpath "${clips[i % 3]}")', loop: true, detect_fps: 5}"
  done
} > "$out/cameras.yaml"
"$build/vigil" run --config "$out/cameras.yaml" > "$out/vigil.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT

detected() {
  curl -fs "http://127.0.0.1:$port/metrics" |
    awk '/^vigil_camera_frames_detected_total/ {sum += $2} END {print sum}'
}
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.3; done
sleep 10  # warm-up: every camera streaming, the detector at its steady rate

d0=$(detected); t0=$(date +%s.%N)
sleep "$seconds"
d1=$(detected); t1=$(date +%s.%N)
# wrk runs at the lowest priority: on a 2-core box it would otherwise take a core from the
# detector, which a scraper on another machine (the normal case) does not.
nice -n 19 wrk -t1 -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$port/metrics" > "$out/wrk.txt"
d2=$(detected); t2=$(date +%s.%N)
curl -fs "http://127.0.0.1:$port/metrics" > "$out/metrics.txt"

python3 - "$d0" "$t0" "$d1" "$t1" "$d2" "$t2" <<'PY'
import sys
d0, t0, d1, t1, d2, t2 = map(float, sys.argv[1:])
idle = (d1 - d0) / (t1 - t0)
loaded = (d2 - d1) / (t2 - t1)
print(f"detections/s, 4 cameras: {idle:.2f} without load, {loaded:.2f} under wrk "
      f"({(loaded - idle) / idle * 100:+.1f}%)")
PY
grep -E "Requests/sec|Latency|50%|90%|99%|requests in" "$out/wrk.txt"
echo "metrics body: $(wc -c < "$out/metrics.txt") bytes; raw data: $out"
