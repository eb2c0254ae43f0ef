#!/usr/bin/env bash
# Capture-to-ON latency over a real broker: a throwaway mosquitto on a free loopback port,
# `mosquitto_sub` timestamping every message it receives (%U, wall clock with nanoseconds), and
# `vigil run` replaying the one-by-one clip as a camera in a loop. For every whole-camera `new`
# event, latency = time the subscriber got `vigil/bench/<cam>/person ON` - the event's `start` (the
# capture time of the first frame with the person). Also prints the triggering frame's own
# capture-to-publish latency (latency_ms in the event) and the inference time from the log.
#   scripts/bench-mqtt-latency.sh [--seconds 300] [--detect-fps 5] [--min-frames 2]
#                                 [--clear-after 1] [--out DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=300 detect_fps=5 min_frames=2 clear_after=1 out=""
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --detect-fps) detect_fps=$2; shift 2 ;;
    --min-frames) min_frames=$2; shift 2 ;;
    --clear-after) clear_after=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench-mqtt-latency: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${VIGIL_BUILD_DIR:-build}
clip=${VIGIL_BENCH_CLIP:-../shared/data/videos/one-by-one-person-detection.mp4}
out=${out:-$(mktemp -d)}
mkdir -p "$out"
[[ -f $clip ]] || { echo "bench-mqtt-latency: no clip at $clip" >&2; exit 2; }

port=$(scripts/free-port.sh)
cat > "$out/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
CONF
[[ $(id -u) == 0 ]] && echo "user root" >> "$out/mosquitto.conf"
mosquitto -c "$out/mosquitto.conf" > "$out/mosquitto.log" 2>&1 &
broker=$!
trap 'kill $broker ${sub:-} 2>/dev/null || true' EXIT
for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
mosquitto_sub -p "$port" -t 'vigil/#' -F '%U %t %p' > "$out/received.txt" &
sub=$!

cat > "$out/cameras.yaml" <<YAML
version: 1
node: bench
detector: {min_score: 0.5}
mqtt: {url: 'mqtt://127.0.0.1:$port', ha_discovery: false}
cameras:
  - name: door
    source: 'file:$(realpath "$clip")'
    loop: true
    detect_fps: $detect_fps
    presence: {min_frames: $min_frames, clear_after: $clear_after}
YAML
"$build/vigil" run --config "$out/cameras.yaml" --duration "$seconds" \
  --summary-json "$out/summary.json" > "$out/vigil.log" 2>&1
sleep 1

python3 scripts/lib/mqtt_latency_report.py "$out" "$detect_fps" "$min_frames"
echo "raw data: $out"
