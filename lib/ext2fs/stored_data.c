/*
 * stored_data.c --- walk the blocks that hold an inode's data as stored
 *
 * For an encrypted file the stored blocks are the ciphertext, and the
 * last one must be kept whole: i_size is the only record of where the
 * plaintext ends.  Holes and unwritten extents hold no ciphertext (the
 * kernel returns zeros for them without decrypting), so they are
 * reported as holes, never as blocks of zeros.  Blocks past i_size are
 * reported too: fs-verity keeps its Merkle tree there.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

/* Coalesces logically and physically adjacent blocks into runs. */
struct run_state {
	ext2fs_stored_run_func func;
	void *priv_data;
	blk64_t lblk, pblk, count;	/* the run being built */
	blk64_t next_lblk;		/* the least lblk still allowed */
	errcode_t retval;
	int aborted;
};

static int flush_run(ext2_filsys fs, struct run_state *rs)
{
	int ret = 0;

	if (rs->count)
		ret = rs->func(fs, rs->lblk, rs->pblk, rs->count,
			       rs->priv_data);
	rs->count = 0;
	if (ret & BLOCK_ABORT)
		rs->aborted = 1;
	return rs->aborted;
}

static errcode_t add_run(ext2_filsys fs, struct run_state *rs,
			 blk64_t lblk, blk64_t pblk, blk64_t count)
{
	if (count == 0)
		return 0;
	if (lblk < rs->next_lblk)
		return EXT2_ET_CRYPT_EXTENTS_UNSORTED;
	if (pblk < fs->super->s_first_data_block ||
	    pblk >= ext2fs_blocks_count(fs->super) ||
	    count > ext2fs_blocks_count(fs->super) - pblk)
		return EXT2_ET_CRYPT_BLOCK_OUT_OF_RANGE;
	rs->next_lblk = lblk + count;
	if (rs->count && rs->lblk + rs->count == lblk &&
	    rs->pblk + rs->count == pblk) {
		rs->count += count;
		return 0;
	}
	flush_run(fs, rs);
	rs->lblk = lblk;
	rs->pblk = pblk;
	rs->count = count;
	return 0;
}

static errcode_t walk_extents(ext2_filsys fs, ext2_ino_t ino,
			      struct ext2_inode *inode, struct run_state *rs)
{
	ext2_extent_handle_t handle;
	struct ext2fs_extent ext;
	errcode_t retval;
	int op = EXT2_EXTENT_ROOT;

	retval = ext2fs_extent_open2(fs, ino, inode, &handle);
	if (retval)
		return retval;
	while (!rs->aborted) {
		retval = ext2fs_extent_get(handle, op, &ext);
		op = EXT2_EXTENT_NEXT;
		if (retval == EXT2_ET_EXTENT_NO_NEXT ||
		    retval == EXT2_ET_EXTENT_NO_PREV) {
			retval = 0;
			break;
		}
		if (retval)
			break;
		if (!(ext.e_flags & EXT2_EXTENT_FLAGS_LEAF) ||
		    (ext.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT))
			continue;
		if (ext.e_flags & EXT2_EXTENT_FLAGS_UNINIT) {
			/* a hole to the reader, but still ordered */
			if (ext.e_lblk < rs->next_lblk) {
				retval = EXT2_ET_CRYPT_EXTENTS_UNSORTED;
				break;
			}
			rs->next_lblk = ext.e_lblk + ext.e_len;
			continue;
		}
		retval = add_run(fs, rs, ext.e_lblk, ext.e_pblk, ext.e_len);
		if (retval)
			break;
	}
	ext2fs_extent_free(handle);
	return retval;
}

static int block_proc(ext2_filsys fs, blk64_t *blocknr,
		      e2_blkcnt_t blockcnt,
		      blk64_t ref_blk EXT2FS_ATTR((unused)),
		      int ref_offset EXT2FS_ATTR((unused)), void *priv_data)
{
	struct run_state *rs = priv_data;

	if (blockcnt < 0)
		return 0;
	rs->retval = add_run(fs, rs, blockcnt, *blocknr, 1);
	if (rs->retval || rs->aborted)
		return BLOCK_ABORT;
	return 0;
}

/*
 * Call @func for each run of initialized blocks of @ino in increasing
 * logical order.  @inode may be NULL.  @func returns BLOCK_ABORT to stop.
 * Inline-data inodes have no blocks: EXT2_ET_INLINE_DATA_CANT_ITERATE.
 */
errcode_t ext2fs_stored_runs_iterate(ext2_filsys fs, ext2_ino_t ino,
				     struct ext2_inode *inode,
				     ext2fs_stored_run_func func,
				     void *priv_data)
{
	struct ext2_inode ibuf;
	struct run_state rs;
	errcode_t retval;

	if (!inode) {
		retval = ext2fs_read_inode(fs, ino, &ibuf);
		if (retval)
			return retval;
		inode = &ibuf;
	}
	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return EXT2_ET_INLINE_DATA_CANT_ITERATE;
	if (LINUX_S_ISLNK(inode->i_mode) && ext2fs_is_fast_symlink(inode))
		return 0;
	if (!ext2fs_inode_has_valid_blocks2(fs, inode))
		return 0;

	memset(&rs, 0, sizeof(rs));
	rs.func = func;
	rs.priv_data = priv_data;
	if (inode->i_flags & EXT4_EXTENTS_FL) {
		retval = walk_extents(fs, ino, inode, &rs);
	} else {
		retval = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY |
					       BLOCK_FLAG_DATA_ONLY, NULL,
					       block_proc, &rs);
		if (!retval)
			retval = rs.retval;
	}
	if (!retval && !rs.aborted)
		flush_run(fs, &rs);
	return retval;
}
