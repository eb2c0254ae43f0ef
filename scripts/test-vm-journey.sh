#!/usr/bin/env bash
# The whole user journey of the Debian package on a real systemd, in a QEMU VM (TCG, no KVM
# needed): Debian 12 root filesystem (debootstrap, cached), Debian's kernel (scripts/v4l2-vm),
# then in the VM as root: dpkg -i the package, start without weights (fails clearly),
# fetch-model.sh --from, edit /etc/vigil/cameras.yaml (a clip as the camera), systemctl enable
# --now vigil, curl /metrics, reload with a broken and then a good file, stop (offline retained
# on MQTT), apt-get purge. Every step prints PASS or FAIL with its evidence.
#
#   scripts/test-vm-journey.sh [PACKAGE.deb]     default: build-deb/vigil_*_amd64.deb
#
# Needs root (debootstrap), the Debian mirror the first time (or whenever the package's Depends
# change), and the model and clip: VIGIL_MODEL_FROM (default ../shared/models/yolox-nano or
# models/yolox-nano) and VIGIL_DEMO_CLIP (default ../shared/data/videos/one-by-one-person-detection.mp4).
# Work files: $VIGIL_VM_WORK (default build/v4l2-vm): the kernel (shared with the V4L2 tests),
# journey/rootfs-<key>.img (cached), journey/run/ (this run: console log, overlay disk).
# Exit: 0 every step passed, 1 a step failed (or the VM broke), 77 skipped: no root, no kernel
# package, no Debian mirror, no debootstrap (VIGIL_VM_REQUIRED=1 makes a skip a failure).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
export VIGIL_VM_WORK=${VIGIL_VM_WORK:-$repo/build/v4l2-vm}
# shellcheck source=SCRIPTDIR/v4l2-vm/lib.sh
. "$repo/scripts/v4l2-vm/lib.sh"
vm_require_work 1 # sets VM_WORK

fail() { echo "FAIL vm-journey: $*"; exit 1; }
skip() {
  [[ ${VIGIL_VM_REQUIRED:-0} == 1 ]] && fail "$* (VIGIL_VM_REQUIRED=1, so not skipping)"
  echo "SKIP vm-journey: $*"
  exit 77
}
t_start=$(date +%s.%N)

deb=${1:-}
if [[ -z $deb ]]; then
  for d in build-deb/vigil_*_amd64.deb; do [[ -f $d ]] && deb=$d; done
fi
[[ -n $deb && -f $deb ]] || fail "no package: run scripts/build-deb.sh first (or pass PACKAGE.deb)"
deb=$(realpath "$deb")
model=${VIGIL_MODEL_FROM:-}
if [[ -z $model ]]; then
  for m in ../shared/models/yolox-nano models/yolox-nano; do
    [[ -f $m/yolox_nano.onnx ]] && { model=$m; break; }
  done
fi
[[ -d $model ]] && model=$model/yolox_nano.onnx
[[ -f $model ]] || fail "no model weights (yolox_nano.onnx): set VIGIL_MODEL_FROM or run scripts/fetch-model.sh"
clip=${VIGIL_DEMO_CLIP:-../shared/data/videos/one-by-one-person-detection.mp4}
[[ -f $clip ]] || fail "no clip $clip: set VIGIL_DEMO_CLIP"
[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot)"
command -v debootstrap > /dev/null || [[ -x /usr/sbin/debootstrap ]] ||
  skip "debootstrap is not installed (scripts/install-deps.sh --tests)"
echo "== package $deb"
echo "== Depends: $(dpkg-deb -f "$deb" Depends)"

# 1. Debian's kernel and the base initramfs (busybox, virtio, 9p, virtio_blk, ext4).
t=$(date +%s.%N)
"$repo/scripts/v4l2-vm/mkbase.sh"
case $? in
  0) ;;
  3) skip "Debian's kernel package cannot be had (no apt sources or network)" ;;
  4) skip "host tools missing (scripts/install-deps.sh --tests)" ;;
  *) fail "scripts/v4l2-vm/mkbase.sh failed" ;;
esac
kv=$(vm_current_kernel) || fail "mkbase.sh built no kernel"
echo "== kernel $kv ready in $(vm_since "$t") s"

# 2. The root filesystem with the package's dependencies (cached by package list).
t=$(date +%s.%N)
img=$("$repo/scripts/vm-journey/mkrootfs.sh" "$deb")
case $? in
  0) ;;
  3) skip "the Debian mirror cannot be reached to build the root filesystem" ;;
  4) skip "cannot build the root filesystem here (root, debootstrap, e2fsprogs)" ;;
  *) fail "scripts/vm-journey/mkrootfs.sh failed" ;;
esac
echo "== root filesystem $img ready in $(vm_since "$t") s"

# 3. This run: the job share (package, weights, clip, the journey script), an overlay disk.
run=$VM_WORK/journey/run
rm -rf "$run"
mkdir -p "$run/job" "$run/stage"
cp "$deb" "$run/job/vigil.deb"
cp "$model" "$run/job/yolox_nano.onnx"
cp "$clip" "$run/job/door.mp4"
cp "$repo/scripts/vm-journey/guest-journey.sh" "$run/job/journey.sh"
qemu-img create -q -f qcow2 -F raw -b "$img" "$run/disk.qcow2" || fail "qemu-img create failed"
kdir=$VM_WORK/kernel/$kv
install -m 755 "$repo/scripts/vm-journey/journey-init" "$run/stage/init"
# What the initramfs copies onto the disk: the launcher, enabled; no gettys on the console, no
# timers (apt, e2scrub, fstrim) waking up during the journey.
ov=$run/stage/overlay
install -D -m 755 "$repo/scripts/vm-journey/guest/vigil-journey-launch" "$ov/usr/local/sbin/vigil-journey-launch"
install -D -m 644 "$repo/scripts/vm-journey/guest/vigil-journey.service" "$ov/etc/systemd/system/vigil-journey.service"
mkdir -p "$ov/etc/systemd/system/multi-user.target.wants"
ln -s ../vigil-journey.service "$ov/etc/systemd/system/multi-user.target.wants/vigil-journey.service"
for u in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer \
  e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-firstboot.service \
  proc-sys-fs-binfmt_misc.automount; do
  ln -s /dev/null "$ov/etc/systemd/system/$u"
done
(cd "$run/stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$run/init.cpio"
cat "$kdir/base.cpio.gz" "$run/init.cpio" > "$run/initrd"
boot=(-kernel "$kdir/vmlinuz")
if [[ -f $kdir/vmlinux ]]; then
  boot=(-kernel "$kdir/vmlinux")
  [[ -f /usr/share/qemu/qboot.rom ]] && boot+=(-bios /usr/share/qemu/qboot.rom)
fi

# 4. Boot; the image's vigil-journey.service runs journey.sh and powers off.
tmo=${VIGIL_VM_JOURNEY_TIMEOUT:-900}
echo "== booting the VM (TCG, 2 CPUs, 2 GB; timeout $tmo s); console:"
t=$(date +%s.%N)
qemu_pid=""
# shellcheck disable=SC2317 # called by the traps
stop_vm() { [[ -n $qemu_pid ]] && kill -TERM "$qemu_pid" 2> /dev/null && wait "$qemu_pid"; }
trap 'stop_vm; exit 130' INT
trap 'stop_vm; exit 143' TERM HUP
mkfifo "$run/console"
sed -u 's/\r$//' < "$run/console" | tee "$run/console.log" &
console_pid=$!
# Not in the foreground: bash runs the INT/TERM traps (which stop the VM) only while waiting.
timeout -k 10 "$tmo" qemu-system-x86_64 -nodefaults -no-reboot -display none -monitor none \
  -serial stdio -m 2048 -smp 2 -accel tcg,thread=multi -cpu max "${boot[@]}" \
  -initrd "$run/initrd" \
  -append "console=ttyS0 rdinit=/init panic=-1 mitigations=off quiet loglevel=3 systemd.show_status=error" \
  -drive "file=$run/disk.qcow2,format=qcow2,if=virtio,cache=unsafe" \
  -virtfs "local,path=$run/job,mount_tag=job,security_model=none,id=job" \
  < /dev/null > "$run/console" 2> "$run/qemu.err" &
qemu_pid=$!
wait "$qemu_pid"
qrc=$?
qemu_pid=""
wait "$console_pid"
vm_wall=$(vm_since "$t")
[[ -s $run/qemu.err ]] && sed 's/^/qemu: /' "$run/qemu.err"

rc=$(sed -n 's/^@@JOURNEY_RC=\([0-9]*\)@@$/\1/p' "$run/console.log" | tail -n 1)
npass=$(grep -c '^PASS ' "$run/console.log")
nfail=$(grep -c '^FAIL ' "$run/console.log")
echo "== VM wall time ${vm_wall} s (qemu exit $qrc); whole journey $(vm_since "$t_start") s"
echo "== steps: $npass passed, $nfail failed"
grep -E '^(PASS|FAIL|ABORT)' "$run/console.log" | sed 's/^/   /'
[[ -n $rc ]] || fail "the VM ended without a result marker (timeout or boot failure; see $run/console.log)"
((rc == 0 && nfail == 0 && npass > 0)) || fail "$nfail step(s) failed (journey exit $rc)"
echo "PASS vm-journey: all $npass steps"
