#!/usr/bin/env bash
# The trackers on the harder variants of the clips (scripts/make-track-variants.py: persons half
# as tall, every other frame dropped, a crop with persons cut at the edges), on every frame and at
# 5 detections per second: `vigil eval-tracks` figures as a markdown table (bench/tracking.md).
# Deterministic: one run is the figure.
#   scripts/bench-track-variants.sh [VARIANT...]      (default: every variant made)
# Environment: VIGIL_BUILD_DIR (default build), VIGIL_VARIANTS (default .cache/track-variants),
# VIGIL_TRACKERS (default "bytetrack iou"), VIGIL_KEEP (a directory: keep the tracks and the
# detections there, for scripts/track-false-boxes.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/detect-stride.sh

build=${VIGIL_BUILD_DIR:-build}
dir=${VIGIL_VARIANTS:-.cache/track-variants}
read -r -a trackers <<< "${VIGIL_TRACKERS:-bytetrack iou}"
[[ -x $build/vigil ]] || { echo "bench-track-variants: $build/vigil missing" >&2; exit 1; }
[[ -d $dir ]] || { echo "bench-track-variants: $dir absent (scripts/make-track-variants.py)" >&2; exit 1; }
out=${VIGIL_KEEP:-$(mktemp -d)}
mkdir -p "$out"
[[ -n ${VIGIL_KEEP:-} ]] || trap 'rm -rf "$out"' EXIT

variants=("$@")
if [[ ${#variants[@]} == 0 ]]; then
  for f in "$dir"/*.person.json; do
    v=${f##*/}; v=${v%.person.json}; v=${v#TUD-Campus-}; v=${v#TUD-Stadtmitte-}
    [[ " ${variants[*]:-} " == *" $v "* ]] || variants+=("$v")
  done
fi

echo "| clip | variant | detections | tracker | MOTA | IDF1 | HOTA | ID switches | FP | FN |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for clip in TUD-Campus TUD-Stadtmitte; do
  for variant in "${variants[@]}"; do
    name=$clip-$variant
    [[ -f $dir/$name.mp4 ]] || continue
    for rate in every 5; do
      rate_args=()
      stride=1
      if [[ $rate == 5 ]]; then
        rate_args=(--detect-fps 5)
        stride=$(detect_stride "$dir/$name.mp4" 5)
      fi
      for tracker in "${trackers[@]}"; do
        tracks=$out/$name-$rate-$tracker.txt
        "$build/vigil" track "$dir/$name.mp4" --out "$tracks" --backend cpu-ort --threads 1 \
          --tracker "$tracker" --detections-out "$out/$name-$rate-detections.txt" \
          "${rate_args[@]}" > /dev/null 2>> "$out/log" || { cat "$out/log" >&2; exit 1; }
        "$build/vigil" eval-tracks --gt "$dir/$name.person.json" --tracks "$tracks" \
          --stride "$stride" --json | tail -1 |
          /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print('| $clip | $variant | ' + ('every frame' if '$rate' == 'every' else '5/s') + ' | $tracker | %.3f | %.3f | %.3f | %d | %d | %d |' % (d['MOTA'], d['IDF1'], d['HOTA'], d['IDSW'], d['FP'], d['FN']))"
      done
    done
  done
done
