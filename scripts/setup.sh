#!/usr/bin/env bash
# Everything a fresh Debian 12 / Ubuntu machine needs before Vigil runs: the Debian packages,
# the verified model weights, and a build in build/ (warnings are errors).
#   scripts/setup.sh            the packages that build and run vigil; a new build/ is
#                               configured without the tests and benchmarks (they need the
#                               others), an existing one keeps what it has
#   scripts/setup.sh --tests    every package (scripts/install-deps.sh --tests), the tests and
#                               benchmarks configured in
#
# Environment:
#   VIGIL_ORT_FROM    take ONNX Runtime from this directory or archive (scripts/fetch-onnxruntime.sh)
#   VIGIL_MODEL_FROM  take the weights from this file or directory instead of downloading them
#                     (machines without internet; CI uses ../shared/models/yolox-nano)
#   VIGIL_BUILD_DIR   build directory (default: build)
#   VIGIL_CMAKE_ARGS  extra arguments for cmake's configure step
#   VIGIL_BUILD_TARGET  build only this target (build-and-run.sh: vigil, so that the first
#                     detection does not wait for the test suite's build); default: everything
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${VIGIL_BUILD_DIR:-build}
if [[ ${1:-} == --tests ]]; then
  scripts/install-deps.sh --tests
  parts=(-DVIGIL_BUILD_TESTS=ON -DVIGIL_BUILD_BENCH=ON)
else
  scripts/install-deps.sh
  parts=()
  [[ -f $build/CMakeCache.txt ]] || parts=(-DVIGIL_BUILD_TESTS=OFF -DVIGIL_BUILD_BENCH=OFF)
fi

if [[ -n ${VIGIL_MODEL_FROM:-} ]]; then
  scripts/fetch-model.sh --from "$VIGIL_MODEL_FROM"
else
  scripts/fetch-model.sh
fi

# shellcheck disable=SC2086  # VIGIL_CMAKE_ARGS is a list of arguments
cmake -S . -B "$build" -G Ninja -DVIGIL_WERROR=ON "${parts[@]}" ${VIGIL_CMAKE_ARGS:-}
cmake --build "$build" ${VIGIL_BUILD_TARGET:+--target "$VIGIL_BUILD_TARGET"}
