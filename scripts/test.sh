#!/usr/bin/env bash
# Runs Vigil's whole test suite on a fresh machine: set-up (packages, model, build) and then
# every test, as many at once as there are cores (each test starts its own daemon, broker and
# Prometheus on ports of its own, in a directory of its own). Tests whose data (../shared) is
# absent skip and say why.
#   scripts/test.sh [ctest arguments...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
build=${VIGIL_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure --timeout 600 -j"$(nproc)" "$@"
