/*
 * readahead.c --- read a filesystem's used blocks ahead, in disk order
 *
 * A backup walks the tree: from a cold cache, each small file is a read
 * of its own at a place the disk head did not expect, and the walk
 * waits for every one.  e2image reads the same blocks in disk order, in
 * large requests, several times faster.  Here a thread asks the kernel
 * for the used blocks, in disk order, while the walk goes on; the walk
 * soon finds what it needs in the page cache.  Advice only: nothing
 * depends on it, and errors are ignored.
 *
 * Only when the used blocks fit easily in free memory: otherwise the
 * blocks read ahead would push out each other before the walk gets
 * there, and the disk would read them twice.
 *
 * Smaller advice, given as the walk goes, is here too: the inode
 * tables, and the data of the files a directory holds.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "e2cryptbak.h"

/*
 * Bytes per request: the device queue's usual largest.  From 256 KiB to
 * 4 MiB made no difference on the benchmark's small files; 16 MiB or
 * more held up the walk's own reads and doubled the cold backup time.
 */
#define RA_CHUNK	(4ULL << 20)
#define RA_GAP		32		/* free blocks read through */
/*
 * Requests in flight, at most.  Advice does not wait: unchecked, the
 * whole disk was queued at once, and every read of the walk's waited
 * behind it (the cold backup of the small files took 0.1-0.3 s more).
 */
#define RA_DEPTH	4

struct e2cb_readahead {
	pthread_t thread;
	uint64_t last[RA_DEPTH];	/* the last byte of each request */
	unsigned int sent;
	int fd;
	int stop;			/* __atomic: set by the main thread */
	ext2fs_block_bitmap map;
	blk64_t first, end;
	unsigned int blocksize;
};

static int stopping(struct e2cb_readahead *ra)
{
	return __atomic_load_n(&ra->stop, __ATOMIC_RELAXED);
}

/* Wait for the oldest of RA_DEPTH requests: a byte read waits for its page */
static void wait_oldest(struct e2cb_readahead *ra)
{
	char c;

	if (ra->sent >= RA_DEPTH &&
	    pread(ra->fd, &c, 1, ra->last[ra->sent % RA_DEPTH]) < 0)
		return;		/* advice only */
}

/* Ask for blocks [@start, @start + @count), a chunk at a time */
static void advise_run(struct e2cb_readahead *ra, blk64_t start,
		       blk64_t count)
{
	uint64_t off = start * ra->blocksize;
	uint64_t len = count * ra->blocksize, n;

	while (len && !stopping(ra)) {
		n = len > RA_CHUNK ? RA_CHUNK : len;
		wait_oldest(ra);
		posix_fadvise(ra->fd, off, n, POSIX_FADV_WILLNEED);
		ra->last[ra->sent++ % RA_DEPTH] = off + n - 1;
		off += n;
		len -= n;
	}
}

static void *readahead_thread(void *arg)
{
	struct e2cb_readahead *ra = arg;
	blk64_t blk = ra->first, start, next, run = 0, run_start = 0;

	while (blk < ra->end && !stopping(ra)) {
		if (ext2fs_find_first_set_block_bitmap2(ra->map, blk,
							ra->end - 1, &start))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(ra->map, start,
							 ra->end - 1, &next))
			next = ra->end;
		if (run && start - (run_start + run) <= RA_GAP) {
			run = next - run_start;
		} else {
			if (run)
				advise_run(ra, run_start, run);
			run_start = start;
			run = next - start;
		}
		/* advise as we go: the first blocks are wanted first */
		if (run * ra->blocksize >= RA_CHUNK) {
			advise_run(ra, run_start, run);
			run = 0;
		}
		blk = next;
	}
	if (run)
		advise_run(ra, run_start, run);
	return NULL;
}

/* The used blocks, when they fit in half the memory now free */
static int worth_reading_ahead(ext2_filsys fs)
{
	long pages = sysconf(_SC_AVPHYS_PAGES);
	long pagesize = sysconf(_SC_PAGESIZE);
	uint64_t used = (ext2fs_blocks_count(fs->super) -
			 ext2fs_free_blocks_count(fs->super)) *
			(uint64_t) fs->blocksize;

	return pages > 0 && pagesize > 0 &&
	       used <= (uint64_t) pages * pagesize / 2;
}

/*
 * Start reading @fs's used blocks ahead, from @device (opened again:
 * the io channel's file descriptor is its own).  *@ret is NULL when
 * it is not worth it or not possible; e2cb_readahead_stop() takes
 * either.
 */
void e2cb_readahead_start(ext2_filsys fs, const char *device,
			  struct e2cb_readahead **ret)
{
	struct e2cb_readahead *ra;
	sigset_t all, old;

	*ret = NULL;
	/*
	 * libext2fs reads the bitmaps where the group descriptors say;
	 * damaged ones can make it write past its buffers (1.47.0, with
	 * s_first_data_block 16 and 4 KiB blocks: found by fuzz_backup).
	 */
	if (!worth_reading_ahead(fs) || ext2fs_check_desc(fs) ||
	    ext2fs_read_block_bitmap(fs))
		return;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return;
	ra->fd = open(device, O_RDONLY | O_CLOEXEC);
	/* a copy of its own: a bitmap's lookups move its cursor */
	if (ra->fd < 0 || ext2fs_copy_bitmap(fs->block_map, &ra->map)) {
		if (ra->fd >= 0)
			close(ra->fd);
		free(ra);
		return;
	}
	ra->first = fs->super->s_first_data_block;
	ra->end = ext2fs_blocks_count(fs->super);
	ra->blocksize = fs->blocksize;
	/* the thread takes no signal: the main thread's handlers clean up */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&ra->thread, NULL, readahead_thread, ra)) {
		ext2fs_free_block_bitmap(ra->map);
		close(ra->fd);
		free(ra);
		ra = NULL;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*ret = ra;
}

/* Stop the thread, if it still runs, and free what it used */
void e2cb_readahead_stop(struct e2cb_readahead *ra)
{
	if (!ra)
		return;
	__atomic_store_n(&ra->stop, 1, __ATOMIC_RELAXED);
	pthread_join(ra->thread, NULL);
	ext2fs_free_block_bitmap(ra->map);
	close(ra->fd);
	free(ra);
}

/*
 * The walk of a subtree reads ahead the data of the files it is about
 * to reach, a directory's worth at a time, merged into runs across
 * short gaps.
 */
#define FILES_GAP	16		/* blocks read through, not skipped */

static void ra_add(struct e2cb_ra_files *ra, blk64_t pblk, blk64_t len)
{
	if (len > ra->budget)
		len = ra->budget;
	ra->budget -= len;
	if (ra->count && pblk >= ra->start + ra->count &&
	    pblk <= ra->start + ra->count + FILES_GAP) {
		ra->count = pblk + len - ra->start;
		return;
	}
	if (ra->count)
		io_channel_cache_readahead(ra->fs->io, ra->start, ra->count);
	ra->start = pblk;
	ra->count = len;
}

/* The written extents of a file whose extent tree fits in its inode */
static void ra_add_inode(struct e2cb_ra_files *ra, ext2_ino_t ino,
			 struct ext2_inode *inode)
{
	ext2_filsys fs = ra->fs;
	ext2_extent_handle_t handle;
	struct ext2_extent_info info;
	struct ext2fs_extent ex;
	int i, op = EXT2_EXTENT_ROOT;

	if (!LINUX_S_ISREG(inode->i_mode) ||
	    (inode->i_flags & EXT4_INLINE_DATA_FL) ||
	    !(inode->i_flags & EXT4_EXTENTS_FL) ||
	    ext2fs_extent_open2(fs, ino, inode, &handle))
		return;
	if (ext2fs_extent_get_info(handle, &info) || info.max_depth)
		goto out;
	for (i = 0; i < 4 && ra->budget; i++, op = EXT2_EXTENT_NEXT_SIB) {
		if (ext2fs_extent_get(handle, op, &ex))
			break;
		/* unwritten extents read as zeros: nothing to fetch */
		if (!ex.e_len || (ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT) ||
		    ex.e_pblk + ex.e_len > ext2fs_blocks_count(fs->super))
			continue;
		ra_add(ra, ex.e_pblk, ex.e_len);
	}
out:
	ext2fs_extent_free(handle);
}

/* Advise up to @bytes of files' data */
void e2cb_readahead_files_begin(struct e2cb_ra_files *ra, ext2_filsys fs,
				uint64_t bytes)
{
	ra->fs = fs;
	ra->start = ra->count = 0;
	ra->budget = bytes / fs->blocksize;
}

/* Inode @ino's data, while the budget lasts; what is not right is left */
void e2cb_readahead_file(struct e2cb_ra_files *ra, ext2_ino_t ino)
{
	struct ext2_inode inode;

	if (ino && ino <= ra->fs->super->s_inodes_count &&
	    !ext2fs_read_inode(ra->fs, ino, &inode))
		ra_add_inode(ra, ino, &inode);
}

void e2cb_readahead_files_end(struct e2cb_ra_files *ra)
{
	if (ra->count)
		io_channel_cache_readahead(ra->fs->io, ra->start, ra->count);
}

/*
 * From a cold cache the walk's inode reads are random and one at a
 * time; let the kernel read the used part of every inode table ahead,
 * in large requests.  Advice only: errors do not matter.
 */
void e2cb_readahead_inode_tables(ext2_filsys fs)
{
	blk64_t start = 0, count = 0, blk, n;
	__u32 used;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT))
			continue;
		blk = ext2fs_inode_table_loc(fs, g);
		used = fs->super->s_inodes_per_group;
		if (ext2fs_has_group_desc_csum(fs) &&
		    ext2fs_bg_itable_unused(fs, g) < used)
			used -= ext2fs_bg_itable_unused(fs, g);
		n = ((blk64_t) used * EXT2_INODE_SIZE(fs->super) +
		     fs->blocksize - 1) / fs->blocksize;
		if (!blk || !n || blk + n > ext2fs_blocks_count(fs->super))
			continue;
		if (count && start + count == blk) {
			count += n;
			continue;
		}
		if (count)
			io_channel_cache_readahead(fs->io, start, count);
		start = blk;
		count = n;
	}
	if (count)
		io_channel_cache_readahead(fs->io, start, count);
}
