#!/usr/bin/env bash
# Installs the Debian packages Vigil needs, in two parts. Idempotent: apt-get skips what is
# already there. Debian 12 (bookworm) or newer; Ubuntu 22.04+ has the same names.
#   scripts/install-deps.sh            building and running `vigil` (scripts/build-and-run.sh)
#   scripts/install-deps.sh --tests    that and the tests, fuzzers, VM journeys and the package
#                                      (scripts/test.sh, build-deb.sh, fuzz.sh, test-sanitizers.sh)
#   scripts/install-deps.sh [--tests] --list   print the part's package names, install nothing
# The figures of each part on a fresh Debian 12: bench/install.md.
# Environment: VIGIL_WITH_ORT=OFF (no ONNX Runtime), VIGIL_ORT_FROM (a local ONNX Runtime:
# scripts/fetch-onnxruntime.sh).
set -euo pipefail

run_packages=(
  # toolchain; curl fetches the model, the demo clip and ONNX Runtime
  build-essential cmake ninja-build pkg-config ca-certificates curl
  # detector and command line
  libopencv-dev libjpeg62-turbo-dev libcli11-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libexpected-dev
  nlohmann-json3-dev libssl-dev
  # HTTP logins: bcrypt from libxcrypt (crypt_rn), TLS from OpenSSL (libssl-dev above)
  libcrypt-dev
  # daemon: cameras (libv4l2; FFmpeg for network streams), event loop (Boost.Asio), systemd
  # notification (libsystemd)
  libv4l-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libboost-dev
  libsystemd-dev
  # the history of events: SQLite (daemon/history/)
  libsqlite3-dev
  # MQTT client: Paho C++ (its CMake config needs the C library's -dev too); no broker to run
  libpaho-mqtt-dev libpaho-mqttpp-dev
  # NPU backend: XRT (2.13 on Debian 12: compiles the backend, runs it under the noop shim),
  # uuid (xrt_uuid.h needs it). Here and not with the tests: found, it is compiled in
  # (VIGIL_WITH_XRT is a public definition), so the tests' part would rebuild everything.
  libxrt-dev uuid-dev
)
test_packages=(
  # MQTT broker and tools, certificates (openssl) for the tests
  mosquitto mosquitto-clients openssl
  # python3-onnx for scripts/split-model.py (the tests' NPU bundles) and, with OpenCV's
  # Python binding (calibration frames and activations), scripts/quantize-model.py
  python3 python3-onnx python3-numpy python3-yaml python3-opencv
  # tests and benchmarks; promtool (in prometheus) checks /metrics output, wrk loads HTTP;
  # ctags measures classes and functions (scripts/check-room-sizes.py)
  libgtest-dev libgmock-dev libbenchmark-dev prometheus wrk universal-ctags git
  # clips made for tests and benchmarks (a picture stream and its detect stream, variants)
  ffmpeg
  # a file system whose reads hang (FUSE), for the test of a stop during a hung model load
  python3-fusepy
  # libFuzzer and clang's sanitizer runtimes (scripts/fuzz.sh): in Debian 12 they are only a
  # recommendation of clang's, which --no-install-recommends skips; g++ brings its own
  # ASan, UBSan and TSan
  clang libclang-rt-dev
  # the status page in a real browser (headless)
  chromium
  # the Debian package and its checks; systemd-analyze checks the unit
  lintian dpkg-dev systemd
  # V4L2 tests: Debian's kernel with vivid under QEMU
  qemu-system-x86 qemu-utils busybox-static v4l-utils cpio kmod file util-linux
  # the package's user journey on a real systemd in QEMU: a Debian 12 root file system
  debootstrap mmdebstrap e2fsprogs
)

packages=("${run_packages[@]}")
list=0
for arg in "$@"; do
  case $arg in
    --tests) packages+=("${test_packages[@]}") ;;
    --list) list=1 ;;
    *) echo "install-deps: unknown argument '$arg' (--tests, --list)" >&2; exit 2 ;;
  esac
done

# ONNX Runtime (the cpu-ort backend): the distribution's package where it has one (Debian 13+,
# Ubuntu 24.10+); elsewhere (Debian 12) Debian's headers and the npm package's runtime library,
# fetched with curl into .cache/onnxruntime without installing anything system-wide, or copied
# from VIGIL_ORT_FROM (scripts/fetch-onnxruntime.sh). Without either, Vigil builds without
# cpu-ort and says so in the configure summary. Decided after the other packages: on a fresh
# machine apt's lists come with them.
ort_package() {
  [[ ${VIGIL_WITH_ORT:-AUTO} != OFF && -z ${VIGIL_ORT_FROM:-} ]] &&
    apt-cache policy libonnxruntime-dev 2>/dev/null | grep -q 'Candidate: [0-9]' &&
    echo libonnxruntime-dev
  return 0
}
if ((list)); then
  printf '%s\n' "${packages[@]}"
  ort_package
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  sudo=sudo
else
  sudo=
fi
export DEBIAN_FRONTEND=noninteractive

# install PACKAGE...: those not installed yet (apt's lists updated once a run)
updated=0
install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    echo "install-deps: all $# packages present"
  else
    echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
    ((updated)) || $sudo apt-get update -qq
    updated=1
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

install "${packages[@]}"
if [[ -n $(ort_package) ]]; then
  install libonnxruntime-dev
elif [[ ${VIGIL_WITH_ORT:-AUTO} != OFF ]]; then
  "$(dirname "$0")/fetch-onnxruntime.sh"
fi
