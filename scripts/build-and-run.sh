#!/usr/bin/env bash
# Installs, builds and runs Vigil's main job on a fresh machine:
#   scripts/build-and-run.sh [IMAGE|DIR|VIDEO ...]
# With no argument it downloads a sample photograph (COCO val2017 #1000, children on a tennis
# court) and detects the persons in it. Annotated images go to build/annotated/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
build=${VIGIL_BUILD_DIR:-build}

inputs=("$@")
if ((${#inputs[@]} == 0)); then
  sample=.cache/sample-000000001000.jpg
  if [[ ! -s $sample ]]; then
    mkdir -p .cache
    curl -fL --retry 3 --connect-timeout 20 -o "$sample.part" \
      http://images.cocodataset.org/val2017/000000001000.jpg ||
      { echo "build-and-run: cannot download the sample photograph; name an image instead" >&2; exit 1; }
    mv "$sample.part" "$sample"
  fi
  inputs=("$sample")
fi

"$build/vigil" detect --annotate "$build/annotated" "${inputs[@]}"
echo "build-and-run: annotated images are in $build/annotated/"
