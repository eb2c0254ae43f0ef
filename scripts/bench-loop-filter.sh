#!/usr/bin/env bash
# What skipping H.264's loop filter (capture.skip_loop_filter) saves and changes (bench/capture.md,
# "The loop filter"). TUD-Stadtmitte (people walking) at 1920x1080 and 30 frames/s, 20 s, encoded
# as an IP camera would send it (libx264, no B-frames, GOP 2 s) at each bitrate given; for each:
#   - FFmpeg's software decode of every frame, one thread, with and without the loop filter,
#     CPU from /usr/bin/time, alternated ROUNDS times (median);
#   - the PSNR of every picture decoded without the loop filter against the deblocked one;
#   - the persons (score >= 0.5) `vigil detect` (cpu-ort, 1 thread) finds on every 6th picture
#     (what 5 detections a second take of 30), the first 100, with and without: how many, how
#     many match one to one at IoU >= 0.5, their mean IoU and score difference. For scale, the same
#     comparison between the deblocked pictures of the first bitrate and of the next one.
#   scripts/bench-loop-filter.sh [--rates "1M 2M"] [--rounds 3] [--out DIR]
# Needs ffmpeg (Debian's package). Deterministic but for the CPU times.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/options.sh

rates="1M 2M" rounds=3 out=""
parse_options bench-loop-filter "rates rounds out" "$@"
command -v ffmpeg > /dev/null || { echo "bench-loop-filter: needs ffmpeg (apt-get install ffmpeg)" >&2; exit 2; }
vigil=$(realpath "${VIGIL_BUILD_DIR:-build}/vigil")
videos=${VIGIL_VIDEOS:-../shared/data/videos}
out=${out:-$(mktemp -d)}
mkdir -p "$out"

# detect DIR: vigil detect's persons on DIR's pictures, one JSON line a picture.
detect() { "$vigil" detect --backend cpu-ort --threads 1 --json "$1" 2> /dev/null; }

# compare A.json B.json: persons in each, matched one to one (track-false-boxes.py's greedy
# matching at IoU >= 0.5), mean IoU and score difference of the matched.
compare() {
  /usr/bin/python3 scripts/lib/compare_detections.py "$1" "$2"
}

cpu() {  # cpu FILE [ffmpeg input options]: CPU seconds of a one-thread decode of every frame
  local file=$1
  shift
  { /usr/bin/time -f "%U %S" ffmpeg -v error -threads 1 "$@" -i "$file" -an -f null - ; } 2>&1 |
    tail -1 | awk '{print $1 + $2}'
}
median() { tr ' ' '\n' | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "| bitrate | decode CPU s (600 pictures), deblocked | without loop filter | saved | PSNR min / median (dB) | persons, deblocked | without | matched | mean IoU | mean score difference |"
echo "|---|---|---|---|---|---|---|---|---|---|"
previous=""
for rate in $rates; do
  clip=$out/stadtmitte-1080p30-$rate.mp4
  [[ -s $clip ]] || ffmpeg -v error -y -stream_loop 2 -i "$videos/TUD-Stadtmitte.mp4" -t 20 \
    -vf scale=1920:1080,fps=30 -c:v libx264 -preset veryfast -bf 0 -g 60 -b:v "$rate" \
    -maxrate "$rate" -bufsize "$rate" -pix_fmt yuv420p -an "$clip"
  on=() off=()
  for ((r = 0; r < rounds; r++)); do
    on+=("$(cpu "$clip")")
    off+=("$(cpu "$clip" -skip_loop_filter all)")
  done
  on_s=$(echo "${on[*]}" | median)
  off_s=$(echo "${off[*]}" | median)
  ffmpeg -v error -skip_loop_filter all -i "$clip" -i "$clip" \
    -lavfi "[0:v][1:v]psnr=stats_file=$out/psnr-$rate.txt" -f null -
  psnr=$(grep -o 'psnr_avg:[0-9.inf]*' "$out/psnr-$rate.txt" | cut -d: -f2 | sort -n |
    awk '{v[NR] = $1} END {printf "%.1f / %.1f", v[1], v[int((NR + 1) / 2)]}')
  for side in deblocked skipped; do
    mkdir -p "$out/$rate-$side"
    opts=()
    [[ $side == skipped ]] && opts=(-skip_loop_filter all)
    ffmpeg -v error -y "${opts[@]}" -i "$clip" -vf "select=not(mod(n\,6))" -vsync 0 \
      -frames:v 100 "$out/$rate-$side/%03d.png"
    detect "$out/$rate-$side" > "$out/$rate-$side.json"
  done
  echo "| $rate | $on_s | $off_s | $(python3 -c "print('%.0f %%' % (100 * (1 - $off_s / $on_s)))") | $psnr | $(compare "$out/$rate-deblocked.json" "$out/$rate-skipped.json") |"
  [[ -z $previous ]] || echo "| $previous -> $rate, both deblocked | | | | | $(compare "$out/$previous-deblocked.json" "$out/$rate-deblocked.json") |"
  previous=$rate
done
echo "bench-loop-filter: files in $out" >&2
