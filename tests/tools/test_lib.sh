# test_lib.sh --- helpers shared by the e2cryptbak test scripts
#
# Sourced by tests/*/script, which test_script runs in a scratch
# directory with E2CRYPTBAK, FSCRYPT_HELPER, TOOLS, FIXTURES, SRCDIR and
# TMPDIR set.  Failures print one "FAIL: ..." line and exit 1; a skip
# prints its reason as the last line and exits 77.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

set -o pipefail
export LC_ALL=C TZ=UTC

: "${E2CRYPTBAK:?E2CRYPTBAK is not set: run the tests through test_script}"
: "${TOOLS:?TOOLS is not set}"
: "${FIXTURES:=$SRCDIR/fixtures}"
DEBUGFS=${DEBUGFS:-debugfs}
PYTHON=${PYTHON:-python3}
CHECK_ARCHIVE=$TOOLS/check_archive.py
# the committed fixtures, in the order mkfixture knows them
ALL_FIXTURES="v1-4k v2-4k v2-iv64 v2-iv32 v2-du512 v2-du1024 v2-1k v1-1k"

# exit codes of e2cryptbak (misc/e2cryptbak.h)
# shellcheck disable=SC2034
EXIT_OK=0 EXIT_INCOMPLETE=1 EXIT_DAMAGED=4 EXIT_ERROR=8 EXIT_USAGE=16

NFAIL=0

fail() {
	echo "FAIL: $*"
	exit 1
}

# Note a failure but go on, so one run shows every problem; finish
# with check_failures.
soft_fail() {
	echo "FAIL: $*"
	NFAIL=$((NFAIL + 1))
}

check_failures() {
	[ "$NFAIL" -eq 0 ] || fail "$NFAIL checks failed"
	echo "all checks passed"
}

skip() {
	echo "$*"
	exit 77
}

need_tools() {
	local t

	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t is not installed"
	done
}

# mount_image IMAGE [OPTIONS]: bind IMAGE to a loop device, $LOOP, and
# mount it on $MNT; returns mount's status ($LOOP is set either way, for
# the test's cleanup)
mount_image() {
	LOOP=$(losetup -f --show "$1") || fail "losetup $1 failed"
	mount -t ext4 ${2:+-o "$2"} "$LOOP" "$MNT"
}

# unmount_image: unmount $MNT and detach $LOOP, then wait (up to 10 s)
# until the kernel has let go of the image: "losetup -d" of a device
# that udev still probes only marks it for release, and backup refuses
# an image a loop device holds
unmount_image() {
	local i sys=/sys/block/${LOOP#/dev/}/loop

	umount "$MNT" && losetup -d "$LOOP" || fail "umount failed"
	LOOP=
	for i in $(seq 100); do
		[ -e "$sys" ] || return 0
		sleep 0.1
	done
	echo "NOTE: ${sys%/loop} still holds its image"
}

# run NAME CMD...: run CMD with its stdout in NAME.out, its stderr in
# NAME.err and its exit status in $RC; shows both in the log.
run() {
	local name=$1

	shift
	echo "+ $*"
	"$@" >"$name.out" 2>"$name.err"
	RC=$?
	sed 's/^/  out: /' "$name.out" | head -n 20
	sed 's/^/  err: /' "$name.err" | head -n 20
	echo "  exit $RC"
	return 0
}

# expect_rc WANT NAME CMD...: run, and soft-fail unless it exits WANT
expect_rc() {
	local want=$1 name=$2

	shift 2
	run "$name" "$@"
	if [ "$RC" -ne "$want" ]; then
		soft_fail "$name: exit $RC, want $want"
		return 1
	fi
	return 0
}

# Committed fixtures: every FIXTURES/NAME/image.xz, those of
# ALL_FIXTURES first, in that order, then any others in sorted order.
fixture_list() {
	local n d

	for n in $ALL_FIXTURES; do
		[ -f "$FIXTURES/$n/image.xz" ] && echo "$n"
	done
	for d in "$FIXTURES"/*/; do
		n=$(basename "$d")
		case " $ALL_FIXTURES " in
		*" $n "*) continue ;;
		esac
		[ -f "$FIXTURES/$n/image.xz" ] && echo "$n"
	done
	return 0
}

# unpack_fixture NAME DIR: DIR/image and copies of its keys, manifest
# and policies
unpack_fixture() {
	local n=$1 d=$2 f

	mkdir -p "$d"
	xz -dc "$FIXTURES/$n/image.xz" >"$d/image" ||
		fail "$n: cannot unpack image.xz"
	for f in keys manifest policies; do
		[ -f "$FIXTURES/$n/$f" ] && cp "$FIXTURES/$n/$f" "$d/$f"
	done
	return 0
}

# The one fixture the single-image tests use: the first committed one
# of the preferred list, or none.
pick_fixture() {
	local n

	for n in "$@" $ALL_FIXTURES; do
		if [ -f "$FIXTURES/$n/image.xz" ]; then
			echo "$n"
			return 0
		fi
	done
	return 1
}

# count_members ARCHIVE: number of tar members, as Python's tarfile
# sees them (names may hold newlines, so no line counting), the records
# entries of format version 2 aside
count_members() {
	"$PYTHON" -c 'import sys, tarfile
print(sum(1 for m in tarfile.open(sys.argv[1], "r:*").getmembers()
          if "SCHILY.xattr.e2cryptbak.records" not in m.pax_headers))' "$1"
}

# unfold_records ARCHIVE: ARCHIVE's records entries (format version 2)
# put back into its entries' pax headers, for the tests whose forgers
# work on those; tests/v_records damages the records entries themselves
unfold_records() {
	"$PYTHON" "$TOOLS/pax_rec.py" "$1" "$1.unfolded" &&
		mv "$1.unfolded" "$1"
}

# records_entries ARCHIVE: how many records entries (format version 2)
records_entries() {
	"$PYTHON" -c 'import sys, tarfile
print(sum(1 for m in tarfile.open(sys.argv[1], "r:*").getmembers()
          if "SCHILY.xattr.e2cryptbak.records" in m.pax_headers))' "$1"
}

# check_backup LABEL IMAGE ARCHIVE [MANIFEST]: everything one can ask of
# a fresh archive of a whole image: verify, GNU tar and bsdtar listings,
# the independent checker, and the entry count against the manifest.
check_backup() {
	local label=$1 img=$2 ar=$3 manifest=$4 n want

	expect_rc 0 "$label.verify" "$E2CRYPTBAK" verify "$ar"
	expect_rc 0 "$label.list" "$E2CRYPTBAK" list -l "$ar"
	run "$label.tar" tar -tvf "$ar"
	# GNU tar 1.34 warns about libarchive's hdrcharset=BINARY (written
	# for non-ASCII names in unencrypted directories) but reads them
	# right; anything else on stderr is a complaint.
	grep -v "Ignoring unknown extended header keyword 'hdrcharset'" \
		"$label.tar.err" >"$label.tar.err2"
	[ "$RC" -eq 0 ] && [ ! -s "$label.tar.err2" ] ||
		soft_fail "$label: tar -tvf: exit $RC: $(head -n 3 "$label.tar.err2")"
	run "$label.bsdtar" bsdtar -tvf "$ar"
	[ "$RC" -eq 0 ] && [ ! -s "$label.bsdtar.err" ] ||
		soft_fail "$label: bsdtar -tvf: exit $RC: $(head -n 3 "$label.bsdtar.err")"
	expect_rc 0 "$label.check" "$PYTHON" "$CHECK_ARCHIVE" "$img" "$ar" ||
		soft_fail "$label: check_archive: $(tail -n 1 "$label.check.err")"
	if [ -n "$manifest" ]; then
		want=$(($(wc -l <"$manifest") + 2))
		n=$(count_members "$ar" 2>/dev/null)
		[ "$n" = "$want" ] ||
			soft_fail "$label: $n tar members (tarfile), want $want (manifest + header + trailer)"
		# GNU tar shows the records entries as files of their own
		want=$((want + $(records_entries "$ar")))
		n=$(tar -tf "$ar" 2>/dev/null | wc -l)
		[ "$n" = "$want" ] ||
			soft_fail "$label: tar -tf lists $n members, want $want (records entries too)"
	fi
	return 0
}

# subtree_same FULL SUB PREFIX: the members of SUB are exactly those of
# FULL under PREFIX (a path as it appears in FULL), PREFIX itself being
# ".".  Hard-link-ness may differ (a link's first name may lie outside).
subtree_same() {
	"$PYTHON" - "$@" <<'PYEOF'
import sys, tarfile
def names(p):
    return [m.name for m in tarfile.open(p, "r:*", encoding="utf-8",
                                         errors="surrogateescape")
            if not m.name.startswith("e2cryptbak.")]
full, sub, prefix = names(sys.argv[1]), names(sys.argv[2]), sys.argv[3]
want = ["."] + [n[len(prefix) + 1:] for n in full
                if n.startswith(prefix + "/")]
if want != sub:
    extra = [n for n in sub if n not in want]
    missing = [n for n in want if n not in sub]
    print("subtree %s: %d members, want %d; extra %r, missing %r" %
          (prefix, len(sub), len(want), extra[:3], missing[:3]))
    sys.exit(1)
print("subtree %s: %d members, as in the full archive" % (prefix, len(sub)))
PYEOF
}

# enc_subdir ARCHIVE TOP: the path (as the archive spells it) of the
# directory right under TOP with the deepest tree below it
enc_subdir() {
	"$PYTHON" - "$@" <<'PYEOF'
import sys, tarfile
ms = tarfile.open(sys.argv[1], "r:*", encoding="utf-8",
                  errors="surrogateescape").getmembers()
top = sys.argv[2]
best, depth = None, -1
for d in ms:
    p = d.name
    if not d.isdir() or not p.startswith(top + "/") or "/" in p[len(top) + 1:]:
        continue
    dd = max([m.name.count("/") for m in ms if m.name.startswith(p + "/")],
             default=0)
    if dd > depth:
        best, depth = p, dd
if best is None:
    sys.exit(1)
print(best)
PYEOF
}

# LeakSanitizer cannot work under ptrace: in a sanitizer build what runs
# under strace (fault injection) keeps ASan and UBSan but not the leak
# check, which the rest of the suite makes.
if command -v strace >/dev/null 2>&1; then
	strace() {
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			command strace "$@"
	}
fi

# extractable_manifest [user|root]: the manifest on stdin as extract
# can reproduce it: root restores every field; anyone else (the caller,
# unless told) creates no device nodes, sets no owners or trusted.*
# attributes, and gets modes under the umask, as from tar
extractable_manifest() {
	local who=${1:-$([ "$(id -u)" -eq 0 ] && echo root || echo user)}

	if [ "$who" = root ]; then
		cat
		return
	fi
	"$PYTHON" -c '
import re, sys
mask = 0o777 & ~int(sys.argv[1], 8)
def mode(m):
    return b"mode=%04o" % (int(m.group(1), 8) & mask)
for line in sys.stdin.buffer:
    if re.search(rb" type=[bc] ", line):
        continue
    line = re.sub(rb" uid=\d+ gid=\d+", b"", line)
    line = re.sub(rb" xattr:trusted\.\S*", b"", line)
    line = re.sub(rb"mode=([0-7]+)", mode, line)
    sys.stdout.buffer.write(line)' "$(umask)"
}

# key_args KEYS: KEYARGS=(-k FILE ...), a file for each line of a
# fixture's keys file (KEYS.1, KEYS.2, ...) holding the raw key
key_args() {
	local _v _id hex i=0 j

	KEYARGS=()
	while read -r _v _id hex; do
		i=$((i + 1))
		for ((j = 0; j < ${#hex}; j += 2)); do
			printf '%b' "\\x${hex:j:2}"
		done >"$1.$i"
		chmod 600 "$1.$i"
		KEYARGS+=(-k "$1.$i")
	done <"$1"
}
