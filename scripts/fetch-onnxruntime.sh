#!/usr/bin/env bash
# Fetches ONNX Runtime for the cpu-ort backend on a Debian release that does not package it
# (Debian 12), without installing anything system-wide:
#   - the C/C++ headers from Debian's own libonnxruntime-dev (trixie), downloaded with
#     `apt-get download` through a private sources list and apt state, unpacked with dpkg -x;
#   - the runtime library libonnxruntime.so.1 for linux-x64 from the npm package
#     onnxruntime-node of the same version (Debian's libonnxruntime1.21 needs a newer glibc).
# Result: DEST/include/onnxruntime/*.h, DEST/lib/libonnxruntime.so{,.1}, DEST/VERSION.
# CMake finds DEST through -DVIGIL_ORT_ROOT=DEST (default: .cache/onnxruntime in the source tree).
#
#   scripts/fetch-onnxruntime.sh [DEST]
# Environment: VIGIL_ORT_SUITE (default trixie), VIGIL_ORT_NPM_VERSION (default: the Debian
# package's upstream version, e.g. 1.21.0), VIGIL_ORT_MIRROR (default: the first Debian mirror
# in /etc/apt, else http://deb.debian.org/debian).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/.cache/onnxruntime}
suite=${VIGIL_ORT_SUITE:-trixie}

if [[ -f $dest/VERSION && -f $dest/lib/libonnxruntime.so.1 && -f $dest/include/onnxruntime/onnxruntime_c_api.h ]]; then
  echo "fetch-onnxruntime: present in $dest ($(cat "$dest/VERSION"))"
  exit 0
fi

for tool in apt-get dpkg-deb npm tar; do
  command -v "$tool" >/dev/null || { echo "fetch-onnxruntime: $tool is required" >&2; exit 1; }
done

mirror=${VIGIL_ORT_MIRROR:-}
if [[ -z $mirror ]]; then
  mirror=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    head -n1 | awk '{print $2}' || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/etc/preferences.d"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] $mirror $suite main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
  -o "Dir::Etc::Preferences=$work/etc/preferences" -o "Dir::Etc::PreferencesParts=$work/etc/preferences.d"
  -o APT::Get::List-Cleanup=false -o Debug::NoLocking=true -o APT::Sandbox::User=root)

echo "fetch-onnxruntime: headers: libonnxruntime-dev from $mirror $suite (private apt state)"
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" download libonnxruntime-dev)
deb=$(ls "$work"/libonnxruntime-dev_*.deb)
debver=$(dpkg-deb -f "$deb" Version)
upstream=${debver#*:}
upstream=${upstream%%[-+~]*}
mkdir -p "$work/deb"
dpkg-deb -x "$deb" "$work/deb"
[[ -f $work/deb/usr/include/onnxruntime/onnxruntime_c_api.h ]] ||
  { echo "fetch-onnxruntime: $deb has no usr/include/onnxruntime/onnxruntime_c_api.h" >&2; exit 1; }

npmver=${VIGIL_ORT_NPM_VERSION:-$upstream}
echo "fetch-onnxruntime: runtime: onnxruntime-node@$npmver from npm (install scripts skipped)"
# npm pack fetches the tarball only: no install scripts run (the package's postinstall would
# reach for CUDA providers on another registry); ONNXRUNTIME_NODE_INSTALL=skip in case.
(cd "$work" && ONNXRUNTIME_NODE_INSTALL=skip npm pack --silent "onnxruntime-node@$npmver" >/dev/null)
tgz=$(ls "$work"/onnxruntime-node-*.tgz)
lib=$(tar -tzf "$tgz" | grep -E '^package/bin/napi-v[0-9]+/linux/x64/libonnxruntime\.so\.1$' | head -n1)
[[ -n $lib ]] || { echo "fetch-onnxruntime: $tgz has no linux/x64/libonnxruntime.so.1" >&2; exit 1; }
tar -xzf "$tgz" -C "$work" "$lib"

rm -rf "$dest"
mkdir -p "$dest/include" "$dest/lib"
cp -r "$work/deb/usr/include/onnxruntime" "$dest/include/"
cp "$work/$lib" "$dest/lib/libonnxruntime.so.1"
ln -s libonnxruntime.so.1 "$dest/lib/libonnxruntime.so"
cp "$work/deb/usr/share/doc/libonnxruntime-dev/copyright" "$dest/copyright.debian" 2>/dev/null || true
echo "headers libonnxruntime-dev $debver ($suite); runtime onnxruntime-node $npmver" >"$dest/VERSION"
echo "fetch-onnxruntime: installed in $dest: $(cat "$dest/VERSION")"
