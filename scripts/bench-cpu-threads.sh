#!/usr/bin/env bash
# CPU per detected frame of the whole daemon, by backend and CPU thread count, at the
# configured rate: N file cameras replaying the one-by-one clip at detect_fps D for S seconds
# (`vigil run --duration S --summary-json`; CPU = the daemon's getrusage while running, every
# thread, model loading excluded). The configurations of one round run one after the other and
# R rounds are run, so a shared machine's load falls on each alike; medians over the rounds.
#   scripts/bench-cpu-threads.sh [--configs "cpu:0 cpu-ort:1 cpu-ort:2"] [--cameras "1 4"]
#                                [--rounds 3] [--seconds 40] [--detect-fps 5] [--out DIR]
# A config is backend:threads (threads 0: every hardware thread, the default before issue 24).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/options.sh

configs="cpu:0 cpu-ort:1 cpu-ort:2" cameras="1 4" rounds=3 seconds=40 detect_fps=5 out=""
parse_options bench-cpu-threads "configs cameras rounds seconds detect_fps out" "$@"
build=${VIGIL_BUILD_DIR:-build}
clip=$(realpath "${VIGIL_BENCH_CLIP:-../shared/data/videos/one-by-one-person-detection.mp4}")
[[ -f $clip ]] || { echo "bench-cpu-threads: no clip at $clip" >&2; exit 2; }
out=${out:-$(mktemp -d)}
mkdir -p "$out"
echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)" |
  tee "$out/machine.txt"

for ((round = 1; round <= rounds; round++)); do
  for n in $cameras; do
    for config in $configs; do
      backend=${config%%:*} threads=${config##*:}
      run="$out/r$round-c$n-$backend-t$threads"
      {
        echo "version: 1"
        echo "http: {enabled: false}"
        echo "detector: {backend: $backend, threads: $threads}"
        echo "cameras:"
        for ((i = 0; i < n; i++)); do
          echo "  - {name: cam$i, source: 'file:$clip', loop: true, detect_fps: $detect_fps}"
        done
      } > "$run.yaml"
      echo "round $round: $n camera(s), $backend, threads $threads ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
      "$build/vigil" run --config "$run.yaml" --duration "$seconds" --summary-json "$run.json" \
        > "$run.log" 2>&1 || { echo "bench-cpu-threads: run failed, see $run.log" >&2; exit 1; }
    done
  done
done

/usr/bin/python3 scripts/lib/cpu_threads_table.py "$out" "$rounds" "$detect_fps"
