# Sourced by scripts/test-sanitizers.sh and scripts/fuzz.sh: the sanitizer build trees, each
# configured in one place so that both scripts use the same objects.
#   address  build-asan/  clang, ASan+UBSan, with libFuzzer's coverage hooks compiled in: the
#                         tests and the fuzz targets of one build (no object compiled twice).
#                         -O0: clang's UBSan checks at -O1 double the compile time (daemon/app.cpp's
#                         unity batch: 78 s at -O1, 35 s at -O0); what runs hot in the tests is
#                         OpenCV and ONNX Runtime, which are not rebuilt.
#   thread   build-tsan/  g++, TSan, -O1 (TSan's own cost is small to compile and large to run
#                         unoptimised): only the daemon and the test binaries of the code that
#                         owns threads (see sanitizer_targets)
# Line tables only (-g1): reports still name file and line. Unity builds as everywhere.
# VIGIL_CMAKE_ARGS adds configure arguments (e.g. a compiler launcher).

# sanitizer_configure KIND: sets $sanitizer_dir and configures it (quietly).
sanitizer_configure() {
  local kind=$1 args
  case $kind in
    address)
      sanitizer_dir=build-asan
      args=(-DCMAKE_CXX_COMPILER=clang++ -DVIGIL_SANITIZE=address,undefined -DVIGIL_FUZZ=ON
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1")
      ;;
    thread)
      sanitizer_dir=build-tsan
      args=(-DVIGIL_SANITIZE=thread -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1")
      ;;
    *) echo "unknown sanitizer kind '$kind' (address, thread)" >&2; return 2 ;;
  esac
  # shellcheck disable=SC2086  # VIGIL_CMAKE_ARGS is a list of arguments
  cmake -S . -B "$sanitizer_dir" -G Ninja -DVIGIL_WERROR=ON -DVIGIL_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${args[@]}" \
    ${VIGIL_CMAKE_ARGS:-} > /dev/null
}

# sanitizer_targets KIND: what the tree builds (empty: everything).
sanitizer_targets() {
  case $1 in
    thread) echo vigil vigil_unit_tests vigil_integration_tests ;;
    *) echo ;;
  esac
}
