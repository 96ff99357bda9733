/*
 * tst_fill_extents.c --- test ext2fs_extent_fill_* on a scratch filesystem
 *
 * Usage: tst_fill_extents IMAGE
 *
 * Makes a filesystem in the file IMAGE (created or truncated) and fills
 * files in it the way restore does, with the free space shaped for each
 * case: contiguous, fragmented into runs of two blocks (a tree two
 * levels below i_block), one run just over the longest initialized
 * extent, holes of every size, too little of it; and what the filler
 * must refuse.  Every file is read
 * back through its extent tree and checked against what was written;
 * the blocks the filler reported are taken back where a file fails or
 * is given up, and the bitmap must then be as before.  The files that
 * succeeded stay, linked in the root, for e2fsck -fn to judge after.
 * Prints each check; exits 1 on any mismatch.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <time.h>
#include <ext2fs/ext2fs.h>
#include <et/com_err.h>
#include "ext4_crypt.h"

#define BLOCKS		(40 * 8192)	/* 1 KiB blocks, 40 groups */
#define STAGE		(64 * 1024)

static const char *prog = "tst_fill_extents";
static int failures;

/* The byte written at offset @off of a file */
static unsigned char pattern(__u64 off)
{
	return (off * 131 + (off >> 10) * 7 + 1) & 0xff;
}

/* What a file holds: ranges of written bytes, in order; zeros elsewhere */
struct range {
	__u64 off, len;
};

struct model {
	const char *name;
	const struct range *r;
	size_t n;
	size_t chunk;			/* bytes per write */
};

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

static void die(errcode_t retval, const char *what)
{
	com_err(prog, retval, "while %s", what);
	exit(2);
}

/* The blocks allocated while recording: data ranges and tree blocks */
static ext2fs_block_bitmap recorded;
static int recording;

static void record_block(ext2_filsys fs EXT2FS_ATTR((unused)), blk64_t blk,
			 int inuse)
{
	if (recording && inuse > 0)
		ext2fs_mark_block_bitmap2(recorded, blk);
}

static void record_range(ext2_filsys fs EXT2FS_ATTR((unused)), blk64_t blk,
			 blk64_t len, void *priv EXT2FS_ATTR((unused)))
{
	if (recording)
		ext2fs_mark_block_bitmap_range2(recorded, blk, len);
}

static blk64_t count_recorded(ext2_filsys fs)
{
	blk64_t b, n = 0;

	for (b = fs->super->s_first_data_block;
	     b < ext2fs_blocks_count(fs->super); b++)
		n += !!ext2fs_test_block_bitmap2(recorded, b);
	return n;
}

/* Free what was recorded and is in use: a failed file taken back */
static void take_back(ext2_filsys fs)
{
	blk64_t b;

	for (b = fs->super->s_first_data_block;
	     b < ext2fs_blocks_count(fs->super); b++)
		if (ext2fs_test_block_bitmap2(recorded, b) &&
		    ext2fs_test_block_bitmap2(fs->block_map, b))
			ext2fs_block_alloc_stats2(fs, b, -1);
	ext2fs_clear_block_bitmap(recorded);
}

/* Free blocks by the bitmap itself, not by the counters */
static blk64_t bitmap_free(ext2_filsys fs)
{
	blk64_t b, n = 0;

	for (b = fs->super->s_first_data_block;
	     b < ext2fs_blocks_count(fs->super); b++)
		n += !ext2fs_test_block_bitmap2(fs->block_map, b);
	return n;
}

/* Which free blocks a case leaves free: a run, maybe fragmented */
struct keep {
	blk64_t start, len;
	int fragment;			/* only two blocks of every three */
};

static const struct keep keep_all = { 0, ~0ULL, 0 };
static const struct keep keep_runs_of_two = { 0, ~0ULL, 1 };

/*
 * Free space shaped for a case: every free block @keep refuses is
 * marked in use, in @shaped, until unshape() frees them again.
 */
static void shape(ext2_filsys fs, ext2fs_block_bitmap shaped,
		  const struct keep *keep)
{
	blk64_t b;

	for (b = fs->super->s_first_data_block;
	     b < ext2fs_blocks_count(fs->super); b++) {
		if (ext2fs_test_block_bitmap2(fs->block_map, b) ||
		    (b >= keep->start && b - keep->start < keep->len &&
		     (!keep->fragment || b % 3)))
			continue;
		ext2fs_mark_block_bitmap2(shaped, b);
		ext2fs_block_alloc_stats2(fs, b, +1);
	}
}

static void unshape(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	blk64_t b;

	for (b = fs->super->s_first_data_block;
	     b < ext2fs_blocks_count(fs->super); b++)
		if (ext2fs_test_block_bitmap2(shaped, b))
			ext2fs_block_alloc_stats2(fs, b, -1);
	ext2fs_clear_block_bitmap(shaped);
}

/* The longest run of free blocks */
static void longest_free_run(ext2_filsys fs, blk64_t *start, blk64_t *len)
{
	blk64_t b, run = 0;

	*len = 0;
	for (b = fs->super->s_first_data_block;
	     b < ext2fs_blocks_count(fs->super); b++) {
		run = ext2fs_test_block_bitmap2(fs->block_map, b) ? 0 : run + 1;
		if (run > *len) {
			*len = run;
			*start = b + 1 - run;
		}
	}
}

static errcode_t make_scratch_fs(const char *image, ext2_filsys *ret)
{
	struct ext2_super_block param;
	ext2_filsys fs;
	ext2_ino_t ino;
	errcode_t retval;
	int fd;

	fd = open(image, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t) BLOCKS * 1024) < 0)
		return errno;
	close(fd);
	memset(&param, 0, sizeof(param));
	ext2fs_blocks_count_set(&param, BLOCKS);
	param.s_log_block_size = 0;
	param.s_inodes_count = 40 * 32;
	param.s_rev_level = EXT2_DYNAMIC_REV;
	param.s_inode_size = 256;
	param.s_log_groups_per_flex = 6;	/* metadata all in group 0 */
	ext2fs_set_feature_extents(&param);
	ext2fs_set_feature_filetype(&param);
	ext2fs_set_feature_flex_bg(&param);
	ext2fs_set_feature_sparse_super(&param);
	ext2fs_set_feature_large_file(&param);
	retval = ext2fs_initialize(image, EXT2_FLAG_RW | EXT2_FLAG_64BITS,
				   &param, unix_io_manager, &fs);
	if (retval)
		return retval;
	retval = ext2fs_allocate_tables(fs);
	if (!retval)
		retval = ext2fs_mkdir(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, 0);
	if (!retval)
		retval = ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, "lost+found");
	if (retval)
		return retval;
	/* as mke2fs: the bad blocks inode and the reserved ones in use */
	ext2fs_inode_alloc_stats2(fs, EXT2_BAD_INO, +1, 0);
	for (ino = EXT2_ROOT_INO + 1; ino < EXT2_FIRST_INODE(fs->super); ino++)
		if (!ext2fs_test_inode_bitmap2(fs->inode_map, ino))
			ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	retval = ext2fs_update_bb_inode(fs, NULL);
	if (retval)
		return retval;
	*ret = fs;
	return 0;
}

/* A new regular file with an empty extent tree, as restore makes one */
static errcode_t new_file(ext2_filsys fs, ext2_ino_t *ino,
			  struct ext2_inode *inode)
{
	ext2_extent_handle_t handle;
	errcode_t retval;

	retval = ext2fs_new_inode(fs, EXT2_ROOT_INO, LINUX_S_IFREG | 0644,
				  NULL, ino);
	if (retval)
		return retval;
	ext2fs_inode_alloc_stats2(fs, *ino, +1, 0);
	memset(inode, 0, sizeof(*inode));
	inode->i_mode = LINUX_S_IFREG | 0644;
	inode->i_links_count = 1;
	inode->i_atime = inode->i_ctime = inode->i_mtime = time(NULL);
	retval = ext2fs_extent_open2(fs, *ino, inode, &handle);
	if (retval)
		return retval;
	ext2fs_extent_free(handle);
	return ext2fs_write_new_inode(fs, *ino, inode);
}

static void drop_file(ext2_filsys fs, ext2_ino_t ino,
		      struct ext2_inode *inode)
{
	memset(inode, 0, sizeof(*inode));
	inode->i_dtime = time(NULL);
	ext2fs_write_inode(fs, ino, inode);
	ext2fs_inode_alloc_stats2(fs, ino, -1, 0);
}

static __u64 model_end(const struct model *m)
{
	return m->n ? m->r[m->n - 1].off + m->r[m->n - 1].len : 0;
}

/* Every range of @m into the filler, @m->chunk bytes a write */
static errcode_t write_model(struct ext2fs_extent_fill *f,
			     const struct model *m)
{
	static unsigned char buf[65536];
	__u64 off, end, i;
	size_t k, n;
	errcode_t retval;

	for (k = 0; k < m->n; k++) {
		end = m->r[k].off + m->r[k].len;
		for (off = m->r[k].off; off < end; off += n) {
			n = m->chunk;
			if (n > end - off)
				n = end - off;
			for (i = 0; i < n; i++)
				buf[i] = pattern(off + i);
			retval = ext2fs_extent_fill_write(f, off, buf, n);
			if (retval)
				return retval;
		}
	}
	return 0;
}

/* Is any byte of file block @lblk written? */
static int model_maps(const struct model *m, blk64_t lblk, unsigned int bs)
{
	__u64 s = lblk * bs, e = s + bs;
	size_t k;

	for (k = 0; k < m->n; k++)
		if (m->r[k].off < e && m->r[k].off + m->r[k].len > s)
			return 1;
	return 0;
}

static blk64_t model_blocks(const struct model *m, unsigned int bs)
{
	blk64_t n = 0, lblk, last = ~0ULL;
	size_t k;

	for (k = 0; k < m->n; k++)
		for (lblk = m->r[k].off / bs;
		     lblk <= (m->r[k].off + m->r[k].len - 1) / bs; lblk++)
			if (lblk != last) {
				n++;
				last = lblk;
			}
	return n;
}

/* Block @lblk as the file should hold it */
static void model_block(const struct model *m, blk64_t lblk, unsigned int bs,
			unsigned char *out)
{
	__u64 s = lblk * bs, o, from, to;
	size_t k;

	memset(out, 0, bs);
	for (k = 0; k < m->n; k++) {
		from = m->r[k].off > s ? m->r[k].off : s;
		to = m->r[k].off + m->r[k].len;
		if (to > s + bs)
			to = s + bs;
		for (o = from; o < to; o++)
			out[o - s] = pattern(o);
	}
}

struct tree_stats {
	blk64_t mapped, tree, extents, longest;
	int depth;
};

/* One leaf extent: sane, in use, mapping what @m wrote, as written */
static int check_leaf(ext2_filsys fs, const struct model *m,
		      const struct ext2fs_extent *ex, blk64_t *next_lblk)
{
	unsigned int bs = fs->blocksize;
	unsigned char got[1024], want[1024];
	blk64_t i;

	if (ex->e_len == 0 || ex->e_len > EXT_INIT_MAX_LEN ||
	    (ex->e_flags & EXT2_EXTENT_FLAGS_UNINIT) ||
	    ex->e_lblk < *next_lblk ||
	    ex->e_pblk + ex->e_len > ext2fs_blocks_count(fs->super))
		return 0;
	*next_lblk = ex->e_lblk + ex->e_len;
	for (i = 0; i < ex->e_len; i++) {
		if (!ext2fs_test_block_bitmap2(fs->block_map, ex->e_pblk + i) ||
		    !model_maps(m, ex->e_lblk + i, bs) ||
		    io_channel_read_blk64(fs->io, ex->e_pblk + i, 1, got))
			return 0;
		model_block(m, ex->e_lblk + i, bs, want);
		if (memcmp(got, want, bs))
			return 0;
	}
	return 1;
}

/* Walk the tree of @ino; 0 on any extent that is not as written */
static int walk_tree(ext2_filsys fs, ext2_ino_t ino, const struct model *m,
		     struct tree_stats *st)
{
	ext2_extent_handle_t handle;
	struct ext2_extent_info info;
	struct ext2fs_extent ex;
	blk64_t next_lblk = 0;
	int op = EXT2_EXTENT_ROOT, ok = 1;
	errcode_t retval;

	memset(st, 0, sizeof(*st));
	if (ext2fs_extent_open(fs, ino, &handle))
		return 0;
	if (!ext2fs_extent_get_info(handle, &info))
		st->depth = info.max_depth;
	while (ok && !(retval = ext2fs_extent_get(handle, op, &ex))) {
		op = EXT2_EXTENT_NEXT;
		if (!(ex.e_flags & EXT2_EXTENT_FLAGS_LEAF)) {
			/* an index entry, met once going down */
			if (!(ex.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT)) {
				st->tree++;
				ok = ext2fs_test_block_bitmap2(fs->block_map,
							       ex.e_pblk);
			}
			continue;
		}
		ok = check_leaf(fs, m, &ex, &next_lblk);
		st->mapped += ex.e_len;
		st->extents++;
		if (ex.e_len > st->longest)
			st->longest = ex.e_len;
	}
	ext2fs_extent_free(handle);
	return ok && retval == EXT2_ET_EXTENT_NO_NEXT;
}

/* Fill a new file after @m; 0 and the file linked, or the error */
static errcode_t fill_file(ext2_filsys fs, const struct model *m,
			   ext2_ino_t *ino)
{
	struct ext2fs_extent_fill *f;
	struct ext2_inode inode;
	errcode_t retval, rc;

	retval = new_file(fs, ino, &inode);
	if (retval)
		die(retval, "making a file");
	retval = ext2fs_extent_fill_new(fs, STAGE, &f);
	if (retval)
		die(retval, "making a filler");
	ext2fs_extent_fill_set_alloc_func(f, record_range, NULL);
	recording = 1;
	retval = ext2fs_extent_fill_start(f, *ino, &inode);
	if (!retval)
		retval = write_model(f, m);
	if (retval)
		ext2fs_extent_fill_drop(f);
	rc = ext2fs_extent_fill_finish(f);
	recording = 0;
	ext2fs_extent_fill_free(f);
	if (!retval)
		retval = rc;
	if (retval)
		return retval;
	retval = ext2fs_inode_size_set(fs, &inode, model_end(m));
	if (!retval)
		retval = ext2fs_write_inode(fs, *ino, &inode);
	if (!retval)
		retval = ext2fs_link(fs, EXT2_ROOT_INO, m->name, *ino,
				     EXT2_FT_REG_FILE);
	return retval;
}

/*
 * Fill a file and check it whole: its tree against @m, i_blocks and the
 * free count against its blocks, every allocated block reported.
 */
static ext2_ino_t fill_and_check(ext2_filsys fs, const struct model *m,
				 struct tree_stats *st)
{
	blk64_t before = ext2fs_free_blocks_count(fs->super);
	struct ext2_inode inode;
	ext2_ino_t ino;
	char what[160];
	errcode_t retval;

	ext2fs_clear_block_bitmap(recorded);
	retval = fill_file(fs, m, &ino);
	snprintf(what, sizeof(what), "%s: filled (%s)", m->name,
		 retval ? error_message(retval) : "no error");
	check(!retval, what);
	if (retval)
		exit(1);
	snprintf(what, sizeof(what), "%s: every extent maps what was "
		 "written, as written", m->name);
	check(walk_tree(fs, ino, m, st), what);
	snprintf(what, sizeof(what), "%s: %llu blocks mapped, %llu "
		 "expected", m->name, (unsigned long long) st->mapped,
		 (unsigned long long) model_blocks(m, fs->blocksize));
	check(st->mapped == model_blocks(m, fs->blocksize), what);
	ext2fs_read_inode(fs, ino, &inode);
	snprintf(what, sizeof(what), "%s: i_blocks counts the %llu data and "
		 "%llu tree blocks", m->name, (unsigned long long) st->mapped,
		 (unsigned long long) st->tree);
	check(ext2fs_get_stat_i_blocks(fs, &inode) ==
	      (st->mapped + st->tree) * (fs->blocksize / 512), what);
	snprintf(what, sizeof(what), "%s: the free count fell by those, "
		 "each one reported", m->name);
	check(before - ext2fs_free_blocks_count(fs->super) ==
	      st->mapped + st->tree &&
	      count_recorded(fs) == st->mapped + st->tree, what);
	return ino;
}

static void test_contiguous(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	/* a partial last block, written in odd pieces */
	static const struct range r[] = { { 0, 200 * 1024 + 100 } };
	struct model m = { "contiguous", r, 1, 3000 };
	struct tree_stats st;

	shape(fs, shaped, &keep_all);
	fill_and_check(fs, &m, &st);
	check(st.extents == 1, "contiguous: one extent");
}

static void test_fragmented(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	static const struct range r[] = { { 0, 1200 * 1024 } };
	struct model m = { "fragmented", r, 1, 65536 };
	struct tree_stats st;

	shape(fs, shaped, &keep_runs_of_two);
	fill_and_check(fs, &m, &st);
	unshape(fs, shaped);
	check(st.longest <= 2 && st.extents >= 600,
	      "fragmented: one extent per free run of two blocks");
	check(st.depth >= 2, "fragmented: a tree two levels below i_block");
}

static void test_max_len(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	static const struct range r[] = {
		{ 0, (EXT_INIT_MAX_LEN + 1000) * 1024ULL }
	};
	struct model m = { "max_len", r, 1, 65536 };
	struct tree_stats st;
	struct keep run = { 0, 0, 0 };

	longest_free_run(fs, &run.start, &run.len);
	if (run.len < EXT_INIT_MAX_LEN + 1000)
		die(EXT2_ET_BLOCK_ALLOC_FAIL, "finding a long free run");
	shape(fs, shaped, &run);
	fill_and_check(fs, &m, &st);
	unshape(fs, shaped);
	check(st.extents == 2 && st.longest == EXT_INIT_MAX_LEN,
	      "max_len: one run, cut at 32768 blocks into two extents");
}

static void test_holes(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	/* holes inside a block, of whole blocks, past a stage, far out */
	static const struct range r[] = {
		{ 0, 100 }, { 1500, 10 }, { 5000, 1000 }, { 6100, 100 },
		{ 7168, 1024 }, { 70000, 5 }, { 10 << 20, 3000 },
		{ 50 << 20, 1 },
	};
	struct model m = { "holes", r, sizeof(r) / sizeof(r[0]), 700 };
	struct tree_stats st;

	shape(fs, shaped, &keep_all);
	fill_and_check(fs, &m, &st);
}

/* Data past the free space: the error, then nothing left behind */
static void test_no_space(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	static const struct range r[] = { { 0, 2000 * 1024 } };
	struct model m = { "no_space", r, 1, 65536 };
	blk64_t before = ext2fs_free_blocks_count(fs->super);
	blk64_t bfree = bitmap_free(fs), avail;
	__u32 ifree = fs->super->s_free_inodes_count;
	struct keep few = { 0, 0, 1 };
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t retval;
	char what[160];

	/* 900 free blocks in runs of two: the tree grows as it fails */
	longest_free_run(fs, &few.start, &few.len);
	few.len = 1350;
	shape(fs, shaped, &few);
	avail = ext2fs_free_blocks_count(fs->super);
	ext2fs_clear_block_bitmap(recorded);
	retval = fill_file(fs, &m, &ino);
	snprintf(what, sizeof(what), "no_space: %llu blocks free, the fill "
		 "fails with \"%s\"", (unsigned long long) avail,
		 error_message(retval));
	check(retval == EXT2_ET_BLOCK_ALLOC_FAIL, what);
	snprintf(what, sizeof(what), "no_space: the %llu blocks it took "
		 "were all reported", (unsigned long long)
		 (avail - ext2fs_free_blocks_count(fs->super)));
	check(count_recorded(fs) > 0 && count_recorded(fs) ==
	      avail - ext2fs_free_blocks_count(fs->super), what);
	take_back(fs);
	ext2fs_read_inode(fs, ino, &inode);
	drop_file(fs, ino, &inode);
	unshape(fs, shaped);
	check(ext2fs_free_blocks_count(fs->super) == before &&
	      bitmap_free(fs) == bfree,
	      "no_space: taken back, the free blocks are as before");
	check(fs->super->s_free_inodes_count == ifree,
	      "no_space: the inode is free again");
}

/* A whole fragmented file given up: taking it back frees its tree too */
static void test_take_back(ext2_filsys fs, ext2fs_block_bitmap shaped)
{
	static const struct range r[] = { { 0, 600 * 1024 } };
	struct model m = { "taken_back", r, 1, 4096 };
	blk64_t before, bfree;
	__u32 ifree;
	struct ext2_inode inode;
	struct tree_stats st;
	ext2_ino_t ino;

	shape(fs, shaped, &keep_runs_of_two);
	before = ext2fs_free_blocks_count(fs->super);
	bfree = bitmap_free(fs);
	ifree = fs->super->s_free_inodes_count;
	ino = fill_and_check(fs, &m, &st);
	check(st.tree > 0, "taken_back: the tree has blocks of its own");
	if (ext2fs_unlink(fs, EXT2_ROOT_INO, m.name, ino, 0))
		check(0, "taken_back: unlinked");
	take_back(fs);
	ext2fs_read_inode(fs, ino, &inode);
	drop_file(fs, ino, &inode);
	check(ext2fs_free_blocks_count(fs->super) == before &&
	      bitmap_free(fs) == bfree && fs->super->s_free_inodes_count ==
	      ifree, "taken_back: the free blocks and inodes are as before");
	unshape(fs, shaped);
}

/*
 * What the filler refuses, leaving the file as it was: data going back,
 * a file whose tree is not empty, one that is not extent-mapped.
 */
static void test_refusals(ext2_filsys fs)
{
	static const char data[1000] = "x";
	blk64_t before = ext2fs_free_blocks_count(fs->super);
	struct ext2fs_extent_fill *f;
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t retval;

	if (new_file(fs, &ino, &inode) ||
	    ext2fs_extent_fill_new(fs, STAGE, &f))
		die(EXT2_ET_NO_MEMORY, "making a file and a filler");
	ext2fs_extent_fill_set_alloc_func(f, record_range, NULL);
	ext2fs_clear_block_bitmap(recorded);
	recording = 1;
	retval = ext2fs_extent_fill_start(f, ino, &inode);
	if (!retval)
		retval = ext2fs_extent_fill_write(f, 1000, data, 1000);
	check(!retval, "refusals: data at 1000 is taken");
	check(ext2fs_extent_fill_start(f, ino, &inode) ==
	      EXT2_ET_INVALID_ARGUMENT, "refusals: a second start is refused");
	check(ext2fs_extent_fill_write(f, 1999, data, 1) ==
	      EXT2_ET_INVALID_ARGUMENT, "refusals: data going back is refused");
	check(!ext2fs_extent_fill_finish(f), "refusals: finished");
	check(ext2fs_extent_fill_write(f, 4096, data, 1) ==
	      EXT2_ET_INVALID_ARGUMENT, "refusals: data after the finish is "
	      "refused");
	check(ext2fs_extent_fill_start(f, ino, &inode) ==
	      EXT2_ET_INVALID_ARGUMENT,
	      "refusals: a file with blocks already is refused");
	inode.i_flags &= ~EXT4_EXTENTS_FL;
	check(ext2fs_extent_fill_start(f, ino, &inode) ==
	      EXT2_ET_OP_NOT_SUPPORTED,
	      "refusals: a file without extents is refused");
	inode.i_flags |= EXT4_EXTENTS_FL;
	recording = 0;
	ext2fs_extent_fill_free(f);
	check(count_recorded(fs) == 2 &&
	      before - ext2fs_free_blocks_count(fs->super) == 2,
	      "refusals: the two blocks of the data, reported");
	take_back(fs);
	drop_file(fs, ino, &inode);
	check(ext2fs_free_blocks_count(fs->super) == before,
	      "refusals: taken back, the free blocks are as before");
}

int main(int argc, char **argv)
{
	ext2fs_block_bitmap shaped;
	ext2_filsys fs;
	errcode_t retval;

	if (argc != 2) {
		fprintf(stderr, "Usage: %s IMAGE\n", prog);
		return 2;
	}
	add_error_table(&et_ext2_error_table);
	retval = make_scratch_fs(argv[1], &fs);
	if (retval)
		die(retval, "making the scratch filesystem");
	if (ext2fs_allocate_block_bitmap(fs, "recorded", &recorded) ||
	    ext2fs_allocate_block_bitmap(fs, "shaped", &shaped))
		die(EXT2_ET_NO_MEMORY, "allocating bitmaps");
	ext2fs_set_block_alloc_stats_callback(fs, record_block, NULL);
	test_contiguous(fs, shaped);
	unshape(fs, shaped);
	test_fragmented(fs, shaped);
	test_max_len(fs, shaped);
	test_holes(fs, shaped);
	unshape(fs, shaped);
	test_take_back(fs, shaped);
	test_refusals(fs);
	test_no_space(fs, shaped);
	ext2fs_free_block_bitmap(recorded);
	ext2fs_free_block_bitmap(shaped);
	retval = ext2fs_close_free(&fs);
	if (retval)
		die(retval, "closing the scratch filesystem");
	printf("%s: %s\n", prog, failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
