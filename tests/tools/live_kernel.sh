# live_kernel.sh --- can this machine run the live-kernel tests?
#
# Source it and call live_kernel_ok [FSCRYPT_HELPER]: it returns 0 if
# we are root, loop devices work, and the running kernel mounts ext4 and
# accepts an fscrypt v2 policy on it (tried for real on a tiny image);
# otherwise it prints the exact reason on one line and returns 1.
# The reason is also left in LIVE_KERNEL_REASON.
#
# This file may be redistributed under the terms of the GNU Public
# License, version 2.

live_kernel_ok() {
	local helper=${1:-$FSCRYPT_HELPER} dir img mnt loop="" t rc=1

	LIVE_KERNEL_REASON=
	if [ "$(id -u)" -ne 0 ]; then
		LIVE_KERNEL_REASON="not root (uid $(id -u)): cannot mount"
	elif [ ! -e /dev/loop-control ]; then
		LIVE_KERNEL_REASON="no /dev/loop-control: no loop devices"
	elif [ -z "$helper" ] || [ ! -x "$helper" ]; then
		LIVE_KERNEL_REASON="fscrypt helper not built: ${helper:-unset}"
	fi
	for t in mke2fs mount umount losetup mountpoint; do
		[ -n "$LIVE_KERNEL_REASON" ] && break
		command -v $t >/dev/null 2>&1 ||
			LIVE_KERNEL_REASON="$t is not installed"
	done
	if [ -n "$LIVE_KERNEL_REASON" ]; then
		echo "$LIVE_KERNEL_REASON"
		return 1
	fi

	dir=$(mktemp -d "${TMPDIR:-/tmp}/live_kernel.XXXXXX") || {
		LIVE_KERNEL_REASON="cannot make a temporary directory"
		echo "$LIVE_KERNEL_REASON"
		return 1
	}
	img=$dir/img
	mnt=$dir/mnt
	mkdir "$mnt"
	head -c 64 /dev/urandom >"$dir/key"
	if ! truncate -s 8M "$img" ||
	   ! mke2fs -q -F -t ext4 -O encrypt "$img" >"$dir/log" 2>&1; then
		LIVE_KERNEL_REASON="mke2fs -O encrypt failed: $(tail -n 1 "$dir/log")"
	elif ! loop=$(losetup -f --show "$img" 2>"$dir/log"); then
		loop=
		LIVE_KERNEL_REASON="losetup failed: $(tail -n 1 "$dir/log")"
	elif ! mount -t ext4 "$loop" "$mnt" 2>"$dir/log"; then
		if ! grep -qw ext4 /proc/filesystems; then
			LIVE_KERNEL_REASON="the kernel has no ext4"
		else
			LIVE_KERNEL_REASON="cannot mount an ext4 loop image: $(tail -n 1 "$dir/log")"
		fi
	elif ! id=$("$helper" add_key "$mnt" "$dir/key" 2>"$dir/log"); then
		LIVE_KERNEL_REASON="no fscrypt in the kernel: FS_IOC_ADD_ENCRYPTION_KEY: $(tail -n 1 "$dir/log")"
	elif ! mkdir "$mnt/d" ||
	     ! "$helper" set_policy "$mnt/d" v2 "$id" >"$dir/log" 2>&1; then
		LIVE_KERNEL_REASON="no fscrypt in the kernel: FS_IOC_SET_ENCRYPTION_POLICY: $(tail -n 1 "$dir/log")"
	elif ! echo x >"$mnt/d/f" || ! "$helper" remove_key "$mnt" "$id" \
			>"$dir/log" 2>&1; then
		LIVE_KERNEL_REASON="fscrypt does not work: cannot write or remove the key: $(tail -n 1 "$dir/log")"
	else
		rc=0
	fi
	if mountpoint -q "$mnt"; then
		umount "$mnt" 2>/dev/null || umount -l "$mnt"
	fi
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -rf "$dir"
	[ $rc -eq 0 ] || echo "$LIVE_KERNEL_REASON"
	return $rc
}
