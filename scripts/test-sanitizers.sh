#!/usr/bin/env bash
# Builds Vigil with AddressSanitizer + UndefinedBehaviorSanitizer and, separately, with
# ThreadSanitizer, and runs the unit and integration tests (not the VM ones) under each.
#   scripts/test-sanitizers.sh [address|thread]...   (default: both)
# Build trees: build-asan/, build-tsan/. A sanitizer report fails the run (halt_on_error).
# Optimised at -O1 with line tables only (-g1): half the compile time of -O2 -g, and the
# reports still name file and line. VIGIL_CMAKE_ARGS adds configure arguments (e.g. ccache).
# Each test binary runs once with all its tests in one process, not once per test as ctest
# would: a TSan process of this size takes 3-8 s to start here, 300 of them did not fit in CI.
# Third-party code that is not built with a sanitizer is suppressed in tests/tsan.supp and
# tests/lsan.supp, each entry with its reason; none names Vigil.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

kinds=("$@")
((${#kinds[@]})) || kinds=(address thread)
# halt_on_error makes a report fail the test instead of scrolling past. Set for the build too:
# it runs the sanitized binary (the NPU test bundle's reference outputs).
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"
status=0
for kind in "${kinds[@]}"; do
  case $kind in
    address) dir=build-asan; flags="address,undefined" ;;
    thread) dir=build-tsan; flags="thread" ;;
    *) echo "test-sanitizers: unknown kind '$kind' (address, thread)" >&2; exit 2 ;;
  esac
  echo "=== $kind: configure and build in $dir"
  cmake -S . -B "$dir" -G Ninja -DVIGIL_WERROR=ON -DVIGIL_SANITIZE="$flags" \
    -DVIGIL_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" ${VIGIL_CMAKE_ARGS:-} > /dev/null
  cmake --build "$dir"
  # Every GoogleTest binary tests/CMakeLists.txt builds, so a new one is not left out here.
  mapfile -t binaries < <(find "$dir/tests" -maxdepth 1 -name 'vigil_*_tests' -type f \
    -executable -printf '%f\n' | sort)
  ((${#binaries[@]})) || { echo "test-sanitizers: no test binary in $dir/tests" >&2; exit 1; }
  for binary in "${binaries[@]}"; do
    echo "=== $kind: $binary (every test, one process)"
    if ! (cd "$dir/tests" && timeout 1800 "./$binary" --gtest_brief=1); then
      echo "test-sanitizers: $kind: $binary failed (a test failed or the sanitizer reported)" >&2
      status=1
    fi
  done
  echo "=== $kind: the project's scripts run as tests (ctest -R scripts.)"
  ctest --test-dir "$dir" --output-on-failure -R '^scripts[.]' --timeout 900 || status=1
done
exit $status
