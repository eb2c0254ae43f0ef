#!/usr/bin/env bash
# Whole-daemon benchmark: N file cameras replaying the real clips, each at detect_fps D, for S
# seconds. Samples the daemon's resident memory every 10 s and prints per-camera detections,
# their spread, end-to-end latency (capture timestamp to detections ready) p50/p99, and the
# daemon's CPU seconds while running.
#   scripts/bench-pipeline.sh [--cameras 4] [--detect-fps 5] [--seconds 600] [--out DIR]
#                             [--clip FILE] [--motion '{idle_after: 1}'] [--presence '{...}']
# --clip: every camera replays FILE (default: the clips in turn); --motion and --presence: a
# camera's motion and presence sections in YAML flow style (see config/cameras.yaml).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cameras=4 detect_fps=5 seconds=600 out="" clip="" motion="" presence=""
while (($#)); do
  case "$1" in
    --cameras) cameras=$2; shift 2 ;;
    --detect-fps) detect_fps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --clip) clip=$2; shift 2 ;;
    --motion) motion=$2; shift 2 ;;
    --presence) presence=$2; shift 2 ;;
    *) echo "bench-pipeline: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${VIGIL_BUILD_DIR:-build}
videos=${VIGIL_VIDEOS:-../shared/data/videos}
out=${out:-$(mktemp -d)}
mkdir -p "$out"

clips=("$videos/TUD-Campus.mp4" "$videos/TUD-Stadtmitte.mp4" "$videos/one-by-one-person-detection.mp4")
[[ -n $clip ]] && clips=("$clip")
extra=""
[[ -n $motion ]] && extra+=", motion: $motion"
[[ -n $presence ]] && extra+=", presence: $presence"
{
  echo "version: 1"
  echo "detector: {min_score: 0.5}"
  echo "cameras:"
  for ((i = 0; i < cameras; i++)); do
    echo "  - {name: cam$i, source: 'file:$(realpath "${clips[i % ${#clips[@]}]}")', loop: true, detect_fps: $detect_fps$extra}"
  done
} > "$out/cameras.yaml"

"$build/vigil" run --config "$out/cameras.yaml" --duration "$seconds" \
  --summary-json "$out/summary.json" > "$out/vigil.log" 2>&1 &
pid=$!
echo "elapsed_s rss_kib" > "$out/rss.tsv"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [[ -n $rss ]] && echo "$(( $(date +%s) - start )) $rss" >> "$out/rss.tsv"
  sleep 10
done
wait "$pid"

python3 scripts/lib/pipeline_report.py "$out" "$detect_fps"
echo "bench-pipeline: files in $out"
