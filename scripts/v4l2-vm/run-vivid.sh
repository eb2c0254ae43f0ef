#!/usr/bin/env bash
# run-vivid.sh - run CMD inside a throw-away QEMU (TCG) VM that boots Debian's kernel with N
# 'vivid' virtual V4L2 capture devices, /dev/video0 ... /dev/video<N-1>.
#
# usage: VIGIL_VM_WORK=DIR run-vivid.sh [options] JOBDIR [--] CMD [ARGS...]
#   The host / is shared read-only, so CMD may be any host program (a binary from the build tree
#   with its shared libraries, v4l2-ctl, sh -c '...'); it runs as root in a chroot of the host /
#   with the guest's own /proc /sys /dev /tmp /run. JOBDIR is shared read-write at its host path:
#   it is CMD's working directory, it is first on PATH, and files written there come back.
#   Environment for CMD: 'env A=B CMD ...'. CMD's stdin is /dev/null.
#   -n N       vivid instances (default 2)
#   -p PARAMS  extra vivid module parameters, e.g. 'vid_cap_nr=10,11' (unknown ones only warn)
#   -i TYPE    input of every instance: 0 webcam (default), 1 TV, 2 S-Video, 3 HDMI
#   -r         raw: pass only n_devs and -p (default adds node_types, num_inputs, input_types
#              so that each instance is exactly one capture node)
#   -t SEC     job timeout in the guest (default 300): SIGTERM (rc 143), SIGKILL 10 s later (137)
#   -T SEC     host-side timeout of the whole VM (default job timeout + 90; rc 124)
#   -M MB      guest memory (default 1024)      -c N  guest CPUs (default 2)
#   -d N       print the last N dmesg lines after the job
#   -v         show the kernel boot log          -k    keep the scratch directory
# Output: the guest console on stdout (kernel errors, markers, CMD's stdout and stderr); a
#   summary line '@@HOST ...' on stderr. Files: JOBDIR/vm-job.stdout, JOBDIR/vm-job.stderr
#   (CMD's streams, separately) and JOBDIR/vm-console.log (the whole console).
# Exit status: CMD's; 124 the host-side timeout fired; 125 VM or setup failure (no result
#   marker, or VIGIL_VM_WORK unset); 130/143 the runner was interrupted.
# Scratch files go to $VIGIL_VM_WORK/jobs/ and are removed afterwards; mkbase.sh runs first if
# the base is not built yet.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 125; }

ndevs=2 extra="" itype=0 raw=0 tmo=300 host_tmo="" mem=1024 cpus=2 dmesg="" verbose=0 keep=0
while getopts "n:p:i:rt:T:M:c:d:vkh" o; do
  case $o in
    n) ndevs=$OPTARG ;; p) extra=$OPTARG ;; i) itype=$OPTARG ;; r) raw=1 ;; t) tmo=$OPTARG ;;
    T) host_tmo=$OPTARG ;; M) mem=$OPTARG ;; c) cpus=$OPTARG ;; d) dmesg=$OPTARG ;;
    v) verbose=1 ;; k) keep=1 ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -ge 2 ]] || usage
for v in "$ndevs" "$itype" "$tmo" "$mem" "$cpus" ${host_tmo:+"$host_tmo"} ${dmesg:+"$dmesg"}; do
  [[ $v =~ ^[0-9]+$ ]] || { vm_log "error: '$v' is not a number"; usage; }
done
((ndevs >= 1 && ndevs <= 64)) || vm_die 125 "-n must be 1..64 (CONFIG_VIDEO_VIVID_MAX_DEVS)"
: "${host_tmo:=$((tmo + 90))}"
jobdir=$(cd "$1" 2>/dev/null && pwd -P) || vm_die 125 "JOBDIR '$1' is not a directory"
[[ $jobdir != / && -w $jobdir ]] || vm_die 125 "JOBDIR $jobdir must be a writable directory other than /"
shift
[[ ${1:-} == -- ]] && shift
[[ $# -ge 1 ]] || usage

vm_require_work 125
vm_require_tools 125
kv=$(vm_current_kernel) || { "$VM_SCRIPTS/mkbase.sh" >&2 && kv=$(vm_current_kernel); } ||
  vm_die 125 "no VM base: $VM_SCRIPTS/mkbase.sh failed"
kdir=$VM_WORK/kernel/$kv

# vivid's array parameters apply per instance, so every value is repeated N times.
rep() { local s="" i; for ((i = 0; i < ndevs; i++)); do s+="${s:+,}$1"; done; echo "$s"; }
params="n_devs=$ndevs"
((raw)) || params+=" node_types=$(rep 0x1) num_inputs=$(rep 1) input_types=$(rep "$itype")"
params+=${extra:+" $extra"}

mkdir -p "$VM_WORK/jobs"
tmp=$(mktemp -d "$VM_WORK/jobs/run.XXXXXX") || vm_die 125 "cannot create a scratch directory"
qemu_pid=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  # The VM must not outlive the runner: timeout passes TERM on to QEMU and KILLs it 10 s later.
  if [[ -n $qemu_pid ]] && kill -TERM "$qemu_pid" 2>/dev/null; then
    vm_log "stopping the VM"
    wait "$qemu_pid" 2>/dev/null
  fi
  if ((keep)); then vm_log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'vm_log "interrupted"; exit 130' INT
trap 'vm_log "terminated"; exit 143' TERM HUP

# Per-run initramfs part: /init, /job.conf, /job.sh.
stage=$tmp/stage
mkdir -p "$stage"
install -m 755 "$VM_SCRIPTS/guest-init" "$stage/init"
cat > "$stage/job.conf" <<EOF
VIVID_PARAMS=$(vm_quote "$params")
JOB_HOSTDIR=$(vm_quote "$jobdir")
JOB_TIMEOUT=$tmo
VIVID_DMESG=$dmesg
EOF
{
  echo "cd $(vm_quote "$jobdir") || exit 125"
  echo "export PATH=$(vm_quote "$jobdir"):/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  echo "export HOME=/tmp LANG=C.UTF-8 VIVID_NDEVS=$ndevs"
  printf 'exec'; for a in "$@"; do printf ' %s' "$(vm_quote "$a")"; done; echo
} > "$stage/job.sh"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$tmp/job.cpio" ||
  vm_die 125 "cannot pack the job initramfs"
cat "$kdir/base.cpio.gz" "$tmp/job.cpio" > "$tmp/initrd"

append="console=ttyS0 rdinit=/init panic=-1 mitigations=off"
((verbose)) || append+=" quiet loglevel=3"
boot=(-kernel "$kdir/vmlinuz")
# The uncompressed vmlinux boots through PVH with the minimal qboot firmware: ~3 s faster.
if [[ -f $kdir/vmlinux ]]; then
  boot=(-kernel "$kdir/vmlinux")
  [[ -f /usr/share/qemu/qboot.rom ]] && boot+=(-bios /usr/share/qemu/qboot.rom)
fi
rm -f "$jobdir/vm-job.stdout" "$jobdir/vm-job.stderr" "$jobdir/vm-console.log"

mkfifo "$tmp/console"
sed -u 's/\r$//' < "$tmp/console" | tee "$jobdir/vm-console.log" &
console_pid=$!
t0=$(date +%s.%N)
# Not in the foreground: bash runs the INT/TERM traps (which stop the VM) only while waiting.
timeout -k 10 "$host_tmo" qemu-system-x86_64 -nodefaults -no-reboot -display none -monitor none \
  -serial stdio -m "$mem" -smp "$cpus" -accel tcg,thread=multi -cpu max "${boot[@]}" \
  -initrd "$tmp/initrd" -append "$append" \
  -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=hostroot" \
  -virtfs "local,path=${jobdir//,/,,},mount_tag=job,security_model=none,id=job" \
  < /dev/null > "$tmp/console" 2> "$tmp/qemu.err" &
qemu_pid=$!
wait "$qemu_pid"
qrc=$?
qemu_pid=""
wait "$console_pid"

rc=$(sed -n 's/^@@VIVID_RC=\([0-9]*\)@@$/\1/p' "$jobdir/vm-console.log" | tail -n 1)
printf '@@HOST wall=%ss kernel=%s vivid=%s qemu_rc=%s rc=%s\n' "$(vm_since "$t0")" "$kv" \
  "$ndevs" "$qrc" "${rc:-none}" >&2
[[ -s $tmp/qemu.err ]] && sed 's/^/qemu: /' "$tmp/qemu.err" >&2
if [[ -z $rc ]]; then
  if ((qrc == 124 || qrc == 137)); then
    vm_log "error: the VM did not finish within $host_tmo s (host-side timeout, -T)"
    exit 124
  fi
  vm_log "error: the VM ended without a result marker (see the console above)"
  exit 125
fi
exit "$rc"
