#!/usr/bin/env bash
# Trackers side by side on the shared clips with ground truth (bench/tracking.md): Vigil's
# ByteTrack (time clock), ByteTrack as published (frames clock: one 30 fps frame per tracked
# frame, track_buffer 30 frames) and the IoU baseline, each on every frame and at 5 detections
# per second, the same detector (cpu-ort, 1 thread, min score 0.1) for all. Prints a markdown
# table of `vigil eval-tracks` figures. Deterministic: one run is the figure.
#   scripts/bench-tracking.sh [LOST_AFTER_SECONDS...]     (default 1)
# Environment: VIGIL_BUILD_DIR (default build), VIGIL_VIDEOS (default ../shared/data/videos).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${VIGIL_BUILD_DIR:-build}
videos=${VIGIL_VIDEOS:-../shared/data/videos}
lost=("${@:-1}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[[ -x $build/vigil ]] || { echo "bench-tracking: $build/vigil missing (cmake --build $build)" >&2; exit 1; }

echo "| clip | detections | tracker | lost after (s) | MOTA | IDF1 | HOTA | ID switches | FP | FN |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for clip in TUD-Campus TUD-Stadtmitte; do
  [[ -f $videos/$clip.mp4 ]] || { echo "bench-tracking: $videos/$clip.mp4 absent" >&2; exit 1; }
  for rate in every 5; do
    rate_args=()
    stride=1
    if [[ $rate == 5 ]]; then rate_args=(--detect-fps 5); stride=5; fi
    for tracker in "bytetrack time" "bytetrack frames" "iou time"; do
      read -r name clock <<< "$tracker"
      for seconds in "${lost[@]}"; do
        "$build/vigil" track "$videos/$clip.mp4" --out "$out/tracks.txt" --backend cpu-ort \
          --threads 1 --tracker "$name" --clock "$clock" --lost-after "$seconds" \
          "${rate_args[@]}" > /dev/null 2>> "$out/log" || { cat "$out/log" >&2; exit 1; }
        "$build/vigil" eval-tracks --gt "$videos/$clip.person.json" --tracks "$out/tracks.txt" \
          --stride "$stride" --json | tail -1 |
          /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print('| $clip | ' + ('every frame' if '$rate' == 'every' else '5/s') + ' | $name ($clock) | $seconds | %.3f | %.3f | %.3f | %d | %d | %d |' % (d['MOTA'], d['IDF1'], d['HOTA'], d['IDSW'], d['FP'], d['FN']))"
      done
    done
  done
done
