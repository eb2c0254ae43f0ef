#!/usr/bin/env bash
# Builds Vigil with sanitizers and runs the tests under them (not the VM ones):
#   address  ASan+UBSan (clang): every test binary, every test. The same tree builds the libFuzzer
#            targets that scripts/fuzz.sh runs.
#   thread   TSan (g++): the code that owns threads (cameras, scheduler, inference worker, HTTP
#            server, MQTT client, the daemon as a whole): the unit tests and the daemon, MQTT,
#            HTTP (logins, TLS, streams), systemd and hostile-world integration tests. The detector's single-threaded
#            paths (accuracy, backends, the NPU runtime) run under ASan+UBSan only.
#   scripts/test-sanitizers.sh [--build-only] [address|thread]...   (default: both)
# Build trees and their flags: scripts/lib/sanitizer-tree.sh. A sanitizer report fails the run
# (halt_on_error). Each test binary runs as one process per core, each with its share of the
# tests (GoogleTest sharding), not once per test as ctest would: a TSan process of this size
# takes 3-8 s to start here, 300 of them did not fit in CI. Timing promises ("stops within
# 2 s") are not judged under a sanitizer (tests/wait.h). Third-party code that is not built with
# a sanitizer is suppressed in tests/tsan.supp and tests/lsan.supp, each entry with its reason;
# none names Vigil.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/sanitizer-tree.sh

build_only=0
if [[ ${1:-} == --build-only ]]; then
  build_only=1
  shift
fi
kinds=("$@")
((${#kinds[@]})) || kinds=(address thread)
# halt_on_error makes a report fail the test instead of scrolling past. Set for the build too:
# it runs the sanitized binary (the NPU test bundle's reference outputs).
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"
shards=$(nproc)

# run_binary DIR BINARY [gtest filter]: the binary's tests in $shards processes at once.
run_binary() {
  local dir=$1 binary=$2 filter=${3:-*} pids=() i rc=0
  for ((i = 0; i < shards; i++)); do
    (cd "$dir/tests" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout 1800 \
      "./$binary" --gtest_brief=1 --gtest_filter="$filter" > "$binary.shard$i.log" 2>&1) &
    pids+=($!)
  done
  for ((i = 0; i < shards; i++)); do
    wait "${pids[$i]}" || rc=1
    cat "$dir/tests/$binary.shard$i.log"
  done
  return $rc
}

status=0
for kind in "${kinds[@]}"; do
  sanitizer_configure "$kind"
  dir=$sanitizer_dir
  read -ra targets <<< "$(sanitizer_targets "$kind")"
  echo "=== $kind: build in $dir${targets[*]:+ (${targets[*]})}"
  cmake --build "$dir" ${targets[@]:+--target "${targets[@]}"}
  ((build_only)) && continue
  if [[ $kind == thread ]]; then
    runs=("vigil_unit_tests" "vigil_integration_tests RunDaemonTest.*:Mqtt*:ObservabilityTest.*:SystemdDaemonTest.*:HostileWorldTest.*:WebSecurityTest.*:LiveStreamTest.*:PictureSourceTest.*:DamagedJpegDaemonTest.*:HistoryDaemonTest.*")
  else
    # Every GoogleTest binary tests/CMakeLists.txt builds, so a new one is not left out here.
    mapfile -t runs < <(find "$dir/tests" -maxdepth 1 -name 'vigil_*_tests' -type f \
      -executable -printf '%f\n' | sort)
  fi
  ((${#runs[@]})) || { echo "test-sanitizers: no test binary in $dir/tests" >&2; exit 1; }
  for run in "${runs[@]}"; do
    read -r binary filter <<< "$run"
    echo "=== $kind: $binary ${filter:-(every test)}, $shards processes"
    start=$(date +%s)
    if ! run_binary "$dir" "$binary" "$filter"; then
      echo "test-sanitizers: $kind: $binary failed (a test failed or the sanitizer reported)" >&2
      status=1
    fi
    echo "=== $kind: $binary took $(($(date +%s) - start)) s"
  done
  if [[ $kind == address ]]; then
    echo "=== $kind: the project's scripts run as tests (ctest -R scripts.)"
    ctest --test-dir "$dir" --output-on-failure -R '^scripts[.]' --timeout 900 || status=1
  fi
done
exit $status
