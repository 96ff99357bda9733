/*
 * restore_takeback.c --- restore takes back an entry that failed
 *
 * The blocks allocated for the inode being made are recorded as
 * libext2fs allocates them, so that an inode that cannot be completed
 * is freed with all of them, and a failed restore leaves no orphan.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <time.h>
#include <et/com_err.h>
#include "restore.h"

/* A range allocated while recording: the stats callback, the filler */
void e2cb_restore_take_range(ext2_filsys fs, blk64_t blk, blk_t num,
			     int inuse)
{
	struct taken *t = fs->priv_data;
	size_t n = t->count;

	if (!t->on || inuse <= 0)
		return;
	if (n && t->r[n - 1].start + t->r[n - 1].len == blk) {
		t->r[n - 1].len += num;
		return;
	}
	if (e2cb_grow((void **) &t->r, &t->size, n, sizeof(*t->r))) {
		t->lost = 1;
		return;
	}
	t->r[n].start = blk;
	t->r[n].len = num;
	t->count++;
}

static void take_block(ext2_filsys fs, blk64_t blk, int inuse)
{
	e2cb_restore_take_range(fs, blk, 1, inuse);
}

/* Record the blocks allocated from now on, for an inode being made */
void e2cb_restore_take_begin(struct restore *rs)
{
	rs->fs->priv_data = &rs->taken;
	/* ranges: libext2fs 1.47's callback sees an empty one (1.47.0's
	 * ext2fs_block_alloc_stats_range), the filler tells them */
	ext2fs_set_block_alloc_stats_callback(rs->fs, take_block, NULL);
	rs->taken.count = 0;
	rs->taken.lost = 0;
	rs->taken.on = 1;
}

/* What libext2fs allocates from now on is not the inode's */
void e2cb_restore_take_end(struct restore *rs)
{
	rs->taken.on = 0;
}

/* Free what was recorded and is still in use */
static void take_back_blocks(struct restore *rs)
{
	struct taken *t = &rs->taken;
	blk64_t b;
	size_t i;

	t->on = 0;
	for (i = 0; i < t->count; i++)
		for (b = t->r[i].start; b < t->r[i].start + t->r[i].len; b++)
			if (ext2fs_test_block_bitmap2(rs->fs->block_map, b))
				ext2fs_block_alloc_stats2(rs->fs, b, -1);
	t->count = 0;
}

/* Was @blk allocated for the inode being made? */
static int taken_has(const struct taken *t, blk64_t blk)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		if (blk >= t->r[i].start && blk - t->r[i].start < t->r[i].len)
			return 1;
	return 0;
}

/*
 * An EA block the inode shares with earlier ones (ext2fs_ea_share) was
 * not allocated for it: take back the reference it took instead.
 */
static void release_shared_ea(struct restore *rs, ext2_ino_t ino,
			      struct ext2_inode_large *inode)
{
	blk64_t ea = ext2fs_file_acl_block(rs->fs,
					   (struct ext2_inode *) inode);

	if (ea && !taken_has(&rs->taken, ea))
		ext2fs_ea_block_put(rs->fs, ino, ea);
}

/*
 * Take back an inode that could not be completed, so a failed restore
 * leaves no orphan: the blocks allocated for it, and the inode itself.
 * @inode is the inode as e2cb_restore_inode built it; its mapping is
 * looked at only if some blocks could not be recorded.
 */
void e2cb_restore_discard_inode(struct restore *rs, ext2_ino_t ino,
				struct ext2_inode_large *inode, int is_dir)
{
	ext2_filsys fs = rs->fs;
	size_t isize = EXT2_INODE_SIZE(fs->super);

	if (rs->taken.lost &&
	    ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *) inode))
		ext2fs_punch(fs, ino, (struct ext2_inode *) inode, NULL, 0,
			     ~0ULL);
	release_shared_ea(rs, ino, inode);
	take_back_blocks(rs);
	memset(inode, 0, isize);
	inode->i_dtime = time(NULL);
	ext2fs_write_inode_full(fs, ino, (struct ext2_inode *) inode, isize);
	ext2fs_inode_alloc_stats2(fs, ino, -1, is_dir);
}
