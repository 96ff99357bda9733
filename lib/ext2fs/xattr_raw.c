/*
 * xattr_raw.c --- walk an inode's extended attributes as stored
 *
 * The generic xattr handle of libext2fs names attributes by prefix and
 * reports an index it does not know (9, the fscrypt context, among them)
 * by its bare name, so "c" in index 9 and "c" in index 0 look the same.
 * A backup must keep the index: this walker hands out (index, name,
 * value) exactly as on disk, in-inode attributes first, then the EA
 * block, every offset checked against the area it lies in.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include <ext2fs/ext2_ext_attr.h>
#include "ext4_crypt.h"

/* values in EA inodes are bounded as the kernel bounds them */
#define EA_INODE_VALUE_MAX	(64 * 1024 * 1024)

static errcode_t read_ea_inode_value(ext2_filsys fs, ext2_ino_t ea_ino,
				     size_t size, char **value)
{
	ext2_file_t file;
	unsigned int got = 0;
	errcode_t retval, rc;

	if (size > EA_INODE_VALUE_MAX)
		return EXT2_ET_EA_BAD_VALUE_SIZE;
	retval = ext2fs_get_mem(size ? size : 1, value);
	if (retval)
		return retval;
	retval = ext2fs_file_open(fs, ea_ino, 0, &file);
	if (retval)
		goto errout;
	retval = ext2fs_file_read(file, *value, size, &got);
	rc = ext2fs_file_close(file);
	if (!retval)
		retval = rc;
	if (!retval && got != size)
		retval = EXT2_ET_EA_BAD_VALUE_SIZE;
errout:
	if (retval)
		ext2fs_free_mem(value);
	return retval;
}

/*
 * Walk the entries from @first to @end; value offsets are relative to
 * @vbase and values must end before @vend.  Returns XATTR_ABORT in
 * *@stop when the callback asked to stop.
 */
static errcode_t walk_entries(ext2_filsys fs, const char *first,
			      const char *end, const char *vbase,
			      const char *vend, ext2fs_xattr_raw_func func,
			      void *priv, int *stop)
{
	const struct ext2_ext_attr_entry *e;
	const char *p = first, *value;
	char *ea_value = NULL;
	errcode_t retval;
	int ret;

	while (p + sizeof(__u32) <= end) {
		e = (const struct ext2_ext_attr_entry *) p;
		if (EXT2_EXT_IS_LAST_ENTRY(e))
			return 0;
		if (p + sizeof(*e) > end ||
		    p + EXT2_EXT_ATTR_LEN(e->e_name_len) > end)
			return EXT2_ET_CRYPT_BAD_EA;
		if (e->e_value_inum) {
			if (!ext2fs_has_feature_ea_inode(fs->super) ||
			    e->e_value_inum > fs->super->s_inodes_count)
				return EXT2_ET_CRYPT_BAD_EA;
			retval = read_ea_inode_value(fs, e->e_value_inum,
						     e->e_value_size,
						     &ea_value);
			if (retval)
				return retval;
			value = ea_value;
		} else {
			if (e->e_value_offs + (size_t) e->e_value_size >
			    (size_t) (vend - vbase))
				return EXT2_ET_CRYPT_BAD_EA;
			value = vbase + e->e_value_offs;
		}
		ret = func(e->e_name_index, EXT2_EXT_ATTR_NAME(e),
			   e->e_name_len, value, e->e_value_size, priv);
		ext2fs_free_mem(&ea_value);
		if (ret & XATTR_ABORT) {
			*stop = 1;
			return 0;
		}
		p = (const char *) EXT2_EXT_ATTR_NEXT(e);
	}
	return EXT2_ET_CRYPT_BAD_EA;
}

static errcode_t walk_in_inode(ext2_filsys fs,
			       const struct ext2_inode_large *inode,
			       ext2fs_xattr_raw_func func, void *priv,
			       int *stop)
{
	size_t isize = EXT2_INODE_SIZE(fs->super);
	const char *start, *end;
	__u32 magic;

	if (isize <= EXT2_GOOD_OLD_INODE_SIZE ||
	    EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize +
	    sizeof(__u32) > isize)
		return 0;
	start = (const char *) inode + EXT2_GOOD_OLD_INODE_SIZE +
		inode->i_extra_isize;
	end = (const char *) inode + isize;
	memcpy(&magic, start, sizeof(magic));
	if (ext2fs_le32_to_cpu(magic) != EXT2_EXT_ATTR_MAGIC)
		return 0;
	start += sizeof(__u32);
	/* in-inode value offsets count from the first entry */
	return walk_entries(fs, start, end, start, end, func, priv, stop);
}

static errcode_t walk_block(ext2_filsys fs, ext2_ino_t ino,
			    const struct ext2_inode_large *inode,
			    ext2fs_xattr_raw_func func, void *priv,
			    int *stop)
{
	blk64_t blk = ext2fs_file_acl_block(fs, (struct ext2_inode *) inode);
	char *block = NULL;
	errcode_t retval;

	if (!blk)
		return 0;
	if (blk < fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_BAD_EA_BLOCK_NUM;
	retval = ext2fs_get_mem(fs->blocksize, &block);
	if (retval)
		return retval;
	retval = ext2fs_read_ext_attr3(fs, blk, block, ino);
	if (!retval)
		retval = walk_entries(fs,
				block + sizeof(struct ext2_ext_attr_header),
				block + fs->blocksize, block,
				block + fs->blocksize, func, priv, stop);
	ext2fs_free_mem(&block);
	return retval;
}

/*
 * Call @func for every extended attribute of @ino.  @inode is the full
 * on-disk inode (EXT2_INODE_SIZE bytes).  @func returns XATTR_ABORT to
 * stop.  Inline data ("system.data") is reported like any other entry.
 */
errcode_t ext2fs_xattrs_raw_iterate(ext2_filsys fs, ext2_ino_t ino,
				    const struct ext2_inode_large *inode,
				    ext2fs_xattr_raw_func func, void *priv)
{
	errcode_t retval;
	int stop = 0;

	retval = walk_in_inode(fs, inode, func, priv, &stop);
	if (retval || stop)
		return retval;
	return walk_block(fs, ino, inode, func, priv, &stop);
}
