#!/usr/bin/env bash
# Compile-only check of the XRT backend's modern API path (register_xclbin, hw_context, wait2)
# with the ELF flows (xclbin+elf, full-elf) against Debian sid's libxrt-dev headers (2.25),
# fetched with apt-get download into the build tree (a private sources list; nothing is
# installed). Debian 12 has only XRT 2.13, whose legacy path the normal build compiles; the
# 2.16-2.18 branch (headers under experimental/) is compiled by neither. Exit 77 (skip) when
# sid cannot be reached.
set -euo pipefail
src=${VIGIL_SOURCE_DIR:?}
work=${VIGIL_XRT_SID_WORK:?}
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
echo "deb http://deb.debian.org/debian sid main" >"$work/sources.list"
apt=(apt-get -q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Get::List-Cleanup=0)
if [[ ! -f "$work/x/usr/include/xrt/xrt_hw_context.h" ]]; then
  if ! timeout 300 "${apt[@]}" update >"$work/update.log" 2>&1; then
    echo "SKIP: Debian sid unreachable (see $work/update.log)"
    exit 77
  fi
  (cd "$work" && rm -f libxrt-dev_*.deb && timeout 300 "${apt[@]}" download libxrt-dev) \
    >"$work/download.log" 2>&1 || {
    echo "SKIP: apt-get download libxrt-dev from sid failed (see $work/download.log)"
    exit 77
  }
  rm -rf "$work/x"
  dpkg -x "$work"/libxrt-dev_*.deb "$work/x"
fi
echo "headers: $(ls "$work"/libxrt-dev_*.deb 2>/dev/null || echo cached)"
# VIGIL_XRT_REQUIRE_MODERN and VIGIL_XRT_REQUIRE_FULL_ELF turn a silent fall-back to the legacy
# path, or to a build without the ELF flows, into an #error.
g++ -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I"$src" \
  -isystem "$work/x/usr/include" -DVIGIL_WITH_XRT -DVIGIL_XRT_REQUIRE_MODERN \
  -DVIGIL_XRT_REQUIRE_FULL_ELF \
  "$src/detector/npu/xrt_runtime.cpp"
echo "modern XRT path with the ELF flows compiles against $(grep -ho 'XRT_DRIVER_VERSION "[^"]*"' -r "$work/x/usr/include/xrt" | head -1)"
