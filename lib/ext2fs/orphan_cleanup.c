/*
 * orphan_cleanup.c --- handle orphan inodes as the kernel does on mount
 *
 * ext4 puts an inode on the orphan list (s_last_orphan, chained through
 * i_dtime, or the orphan_file feature's blocks) while it truncates it or
 * while it is open but unlinked.  On mount, ext4_orphan_cleanup() finishes
 * the job: an orphan with links left is truncated to its i_size, one with
 * none is freed.  A reader that wants what the kernel would show must do
 * the same: the blocks past i_size of a file whose truncate was cut short
 * are no longer the file's.  Freed orphans are in no directory, so they
 * are only counted here.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <ext2fs/ext2fs.h>
#include "journal_replay.h"
#include <ext2fs/crypt_err.h>

#define ORPHAN_BLOCK_MAGIC	0x0b10ca04

/* ext4_can_truncate(): what an orphan with links left may be */
static int can_truncate(struct ext2_inode *inode)
{
	if (LINUX_S_ISREG(inode->i_mode) || LINUX_S_ISDIR(inode->i_mode))
		return 1;
	return LINUX_S_ISLNK(inode->i_mode) &&
		!ext2fs_is_fast_symlink(inode) &&
		!(inode->i_flags & EXT4_INLINE_DATA_FL);
}

/* The epoch bits and nanoseconds of an _extra time field */
static __u32 time_extra(const struct timespec *ts)
{
	return ((__u32) ts->tv_nsec << 2) |
		((__u64) (ts->tv_sec - (__s32) ts->tv_sec) >> 32 & 3);
}

/*
 * What ext4_truncate() leaves: the inode off the orphan list, and its
 * modification and change times those of the truncate, that is of the
 * mount, here of the replay.
 */
static errcode_t finish_truncate(ext2_filsys fs, ext2_ino_t ino)
{
	int size = EXT2_INODE_SIZE(fs->super);
	struct ext2_inode_large *inode;
	struct timespec now;
	errcode_t retval;

	retval = ext2fs_get_memzero(size, &inode);
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(fs, ino, EXT2_INODE(inode), size);
	if (retval)
		goto errout;
	clock_gettime(CLOCK_REALTIME, &now);
	inode->i_dtime = 0;
	inode->i_mtime = inode->i_ctime = (__u32) now.tv_sec;
	if (size > EXT2_GOOD_OLD_INODE_SIZE &&
	    inode->i_extra_isize >= offsetof(struct ext2_inode_large,
					     i_mtime_extra) + 4 -
				    EXT2_GOOD_OLD_INODE_SIZE)
		inode->i_mtime_extra = inode->i_ctime_extra =
			time_extra(&now);
	retval = ext2fs_write_inode_full(fs, ino, EXT2_INODE(inode), size);
errout:
	ext2fs_free_mem(&inode);
	return retval;
}

/*
 * ext4_orphan_get()'s checks, then ext4_process_orphan().  Returns
 * EXT2_ET_ORPHAN_DAMAGED where the kernel calls the orphan bad, after
 * which it handles no more orphans of the list.
 */
static errcode_t process_orphan(ext2_filsys fs, ext2_ino_t ino,
				ext2_ino_t *next,
				struct ext2fs_replay_stats *stats)
{
	struct ext2_inode inode;
	errcode_t retval;
	blk64_t start;

	if (ino < EXT2_FIRST_INODE(fs->super) ||
	    ino > fs->super->s_inodes_count ||
	    !ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		return EXT2_ET_ORPHAN_DAMAGED;
	retval = ext2fs_read_inode(fs, ino, &inode);
	if (retval)
		return EXT2_ET_ORPHAN_DAMAGED;
	if ((inode.i_links_count && !can_truncate(&inode)) ||
	    inode.i_dtime > fs->super->s_inodes_count)
		return EXT2_ET_ORPHAN_DAMAGED;
	*next = inode.i_dtime;
	stats->orphans++;
	if (!inode.i_links_count)
		return 0;		/* freed: in no directory */
	start = (EXT2_I_SIZE(&inode) + fs->blocksize - 1) / fs->blocksize;
	retval = ext2fs_punch(fs, ino, NULL, NULL, start, ~0ULL);
	if (retval)
		return retval;
	/* off the list (ext4_orphan_del()), and changed now */
	return finish_truncate(fs, ino);
}

static errcode_t process_list(ext2_filsys fs,
			      struct ext2fs_replay_stats *stats)
{
	ext2_ino_t ino = fs->super->s_last_orphan, next;
	__u32 n = 0;
	errcode_t retval;

	while (ino) {
		if (++n > fs->super->s_inodes_count)
			return EXT2_ET_ORPHAN_DAMAGED;	/* a loop */
		retval = process_orphan(fs, ino, &next, stats);
		if (retval == EXT2_ET_ORPHAN_DAMAGED)
			break;		/* the kernel stops the list here */
		if (retval)
			return retval;
		ino = next;
		fs->super->s_last_orphan = ino;
	}
	fs->super->s_last_orphan = 0;
	return 0;
}

/* One block of the orphan file; a bad one fails the kernel's mount */
static errcode_t process_orphan_block(ext2_filsys fs, ext2_ino_t ofile,
				      blk64_t pblk, __u32 *buf,
				      struct ext2fs_replay_stats *stats)
{
	int i, n = ext2fs_inodes_per_orphan_block(fs);
	struct ext4_orphan_block_tail *tail;
	errcode_t retval;
	ext2_ino_t next;

	retval = io_channel_read_blk64(fs->io, pblk, 1, buf);
	if (retval)
		return retval;
	tail = ext2fs_orphan_block_tail(fs, (char *) buf);
	if (ext2fs_le32_to_cpu(tail->ob_magic) != ORPHAN_BLOCK_MAGIC ||
	    !ext2fs_orphan_file_block_csum_verify(fs, ofile, pblk,
						  (char *) buf))
		return EXT2_ET_ORPHAN_DAMAGED;
	for (i = 0; i < n; i++) {
		if (!buf[i])
			continue;
		retval = process_orphan(fs, ext2fs_le32_to_cpu(buf[i]), &next,
					stats);
		if (retval && retval != EXT2_ET_ORPHAN_DAMAGED)
			return retval;
	}
	return 0;
}

static errcode_t process_file(ext2_filsys fs,
			      struct ext2fs_replay_stats *stats)
{
	ext2_ino_t ofile = fs->super->s_orphan_file_inum;
	struct ext2_inode inode;
	__u32 *buf = NULL;
	blk64_t lblk, pblk, nblk;
	errcode_t retval;

	if (!ext2fs_has_feature_orphan_file(fs->super) || !ofile)
		return 0;
	retval = ext2fs_read_inode(fs, ofile, &inode);
	if (retval)
		return retval;
	nblk = EXT2_I_SIZE(&inode) / fs->blocksize;
	retval = ext2fs_get_mem(fs->blocksize, &buf);
	for (lblk = 0; !retval && lblk < nblk; lblk++) {
		retval = ext2fs_bmap2(fs, ofile, &inode, NULL, 0, lblk, NULL,
				      &pblk);
		if (!retval && !pblk)
			retval = EXT2_ET_ORPHAN_DAMAGED;
		if (!retval)
			retval = process_orphan_block(fs, ofile, pblk, buf,
						      stats);
	}
	ext2fs_free_mem(&buf);
	return retval;
}

errcode_t ext2fs_orphan_cleanup(ext2_filsys fs,
				struct ext2fs_replay_stats *stats)
{
	errcode_t retval;

	if (!fs->super->s_last_orphan &&
	    !ext2fs_has_feature_orphan_present(fs->super))
		return 0;
	/* the kernel leaves the orphans of a filesystem with errors */
	if (fs->super->s_state & EXT2_ERROR_FS)
		return 0;
	retval = ext2fs_read_bitmaps(fs);
	if (retval)
		return retval;
	retval = process_list(fs, stats);
	if (!retval)
		retval = process_file(fs, stats);
	return retval;
}
