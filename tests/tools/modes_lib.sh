# modes_lib.sh --- the lab's every-mode images: one small filesystem per
# contents/filenames pair the kernel accepts, written by the kernel
#
# Sourced after test_lib.sh by the lab tests that need them (k_modes,
# k_online_fixtures), with MNT (an empty directory to mount on) and
# FSCRYPT_HELPER set.  each_mode FUNC calls FUNC NAME BLOCKSIZE VERSION
# POLICY_OPTS... for every mode, FEAT holding extra mke2fs features;
# mode_image makes one image and leaves it mounted on MNT.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

mode_unhex() {
	printf '%b' "$(sed 's/../\\x&/g')"
}

# mode_add_key KEYFILE v1|v2: add it to the mount on MNT; prints its
# descriptor or identifier
mode_add_key() {
	local desc

	if [ "$2" = v1 ]; then
		desc=$(sha512sum <"$1" | cut -c1-128 | mode_unhex | sha512sum |
		       cut -c1-16)
		"$FSCRYPT_HELPER" add_key_v1 "$MNT" "$1" "$desc" >/dev/null &&
			echo "$desc"
	else
		"$FSCRYPT_HELPER" add_key "$MNT" "$1"
	fi
}

# A small tree over the edges of the name and data encryption: names of
# 1, 15..17, 31..33 and 255 bytes, UTF-8; sizes around the cipher block
# and the fs block; a hole; symlinks fast and slow; a subdirectory.
mode_tree() {
	local bs=$1 n

	printf 1 >a
	for n in 15 16 17 31 32 33 255; do
		printf "$n" >"$(printf 'n%.0s' $(seq "$n"))"
	done
	printf 3 >'ünïcødé-名前-😀'
	for n in 0 1 15 16 17 $((bs - 1)) "$bs" $((bs + 1)) \
		 $((3 * bs + 100)); do
		head -c "$n" /dev/urandom >"size-$n"
	done
	head -c 100 /dev/urandom | dd of=sparse bs="$bs" seek=5 2>/dev/null
	mkdir -p sub/deeper
	head -c 5000 /dev/urandom >sub/deeper/f
	ln sub/deeper/f hardlink
	ln -s a sym-fast
	ln -s "$(printf 'u%.0s' $(seq 300))" sym-slow
}

# [FEAT=,FEATURES] mode_image NAME BLOCKSIZE VERSION POLICY_OPTS...:
# NAME/img, a 16 MiB ext4 whose directory "enc" holds mode_tree under
# the policy, the key in NAME/key and its descriptor or identifier in
# MODE_ID; left mounted on MNT.  A policy the kernel refuses is a
# (soft) failure: returns 1, unmounted.
mode_image() {
	local name=$1 bs=$2 ver=$3

	shift 3
	mkdir "$name"
	head -c 64 /dev/urandom >"$name/key"
	truncate -s 16M "$name/img"
	mke2fs -q -F -t ext4 -b "$bs" -O "encrypt$FEAT" "$name/img" ||
		fail "$name: mke2fs"
	mount -o loop "$name/img" "$MNT" || fail "$name: mount"
	MODE_ID=$(mode_add_key "$name/key" "$ver") || fail "$name: add_key"
	mkdir "$MNT/enc"
	if ! "$FSCRYPT_HELPER" set_policy "$MNT/enc" "$ver" "$MODE_ID" "$@"
	then
		soft_fail "$name: the lab kernel refuses the policy"
		umount "$MNT"
		return 1
	fi
	(cd "$MNT/enc" && mode_tree "$bs") ||
		soft_fail "$name: writing the tree"
	return 0
}

# each_mode FUNC: FUNC NAME BLOCKSIZE VERSION POLICY_OPTS... for every
# mode, with FEAT set for those that need more mke2fs features
each_mode() {
	local f=$1

	FEAT= "$f" xts-cts-v1 4096 v1 contents=aes256xts filenames=aes256cts
	FEAT= "$f" xts-cts-v2 4096 v2 contents=aes256xts filenames=aes256cts
	FEAT= "$f" xts-hctr2-v2 4096 v2 contents=aes256xts \
		filenames=aes256hctr2
	FEAT= "$f" essiv-v1 4096 v1 contents=aes128cbc filenames=aes128cts
	FEAT= "$f" essiv-v2 4096 v2 contents=aes128cbc filenames=aes128cts
	FEAT= "$f" essiv-v2-1k 1024 v2 contents=aes128cbc filenames=aes128cts
	FEAT= "$f" adiantum-v1 4096 v1 contents=adiantum filenames=adiantum
	FEAT= "$f" adiantum-v1-direct 4096 v1 contents=adiantum \
		filenames=adiantum direct_key
	FEAT= "$f" adiantum-v2 4096 v2 contents=adiantum filenames=adiantum
	FEAT= "$f" adiantum-v2-direct 4096 v2 contents=adiantum \
		filenames=adiantum direct_key
	FEAT= "$f" adiantum-v2-1k 1024 v2 contents=adiantum filenames=adiantum
	FEAT= "$f" sm4-v2 4096 v2 contents=sm4xts filenames=sm4cts
	# data units smaller than the block, and the IV_INO_LBLK_* policies
	# (AES-256-XTS contents only) with HCTR2 names
	FEAT= "$f" adiantum-v2-du512 4096 v2 contents=adiantum \
		filenames=adiantum du=9
	FEAT= "$f" essiv-v2-du1024 4096 v2 contents=aes128cbc \
		filenames=aes128cts du=10
	FEAT= "$f" sm4-v2-du512 4096 v2 contents=sm4xts filenames=sm4cts du=9
	FEAT=,stable_inodes "$f" hctr2-v2-iv64 4096 v2 contents=aes256xts \
		filenames=aes256hctr2 iv_ino_lblk_64
	FEAT=,stable_inodes "$f" hctr2-v2-iv32 4096 v2 contents=aes256xts \
		filenames=aes256hctr2 iv_ino_lblk_32
}
