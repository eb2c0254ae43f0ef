#!/usr/bin/env bash
# Does decoding the detector's pictures small (capture.scaled_decode) change what Vigil finds?
# The real data made three times larger (1920x1440, so that a JPEG decodes at 1/4 for the
# 416x416 input), through the daemon's own path, full-size decode against scaled:
#   - person AP of the 50 COCO photographs (vigil eval, with and without --scaled-decode);
#   - tracking on both TUD clips as MJPEG and as H.264 files (vigil run --tracks-out on a file
#     camera at detect_fps 5, capture.scaled_decode true/false; scored by vigil eval-tracks
#     --frames-in-tracks against the ground truth made three times larger). Which frames the
#     daemon detects depends on timing, so each configuration runs R times, alternated, and the
#     table gives the median and the range.
#   scripts/bench-scaled-decode.sh [--rounds 3] [--out DIR]
# Needs ffmpeg (Debian's package). Makes its inputs once into .cache/bench-scaled-decode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/options.sh

rounds=3 out=""
parse_options bench-scaled-decode "rounds out" "$@"
command -v ffmpeg > /dev/null || { echo "bench-scaled-decode: needs ffmpeg (apt-get install ffmpeg)" >&2; exit 2; }
build=${VIGIL_BUILD_DIR:-build}
vigil=$(realpath "$build/vigil")
shared=${VIGIL_SHARED:-../shared}
model=$(realpath models/yolox-nano)
out=${out:-$(mktemp -d)}
mkdir -p "$out"
media=.cache/bench-scaled-decode
mkdir -p "$media"

# COCO photographs and their annotations, three times larger.
if [[ ! -s $media/coco/annotations.json ]]; then
  mkdir -p "$media/coco/images"
  for f in "$shared"/data/coco-person-dev/images/*.jpg; do
    ffmpeg -v error -y -i "$f" -vf scale=iw*3:ih*3:flags=bicubic -q:v 2 "$media/coco/images/$(basename "$f")"
  done
  python3 - "$shared/data/coco-person-dev/annotations.json" "$media/coco/annotations.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for im in d["images"]:
    im["width"] *= 3; im["height"] *= 3
for a in d["annotations"]:
    a["bbox"] = [v * 3 for v in a["bbox"]]; a["area"] *= 9
json.dump(d, open(sys.argv[2], "w"))
PY
fi
# The clips as MJPEG and H.264 (no B-frames) at 1920x1440, and their ground truth.
for clip in TUD-Campus TUD-Stadtmitte; do
  src=$shared/data/videos/$clip.mp4
  [[ -s $media/$clip.mjpeg.avi ]] ||
    ffmpeg -v error -y -i "$src" -vf scale=1920:1440:flags=bicubic -c:v mjpeg -q:v 3 -an "$media/$clip.mjpeg.avi"
  [[ -s $media/$clip.h264.mp4 ]] ||
    ffmpeg -v error -y -i "$src" -vf scale=1920:1440:flags=bicubic -c:v libx264 -preset veryfast \
      -crf 18 -bf 0 -pix_fmt yuv420p -an "$media/$clip.h264.mp4"
  [[ -s $media/$clip.person.json ]] ||
    python3 - "$shared/data/videos/$clip.person.json" "$media/$clip.person.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for im in d["images"]:
    im["width"] *= 3; im["height"] *= 3
for a in d["annotations"]:
    a["bbox"] = [v * 3 for v in a["bbox"]]
    if "area" in a: a["area"] *= 9
json.dump(d, open(sys.argv[2], "w"))
PY
done

{
  echo "started $(date -u +%FT%TZ) on $(nproc) CPUs; vigil $vigil"
  echo "| photographs x3 | decode | AP | AP50 | AP75 | AR |"
  echo "|---|---|---|---|---|---|"
  for decode in full scaled; do
    flag=""
    [[ $decode == scaled ]] && flag=--scaled-decode
    "$vigil" eval --model "$model" --backend cpu-ort --threads 1 --images "$media/coco/images" \
      --annotations "$media/coco/annotations.json" --json $flag 2> /dev/null | tail -1 |
      python3 -c "import json, sys; m = json.load(sys.stdin); print(f\"| 50 COCO | $decode | {m['AP']:.3f} | {m['AP50']:.3f} | {m['AP75']:.3f} | {m['AR']:.3f} |\")"
  done
} | tee "$out/ap.md"

: > "$out/runs.tsv"
for ((round = 1; round <= rounds; round++)); do
  for clip in TUD-Campus TUD-Stadtmitte; do
    for form in mjpeg.avi h264.mp4; do
      for decode in true false; do
        dir="$out/r$round-$clip-${form%%.*}-$decode"
        mkdir -p "$dir/tracks"
        cat > "$dir/cameras.yaml" << EOF
version: 1
detector: {model: '$model', backend: cpu-ort, threads: 1}
capture: {scaled_decode: $decode}
cameras:
  - {name: cam, source: 'file:$(realpath "$media/$clip.$form")', detect_fps: 5}
EOF
        echo "round $round: $clip $form scaled_decode $decode ($(date -u +%T))"
        # The clip plays once in real time (Campus 2.8 s, Stadtmitte 7.2 s), then the camera ends.
        seconds=$([[ $clip == TUD-Campus ]] && echo 6 || echo 11)
        "$vigil" run --config "$dir/cameras.yaml" --duration "$seconds" --tracks-out "$dir/tracks" \
          > "$dir/vigil.log" 2>&1 || { echo "bench-scaled-decode: run failed, see $dir/vigil.log" >&2; exit 1; }
        "$vigil" eval-tracks --gt "$media/$clip.person.json" --tracks "$dir/tracks/cam.txt" \
          --frames-in-tracks --json 2> /dev/null | tail -1 > "$dir/eval.json"
        echo "$round $clip ${form%%.*} $decode $dir" >> "$out/runs.tsv"
      done
    done
  done
done

python3 scripts/lib/scaled_decode_tracking.py "$out" | tee "$out/tracking.md"
echo "bench-scaled-decode: files in $out"
