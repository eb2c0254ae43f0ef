#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, build-fuzz/) and runs each for a bounded
# time, starting from the checked-in corpus (tests/fuzz/corpus/<target>/).
#   scripts/fuzz.sh [--seconds N] [target...]     (default 60 s each, every target)
# VIGIL_CMAKE_ARGS adds configure arguments (e.g. a compiler launcher such as ccache).
# CI runs it with --seconds 30; for a real search run it for hours:
#   scripts/fuzz.sh --seconds 3600 http_request_fuzzer
# New interesting inputs go to build-fuzz/corpus/<target>/ (not into the source tree). A crash
# or hang stops with exit 1 and leaves its input in build-fuzz/crashes/<target>/: fix the bug,
# then copy the input into tests/fuzz/corpus/<target>/ so that fuzz_corpus.<target> (a ctest
# in every build) keeps it fixed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=60
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(config_fuzzer manifest_fuzzer frame_decode_fuzzer http_request_fuzzer)

build=build-fuzz
echo "=== fuzz: configure and build in $build (clang, libFuzzer, ASan+UBSan)"
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DVIGIL_FUZZ=ON -DVIGIL_WERROR=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo ${VIGIL_CMAKE_ARGS:-} > /dev/null
cmake --build "$build" --target "${targets[@]}"

status=0
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target
  crashes=$build/crashes/$target
  mkdir -p "$corpus" "$crashes"
  echo "=== fuzz: $target for ${seconds} s"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: growing past 2 GB is a leak or
  # an allocation an attacker controls. Leak detection stays on (ASan's default).
  if ! ASAN_OPTIONS=halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "tests/fuzz/corpus/$target" \
    2> "$build/$target.log"; then
    echo "FAIL $target: input in $crashes/, log $build/$target.log (last lines below)"
    tail -n 40 "$build/$target.log"
    status=1
    continue
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$target.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$build/$target.log" | tail -n 1)
  echo "ok   $target: ${runs:-?} runs in ${seconds} s, $cov, corpus $(find "$corpus" -type f | wc -l) files"
done
exit $status
