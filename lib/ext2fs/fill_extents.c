/*
 * fill_extents.c --- fill a new file with fresh blocks, a stage at a time
 *
 * A writer that has a file's data in order (a restore, an image
 * builder) stages it in a buffer: whole blocks, allocated as one range,
 * mapped as one extent (grown while the ranges stay contiguous, up to
 * EXT_INIT_MAX_LEN) and written with one call.  ext2fs_file_write()
 * would allocate, map (writing the inode or extent block with its
 * checksum) and write each block on its own.  A hole of a whole block
 * or more stays a hole; one inside a block reads as zeros.
 *
 * Every block the filler allocates is either told to the caller's
 * alloc function (the data ranges) or goes through libext2fs'
 * block_alloc_stats callback (extent tree blocks), so that a caller
 * recording both can take a failed file back whole.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

struct ext2fs_extent_fill {
	ext2_filsys fs;
	size_t stage_size;		/* bytes, whole blocks */
	char *buf;			/* stage_size bytes, once started */
	ext2_ino_t ino;
	struct ext2_inode *inode;	/* the caller's, kept current */
	ext2_extent_handle_t handle;	/* NULL: not started */
	blk64_t lblk;			/* file block of buf[0] */
	size_t len;			/* bytes of buf staged, from buf[0] */
	__u64 end;			/* end of the data so far */
	struct ext2fs_extent last;	/* the last extent, once e_len */
	ext2fs_fill_alloc_func alloc_func;
	void *alloc_priv;
};

errcode_t ext2fs_extent_fill_new(ext2_filsys fs, size_t stage_size,
				 struct ext2fs_extent_fill **ret)
{
	struct ext2fs_extent_fill *f;
	errcode_t retval;

	if (!stage_size)
		return EXT2_ET_INVALID_ARGUMENT;
	retval = ext2fs_get_memzero(sizeof(*f), &f);
	if (retval)
		return retval;
	f->fs = fs;
	f->stage_size = stage_size;
	*ret = f;
	return 0;
}

void ext2fs_extent_fill_free(struct ext2fs_extent_fill *f)
{
	if (!f)
		return;
	if (f->handle)
		ext2fs_extent_free(f->handle);
	ext2fs_free_mem(&f->buf);
	ext2fs_free_mem(&f);
}

void ext2fs_extent_fill_set_alloc_func(struct ext2fs_extent_fill *f,
				       ext2fs_fill_alloc_func func,
				       void *priv_data)
{
	f->alloc_func = func;
	f->alloc_priv = priv_data;
}

/* Where ext2fs_file_write() would only map blocks: extents, no clusters */
static int fill_fits(struct ext2fs_extent_fill *f, struct ext2_inode *inode)
{
	ext2_filsys fs = f->fs;

	return (inode->i_flags & EXT4_EXTENTS_FL) &&
	       !(inode->i_flags & EXT4_INLINE_DATA_FL) &&
	       EXT2FS_CLUSTER_RATIO(fs) == 1 &&
	       f->stage_size % fs->blocksize == 0;
}

/*
 * Start on @ino, whose extent tree (in @inode, the caller's copy, kept
 * current until ext2fs_extent_fill_finish writes it) must be empty.  An
 * error leaves nothing started: the caller writes the file some other
 * way then.
 */
errcode_t ext2fs_extent_fill_start(struct ext2fs_extent_fill *f,
				   ext2_ino_t ino, struct ext2_inode *inode)
{
	struct ext2_extent_info info;
	errcode_t retval;

	if (f->handle)
		return EXT2_ET_INVALID_ARGUMENT;
	if (!fill_fits(f, inode))
		return EXT2_ET_OP_NOT_SUPPORTED;
	if (!f->buf) {
		retval = ext2fs_get_mem(f->stage_size, &f->buf);
		if (retval) {
			f->buf = NULL;
			return retval;
		}
	}
	retval = ext2fs_extent_open2(f->fs, ino, inode, &f->handle);
	if (retval) {
		f->handle = NULL;
		return retval;
	}
	retval = ext2fs_extent_get_info(f->handle, &info);
	if (!retval && info.num_entries)
		retval = EXT2_ET_INVALID_ARGUMENT;	/* not a new file */
	if (retval) {
		ext2fs_extent_free(f->handle);
		f->handle = NULL;
		return retval;
	}
	f->ino = ino;
	f->inode = inode;
	f->len = 0;
	f->end = 0;
	memset(&f->last, 0, sizeof(f->last));
	return 0;
}

/* Map @len blocks at @pblk to file block @lblk, after the last extent */
static errcode_t append_extent(struct ext2fs_extent_fill *f, blk64_t lblk,
			       blk64_t pblk, blk64_t len)
{
	struct ext2fs_extent *x = &f->last, ex;
	errcode_t retval;
	int op = 0;

	if (x->e_len && x->e_lblk + x->e_len == lblk &&
	    x->e_pblk + x->e_len == pblk &&
	    x->e_len + len <= EXT_INIT_MAX_LEN) {
		retval = ext2fs_extent_goto(f->handle, x->e_lblk);
		if (retval)
			return retval;
		ex = *x;
		ex.e_len += len;
		retval = ext2fs_extent_replace(f->handle, 0, &ex);
	} else {
		if (x->e_len) {
			retval = ext2fs_extent_goto(f->handle, x->e_lblk);
			if (retval)
				return retval;
			op = EXT2_EXTENT_INSERT_AFTER;
		}
		ex.e_lblk = lblk;
		ex.e_pblk = pblk;
		ex.e_len = len;
		ex.e_flags = 0;
		retval = ext2fs_extent_insert(f->handle, op, &ex);
	}
	if (!retval)
		retval = ext2fs_extent_fix_parents(f->handle);
	if (!retval)
		*x = ex;
	return retval;
}

/* Give @count fresh blocks from file block @lblk on the contents of @buf */
static errcode_t write_new_blocks(struct ext2fs_extent_fill *f, blk64_t lblk,
				  blk64_t count, const char *buf)
{
	ext2_filsys fs = f->fs;
	blk64_t goal, pblk, plen;
	errcode_t retval;

	if (lblk + count > EXT_MAX_EXTENT_LBLK)
		return EXT2_ET_FILE_TOO_BIG;
	while (count) {
		goal = f->last.e_len ? f->last.e_pblk + f->last.e_len :
		       ext2fs_find_inode_goal(fs, f->ino, f->inode, lblk);
		retval = ext2fs_new_range(fs, 0, goal, count, NULL, &pblk,
					  &plen);
		if (retval)
			return retval;
		ext2fs_block_alloc_stats_range(fs, pblk, plen, +1);
		if (f->alloc_func)
			f->alloc_func(fs, pblk, plen, f->alloc_priv);
		/* the caller takes them back should anything fail */
		retval = ext2fs_iblk_add_blocks(fs, f->inode, plen);
		if (!retval)
			retval = append_extent(f, lblk, pblk, plen);
		if (!retval)
			retval = io_channel_write_blk64(fs->io, pblk, plen,
							buf);
		if (retval)
			return retval;
		lblk += plen;
		count -= plen;
		buf += plen * fs->blocksize;
	}
	return 0;
}

/* The staged blocks to disk; a partial last block is padded with zeros */
static errcode_t flush_stage(struct ext2fs_extent_fill *f)
{
	size_t bs = f->fs->blocksize;
	size_t nblk = (f->len + bs - 1) / bs;

	if (!f->len)
		return 0;
	memset(f->buf + f->len, 0, nblk * bs - f->len);
	f->len = 0;
	return write_new_blocks(f, f->lblk, nblk, f->buf);
}

/*
 * @len bytes of data at byte @off of the file.  Data comes in order: an
 * offset before the end of what came so far is refused.
 */
errcode_t ext2fs_extent_fill_write(struct ext2fs_extent_fill *f, __u64 off,
				   const void *data, size_t len)
{
	__u64 bs = f->fs->blocksize, start, stop;
	const char *buf = data;
	size_t pos, n;
	errcode_t retval;

	if (!f->handle || off < f->end)
		return EXT2_ET_INVALID_ARGUMENT;
	if (off + len > f->end)
		f->end = off + len;
	while (len) {
		start = f->lblk * bs;
		stop = start + f->len;
		/* a new stage where a whole block (a hole) lies between */
		if (!f->len || off > ((stop + bs - 1) & ~(bs - 1)) ||
		    off - start >= f->stage_size) {
			retval = flush_stage(f);
			if (retval)
				return retval;
			f->lblk = off / bs;
			start = stop = f->lblk * bs;
		}
		pos = off - start;
		/* a hole inside a block reads as zeros */
		memset(f->buf + f->len, 0, pos - f->len);
		n = f->stage_size - pos;
		if (n > len)
			n = len;
		memcpy(f->buf + pos, buf, n);
		f->len = pos + n;
		off += n;
		buf += n;
		len -= n;
		if (f->len == f->stage_size) {
			retval = flush_stage(f);
			if (retval)
				return retval;
		}
	}
	return 0;
}

/* Forget what is staged and not yet written: the file is given up */
void ext2fs_extent_fill_drop(struct ext2fs_extent_fill *f)
{
	f->len = 0;
}

/*
 * Staged blocks out, the mapping closed and the inode written; nothing
 * to do if not started.  The filler may start on another file then.
 */
errcode_t ext2fs_extent_fill_finish(struct ext2fs_extent_fill *f)
{
	errcode_t retval;

	if (!f->handle)
		return 0;
	retval = flush_stage(f);
	ext2fs_extent_free(f->handle);
	f->handle = NULL;
	if (!retval)
		retval = ext2fs_write_inode(f->fs, f->ino, f->inode);
	return retval;
}
