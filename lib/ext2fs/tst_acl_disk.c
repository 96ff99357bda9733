/*
 * tst_acl_disk.c --- test ext2fs_acl_from_vfs() and ext2fs_acl_to_vfs()
 * against ACLs written out by hand, byte for byte, as fs/ext4/acl.c
 * stores them
 *
 * Prints each check; exits 1 on any mismatch.  (k_online_backup holds
 * it against the kernel's own: ACLs archived from the mounted
 * filesystem and from its image must be equal.)
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

#define NONE	0xff, 0xff, 0xff, 0xff	/* ACL_UNDEFINED_ID */

static int failures;

static void check(const char *what, const uint8_t *in, size_t len,
		  errcode_t want_err, const uint8_t *want, size_t want_len)
{
	uint8_t out[256];
	size_t out_len = 0;
	errcode_t retval;

	memset(out, 0xaa, sizeof(out));
	retval = ext2fs_acl_from_vfs(in, len, out, &out_len);
	if (retval != want_err || (!retval && (out_len != want_len ||
					 memcmp(out, want, want_len)))) {
		printf("FAIL %s: error %ld (want %ld), %zu bytes (want %zu)\n",
		       what, (long) retval, (long) want_err, out_len, want_len);
		failures++;
		return;
	}
	printf("ok   %s\n", what);
}

/* ext2fs_acl_to_vfs() of @disk gives back @vfs, or refuses */
static void check_back(const char *what, const uint8_t *disk, size_t len,
		       errcode_t want_err, const uint8_t *vfs, size_t vfs_len)
{
	void *out = NULL;
	size_t out_len = 0;
	errcode_t retval;

	retval = ext2fs_acl_to_vfs(disk, len, &out, &out_len);
	if (retval != want_err || (!retval && (out_len != vfs_len ||
					 memcmp(out, vfs, vfs_len)))) {
		printf("FAIL back, %s: error %ld (want %ld), %zu bytes "
		       "(want %zu)\n", what, (long) retval, (long) want_err,
		       out_len, vfs_len);
		failures++;
	} else {
		printf("ok   back, %s\n", what);
	}
	free(out);
}

int main(void)
{
	/* u::rw-, u:1000:r--, g::r-x, g:50:rwx, m::rwx, o::--- */
	static const uint8_t full[] = {
		0x02, 0, 0, 0,
		0x01, 0, 6, 0, NONE,
		0x02, 0, 4, 0, 0xe8, 0x03, 0, 0,
		0x04, 0, 5, 0, NONE,
		0x08, 0, 7, 0, 0x32, 0, 0, 0,
		0x10, 0, 7, 0, NONE,
		0x20, 0, 0, 0, NONE,
	};
	static const uint8_t full_disk[] = {
		0x01, 0, 0, 0,
		0x01, 0, 6, 0,
		0x02, 0, 4, 0, 0xe8, 0x03, 0, 0,
		0x04, 0, 5, 0,
		0x08, 0, 7, 0, 0x32, 0, 0, 0,
		0x10, 0, 7, 0,
		0x20, 0, 0, 0,
	};
	/* a default ACL of the base entries and a mask, ids 2^32 - 2 */
	static const uint8_t dflt[] = {
		0x02, 0, 0, 0,
		0x01, 0, 7, 0, NONE,
		0x02, 0, 7, 0, 0xfe, 0xff, 0xff, 0xff,
		0x04, 0, 5, 0, NONE,
		0x10, 0, 5, 0, NONE,
		0x20, 0, 5, 0, NONE,
	};
	static const uint8_t dflt_disk[] = {
		0x01, 0, 0, 0,
		0x01, 0, 7, 0,
		0x02, 0, 7, 0, 0xfe, 0xff, 0xff, 0xff,
		0x04, 0, 5, 0,
		0x10, 0, 5, 0,
		0x20, 0, 5, 0,
	};
	static const uint8_t v1[] = { 0x01, 0, 0, 0, 0x01, 0, 6, 0, NONE };
	static const uint8_t tag[] = { 0x02, 0, 0, 0, 0x40, 0, 6, 0, NONE };

	check("an access ACL", full, sizeof(full), 0, full_disk,
	      sizeof(full_disk));
	check("a default ACL", dflt, sizeof(dflt), 0, dflt_disk,
	      sizeof(dflt_disk));
	check("a version other than 2", v1, sizeof(v1), EINVAL, NULL, 0);
	check("an unknown tag", tag, sizeof(tag), EINVAL, NULL, 0);
	check("a torn entry", full, sizeof(full) - 3, EINVAL, NULL, 0);
	check("no header", full, 3, EINVAL, NULL, 0);
	check_back("an access ACL", full_disk, sizeof(full_disk), 0, full,
		   sizeof(full));
	check_back("a default ACL", dflt_disk, sizeof(dflt_disk), 0, dflt,
		   sizeof(dflt));
	check_back("the VFS's version", full, sizeof(full), EINVAL, NULL, 0);
	check_back("a torn entry", full_disk, sizeof(full_disk) - 2, EINVAL,
		   NULL, 0);
	check_back("a torn id", full_disk, 14, EINVAL, NULL, 0);
	check_back("no header", full_disk, 3, EINVAL, NULL, 0);
	return failures ? 1 : 0;
}
