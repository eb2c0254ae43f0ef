#!/usr/bin/env bash
# mkrootfs.sh - build, once per package set, the Debian 12 root filesystem that the journey VM
# boots with systemd as PID 1, as an ext4 image (the VM writes to a throw-away qcow2 overlay).
#
# usage: VIGIL_VM_WORK=DIR mkrootfs.sh PACKAGE.deb     prints the image path on stdout
#
# The VM has no network, so everything `dpkg -i PACKAGE.deb` needs is installed here: the .deb's
# Depends (read with dpkg-deb, resolved by apt, versions included) plus mosquitto,
# mosquitto-clients and curl for the journey. mmdebstrap (or debootstrap: VIGIL_VM_BOOTSTRAP)
# builds the minimal base; apt-get satisfy (in a chroot) installs the Depends, since debootstrap
# cannot resolve virtual packages such as libspdlog1.10-fmt9. The journey launcher is added at
# boot by journey-init.
#
# Cached as $VIGIL_VM_WORK/journey/rootfs-<key>.img, key = sha256 of the format version below,
# the mirror, the suite and the package list; a run with the same key does nothing. Older images
# are removed.
# VIGIL_VM_MIRROR (default http://deb.debian.org/debian) picks the mirror.
# Must run as root (chroot, file ownership in the image).
# Exit codes: 0 ok, 2 VIGIL_VM_WORK or usage, 3 the mirror cannot be reached, 4 missing tool or
# not root, 1 other (a failed build: its log is printed).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../v4l2-vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../v4l2-vm/lib.sh"
vm_require_work 2
log() { printf 'vm-journey: %s\n' "$*" >&2; }
die() { local rc=$1; shift; printf 'vm-journey: error: %s\n' "$*" >&2; exit "$rc"; }

[[ $# -eq 1 && -f $1 ]] || die 2 "usage: mkrootfs.sh PACKAGE.deb (got '${1:-}')"
deb=$1
[[ $(id -u) -eq 0 ]] || die 4 "debootstrap and chroot need root"
# VIGIL_VM_BOOTSTRAP=debootstrap|mmdebstrap; default: mmdebstrap when installed.
tool=${VIGIL_VM_BOOTSTRAP:-}
if [[ -z $tool ]]; then
  tool=debootstrap
  command -v mmdebstrap > /dev/null && tool=mmdebstrap
fi
[[ $tool == debootstrap || $tool == mmdebstrap ]] ||
  die 2 "VIGIL_VM_BOOTSTRAP must be debootstrap or mmdebstrap, not '$tool'"
for t in "$tool:$tool" mkfs.ext4:e2fsprogs curl:curl dpkg-deb:dpkg chroot:coreutils; do
  command -v "${t%%:*}" > /dev/null 2>&1 || [[ -x /usr/sbin/${t%%:*} ]] ||
    die 4 "${t%%:*} is missing (package ${t#*:}); run scripts/install-deps.sh --tests"
done
export PATH=$PATH:/usr/sbin:/sbin

suite=bookworm
mirror=${VIGIL_VM_MIRROR:-http://deb.debian.org/debian}
depends=$(dpkg-deb -f "$deb" Depends)
[[ -n $depends ]] || die 1 "$deb has no Depends field"
extra=(systemd-sysv mosquitto mosquitto-clients curl)
# Bump when what this script puts into the image changes.
format=1
key=$(printf '%s\n' "format=$format $mirror $suite ${extra[*]}" "$depends" | sha256sum | cut -c1-16)
dir=$VM_WORK/journey
img=$dir/rootfs-$key.img
mkdir -p "$dir"
exec 9> "$dir/.mkrootfs.lock"
flock 9
if [[ -f $img.ready ]]; then
  log "root filesystem $key already built ($img)"
  echo "$img"
  exit 0
fi

t_start=$(date +%s.%N)
curl -sfI --max-time 30 "$mirror/dists/$suite/InRelease" > /dev/null ||
  die 3 "the Debian mirror $mirror cannot be reached (no network?); set VIGIL_VM_MIRROR"
root=$dir/root.tmp
buildlog=$dir/mkrootfs.log
# A previous build may have died with /proc mounted in the chroot.
umount -R "$root/proc" 2> /dev/null || true
rm -rf "$root"
: > "$buildlog"
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  umount -R "$root/proc" 2> /dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
fail() { tail -n 40 "$buildlog" >&2; die 1 "$* (log above; whole log: $buildlog)"; }

# 1. The minimal base with systemd as init and the journey's tools. mmdebstrap makes the same
#    tree as debootstrap in one apt/dpkg run without fsync: 4-5 times faster here.
log "$tool $suite (minbase + ${extra[*]}) from $mirror"
t=$(date +%s.%N)
"$tool" --variant=minbase --include="$(IFS=,; echo "${extra[*]}")" "$suite" "$root" \
  "$mirror" >> "$buildlog" 2>&1 || fail "$tool failed"
log "$tool done in $(vm_since "$t") s"

# 2. The package's Depends, exactly as dpkg will check them (apt-get satisfy takes the field).
t=$(date +%s.%N)
mount -t proc proc "$root/proc"
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d" # start no services in the chroot
chmod 755 "$root/usr/sbin/policy-rc.d"
# No fsync per file: a crash only costs a rebuild (the image is made after this step).
echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/vigil-build-unsafe-io"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2> /dev/null || true
echo "deb $mirror $suite main" > "$root/etc/apt/sources.list"
chroot "$root" apt-get -q update >> "$buildlog" 2>&1 || fail "apt-get update in the chroot failed"
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -y --no-install-recommends satisfy \
  "$depends" >> "$buildlog" 2>&1 || fail "apt-get satisfy '$depends' failed"
chroot "$root" apt-get clean
rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf" \
  "$root/etc/dpkg/dpkg.cfg.d/vigil-build-unsafe-io"
rm -rf "$root"/var/lib/apt/lists/*_Packages "$root"/var/lib/apt/lists/*_InRelease
umount "$root/proc"
log "package dependencies installed in $(vm_since "$t") s"

# 3. An offline system with a fixed identity (an empty machine-id would mean "first boot", and
#    systemd-firstboot would prompt on the console). The journey launcher and the masks of
#    gettys and timers are not baked in: the initramfs installs them at every boot
#    (journey-init), so changing them needs no rebuild.
echo vigil-vm > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 vigil-vm\n::1 localhost\n' > "$root/etc/hosts"
echo '# the root file system is mounted by the initramfs' > "$root/etc/fstab"
tr -d '-' < /proc/sys/kernel/random/uuid > "$root/etc/machine-id"

# 4. The image: the tree plus room for the package, the model, the clip and the journal.
t=$(date +%s.%N)
used=$(du -sm "$root" | cut -f1)
size=$((used + 768))
rm -f "$img.tmp"
mkfs.ext4 -q -F -L vigil-root -d "$root" "$img.tmp" "${size}M" >> "$buildlog" 2>&1 ||
  fail "mkfs.ext4 -d failed"
rm -f "$dir"/rootfs-*.img "$dir"/rootfs-*.img.ready
mv "$img.tmp" "$img"
echo "$depends" > "$img.ready"
log "root filesystem $key: ${used} MB in a ${size} MB image, mkfs $(vm_since "$t") s;" \
    "total $(vm_since "$t_start") s"
echo "$img"
