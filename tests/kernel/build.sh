#!/bin/bash
#
# build.sh --- build (or find cached) the lab's guest kernel and print the
# path of its bzImage on stdout; progress goes to stderr.
#
# By default the kernel is Debian's linux-source-6.12, unpacked under
# $KLAB_CACHE and configured from tinyconfig + kvm_guest.config +
# lab.config.  The bzImage is cached in a directory named after the
# source package version, the sha256 of lab.config, of this script and of
# any patches, so a second run is instant and any change rebuilds.
#
# KLAB_DEBUG=1 merges lab-debug.config after lab.config: KASAN, lockdep
#	and the other checkers (check-kernel-debug); part of the key.
# KERNEL_PATCHES="a.patch b.patch" (or a directory holding a quilt-style
#	"series" file) applies patches to the unpacked source first.
# KERNEL_SRC=/path/to/linux builds that tree instead (out of tree, in
#	the cache; make decides what is stale, so it always runs).
# KLAB_CACHE (default /var/tmp/e2cryptbak-klab), KLAB_JOBS (default nproc).
#
set -e
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragments=("$here/lab.config")
debug=
case ${KLAB_DEBUG:-0} in
0) ;;
1) fragments+=("$here/lab-debug.config") debug=-debug ;;
*) echo "klab-build: KLAB_DEBUG must be 0 or 1" >&2; exit 1 ;;
esac
tarball=${KLAB_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
cache=${KLAB_CACHE:-/var/tmp/e2cryptbak-klab}
jobs=${KLAB_JOBS:-$(nproc)}

say() { echo "klab-build: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

sha() { sha256sum "$@" | cut -c1-16; }

for f in "${fragments[@]}"; do
	[ -f "$f" ] || die "no config fragment $f"
done

# Expand KERNEL_PATCHES into a list of files, in order.
patches=()
if [ -n "$KERNEL_PATCHES" ]; then
	for p in $KERNEL_PATCHES; do
		if [ -d "$p" ]; then
			[ -f "$p/series" ] || die "$p has no series file"
			while read -r f _; do
				case "$f" in ''|'#'*) continue ;; esac
				patches+=("$p/$f")
			done <"$p/series"
		else
			patches+=("$p")
		fi
	done
	for p in "${patches[@]}"; do
		[ -f "$p" ] || die "no patch $p"
	done
fi

if [ -n "$KERNEL_SRC" ]; then
	[ -f "$KERNEL_SRC/Makefile" ] || die "KERNEL_SRC=$KERNEL_SRC is no kernel tree"
	src=$(cd "$KERNEL_SRC" && pwd)
	key=tree-$(echo "$src" | sha256sum | cut -c1-16)$debug
	version="tree $src"
else
	[ -f "$tarball" ] ||
		die "no $tarball (apt-get install linux-source-6.12)"
	version=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null ||
		  stat -c %Y "$tarball")
	pkey=none
	if [ ${#patches[@]} -gt 0 ]; then
		pkey=$(cat "${patches[@]}" | sha256sum | cut -c1-16)
	fi
	# one fragment hashes as before: the stock key keeps its form
	cfg=$(cat "${fragments[@]}" | sha256sum | cut -c1-16)
	key=6.12-$version-cfg$cfg-sh$(sha "$0")-p$pkey$debug
fi
dir=$cache/$key
bz=$dir/bzImage
mkdir -p "$dir"

# One build at a time per key: a second caller waits, then finds the image.
exec 9>"$dir/lock"
flock 9

if [ -z "$KERNEL_SRC" ] && [ -f "$bz" ]; then
	say "cached $bz"
	echo "$bz"
	exit 0
fi

start=$(date +%s)
if [ -n "$KERNEL_SRC" ]; then
	obj=$dir/obj
	mkconf=(make -C "$src" O="$obj")
else
	obj=$dir/src
	if [ ! -f "$obj/.unpacked" ]; then
		say "unpacking $tarball into $obj"
		rm -rf "$obj"
		mkdir -p "$obj"
		tar -xJf "$tarball" -C "$obj" --strip-components=1
		for p in "${patches[@]}"; do
			say "applying $p"
			patch -d "$obj" -p1 --batch --forward <"$p" >&2 ||
				die "$p does not apply"
		done
		touch "$obj/.unpacked"
	fi
	mkconf=(make -C "$obj")
fi

# tinyconfig alone is a 32-bit kernel with no block layer: the merge below
# must really take, and is checked line by line afterwards.
say "configuring: tinyconfig + kvm_guest.config + ${fragments[*]##*/}"
"${mkconf[@]}" ARCH=x86_64 tinyconfig >&2
ksrc=${src:-$obj}
"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"$ksrc/kernel/configs/kvm_guest.config" "${fragments[@]}" >&2
"${mkconf[@]}" ARCH=x86_64 olddefconfig >&2

bad=
while read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$obj/.config" || bad="$bad $line"
		;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		! grep -q "^$sym=" "$obj/.config" || bad="$bad $line"
		;;
	esac
done < <(cat "${fragments[@]}")
if [ -n "$bad" ]; then
	for b in $bad; do say "not in .config: $b"; done
	die "the merged .config lacks what ${fragments[*]##*/} ask (see above)"
fi
say "config verified: $(cat "${fragments[@]}" | grep -c '^CONFIG_') options of ${fragments[*]##*/}"

say "make -j$jobs bzImage ($version)"
"${mkconf[@]}" ARCH=x86_64 -j"$jobs" bzImage >&2 ||
	die "kernel build failed"
cp "$obj/arch/x86/boot/bzImage" "$bz.tmp"
cp "$obj/.config" "$dir/config"
mv "$bz.tmp" "$bz"
say "built $bz in $(( $(date +%s) - start ))s"
echo "$bz"
