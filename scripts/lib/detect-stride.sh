# shellcheck shell=bash
# Sourced by scripts/bench-lines.sh and scripts/bench-track-variants.sh.
# detect_stride VIDEO DETECT_FPS: the N of `vigil track --detect-fps DETECT_FPS` on VIDEO, which
# tracks frames 1, 1+N, 1+2N, ...: round(video fps / detect fps), halves away from zero, at least 1.
detect_stride() {
  local fps
  fps=$(ffprobe -v error -select_streams v -show_entries stream=r_frame_rate -of csv=p=0 "$1")
  /usr/bin/python3 -c "import fractions, math; print(max(1, math.floor(float(fractions.Fraction('$fps')) / $2 + 0.5)))"
}
