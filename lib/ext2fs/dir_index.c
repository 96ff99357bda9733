/*
 * dir_index.c --- build and grow htree directory indexes
 *
 * A directory filled by appending to it, as a restore does, is linear,
 * and every lookup in it reads the whole directory.  The kernel indexes
 * a directory as soon as it outgrows one block; ext2fs_dx_index_dir()
 * gives a filled directory such an index, and ext2fs_dx_split_leaf()
 * makes room in a full leaf of an indexed directory the way the
 * kernel's do_split() does, rather than giving the index up.
 *
 * The hashes are the kernel's: the root's hash version (its unsigned
 * variant when the superblock says so) and the filesystem's seed, over
 * the name as it is on disk -- in an encrypted directory, the
 * ciphertext -- except in a casefolded encrypted directory, whose
 * entries carry their hash after the name, since it cannot be computed
 * without the key.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <stdlib.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

#define DX_ROOT_INFO_OFFSET	24	/* after "." and ".." */
#define DX_ROOT_ENTRIES		32	/* after the root info */
#define DX_NODE_ENTRIES		8	/* after the fake empty entry */
#define DX_MAX_DEPTH		3	/* index levels, root included */
#define DX_SLACK_PERCENT	20	/* room left in a built leaf */

struct dx_dir {
	ext2_filsys fs;
	ext2_ino_t ino;
	struct ext2_inode inode;
	int hash_version;	/* for ext2fs_dirhash2: unsigned applied */
	int hash_in_dirent;
	unsigned int csum_size;	/* a leaf's dirent tail */
	unsigned int root_limit, node_limit;
	unsigned int max_depth;
};

/* One entry being sorted: where it is and its hash */
struct dx_rec {
	struct ext2_dir_entry *de;
	__u32 hash, minor;
};

static errcode_t dx_dir_open(ext2_filsys fs, ext2_ino_t ino,
			     struct dx_dir *d)
{
	unsigned int dx_csum = 0;
	errcode_t retval;

	memset(d, 0, sizeof(*d));
	d->fs = fs;
	d->ino = ino;
	if (!(fs->flags & EXT2_FLAG_RW))
		return EXT2_ET_RO_FILSYS;
	retval = ext2fs_read_inode(fs, ino, &d->inode);
	if (retval)
		return retval;
	if (!LINUX_S_ISDIR(d->inode.i_mode))
		return EXT2_ET_NO_DIRECTORY;
	if (d->inode.i_flags & EXT4_INLINE_DATA_FL)
		return EXT2_ET_INLINE_DATA_CANT_ITERATE;
	if (ext2fs_has_feature_metadata_csum(fs->super)) {
		d->csum_size = sizeof(struct ext2_dir_entry_tail);
		dx_csum = sizeof(struct ext2_dx_tail);
	}
	d->root_limit = (fs->blocksize - DX_ROOT_ENTRIES - dx_csum) /
			sizeof(struct ext2_dx_entry);
	d->node_limit = (fs->blocksize - DX_NODE_ENTRIES - dx_csum) /
			sizeof(struct ext2_dx_entry);
	d->max_depth = ext2fs_has_feature_largedir(fs->super) ?
		       DX_MAX_DEPTH : DX_MAX_DEPTH - 1;
	d->hash_in_dirent = !!ext4_hash_in_dirent(&d->inode);
	return 0;
}

/* The version the kernel hashes with, from the root's */
static errcode_t dx_set_version(struct dx_dir *d, int version)
{
	if (d->hash_in_dirent != (version == EXT2_HASH_SIPHASH))
		return EXT2_ET_DIR_CORRUPTED;
	if (version > EXT2_HASH_TEA && version != EXT2_HASH_SIPHASH)
		return EXT2_ET_DIRHASH_UNSUPP;
	if (version <= EXT2_HASH_TEA &&
	    (d->fs->super->s_flags & EXT2_FLAGS_UNSIGNED_HASH))
		version += 3;
	d->hash_version = version;
	return 0;
}

static errcode_t dx_hash(struct dx_dir *d, const __u8 *name, int len,
			 const struct ext2_dir_entry_hash *stored,
			 __u32 *hash, __u32 *minor)
{
	ext2_dirhash_t h = 0, m = 0;
	errcode_t retval;

	if (d->hash_in_dirent) {
		if (!stored)
			return EXT2_ET_CRYPT_BAD_DIRENT_HASH;
		*hash = ext2fs_le32_to_cpu(stored->hash);
		*minor = ext2fs_le32_to_cpu(stored->minor_hash);
		return 0;
	}
	/* a casefolded plaintext name folds first, as in the kernel */
	retval = ext2fs_dirhash2(d->hash_version, (const char *) name, len,
				 d->fs->encoding,
				 d->inode.i_flags & EXT4_CASEFOLD_FL,
				 d->fs->super->s_hash_seed, &h, &m);
	*hash = h;
	*minor = m;
	return retval;
}

static errcode_t dx_entry_hash(struct dx_dir *d, struct ext2_dir_entry *de,
			       unsigned int rec_len, __u32 *hash,
			       __u32 *minor)
{
	int len = ext2fs_dirent_name_len(de);

	if (d->hash_in_dirent &&
	    rec_len < ext2fs_dir_rec_len(len, 1))
		return EXT2_ET_DIR_CORRUPTED;
	return dx_hash(d, (__u8 *) de->name, len,
		       d->hash_in_dirent ? EXT2_DIRENT_HASHES(de) : NULL,
		       hash, minor);
}

static int dx_rec_cmp(const void *a, const void *b)
{
	const struct dx_rec *ra = a, *rb = b;
	int la, lb, ret;

	if (ra->hash != rb->hash)
		return ra->hash < rb->hash ? -1 : 1;
	if (ra->minor != rb->minor)
		return ra->minor < rb->minor ? -1 : 1;
	la = ext2fs_dirent_name_len(ra->de);
	lb = ext2fs_dirent_name_len(rb->de);
	ret = memcmp(ra->de->name, rb->de->name, la < lb ? la : lb);
	if (ret)
		return ret;
	return la - lb;
}

static errcode_t dx_lblk_to_pblk(struct dx_dir *d, blk64_t lblk,
				 blk64_t *pblk)
{
	errcode_t retval;

	retval = ext2fs_bmap2(d->fs, d->ino, &d->inode, NULL, 0, lblk, NULL,
			      pblk);
	if (!retval && !*pblk)
		retval = EXT2_ET_DIR_CORRUPTED;
	return retval;
}

static errcode_t dx_read(struct dx_dir *d, blk64_t lblk, char *buf)
{
	blk64_t pblk;
	errcode_t retval;

	retval = dx_lblk_to_pblk(d, lblk, &pblk);
	if (!retval)
		retval = ext2fs_read_dir_block4(d->fs, pblk, buf, 0, d->ino);
	return retval;
}

static errcode_t dx_write(struct dx_dir *d, blk64_t lblk, char *buf)
{
	blk64_t pblk;
	errcode_t retval;

	retval = dx_lblk_to_pblk(d, lblk, &pblk);
	if (!retval)
		retval = ext2fs_write_dir_block4(d->fs, pblk, buf, 0, d->ino);
	return retval;
}

/*
 * Give the directory one more block, written as an empty leaf so the
 * directory stays whole if we stop before filling it.
 */
static errcode_t dx_append_block(struct dx_dir *d, char *buf,
				 blk64_t *lblk)
{
	ext2_filsys fs = d->fs;
	struct ext2_dir_entry *de = (struct ext2_dir_entry *) buf;
	blk64_t pblk = 0, next = EXT2_I_SIZE(&d->inode) / fs->blocksize;
	errcode_t retval;

	retval = ext2fs_bmap2(fs, d->ino, &d->inode, NULL, BMAP_ALLOC, next,
			      NULL, &pblk);
	if (retval)
		return retval;
	memset(buf, 0, fs->blocksize);
	retval = ext2fs_set_rec_len(fs, fs->blocksize - d->csum_size, de);
	if (retval)
		return retval;
	if (d->csum_size)
		ext2fs_initialize_dirent_tail(fs,
			EXT2_DIRENT_TAIL(buf, fs->blocksize));
	retval = ext2fs_write_dir_block4(fs, pblk, buf, 0, d->ino);
	if (retval)
		return retval;
	retval = ext2fs_inode_size_set(fs, &d->inode,
				       (next + 1) * fs->blocksize);
	if (!retval)
		retval = ext2fs_write_inode(fs, d->ino, &d->inode);
	*lblk = next;
	return retval;
}

/*
 * The blocks of the new index, the root (block 0) first, then the
 * leaves in hash order, then the index nodes.  They go to new blocks,
 * not yet the directory's, each written as soon as it is whole: the
 * linear directory stays as it is on disk until the index is whole
 * (ext2fs_dx_index_dir() then maps them in its place), so that giving
 * up is freeing them.  The hash each starts with (its low bit set when
 * the previous block ends with the same hash: the kernel's
 * "continued") goes to @start.
 */
struct dx_out {
	char *block;		/* the one being filled */
	__u32 *start;
	blk64_t *pblk;		/* where each went; 0 not yet written */
	size_t blocks, size;	/* laid out; room in @start and @pblk */
	blk64_t goal, clusters;	/* taken */
	/* the leaf being packed */
	unsigned int used, slack;
	struct ext2_dir_entry *last;
	__u32 prev_hash;	/* of the entry packed last */
	size_t packed;
};

static errcode_t dx_out_block(struct dx_dir *d, struct dx_out *o,
			      char **block)
{
	size_t size;
	errcode_t retval;

	if (o->blocks == o->size) {
		size = o->size ? o->size * 2 : 16;
		retval = ext2fs_resize_array(sizeof(__u32), o->size, size,
					     &o->start);
		if (!retval)
			retval = ext2fs_resize_array(sizeof(blk64_t), o->size,
						     size, &o->pblk);
		if (retval)
			return retval;
		o->size = size;
	}
	*block = o->block;
	memset(*block, 0, d->fs->blocksize);
	o->start[o->blocks] = 0;
	o->pblk[o->blocks] = 0;
	o->blocks++;
	return 0;
}

/*
 * Where block @i of the new index goes: a block of a new cluster, or
 * of the cluster its neighbours took, at its own offset in it (on a
 * bigalloc filesystem the blocks of a logical cluster share one).
 */
static errcode_t dx_out_place(struct dx_dir *d, struct dx_out *o, size_t i,
			      blk64_t *pblk)
{
	ext2_filsys fs = d->fs;
	size_t ratio = EXT2FS_CLUSTER_RATIO(fs);
	size_t first = i & ~(ratio - 1), j;
	blk64_t b;
	errcode_t retval;

	for (j = first; j < first + ratio && j < o->blocks; j++) {
		if (o->pblk[j]) {
			*pblk = o->pblk[j] - (j - first) + (i - first);
			return 0;
		}
	}
	retval = ext2fs_new_block2(fs, o->goal, NULL, &b);
	if (retval)
		return retval;
	b &= ~(blk64_t) EXT2FS_CLUSTER_MASK(fs);
	ext2fs_block_alloc_stats2(fs, b, +1);
	o->clusters++;
	o->goal = b + ratio;
	*pblk = b + (i - first);
	return 0;
}

/*
 * Where the new index should begin: a free run long enough for all of
 * it, as the linear directory's @nblocks suggest (leaves are left
 * DX_SLACK_PERCENT empty; the root and a few nodes besides), so that
 * its blocks follow each other; else the inode's goal, as it was.
 */
static void dx_out_goal(struct dx_dir *d, struct dx_out *o, blk64_t nblocks)
{
	blk64_t want, start, len;

	want = nblocks * 100 / (100 - DX_SLACK_PERCENT) + 1 + DX_MAX_DEPTH;
	if (!ext2fs_new_range(d->fs, EXT2_NEWRANGE_MIN_LENGTH, o->goal, want,
			      NULL, &start, &len))
		o->goal = start;
}

/* Write block @i of the new index to a block of its own */
static errcode_t dx_out_write(struct dx_dir *d, struct dx_out *o, size_t i)
{
	blk64_t pblk;
	errcode_t retval;

	retval = dx_out_place(d, o, i, &pblk);
	if (retval)
		return retval;
	o->pblk[i] = pblk;
	return ext2fs_write_dir_block4(d->fs, pblk, o->block, 0, d->ino);
}

/* Giving up: the clusters taken for the index are free again */
static void dx_out_release(struct dx_dir *d, struct dx_out *o)
{
	size_t ratio = EXT2FS_CLUSTER_RATIO(d->fs), first, j;

	for (first = 0; first < o->blocks; first += ratio) {
		for (j = first; j < first + ratio && j < o->blocks; j++) {
			if (o->pblk[j]) {
				ext2fs_block_alloc_stats2(d->fs, o->pblk[j],
							  -1);
				break;
			}
		}
	}
}

/* Close a leaf: its last entry takes what is left; the tail goes on. */
static errcode_t dx_close_leaf(struct dx_dir *d, char *block,
			       struct ext2_dir_entry *last,
			       unsigned int used)
{
	ext2_filsys fs = d->fs;
	unsigned int room = fs->blocksize - d->csum_size;
	unsigned int rec_len;
	errcode_t retval;

	if (last) {
		retval = ext2fs_get_rec_len(fs, last, &rec_len);
		if (!retval)
			retval = ext2fs_set_rec_len(fs, rec_len + room - used,
						    last);
	} else {
		retval = ext2fs_set_rec_len(fs, room,
					    (struct ext2_dir_entry *) block);
	}
	if (!retval && d->csum_size)
		ext2fs_initialize_dirent_tail(fs,
			EXT2_DIRENT_TAIL(block, fs->blocksize));
	return retval;
}

static void dx_copy_entry(struct dx_dir *d, struct ext2_dir_entry *to,
			  const struct dx_rec *r)
{
	int len = ext2fs_dirent_name_len(r->de);

	to->inode = r->de->inode;
	ext2fs_dirent_set_name_len(to, len);
	ext2fs_dirent_set_file_type(to, ext2fs_dirent_file_type(r->de));
	memcpy(to->name, r->de->name, len);
	if (d->hash_in_dirent) {
		EXT2_DIRENT_HASHES(to)->hash = ext2fs_cpu_to_le32(r->hash);
		EXT2_DIRENT_HASHES(to)->minor_hash =
			ext2fs_cpu_to_le32(r->minor);
	}
}

/* Pack @r, the next entry in hash order, into the leaf being filled */
static errcode_t dx_pack(struct dx_dir *d, struct dx_out *o,
			 const struct dx_rec *r)
{
	ext2_filsys fs = d->fs;
	unsigned int room = fs->blocksize - d->csum_size;
	unsigned int rec_len;
	struct ext2_dir_entry *de;
	char *block;
	errcode_t retval;

	rec_len = ext2fs_dir_rec_len(ext2fs_dirent_name_len(r->de),
				     d->hash_in_dirent);
	if (o->last && (o->used + rec_len > room ||
			room - o->used < o->slack)) {
		retval = dx_close_leaf(d, o->block, o->last, o->used);
		if (!retval)
			retval = dx_out_write(d, o, o->blocks - 1);
		if (!retval)
			retval = dx_out_block(d, o, &block);
		if (retval)
			return retval;
		o->used = 0;
		o->last = NULL;
	}
	if (!o->last)
		o->start[o->blocks - 1] = r->hash |
			(o->packed && o->prev_hash == r->hash);
	de = (struct ext2_dir_entry *) (o->block + o->used);
	dx_copy_entry(d, de, r);
	retval = ext2fs_set_rec_len(fs, rec_len, de);
	if (retval)
		return retval;
	o->used += rec_len;
	o->last = de;
	o->prev_hash = r->hash;
	o->packed++;
	return 0;
}

static struct ext2_dx_countlimit *dx_init_node(struct dx_dir *d, char *buf)
{
	struct ext2_dir_entry *de = (struct ext2_dir_entry *) buf;
	struct ext2_dx_countlimit *cl;

	memset(buf, 0, d->fs->blocksize);
	(void) ext2fs_set_rec_len(d->fs, d->fs->blocksize, de);
	cl = (struct ext2_dx_countlimit *) (buf + DX_NODE_ENTRIES);
	cl->limit = ext2fs_cpu_to_le16(d->node_limit);
	return cl;
}

/* Fill @n index entries from child blocks @blk with start hashes @hash. */
static void dx_fill_entries(struct ext2_dx_countlimit *cl,
			    const blk64_t *blk, const __u32 *hash, size_t n)
{
	struct ext2_dx_entry *ent = (struct ext2_dx_entry *) cl;
	size_t i;

	for (i = 0; i < n; i++) {
		ent[i].block = ext2fs_cpu_to_le32(blk[i]);
		if (i)
			ent[i].hash = ext2fs_cpu_to_le32(hash[i]);
	}
	/* the first entry's hash is the count and limit */
	cl->count = ext2fs_cpu_to_le16(n);
}

/*
 * Build the index above the leaves, blocks 1.. : levels of nodes, each
 * child shared out evenly, until the root holds the rest (written last).
 * Returns EXT2_ET_DIR_NO_SPACE when the depth allowed is not enough.
 */
static errcode_t dx_build_tree(struct dx_dir *d, struct dx_out *o,
			       ext2_ino_t parent, int *levels)
{
	ext2_filsys fs = d->fs;
	struct ext2_dx_root_info *info;
	struct ext2_dir_entry *de;
	struct ext2_dx_countlimit *cl;
	blk64_t *blk = NULL, *up_blk = NULL;
	__u32 *hash = NULL, *up_hash = NULL;
	size_t n = o->blocks - 1, nodes, k, first, end, i;
	int depth = 0, ft;
	char *block;
	errcode_t retval;

	retval = ext2fs_get_array(n, sizeof(*blk), &blk);
	if (!retval)
		retval = ext2fs_get_array(n, sizeof(*hash), &hash);
	if (retval)
		goto errout;
	for (i = 0; i < n; i++) {
		blk[i] = i + 1;
		hash[i] = o->start[i + 1];
	}
	while (n > d->root_limit) {
		if ((unsigned) depth + 2 > d->max_depth) {
			retval = EXT2_ET_DIR_NO_SPACE;
			goto errout;
		}
		nodes = (n + d->node_limit - 1) / d->node_limit;
		retval = ext2fs_get_array(nodes, sizeof(*up_blk), &up_blk);
		if (!retval)
			retval = ext2fs_get_array(nodes, sizeof(*up_hash),
						  &up_hash);
		if (retval)
			goto errout;
		for (k = 0; k < nodes; k++) {
			first = k * n / nodes;
			end = (k + 1) * n / nodes;
			retval = dx_out_block(d, o, &block);
			if (retval)
				goto errout;
			cl = dx_init_node(d, block);
			dx_fill_entries(cl, blk + first, hash + first,
					end - first);
			retval = dx_out_write(d, o, o->blocks - 1);
			if (retval)
				goto errout;
			up_blk[k] = o->blocks - 1;
			up_hash[k] = hash[first];
		}
		ext2fs_free_mem(&blk);
		ext2fs_free_mem(&hash);
		blk = up_blk;
		hash = up_hash;
		up_blk = NULL;
		up_hash = NULL;
		n = nodes;
		depth++;
	}

	/* the root: "." and ".." as the kernel's make_indexed_dir() */
	block = o->block;
	memset(block, 0, fs->blocksize);
	ft = ext2fs_has_feature_filetype(fs->super) ? EXT2_FT_DIR : 0;
	de = (struct ext2_dir_entry *) block;
	de->inode = d->ino;
	ext2fs_dirent_set_name_len(de, 1);
	ext2fs_dirent_set_file_type(de, ft);
	de->name[0] = '.';
	retval = ext2fs_set_rec_len(fs, EXT2_DIR_REC_LEN(1), de);
	if (retval)
		goto errout;
	de = (struct ext2_dir_entry *) (block + EXT2_DIR_REC_LEN(1));
	de->inode = parent;
	ext2fs_dirent_set_name_len(de, 2);
	ext2fs_dirent_set_file_type(de, ft);
	de->name[0] = de->name[1] = '.';
	retval = ext2fs_set_rec_len(fs, fs->blocksize - EXT2_DIR_REC_LEN(1),
				    de);
	if (retval)
		goto errout;
	info = (struct ext2_dx_root_info *) (block + DX_ROOT_INFO_OFFSET);
	info->hash_version = d->hash_in_dirent ? EXT2_HASH_SIPHASH :
			     fs->super->s_def_hash_version;
	info->info_length = sizeof(*info);
	info->indirect_levels = depth;
	cl = (struct ext2_dx_countlimit *) (block + DX_ROOT_ENTRIES);
	cl->limit = ext2fs_cpu_to_le16(d->root_limit);
	dx_fill_entries(cl, blk, hash, n);
	retval = dx_out_write(d, o, 0);
	*levels = depth;
errout:
	ext2fs_free_mem(&blk);
	ext2fs_free_mem(&hash);
	ext2fs_free_mem(&up_blk);
	ext2fs_free_mem(&up_hash);
	return retval;
}

/* The directory back to @nblocks blocks, with its flags as @flags */
static void dx_shrink(struct dx_dir *d, blk64_t nblocks, __u32 flags)
{
	ext2_filsys fs = d->fs;

	/* with a block mapped past the size whose write failed */
	ext2fs_punch(fs, d->ino, &d->inode, NULL, nblocks, ~0ULL);
	ext2fs_inode_size_set(fs, &d->inode, nblocks * fs->blocksize);
	d->inode.i_flags = flags;
	ext2fs_write_inode(fs, d->ino, &d->inode);
}

/*
 * The linear directory, read in bounded passes: the first maps each
 * block and checks it, the later ones read the same blocks again.
 */
#define DX_RUN			32
#define DX_HASH_BITS		16	/* buckets of the histogram */
#define DX_BUCKETS		(1U << DX_HASH_BITS)
#define DX_SORT_BUDGET		(4U << 20)	/* sorted at once, at least */
#define DX_MAX_PASSES		8		/* ... or 1/8 of the whole */

typedef errcode_t (*dx_scan_fn)(struct dx_dir *d, struct ext2_dir_entry *de,
				__u32 hash, __u32 minor, void *priv);

struct dx_lin {
	blk64_t nblocks;
	blk64_t *pblk;
	char *buf;		/* DX_RUN blocks */
	ext2_ino_t parent;	/* from "..", in the first pass */
};

/* An entry's share of a sort: its record and a copy of its name */
static size_t dx_cost(struct ext2_dir_entry *de)
{
	return sizeof(struct dx_rec) +
	       ((8 + ext2fs_dirent_name_len(de) + 3) & ~3U);
}

/* The live entries of linear block @b in @buf, "." and ".." apart */
static errcode_t dx_scan_block(struct dx_dir *d, struct dx_lin *lin,
			       char *buf, blk64_t b, dx_scan_fn fn,
			       void *priv)
{
	ext2_filsys fs = d->fs;
	struct ext2_dir_entry *de;
	unsigned int offset, rec_len, len;
	__u32 hash, minor;
	errcode_t retval;

	for (offset = 0; offset < fs->blocksize; offset += rec_len) {
		de = (struct ext2_dir_entry *) (buf + offset);
		retval = ext2fs_get_rec_len(fs, de, &rec_len);
		if (retval)
			return retval;
		len = ext2fs_dirent_name_len(de);
		if (rec_len < 8 || rec_len % 4 ||
		    offset + rec_len > fs->blocksize ||
		    (de->inode && rec_len < ext2fs_dir_rec_len(len, 0)))
			return EXT2_ET_DIR_CORRUPTED;
		if (!de->inode)
			continue;
		if (b == 0 && offset == 0) {
			if (len != 1 || de->name[0] != '.')
				return EXT2_ET_DIR_CORRUPTED;
			continue;
		}
		if (b == 0 && offset == EXT2_DIR_REC_LEN(1)) {
			if (len != 2 || de->name[0] != '.' ||
			    de->name[1] != '.')
				return EXT2_ET_DIR_CORRUPTED;
			lin->parent = de->inode;
			continue;
		}
		retval = dx_entry_hash(d, de, rec_len, &hash, &minor);
		if (!retval)
			retval = fn(d, de, hash, minor, priv);
		if (retval)
			return retval;
	}
	return 0;
}

/*
 * Hand @fn the live entries of the linear directory, read in runs of
 * blocks that follow each other on disk, DX_RUN at most at once.  The
 * first pass maps each block and checks its checksum, as
 * ext2fs_read_dir_block4() would; the later ones read the same blocks
 * again.
 */
static errcode_t dx_scan(struct dx_dir *d, struct dx_lin *lin, int first,
			 dx_scan_fn fn, void *priv)
{
	ext2_filsys fs = d->fs;
	blk64_t b, run, i;
	char *buf;
	errcode_t retval = 0;

	for (b = 0; first && b < lin->nblocks && !retval; b++)
		retval = dx_lblk_to_pblk(d, b, &lin->pblk[b]);
	if (first)
		lin->parent = 0;
	for (b = 0; b < lin->nblocks && !retval; b += run) {
		for (run = 1; run < DX_RUN && b + run < lin->nblocks &&
		     lin->pblk[b + run] == lin->pblk[b] + run; run++)
			;
		retval = io_channel_read_blk64(fs->io, lin->pblk[b], run,
					       lin->buf);
		for (i = 0; i < run && !retval; i++) {
			buf = lin->buf + i * fs->blocksize;
			if (first &&
			    !(fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS) &&
			    !ext2fs_dir_block_csum_verify(fs, d->ino,
					(struct ext2_dir_entry *) buf))
				retval = EXT2_ET_DIR_CSUM_INVALID;
#ifdef WORDS_BIGENDIAN
			if (!retval)
				retval = ext2fs_dirent_swab_in(fs, buf, 0);
#endif
			if (!retval)
				retval = dx_scan_block(d, lin, buf, b + i, fn,
						       priv);
		}
	}
	if (!retval && first && !lin->parent)
		retval = EXT2_ET_DIR_CORRUPTED;
	return retval;
}

/* First pass: each hash bucket's share of the sort, in @priv */
static errcode_t dx_count(struct dx_dir *d EXT2FS_ATTR((unused)),
			  struct ext2_dir_entry *de, __u32 hash,
			  __u32 minor EXT2FS_ATTR((unused)), void *priv)
{
	__u32 *hist = priv;

	hist[hash >> (32 - DX_HASH_BITS)] += dx_cost(de);
	return 0;
}

/*
 * The entries of buckets [@lo, @hi), gathered to be sorted: records
 * from the front of @arena, copies of the names from its back; the
 * first pass said how much they take, exactly.
 */
struct dx_range {
	unsigned int lo, hi;
	char *arena;
	size_t front, back, count;
};

static errcode_t dx_gather(struct dx_dir *d EXT2FS_ATTR((unused)),
			   struct ext2_dir_entry *de, __u32 hash, __u32 minor,
			   void *priv)
{
	struct dx_range *r = priv;
	unsigned int bucket = hash >> (32 - DX_HASH_BITS);
	unsigned int len = ext2fs_dirent_name_len(de);
	size_t copy = (8 + len + 3) & ~3U;
	struct dx_rec *rec;

	if (bucket < r->lo || bucket >= r->hi)
		return 0;
	if (r->front + sizeof(*rec) + copy > r->back)
		return EXT2_ET_DIR_CORRUPTED;	/* not what we counted */
	r->back -= copy;
	memcpy(r->arena + r->back, de, 8 + len);
	rec = (struct dx_rec *) (r->arena + r->front);
	rec->de = (struct ext2_dir_entry *) (r->arena + r->back);
	rec->hash = hash;
	rec->minor = minor;
	r->front += sizeof(*rec);
	r->count++;
	return 0;
}

/*
 * What one pass may sort: DX_SORT_BUDGET, or more for a directory so
 * large that it would take more than DX_MAX_PASSES passes, each a read
 * of the whole directory (quadratic in its size, else)
 */
static size_t dx_budget(const __u32 *hist)
{
	size_t total = 0;
	unsigned int i;

	for (i = 0; i < DX_BUCKETS; i++)
		total += hist[i];
	total /= DX_MAX_PASSES;
	return total > DX_SORT_BUDGET ? total : DX_SORT_BUDGET;
}

/* The buckets from @lo that fit @budget together, one at least */
static unsigned int dx_range_end(const __u32 *hist, unsigned int lo,
				 size_t budget, size_t *bytes)
{
	unsigned int hi = lo + 1;
	size_t sum = hist[lo];

	while (hi < DX_BUCKETS && sum + hist[hi] <= budget)
		sum += hist[hi++];
	*bytes = sum;
	return hi;
}

/* Every entry into the leaves, in hash order, one range at a time */
static errcode_t dx_pack_ranges(struct dx_dir *d, struct dx_lin *lin,
				const __u32 *hist, struct dx_out *o)
{
	struct dx_range r;
	size_t bytes, max = 0, budget = dx_budget(hist);
	unsigned int lo, i;
	errcode_t retval = 0;

	memset(&r, 0, sizeof(r));
	for (lo = 0; lo < DX_BUCKETS; lo = r.hi) {
		r.hi = dx_range_end(hist, lo, budget, &bytes);
		if (bytes > max)
			max = bytes;
	}
	if (max)
		retval = ext2fs_get_mem(max, &r.arena);
	for (lo = 0; lo < DX_BUCKETS && !retval; lo = r.hi) {
		r.lo = lo;
		r.hi = dx_range_end(hist, lo, budget, &bytes);
		if (!bytes)
			continue;
		r.front = r.count = 0;
		r.back = bytes;
		retval = dx_scan(d, lin, 0, dx_gather, &r);
		if (!retval && r.front != r.back)
			retval = EXT2_ET_DIR_CORRUPTED;
		if (retval)
			break;
		qsort(r.arena, r.count, sizeof(struct dx_rec), dx_rec_cmp);
		for (i = 0; i < r.count && !retval; i++)
			retval = dx_pack(d, o, (struct dx_rec *) r.arena + i);
	}
	ext2fs_free_mem(&r.arena);
	return retval;
}

/*
 * Map block @b of the directory to @pblk (0: unmapped), no block taken
 * or freed.  No inode is passed: each call may change the extent tree
 * under the one we hold.
 */
static errcode_t dx_map(struct dx_dir *d, blk64_t b, blk64_t pblk)
{
	return ext2fs_bmap2(d->fs, d->ino, NULL, NULL, BMAP_SET, b, NULL,
			    &pblk);
}

/* The clusters of the linear directory, each once */
static blk64_t dx_lin_clusters(struct dx_dir *d, struct dx_lin *lin,
			       int release)
{
	ext2_filsys fs = d->fs;
	blk64_t b, n = 0;

	for (b = 0; b < lin->nblocks; b++) {
		if (b && EXT2FS_B2C(fs, lin->pblk[b]) ==
			 EXT2FS_B2C(fs, lin->pblk[b - 1]))
			continue;
		n++;
		if (release)
			ext2fs_block_alloc_stats2(fs, lin->pblk[b], -1);
	}
	return n;
}

/* The directory's blocks (@committed: and its inode) as they were */
static void dx_unswitch(struct dx_dir *d, struct dx_out *o,
			struct dx_lin *lin, __u32 flags, int committed)
{
	ext2_filsys fs = d->fs;
	blk64_t b;

	for (b = 0; b < lin->nblocks; b++)
		dx_map(d, b, lin->pblk[b]);
	for (; b < o->blocks; b++)
		dx_map(d, b, 0);
	if (ext2fs_read_inode(fs, d->ino, &d->inode))
		return;
	/* the inode as written, should the write have reached the cache */
	if (committed && (d->inode.i_flags & EXT2_INDEX_FL)) {
		ext2fs_iblk_sub_blocks(fs, &d->inode, o->clusters);
		ext2fs_iblk_add_blocks(fs, &d->inode,
				       dx_lin_clusters(d, lin, 0));
	}
	ext2fs_inode_size_set(fs, &d->inode, lin->nblocks * fs->blocksize);
	d->inode.i_flags = flags;
	ext2fs_write_inode(fs, d->ino, &d->inode);
}

/*
 * The index is whole: its blocks take the linear ones' place in the
 * directory, its root as block 0, and the inode says so in one write.
 * Should any of it fail, the linear blocks are mapped back (they were
 * neither freed nor written over) and the caller frees the index's.
 */
static errcode_t dx_switch(struct dx_dir *d, struct dx_out *o,
			   struct dx_lin *lin)
{
	ext2_filsys fs = d->fs;
	__u32 flags = d->inode.i_flags;
	blk64_t b, end = o->blocks > lin->nblocks ? o->blocks : lin->nblocks;
	int committed = 0;
	errcode_t retval = 0;

	for (b = 0; b < end && !retval; b++)
		retval = dx_map(d, b, b < o->blocks ? o->pblk[b] : 0);
	if (!retval)
		retval = ext2fs_read_inode(fs, d->ino, &d->inode);
	if (!retval)
		retval = ext2fs_iblk_add_blocks(fs, &d->inode, o->clusters);
	if (!retval)
		retval = ext2fs_iblk_sub_blocks(fs, &d->inode,
						dx_lin_clusters(d, lin, 0));
	if (!retval)
		retval = ext2fs_inode_size_set(fs, &d->inode,
				(__u64) o->blocks * fs->blocksize);
	if (!retval) {
		d->inode.i_flags = flags | EXT2_INDEX_FL;
		committed = 1;
		retval = ext2fs_write_inode(fs, d->ino, &d->inode);
	}
	if (retval) {
		dx_unswitch(d, o, lin, flags, committed);
		return retval;
	}
	dx_lin_clusters(d, lin, 1);
	return 0;
}

/*
 * Index directory @ino, filled linearly, as the kernel would have: its
 * entries sorted by hash into leaves with some room left, and the index
 * above them, two levels deep at most, three with large_dir.  A
 * directory of one block, an indexed one, one with inline data, or a
 * filesystem without dir_index is left as it is.
 *
 * The memory is bounded: a first pass over the directory counts what
 * each range of hashes takes; then each range that fits the budget
 * (DX_SORT_BUDGET, or an eighth of the whole for a directory of more
 * than a few hundred thousand names, so as to read it at most nine
 * times) is gathered by another pass, sorted and packed into leaves.
 * The index is built in new blocks, the linear directory left as it is
 * until the index is whole, so that for a time both are on disk.  Should there be no room for the index
 * (EXT2_ET_BLOCK_ALLOC_FAIL), or the depth allowed not be enough
 * (EXT2_ET_DIR_NO_SPACE), or a read or write fail before the index is
 * whole, the blocks written for it are freed and the directory is the
 * linear one it was, still valid.
 */
errcode_t ext2fs_dx_index_dir(ext2_filsys fs, ext2_ino_t ino)
{
	struct dx_dir d;
	struct dx_out o;
	struct dx_lin lin = { 0, NULL, NULL, 0 };
	__u32 *hist = NULL;
	char *block;
	int levels;
	errcode_t retval;

	memset(&o, 0, sizeof(o));
	retval = dx_dir_open(fs, ino, &d);
	if (retval == EXT2_ET_INLINE_DATA_CANT_ITERATE)
		return 0;
	if (retval)
		return retval;
	lin.nblocks = EXT2_I_SIZE(&d.inode) / fs->blocksize;
	if (!ext2fs_has_feature_dir_index(fs->super) ||
	    (d.inode.i_flags & EXT2_INDEX_FL) || lin.nblocks < 2)
		return 0;
	retval = dx_set_version(&d, d.hash_in_dirent ? EXT2_HASH_SIPHASH :
				fs->super->s_def_hash_version);
	if (retval)
		return retval;

	retval = ext2fs_get_array(lin.nblocks, sizeof(blk64_t), &lin.pblk);
	if (!retval)
		retval = ext2fs_get_array(DX_RUN, fs->blocksize, &lin.buf);
	if (!retval)
		retval = ext2fs_get_memzero(DX_BUCKETS * sizeof(*hist), &hist);
	if (!retval)
		retval = ext2fs_get_mem(fs->blocksize, &o.block);
	if (!retval)
		retval = dx_scan(&d, &lin, 1, dx_count, hist);
	if (retval)
		goto errout;

	/* block 0 is the root, written last; leaves follow */
	o.goal = ext2fs_find_inode_goal(fs, ino, &d.inode, 0);
	dx_out_goal(&d, &o, lin.nblocks);
	o.slack = (fs->blocksize - d.csum_size) * DX_SLACK_PERCENT / 100;
	retval = dx_out_block(&d, &o, &block);
	/* its place taken now, so that the blocks run on in order */
	if (!retval)
		retval = dx_out_place(&d, &o, 0, &o.pblk[0]);
	if (!retval)
		retval = dx_out_block(&d, &o, &block);
	if (!retval)
		retval = dx_pack_ranges(&d, &lin, hist, &o);
	if (!retval)
		retval = dx_close_leaf(&d, o.block, o.last, o.used);
	if (!retval)
		retval = dx_out_write(&d, &o, o.blocks - 1);
	if (!retval)
		retval = dx_build_tree(&d, &o, lin.parent, &levels);
	if (!retval)
		retval = dx_switch(&d, &o, &lin);
errout:
	if (retval)
		dx_out_release(&d, &o);
	ext2fs_free_mem(&lin.pblk);
	ext2fs_free_mem(&lin.buf);
	ext2fs_free_mem(&hist);
	ext2fs_free_mem(&o.block);
	ext2fs_free_mem(&o.start);
	ext2fs_free_mem(&o.pblk);
	return retval;
}

/* The way from the root to a leaf, and blocks set aside to grow it */
struct dx_level {
	blk64_t lblk;
	char *buf;
	unsigned int at;		/* the entry followed */
};

struct dx_path {
	struct dx_dir d;
	int depth;			/* index levels, root included */
	struct dx_level lv[DX_MAX_DEPTH];
	blk64_t leaf;
	blk64_t pool[DX_MAX_DEPTH + 1];
	int npool;
};

static struct ext2_dx_countlimit *dx_countlimit(struct dx_path *p, int l)
{
	return (struct ext2_dx_countlimit *) (p->lv[l].buf +
		(l ? DX_NODE_ENTRIES : DX_ROOT_ENTRIES));
}

static void dx_path_free(struct dx_path *p)
{
	int l;

	for (l = 0; l < DX_MAX_DEPTH; l++)
		ext2fs_free_mem(&p->lv[l].buf);
}

/* Read the root of indexed @ino; the hash version comes from it. */
static errcode_t dx_path_open(ext2_filsys fs, ext2_ino_t ino,
			      struct dx_path *p)
{
	struct ext2_dx_root_info *info;
	int l;
	errcode_t retval;

	memset(p, 0, sizeof(*p));
	retval = dx_dir_open(fs, ino, &p->d);
	if (retval)
		return retval;
	if (!(p->d.inode.i_flags & EXT2_INDEX_FL))
		return EXT2_ET_DIR_CORRUPTED;
	for (l = 0; l < DX_MAX_DEPTH && !retval; l++)
		retval = ext2fs_get_mem(fs->blocksize, &p->lv[l].buf);
	if (!retval)
		retval = dx_read(&p->d, 0, p->lv[0].buf);
	if (retval)
		return retval;
	info = (struct ext2_dx_root_info *) (p->lv[0].buf +
					     DX_ROOT_INFO_OFFSET);
	if (info->info_length != sizeof(*info) ||
	    info->indirect_levels >= DX_MAX_DEPTH)
		return EXT2_ET_DIR_CORRUPTED;
	p->depth = info->indirect_levels + 1;
	return dx_set_version(&p->d, info->hash_version);
}

/* Follow @hash down to its leaf, as the kernel's dx_probe(). */
static errcode_t dx_path_walk(struct dx_path *p, __u32 hash)
{
	struct ext2_dx_countlimit *cl;
	struct ext2_dx_entry *ent;
	unsigned int count, limit, i, off;
	blk64_t lblk = 0;
	int l;
	errcode_t retval;

	for (l = 0; l < p->depth; l++) {
		if (l) {
			retval = dx_read(&p->d, lblk, p->lv[l].buf);
			if (retval)
				return retval;
		}
		p->lv[l].lblk = lblk;
		off = l ? DX_NODE_ENTRIES : DX_ROOT_ENTRIES;
		cl = dx_countlimit(p, l);
		count = ext2fs_le16_to_cpu(cl->count);
		limit = ext2fs_le16_to_cpu(cl->limit);
		if (count == 0 || count > limit ||
		    off + limit * sizeof(*ent) > p->d.fs->blocksize)
			return EXT2_ET_DIR_CORRUPTED;
		ent = (struct ext2_dx_entry *) cl;
		for (i = 1; i < count &&
		     ext2fs_le32_to_cpu(ent[i].hash) <= hash; i++)
			;
		p->lv[l].at = i - 1;
		lblk = ext2fs_le32_to_cpu(ent[i - 1].block) & 0x0fffffff;
	}
	p->leaf = lblk;
	return 0;
}

static errcode_t dx_name_hash(struct dx_path *p,
			      const struct ext4_encrypted_name *n,
			      __u32 *hash)
{
	struct ext2_dir_entry_hash stored;
	__u32 minor;

	if (n->has_hash != p->d.hash_in_dirent)
		return EXT2_ET_CRYPT_BAD_DIRENT_HASH;
	stored.hash = ext2fs_cpu_to_le32(n->hash);
	stored.minor_hash = ext2fs_cpu_to_le32(n->minor_hash);
	return dx_hash(&p->d, n->name, n->name_len,
		       n->has_hash ? &stored : NULL, hash, &minor);
}

/*
 * The leaf of indexed directory @dir where the name @n belongs, and
 * the hash it is found by.
 */
errcode_t ext2fs_dx_find_leaf(ext2_filsys fs, ext2_ino_t dir,
			      const struct ext4_encrypted_name *n,
			      blk64_t *leaf, __u32 *hash)
{
	struct dx_path p;
	errcode_t retval;

	retval = dx_path_open(fs, dir, &p);
	if (!retval)
		retval = dx_name_hash(&p, n, hash);
	if (!retval)
		retval = dx_path_walk(&p, *hash);
	if (!retval)
		*leaf = p.leaf;
	dx_path_free(&p);
	return retval;
}

static errcode_t dx_take_block(struct dx_path *p, blk64_t *lblk)
{
	if (!p->npool)
		return EXT2_ET_DIR_CORRUPTED;
	*lblk = p->pool[--p->npool];
	return 0;
}

/*
 * A full root becomes the one child of a new root, the tree a level
 * deeper (the kernel does the same when every level is full).
 */
static errcode_t dx_grow(struct dx_path *p)
{
	struct ext2_dx_root_info *info;
	struct ext2_dx_countlimit *cl, *ncl;
	struct ext2_dx_entry *ent;
	char *buf = p->lv[p->depth].buf;
	blk64_t lblk;
	unsigned int count;
	int l;
	errcode_t retval;

	retval = dx_take_block(p, &lblk);
	if (retval)
		return retval;
	cl = dx_countlimit(p, 0);
	count = ext2fs_le16_to_cpu(cl->count);
	ncl = dx_init_node(&p->d, buf);
	memcpy(ncl, cl, count * sizeof(*ent));
	ncl->limit = ext2fs_cpu_to_le16(p->d.node_limit);
	ncl->count = ext2fs_cpu_to_le16(count);
	retval = dx_write(&p->d, lblk, buf);
	if (retval)
		return retval;

	ent = (struct ext2_dx_entry *) cl;
	ent[0].block = ext2fs_cpu_to_le32(lblk);
	cl->count = ext2fs_cpu_to_le16(1);
	info = (struct ext2_dx_root_info *) (p->lv[0].buf +
					     DX_ROOT_INFO_OFFSET);
	info->indirect_levels++;
	retval = dx_write(&p->d, 0, p->lv[0].buf);
	if (retval)
		return retval;

	/* the new node sits between the root and the old level 1 */
	for (l = p->depth; l > 1; l--)
		p->lv[l] = p->lv[l - 1];
	p->lv[1].buf = buf;
	p->lv[1].lblk = lblk;
	p->lv[1].at = p->lv[0].at;
	p->lv[0].at = 0;
	p->depth++;
	return 0;
}

/*
 * Insert (@hash, @blk) after the entry followed at level @l; a full
 * node is split in two first, its upper half going to a new node that
 * the level above gets an entry for (the kernel's ext4_dx_add_entry()).
 */
static errcode_t dx_insert(struct dx_path *p, int l, __u32 hash,
			   blk64_t blk)
{
	struct dx_level *lv = &p->lv[l];
	struct ext2_dx_countlimit *cl = dx_countlimit(p, l), *ncl;
	struct ext2_dx_entry *ent = (struct ext2_dx_entry *) cl, *nent;
	unsigned int count = ext2fs_le16_to_cpu(cl->count);
	unsigned int limit = ext2fs_le16_to_cpu(cl->limit);
	unsigned int half;
	blk64_t nblk;
	__u32 nhash;
	char *nbuf = NULL;
	errcode_t retval;

	if (count < limit) {
		memmove(ent + lv->at + 2, ent + lv->at + 1,
			(count - lv->at - 1) * sizeof(*ent));
		ent[lv->at + 1].hash = ext2fs_cpu_to_le32(hash);
		ent[lv->at + 1].block = ext2fs_cpu_to_le32(blk);
		cl->count = ext2fs_cpu_to_le16(count + 1);
		return dx_write(&p->d, lv->lblk, lv->buf);
	}
	if (l == 0)
		return EXT2_ET_DIR_CORRUPTED;	/* dx_grow() saw to it */

	retval = dx_take_block(p, &nblk);
	if (!retval)
		retval = ext2fs_get_mem(p->d.fs->blocksize, &nbuf);
	if (retval)
		return retval;
	half = count / 2;
	nhash = ext2fs_le32_to_cpu(ent[half].hash);
	ncl = dx_init_node(&p->d, nbuf);
	nent = (struct ext2_dx_entry *) ncl;
	memcpy(nent + 1, ent + half + 1, (count - half - 1) * sizeof(*ent));
	nent[0].block = ent[half].block;
	ncl->count = ext2fs_cpu_to_le16(count - half);
	cl->count = ext2fs_cpu_to_le16(half);
	retval = dx_write(&p->d, nblk, nbuf);
	if (!retval)
		retval = dx_write(&p->d, lv->lblk, lv->buf);
	if (!retval)
		retval = dx_insert(p, l - 1, nhash, nblk);
	if (retval)
		goto errout;
	if (lv->at >= half) {
		memcpy(lv->buf, nbuf, p->d.fs->blocksize);
		lv->lblk = nblk;
		lv->at -= half;
	}
	retval = dx_insert(p, l, hash, blk);
errout:
	ext2fs_free_mem(&nbuf);
	return retval;
}

/* Write @n entries packed into one leaf block @buf. */
static errcode_t dx_fill_leaf(struct dx_dir *d, char *buf,
			      const struct dx_rec *recs, size_t n)
{
	struct ext2_dir_entry *de = NULL;
	unsigned int used = 0, rec_len;
	size_t i;
	errcode_t retval;

	memset(buf, 0, d->fs->blocksize);
	for (i = 0; i < n; i++) {
		rec_len = ext2fs_dir_rec_len(ext2fs_dirent_name_len(recs[i].de),
					     d->hash_in_dirent);
		de = (struct ext2_dir_entry *) (buf + used);
		dx_copy_entry(d, de, &recs[i]);
		retval = ext2fs_set_rec_len(d->fs, rec_len, de);
		if (retval)
			return retval;
		used += rec_len;
	}
	return dx_close_leaf(d, buf, de, used);
}

/*
 * Make room in the full leaf of indexed directory @dir that @hash
 * selects, as the kernel's do_split(): its entries sorted by hash, the
 * upper half by size goes to a new leaf, which the index gets an entry
 * for (splitting index nodes, or adding a level, when they are full).
 * Returns EXT2_ET_DIR_NO_SPACE when the index cannot take another
 * leaf, or the directory cannot grow; it is then unchanged, but for
 * empty blocks at its end.
 */
/* The blocks a split may write over, as they were: index path and leaf */
struct dx_saved {
	blk64_t lblk[DX_MAX_DEPTH + 1];
	char *buf[DX_MAX_DEPTH + 1];
	int count;
	blk64_t nblocks;		/* the directory's size, in blocks */
};

static errcode_t dx_save(struct dx_path *p, const char *leaf,
			 struct dx_saved *s)
{
	size_t bs = p->d.fs->blocksize;
	errcode_t retval;
	int l;

	s->nblocks = EXT2_I_SIZE(&p->d.inode) / bs;
	for (l = 0; l <= p->depth; l++) {
		retval = ext2fs_get_mem(bs, &s->buf[l]);
		if (retval)
			return retval;
		s->count++;
		s->lblk[l] = l < p->depth ? p->lv[l].lblk : p->leaf;
		memcpy(s->buf[l], l < p->depth ? p->lv[l].buf : leaf, bs);
	}
	return 0;
}

/* A split failed part way: the directory as it was */
static void dx_restore_saved(struct dx_path *p, struct dx_saved *s)
{
	int l;

	for (l = 0; l < s->count; l++)
		dx_write(&p->d, s->lblk[l], s->buf[l]);
	dx_shrink(&p->d, s->nblocks, p->d.inode.i_flags);
}

static void dx_saved_free(struct dx_saved *s)
{
	while (s->count)
		ext2fs_free_mem(&s->buf[--s->count]);
}

/* The live entries of @leaf with their hashes, sorted as e2fsck would */
static errcode_t dx_collect_leaf(struct dx_path *p, char *leaf,
				 struct dx_rec **recs, size_t *count)
{
	ext2_filsys fs = p->d.fs;
	struct ext2_dir_entry *de;
	unsigned int offset, rec_len, len;
	size_t size = 0;
	errcode_t retval;

	for (offset = 0; offset < fs->blocksize; offset += rec_len) {
		de = (struct ext2_dir_entry *) (leaf + offset);
		retval = ext2fs_get_rec_len(fs, de, &rec_len);
		if (retval)
			return retval;
		len = ext2fs_dirent_name_len(de);
		if (rec_len < 8 || offset + rec_len > fs->blocksize ||
		    (de->inode && rec_len < ext2fs_dir_rec_len(len, 0)))
			return EXT2_ET_DIR_CORRUPTED;
		if (!de->inode)
			continue;
		if (*count == size) {
			size = size ? size * 2 : 64;
			retval = ext2fs_resize_array(sizeof(**recs), *count,
						     size, recs);
			if (retval)
				return retval;
		}
		(*recs)[*count].de = de;
		retval = dx_entry_hash(&p->d, de, rec_len,
				       &(*recs)[*count].hash,
				       &(*recs)[*count].minor);
		if (retval)
			return retval;
		(*count)++;
	}
	if (*count < 2)
		return EXT2_ET_DIR_NO_SPACE;
	qsort(*recs, *count, sizeof(**recs), dx_rec_cmp);
	return 0;
}

/*
 * The kernel's split point: entries move up from the end while more
 * than half of each still fits in half a block.
 */
static size_t dx_split_point(const struct dx_path *p,
			     const struct dx_rec *recs, size_t count)
{
	unsigned int bs = p->d.fs->blocksize, rec_len, total = 0;
	size_t i, move, split;

	for (i = count, move = 0; i > 0; i--, move++) {
		rec_len = ext2fs_dir_rec_len(
				ext2fs_dirent_name_len(recs[i - 1].de),
				p->d.hash_in_dirent);
		if (total + rec_len / 2 > bs / 2)
			break;
		total += rec_len;
	}
	split = i > 1 ? count - move : count / 2;
	if (split < 1 || split >= count)
		split = count / 2;
	return split;
}

/*
 * Blocks a split takes: the new leaf, one per full index level, one to
 * grow the tree (*@grow) when every level is full; 0 when it cannot
 */
static int dx_split_needs(struct dx_path *p, int *grow)
{
	struct ext2_dx_countlimit *cl;
	int l, need = 1;

	for (l = p->depth - 1; l >= 0; l--) {
		cl = dx_countlimit(p, l);
		if (ext2fs_le16_to_cpu(cl->count) <
		    ext2fs_le16_to_cpu(cl->limit))
			break;
		need++;
	}
	*grow = l < 0;
	if (*grow && (unsigned) p->depth >= p->d.max_depth)
		return 0;
	return need;
}

/* Write the two halves, the new leaf's index entry, and the old leaf */
static errcode_t dx_write_split(struct dx_path *p, struct dx_rec *recs,
				size_t count, size_t split, int grow,
				char *lo, char *hi)
{
	__u32 hash2;
	blk64_t nblk;
	errcode_t retval;

	hash2 = recs[split].hash | (recs[split - 1].hash == recs[split].hash);
	retval = dx_take_block(p, &nblk);
	if (!retval)
		retval = dx_fill_leaf(&p->d, lo, recs, split);
	if (!retval)
		retval = dx_fill_leaf(&p->d, hi, recs + split, count - split);
	if (!retval)
		retval = dx_write(&p->d, nblk, hi);
	if (!retval && grow)
		retval = dx_grow(p);
	if (!retval)
		retval = dx_insert(p, p->depth - 1, hash2, nblk);
	if (!retval)
		retval = dx_write(&p->d, p->leaf, lo);
	return retval;
}

errcode_t ext2fs_dx_split_leaf(ext2_filsys fs, ext2_ino_t dir, __u32 hash)
{
	struct dx_saved saved;
	struct dx_path p;
	struct dx_rec *recs = NULL;
	char *leaf = NULL, *lo = NULL, *hi = NULL;
	size_t count = 0;
	int need, grow, started = 0;
	errcode_t retval;

	memset(&saved, 0, sizeof(saved));
	retval = dx_path_open(fs, dir, &p);
	if (!retval)
		retval = dx_path_walk(&p, hash);
	if (!retval)
		retval = ext2fs_get_mem(fs->blocksize, &leaf);
	if (!retval)
		retval = ext2fs_get_mem(fs->blocksize, &lo);
	if (!retval)
		retval = ext2fs_get_mem(fs->blocksize, &hi);
	if (!retval)
		retval = dx_read(&p.d, p.leaf, leaf);
	if (!retval)
		retval = dx_save(&p, leaf, &saved);
	if (!retval)
		retval = dx_collect_leaf(&p, leaf, &recs, &count);
	if (retval)
		goto errout;
	need = dx_split_needs(&p, &grow);
	if (!need) {
		retval = EXT2_ET_DIR_NO_SPACE;
		goto errout;
	}
	/* from here on a failure gives the directory back as it was */
	started = 1;
	while (p.npool < need) {
		retval = dx_append_block(&p.d, lo, &p.pool[p.npool]);
		if (retval) {
			retval = EXT2_ET_DIR_NO_SPACE;
			goto errout;
		}
		p.npool++;
	}
	retval = dx_write_split(&p, recs, count,
				dx_split_point(&p, recs, count), grow, lo, hi);
errout:
	if (retval && started)
		dx_restore_saved(&p, &saved);
	dx_saved_free(&saved);
	ext2fs_free_mem(&recs);
	ext2fs_free_mem(&leaf);
	ext2fs_free_mem(&lo);
	ext2fs_free_mem(&hi);
	dx_path_free(&p);
	return retval;
}

/*
 * Step to the next leaf if it continues @hash: the kernel's
 * ext4_htree_next_block().  Returns 0 with *@more clear at the end.
 */
static errcode_t dx_next_leaf(struct dx_path *p, __u32 hash, int *more)
{
	struct ext2_dx_countlimit *cl;
	struct ext2_dx_entry *ent;
	__u32 next;
	int l = p->depth - 1;
	errcode_t retval;

	*more = 0;
	for (;;) {
		cl = dx_countlimit(p, l);
		if (p->lv[l].at + 1 < ext2fs_le16_to_cpu(cl->count))
			break;
		if (l == 0)
			return 0;
		l--;
	}
	ent = (struct ext2_dx_entry *) cl;
	/* a hash of ours (even) goes on only into its own collisions */
	next = ext2fs_le32_to_cpu(ent[++p->lv[l].at].hash);
	if ((next & ~1U) != hash)
		return 0;
	for (; l < p->depth; l++) {
		ent = (struct ext2_dx_entry *) dx_countlimit(p, l);
		p->leaf = ext2fs_le32_to_cpu(ent[p->lv[l].at].block) &
			  0x0fffffff;
		if (l + 1 == p->depth)
			break;
		retval = dx_read(&p->d, p->leaf, p->lv[l + 1].buf);
		if (retval)
			return retval;
		p->lv[l + 1].lblk = p->leaf;
		p->lv[l + 1].at = 0;
	}
	*more = 1;
	return 0;
}

/*
 * Look @n up in indexed directory @dir by its hash, as the kernel does:
 * only the leaf the hash selects, and those that continue it, are read.
 */
errcode_t ext2fs_dx_lookup(ext2_filsys fs, ext2_ino_t dir,
			   const struct ext4_encrypted_name *n,
			   ext2_ino_t *ino)
{
	struct dx_path p;
	struct ext2_dir_entry *de;
	unsigned int offset, rec_len;
	char *buf = NULL;
	__u32 hash;
	int more = 1;
	errcode_t retval;

	retval = dx_path_open(fs, dir, &p);
	if (!retval)
		retval = dx_name_hash(&p, n, &hash);
	if (!retval)
		retval = dx_path_walk(&p, hash);
	if (!retval)
		retval = ext2fs_get_mem(fs->blocksize, &buf);
	while (!retval && more) {
		retval = dx_read(&p.d, p.leaf, buf);
		for (offset = 0; !retval && offset < fs->blocksize;
		     offset += rec_len) {
			de = (struct ext2_dir_entry *) (buf + offset);
			retval = ext2fs_get_rec_len(fs, de, &rec_len);
			if (!retval && (rec_len < 8 ||
					offset + rec_len > fs->blocksize))
				retval = EXT2_ET_DIR_CORRUPTED;
			if (retval || !de->inode ||
			    ext2fs_dirent_name_len(de) != n->name_len ||
			    rec_len < ext2fs_dir_rec_len(n->name_len, 0) ||
			    memcmp(de->name, n->name, n->name_len))
				continue;
			*ino = de->inode;
			goto out;
		}
		if (!retval)
			retval = dx_next_leaf(&p, hash, &more);
	}
	if (!retval)
		retval = EXT2_ET_FILE_NOT_FOUND;
out:
	ext2fs_free_mem(&buf);
	dx_path_free(&p);
	return retval;
}
