#!/bin/bash
#
# run.sh --- run a command inside a lab guest and return its exit status.
#
#	tests/kernel/run.sh [COMMAND [ARG...]]
#
# The guest boots the lab kernel (build.sh, or KLAB_KERNEL=bzImage) under
# qemu with the host's / read-only over 9p, so the command sees this very
# tree, its fresh binaries, e2fsprogs and python at the same paths.  It
# runs as root in the same directory, with tmpfs on /tmp, /var/tmp and
# /run, a blank virtio disk /dev/vda of $KLAB_DISK_MB (default 1024) and
# the variables named in KLAB_ENV passed through.  Without a command, an
# interactive shell on the console.
#
# KLAB_ACCEL=kvm|tcg forces the accelerator; by default a short test boot
# decides whether KVM works here (its verdict is kept until the host
# reboots).  KLAB_TIMEOUT (seconds, default 600) bounds the whole run; on
# failure the console log is kept and its path printed.  The guest sees
# the run's work directory (KLAB_WORK, or a fresh one under $TMPDIR) at
# $KLAB_SHARED, writable: a place for logs to outlive the guest.
#
set -e
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${KLAB_CACHE:-/var/tmp/e2cryptbak-klab}
timeout=${KLAB_TIMEOUT:-600}
mem=${KLAB_MEM:-2048}
smp=${KLAB_SMP:-2}
disk_mb=${KLAB_DISK_MB:-1024}

say() { echo "klab: $*" >&2; }
die() { say "ERROR: $*"; exit 125; }

qemu=$(command -v qemu-system-x86_64) ||
	die "no qemu-system-x86_64 (apt-get install qemu-system-x86)"

kernel=${KLAB_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$("$here/build.sh") || die "no lab kernel (build.sh failed)"
	"$here/prune.sh" "$kernel"
fi
[ -f "$kernel" ] || die "no kernel image $kernel"

# boot WORKDIR ACCEL TIMEOUT: one guest run of WORKDIR/job; the status
# file tells how it ended.
boot() {
	local w=$1 accel=$2 limit=$3 cpu serial in=/dev/null out=$1/qemu.out
	local tflags=(-k 5)
	if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi
	serial=file:$w/console.log
	if [ -n "$interactive" ]; then
		# the console is this terminal; qemu must stay in the
		# foreground process group to read it
		serial=mon:stdio in=/dev/stdin out=/dev/stdout
		tflags=(--foreground -k 5)
	fi
	truncate -s "${disk_mb}M" "$w/disk.img"
	# the guest's tmpfs on /tmp, /var/tmp and /run would hide a tree
	# there (a CI clone, say): it is shared again, at the same path
	local treeargs=() treeopt=
	case $top in
	/tmp/*|/var/tmp/*|/run/*)
		treeargs=(-fsdev "local,id=tree,path=$top,security_model=none,readonly=on,multidevs=remap"
			  -device virtio-9p-pci,fsdev=tree,mount_tag=hosttree)
		treeopt=" klab.tree=$top" ;;
	esac
	timeout "${tflags[@]}" "$limit" "$qemu" -accel "$accel" -cpu "$cpu" \
		-m "$mem" -smp "$smp" -no-reboot -display none \
		-monitor none -serial "$serial" \
		-kernel "$kernel" \
		-append "console=ttyS0 panic=-1 ro \
root=hostroot rootfstype=9p \
rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose \
init=$here/init$treeopt" \
		-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
		-fsdev local,id=out,path="$w",security_model=none,multidevs=remap \
		-device virtio-9p-pci,fsdev=out,mount_tag=klabout \
		"${treeargs[@]}" \
		-drive file="$w/disk.img",if=virtio,format=raw,cache=unsafe \
		-device virtio-rng-pci \
		<"$in" >"$out" 2>&1
}

# KVM is used only if a guest really boots with it: a nested hypervisor
# can offer /dev/kvm and then hang the guest without a word.
probe_kvm() {
	local verdict=$cache/kvm-probe w rc
	local bootid
	bootid=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		accel=tcg accel_why="no usable /dev/kvm"
		return
	fi
	if [ -f "$verdict" ] && [ "$(sed -n 1p "$verdict")" = "$bootid" ]; then
		accel=$(sed -n 2p "$verdict")
		accel_why="$(sed -n 3p "$verdict") (probed earlier this boot)"
		return
	fi
	w=$(mktemp -d "${TMPDIR:-/tmp}/klab-probe.XXXXXX")
	printf '#!/bin/sh\nexit 0\n' >"$w/job"
	chmod +x "$w/job"
	rc=0
	boot "$w" kvm 30 2>/dev/null || rc=$?
	accel=tcg
	if [ "$(cat "$w/status" 2>/dev/null)" = 0 ]; then
		accel=kvm
		accel_why="a KVM test boot worked"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		accel_why="a KVM test boot hung for 30s"
	else
		accel_why="a KVM test boot failed: qemu exit $rc: $(grep -v '^$' "$w/qemu.out" | head -n 1)"
	fi
	rm -rf "$w"
	mkdir -p "$cache"
	printf '%s\n%s\n%s\n' "$bootid" "$accel" "$accel_why" >"$verdict"
}

interactive=
[ $# -eq 0 ] && interactive=1

accel_why="KLAB_ACCEL=$KLAB_ACCEL"
case "${KLAB_ACCEL:-}" in
kvm|tcg) accel=$KLAB_ACCEL ;;
'') probe_kvm ;;
*) die "KLAB_ACCEL must be kvm or tcg" ;;
esac
say "accelerator: $accel ($accel_why)"

if [ -n "$KLAB_WORK" ]; then
	work=$KLAB_WORK
	mkdir -p "$work"
	rm -f "$work/job" "$work/status" "$work/output" "$work/console.log"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/klab.XXXXXX")
fi
{
	echo '#!/bin/bash'
	echo 'export HOME=/tmp/home TMPDIR=/tmp KLAB_GUEST=1'
	echo 'export KLAB_SHARED=/run/klab'
	echo "export KLAB_ACCEL_USED=$accel"
	for v in LANG LC_ALL TZ $KLAB_ENV; do
		[ -n "${!v+set}" ] && printf 'export %s=%q\n' "$v" "${!v}"
	done
	printf 'cd %q || exit 125\n' "$PWD"
	if [ -n "$interactive" ]; then
		echo 'exec bash -i </dev/console >/dev/console 2>&1'
	else
		printf 'exec'
		printf ' %q' "$@"
		echo
	fi
} >"$work/job"
chmod +x "$work/job"

start=$(date +%s)
# the job's output, as the guest writes it
tailpid=
if [ -z "$interactive" ]; then
	: >"$work/output"
	tail -n +1 -f "$work/output" &
	tailpid=$!
fi
set +e
boot "$work" "$accel" "$timeout"
qrc=$?
set -e
secs=$(( $(date +%s) - start ))
if [ -n "$tailpid" ]; then
	sleep 1
	kill "$tailpid"
	wait "$tailpid" 2>/dev/null || true
fi
if [ -f "$work/status" ]; then
	rc=$(cat "$work/status")
	why="exit status $rc"
elif [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	rc=124
	why="timed out after ${timeout}s"
else
	rc=125
	why="guest ended without a status (qemu exit $qrc)"
fi
say "guest ($accel) finished in ${secs}s: $why"
if [ "$rc" != 0 ] && [ -z "$interactive" ]; then
	say "console log kept in $work/console.log"
	[ -s "$work/qemu.out" ] && say "qemu said: $(head -c 2000 "$work/qemu.out")"
	rm -f "$work/disk.img"
elif [ -n "$KLAB_WORK" ]; then
	rm -f "$work/disk.img"
else
	rm -rf "$work"
fi
exit "$rc"
