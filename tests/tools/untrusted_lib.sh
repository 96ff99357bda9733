# untrusted_lib.sh --- an archive that asks for privileges, for the
# tests of what an untrusted archive may do (x_untrusted, r_untrusted);
# sourced after test_lib.sh and live_kernel.sh.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

# security.capability of cap_net_raw+ep (VFS_CAP_REVISION_2, effective)
CAP_VALUE=0x0100000200200000000000000000000000000000

# make_untrusted DIR: DIR/image, made by the kernel, with DIR/keys (as
# mkfixture writes them) and DIR/a.tar, its backup.  Under an encrypted
# enc/ and a plain plain/, each: a set-user-ID root file (su), a
# set-group-ID file of group 100 (sg), a file with a capability (cap;
# owned by 1234 in plain/, by root in enc/), a character device (null),
# a block device (blk), a world-writable directory (ww, owned by 1234)
# and a sticky one (tmp), a private file of 1234's (own).  The root is
# 1234's, mode 0750, with user.root=top.
make_untrusted() {
	local d=$1 img=$1/image mnt=$1/mnt id x

	mkdir -p "$mnt"
	truncate -s 16M "$img"
	mke2fs -q -F -t ext4 -b 4096 -O encrypt "$img" ||
		fail "mke2fs of $img"
	mount -o loop "$img" "$mnt" || fail "cannot mount $img"
	head -c 64 /dev/urandom >"$d/key"
	id=$("$FSCRYPT_HELPER" add_key "$mnt" "$d/key") ||
		{ umount "$mnt"; fail "cannot add the key"; }
	echo "v2 $id $(od -An -tx1 -v "$d/key" | tr -d ' \n')" >"$d/keys"
	mkdir "$mnt/enc" "$mnt/plain"
	"$FSCRYPT_HELPER" set_policy "$mnt/enc" v2 "$id" >/dev/null ||
		{ umount "$mnt"; fail "cannot set the policy"; }
	for x in enc plain; do
		echo su >"$mnt/$x/su"
		chmod 4755 "$mnt/$x/su"
		echo sg >"$mnt/$x/sg"
		chgrp 100 "$mnt/$x/sg"
		chmod 2755 "$mnt/$x/sg"
		echo cap >"$mnt/$x/cap"
		chmod 0755 "$mnt/$x/cap"
		mknod -m 0666 "$mnt/$x/null" c 1 3
		mknod -m 0660 "$mnt/$x/blk" b 7 200
		mkdir -m 0777 "$mnt/$x/ww"
		chown 1234:1234 "$mnt/$x/ww"
		chmod 0777 "$mnt/$x/ww"
		mkdir "$mnt/$x/tmp"
		chmod 1777 "$mnt/$x/tmp"
		echo own >"$mnt/$x/own"
		chown 1234:1234 "$mnt/$x/own"
		chmod 0640 "$mnt/$x/own"
	done
	chown 1234:1234 "$mnt/plain/cap"
	for x in enc plain; do
		setfattr -n security.capability -v "$CAP_VALUE" "$mnt/$x/cap" ||
			{ umount "$mnt"; fail "cannot set a capability"; }
	done
	chown 1234:1234 "$mnt"
	chmod 0750 "$mnt"
	setfattr -n user.root -v top "$mnt"
	umount "$mnt" || fail "cannot unmount $mnt"
	"$E2CRYPTBAK" backup -o "$d/a.tar" "$img" >"$d/backup.log" 2>&1 ||
		fail "backup: $(cat "$d/backup.log")"
}

# untrusted_stat TREE: a line for each entry of TREE, root first:
# "PATH TYPE MODE UID GID [RDEV] [cap]", MODE in octal with its set-id
# and sticky bits, cap when it has a security.capability
untrusted_stat() {
	"$PYTHON" - "$1" <<'EOF'
import os, stat, sys
top = sys.argv[1]
def show(rel):
    p = os.path.join(top, rel)
    st = os.lstat(p)
    kind = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFCHR: "c",
            stat.S_IFBLK: "b"}.get(stat.S_IFMT(st.st_mode), "?")
    line = "%s %s %04o %d %d" % (rel or ".", kind,
            stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
    if kind in "cb":
        line += " %d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    try:
        os.getxattr(p, "security.capability", follow_symlinks=False)
        line += " cap"
    except OSError:
        pass
    print(line)
show("")
for d in ("enc", "plain"):
    if not os.path.isdir(os.path.join(top, d)):
        continue
    show(d)
    for n in sorted(os.listdir(os.path.join(top, d))):
        show(d + "/" + n)
EOF
}

# untrusted_want [OPTION...]: what untrusted_stat shows of the archive
# extracted or restored as root with these policy options, umask 022
untrusted_want() {
	"$PYTHON" - "$@" <<'EOF'
import sys
opts = set(sys.argv[1:])
if "--untrusted" in opts:
    opts |= {"--no-same-owner", "--no-same-permissions", "--no-devices",
             "--no-setid"}
rows = [(".", "d", 0o750, 1234, 1234, None, False)]
for d in ("enc", "plain"):
    rows.append((d, "d", 0o755, 0, 0, None, False))
    capown = 1234 if d == "plain" else 0
    rows += [(d + "/blk", "b", 0o660, 0, 0, "7:200", False),
             (d + "/cap", "f", 0o755, capown, capown, None, True),
             (d + "/null", "c", 0o666, 0, 0, "1:3", False),
             (d + "/own", "f", 0o640, 1234, 1234, None, False),
             (d + "/sg", "f", 0o2755, 0, 100, None, False),
             (d + "/su", "f", 0o4755, 0, 0, None, False),
             (d + "/tmp", "d", 0o1777, 0, 0, None, False),
             (d + "/ww", "d", 0o777, 1234, 1234, None, False)]
for path, kind, mode, uid, gid, rdev, cap in rows:
    if kind in "bc" and "--no-devices" in opts:
        continue
    changed = False
    if "--no-same-owner" in opts:
        changed = (uid, gid) != (0, 0)
        uid = gid = 0
    if "--no-same-permissions" in opts:
        mode &= 0o777 & ~0o022
    if kind != "d" and ("--no-setid" in opts or changed):
        mode &= ~0o6000
        cap = False
    line = "%s %s %04o %d %d" % (path, kind, mode, uid, gid)
    if rdev:
        line += " " + rdev
    if cap:
        line += " cap"
    print(line)
EOF
}
