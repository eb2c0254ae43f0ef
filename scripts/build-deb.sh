#!/usr/bin/env bash
# Builds the Debian package vigil_<version>_amd64.deb in build-deb/ (an -O2 build, stripped, without
# tests whose default model directory is /var/lib/vigil/models/yolox-nano) and checks it with
# lintian (errors fail; warnings are printed).
#   scripts/build-deb.sh            then: sudo apt install ./build-deb/vigil_*_amd64.deb
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
build=${VIGIL_DEB_BUILD_DIR:-build-deb}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVIGIL_WERROR=ON \
  -DVIGIL_BUILD_TESTS=OFF -DVIGIL_BUILD_BENCH=OFF \
  -DVIGIL_MODEL_DIR=/var/lib/vigil/models/yolox-nano
cmake --build "$build"
(cd "$build" && cpack -G DEB)
deb=$(ls "$build"/vigil_*_amd64.deb)
echo "== $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
dpkg-deb --contents "$deb"
echo "== lintian"
# --fail-on error: warnings and notes are shown, not fatal.
lintian --fail-on error "$deb"
echo "lintian: no errors"
