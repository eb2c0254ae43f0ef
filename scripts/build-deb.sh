#!/usr/bin/env bash
# Builds the Debian package vigil_<version>_amd64.deb in build-deb/ from the project's build
# (scripts/setup.sh: the -O2 build in build/ that the tests run on; the package takes its
# installed executable, build/installed/vigil, whose default model directory is
# /var/lib/vigil/models/yolox-nano), stripped, and checks it with lintian (errors fail;
# warnings are printed).
#   scripts/build-deb.sh            then: sudo apt install ./build-deb/vigil_*_amd64.deb
# Environment: those of scripts/setup.sh (VIGIL_BUILD_DIR, VIGIL_MODEL_FROM, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh --tests  # lintian is in the tests' part, and the package is made from their build
build=${VIGIL_BUILD_DIR:-build}
out=build-deb
rm -rf "$out"
mkdir -p "$out"
# CPack packs what `cmake --install` would install from the build; the package goes to $out.
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out"
rm -rf "$out/_CPack_Packages"
deb=$(ls "$out"/vigil_*_amd64.deb)
echo "== $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
dpkg-deb --contents "$deb"
echo "== lintian"
# --fail-on error: warnings and notes are shown, not fatal.
lintian --fail-on error "$deb"
echo "lintian: no errors"
