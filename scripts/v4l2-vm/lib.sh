# shellcheck shell=bash
# Helpers shared by mkbase.sh and run-vivid.sh. Sourced; sets no shell options.
#
# Exit codes used by the scripts (run-vivid.sh maps its own setup failures to 125):
#   2  usage or VIGIL_VM_WORK problem
#   3  the Debian kernel package cannot be resolved or downloaded (no apt lists or no network)
#   4  a host tool is missing (run scripts/install-deps.sh --tests)

VM_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

vm_log() { printf 'v4l2-vm: %s\n' "$*" >&2; }
vm_die() { local rc=$1; shift; printf 'v4l2-vm: error: %s\n' "$*" >&2; exit "$rc"; }

# Sets VM_WORK to the absolute work directory from $VIGIL_VM_WORK, creating it. Everything the
# scripts write goes below it; the script directory may be read-only (../shared in CI).
vm_require_work() {
  [[ -n ${VIGIL_VM_WORK:-} ]] ||
    vm_die "${1:-2}" "VIGIL_VM_WORK is not set; set it to a writable work directory, e.g. VIGIL_VM_WORK=\$PWD/build/v4l2-vm"
  VM_WORK=$(realpath -m "$VIGIL_VM_WORK")
  case $VM_WORK/ in
    "$VM_SCRIPTS"/*) vm_die "${1:-2}" "VIGIL_VM_WORK must not be inside $VM_SCRIPTS" ;;
  esac
  if ! mkdir -p "$VM_WORK" 2>/dev/null || [[ ! -w $VM_WORK ]]; then
    vm_die "${1:-2}" "VIGIL_VM_WORK=$VIGIL_VM_WORK is not a writable directory"
  fi
}

# Host tools that building the base and running the VM need, with the Debian package of each.
vm_require_tools() {
  local missing=() t pkg
  for t in apt-get:apt apt-cache:apt dpkg-deb:dpkg depmod:kmod modinfo:kmod cpio:cpio gzip:gzip \
           python3:python3 file:file flock:util-linux timeout:coreutils qemu-system-x86_64:qemu-system-x86 \
           v4l2-ctl:v4l-utils; do
    pkg=${t#*:}; t=${t%%:*}
    command -v "$t" >/dev/null 2>&1 || [[ -x /usr/sbin/$t || -x /sbin/$t ]] || missing+=("$t ($pkg)")
  done
  [[ -x /bin/busybox ]] && LC_ALL=C file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
    missing+=("static /bin/busybox (busybox-static)")
  ((${#missing[@]} == 0)) ||
    vm_die "${1:-4}" "missing host tools: ${missing[*]}; run scripts/install-deps.sh --tests"
}

# Bump when the content of base.cpio.gz changes, so existing work directories are rebuilt.
VM_BASE_FORMAT=2

# Prints the kernel version (e.g. 6.1.0-57-amd64) of the last base that mkbase.sh completed in
# the current format.
vm_current_kernel() {
  local kv
  kv=$(cat "$VM_WORK/kernel/current" 2>/dev/null) || return 1
  [[ -n $kv ]] && grep -qw "format=$VM_BASE_FORMAT" "$VM_WORK/kernel/$kv/ready" 2>/dev/null || return 1
  printf '%s\n' "$kv"
}

# Quotes one word for sh.
vm_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# Seconds since $1 (a `date +%s.%N` value), one decimal.
vm_since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'; }
