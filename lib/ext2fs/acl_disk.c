/*
 * acl_disk.c --- a POSIX ACL as the VFS gives it (getxattr of
 * system.posix_acl_access or _default) in ext4's on-disk form, and back
 *
 * ext4 keeps an ACL in xattr index 2 (access) or 3 (default) as
 * fs/ext4/acl.c's ext4_acl_to_disk() writes it: a version 1 header,
 * then each entry in the ACL's order, with an id only where it names
 * a user or group (ACL_USER, ACL_GROUP); USER_OBJ, GROUP_OBJ, MASK and
 * OTHER are short entries, tag and permissions alone.  A backup made
 * of a mounted filesystem holds what one of its image would.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

#define VFS_ACL_VERSION		0x0002	/* POSIX_ACL_XATTR_VERSION */
#define EXT4_ACL_VERSION	0x0001

#define ACL_USER_OBJ		0x01
#define ACL_USER		0x02
#define ACL_GROUP_OBJ		0x04
#define ACL_GROUP		0x08
#define ACL_MASK		0x10
#define ACL_OTHER		0x20

static void put_le16(uint8_t *p, unsigned int v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, v);
	put_le16(p + 2, v >> 16);
}

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24;
}

/*
 * Convert the VFS xattr @value of @len bytes into @out, which has room
 * for @len bytes (the disk form is never longer); *@out_len is its
 * length.  EINVAL for what the kernel would not take, as ext4 does.
 */
errcode_t ext2fs_acl_from_vfs(const void *value, size_t len, void *out,
			      size_t *out_len)
{
	const uint8_t *in = value, *e;
	uint8_t *p = out;
	unsigned int tag;
	size_t i, count;

	if (len < 4 || (len - 4) % 8 || get_le32(in) != VFS_ACL_VERSION)
		return EINVAL;
	count = (len - 4) / 8;
	put_le32(p, EXT4_ACL_VERSION);
	p += 4;
	for (i = 0; i < count; i++) {
		e = in + 4 + 8 * i;
		tag = e[0] | e[1] << 8;
		memmove(p, e, 4);		/* e_tag, e_perm */
		switch (tag) {
		case ACL_USER:
		case ACL_GROUP:
			memmove(p + 4, e + 4, 4);	/* e_id */
			p += 8;
			break;
		case ACL_USER_OBJ:
		case ACL_GROUP_OBJ:
		case ACL_MASK:
		case ACL_OTHER:
			p += 4;
			break;
		default:
			return EINVAL;
		}
	}
	*out_len = p - (uint8_t *) out;
	return 0;
}

/*
 * The other way, as fs/ext4/acl.c's ext4_acl_from_disk() reads it:
 * ext4's form of @len bytes into a new buffer, *@out (to free), of
 * *@out_len bytes, for setxattr(2).  EINVAL for a malformed one.
 */
errcode_t ext2fs_acl_to_vfs(const void *value, size_t len, void **out,
			    size_t *out_len)
{
	const uint8_t *in = value;
	uint8_t *buf, *p;
	unsigned int tag;

	if (len < 4 || get_le32(in) != EXT4_ACL_VERSION)
		return EINVAL;
	/* each entry at most doubles: 4 bytes on disk, 8 for the VFS */
	buf = malloc(4 + (len - 4) * 2);
	if (!buf)
		return ENOMEM;
	put_le32(buf, VFS_ACL_VERSION);
	p = buf + 4;
	for (in += 4, len -= 4; len; p += 8) {
		if (len < 4)
			goto errout;
		tag = in[0] | in[1] << 8;
		memmove(p, in, 4);		/* e_tag, e_perm */
		if (tag == ACL_USER || tag == ACL_GROUP) {
			if (len < 8)
				goto errout;
			memmove(p + 4, in + 4, 4);	/* e_id */
			in += 8;
			len -= 8;
		} else {
			put_le32(p + 4, 0xffffffff);	/* ACL_UNDEFINED_ID */
			in += 4;
			len -= 4;
		}
	}
	*out = buf;
	*out_len = p - buf;
	return 0;
errout:
	free(buf);
	return EINVAL;
}
