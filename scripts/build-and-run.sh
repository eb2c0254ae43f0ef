#!/usr/bin/env bash
# Installs, builds and runs Vigil's main job on a fresh machine: the daemon, `vigil run`.
#   scripts/build-and-run.sh [CONFIG]
# Without CONFIG it picks the shipped default: config/cameras.yaml (the first V4L2 camera,
# /dev/video0) when a camera is plugged in, otherwise config/demo.yaml, a real clip of people
# walking up one at a time replayed as a camera. What Vigil sees is written to the log.
#
# Environment (besides those of scripts/setup.sh):
#   VIGIL_DEMO_CLIP     take the demo clip from this file instead of downloading it
#   VIGIL_RUN_SECONDS   stop after this many seconds (default: run until Ctrl-C)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The daemon alone: the tests are built by scripts/test.sh when they are asked for.
VIGIL_BUILD_TARGET=vigil scripts/setup.sh
build=${VIGIL_BUILD_DIR:-build}

config=${1:-}
if [[ -z $config ]]; then
  if [[ -c /dev/video0 ]]; then
    config=config/cameras.yaml
  else
    config=config/demo.yaml
    clip=.cache/demo-clip.mp4
    if [[ ! -s $clip ]]; then
      mkdir -p .cache
      if [[ -n ${VIGIL_DEMO_CLIP:-} ]]; then
        cp "$VIGIL_DEMO_CLIP" "$clip"
      else
        curl -fL --retry 3 --connect-timeout 20 -o "$clip.part" \
          https://github.com/intel-iot-devkit/sample-videos/raw/master/one-by-one-person-detection.mp4 ||
          { echo "build-and-run: cannot download the demo clip; set VIGIL_DEMO_CLIP=FILE" >&2; exit 1; }
        mv "$clip.part" "$clip"
      fi
    fi
    echo "build-and-run: no camera at /dev/video0; replaying the demo clip $clip"
  fi
fi

# check-config's first lines say the node, the backend (auto: which one it tries first in this
# build, cpu-ort on a machine without an NPU) and the CPU threads; the daemon's "detector:" line
# then says which one runs.
"$build/vigil" check-config "$config"
exec "$build/vigil" run --config "$config" ${VIGIL_RUN_SECONDS:+--duration "$VIGIL_RUN_SECONDS"}
