#!/usr/bin/env bash
# Fetches ONNX Runtime for the cpu-ort backend on a Debian release that does not package it
# (Debian 12), without installing anything system-wide:
#   - the C/C++ headers from Debian's own libonnxruntime-dev (trixie: 1.21.0, C API version 21),
#     downloaded with `apt-get download` through a private sources list and apt state, unpacked
#     with dpkg -x;
#   - the runtime library libonnxruntime.so.1 for linux-x64 from the npm package
#     onnxruntime-node (Debian's libonnxruntime1.21 needs a newer glibc than Debian 12's), its
#     tarball downloaded with curl and checked against the sha512 the registry gives for it, as
#     `npm pack` does, without npm (Debian 12's npm is 387 packages: bench/install.md).
# The runtime is 1.30.0, not the headers' 1.21.0: on this project's 2-vCPU AVX-512 machine it
# runs YOLOX-nano with a third less CPU per frame (1 intra-op thread, all graph optimisations)
# and bit-identical outputs; 1.21.0 and 1.23.2 (sid's version) are as slow as each other
# (bench/README.md, "Backends"). Newer runtime, older headers is what the versioned C API is
# for: the code asks OrtGetApiBase() for the headers' API version (21), which every later
# runtime serves, and fails with a clear message on a runtime older than the headers.
# Result: DEST/include/onnxruntime/*.h, DEST/lib/libonnxruntime.so{,.1}, DEST/VERSION.
# CMake finds DEST through -DVIGIL_ORT_ROOT=DEST (default: .cache/onnxruntime in the source tree).
# A DEST fetched for another suite or runtime version (an older checkout's cache) is replaced.
#
#   scripts/fetch-onnxruntime.sh [DEST]
# Environment: VIGIL_ORT_SUITE (default trixie), VIGIL_ORT_NPM_VERSION (default 1.30.0; not
# older than the headers), VIGIL_ORT_NPM_REGISTRY (default https://registry.npmjs.org),
# VIGIL_ORT_MIRROR (default: the first Debian mirror in /etc/apt, else
# http://deb.debian.org/debian); VIGIL_ORT_FROM=DIR|ARCHIVE: copy a local ONNX Runtime instead of
# downloading anything (another machine's .cache/onnxruntime, or a release such as
# onnxruntime-linux-x64-1.20.1.tgz: scripts/lib/ort-from.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/.cache/onnxruntime}
if [[ -n ${VIGIL_ORT_FROM:-} ]]; then
  source "$here/scripts/lib/ort-from.sh"
  ort_from "$VIGIL_ORT_FROM" "$dest"
  exit
fi
suite=${VIGIL_ORT_SUITE:-trixie}
npmver=${VIGIL_ORT_NPM_VERSION:-1.30.0}

# VERSION ends with what was asked for: the same suite and runtime mean nothing to fetch.
if [[ -f $dest/lib/libonnxruntime.so.1 && -f $dest/include/onnxruntime/onnxruntime_c_api.h ]] &&
  grep -qxE "headers libonnxruntime-dev [^ ]+ \($suite\); runtime onnxruntime-node ${npmver//./\\.}" "$dest/VERSION" 2>/dev/null; then
  echo "fetch-onnxruntime: present in $dest ($(cat "$dest/VERSION"))"
  exit 0
fi
[[ -f $dest/VERSION ]] && echo "fetch-onnxruntime: replacing $dest ($(cat "$dest/VERSION"))"

for tool in apt-get dpkg-deb curl tar base64 od sha512sum; do
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

# The headers' API version must be served by the runtime: 1.N serves API versions up to N.
api=$(sed -nE 's/^#define ORT_API_VERSION ([0-9]+).*/\1/p' "$work/deb/usr/include/onnxruntime/onnxruntime_c_api.h")
npm_minor=$(cut -d. -f2 <<<"$npmver")
if [[ ${npmver%%.*} == 1 && $npm_minor -lt $api ]]; then
  echo "fetch-onnxruntime: onnxruntime-node $npmver is older than the headers ($upstream, C API $api)" >&2
  exit 1
fi
registry=${VIGIL_ORT_NPM_REGISTRY:-https://registry.npmjs.org}
echo "fetch-onnxruntime: runtime: onnxruntime-node@$npmver from $registry (tarball only, nothing run)"
# The version's document names the tarball and its sha512 (dist.tarball, dist.integrity).
meta=$(curl -fsSL --retry 3 --connect-timeout 20 "$registry/onnxruntime-node/$npmver") ||
  { echo "fetch-onnxruntime: cannot read $registry/onnxruntime-node/$npmver; set VIGIL_ORT_FROM=DIR|ARCHIVE" >&2; exit 1; }
field() { grep -oE "\"$1\" *: *\"[^\"]+\"" <<<"$meta" | head -n1 | sed -E 's/.*: *"(.*)"/\1/'; }
url=$(field tarball)
integrity=$(field integrity)
[[ -n $url && $integrity == sha512-* ]] ||
  { echo "fetch-onnxruntime: no tarball and sha512 in $registry/onnxruntime-node/$npmver" >&2; exit 1; }
tgz=$work/onnxruntime-node-$npmver.tgz
curl -fsSL --retry 3 --connect-timeout 20 -o "$tgz" "$url"
want=$(base64 -d <<<"${integrity#sha512-}" | od -An -v -tx1 | tr -d ' \n')
got=$(sha512sum "$tgz" | cut -d' ' -f1)
[[ $got == "$want" ]] || { echo "fetch-onnxruntime: $url: sha512 $got, the registry says $want" >&2; exit 1; }
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
