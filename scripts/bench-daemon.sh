#!/usr/bin/env bash
# Whole daemon with and without motion gating: 1, 2 and 4 file cameras all replaying the
# one-by-one clip (people walk up one at a time, empty stretches between) for S seconds each,
# through scripts/bench-pipeline.sh. The configurations of one round run one after the other
# (alternating gating off / on), and R rounds are run, so the load of a shared machine falls on
# every configuration alike; the table gives medians over the rounds.
# Per run: frames detected per second (all cameras), end-to-end latency p50/p99 (capture to
# detections ready; the worst camera), the daemon's CPU seconds while running (getrusage in the
# daemon, every thread, model loading excluded), CPU utilisation, and CPU seconds per minute of
# video (video = frames captured / clip fps, per camera, summed).
#   scripts/bench-daemon.sh [--cameras "1 2 4"] [--modes "off rule still"] [--rounds 3]
#                           [--seconds 140] [--detect-fps 5] [--out DIR]
# Modes: off (motion: {enabled: false}), rule (the issue's rule: motion or a present person mean the
# full rate; idle_after 1 s, idle_detect_interval 2 s), still (the same, a still person seen by
# the latest detection checked every 1.5 s, and only large changes count as motion: threshold
# 50, min_area 0.03, so a person fidgeting in place is not "motion"). Presence: min_frames 2,
# clear_after 2.5 s in every mode (1 s above still_detect_interval, room for a slow detection
# on a loaded machine; below the 2.7 s between the first two persons, so they stay two events).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/options.sh

cameras="1 2 4" modes="off rule still" rounds=3 seconds=140 detect_fps=5 out=""
parse_options bench-daemon "cameras modes rounds seconds detect_fps out" "$@"
clip=${VIGIL_BENCH_CLIP:-../shared/data/videos/one-by-one-person-detection.mp4}
[[ -f $clip ]] || { echo "bench-daemon: no clip at $clip" >&2; exit 2; }
out=${out:-$(mktemp -d)}
mkdir -p "$out"

motion_of() {
  case "$1" in
    off) echo "{enabled: false}" ;;
    rule) echo "{idle_after: 1, idle_detect_interval: 2}" ;;
    still) echo "{idle_after: 1, idle_detect_interval: 2, still_detect_interval: 1.5, threshold: 50, min_area: 0.03}" ;;
    *) echo "bench-daemon: unknown mode $1" >&2; exit 2 ;;
  esac
}

{
  echo "started $(date -u +%FT%TZ) on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"
for ((round = 1; round <= rounds; round++)); do
  for n in $cameras; do
    for mode in $modes; do
      dir="$out/r$round-c$n-$mode"
      echo "round $round: $n camera(s), gating $mode ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
      scripts/bench-pipeline.sh --cameras "$n" --detect-fps "$detect_fps" --seconds "$seconds" \
        --clip "$clip" --motion "$(motion_of "$mode")" \
        --presence "{min_frames: 2, clear_after: 2.5}" --out "$dir" > "$dir.log" 2>&1 ||
        { echo "bench-daemon: run failed, see $dir.log" >&2; exit 1; }
      echo "$round $n $mode $dir" >> "$out/runs.tsv"
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

python3 scripts/lib/daemon_table.py "$out"
echo "bench-daemon: files in $out"
