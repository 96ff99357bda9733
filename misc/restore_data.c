/*
 * restore_data.c --- restore's regular file data
 *
 * Data goes in through the extent filler of lib/ext2fs (fill_extents.c),
 * a stage at a time; a small file goes inline where the target has
 * inline_data, as the kernel would write it.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <et/com_err.h>
#include "restore.h"

/* A regular file's data goes to disk a stage at a time (fill_extents.c) */
#define FILL_STAGE_SIZE	(1U << 20)

/* Data the filler allocated, as the block_alloc_stats callback sees it */
static void take_data_range(ext2_filsys fs, blk64_t blk, blk64_t len,
			    void *priv EXT2FS_ATTR((unused)))
{
	e2cb_restore_take_range(fs, blk, len, +1);
}

/* Staged blocks out, the mapping closed and on disk */
static errcode_t end_staging(struct fill *f)
{
	if (!f->staging)
		return 0;
	f->staging = 0;
	return ext2fs_extent_fill_finish(f->stager);
}

static errcode_t file_write_at(struct fill *f, uint64_t off, const char *buf,
			       size_t len)
{
	unsigned int got;
	errcode_t retval;

	retval = ext2fs_file_llseek(f->file, off, EXT2_SEEK_SET, NULL);
	while (!retval && len) {
		retval = ext2fs_file_write(f->file, buf, len, &got);
		buf += got;
		len -= got;
		if (!retval && !got)
			retval = EXT2_ET_SHORT_WRITE;
	}
	return retval;
}

static errcode_t write_data_proc(const struct e2cb_entry *e, uint64_t off,
				 const void *buf, size_t len, void *priv)
{
	struct restore *rs = priv;
	struct fill *f = &rs->fill;
	uint64_t end = e2cb_restore_data_end(rs, e);
	errcode_t retval;

	/* a file of many GiB stops too; it is taken back whole */
	if (e2cb_restore_stopped())
		return EXT2_ET_CANCEL_REQUESTED;
	if (off >= end)
		return 0;
	if (len > end - off)
		len = end - off;
	rs->done_bytes += len;
	/* data going back (never in our archives): block by block then */
	if (f->staging && off < f->end) {
		retval = end_staging(f);
		if (!retval)
			retval = ext2fs_file_open(rs->fs, f->ino,
						  EXT2_FILE_WRITE, &f->file);
		if (retval)
			return retval;
	}
	if (off + len > f->end)
		f->end = off + len;
	if (f->staging)
		return ext2fs_extent_fill_write(f->stager, off, buf, len);
	return file_write_at(f, off, buf, len);
}

/*
 * Data lands at its logical offsets, holes stay holes, and i_size comes
 * from the archive: the bytes past it in an encrypted file's last block
 * are ciphertext that must survive, so no truncation touches them.
 */
errcode_t e2cb_restore_fill_regular(struct restore *rs, ext2_ino_t ino,
				    struct ext2_inode_large *inode,
				    const struct e2cb_entry *e)
{
	ext2_filsys fs = rs->fs;
	struct fill *f = &rs->fill;
	errcode_t retval, rc;

	retval = e2cb_restore_write_inode(rs, ino, inode);
	if (retval)
		return retval;
	f->ino = ino;
	f->inode = inode;
	f->end = 0;
	if (!f->stager && !ext2fs_extent_fill_new(fs, FILL_STAGE_SIZE,
						  &f->stager))
		ext2fs_extent_fill_set_alloc_func(f->stager, take_data_range,
						  NULL);
	f->staging = f->stager &&
		     !ext2fs_extent_fill_start(f->stager, ino,
					       (struct ext2_inode *) inode);
	if (!f->staging) {
		retval = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f->file);
		if (retval)
			return retval;
	}
	if (f->small_pending) {
		f->small_pending = 0;
		retval = f->small_end ? write_data_proc(e, 0, f->small,
							f->small_end, rs) : 0;
	} else {
		retval = e2cb_source_data(rs->src, write_data_proc, rs);
	}
	if (retval && f->staging)	/* the inode is taken back */
		ext2fs_extent_fill_drop(f->stager);
	rc = end_staging(f);
	if (!retval)
		retval = rc;
	if (f->file) {
		rc = ext2fs_file_close(f->file);
		f->file = NULL;
		if (!retval)
			retval = rc;
	}
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *) inode,
					EXT2_INODE_SIZE(fs->super));
	if (retval)
		return retval;
	inode->i_size = e->rec.size & 0xffffffff;
	inode->i_size_high = e->rec.size >> 32;
	e2cb_restore_apply_rec(rs, inode, &e->rec);
	if (e2cb_restore_has_verity_tree(e, rs->plan.block_size))
		inode->i_flags |= EXT4_VERITY_FL;
	return e2cb_restore_write_inode(rs, ino, inode);
}

static errcode_t small_data_proc(const struct e2cb_entry *e, uint64_t off,
				 const void *buf, size_t len, void *priv)
{
	struct fill *f = &((struct restore *) priv)->fill;

	if (e2cb_restore_stopped())
		return EXT2_ET_CANCEL_REQUESTED;
	/* the first pass refused data past i_size */
	if (off + len > e->rec.size)
		return EXT2_ET_FILE_TOO_BIG;
	memcpy(f->small + off, buf, len);
	f->small_covered += len;
	if (off + len > f->small_end)
		f->small_end = off + len;
	return 0;
}

/*
 * A small file goes inline where the target has inline_data, as the
 * kernel writes it: its data whole, without holes, in i_block and in
 * "system.data", which must fit in the inode.  The kernel keeps no
 * encrypted inode inline, nor a verity file.  Data read but not
 * inlined waits in rs->fill for e2cb_restore_fill_regular().
 */
errcode_t e2cb_restore_try_inline(struct restore *rs, ext2_ino_t ino,
				  struct ext2_inode_large *inode,
				  const struct e2cb_entry *e,
				  const struct xattr_list *xl, int *inlined)
{
	ext2_filsys fs = rs->fs;
	struct fill *f = &rs->fill;
	errcode_t retval;

	*inlined = 0;
	f->small_pending = 0;
	if (!ext2fs_has_feature_inline_data(fs->super) || e->ctx ||
	    (e->rec.iflags & EXT4_VERITY_FL) || !e->rec.size ||
	    e->rec.size > EXT2_INODE_SIZE(fs->super))
		return 0;
	if (!f->small) {
		retval = ext2fs_get_mem(EXT2_INODE_SIZE(fs->super), &f->small);
		if (retval)
			return retval;
	}
	memset(f->small, 0, e->rec.size);
	f->small_end = f->small_covered = 0;
	retval = e2cb_source_data(rs->src, small_data_proc, rs);
	if (retval)
		return retval;
	f->small_pending = 1;
	if (f->small_covered != e->rec.size)
		return 0;
	retval = ext2fs_inline_data_raw_write(fs, ino, inode, xl->x,
					      xl->count, f->small,
					      e->rec.size, rs->ea_share);
	if (retval == EXT2_ET_INLINE_DATA_NO_SPACE)
		return 0;
	if (!retval) {
		f->small_pending = 0;
		rs->done_bytes += e->rec.size;
		*inlined = 1;
	}
	return retval;
}

void e2cb_restore_fill_free(struct fill *f)
{
	ext2fs_extent_fill_free(f->stager);
	ext2fs_free_mem(&f->small);
}
