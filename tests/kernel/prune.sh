#!/bin/bash
#
# prune.sh --- mark a cached lab kernel used and drop the old ones
#
#	tests/kernel/prune.sh BZIMAGE
#
# Every change to lab.config, build.sh or the patches makes a new cache
# directory under $KLAB_CACHE, each with its unpacked source and objects
# (about 1.8 GB): kept forever they fill the disk.  After build.sh has
# built or found BZIMAGE, run.sh and check-kernel call this: it stamps
# BZIMAGE's directory as just used, then removes all but the $KLAB_KEEP
# (default 4: the stock, patched and debug kernels and a spare, so that
# a new key does not evict one of the three) most recently used
# directories of the cache.  A directory whose build lock is held (a
# build in progress) is never touched, nor is anything outside the
# cache.  It is separate from build.sh because
# build.sh's own hash is part of the cache key.
#
set -o pipefail

cache=${KLAB_CACHE:-/var/tmp/e2cryptbak-klab}
keep=${KLAB_KEEP:-4}

say() { echo "klab-prune: $*" >&2; }

[ $# -eq 1 ] || { echo "Usage: $0 BZIMAGE" >&2; exit 2; }
case $keep in
''|*[!0-9]*) say "KLAB_KEEP must be a number"; exit 2 ;;
esac
[ -d "$cache" ] || exit 0
cache=$(cd "$cache" && pwd)
used=$(cd "$(dirname "$1")" 2>/dev/null && pwd)
# a kernel from elsewhere (KLAB_KERNEL) leaves the cache alone
[ "$(dirname "$used")" = "$cache" ] || exit 0
touch "$used/used"

# last use: the stamp, else the image, else the lock (a failed build)
last_use() {
	local f

	for f in used bzImage lock; do
		[ -e "$1/$f" ] && { stat -c %Y "$1/$f"; return; }
	done
	echo 0
}

n=0
for d in "$cache"/*/; do
	d=${d%/}
	[ -e "$d/lock" ] || continue	# not one of build.sh's
	echo "$(last_use "$d") $d"
done | sort -rn | while read -r _ d; do
	n=$((n + 1))
	[ $n -le "$keep" ] && continue
	[ "$d" = "$used" ] && continue
	# the build's own lock: a build in progress keeps it
	(
		flock -n 9 || { say "$d: in use, kept"; exit 0; }
		say "removing $d (not among the $keep most recently used)"
		rm -rf "$d"
	) 9<"$d/lock"
done
exit 0
