#!/usr/bin/env bash
# Runs tests while a CPU hog keeps every core busy, to see the suite hold on a loaded machine
# (a CI neighbour, a laptop compiling): the hog is one busy loop per core at normal priority,
# started before the tests and stopped after them, and never outlives its limit.
#   scripts/test-under-load.sh [ctest arguments...]      (default: -L integration)
# Runs on an existing build (scripts/test.sh or scripts/setup.sh makes it); ctest runs as many
# tests at once as there are cores, as scripts/test.sh does.
#
# Environment:
#   VIGIL_BUILD_DIR        build directory (default: build)
#   VIGIL_LOAD_MAX_SECONDS the hog stops by itself after this long (default 3600)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${VIGIL_BUILD_DIR:-build}
[[ -f $build/CTestTestfile.cmake ]] || { echo "test-under-load: no build in $build (run scripts/setup.sh)" >&2; exit 2; }
(($#)) || set -- -L integration
cores=$(nproc)
limit=${VIGIL_LOAD_MAX_SECONDS:-3600}

hogs=()
stop_hogs() {
  ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null
  wait "${hogs[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT
for ((i = 0; i < cores; i++)); do
  timeout "$limit" bash -c 'while :; do :; done' &
  hogs+=($!)
done
echo "test-under-load: $cores busy loops (stop after ${limit} s at most), then: ctest -j$cores $*"

start=$(date +%s)
status=0
ctest --test-dir "$build" --output-on-failure --timeout 900 -j"$cores" "$@" || status=$?
echo "test-under-load: $(($(date +%s) - start)) s under load, ctest exit $status; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
