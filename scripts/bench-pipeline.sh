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

python3 - "$out" "$detect_fps" <<'PY'
import json, sys
out, fps = sys.argv[1], float(sys.argv[2])
s = json.load(open(f"{out}/summary.json"))
cams = s["cameras"]
det = {k: v["detected"] for k, v in cams.items()}
lo, hi = min(det.values()), max(det.values())
print(f"run: {s['seconds']:.0f} s, {len(cams)} cameras at detect_fps {fps:g}, detection failures {s['detection_failures']}")
print("| camera | captured | detected | detected/s | skipped | gated | latency p50 ms | p99 ms |")
print("|---|---|---|---|---|---|---|---|")
for k, v in sorted(cams.items()):
    print(f"| {k} | {v['captured']} | {v['detected']} | {v['detected']/s['seconds']:.2f} | {v['skipped']} | {v['gated']} | {v['latency_ms']['p50']:.0f} | {v['latency_ms']['p99']:.0f} |")
print(f"CPU: {s['cpu_seconds']:.1f} s over {s['seconds']:.0f} s ({100*s['cpu_seconds']/s['seconds']:.0f}% of one core)")
print(f"spread of detections: (max-min)/max = {100*(hi-lo)/hi:.1f}%")
rows = [tuple(map(int, l.split())) for l in open(f"{out}/rss.tsv").readlines()[1:]]
if rows:
    warm = [r for r in rows if r[0] >= 60] or rows
    print(f"RSS: first sample {rows[0][1]/1024:.1f} MiB, after 60 s {warm[0][1]/1024:.1f} MiB, "
          f"max {max(r[1] for r in rows)/1024:.1f} MiB, last {rows[-1][1]/1024:.1f} MiB ({len(rows)} samples)")
PY
echo "bench-pipeline: files in $out"
