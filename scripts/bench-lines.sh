#!/usr/bin/env bash
# Line counts against ground truth on the shared clips (bench/lines.md): `vigil track` (Vigil's
# ByteTrack and the IoU baseline, cpu-ort, 1 thread) on every frame and at 5 detections per
# second, then `vigil eval-lines` with every line of the clip, at the hysteresis bands given
# (default: the built-in band only). Prints markdown tables: per line and direction, then the
# totals per band. Deterministic: one run is the figure.
#   scripts/bench-lines.sh [--variant NAME] [BAND_PIXELS...]
# --variant: the clips' harder variant NAME (small, half, skip, crop, small-skip) made by
# scripts/make-track-variants.py, with every line moved as the variant moved the boxes.
# Environment: VIGIL_BUILD_DIR (default build), VIGIL_VIDEOS (default ../shared/data/videos),
# VIGIL_VARIANTS (default .cache/track-variants).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/detect-stride.sh

build=${VIGIL_BUILD_DIR:-build}
videos=${VIGIL_VIDEOS:-../shared/data/videos}
variant=
if [[ ${1:-} == --variant ]]; then
  variant=${2:?bench-lines: --variant needs a name}
  shift 2
  videos=${VIGIL_VARIANTS:-.cache/track-variants}
fi
bands=("$@")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[[ -x $build/vigil ]] || { echo "bench-lines: $build/vigil missing (cmake --build $build)" >&2; exit 1; }

# Both clips are 640x480. Vertical lines drawn top to bottom (`in` is walking left), horizontal
# ones left to right (`in` is walking down); `beside` lines are where nobody walks.
declare -A lines
lines[TUD-Campus]="v160=160,0,160,480 v320=320,0,320,480 v500=500,0,500,480 h390=0,390,640,390 h300-beside=0,300,640,300 v320-top-beside=320,0,320,200"
lines[TUD-Stadtmitte]="v160=160,0,160,480 v320=320,0,320,480 v480=480,0,480,480 h280=0,280,640,280 h380-beside=0,380,640,380 v320-top-beside=320,0,320,180"

py() { /usr/bin/python3 -c "$1"; }

# A line's points moved as scripts/make-track-variants.py moves the boxes (MOT's 1-based pixels).
moved() {
  [[ -z $variant ]] && { echo "$1"; return; }
  py "
import sys
sys.path.insert(0, 'scripts/lib')
from script_module import load_script
variants = load_script('make-track-variants')
name, points = '$1'.split('=')
v = [float(c) for c in points.split(',')]
moved = [variants.MOVE_POINT['$variant'](x, y) for x, y in zip(v[0::2], v[1::2])]
print(name + '=' + ','.join('%g,%g' % p for p in moved))
"
}

for clip in TUD-Campus TUD-Stadtmitte; do
  video=$videos/$clip${variant:+-$variant}
  [[ -f $video.mp4 ]] || { echo "bench-lines: $video.mp4 absent" >&2; exit 1; }
  line_args=()
  for l in ${lines[$clip]}; do line_args+=(--line "$(moved "$l")"); done
  for rate in every 5; do
    rate_args=()
    stride=1
    if [[ $rate == 5 ]]; then
      rate_args=(--detect-fps 5)
      stride=$(detect_stride "$video.mp4" 5)
    fi
    for tracker in bytetrack iou; do
      "$build/vigil" track "$video.mp4" --out "$out/$clip-$rate-$tracker.txt" \
        --backend cpu-ort --threads 1 --tracker "$tracker" "${rate_args[@]}" > /dev/null \
        2>> "$out/log" || { cat "$out/log" >&2; exit 1; }
      for band in "${bands[@]:-default}"; do
        band_args=()
        [[ $band == default ]] || band_args=(--band "$band")
        "$build/vigil" eval-lines --gt "$video.person.json" \
          --tracks "$out/$clip-$rate-$tracker.txt" --stride "$stride" "${line_args[@]}" \
          "${band_args[@]}" --json | tail -1 > "$out/$clip-$rate-$tracker-$band.json"
      done
    done
  done
done

# Per line and direction, at the first band given (or the default).
band=${bands[0]:-default}
echo "| clip | detections | line | direction | truth | bytetrack | error | iou | error |"
echo "|---|---|---|---|---|---|---|---|---|"
for clip in TUD-Campus TUD-Stadtmitte; do
  for rate in every 5; do
    py "
import json
v = json.load(open('$out/$clip-$rate-bytetrack-$band.json'))
b = json.load(open('$out/$clip-$rate-iou-$band.json'))
rate = 'every frame' if '$rate' == 'every' else '5/s'
for lv, lb in zip(v['lines'], b['lines']):
    for d in ('in', 'out'):
        print('| $clip | %s | %s | %s | %d | %d | %+d | %d | %+d |' % (rate, lv['name'], d,
              lv[d]['truth'], lv[d]['tracks'], lv[d]['error'], lb[d]['tracks'], lb[d]['error']))
"
  done
done

echo
echo "| clip | detections | band (px) | truth | truth, every frame | bytetrack: counted | abs error | % | iou: counted | abs error | % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for clip in TUD-Campus TUD-Stadtmitte; do
  for rate in every 5; do
    for band in "${bands[@]:-default}"; do
      py "
import json
v = json.load(open('$out/$clip-$rate-bytetrack-$band.json'))
b = json.load(open('$out/$clip-$rate-iou-$band.json'))
rate = 'every frame' if '$rate' == 'every' else '5/s'
print('| $clip | %s | %g | %d | %d | %d | %d | %.1f | %d | %d | %.1f |' % (rate, v['band'],
      v['truth'], v['truth_every_frame'], v['tracks'], v['abs_error'],
      100 * v['abs_error_fraction'], b['tracks'], b['abs_error'], 100 * b['abs_error_fraction']))
"
    done
  done
done
