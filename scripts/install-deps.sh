#!/usr/bin/env bash
# Installs every Debian package Vigil needs to build, test and run. Idempotent: apt-get skips
# what is already there. Debian 12 (bookworm) or newer; Ubuntu 22.04+ has the same names.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates curl
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
  # MQTT: Paho C++ (its CMake config needs the C library's -dev too); broker and tools for tests
  libpaho-mqtt-dev libpaho-mqttpp-dev mosquitto mosquitto-clients openssl
  # NPU backend: XRT (2.13 on Debian 12: compiles the backend, runs it under the noop shim),
  # uuid (xrt_uuid.h needs it); python3-onnx for scripts/split-model.py and, with OpenCV's
  # Python binding (calibration frames and activations), scripts/quantize-model.py
  libxrt-dev uuid-dev python3-onnx python3-numpy python3-yaml python3-opencv
  # tests and benchmarks; promtool (in prometheus) checks /metrics output, wrk loads HTTP;
  # ctags measures classes and functions (scripts/check-room-sizes.py)
  libgtest-dev libgmock-dev libbenchmark-dev prometheus wrk universal-ctags
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
  qemu-system-x86 qemu-utils busybox-static v4l-utils cpio kmod file python3 util-linux
  # the package's user journey on a real systemd in QEMU: a Debian 12 root file system
  debootstrap mmdebstrap e2fsprogs
)

if [[ $(id -u) -ne 0 ]]; then
  sudo=sudo
else
  sudo=
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime (the cpu-ort backend): the distribution's package where it has one (Debian 13+,
# Ubuntu 24.10+); elsewhere (Debian 12) Debian's headers and the npm runtime library, fetched
# into .cache/onnxruntime without installing anything system-wide. Without either, Vigil builds
# without cpu-ort and says so in the configure summary.
if [[ ${VIGIL_WITH_ORT:-AUTO} != OFF ]]; then
  if apt-cache policy libonnxruntime-dev 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    if ! dpkg-query -W -f='${Status}' libonnxruntime-dev 2>/dev/null | grep -q "install ok installed"; then
      echo "install-deps: installing libonnxruntime-dev"
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends libonnxruntime-dev
    fi
  else
    if ! command -v npm >/dev/null; then
      echo "install-deps: installing npm (fetches the ONNX Runtime library)"
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm
    fi
    "$(dirname "$0")/fetch-onnxruntime.sh"
  fi
fi
