#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, in the tree of scripts/test-sanitizers.sh
# address, build-asan/: after that script they are built already) and runs each for a bounded
# time, starting from the checked-in corpus (tests/fuzz/corpus/<target>/), as many at once as
# there are cores.
#   scripts/fuzz.sh [--seconds N] [target...]     (default 60 s each, every target)
# VIGIL_CMAKE_ARGS adds configure arguments (e.g. a compiler launcher such as ccache).
# CI runs it with --seconds 30; for a real search run it for hours:
#   scripts/fuzz.sh --seconds 3600 http_request_fuzzer
# New interesting inputs go to build-asan/corpus/<target>/ (not into the source tree). A crash
# or hang stops with exit 1 and leaves its input in build-asan/crashes/<target>/: fix the bug,
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
((${#targets[@]})) || targets=(config_fuzzer manifest_fuzzer frame_decode_fuzzer http_request_fuzzer
  tls_handshake_fuzzer onnx_free_size_fuzzer onnx_focus_stem_fuzzer)

source scripts/lib/sanitizer-tree.sh
echo "=== fuzz: configure and build the fuzz targets (clang, libFuzzer, ASan+UBSan)"
sanitizer_configure address
build=$sanitizer_dir
cmake --build "$build" --target "${targets[@]}"

# fuzz_one TARGET: runs it for $seconds; its summary line goes to $build/TARGET.result.
fuzz_one() {
  local target=$1 corpus=$build/corpus/$1 crashes=$build/crashes/$1
  mkdir -p "$corpus" "$crashes"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: growing past 2 GB is a leak or
  # an allocation an attacker controls. Leak detection stays on (ASan's default).
  if ! ASAN_OPTIONS=halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "tests/fuzz/corpus/$target" \
    2> "$build/$target.log"; then
    { echo "FAIL $target: input in $crashes/, log $build/$target.log (last lines below)"
      tail -n 40 "$build/$target.log"; } > "$build/$target.result"
    return 1
  fi
  local runs cov
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$target.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$build/$target.log" | tail -n 1)
  echo "ok   $target: ${runs:-?} runs in ${seconds} s, $cov, corpus $(find "$corpus" -type f | wc -l) files" \
    > "$build/$target.result"
}

status=0
batch=$(nproc)
for ((i = 0; i < ${#targets[@]}; i += batch)); do
  group=("${targets[@]:i:batch}")
  echo "=== fuzz: ${group[*]} for ${seconds} s each, at once"
  pids=()
  for target in "${group[@]}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for j in "${!group[@]}"; do
    wait "${pids[$j]}" || status=1
    cat "$build/${group[$j]}.result"
  done
done
exit $status
