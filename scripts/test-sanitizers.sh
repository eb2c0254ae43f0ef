#!/usr/bin/env bash
# Builds Vigil with AddressSanitizer + UndefinedBehaviorSanitizer and, separately, with
# ThreadSanitizer, and runs the unit and integration tests (not the VM ones) under each.
#   scripts/test-sanitizers.sh [address|thread]...   (default: both)
# Build trees: build-asan/, build-tsan/. A sanitizer report fails the test that triggered it.
# Optimised at -O1 with line tables only (-g1): half the compile time of -O2 -g, and the
# reports still name file and line. VIGIL_CMAKE_ARGS adds configure arguments (e.g. ccache).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

kinds=("$@")
((${#kinds[@]})) || kinds=(address thread)
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
  echo "=== $kind: tests"
  # halt_on_error makes a report fail the test instead of scrolling past.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
    ctest --test-dir "$dir" --output-on-failure -LE vm --timeout 900 || status=1
done
exit $status
