#!/usr/bin/env bash
# Time to alert (issue 61): from a person coming into view to `ON`, the `new` event and the
# retained snapshot JPEG arriving at a real subscriber, through `vigil run` and mosquitto.
# Per clip (shared TUD clips with ground truth), scripts/lib/alert_clip.py makes a video: a
# still, person-free lead of --lead seconds (the camera goes idle under motion gating), then the
# clip from a little before the first person box 40 px tall. Each round: a fresh broker on a
# free loopback port, one `mosquitto_sub` stamping arrivals (%U), a fresh daemon playing the
# video once (not looped). scripts/lib/alert_report.py counts from t0, the daemon's capture of
# the person's first frame (bench/alert.md says how).
#   scripts/bench-alert.sh [--vigil build/vigil] [--rounds 5] [--clips "TUD-Campus TUD-Stadtmitte"]
#                          [--detect-fps 5] [--lead 10] [--model models/yolox-nano] [--out DIR]
# Relative paths are taken from the checkout's root (the script runs there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/options.sh

vigil=build/vigil rounds=5 clips="TUD-Campus TUD-Stadtmitte" detect_fps=5 lead=10
model=models/yolox-nano out=""
parse_options bench-alert "vigil rounds clips detect_fps lead model out" "$@"
videos=${VIGIL_BENCH_VIDEOS:-../shared/data/videos}
out=${out:-$(mktemp -d)}
mkdir -p "$out"
vigil=$(realpath "$vigil") model=$(realpath "$model") out=$(realpath "$out")
[[ -x $vigil ]] || { echo "bench-alert: no vigil binary at $vigil" >&2; exit 2; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

# round DIR VIDEO SECONDS: one fresh broker, its subscribers and one daemon run.
round() {
  local dir=$1 port http
  mkdir -p "$dir"
  port=$(scripts/free-port.sh) http=$(scripts/free-port.sh)
  printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" \
    > "$dir/mosquitto.conf"
  [[ $(id -u) == 0 ]] && echo "user root" >> "$dir/mosquitto.conf"
  mosquitto -c "$dir/mosquitto.conf" > "$dir/mosquitto.log" 2>&1 &
  pids=($!)
  for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  # One subscriber for every topic, so the order of arrival is exact: payloads in hex (%x), as
  # the JPEG's bytes would break the lines.
  mosquitto_sub -p "$port" -t 'vigil/#' -F '%U %t %x' > "$dir/received.txt" &
  pids+=($!)
  sleep 0.5
  cat > "$dir/cameras.yaml" <<YAML
version: 1
node: bench
detector: {model: '$model'}
mqtt: {url: 'mqtt://127.0.0.1:$port', ha_discovery: false, snapshots: true}
http: {listen: '127.0.0.1:$http'}
cameras:
  - name: door
    source: 'file:$2'
    loop: false
    detect_fps: $detect_fps
    motion: {enabled: true}
YAML
  cat /proc/loadavg > "$dir/loadavg.txt"
  "$vigil" run --config "$dir/cameras.yaml" --duration "$3" --summary-json "$dir/summary.json" \
    > "$dir/vigil.log" 2>&1 || echo "bench-alert: vigil run failed, see $dir/vigil.log" >&2
  cat /proc/loadavg >> "$dir/loadavg.txt"
  sleep 0.5
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}

for clip in $clips; do
  mkdir -p "$out/$clip"
  python3 scripts/lib/alert_clip.py "$videos/$clip.mp4" "$videos/$clip.person.json" \
    "$out/$clip" "$lead"
done
for r in $(seq "$rounds"); do  # clips alternate, so a shared machine's load falls on each alike
  for clip in $clips; do
    seconds=$(python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))
print(round(c["frames"] / c["fps"] + 4))' "$out/$clip/clip.json")
    echo "bench-alert: $clip round $r ($seconds s)"
    round "$out/$clip/round-$r" "$out/$clip/clip.mp4" "$seconds"
  done
done
# shellcheck disable=SC2086 # the clips are words
python3 scripts/lib/alert_report.py "$out" $clips | tee "$out/report.md"
echo "load average (1 min) during the rounds: $(cut -d' ' -f1 "$out"/*/round-*/loadavg.txt \
  | sort -n | sed -n '1p;$p' | paste -sd' ' | sed 's/ / to /')"
echo "raw data: $out"
