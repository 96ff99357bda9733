/*
 * crypt_link.c --- add a directory entry whose name is arbitrary bytes
 *
 * ext2fs_link() takes a C string, but a ciphertext name may hold '/'
 * and NUL: this links (bytes, length), copies the casefold hash that
 * casefolded encrypted directories keep after the name (it cannot be
 * recomputed without the key), and handles linear and htree directories.
 *
 * An htree directory gets the entry in the leaf its hash selects; a
 * full leaf is split as the kernel splits it (dir_index.c).  Only when
 * the index itself is full is it dropped (its blocks rewritten as empty
 * linear blocks, EXT2_INDEX_FL cleared), which the kernel and e2fsck
 * accept, and which e2fsck -D rebuilds.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

#define DX_ROOT_INFO_OFFSET	24	/* after "." and ".." */
#define DX_NODE_OFFSET		8	/* after the fake empty entry */
#define DX_MAX_LEVELS		3
#define DX_SPLIT_TRIES		3

struct raw_link {
	ext2_filsys fs;
	const struct ext4_encrypted_name *name;
	ext2_ino_t ino;
	int file_type;
	int done;
	errcode_t err;
};

static void put_le32(__u8 *p, __u32 v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static unsigned int name_rec_len(const struct ext4_encrypted_name *n)
{
	return ext2fs_dir_rec_len(n->name_len, n->has_hash);
}

/*
 * Fill @de (its rec_len aside) with @ino under the raw name @n, and the
 * casefold hash after the name when @n has one.
 */
void ext2fs_fill_raw_dirent(ext2_filsys fs, struct ext2_dir_entry *de,
			    const struct ext4_encrypted_name *n,
			    ext2_ino_t ino, int file_type)
{
	de->inode = ino;
	ext2fs_dirent_set_name_len(de, n->name_len);
	ext2fs_dirent_set_file_type(de,
		ext2fs_has_feature_filetype(fs->super) ? file_type : 0);
	memcpy(de->name, n->name, n->name_len);
	if (n->has_hash) {
		__u8 *h = (__u8 *) de->name +
			  ((n->name_len + EXT2_DIR_ROUND) & ~EXT2_DIR_ROUND);

		put_le32(h, n->hash);
		put_le32(h + 4, n->minor_hash);
	}
}

static int is_dot(const struct ext2_dir_entry *de)
{
	int len = ext2fs_dirent_name_len(de);

	return de->name[0] == '.' && (len == 1 ||
				      (len == 2 && de->name[1] == '.'));
}

/* As ext2fs_link()'s link_proc, without a string function in sight. */
static int raw_link_proc(ext2_ino_t dir EXT2FS_ATTR((unused)),
			 int entry EXT2FS_ATTR((unused)),
			 struct ext2_dir_entry *de, int offset, int blocksize,
			 char *buf, void *priv)
{
	struct raw_link *rl = priv;
	struct ext2_dir_entry *next;
	unsigned int need = name_rec_len(rl->name);
	unsigned int cur = 0, used, next_len = 0;
	int csum_size = 0, ret = 0;

	if (rl->done)
		return DIRENT_ABORT;
	rl->err = ext2fs_get_rec_len(rl->fs, de, &cur);
	if (rl->err)
		return DIRENT_ABORT;
	if (ext2fs_has_feature_metadata_csum(rl->fs->super))
		csum_size = sizeof(struct ext2_dir_entry_tail);

	/* absorb a following unused entry */
	next = (struct ext2_dir_entry *) (buf + offset + cur);
	if (offset + (int) cur < blocksize - (8 + csum_size) &&
	    next->inode == 0 &&
	    !ext2fs_get_rec_len(rl->fs, next, &next_len) &&
	    offset + cur + next_len <= (unsigned) blocksize) {
		cur += next_len;
		rl->err = ext2fs_set_rec_len(rl->fs, cur, de);
		if (rl->err)
			return DIRENT_ABORT;
		ret = DIRENT_CHANGED;
	}

	if (de->inode) {
		/* a live entry: split off its slack if the name fits there */
		used = ext2fs_dir_rec_len(ext2fs_dirent_name_len(de),
					  rl->name->has_hash && !is_dot(de));
		if (cur < used + need)
			return ret;
		rl->err = ext2fs_set_rec_len(rl->fs, used, de);
		if (rl->err)
			return DIRENT_ABORT;
		next = (struct ext2_dir_entry *) ((char *) de + used);
		memset(next, 0, 8);
		rl->err = ext2fs_set_rec_len(rl->fs, cur - used, next);
		if (rl->err)
			return DIRENT_ABORT;
		de = next;
	} else if (cur < need) {
		return ret;
	}
	ext2fs_fill_raw_dirent(rl->fs, de, rl->name, rl->ino, rl->file_type);
	rl->done = 1;
	return DIRENT_ABORT | DIRENT_CHANGED;
}

static errcode_t link_linear(ext2_filsys fs, ext2_ino_t dir,
			     struct raw_link *rl)
{
	errcode_t retval;

	retval = ext2fs_dir_iterate2(fs, dir, DIRENT_FLAG_INCLUDE_EMPTY,
				     NULL, raw_link_proc, rl);
	if (retval)
		return retval;
	if (rl->err)
		return rl->err;
	return rl->done ? 0 : EXT2_ET_DIR_NO_SPACE;
}

/* Insert into logical block @lblk of @dir only. */
static errcode_t link_in_block(ext2_filsys fs, ext2_ino_t dir,
			       struct ext2_inode *diri, blk64_t lblk,
			       struct raw_link *rl)
{
	struct ext2_dir_entry *de;
	blk64_t pblk;
	unsigned int offset = 0, rec_len;
	char *buf;
	int csum_size = 0;
	errcode_t retval;

	retval = ext2fs_bmap2(fs, dir, diri, NULL, 0, lblk, NULL, &pblk);
	if (retval)
		return retval;
	if (!pblk)
		return EXT2_ET_DIR_CORRUPTED;
	retval = ext2fs_get_mem(fs->blocksize, &buf);
	if (retval)
		return retval;
	retval = ext2fs_read_dir_block4(fs, pblk, buf, 0, dir);
	if (retval)
		goto errout;
	if (ext2fs_has_feature_metadata_csum(fs->super))
		csum_size = sizeof(struct ext2_dir_entry_tail);
	retval = EXT2_ET_DIR_NO_SPACE;
	while (offset < fs->blocksize - csum_size) {
		de = (struct ext2_dir_entry *) (buf + offset);
		if (ext2fs_get_rec_len(fs, de, &rec_len) || rec_len < 8 ||
		    offset + rec_len > fs->blocksize) {
			retval = EXT2_ET_DIR_CORRUPTED;
			break;
		}
		raw_link_proc(dir, 0, de, offset, fs->blocksize, buf, rl);
		if (rl->err) {
			retval = rl->err;
			break;
		}
		if (rl->done) {
			retval = ext2fs_write_dir_block4(fs, pblk, buf, 0,
							 dir);
			break;
		}
		if (ext2fs_get_rec_len(fs, de, &rec_len))
			break;
		offset += rec_len;
	}
errout:
	ext2fs_free_mem(&buf);
	return retval;
}

/* Rewrite an index block as an empty linear directory block. */
static errcode_t dx_block_to_linear(ext2_filsys fs, ext2_ino_t dir,
				    struct ext2_inode *diri, blk64_t lblk,
				    int is_root)
{
	struct ext2_dir_entry *de;
	blk64_t pblk;
	int csum_size = 0;
	unsigned int dotdot;
	char *buf;
	errcode_t retval;

	if (ext2fs_has_feature_metadata_csum(fs->super))
		csum_size = sizeof(struct ext2_dir_entry_tail);
	retval = ext2fs_bmap2(fs, dir, diri, NULL, 0, lblk, NULL, &pblk);
	if (retval)
		return retval;
	retval = ext2fs_get_mem(fs->blocksize, &buf);
	if (retval)
		return retval;
	retval = ext2fs_read_dir_block4(fs, pblk, buf, 0, dir);
	if (retval)
		goto errout;
	if (is_root) {
		/* keep "." (12 bytes) and "..", which spans the rest */
		dotdot = EXT2_DIR_REC_LEN(1);
		memset(buf + dotdot + EXT2_DIR_REC_LEN(2), 0,
		       fs->blocksize - dotdot - EXT2_DIR_REC_LEN(2));
		de = (struct ext2_dir_entry *) (buf + dotdot);
		retval = ext2fs_set_rec_len(fs, fs->blocksize - dotdot -
					    csum_size, de);
	} else {
		memset(buf, 0, fs->blocksize);
		de = (struct ext2_dir_entry *) buf;
		retval = ext2fs_set_rec_len(fs, fs->blocksize - csum_size,
					    de);
	}
	if (retval)
		goto errout;
	if (csum_size)
		ext2fs_initialize_dirent_tail(fs,
			EXT2_DIRENT_TAIL(buf, fs->blocksize));
	retval = ext2fs_write_dir_block4(fs, pblk, buf, 0, dir);
errout:
	ext2fs_free_mem(&buf);
	return retval;
}

struct dx_nodes {
	blk64_t *lblk;
	size_t count, size;
};

/* Logical blocks of all index nodes below the root. */
static errcode_t dx_collect_nodes(ext2_filsys fs, ext2_ino_t dir,
				  struct ext2_inode *diri, blk64_t lblk,
				  int level, int levels, char *buf,
				  struct dx_nodes *nodes)
{
	struct ext2_dx_countlimit *cl;
	struct ext2_dx_entry *ent;
	unsigned int off = level ? DX_NODE_OFFSET :
			   DX_ROOT_INFO_OFFSET + 8;
	unsigned int i, count;
	blk64_t pblk, *child = NULL;
	errcode_t retval;

	if (level == levels)
		return 0;
	retval = ext2fs_bmap2(fs, dir, diri, NULL, 0, lblk, NULL, &pblk);
	if (!retval)
		retval = ext2fs_read_dir_block4(fs, pblk, buf, 0, dir);
	if (retval)
		return retval;
	cl = (struct ext2_dx_countlimit *) (buf + off);
	count = ext2fs_le16_to_cpu(cl->count);
	if (off + count * sizeof(*ent) > fs->blocksize)
		return EXT2_ET_DIR_CORRUPTED;
	ent = (struct ext2_dx_entry *) (buf + off);
	retval = ext2fs_get_array(count, sizeof(*child), &child);
	if (retval)
		return retval;
	for (i = 0; i < count; i++)
		child[i] = ext2fs_le32_to_cpu(ent[i].block) & 0x0fffffff;
	for (i = 0; i < count && !retval; i++) {
		if (nodes->count == nodes->size) {
			nodes->size = nodes->size ? nodes->size * 2 : 16;
			retval = ext2fs_resize_array(sizeof(blk64_t),
						     nodes->count,
						     nodes->size,
						     &nodes->lblk);
			if (retval)
				break;
		}
		nodes->lblk[nodes->count++] = child[i];
		retval = dx_collect_nodes(fs, dir, diri, child[i], level + 1,
					  levels, buf, nodes);
	}
	ext2fs_free_mem(&child);
	return retval;
}

static errcode_t dx_drop_index(ext2_filsys fs, ext2_ino_t dir,
			       struct ext2_inode *diri)
{
	struct ext2_dx_root_info *info;
	struct dx_nodes nodes = { NULL, 0, 0 };
	blk64_t pblk;
	char *buf;
	size_t i;
	errcode_t retval;

	retval = ext2fs_get_mem(fs->blocksize, &buf);
	if (retval)
		return retval;
	retval = ext2fs_bmap2(fs, dir, diri, NULL, 0, 0, NULL, &pblk);
	if (!retval)
		retval = ext2fs_read_dir_block4(fs, pblk, buf, 0, dir);
	if (retval)
		goto errout;
	info = (struct ext2_dx_root_info *) (buf + DX_ROOT_INFO_OFFSET);
	if (info->indirect_levels >= DX_MAX_LEVELS) {
		retval = EXT2_ET_DIR_CORRUPTED;
		goto errout;
	}
	retval = dx_collect_nodes(fs, dir, diri, 0, 0,
				  info->indirect_levels, buf, &nodes);
	for (i = 0; !retval && i < nodes.count; i++)
		retval = dx_block_to_linear(fs, dir, diri, nodes.lblk[i], 0);
	if (!retval)
		retval = dx_block_to_linear(fs, dir, diri, 0, 1);
	if (!retval) {
		diri->i_flags &= ~EXT2_INDEX_FL;
		retval = ext2fs_write_inode(fs, dir, diri);
	}
errout:
	ext2fs_free_mem(&nodes.lblk);
	ext2fs_free_mem(&buf);
	return retval;
}

/* ext2fs_dir_add_block() with clusters: ext2fs_expand_dir()'s block */
static errcode_t add_cluster_block(ext2_filsys fs, ext2_ino_t dir,
				   char *buf, blk64_t *lblk_ret)
{
	struct ext2_inode diri;
	blk64_t lblk, pblk;
	errcode_t retval;

	retval = ext2fs_expand_dir(fs, dir);
	if (!retval)
		retval = ext2fs_read_inode(fs, dir, &diri);
	if (retval)
		return retval;
	lblk = EXT2_I_SIZE(&diri) / fs->blocksize - 1;
	if (lblk_ret)
		*lblk_ret = lblk;
	if (!buf)
		return 0;
	retval = ext2fs_bmap2(fs, dir, &diri, NULL, 0, lblk, NULL, &pblk);
	if (!retval && !pblk)
		retval = EXT2_ET_DIR_CORRUPTED;
	if (!retval)
		retval = ext2fs_write_dir_block4(fs, pblk, buf, 0,
						 dir);
	return retval;
}

/*
 * Give @dir one more block holding @buf (an empty directory block when
 * NULL; its dirent tail is set as it is written), and say which it is in
 * @lblk_ret: what ext2fs_expand_dir() does, but taken back whole should
 * a write fail, where that one would keep the block it allocated.  With
 * clusters, whose blocks ext2fs_expand_dir() knows to fill in turn, the
 * block is added by that and @buf written over it.
 */
errcode_t ext2fs_dir_add_block(ext2_filsys fs, ext2_ino_t dir,
			       char *buf, blk64_t *lblk_ret)
{
	struct ext2_inode diri;
	blk64_t lblk, blk, mapped = 0;
	char *empty = NULL;
	errcode_t retval;

	if (EXT2FS_CLUSTER_RATIO(fs) > 1)
		return add_cluster_block(fs, dir, buf, lblk_ret);
	retval = ext2fs_read_inode(fs, dir, &diri);
	if (retval)
		return retval;
	lblk = EXT2_I_SIZE(&diri) / fs->blocksize;
	retval = ext2fs_new_block2(fs, ext2fs_find_inode_goal(fs, dir, &diri,
				   lblk), NULL, &blk);
	if (!retval && !buf) {
		retval = ext2fs_new_dir_block(fs, 0, 0, &empty);
		buf = empty;
	}
	if (!retval)
		retval = ext2fs_write_dir_block4(fs, blk, buf, 0,
						 dir);
	ext2fs_free_mem(&empty);
	if (retval)
		return retval;
	ext2fs_block_alloc_stats2(fs, blk, +1);
	retval = ext2fs_bmap2(fs, dir, &diri, NULL, BMAP_SET, lblk, NULL,
			      &blk);
	if (!retval)
		retval = ext2fs_iblk_add_blocks(fs, &diri, 1);
	if (!retval)
		retval = ext2fs_inode_size_set(fs, &diri,
				(lblk + 1) * fs->blocksize);
	if (!retval)
		retval = ext2fs_write_inode(fs, dir, &diri);
	if (!retval) {
		if (lblk_ret)
			*lblk_ret = lblk;
		return 0;
	}
	/* back to the size it had, and the block freed */
	if (ext2fs_bmap2(fs, dir, &diri, NULL, 0, lblk, NULL, &mapped) ||
	    mapped != blk)
		ext2fs_block_alloc_stats2(fs, blk, -1);
	ext2fs_punch(fs, dir, &diri, NULL, lblk, ~0ULL);
	ext2fs_inode_size_set(fs, &diri, lblk * fs->blocksize);
	ext2fs_write_inode(fs, dir, &diri);
	return retval;
}

int ext2fs_mode_to_file_type(unsigned int mode)
{
	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFREG:	return EXT2_FT_REG_FILE;
	case LINUX_S_IFDIR:	return EXT2_FT_DIR;
	case LINUX_S_IFCHR:	return EXT2_FT_CHRDEV;
	case LINUX_S_IFBLK:	return EXT2_FT_BLKDEV;
	case LINUX_S_IFIFO:	return EXT2_FT_FIFO;
	case LINUX_S_IFSOCK:	return EXT2_FT_SOCK;
	case LINUX_S_IFLNK:	return EXT2_FT_SYMLINK;
	}
	return EXT2_FT_UNKNOWN;
}

/*
 * Link @ino into @dir under the raw name @n (with its casefold hash when
 * @n->has_hash).  @file_type is an EXT2_FT_* value.  When @hint is not
 * NULL it holds the logical block to try first and receives the block
 * used: appending many names to a linear directory then costs one block
 * look-up each instead of a scan.
 */
errcode_t ext2fs_link_raw(ext2_filsys fs, ext2_ino_t dir,
			  const struct ext4_encrypted_name *n,
			  ext2_ino_t ino, int file_type, blk64_t *hint)
{
	struct ext2_inode diri;
	struct raw_link rl;
	blk64_t leaf, last;
	__u32 hash;
	int tries;
	errcode_t retval;

	if (!(fs->flags & EXT2_FLAG_RW))
		return EXT2_ET_RO_FILSYS;
	if (n->name_len == 0)
		return EXT2_ET_INVALID_ARGUMENT;
	retval = ext2fs_read_inode(fs, dir, &diri);
	if (retval)
		return retval;
	if (!LINUX_S_ISDIR(diri.i_mode))
		return EXT2_ET_NO_DIRECTORY;
	if (diri.i_flags & EXT4_INLINE_DATA_FL)
		return EXT2_ET_INLINE_DATA_CANT_ITERATE;
	if (n->has_hash != !!ext4_hash_in_dirent(&diri))
		return EXT2_ET_CRYPT_BAD_DIRENT_HASH;
	memset(&rl, 0, sizeof(rl));
	rl.fs = fs;
	rl.name = n;
	rl.ino = ino;
	rl.file_type = file_type;

	if (diri.i_flags & EXT2_INDEX_FL) {
		/* a full leaf is split; a split may not make room enough */
		for (tries = 0; tries < DX_SPLIT_TRIES; tries++) {
			retval = ext2fs_dx_find_leaf(fs, dir, n, &leaf, &hash);
			if (!retval)
				retval = ext2fs_read_inode(fs, dir, &diri);
			if (!retval)
				retval = link_in_block(fs, dir, &diri, leaf,
						       &rl);
			if (retval != EXT2_ET_DIR_NO_SPACE)
				return retval;
			retval = ext2fs_dx_split_leaf(fs, dir, hash);
			if (retval && retval != EXT2_ET_DIR_NO_SPACE)
				return retval;
			if (retval)
				break;
		}
		/* the index is full: the directory goes on linear */
		retval = ext2fs_read_inode(fs, dir, &diri);
		if (!retval)
			retval = dx_drop_index(fs, dir, &diri);
		if (retval)
			return retval;
	} else if (hint && *hint) {
		retval = link_in_block(fs, dir, &diri, *hint, &rl);
		if (retval != EXT2_ET_DIR_NO_SPACE)
			return retval;
		goto expand;
	}
	retval = link_linear(fs, dir, &rl);
	if (retval != EXT2_ET_DIR_NO_SPACE)
		return retval;
expand:
	retval = ext2fs_dir_add_block(fs, dir, NULL, &last);
	if (!retval)
		retval = ext2fs_read_inode(fs, dir, &diri);
	if (retval)
		return retval;
	retval = link_in_block(fs, dir, &diri, last, &rl);
	if (!retval && hint)
		*hint = last;
	return retval;
}

struct raw_unlink {
	ext2_filsys fs;
	const struct ext4_encrypted_name *name;
	ext2_ino_t ino;
	struct ext2_dir_entry *prev;
	int done;
	errcode_t err;
};

/* As ext2fs_unlink()'s unlink_proc, the name compared as bytes */
static int raw_unlink_proc(struct ext2_dir_entry *de, int offset,
			   int blocksize EXT2FS_ATTR((unused)),
			   char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct raw_unlink *ru = priv;
	struct ext2_dir_entry *prev = ru->prev;
	unsigned int len, prev_len;

	ru->prev = de;
	if (de->inode != ru->ino ||
	    ext2fs_dirent_name_len(de) != ru->name->name_len ||
	    memcmp(de->name, ru->name->name, ru->name->name_len))
		return 0;
	if (offset) {
		/* the previous entry of the block takes its room */
		ru->err = ext2fs_get_rec_len(ru->fs, prev, &prev_len);
		if (!ru->err)
			ru->err = ext2fs_get_rec_len(ru->fs, de, &len);
		if (!ru->err)
			ru->err = ext2fs_set_rec_len(ru->fs, prev_len + len,
						     prev);
		if (ru->err)
			return DIRENT_ABORT;
	} else {
		de->inode = 0;
	}
	ru->done = 1;
	return DIRENT_ABORT | DIRENT_CHANGED;
}

/*
 * Remove the entry of @dir named @n (raw bytes) that links @ino: what
 * ext2fs_unlink() does, without a string function on the name.  An
 * htree directory keeps its index, whose hashes stay right.
 */
errcode_t ext2fs_unlink_raw(ext2_filsys fs, ext2_ino_t dir,
			    const struct ext4_encrypted_name *n,
			    ext2_ino_t ino)
{
	struct raw_unlink ru;
	errcode_t retval;

	if (!(fs->flags & EXT2_FLAG_RW))
		return EXT2_ET_RO_FILSYS;
	memset(&ru, 0, sizeof(ru));
	ru.fs = fs;
	ru.name = n;
	ru.ino = ino;
	retval = ext2fs_dir_iterate(fs, dir, DIRENT_FLAG_INCLUDE_EMPTY, NULL,
				    raw_unlink_proc, &ru);
	if (retval)
		return retval;
	if (ru.err)
		return ru.err;
	return ru.done ? 0 : EXT2_ET_FILE_NOT_FOUND;
}
