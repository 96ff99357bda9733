# damage_lib.sh --- helpers of the tests on damaged sources
# (b_damaged_fs, b_badblocks), sourced after test_lib.sh.  They work on
# the v2-4k fixture, unpacked as fx/ (damage_setup).
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

COMPARE="$PYTHON $SRCDIR/b_damaged_fs/compare.py $TOOLS"
T=60			# seconds: a damaged source must not make us hang

dbg() {
	"$DEBUGFS" "$@" 2>/dev/null
}

# ino PATH: the inode number debugfs finds for PATH in the intact image
ino() {
	dbg -R "stat $1" "$BASE" | sed -n 's/^Inode: \([0-9]*\).*/\1/p'
}

# first_block INO: the first data block of an inode
first_block() {
	dbg -R "blocks <$1>" "$BASE" | awk '{ print $1 }'
}

# imap INO: "BLOCK OFFSET" of the inode in the inode table
imap() {
	dbg -R "imap <$1>" "$BASE" |
		sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p'
}

generation() {
	dbg -R "stat <$1>" "$BASE" | sed -n 's/^Generation: *\([0-9]*\).*/\1/p'
}

# damage_setup NAME...: unpack v2-4k as fx/ (BASE=fx/image), write its
# keys (KEYARGS), make base.m, the manifest of its extracted tree, and
# fill EINO[NAME] with the inode of enc-a/NAME for each NAME.  enc-a and
# plain hold the same tree, made in the same order (mkfixture), so the
# inode is plain/NAME's shifted; it is checked by type, mode and, for a
# regular file, size.  PLAIN and ENC are the two directories' inodes.
damage_setup() {
	local i=0 p mode size e type emode esize t _v _id hex

	[ -f "$FIXTURES/v2-4k/image.xz" ] ||
		skip "fixture v2-4k is not in $FIXTURES"
	unpack_fixture v2-4k fx
	BASE=fx/image
	KEYARGS=()
	while read -r _v _id hex; do
		i=$((i + 1))
		# test keys only: the fixtures' keys are public
		# shellcheck disable=SC2001
		printf '%b' "$(echo "$hex" | sed 's/../\\x&/g')" >"key$i"
		chmod 600 "key$i"
		KEYARGS+=(-k "key$i")
	done <fx/keys

	declare -gA EINO
	PLAIN=$(ino /plain)
	ENC=$(ino /enc-a)
	dbg -R "ls -p /plain" "$BASE" >plain.ls
	for nm in "$@"; do
		awk -F/ -v n="$nm" '$6 == n { print $2, $3, $7 }' plain.ls
	done >plain.want
	while read -r p mode size; do
		echo "stat <$((ENC + p - PLAIN))>"
	done <plain.want >enc.cmds
	dbg -f enc.cmds "$BASE" |
		sed -n 's/^Inode: \([0-9]*\) *Type: \([a-z]*\) *Mode: *\([0-7]*\).*/\1 \2 \3/p
			s/^User:.*  Size: \([0-9]*\).*/\1/p' |
		paste -d' ' - - >enc.got
	while read -r p mode size && read -r e type emode esize <&3; do
		case $type in regular) t=8 ;; directory) t=4 ;;
		symlink) t=10 ;; *) t=0 ;; esac
		if [ $((8#$mode >> 12)) -ne $t ] ||
		   [ $((8#$mode & 07777)) -ne $((8#$emode)) ] ||
		   { [ $t = 8 ] && [ "$size" != "$esize" ]; }; then
			fail "enc-a/$1 is not inode $e: $mode $size, $type $emode $esize"
		fi
		EINO[$1]=$e
		shift
	done <plain.want 3<enc.got
	[ $# -eq 0 ] || fail "no enc-a inode found for: $*"

	try 0 base.x timeout $T "$E2CRYPTBAK" extract "${KEYARGS[@]}" \
		-C base.x "$BASE" || fail "cannot extract the intact image"
	"$PYTHON" "$TOOLS/manifest.py" base.x >base.m
	cmp -s base.m fx/manifest ||
		fail "the intact image does not extract to its manifest"
	rm -rf base.x
	: >compare.spec
}

enc() {
	echo "${EINO[$1]}"
}

# try WANT NAME CMD...: run CMD (stdout in NAME.out, stderr in NAME.err);
# soft-fail unless it exits WANT.  Lighter than expect_rc: the output is
# shown only when the status is wrong.
try() {
	local want=$1 name=$2

	shift 2
	"$@" >"$name.out" 2>"$name.err"
	RC=$?
	[ "$RC" -eq "$want" ] && return 0
	echo "+ $*"
	head -n 10 "$name.out" "$name.err"
	if [ "$RC" -eq 124 ]; then
		soft_fail "$name: timed out (${T}s)"
	else
		soft_fail "$name: exit $RC, want $want"
	fi
	return 1
}

# check_source CASE SOURCE [PREFIX...]: what must hold of a damaged
# SOURCE (an image or a device), reading it with PREFIX before each
# e2cryptbak (an env(1) that sets a preload, say):
#   - backup exits 1 and writes CASE.tar, which verifies as intact but
#     incomplete;
#   - extract -k from CASE.tar and from SOURCE exit 1 (into CASE.xtar,
#     CASE.ximg);
#   - restore of CASE.tar into a fresh image leaves it e2fsck -fn clean,
#     and extract -k of it exits 0 (CASE.xr).
# The trees are compared by compare_all, from what GONE and FREE (the
# arrays) say of this case.
check_source() {
	local c=$1 src=$2 spec=$1 p

	shift 2
	for p in "${GONE[@]}"; do spec="$spec -gone $p"; done
	for p in "${FREE[@]}"; do spec="$spec -free $p"; done
	echo "$spec" >>compare.spec

	try 1 "$c.backup" timeout $T "$@" "$E2CRYPTBAK" backup -o "$c.tar" \
		"$src"
	sed 's/^/  backup: /' "$c.backup.err"
	grep -q "skipped\|may be damaged" "$c.backup.err" ||
		soft_fail "$c: backup does not say what it skipped"
	[ -s "$c.tar" ] || { soft_fail "$c: no archive"; return; }
	try 1 "$c.verify" timeout $T "$E2CRYPTBAK" verify "$c.tar"
	if ! grep -q ": intact:" "$c.verify.out" ||
	   ! grep -q "incomplete" "$c.verify.err"; then
		soft_fail "$c: verify does not say intact but incomplete"
	fi

	try 1 "$c.xtar" timeout $T "$E2CRYPTBAK" extract "${KEYARGS[@]}" \
		-C "$c.xtar" "$c.tar"
	try 1 "$c.ximg" timeout $T "$@" "$E2CRYPTBAK" extract "${KEYARGS[@]}" \
		-C "$c.ximg" "$src"
	sed 's/^/  extract: /' "$c.ximg.err"

	truncate -s "$(stat -c %s "$BASE")" "$c.r.img"
	mke2fs -q -F -t ext4 -b "$(sb_field "$BASE" 'Block size')" \
		-I "$(sb_field "$BASE" 'Inode size')" -O encrypt "$c.r.img" ||
		fail "mke2fs"
	"$E2CRYPTBAK" restore "$c.tar" "$c.r.img" >"$c.restore.out" 2>&1
	[ $? -le 1 ] || soft_fail "$c: restore: $(tail -n 2 "$c.restore.out")"
	e2fsck -fn "$c.r.img" >"$c.fsck" 2>&1 ||
		soft_fail "$c: restored: e2fsck -fn: $(grep -v '^Pass\|^e2fsck' "$c.fsck" | head -n 3)"
	try 0 "$c.xr" timeout $T "$E2CRYPTBAK" extract "${KEYARGS[@]}" \
		-C "$c.xr" "$c.r.img"
	rm -f "$c.r.img"
}

# compare_all: the trees of every case checked: from the archive and the
# source, the intact one less what was damaged; the restored image's,
# its archive's
compare_all() {
	$COMPARE base.m compare.spec >compare.out
	sed 's/^/  /' compare.out
	grep "^FAIL " compare.out | while read -r _f c rest; do
		echo "FAIL: $c: $rest"
	done >compare.fail
	cat compare.fail
	[ -s compare.fail ] && NFAIL=$((NFAIL + $(wc -l <compare.fail)))
	return 0
}
