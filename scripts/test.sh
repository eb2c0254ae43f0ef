#!/usr/bin/env bash
# Runs Vigil's whole test suite on a fresh machine: set-up (every package, the tests' part too:
# scripts/setup.sh --tests; the model; the build) and then every test, as many at once as there
# are cores (each test starts its own daemon, broker and
# Prometheus on ports of its own, in a directory of its own). Tests whose data (../shared) or
# tools are absent skip and say why; the skips and their reasons are listed at the end.
#   scripts/test.sh [--no-skips] [ctest arguments...]
# --no-skips, or VIGIL_NO_SKIPS=1 in the environment (CI: .ci/run sets it and calls this script
# exactly as README.md gives it): a skip fails the run unless tests/allowed-skips.txt names the test
# (only tests that need hardware no machine here has, an NPU); a skip there means a part this
# machine provides is missing (../shared, the model, mosquitto, Prometheus, Chromium, ONNX
# Runtime, the VM's kernel package), and the reason printed names it. It also sets
# VIGIL_VM_REQUIRED=1, so the V4L2 VM test fails instead of skipping when it cannot boot.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

no_skips=0
[[ ${VIGIL_NO_SKIPS:-0} == 1 ]] && no_skips=1
if [[ ${1:-} == --no-skips ]]; then
  no_skips=1
  shift
fi
((no_skips)) && export VIGIL_VM_REQUIRED=1

scripts/setup.sh --tests
build=${VIGIL_BUILD_DIR:-build}
junit=$(realpath -m "$build")/ctest-junit.xml
rm -f "$junit"
status=0
ctest --test-dir "$build" --output-on-failure --timeout 600 -j"$(nproc)" \
  --output-junit "$junit" "$@" || status=$?
if ((no_skips)); then
  scripts/check-skips.py "$junit" --allowed tests/allowed-skips.txt || status=1
else
  scripts/check-skips.py "$junit" || status=1
fi
exit $status
