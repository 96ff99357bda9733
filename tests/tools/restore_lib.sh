# restore_lib.sh --- helpers of the restore tests, sourced after
# test_lib.sh.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

FS_TREE=$TOOLS/fs_tree.py

# sb_field IMAGE FIELD: a "dumpe2fs -h" field
sb_field() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p"
}

# fresh_like SOURCE TARGET [SAME_UUID]: a new empty ext4 image with the
# source's size, block size, inode size and encryption features (and its
# UUID when asked), as an administrator would prepare a restore target.
fresh_like() {
	local src=$1 dst=$2 feats=encrypt uuid=

	case " $(sb_field "$src" 'Filesystem features') " in
	*" stable_inodes "*) feats=$feats,stable_inodes ;;
	esac
	[ -n "$3" ] && uuid="-U $(sb_field "$src" 'Filesystem UUID')"
	rm -f "$dst"
	truncate -s "$(stat -c %s "$src")" "$dst"
	# shellcheck disable=SC2086
	mke2fs -q -F -t ext4 -b "$(sb_field "$src" 'Block size')" \
		-I "$(sb_field "$src" 'Inode size')" -O "$feats" $uuid \
		"$dst" || fail "mke2fs of $dst"
}

# fsck_clean LABEL IMAGE: e2fsck -fn finds nothing
fsck_clean() {
	e2fsck -fn "$2" >"$1.fsck" 2>&1 ||
		soft_fail "$1: e2fsck -fn: $(grep -v '^Pass\|^e2fsck' "$1.fsck" | head -n 3)"
}

# same_tree LABEL ORIG RESTORED: debugfs sees the same raw names,
# contexts, modes, owners, times, xattrs, targets and stored blocks
same_tree() {
	"$PYTHON" "$FS_TREE" "$2" >"$1.orig.tree" 2>"$1.orig.err" ||
		fail "$1: fs_tree $2: $(cat "$1.orig.err")"
	"$PYTHON" "$FS_TREE" "$3" >"$1.rest.tree" 2>"$1.rest.err" ||
		fail "$1: fs_tree $3: $(cat "$1.rest.err")"
	[ -s "$1.orig.tree" ] || fail "$1: empty tree"
	if ! diff -u "$1.orig.tree" "$1.rest.tree" >"$1.tree.diff"; then
		soft_fail "$1: the restored tree differs: $(head -n 6 "$1.tree.diff")"
		return 1
	fi
	echo "$1: $(wc -l <"$1.orig.tree") entries identical under debugfs"
}

# add_keys KEYS MNT: add every key of the KEYS file (a fixture's) to
# the filesystem mounted on MNT
add_keys() {
	local ver id hex

	while read -r ver id hex; do
		[ -n "$hex" ] || continue
		# test keys only: the fixtures' keys are public
		printf '%b' "$(echo "$hex" | sed 's/../\\x&/g')" >key.bin
		if [ "$ver" = v1 ]; then
			"$FSCRYPT_HELPER" add_key_v1 "$2" key.bin "$id"
		else
			"$FSCRYPT_HELPER" add_key "$2" key.bin
		fi >/dev/null || { rm -f key.bin; return 1; }
	done <"$1"
	rm -f key.bin
}

# with_keys IMAGE KEYS MNT CMD...: mount IMAGE on MNT, add every key of
# the KEYS file, run CMD, unmount (the kernel is the oracle)
with_keys() {
	local img=$1 keys=$2 mnt=$3 rc

	shift 3
	mkdir -p "$mnt"
	mount -o loop "$img" "$mnt" || return 1
	add_keys "$keys" "$mnt" || { umount "$mnt"; return 1; }
	"$@"
	rc=$?
	umount "$mnt" || umount -l "$mnt"
	return $rc
}

# "${WRAP[@]}" CMD &: CMD in the background with SIGINT and SIGPIPE at
# their defaults (a non-interactive shell ignores SIGINT there), killed
# by SIGALRM after 120 s; python execs CMD, so $! is CMD's pid
WRAP=("$PYTHON" -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
    signal.signal(s, signal.SIG_DFL)
signal.alarm(120)
os.execvp(sys.argv[1], sys.argv[1:])')

# stop_feeder PID: a feeder and whatever it is blocked in
stop_feeder() {
	pkill -P "$1" 2>/dev/null
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# refused LABEL IMAGE PATTERN CMD...: CMD must exit 8 with PATTERN (a
# grep -E pattern) in its message, and leave IMAGE byte for byte as it
# was
refused() {
	local label=$1 img=$2 pat=$3 sum

	shift 3
	sum=$(sha256sum <"$img")
	expect_rc 8 "$label" "$@"
	grep -qE -- "$pat" "$label.err" ||
		soft_fail "$label: the message does not say /$pat/"
	[ "$(sha256sum <"$img")" = "$sum" ] ||
		soft_fail "$label: the target was changed"
}

# PAUSE_PRELOAD: stops restore at a chosen read of its archive (see
# tests/tools/pause_preload.c)
PAUSE_PRELOAD=$(dirname "$FSCRYPT_HELPER")/pause_preload.so

# wait_stopped PID: until PID is stopped (state T), up to 60 s; false if
# it died first or never stopped
wait_stopped() {
	local i

	for i in $(seq 600); do
		case $(cut -d' ' -f3 /proc/"$1"/stat 2>/dev/null) in
		T|t)	return 0 ;;
		"")	return 1 ;;
		esac
		sleep 0.1
	done
	return 1
}

# dx_leaves IMAGE DIR: the inode numbers in each leaf of the indexed
# directory DIR, a line a leaf in logical order, read from its blocks
# (names may be raw ciphertext bytes, which debugfs prints as they are)
dx_leaves() {
	"$PYTHON" - "$1" "$(sb_field "$1" 'Block size')" \
		"$("$DEBUGFS" -R "blocks $2" "$1" 2>/dev/null)" <<'PY'
import struct, sys
bs = int(sys.argv[2])
with open(sys.argv[1], "rb") as f:
    for n, blk in enumerate(int(b) for b in sys.argv[3].split()):
        f.seek(blk * bs)
        buf = f.read(bs)
        ino, rec = struct.unpack_from("<IH", buf, 0)
        if rec in (0, 65535) and bs == 65536:
            rec = bs
        if n == 0 or (ino == 0 and rec == bs):
            continue                    # the root, an index node
        out, off = [], 0
        while off + 8 <= bs:
            ino, rec = struct.unpack_from("<IH", buf, off)
            if rec < 8:
                break
            if ino:
                out.append(str(ino))
            off += rec
        print(" ".join(out))
PY
}

# same_leaves LABEL IMAGE DIR...: e2fsck -fD on a copy of IMAGE lays
# out the leaves of each indexed DIR as they are
same_leaves() {
	local label=$1 img=$2 d

	shift 2
	cp --sparse=always "$img" "$label.D.img"
	e2fsck -fyD "$label.D.img" >"$label.D.fsck" 2>&1
	if [ $? -gt 1 ]; then
		soft_fail "$label: e2fsck -fyD failed"
	else
		for d in "$@"; do
			dx_leaves "$img" "$d" >"$label.leaves"
			dx_leaves "$label.D.img" "$d" >"$label.D.leaves"
			if cmp -s "$label.leaves" "$label.D.leaves"; then
				echo "$label: e2fsck -fD rebuilds the same $(wc -l <"$label.leaves") leaves of $d"
			else
				soft_fail "$label: e2fsck -fD lays out the leaves of $d otherwise"
			fi
		done
	fi
	rm -f "$label.D.img"
}

