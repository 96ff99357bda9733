/*
 * inline_dir.c --- keep a small directory inline, as the kernel does
 *
 * On a filesystem with inline_data the kernel makes every new
 * unencrypted directory inline: ".." in i_block[0], entries in the rest
 * of i_block and, once that is full, in a "system.data" value grown to
 * all the room the inode has; past that it moves them to a block.  A
 * restore links names into a block directory; once the directory has
 * all its names it is put back the way the kernel would hold them.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include <ext2fs/ext2_ext_attr.h>
#include "ext4_crypt.h"

#define AREA0_SIZE	(EXT4_MIN_INLINE_DATA_SIZE - \
			 EXT4_INLINE_DATA_DOTDOT_SIZE)

/* i_block after "..", and "system.data": entries packed, first fit */
struct inline_dir {
	char buf[EXT2_MAX_BLOCK_SIZE];	/* "..", then both areas */
	size_t size[2], used[2];
	size_t last[2];			/* offset of the last entry + 1 */
	ext2_ino_t parent;
	errcode_t retval;
};

static char *area(struct inline_dir *d, int i)
{
	return d->buf + (i ? EXT4_MIN_INLINE_DATA_SIZE :
			 EXT4_INLINE_DATA_DOTDOT_SIZE);
}

static int pack_proc(ext2_ino_t dir EXT2FS_ATTR((unused)), int entry,
		     struct ext2_dir_entry *de,
		     int offset EXT2FS_ATTR((unused)),
		     int blocksize EXT2FS_ATTR((unused)),
		     char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct inline_dir *d = priv;
	struct ext2_dir_entry_2 *n;
	int len = ext2fs_dirent_name_len(de);
	size_t rec = EXT2_DIR_REC_LEN(len);
	int i;

	if (entry == DIRENT_DOT_FILE)
		return 0;
	if (entry == DIRENT_DOT_DOT_FILE) {
		d->parent = de->inode;
		return 0;
	}
	for (i = 0; i < 2 && d->used[i] + rec > d->size[i]; i++)
		;
	if (i == 2) {
		d->retval = EXT2_ET_INLINE_DATA_NO_SPACE;
		return DIRENT_ABORT;
	}
	n = (struct ext2_dir_entry_2 *) (area(d, i) + d->used[i]);
	n->inode = ext2fs_cpu_to_le32(de->inode);
	n->rec_len = ext2fs_cpu_to_le16(rec);
	n->name_len = len;
	n->file_type = ext2fs_dirent_file_type(de);
	memcpy(n->name, de->name, len);
	d->last[i] = d->used[i] + 1;
	d->used[i] += rec;
	return 0;
}

/* The last entry of area @i takes the rest; an empty area, one hole */
static void close_area(struct inline_dir *d, int i)
{
	struct ext2_dir_entry_2 *n;

	if (!d->last[i]) {
		n = (struct ext2_dir_entry_2 *) area(d, i);
		n->inode = 0;
		n->name_len = 0;
		n->file_type = 0;
		n->rec_len = ext2fs_cpu_to_le16(d->size[i]);
		return;
	}
	n = (struct ext2_dir_entry_2 *) (area(d, i) + d->last[i] - 1);
	n->rec_len = ext2fs_cpu_to_le16(d->size[i] - (d->last[i] - 1));
}

/* The attributes of the directory, copied: they are written anew */
struct xattr_copy {
	struct ext2fs_raw_xattr *x;
	size_t count;
	errcode_t retval;
};

static int copy_xattr(int index, const char *name, size_t name_len,
		      const void *value, size_t value_len, void *priv)
{
	struct xattr_copy *l = priv;

	l->retval = ext2fs_raw_xattr_copy_add(&l->x, &l->count, index, name,
					      name_len, value, value_len);
	return l->retval ? XATTR_ABORT : 0;
}

/*
 * The names of directory @ino in its inline form, in @d, with its
 * attributes @l after "system.data"; *@fits 0 when the kernel would not
 * keep the directory inline.
 */
static errcode_t pack_dir(ext2_filsys fs, ext2_ino_t ino,
			  struct ext2_inode_large *inode, struct inline_dir *d,
			  const struct xattr_copy *l, int *fits)
{
	errcode_t retval;

	*fits = 0;
	memset(d, 0, sizeof(*d));
	d->size[0] = AREA0_SIZE;
	d->size[1] = ext2fs_inline_data_raw_max(fs, inode, l->x, l->count);
	/* too small for a name: the kernel does not grow into it */
	if (d->size[1] <= EXT2_DIR_REC_LEN(1))
		d->size[1] = 0;
	retval = ext2fs_dir_iterate2(fs, ino, 0, NULL, pack_proc, d);
	if (retval == 0 && d->retval == EXT2_ET_INLINE_DATA_NO_SPACE)
		return 0;
	if (retval || d->retval || !d->parent)
		return retval ? retval : d->retval;
	/* the kernel grows "system.data" only when i_block is full */
	if (!d->used[1])
		d->size[1] = 0;
	close_area(d, 0);
	if (d->size[1])
		close_area(d, 1);
	*(__u32 *) d->buf = ext2fs_cpu_to_le32(d->parent);
	*fits = 1;
	return 0;
}

/* The one block a restore gives an unencrypted directory */
static int may_go_inline(ext2_filsys fs, struct ext2_inode_large *inode)
{
	return LINUX_S_ISDIR(inode->i_mode) &&
	       !(inode->i_flags & (EXT4_ENCRYPT_FL | EXT4_INLINE_DATA_FL |
				   EXT2_INDEX_FL)) &&
	       EXT2_I_SIZE(inode) == fs->blocksize;
}

/*
 * Turn @inode (as @old on disk) into its inline form and write it, or
 * leave @old in place: the new inode is written before the old EA block
 * is given up, and a failure on the way writes @old back (the inode
 * cache took the new one already) and gives up the new EA block, so
 * that a failed conversion leaves the directory as it was.  The names'
 * block is the caller's to free.
 */
static errcode_t swap_inline(ext2_filsys fs, ext2_ino_t ino,
			     struct ext2_inode_large *old,
			     struct ext2_inode_large *inode,
			     const struct xattr_copy *l,
			     const struct inline_dir *d,
			     struct ext2fs_ea_share *share)
{
	size_t isize = EXT2_INODE_SIZE(fs->super);
	blk64_t old_ea = ext2fs_file_acl_block(fs, (struct ext2_inode *) old);
	blk64_t new_ea;
	errcode_t retval;

	ext2fs_file_acl_block_set(fs, (struct ext2_inode *) inode, 0);
	ext2fs_iblk_set(fs, (struct ext2_inode *) inode, 0);
	retval = ext2fs_inline_data_raw_write(fs, ino, inode, l->x, l->count,
				d->buf, EXT4_MIN_INLINE_DATA_SIZE + d->size[1],
				share);
	if (retval)
		return retval;
	new_ea = ext2fs_file_acl_block(fs, (struct ext2_inode *) inode);
	retval = ext2fs_write_inode_full(fs, ino, (struct ext2_inode *) inode,
					 isize);
	if (!retval)
		retval = ext2fs_ea_block_put(fs, ino, old_ea);
	if (!retval)
		return 0;
	ext2fs_write_inode_full(fs, ino, (struct ext2_inode *) old, isize);
	ext2fs_ea_block_put(fs, ino, new_ea);
	return retval;
}

/*
 * Make directory @ino, an unencrypted one of one block, inline where
 * the filesystem has inline_data and its names fit in the inode as the
 * kernel would put them; its attributes follow "system.data", those
 * that do not fit in an EA block (one of @share's if the same).
 * Anything else is left as it is.
 */
errcode_t ext2fs_dir_make_inline(ext2_filsys fs, ext2_ino_t ino,
				 struct ext2fs_ea_share *share)
{
	struct ext2_inode_large *inode = NULL, *old = NULL;
	struct inline_dir *d = NULL;
	struct xattr_copy l;
	size_t isize = EXT2_INODE_SIZE(fs->super);
	blk64_t blk = 0;
	int fits = 0;
	errcode_t retval;

	memset(&l, 0, sizeof(l));
	if (!ext2fs_has_feature_inline_data(fs->super) ||
	    isize <= EXT2_GOOD_OLD_INODE_SIZE)
		return 0;
	retval = ext2fs_get_mem(isize, &inode);
	if (!retval)
		retval = ext2fs_get_mem(isize, &old);
	if (!retval)
		retval = ext2fs_get_mem(sizeof(*d), &d);
	if (!retval)
		retval = ext2fs_read_inode_full(fs, ino,
					(struct ext2_inode *) inode, isize);
	if (retval || !may_go_inline(fs, inode))
		goto errout;
	memcpy(old, inode, isize);
	retval = ext2fs_xattrs_raw_iterate(fs, ino, inode, copy_xattr, &l);
	if (!retval)
		retval = l.retval;
	if (!retval)
		retval = pack_dir(fs, ino, inode, d, &l, &fits);
	if (!retval && fits)
		retval = ext2fs_bmap2(fs, ino, (struct ext2_inode *) inode,
				      NULL, 0, 0, NULL, &blk);
	if (retval || !fits || !blk)
		goto errout;
	retval = swap_inline(fs, ino, old, inode, &l, d, share);
	/* the names' block is the directory's no more */
	if (!retval)
		ext2fs_block_alloc_stats2(fs, blk, -1);
errout:
	ext2fs_raw_xattrs_free(l.x, 0, l.count);
	ext2fs_free_mem(&d);
	ext2fs_free_mem(&old);
	ext2fs_free_mem(&inode);
	return retval;
}
