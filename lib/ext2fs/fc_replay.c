/*
 * fc_replay.c --- apply the fast commits of an ext4 journal, in memory
 *
 * After the last full commit, ext4 may log "fast commits" into the
 * journal's fast-commit area: tags that say which inodes changed, which
 * block ranges they gained or lost and which names were linked and
 * unlinked.  On mount the kernel replays them (fs/jbd2/recovery.c
 * fc_do_one_pass, fs/ext4/fast_commit.c ext4_fc_replay_scan and
 * ext4_fc_replay).  This file does the same to a filesystem opened
 * read-write over the replay layer: first a scan that finds how many
 * tags belong to complete fast commits of the expected transaction,
 * then the replay of exactly those tags.
 *
 * Where the kernel refuses to mount, or where we cannot do what it does
 * (casefolded or encrypted parents, inline data), the answer is
 * EXT2_ET_FC_DAMAGED and nothing partial is left to be backed up.
 *
 * Names in the tags are bytes; no string function touches them.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"
#include "journal_replay.h"

/* fs/ext4/fast_commit.h */
#define FC_TAG_ADD_RANGE	0x0001
#define FC_TAG_DEL_RANGE	0x0002
#define FC_TAG_CREAT		0x0003
#define FC_TAG_LINK		0x0004
#define FC_TAG_UNLINK		0x0005
#define FC_TAG_INODE		0x0006
#define FC_TAG_PAD		0x0007
#define FC_TAG_TAIL		0x0008
#define FC_TAG_HEAD		0x0009
#define FC_SUPPORTED_FEATURES	0x0

#define FC_TL_LEN		4	/* __le16 tag, __le16 len */
#define FC_HEAD_LEN		8	/* __le32 features, __le32 tid */
#define FC_TAIL_LEN		8	/* __le32 tid, __le32 crc */
#define FC_ADD_RANGE_LEN	16	/* __le32 ino, struct ext4_extent */
#define FC_DEL_RANGE_LEN	12	/* __le32 ino, lblk, len */
#define FC_DENTRY_LEN		8	/* __le32 parent, ino; then the name */
#define FC_INODE_LEN		4	/* __le32 ino; then the raw inode */

#define EXT_MAX_BLOCKS		0xffffffffU
#define FC_INIT_MAX_LEN		32768	/* longer extents are unwritten */
#define FC_LINK_MAX		65000	/* EXT4_LINK_MAX */

/* A physical range the replay must not allocate from */
struct fc_region {
	ext2_ino_t	ino;
	blk64_t		pblk;
	__u32		len;
};

struct fc_replay {
	ext2_filsys		fs;
	struct ext2fs_journal	*j;
	__u32			tid;		/* the expected transaction */
	unsigned char		*buf;		/* one journal block */
	unsigned int		isize;		/* on-disk inode size */
	__u32			jblk;		/* where we are, for messages */
	__u16			tag;
	ext2_ino_t		ino;
	const char		*reason;	/* why we refuse, if we do */
	/* the scan */
	__u32			crc;
	int			cur_tag;
	int			num_tags;	/* tags in valid fast commits */
	int			num_commits;	/* their valid tails */
	/* blocks the replay allocator skips, as ext4_fc_record_regions */
	struct fc_region	*regions;
	int			regions_used, regions_valid, regions_size;
	/* inodes whose blocks are marked in use at the end */
	ext2_ino_t		*modified;
	int			nmodified, modified_size;
};

/* ext2fs_set_alloc_block_callback() passes no private pointer */
static struct fc_replay *fc_active;

/* What the kernel would not mount, or what we cannot do as it does */
static errcode_t refuse(struct fc_replay *r, const char *reason)
{
	if (!r->reason)
		r->reason = reason;
	return EXT2_ET_FC_DAMAGED;
}

static __u16 get_le16(const unsigned char *p)
{
	return p[0] | (p[1] << 8);
}

static __u32 get_le32(const unsigned char *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((__u32) p[3] << 24);
}

/* --- bookkeeping -------------------------------------------------------- */

static errcode_t record_region(struct fc_replay *r, ext2_ino_t ino,
			       blk64_t pblk, __u32 len, int replay)
{
	struct fc_region *last;
	errcode_t retval;

	/* the replay overwrites what the scan recorded past the last tail */
	if (replay)
		r->regions_used = r->regions_valid;
	/* a block next to the last one recorded extends it */
	last = r->regions_used ? &r->regions[r->regions_used - 1] : NULL;
	if (replay && last && last->ino == ino &&
	    last->pblk + last->len == pblk && last->len + len > last->len) {
		last->len += len;
		return 0;
	}
	if (r->regions_used == r->regions_size) {
		retval = ext2fs_resize_mem(r->regions_size *
					   sizeof(*r->regions),
					   (r->regions_size * 2 + 16) *
					   sizeof(*r->regions), &r->regions);
		if (retval)
			return retval;
		r->regions_size = r->regions_size * 2 + 16;
	}
	r->regions[r->regions_used].ino = ino;
	r->regions[r->regions_used].pblk = pblk;
	r->regions[r->regions_used].len = len;
	r->regions_used++;
	if (replay)
		r->regions_valid++;
	return 0;
}

static int excluded(struct fc_replay *r, blk64_t blk)
{
	int i;

	for (i = 0; i < r->regions_valid; i++) {
		if (!r->regions[i].ino || !r->regions[i].len)
			continue;
		if (blk >= r->regions[i].pblk &&
		    blk - r->regions[i].pblk < r->regions[i].len)
			return 1;
	}
	return 0;
}

static errcode_t record_modified(struct fc_replay *r, ext2_ino_t ino)
{
	errcode_t retval;
	int i;

	for (i = 0; i < r->nmodified; i++)
		if (r->modified[i] == ino)
			return 0;
	if (r->nmodified == r->modified_size) {
		retval = ext2fs_resize_mem(r->modified_size * sizeof(ino),
					   (r->modified_size + 64) *
					   sizeof(ino), &r->modified);
		if (retval)
			return retval;
		r->modified_size += 64;
	}
	r->modified[r->nmodified++] = ino;
	return 0;
}

/*
 * The replay allocator, as ext4_mb_new_blocks_simple(): the first block
 * free in the bitmap at or after @goal, wrapping around, that no fast
 * commit claims.
 */
static errcode_t fc_alloc_block(ext2_filsys fs, blk64_t goal, blk64_t *ret)
{
	struct fc_replay *r = fc_active;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super) - 1;
	blk64_t blk, start;
	int wrapped = 0;

	if (goal < first || goal > end)
		goal = first;
	start = goal;
	for (;;) {
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, start,
							 end, &blk) == 0) {
			if (!excluded(r, blk)) {
				*ret = blk;
				return 0;
			}
			if (blk < end) {
				start = blk + 1;
				continue;
			}
		}
		if (wrapped || goal == first)
			return EXT2_ET_BLOCK_ALLOC_FAIL;
		wrapped = 1;
		start = first;
		end = goal - 1;
	}
}

/* --- inodes --------------------------------------------------------------- */

/* The inode as on disk: the replay does not verify checksums */
static errcode_t read_inode(struct fc_replay *r, ext2_ino_t ino,
			    struct ext2_inode_large *inode)
{
	int ignore = r->fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS;
	errcode_t retval;

	r->fs->flags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
	retval = ext2fs_read_inode_full(r->fs, ino, EXT2_INODE(inode),
					r->isize);
	if (!ignore)
		r->fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;
	return retval;
}

/*
 * Read @ino as ext4_iget(EXT4_IGET_NORMAL) would accept it during the
 * replay (checksums are not verified then).  Returns 0 with *@ok clear
 * where the kernel's iget fails.
 */
static errcode_t fc_iget(struct fc_replay *r, ext2_ino_t ino,
			 struct ext2_inode_large *inode, int *ok)
{
	ext2_filsys fs = r->fs;
	struct ext2_super_block *sb = fs->super;
	errcode_t retval;

	*ok = 0;
	if ((ino < EXT2_FIRST_INO(sb) && ino != EXT2_ROOT_INO) ||
	    ino == sb->s_usr_quota_inum || ino == sb->s_grp_quota_inum ||
	    ino == sb->s_prj_quota_inum || ino == sb->s_orphan_file_inum ||
	    ino < EXT2_ROOT_INO || ino > sb->s_inodes_count)
		return 0;
	retval = read_inode(r, ino, inode);
	if (retval)
		return retval;
	if (r->isize > EXT2_GOOD_OLD_INODE_SIZE &&
	    (EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize > r->isize ||
	     (inode->i_extra_isize & 3)))
		return 0;
	if (inode->i_links_count == 0)
		return 0;
	if ((inode->i_flags & EXT4_INLINE_DATA_FL) &&
	    !ext2fs_has_feature_inline_data(sb))
		return 0;
	if (inode->i_size_high & 0x80000000U)
		return 0;
	*ok = 1;
	return 0;
}

static errcode_t fc_write_inode(struct fc_replay *r, ext2_ino_t ino,
				struct ext2_inode_large *inode)
{
	return ext2fs_write_inode_full(r->fs, ino, EXT2_INODE(inode),
				       r->isize);
}

static void set_now(struct ext2_inode_large *inode, int mtime)
{
	__u32 now = time(NULL);

	inode->i_ctime = now;
	if (mtime)
		inode->i_mtime = now;
	if (inode->i_extra_isize >= 8)
		inode->i_ctime_extra = 0;
	if (mtime && inode->i_extra_isize >= 12)
		inode->i_mtime_extra = 0;
}

/*
 * The replay allocates and frees blocks without charging them to the
 * inode (ext4_mb_new_blocks_simple(), ext4_free_blocks_simple()): put
 * back the i_blocks that libext2fs adjusted.
 */
static errcode_t restore_iblocks(struct fc_replay *r, ext2_ino_t ino,
				 const struct ext2_inode_large *before)
{
	struct ext2_inode_large *inode;
	errcode_t retval;

	retval = ext2fs_get_memzero(r->isize, &inode);
	if (retval)
		return retval;
	retval = read_inode(r, ino, inode);
	if (!retval && (inode->i_blocks != before->i_blocks ||
			inode->osd2.linux2.l_i_blocks_hi !=
			before->osd2.linux2.l_i_blocks_hi)) {
		inode->i_blocks = before->i_blocks;
		inode->osd2.linux2.l_i_blocks_hi =
			before->osd2.linux2.l_i_blocks_hi;
		retval = fc_write_inode(r, ino, inode);
	}
	ext2fs_free_mem(&inode);
	return retval;
}

/* ext4_mark_inode_used(): the bit and the group's counters */
static errcode_t mark_inode_used(struct fc_replay *r, ext2_ino_t ino)
{
	ext2_filsys fs = r->fs;

	if (ino < EXT2_FIRST_INO(fs->super) || ino > fs->super->s_inodes_count)
		return refuse(r, "a reserved or nonexistent inode");
	if (ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		return 0;
	ext2fs_mark_inode_bitmap2(fs->inode_map, ino);
	ext2fs_mark_ib_dirty(fs);
	if (ext2fs_has_group_desc_csum(fs)) {
		dgrp_t g = ext2fs_group_of_ino(fs, ino);
		__u32 ipg = fs->super->s_inodes_per_group;
		__u32 bit = (ino - 1) % ipg;
		__u32 used = ipg - ext2fs_bg_itable_unused(fs, g);

		if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT)) {
			ext2fs_bg_flags_clear(fs, g, EXT2_BG_INODE_UNINIT);
			used = 0;
		}
		if (bit >= used)
			ext2fs_bg_itable_unused_set(fs, g, ipg - bit - 1);
		ext2fs_group_desc_csum_set(fs, g);
	}
	return 0;
}

enum walk_mode { WALK_COUNT, WALK_MARK, WALK_CLEAR };

struct blocks_walk {
	struct fc_replay	*r;
	ext2_ino_t		ino;
	enum walk_mode		mode;
	blk64_t			count;
	errcode_t		err;
};

static int blocks_proc(ext2_filsys fs, blk64_t *blocknr,
		       e2_blkcnt_t blockcnt EXT2FS_ATTR((unused)),
		       blk64_t ref_blk EXT2FS_ATTR((unused)),
		       int ref_offset EXT2FS_ATTR((unused)), void *priv)
{
	struct blocks_walk *w = priv;
	blk64_t blk = *blocknr;

	if (blk < fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(fs->super))
		return 0;
	w->count++;
	if (w->mode == WALK_MARK) {
		ext2fs_mark_block_bitmap2(fs->block_map, blk);
	} else if (w->mode == WALK_CLEAR) {
		ext2fs_unmark_block_bitmap2(fs->block_map, blk);
		w->err = record_region(w->r, w->ino, blk, 1, 1);
		if (w->err)
			return BLOCK_ABORT;
	}
	return 0;
}

/*
 * Every block of an extent-mapped inode, data and tree: counted, marked
 * in use, or cleared and kept from the allocator (ext4_ext_clear_bb).
 */
static errcode_t walk_blocks(struct fc_replay *r, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     enum walk_mode mode, blk64_t *count)
{
	struct blocks_walk w;
	errcode_t retval;

	memset(&w, 0, sizeof(w));
	w.r = r;
	w.ino = ino;
	w.mode = mode;
	if (count)
		*count = 0;
	if (!(inode->i_flags & EXT4_EXTENTS_FL) ||
	    (inode->i_flags & EXT4_INLINE_DATA_FL))
		return 0;
	retval = ext2fs_block_iterate3(r->fs, ino, BLOCK_FLAG_READ_ONLY, NULL,
				       blocks_proc, &w);
	if (!retval)
		retval = w.err;
	if (mode != WALK_COUNT)
		ext2fs_mark_bb_dirty(r->fs);
	if (count)
		*count = w.count;
	return retval;
}

/*
 * ext4_evict_inode() of an inode whose last link the replay removed:
 * its blocks and xattr block freed, its bit cleared.
 */
static errcode_t evict_inode(struct fc_replay *r, ext2_ino_t ino,
			     struct ext2_inode_large *inode)
{
	ext2_filsys fs = r->fs;
	errcode_t retval;

	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return refuse(r, "its last link goes and its data is inline");
	if (LINUX_S_ISLNK(inode->i_mode) &&
	    !ext2fs_inode_has_valid_blocks2(fs, EXT2_INODE(inode)))
		memset(inode->i_block, 0, sizeof(inode->i_block));
	inode->i_size = 0;
	inode->i_size_high = 0;
	if (ext2fs_inode_data_blocks2(fs, EXT2_INODE(inode)) ||
	    (inode->i_flags & EXT4_EXTENTS_FL)) {
		retval = fc_write_inode(r, ino, inode);
		if (!retval)
			retval = ext2fs_punch(fs, ino, EXT2_INODE(inode), NULL,
					      0, ~0ULL);
		if (retval)
			return retval;
	}
	retval = ext2fs_xattrs_raw_release(fs, ino, inode);
	if (retval)
		return retval;
	inode->i_dtime = time(NULL);
	retval = fc_write_inode(r, ino, inode);
	if (retval)
		return retval;
	if (ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		ext2fs_inode_alloc_stats2(fs, ino, -1,
					  LINUX_S_ISDIR(inode->i_mode));
	return 0;
}

/* --- directories ---------------------------------------------------------- */

struct dentry_args {
	ext2_ino_t		parent;
	ext2_ino_t		ino;
	const unsigned char	*name;
	int			name_len;
};

static void tag_to_dentry(const unsigned char *val, int len,
			  struct dentry_args *d)
{
	d->parent = get_le32(val);
	d->ino = get_le32(val + 4);
	d->name = val + FC_DENTRY_LEN;
	d->name_len = len - FC_DENTRY_LEN;
}

/*
 * A parent whose entries we can find and add by their bytes: the kernel
 * looks names up in casefolded and encrypted directories in ways the
 * raw bytes do not reproduce (it never logs the latter: such names make
 * the transaction ineligible for a fast commit).
 */
static errcode_t check_parent(struct fc_replay *r,
			      const struct ext2_inode_large *dir)
{
	if (!LINUX_S_ISDIR(dir->i_mode))
		return refuse(r, "its parent is not a directory");
	if (dir->i_flags & EXT4_ENCRYPT_FL)
		return refuse(r, "its directory is encrypted");
	if (dir->i_flags & EXT4_CASEFOLD_FL)
		return refuse(r, "its directory is casefolded");
	if (dir->i_flags & EXT4_INLINE_DATA_FL)
		return refuse(r, "its directory is inline, which this "
			      "version does not replay");
	return 0;
}

struct find_entry {
	ext2_filsys			fs;
	const struct dentry_args	*d;
	struct ext2_dir_entry		*prev;
	ext2_ino_t			found;	/* the entry's inode */
	int				remove;	/* when it is d->ino */
};

/* ext4_find_entry() and ext4_generic_delete_entry(), by raw bytes */
static int find_entry_proc(ext2_ino_t dir EXT2FS_ATTR((unused)),
			   int entry EXT2FS_ATTR((unused)),
			   struct ext2_dir_entry *de, int offset,
			   int blocksize EXT2FS_ATTR((unused)),
			   char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct find_entry *f = priv;
	struct ext2_dir_entry *prev = f->prev;
	unsigned int len, plen;

	f->prev = de;
	if (offset == 0)
		prev = NULL;
	if (!de->inode ||
	    ext2fs_dirent_name_len(de) != f->d->name_len ||
	    memcmp(de->name, f->d->name, f->d->name_len))
		return 0;
	f->found = de->inode;
	if (!f->remove || de->inode != f->d->ino)
		return DIRENT_ABORT;
	if (ext2fs_get_rec_len(f->fs, de, &len))
		return DIRENT_ABORT;
	if (prev && !ext2fs_get_rec_len(f->fs, prev, &plen)) {
		ext2fs_set_rec_len(f->fs, plen + len, prev);
		memset(de, 0, len);
	} else {
		de->inode = 0;
		memset((char *) de + 6, 0, len - 6);
	}
	return DIRENT_ABORT | DIRENT_CHANGED;
}

static errcode_t find_entry(struct fc_replay *r, const struct dentry_args *d,
			    int remove, ext2_ino_t *found)
{
	struct find_entry f;
	errcode_t retval;

	memset(&f, 0, sizeof(f));
	f.fs = r->fs;
	f.d = d;
	f.remove = remove;
	retval = ext2fs_dir_iterate2(r->fs, d->parent,
				     DIRENT_FLAG_INCLUDE_EMPTY, NULL,
				     find_entry_proc, &f);
	*found = f.found;
	return retval;
}

/* ext4_inc_count() */
static void inc_count(ext2_filsys fs, struct ext2_inode_large *inode)
{
	inode->i_links_count++;
	if (ext2fs_has_feature_dir_index(fs->super) &&
	    LINUX_S_ISDIR(inode->i_mode) && (inode->i_flags & EXT2_INDEX_FL) &&
	    (inode->i_links_count > FC_LINK_MAX ||
	     inode->i_links_count == 2))
		inode->i_links_count = 1;
}

/*
 * __ext4_link() as the replay calls it: the name added unless present,
 * the link counted, the times of both set to now.
 */
static errcode_t link_entry(struct fc_replay *r, const struct dentry_args *d,
			    struct ext2_inode_large *inode)
{
	struct ext2_inode_large *dir;
	struct ext4_encrypted_name n;
	ext2_ino_t found;
	int ok;
	errcode_t retval;

	retval = ext2fs_get_memzero(r->isize, &dir);
	if (retval)
		return retval;
	retval = fc_iget(r, d->parent, dir, &ok);
	if (retval || !ok)
		goto errout;
	retval = check_parent(r, dir);
	if (retval)
		goto errout;
	retval = find_entry(r, d, 0, &found);
	if (retval || found)		/* -EEXIST is fine */
		goto errout;
	memset(&n, 0, sizeof(n));
	memcpy(n.name, d->name, d->name_len);
	n.name_len = d->name_len;
	retval = ext2fs_link_raw(r->fs, d->parent, &n, d->ino,
				 ext2fs_mode_to_file_type(inode->i_mode), NULL);
	if (!retval)
		retval = restore_iblocks(r, d->parent, dir);
	if (retval)
		goto errout;
	/* add_dirent_to_buf(): the directory's times; it may have grown */
	retval = read_inode(r, d->parent, dir);
	if (retval)
		goto errout;
	set_now(dir, 1);
	retval = fc_write_inode(r, d->parent, dir);
	if (retval)
		goto errout;
	inc_count(r->fs, inode);
	set_now(inode, 0);
	retval = fc_write_inode(r, d->ino, inode);
errout:
	ext2fs_free_mem(&dir);
	return retval;
}

/* ext4_fc_replay_unlink() */
static errcode_t replay_unlink(struct fc_replay *r, const unsigned char *val,
			       int len)
{
	struct ext2_inode_large *inode = NULL, *dir = NULL;
	struct dentry_args d;
	ext2_ino_t found;
	int ok;
	errcode_t retval;

	tag_to_dentry(val, len, &d);
	retval = ext2fs_get_memzero(r->isize, &inode);
	if (!retval)
		retval = ext2fs_get_memzero(r->isize, &dir);
	if (retval)
		goto errout;
	retval = fc_iget(r, d.ino, inode, &ok);
	if (retval || !ok)
		goto errout;
	retval = fc_iget(r, d.parent, dir, &ok);
	if (retval || !ok)
		goto errout;
	retval = check_parent(r, dir);
	if (retval)
		goto errout;
	retval = find_entry(r, &d, 1, &found);
	if (retval || !found)		/* -ENOENT is fine */
		goto errout;
	if (found == d.ino) {
		retval = read_inode(r, d.parent, dir);
		if (retval)
			goto errout;
		set_now(dir, 1);
		retval = fc_write_inode(r, d.parent, dir);
		if (retval)
			goto errout;
	}
	/* the link is dropped even when the name is another inode's */
	if (inode->i_links_count)
		inode->i_links_count--;
	set_now(inode, 0);
	retval = fc_write_inode(r, d.ino, inode);
	if (!retval && !inode->i_links_count)
		retval = evict_inode(r, d.ino, inode);
errout:
	ext2fs_free_mem(&inode);
	ext2fs_free_mem(&dir);
	return retval;
}

/* ext4_fc_replay_link() */
static errcode_t replay_link(struct fc_replay *r, const unsigned char *val,
			     int len)
{
	struct ext2_inode_large *inode;
	struct dentry_args d;
	int ok;
	errcode_t retval;

	tag_to_dentry(val, len, &d);
	retval = ext2fs_get_memzero(r->isize, &inode);
	if (retval)
		return retval;
	retval = fc_iget(r, d.ino, inode, &ok);
	if (!retval && ok)
		retval = link_entry(r, &d, inode);
	ext2fs_free_mem(&inode);
	return retval;
}

/* ext4_init_new_dir(): "." and ".." in logical block 0 */
static errcode_t init_new_dir(struct fc_replay *r, ext2_ino_t ino,
			      struct ext2_inode_large *inode,
			      ext2_ino_t parent)
{
	ext2_filsys fs = r->fs;
	struct ext2_inode_large before;
	blk64_t pblk = 0;
	char *block = NULL;
	errcode_t retval;

	if (ext2fs_has_feature_inline_data(fs->super))
		return refuse(r, "the kernel makes new directories inline, "
			      "which this version does not replay");
	inode->i_size = 0;
	inode->i_size_high = 0;
	retval = fc_write_inode(r, ino, inode);
	if (retval)
		return retval;
	before = *inode;
	retval = ext2fs_bmap2(fs, ino, EXT2_INODE(inode), NULL, BMAP_ALLOC, 0,
			      NULL, &pblk);
	if (!retval)
		retval = restore_iblocks(r, ino, &before);
	if (retval)
		return retval;
	retval = ext2fs_new_dir_block(fs, ino, parent, &block);
	if (retval)
		return retval;
	retval = ext2fs_write_dir_block4(fs, pblk, block, 0, ino);
	ext2fs_free_mem(&block);
	if (retval)
		return retval;
	/* ext2fs_bmap2() wrote the inode with its new block and i_blocks */
	retval = read_inode(r, ino, inode);
	if (retval)
		return retval;
	inode->i_size = fs->blocksize;
	inode->i_links_count = 2;
	return fc_write_inode(r, ino, inode);
}

/* ext4_fc_replay_create() */
static errcode_t replay_create(struct fc_replay *r, const unsigned char *val,
			       int len)
{
	struct ext2_inode_large *inode = NULL, *dir = NULL;
	struct dentry_args d;
	int ok;
	errcode_t retval;

	tag_to_dentry(val, len, &d);
	retval = mark_inode_used(r, d.ino);
	if (retval)
		return retval;
	retval = ext2fs_get_memzero(r->isize, &inode);
	if (!retval)
		retval = ext2fs_get_memzero(r->isize, &dir);
	if (retval)
		goto errout;
	retval = fc_iget(r, d.ino, inode, &ok);
	if (!retval && !ok)
		retval = refuse(r, "the new inode is not one the kernel reads");
	if (retval)
		goto errout;
	if (LINUX_S_ISDIR(inode->i_mode)) {
		retval = fc_iget(r, d.parent, dir, &ok);
		if (retval || !ok)
			goto errout;
		retval = init_new_dir(r, d.ino, inode, d.parent);
		if (retval == EXT2_ET_FC_DAMAGED || retval == EXT2_ET_NO_MEMORY)
			goto errout;
		if (retval) {		/* the kernel gives up quietly */
			retval = 0;
			goto errout;
		}
	}
	retval = link_entry(r, &d, inode);
	if (retval)
		goto errout;
	inode->i_links_count = 1;
	retval = fc_write_inode(r, d.ino, inode);
errout:
	ext2fs_free_mem(&inode);
	ext2fs_free_mem(&dir);
	return retval;
}

/* --- inodes and ranges ---------------------------------------------------- */

/* ext4_fc_replay_inode() */
static errcode_t replay_inode(struct fc_replay *r, const unsigned char *val,
			      int len)
{
	ext2_filsys fs = r->fs;
	ext2_ino_t ino = get_le32(val);
	const unsigned char *raw = val + FC_INODE_LEN;
	int raw_len = len - FC_INODE_LEN;
	size_t off_block = offsetof(struct ext2_inode_large, i_block);
	size_t off_gen = offsetof(struct ext2_inode_large, i_generation);
	struct ext2_inode_large *inode = NULL, *fc_inode = NULL;
	struct ext3_extent_header *eh;
	blk64_t count;
	int ok;
	errcode_t retval;

	retval = ext2fs_get_memzero(r->isize, &inode);
	if (!retval)
		retval = ext2fs_get_memzero(r->isize, &fc_inode);
	if (retval)
		goto errout;
	retval = fc_iget(r, ino, inode, &ok);
	if (retval)
		goto errout;
	if (ok) {
		retval = walk_blocks(r, ino, inode, WALK_CLEAR, NULL);
		if (retval)
			goto errout;
	}
	retval = record_modified(r, ino);
	if (retval)
		goto errout;
	if (ino < EXT2_ROOT_INO || ino > fs->super->s_inodes_count) {
		retval = refuse(r, "a nonexistent inode");
		goto errout;
	}

	/* the logged inode, but the block map found on disk */
	memcpy(fc_inode, raw, raw_len);
#ifdef WORDS_BIGENDIAN
	ext2fs_swap_inode_full(fs, fc_inode, fc_inode, 0, raw_len);
#endif
	retval = read_inode(r, ino, inode);
	if (retval)
		goto errout;
	memcpy(inode, fc_inode, off_block);
	memcpy((char *) inode + off_gen, (char *) fc_inode + off_gen,
	       raw_len - off_gen);
	if (inode->i_flags & EXT4_EXTENTS_FL) {
		eh = (struct ext3_extent_header *) inode->i_block;
		if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC) {
			memset(eh, 0, sizeof(*eh));
			eh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
			eh->eh_max = ext2fs_cpu_to_le16(
				(sizeof(inode->i_block) - sizeof(*eh)) /
				sizeof(struct ext3_extent));
		}
	} else if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		memcpy(inode->i_block, fc_inode->i_block,
		       sizeof(inode->i_block));
	}
	retval = fc_write_inode(r, ino, inode);
	if (!retval)
		retval = mark_inode_used(r, ino);
	if (retval)
		goto errout;

	/* "Given that we just wrote the inode on disk, this SHOULD succeed" */
	retval = fc_iget(r, ino, inode, &ok);
	if (!retval && !ok)
		retval = refuse(r, "the logged inode is not one the kernel "
				"reads");
	if (retval)
		goto errout;
	if (!(inode->i_flags & EXT4_INLINE_DATA_FL)) {
		retval = walk_blocks(r, ino, inode, WALK_COUNT, &count);
		if (!retval)
			retval = ext2fs_iblk_set(fs, EXT2_INODE(inode), count);
		if (retval)
			goto errout;
	}
	retval = fc_write_inode(r, ino, inode);
errout:
	ext2fs_free_mem(&inode);
	ext2fs_free_mem(&fc_inode);
	return retval;
}

/* An extent-mapped inode the replay may change the block map of */
static errcode_t range_inode(struct fc_replay *r, ext2_ino_t ino,
			     struct ext2_inode_large *inode, int *ok)
{
	errcode_t retval;

	retval = fc_iget(r, ino, inode, ok);
	if (retval || !*ok)
		return retval;
	retval = record_modified(r, ino);
	if (retval)
		return retval;
	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return refuse(r, "a range of an inode whose data is inline");
	if (!(inode->i_flags & EXT4_EXTENTS_FL))
		return refuse(r, "a range of an inode mapped without extents");
	return 0;
}

/*
 * ext4_fc_replay_add_range(): map logical blocks to the logged physical
 * ones, whatever they mapped to before (those blocks are freed), with
 * the logged written/unwritten state.
 */
static errcode_t replay_add_range(struct fc_replay *r,
				  const unsigned char *val)
{
	ext2_filsys fs = r->fs;
	ext2_ino_t ino = get_le32(val);
	const unsigned char *ex = val + 4;
	__u32 lblk = get_le32(ex);
	__u16 ee_len = get_le16(ex + 4);
	blk64_t pblk = ((blk64_t) get_le16(ex + 6) << 32) | get_le32(ex + 8);
	struct ext2_inode_large *inode, before;
	ext2_extent_handle_t handle = NULL;
	int uninit = ee_len > FC_INIT_MAX_LEN;
	__u32 len = uninit ? ee_len - FC_INIT_MAX_LEN : ee_len, i;
	blk64_t cur;
	int flags, ok;
	errcode_t retval;

	retval = ext2fs_get_memzero(r->isize, &inode);
	if (retval)
		return retval;
	retval = range_inode(r, ino, inode, &ok);
	if (retval || !ok)
		goto errout;
	before = *inode;
	retval = ext2fs_extent_open2(fs, ino, EXT2_INODE(inode), &handle);
	if (retval)
		goto errout;
	for (i = 0; i < len; i++) {
		cur = 0;
		flags = 0;
		retval = ext2fs_bmap2(fs, ino, EXT2_INODE(inode), NULL, 0,
				      lblk + i, &flags, &cur);
		if (retval)
			goto errout;
		if (cur == pblk + i && !(flags & BMAP_RET_UNINIT) == !uninit)
			continue;
		if (cur && cur != pblk + i &&
		    cur >= fs->super->s_first_data_block &&
		    cur < ext2fs_blocks_count(fs->super)) {
			ext2fs_unmark_block_bitmap2(fs->block_map, cur);
			ext2fs_mark_bb_dirty(fs);
		}
		retval = ext2fs_extent_set_bmap(handle, lblk + i, pblk + i,
				uninit ? EXT2_EXTENT_SET_BMAP_UNINIT : 0);
		if (retval)
			goto errout;
		/* the handle wrote the inode: read what bmap2 must see */
		retval = read_inode(r, ino, inode);
		if (retval)
			goto errout;
	}
	retval = restore_iblocks(r, ino, &before);
errout:
	if (handle)
		ext2fs_extent_free(handle);
	ext2fs_free_mem(&inode);
	return retval;
}

/*
 * ext4_fc_replay_del_range(): unmap the logical range; its blocks and
 * any tree block left empty are freed.
 */
static errcode_t replay_del_range(struct fc_replay *r,
				  const unsigned char *val)
{
	ext2_ino_t ino = get_le32(val);
	blk64_t lblk = get_le32(val + 4);
	blk64_t len = get_le32(val + 8);
	struct ext2_inode_large *inode, before;
	blk64_t end;
	int ok;
	errcode_t retval;

	retval = ext2fs_get_memzero(r->isize, &inode);
	if (retval)
		return retval;
	retval = range_inode(r, ino, inode, &ok);
	if (retval || !ok || !len)
		goto errout;
	end = lblk + len - 1;
	if (end >= EXT_MAX_BLOCKS)
		end = EXT_MAX_BLOCKS - 1;
	before = *inode;
	retval = ext2fs_punch(r->fs, ino, EXT2_INODE(inode), NULL, lblk, end);
	if (!retval)
		retval = restore_iblocks(r, ino, &before);
errout:
	ext2fs_free_mem(&inode);
	return retval;
}

/*
 * The free counts of every group whose bitmaps the replay changed, as
 * ext4_mb_mark_bb() and ext4_mark_inode_used() keep them; the flags and
 * counts of the others are left as found.
 */
static void group_counts(ext2_filsys fs)
{
	blk64_t first, last, blk, free_b, total_b = 0;
	ext2_ino_t ino, ipg = fs->super->s_inodes_per_group;
	__u32 free_i, total_i = 0;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		first = ext2fs_group_first_block2(fs, g);
		last = ext2fs_group_last_block2(fs, g);
		free_b = 0;
		for (blk = first; blk <= last; blk++)
			if (!ext2fs_fast_test_block_bitmap2(fs->block_map, blk))
				free_b++;
		free_i = 0;
		for (ino = g * ipg + 1; ino <= (g + 1) * ipg; ino++)
			if (!ext2fs_fast_test_inode_bitmap2(fs->inode_map, ino))
				free_i++;
		total_b += free_b;
		total_i += free_i;
		if (free_b == ext2fs_bg_free_blocks_count(fs, g) &&
		    free_i == ext2fs_bg_free_inodes_count(fs, g))
			continue;
		if (free_b < ext2fs_bg_free_blocks_count(fs, g))
			ext2fs_bg_flags_clear(fs, g, EXT2_BG_BLOCK_UNINIT);
		ext2fs_bg_free_blocks_count_set(fs, g, free_b);
		ext2fs_bg_free_inodes_count_set(fs, g, free_i);
		ext2fs_group_desc_csum_set(fs, g);
	}
	ext2fs_free_blocks_count_set(fs->super, total_b);
	fs->super->s_free_inodes_count = total_i;
	ext2fs_mark_super_dirty(fs);
	ext2fs_mark_bb_dirty(fs);
	ext2fs_mark_ib_dirty(fs);
}

/* ext4_fc_set_bitmaps_and_counters() */
static errcode_t set_bitmaps(struct fc_replay *r)
{
	struct ext2_inode_large *inode;
	int i, ok;
	errcode_t retval;

	retval = ext2fs_get_memzero(r->isize, &inode);
	if (retval)
		return retval;
	for (i = 0; i < r->nmodified; i++) {
		retval = fc_iget(r, r->modified[i], inode, &ok);
		if (retval)
			break;
		if (!ok)
			continue;
		retval = walk_blocks(r, r->modified[i], inode, WALK_MARK,
				     NULL);
		if (retval)
			break;
	}
	ext2fs_free_mem(&inode);
	return retval;
}

/* --- the two passes ------------------------------------------------------- */

/*
 * A block of the area.  Past the journal's end the kernel's read fails
 * and the mount with it.
 */
static errcode_t fc_read_block(struct fc_replay *r, __u32 jblk)
{
	r->jblk = jblk;
	if (jblk >= r->j->total_len)
		return EXT2_ET_FC_DAMAGED;
	return ext2fs_journal_read_block(r->j, jblk, r->buf);
}

/* ext4_fc_value_len_isvalid() */
static int tag_len_valid(struct fc_replay *r, __u16 tag, unsigned int len)
{
	switch (tag) {
	case FC_TAG_ADD_RANGE:
		return len == FC_ADD_RANGE_LEN;
	case FC_TAG_DEL_RANGE:
		return len == FC_DEL_RANGE_LEN;
	case FC_TAG_CREAT:
	case FC_TAG_LINK:
	case FC_TAG_UNLINK:
		return len > FC_DENTRY_LEN &&
		       len - FC_DENTRY_LEN <= EXT2_NAME_LEN;
	case FC_TAG_INODE:
		return len >= FC_INODE_LEN + EXT2_GOOD_OLD_INODE_SIZE &&
		       len - FC_INODE_LEN <= r->isize;
	case FC_TAG_PAD:
		return 1;
	case FC_TAG_TAIL:
		return len >= FC_TAIL_LEN;
	case FC_TAG_HEAD:
		return len == FC_HEAD_LEN;
	}
	return 0;
}

/*
 * Where the kernel's scan ends the area: with what is valid so far, or,
 * when nothing is, refusing to mount.
 */
static errcode_t scan_stop(struct fc_replay *r, int *more)
{
	*more = 0;
	return r->num_tags ? 0 : EXT2_ET_FC_DAMAGED;
}

/* ext4_fc_record_regions() for an ADD_RANGE tag */
static errcode_t scan_add_range(struct fc_replay *r, const unsigned char *val)
{
	const unsigned char *ex = val + 4;
	__u16 len = get_le16(ex + 4);
	blk64_t pblk = ((blk64_t) get_le16(ex + 6) << 32) | get_le32(ex + 8);

	if (len > FC_INIT_MAX_LEN)
		len -= FC_INIT_MAX_LEN;
	return record_region(r, get_le32(val), pblk, len, 0);
}

/*
 * ext4_fc_replay_scan(): one block of the area.  *@more is cleared where
 * the kernel returns JBD2_FC_REPLAY_STOP.
 */
static errcode_t scan_block(struct fc_replay *r, const unsigned char *b,
			    __u32 off, int *more)
{
	unsigned int bs = r->j->blocksize, pos, len;
	const unsigned char *val;
	errcode_t retval;
	__u16 tag;

	*more = 1;
	if (off == 0 && get_le16(b) != FC_TAG_HEAD) {
		*more = 0;		/* no fast commit at all */
		return 0;
	}
	for (pos = 0; pos + FC_TL_LEN <= bs; pos += FC_TL_LEN + len) {
		tag = get_le16(b + pos);
		len = get_le16(b + pos + 2);
		val = b + pos + FC_TL_LEN;
		r->tag = tag;
		if (len > bs - pos - FC_TL_LEN || !tag_len_valid(r, tag, len))
			return scan_stop(r, more);
		switch (tag) {
		case FC_TAG_ADD_RANGE:
			retval = scan_add_range(r, val);
			if (retval)
				return retval;
			/* fall through */
		case FC_TAG_DEL_RANGE:
		case FC_TAG_LINK:
		case FC_TAG_UNLINK:
		case FC_TAG_CREAT:
		case FC_TAG_INODE:
		case FC_TAG_PAD:
			r->cur_tag++;
			r->crc = ext2fs_crc32c_le(r->crc, b + pos,
						  FC_TL_LEN + len);
			break;
		case FC_TAG_TAIL:
			r->cur_tag++;
			r->crc = ext2fs_crc32c_le(r->crc, b + pos,
						  FC_TL_LEN + 4);
			if (get_le32(val) != r->tid ||
			    get_le32(val + 4) != r->crc)
				return scan_stop(r, more);
			r->num_tags = r->cur_tag;
			r->regions_valid = r->regions_used;
			r->num_commits++;
			r->crc = 0;
			break;
		case FC_TAG_HEAD:
			if (get_le32(val) & ~FC_SUPPORTED_FEATURES)
				return refuse(r, "unknown features");
			if (get_le32(val + 4) != r->tid) {
				*more = 0;
				return 0;
			}
			r->cur_tag++;
			r->crc = ext2fs_crc32c_le(r->crc, b + pos,
						  FC_TL_LEN + len);
			break;
		default:
			return scan_stop(r, more);
		}
	}
	return 0;
}

/* ext4_fc_replay(): the tags of one block, while any are left */
static errcode_t replay_block(struct fc_replay *r, const unsigned char *b,
			      int *left)
{
	unsigned int bs = r->j->blocksize, pos, len;
	const unsigned char *val;
	errcode_t retval = 0;

	for (pos = 0; pos + FC_TL_LEN <= bs && *left;
	     pos += FC_TL_LEN + len) {
		len = get_le16(b + pos + 2);
		val = b + pos + FC_TL_LEN;
		(*left)--;
		r->tag = get_le16(b + pos);
		r->ino = len >= 8 ? get_le32(val + (r->tag == FC_TAG_CREAT ||
			 r->tag == FC_TAG_LINK || r->tag == FC_TAG_UNLINK ?
			 4 : 0)) : 0;
		switch (r->tag) {
		case FC_TAG_LINK:
			retval = replay_link(r, val, len);
			break;
		case FC_TAG_UNLINK:
			retval = replay_unlink(r, val, len);
			break;
		case FC_TAG_ADD_RANGE:
			retval = replay_add_range(r, val);
			break;
		case FC_TAG_CREAT:
			retval = replay_create(r, val, len);
			break;
		case FC_TAG_DEL_RANGE:
			retval = replay_del_range(r, val);
			break;
		case FC_TAG_INODE:
			retval = replay_inode(r, val, len);
			break;
		case FC_TAG_PAD:
		case FC_TAG_TAIL:
		case FC_TAG_HEAD:
			break;
		default:		/* the scan let it through: a bug */
			retval = refuse(r, "an unknown tag");
		}
		if (retval)
			return retval;
	}
	return 0;
}

/*
 * fc_do_one_pass(): the kernel reads from j_fc_first up to and
 * including j_fc_last (s_maxlen, one past the journal: reading it fails
 * and the mount with it, should valid tags run on that far).
 */
static errcode_t scan_area(struct fc_replay *r)
{
	struct ext2fs_journal *j = r->j;
	__u32 jblk;
	int more = 1;
	errcode_t retval = 0;

	for (jblk = j->fc_first; more && jblk <= j->fc_last; jblk++) {
		retval = fc_read_block(r, jblk);
		if (retval)
			return retval;
		retval = scan_block(r, r->buf, jblk - j->fc_first, &more);
		if (retval)
			return retval;
	}
	return 0;
}

static errcode_t replay_area(struct fc_replay *r)
{
	struct ext2fs_journal *j = r->j;
	int left = r->num_tags;
	__u32 jblk;
	errcode_t retval = 0;

	for (jblk = j->fc_first; left && jblk <= j->fc_last; jblk++) {
		retval = fc_read_block(r, jblk);
		if (!retval)
			retval = replay_block(r, r->buf, &left);
		if (retval)
			return retval;
	}
	retval = set_bitmaps(r);
	if (!retval)
		group_counts(r->fs);
	return retval;
}

static const char *tag_name(__u16 tag)
{
	static const char *const names[] = {
		"unknown", "ADD_RANGE", "DEL_RANGE", "CREAT", "LINK",
		"UNLINK", "INODE", "PAD", "TAIL", "HEAD"
	};

	return names[tag <= FC_TAG_HEAD ? tag : 0];
}

/* Why, for the caller's message; the first reason given is kept */
static void say_why(struct fc_replay *r, int replaying, errcode_t code)
{
	struct ext2fs_journal *j = r->j;

	if (j->why[0])
		return;
	if (!replaying && r->reason)
		snprintf(j->why, sizeof(j->why), "the fast commits of "
			 "transaction %u have %s", r->tid, r->reason);
	else if (!replaying && r->jblk >= j->total_len)
		snprintf(j->why, sizeof(j->why), "the fast commits of "
			 "transaction %u run past the journal's end",
			 r->tid);
	else if (!replaying)
		snprintf(j->why, sizeof(j->why), "the first fast commit of "
			 "transaction %u is damaged (%s at journal block %u): "
			 "the kernel refuses to mount it", r->tid,
			 r->tag == FC_TAG_TAIL ? "checksum" : tag_name(r->tag),
			 r->jblk);
	else
		snprintf(j->why, sizeof(j->why), "fast-commit %s tag of "
			 "inode %u (journal block %u): %s", tag_name(r->tag),
			 r->ino, r->jblk,
			 r->reason ? r->reason : error_message(code));
}

errcode_t ext2fs_fc_replay(ext2_filsys fs, struct ext2fs_journal *j,
			   struct ext2fs_replay_stats *stats)
{
	errcode_t (*old_alloc)(ext2_filsys, blk64_t, blk64_t *) = NULL;
	struct fc_replay r;
	int ignore;
	errcode_t retval;

	/* jbd2 only looks at the area of a journal that says it has one */
	if (!(j->incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT) || !j->start)
		return 0;
	if (!(fs->flags & EXT2_FLAG_RW))
		return EXT2_ET_RO_FILSYS;
	memset(&r, 0, sizeof(r));
	r.fs = fs;
	r.j = j;
	r.tid = j->end_tid;
	r.isize = EXT2_INODE_SIZE(fs->super);
	retval = ext2fs_get_mem(j->blocksize, &r.buf);
	if (retval)
		return retval;
	retval = scan_area(&r);
	if (retval == EXT2_ET_FC_DAMAGED)
		say_why(&r, 0, retval);
	if (retval || !r.num_tags)
		goto errout;

	/* ext4_validate_block_bitmap() lets anything through in a replay */
	ignore = fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS;
	fs->flags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
	retval = ext2fs_read_bitmaps(fs);
	if (!ignore)
		fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;
	if (retval)
		goto errout;
	fc_active = &r;
	ext2fs_set_alloc_block_callback(fs, fc_alloc_block, &old_alloc);
	retval = replay_area(&r);
	ext2fs_set_alloc_block_callback(fs, old_alloc, NULL);
	fc_active = NULL;
	/* a replay stopped half way is not what the kernel would mount */
	if (retval && retval != EXT2_ET_NO_MEMORY) {
		say_why(&r, 1, retval);
		retval = EXT2_ET_FC_DAMAGED;
	}
	if (!retval && stats) {
		stats->fc_commits += r.num_commits;
		stats->fc_tags += r.num_tags;
	}
errout:
	ext2fs_free_mem(&r.buf);
	ext2fs_free_mem(&r.regions);
	ext2fs_free_mem(&r.modified);
	return retval;
}
