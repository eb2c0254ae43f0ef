#!/usr/bin/env bash
# mkbase.sh - prepare, once per kernel version, what run-vivid.sh boots. Nothing is installed on
# the host; everything goes under $VIGIL_VM_WORK (required):
#   dl/linux-image-<kver>_<ver>_amd64.deb   Debian's kernel package (what linux-image-amd64 points to)
#   kernel/<kver>/pkg/                      the package extracted with dpkg-deb -x (removed when done)
#   kernel/<kver>/vmlinuz, vmlinux, config  the kernel; vmlinux is the uncompressed ELF for PVH boot
#   kernel/<kver>/base.cpio.gz              static busybox + virtio/9p/vivid modules + load order
#   kernel/<kver>/ready, kernel/current     stamps: done for this kernel / kernel run-vivid.sh uses
# Re-running it skips every step already done for the current kernel version; it then needs no
# network, and if apt cannot resolve the kernel any more it keeps using the last one built.
# VIGIL_VM_KERNEL_PKG=linux-image-X-amd64 pins the package instead of resolving linux-image-amd64.
# Exit codes: 0 ok, 2 VIGIL_VM_WORK, 3 kernel package unavailable, 4 missing host tool, 1 other.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_work 2
vm_require_tools 4

# Modules to load in the guest; their dependencies are added from modules.dep. virtio_blk, ext4
# and crc32c_generic (ext4's soft dependency, absent from modules.dep) are for the root disk of
# the systemd journey VM (scripts/vm-journey); the vivid VM loads them too, unused.
MODULES=(virtio_pci 9pnet_virtio 9p vivid virtio_blk crc32c_generic ext4)

exec 9>"$VM_WORK/.mkbase.lock"
flock 9 # parallel test runs wait here instead of building the same thing twice
t_start=$(date +%s.%N)

# 1. The concrete kernel package behind linux-image-amd64.
kpkg=${VIGIL_VM_KERNEL_PKG:-$(apt-cache depends linux-image-amd64 2>/dev/null |
                             awk '/Depends: linux-image-[0-9]/ { print $2; exit }' || true)}
if [[ -z $kpkg ]]; then
  if kv=$(vm_current_kernel); then
    vm_log "apt cannot resolve linux-image-amd64; using the kernel built before: $kv"
    exit 0
  fi
  vm_die 3 "apt cannot resolve linux-image-amd64 (no Debian apt sources, or 'apt-get update' not run)"
fi
kv=${kpkg#linux-image-}
kdir=$VM_WORK/kernel/$kv
stamp="kernel=$kpkg format=$VM_BASE_FORMAT busybox=$(stat -L -c '%s-%Y' /bin/busybox)"
if [[ -f $kdir/ready && $(cat "$kdir/ready") == "$stamp" ]]; then
  echo "$kv" > "$VM_WORK/kernel/current"
  vm_log "kernel $kv: base already built ($kdir), nothing to do"
  exit 0
fi
mkdir -p "$VM_WORK/dl" "$kdir"
rm -f "$kdir/ready"

# 2. Download (apt verifies it against the signed package index).
newest_deb() { local d; for d in "$VM_WORK/dl/${kpkg}"_*.deb; do [[ -f $d ]] && deb=$d; done; return 0; }
deb=""
newest_deb
if [[ -z $deb ]]; then
  vm_log "downloading $kpkg"
  t=$(date +%s.%N)
  dl_tmp=$(mktemp -d "$VM_WORK/dl/.tmp.XXXXXX")
  # As root, apt downloads as the _apt user, which cannot write here; stay root instead of warning.
  sandbox=(); [[ $(id -u) -eq 0 ]] && sandbox=(-o APT::Sandbox::User=root)
  # Fail within about a minute where the network silently drops packets (apt waits 120 s x 3).
  if ! (cd "$dl_tmp" && apt-get -q "${sandbox[@]}" -o Acquire::Retries=1 \
          -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 download "$kpkg" >&2); then
    rm -rf "$dl_tmp"
    vm_die 3 "apt-get download $kpkg failed (no network or no Debian apt sources?)"
  fi
  mv "$dl_tmp"/*.deb "$VM_WORK/dl/" && rmdir "$dl_tmp"
  newest_deb
  [[ -n $deb ]] || vm_die 3 "apt-get download $kpkg left no .deb"
  vm_log "downloaded $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $(vm_since "$t") s"
fi

# 3. Extract, generate modules.dep (the package ships none), extract vmlinux.
t=$(date +%s.%N)
pkg=$kdir/pkg
if [[ ! -f $pkg/lib/modules/$kv/modules.dep ]]; then
  rm -rf "$pkg" "$pkg.tmp"
  dpkg-deb -x "$deb" "$pkg.tmp"
  [[ -d $pkg.tmp/lib/modules/$kv ]] || vm_die 1 "$(basename "$deb") has no lib/modules/$kv"
  grep -q '^CONFIG_VIDEO_VIVID=m' "$pkg.tmp/boot/config-$kv" ||
    vm_die 1 "kernel $kv does not build vivid as a module (CONFIG_VIDEO_VIVID)"
  depmod -b "$pkg.tmp" -F "$pkg.tmp/boot/System.map-$kv" "$kv"
  mv "$pkg.tmp" "$pkg"
fi
cp "$pkg/boot/vmlinuz-$kv" "$kdir/vmlinuz"
if python3 "$VM_SCRIPTS/tools-extract-vmlinux.py" "$kdir/vmlinuz" "$kdir/vmlinux.tmp" >&2; then
  mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
else
  rm -f "$kdir/vmlinux.tmp" "$kdir/vmlinux"
  vm_log "warning: no vmlinux extracted; run-vivid.sh boots the slower vmlinuz"
fi

# 4. Base initramfs: busybox and the modules in load order (each module's dependencies, which
#    modules.dep lists deepest last, then the module). /init comes with every run (run-vivid.sh).
stage=$kdir/base.tmp
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,proc,sys,dev,tmp,run,host,lib/modules}
cp /bin/busybox "$stage/bin/busybox"
declare -A seen=()
order=()
for m in "${MODULES[@]}"; do
  rel=$(modinfo -b "$pkg" -k "$kv" -F filename "$m") || vm_die 1 "module $m not found in $kv"
  rel=${rel#"$pkg/lib/modules/$kv/"}
  for r in $(awk -v m="$rel:" '$1 == m { for (i = NF; i >= 2; i--) print $i }' \
               "$pkg/lib/modules/$kv/modules.dep") "$rel"; do
    [[ -n ${seen[$r]:-} ]] && continue
    seen[$r]=1
    order+=("$r")
  done
done
for r in "${order[@]}"; do
  base=$(basename "$r"); base=${base%%.ko*}.ko
  case $r in
    *.ko) cp "$pkg/lib/modules/$kv/$r" "$stage/lib/modules/$base" ;;
    *.ko.xz) xz -dc "$pkg/lib/modules/$kv/$r" > "$stage/lib/modules/$base" ;;
    *.ko.zst) zstd -qdc "$pkg/lib/modules/$kv/$r" > "$stage/lib/modules/$base" ;;
    *) vm_die 1 "unexpected module file $r" ;;
  esac
  echo "$base" >> "$stage/lib/modules/load.list"
done
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) > "$kdir/base.cpio.gz.tmp"
# The per-run cpio is appended uncompressed; it must start 4-byte aligned or the kernel says
# "Initramfs unpacking failed: invalid magic at start of compressed archive".
truncate -s %512 "$kdir/base.cpio.gz.tmp"
mv "$kdir/base.cpio.gz.tmp" "$kdir/base.cpio.gz"
cp "$pkg/boot/config-$kv" "$kdir/config"
# The extracted package is ~480 MB; the .deb stays in dl/ for a rebuild without network.
rm -rf "$stage" "$pkg"

echo "$stamp" > "$kdir/ready"
echo "$kv" > "$VM_WORK/kernel/current"
vm_log "kernel $kv: base built in $(vm_since "$t") s (${#order[@]} modules, base.cpio.gz" \
       "$(du -h "$kdir/base.cpio.gz" | cut -f1)); total $(vm_since "$t_start") s"
