/*
 * inode_check.c --- is an inode reached through a directory entry what
 *                   the entry needs it to be?
 *
 * On a damaged filesystem a name can lead to a cleared or deleted inode
 * (mode 0, no links), to one of the reserved inodes (the journal, the
 * resize inode) or to an inode whose i_size no block map could reach.
 * Archived as found, such an inode becomes a bogus entry, or gigabytes
 * of a filesystem's internals.  The checks are e2fsck's pass 1 and 2
 * ones that need nothing but the inode.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

/*
 * 0 when @inode, number @ino, can stand for the object an entry names;
 * else why not.
 */
errcode_t ext2fs_check_linked_inode(ext2_filsys fs, ext2_ino_t ino,
				    const struct ext2_inode *inode)
{
	if (!ino || ino > fs->super->s_inodes_count)
		return EXT2_ET_BAD_INODE_NUM;
	if (ino != EXT2_ROOT_INO && ino < EXT2_FIRST_INODE(fs->super))
		return EXT2_ET_CRYPT_RESERVED_INODE;
	/* dir_nlink leaves 1, never 0, in a directory with many links */
	if (!inode->i_links_count)
		return EXT2_ET_CRYPT_INODE_UNUSED;
	switch (inode->i_mode & LINUX_S_IFMT) {
	case LINUX_S_IFREG:
	case LINUX_S_IFDIR:
	case LINUX_S_IFLNK:
	case LINUX_S_IFCHR:
	case LINUX_S_IFBLK:
	case LINUX_S_IFIFO:
	case LINUX_S_IFSOCK:
		break;
	default:
		return EXT2_ET_CRYPT_BAD_FILE_TYPE;
	}
	/* as e2fsck: more than 2^32 blocks is beyond any block map */
	if (LINUX_S_ISREG(inode->i_mode) &&
	    EXT2_I_SIZE(inode) > ((__u64) 1 << 32) * fs->blocksize)
		return EXT2_ET_FILE_TOO_BIG;
	return 0;
}
