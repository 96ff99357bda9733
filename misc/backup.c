/*
 * backup.c --- e2cryptbak backup: write an archive of an unmounted ext4
 * filesystem without the key
 *
 * Each inode becomes one pax tar entry carrying, as records, what the
 * 2015 ext4 backup ioctls would have returned: the context with the true
 * i_size ('e5' blob), the raw name ('ef'/'ed' blob) and the stored
 * blocks, ciphertext as it lies on disk, holes kept as holes.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include <ext2fs/ext3_extents.h>
#include "e2cryptbak.h"
#include "ext2fs/journal_replay.h"

#define IOBUF_SIZE	(1024 * 1024)
#define WRITER_BUFS	8		/* batches queued for the writer */
#define BATCH_ENTRIES	64
#define OUTBLOCK_SIZE	(256 * 1024)
#define OUTBLOCK_BUFS	8
#define WRITEBACK_BYTES	(32ULL << 20)
#define READAHEAD_FILES	1024
#define READAHEAD_BYTES	(16 << 20)
#define READAHEAD_GAP	16		/* blocks read through, not skipped */
#define MAX_DEPTH	4096

/* Hard-linked inodes seen so far: inode number -> first path */
struct link_table {
	ext2_ino_t *ino;
	char **path;
	size_t count, size;
};

struct backup {
	ext2_filsys fs;
	struct ext2fs_replay_stats replay;	/* what opening it replayed */
	struct archive *a;
	struct archive_entry *entry;
	const char *dest;		/* the archive, for messages */
	ext2fs_inode_bitmap dirs_seen;
	struct link_table links;
	struct e2cb_data_sum sum;	/* of the previous entry's data */
	uint32_t seq;
	uint64_t entries, inodes, encrypted, data_bytes, skipped;
	uint64_t inodes_total;
	char *iobuf;			/* where the entry's data is read */
	size_t iobuf_room;		/* 0: the entry is written here */
	int preread;			/* all the entry's data is there */
	char *syncbuf;			/* for the entries written here */
	char why[96];			/* what failed, for skip_entry() */
	const char *holes;		/* HOLES_SIZE zero bytes, or NULL */
	int progress;
	time_t last_progress;
	char *path;
	size_t path_len, path_size;
	/* PATH names a non-directory: the root holds this one name */
	ext2_ino_t only_ino;
	struct ext4_encrypted_name only_name;	/* name_len 0: any name */
	int only_done;
	/* entries go to libarchive on a thread of their own ... */
	struct e2cb_pipe *writer;
	int writer_ready;		/* the writer thread takes SIGPIPE */
	struct job_batch *batch;	/* the batch being filled, or NULL */
	size_t batch_used;		/* bytes of its data area taken */
	size_t batch_regions;		/* of its region area taken */
	unsigned int nbatches;
	struct archive_entry *job_entry[WRITER_BUFS][BATCH_ENTRIES];
	struct archive_entry *own_entry;	/* for the archive's ends */
	/* ... and the archive's bytes out on another */
	struct e2cb_pipe *out;
	struct e2cb_readahead *ra;
	int out_fd, out_is_file;
	uint8_t *out_buf;		/* the block being filled */
	size_t out_len;
	int discard;			/* the backup failed: write no more */
	uint64_t out_bytes, out_synced;
};

/* A child of the directory being walked, copied out of its block */
struct child {
	ext2_ino_t ino;
	struct ext4_encrypted_name name;
};

struct child_list {
	struct child *c;
	size_t count, size;
	struct ext2_inode dir;
	ext2_ino_t dir_ino;
	struct backup *b;
	errcode_t retval;
};

/* A run of stored blocks, in bytes, after clipping */
struct region {
	uint64_t off, len;
	blk64_t pblk;
};

/* An entry as the writer thread writes it, with its data */
struct entry_job {
	struct archive_entry *entry;
	struct e2cb_inode_rec r;	/* sealed when queued */
	const char *data;		/* NULL: read as it is written */
	uint64_t data_pos;
	struct region *regions;
	size_t count;
	uint64_t tar_size;
	size_t inline_len;		/* of E2CB_IF_INLINE data */
};

/*
 * Entries go to the writer thread in batches, each in a buffer of the
 * pipe: first the jobs, then their data (BATCH_DATA on: up to
 * IOBUF_SIZE), then their regions.  A region holds a block at least,
 * so IOBUF_SIZE / 1024 of them always fit.  One entry at a time costs
 * more in handing over than libarchive takes to write it.
 */
struct job_batch {
	unsigned int count;
	struct entry_job job[BATCH_ENTRIES];
};
#define BATCH_DATA	((sizeof(struct job_batch) + 4095) & ~(size_t) 4095)
#define BATCH_REGIONS	(BATCH_DATA + IOBUF_SIZE)
#define BATCH_SIZE	(BATCH_REGIONS + \
			 IOBUF_SIZE / 1024 * sizeof(struct region))

struct region_list {
	struct region *r;
	size_t count, size;
	uint64_t limit;			/* data past this is not kept */
	errcode_t retval;
};


/* Holes are fed to libarchive from here; it skips them without copying. */
static const char zero_buf[64 * 1024];

/*
 * libarchive takes a sparse file's holes as zeros in the data stream
 * and skips them; a mapping of the zero page feeds a large hole in few
 * calls without the memory.
 */
#define HOLES_SIZE	(256ULL << 20)

/* Linear probing table; only inodes with several names enter it. */
static const char *link_lookup(struct link_table *t, ext2_ino_t ino)
{
	size_t i;

	if (!t->size)
		return NULL;
	for (i = ino % t->size; t->ino[i]; i = (i + 1) % t->size)
		if (t->ino[i] == ino)
			return t->path[i];
	return NULL;
}

static errcode_t link_insert(struct link_table *t, ext2_ino_t ino,
			     const char *path)
{
	size_t i;

	if ((t->count + 1) * 2 > t->size) {
		struct link_table n;
		size_t j;

		n.size = t->size ? t->size * 2 : 64;
		n.count = 0;
		n.ino = calloc(n.size, sizeof(*n.ino));
		n.path = calloc(n.size, sizeof(*n.path));
		if (!n.ino || !n.path) {
			free(n.ino);
			free(n.path);
			return EXT2_ET_NO_MEMORY;
		}
		for (j = 0; j < t->size; j++) {
			if (!t->ino[j])
				continue;
			for (i = t->ino[j] % n.size; n.ino[i];
			     i = (i + 1) % n.size)
				;
			n.ino[i] = t->ino[j];
			n.path[i] = t->path[j];
			n.count++;
		}
		free(t->ino);
		free(t->path);
		*t = n;
	}
	for (i = ino % t->size; t->ino[i]; i = (i + 1) % t->size)
		;
	t->path[i] = strdup(path);
	if (!t->path[i])
		return EXT2_ET_NO_MEMORY;
	t->ino[i] = ino;
	t->count++;
	return 0;
}

static void link_free(struct link_table *t)
{
	size_t i;

	for (i = 0; i < t->size; i++)
		free(t->path[i]);
	free(t->ino);
	free(t->path);
}

/*
 * The current path, relative to the backup root; the root itself is
 * "" here and "." in the archive.
 */
static const char *entry_path(struct backup *b)
{
	return b->path_len ? b->path : ".";
}

static errcode_t path_push(struct backup *b, const char *comp, size_t len)
{
	size_t need = b->path_len + 1 + len + 1;
	char *p;

	if (need > b->path_size) {
		p = realloc(b->path, need * 2);
		if (!p)
			return EXT2_ET_NO_MEMORY;
		b->path = p;
		b->path_size = need * 2;
	}
	if (b->path_len)
		b->path[b->path_len++] = '/';
	memcpy(b->path + b->path_len, comp, len);
	b->path_len += len;
	b->path[b->path_len] = 0;
	return 0;
}

static void path_pop(struct backup *b, size_t old_len)
{
	b->path_len = old_len;
	if (b->path)
		b->path[old_len] = 0;
}

static void show_progress(struct backup *b, int done)
{
	time_t now;

	if (!b->progress)
		return;
	now = time(NULL);
	if (!done && now == b->last_progress)
		return;
	b->last_progress = now;
	/* a subtree's share of the inodes is not known beforehand */
	if (b->inodes_total && !done)
		fprintf(stderr, "\r%s: %llu/%llu inodes, %llu MiB",
			program_name, (unsigned long long) b->inodes,
			(unsigned long long) b->inodes_total,
			(unsigned long long) (b->data_bytes >> 20));
	else
		fprintf(stderr, "\r%s: %llu inodes, %llu MiB%s",
			program_name, (unsigned long long) b->inodes,
			(unsigned long long) (b->data_bytes >> 20),
			done ? "\n" : "");
}

/*
 * A failure of libarchive, which ends the backup: it names the archive,
 * what was being written (@what and @name, or nothing), and errno when
 * a write failed -- a full disk or a closed pipe.
 */
static errcode_t archive_err(struct backup *b, const char *what,
			     const char *name)
{
	const char *msg = archive_error_string(b->a);
	int err = archive_errno(b->a);
	char where[4200] = "";

	if (what)
		snprintf(where, sizeof(where), " (%s%s)", what, name);
	if (err > 0 && (!msg || !strcmp(msg, "Write error")))
		com_err(program_name, err, "while writing %s%s", b->dest,
			where);
	else if (err > 0)
		fprintf(stderr, "%s: while writing %s%s: %s: %s\n",
			program_name, b->dest, where, msg, strerror(err));
	else
		fprintf(stderr, "%s: while writing %s%s: %s\n", program_name,
			b->dest, where, msg ? msg : "unknown error");
	return EXT2_ET_SHORT_WRITE;
}

static int region_proc(ext2_filsys fs, blk64_t lblk, blk64_t pblk,
		       blk64_t count, void *priv)
{
	struct region_list *rl = priv;
	uint64_t off = lblk * fs->blocksize;
	uint64_t len = count * fs->blocksize;

	/* an unencrypted file's data ends at i_size, as tar expects */
	if (off >= rl->limit)
		return 0;
	if (off + len > rl->limit)
		len = rl->limit - off;
	if (rl->count && rl->r[rl->count - 1].off +
	    rl->r[rl->count - 1].len == off &&
	    rl->r[rl->count - 1].len % fs->blocksize == 0 &&
	    rl->r[rl->count - 1].pblk + rl->r[rl->count - 1].len /
	    fs->blocksize == pblk) {
		rl->r[rl->count - 1].len += len;
		return 0;
	}
	if (e2cb_grow((void **) &rl->r, &rl->size, rl->count, sizeof(*rl->r))) {
		rl->retval = EXT2_ET_NO_MEMORY;
		return BLOCK_ABORT;
	}
	rl->r[rl->count].off = off;
	rl->r[rl->count].len = len;
	rl->r[rl->count].pblk = pblk;
	rl->count++;
	return 0;
}

static errcode_t feed_hole(struct backup *b, const struct entry_job *j,
			   uint64_t len)
{
	const char *zeros = b->holes ? b->holes : zero_buf;
	size_t max = b->holes ? HOLES_SIZE : sizeof(zero_buf), n;

	while (len) {
		n = len > max ? max : len;
		if (archive_write_data(b->a, zeros, n) != (ssize_t) n)
			return archive_err(b, "entry ",
					   archive_entry_pathname(j->entry));
		len -= n;
	}
	return 0;
}

/*
 * Read @count blocks at @pblk into @buf.  When that fails, the blocks
 * are read one by one to find the first that cannot be: *@bad.
 */
static errcode_t read_blocks(struct backup *b, blk64_t pblk, blk64_t count,
			     char *buf, blk64_t *bad)
{
	errcode_t retval;
	blk64_t i;

	/*
	 * A negative count is in bytes and bypasses unix_io's block cache,
	 * which then keeps the inode tables and directories that the next
	 * inodes need instead of file data.
	 */
	*bad = pblk;
	retval = io_channel_read_blk64(b->fs->io, pblk,
				       -(int) (count * b->fs->blocksize), buf);
	if (!retval || count == 1)
		return retval;
	for (i = 0; i < count; i++) {
		*bad = pblk + i;
		retval = io_channel_read_blk64(b->fs->io, pblk + i,
					       -(int) b->fs->blocksize,
					       buf + i * b->fs->blocksize);
		if (retval)
			return retval;
	}
	return 0;
}

/*
 * Read the data of a regular file before its header is written: once
 * it is, the entry cannot be taken back, and a block that cannot be
 * read would leave a damaged file in the archive.  Data that fits in
 * iobuf stays there for write_region(); more is read twice, the second
 * time mostly from the page cache.
 */
static errcode_t preread_data(struct backup *b, const struct region_list *rl)
{
	unsigned int bs = b->fs->blocksize;
	uint64_t total = 0, pos = 0, done, n;
	blk64_t count, bad;
	errcode_t retval;
	size_t i;

	b->preread = 0;
	for (i = 0; i < rl->count; i++)
		total += (rl->r[i].len + bs - 1) / bs * bs;
	if (total > b->iobuf_room) {
		/* more than its blocks said: not for the batch */
		b->iobuf = b->syncbuf;
		b->iobuf_room = 0;
	}
	for (i = 0; i < rl->count; i++) {
		for (done = 0; done < rl->r[i].len; done += n) {
			n = rl->r[i].len - done;
			if (n > IOBUF_SIZE)
				n = IOBUF_SIZE;
			count = (n + bs - 1) / bs;
			retval = read_blocks(b, rl->r[i].pblk + done / bs,
					     count, b->iobuf +
					     (total <= IOBUF_SIZE ? pos : 0),
					     &bad);
			if (retval) {
				snprintf(b->why, sizeof(b->why), "reading "
					 "block %llu (byte %llu of its data) "
					 "of", (unsigned long long) bad,
					 (unsigned long long) (rl->r[i].off +
					 (bad - rl->r[i].pblk) * bs));
				return retval;
			}
			pos += count * bs;
		}
	}
	b->preread = total <= IOBUF_SIZE;
	return 0;
}

/*
 * The next @count blocks of region @r, @done bytes into it, in iobuf at
 * *@data: where preread_data() put them, or read now.  What cannot be read
 * now, though it could be a moment ago, is stored as zeros: the header
 * is out, and the entry must be whole.  The archive says it is
 * incomplete.
 */
static errcode_t fetch_blocks(struct backup *b, struct entry_job *j,
			      const struct region *r, uint64_t done,
			      blk64_t count, const char **data)
{
	unsigned int bs = b->fs->blocksize;
	blk64_t pblk = r->pblk + done / bs, bad, i;
	errcode_t retval;

	if (j->data) {
		*data = j->data + j->data_pos;
		j->data_pos += count * bs;
		return 0;
	}
	*data = b->iobuf;
	if (!read_blocks(b, pblk, count, b->iobuf, &bad))
		return 0;
	for (i = bad - pblk; i < count; i++) {
		retval = io_channel_read_blk64(b->fs->io, pblk + i, -(int) bs,
					       b->iobuf + i * bs);
		if (!retval)
			continue;
		memset(b->iobuf + i * bs, 0, bs);
		com_err(program_name, retval, "while reading block %llu "
			"(byte %llu of the data of %s), read a moment ago; "
			"stored as zeros: the file is damaged in the archive",
			(unsigned long long) (pblk + i),
			(unsigned long long) (r->off + done + i * bs),
			entry_path(b));
		b->skipped++;
	}
	return 0;
}

static errcode_t write_region(struct backup *b, struct entry_job *j,
			       const struct region *r)
{
	ext2_filsys fs = b->fs;
	uint64_t done = 0, n;
	const char *data;
	blk64_t blocks;
	errcode_t retval;

	while (done < r->len) {
		n = r->len - done;
		if (n > IOBUF_SIZE)
			n = IOBUF_SIZE;
		blocks = (n + fs->blocksize - 1) / fs->blocksize;
		retval = fetch_blocks(b, j, r, done, blocks, &data);
		if (retval)
			return retval;
		/* data read ahead was summed as it was handed over */
		if (!j->data)
			e2cb_sum_add(&b->sum, r->off + done, data, n);
		if (archive_write_data(b->a, data, n) != (ssize_t) n)
			return archive_err(b, "entry ",
					   archive_entry_pathname(j->entry));
		done += n;
	}
	return 0;
}

/* The map entries of the regions: libarchive joins those that abut */
static size_t sparse_runs(const struct region_list *rl)
{
	size_t i, n = 0;

	for (i = 0; i < rl->count; i++)
		if (!i || rl->r[i - 1].off + rl->r[i - 1].len != rl->r[i].off)
			n++;
	return n;
}

/* The stored regions, and the size the tar entry must cover */
static errcode_t map_regions(struct backup *b, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     struct region_list *rl, uint64_t *tar_size)
{
	uint64_t i_size = EXT2_I_SIZE(inode);
	errcode_t retval;

	memset(rl, 0, sizeof(*rl));
	/* ciphertext is kept whole: i_size alone says where it ends */
	rl->limit = (inode->i_flags & EXT4_ENCRYPT_FL) ? ~0ULL : i_size;
	retval = ext2fs_stored_runs_iterate(b->fs, ino,
					    (struct ext2_inode *) inode,
					    region_proc, rl);
	if (!retval)
		retval = rl->retval;
	if (retval)
		return retval;
	/* beyond 2^32 blocks: corrupt, and holes no one could feed */
	if (i_size > ((uint64_t) 1 << 32) * b->fs->blocksize)
		return EXT2_ET_FILE_TOO_BIG;
	/* the sparse map, and the (size, 0) that may end it: readers
	 * refuse more (doc/archive-format.txt 10.1) */
	if (sparse_runs(rl) + 1 > E2CB_MAX_STRETCHES) {
		snprintf(b->why, sizeof(b->why), "archiving (more than %u "
			 "data stretches: holes), in", E2CB_MAX_STRETCHES);
		return EXT2_ET_FILE_TOO_BIG;
	}
	*tar_size = i_size;
	if (rl->count && rl->r[rl->count - 1].off +
	    rl->r[rl->count - 1].len > *tar_size)
		*tar_size = rl->r[rl->count - 1].off +
			    rl->r[rl->count - 1].len;
	return 0;
}

static void add_sparse_map(struct archive_entry *e,
			   const struct region_list *rl, uint64_t tar_size)
{
	size_t i;

	if (rl->count == 1 && rl->r[0].off == 0 && rl->r[0].len == tar_size)
		return;
	if (rl->count == 0 && tar_size == 0)
		return;
	for (i = 0; i < rl->count; i++)
		archive_entry_sparse_add_entry(e, rl->r[i].off, rl->r[i].len);
	/* an all-hole file still needs a map, or tar expects its bytes */
	if (rl->count == 0)
		archive_entry_sparse_add_entry(e, tar_size, 0);
}

static errcode_t write_regions(struct backup *b, struct entry_job *j)
{
	uint64_t pos = 0;
	errcode_t retval;
	size_t i;

	/* libarchive writes the sparse map with the first data */
	if (j->count == 0 && j->tar_size)
		return feed_hole(b, j, j->tar_size);
	for (i = 0; i < j->count; i++) {
		retval = feed_hole(b, j, j->regions[i].off - pos);
		if (retval)
			return retval;
		retval = write_region(b, j, &j->regions[i]);
		if (retval)
			return retval;
		pos = j->regions[i].off + j->regions[i].len;
	}
	return 0;
}

struct xattr_ctx {
	struct e2cb_xattr_buf xb;
	errcode_t retval;
};

/*
 * The context (index 9 "c") travels in the 'e5' blob, and inline data
 * ("system.data") in the entry's data; every other attribute is kept
 * byte for byte with its index.
 */
static int xattr_proc(int index, const char *name, size_t name_len,
		      const void *value, size_t value_len, void *priv)
{
	struct xattr_ctx *xc = priv;

	if (index == EXT4_XATTR_INDEX_ENCRYPTION && name_len == 1 &&
	    name[0] == 'c')
		return 0;
	if (index == 7 && name_len == 4 && memcmp(name, "data", 4) == 0)
		return 0;
	xc->retval = e2cb_xattr_buf_add(&xc->xb, index, name, name_len,
					value, value_len);
	return xc->retval ? XATTR_ABORT : 0;
}

static errcode_t add_xattrs(struct backup *b, ext2_ino_t ino,
			    struct ext2_inode_large *inode,
			    struct e2cb_inode_rec *r)
{
	struct xattr_ctx xc;
	errcode_t retval;

	memset(&xc, 0, sizeof(xc));
	retval = ext2fs_xattrs_raw_iterate(b->fs, ino, inode, xattr_proc,
					   &xc);
	if (!retval)
		retval = xc.retval;
	if (!retval && xc.xb.len) {
		e2cb_seal(xc.xb.buf, xc.xb.len);
		archive_entry_xattr_add_entry(b->entry, E2CB_REC_XATTRS,
					      xc.xb.buf, xc.xb.len + 4);
		r->rflags |= E2CB_IF_XATTRS;
	}
	free(xc.xb.buf);
	return retval;
}

/*
 * A symlink's target as stored: inline, in i_block, or in one block,
 * read whole into @buf (EXT2_MAX_BLOCK_SIZE bytes at least).
 */
static errcode_t read_symlink(struct backup *b, ext2_ino_t ino,
			      struct ext2_inode_large *inode, char *buf,
			      size_t *len)
{
	uint64_t size = EXT2_I_SIZE(inode);
	size_t got = 0;
	errcode_t retval;

	if (size == 0 || size >= b->fs->blocksize)
		return EXT2_ET_INODE_CORRUPTED;
	*len = size;
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		retval = ext2fs_inline_data_size(b->fs, ino, &got);
		if (!retval && got < size)
			retval = EXT2_ET_INODE_CORRUPTED;
		if (!retval)
			retval = ext2fs_inline_data_get(b->fs, ino,
					(struct ext2_inode *) inode, buf, &got);
		return retval;
	}
	if (ext2fs_is_fast_symlink((struct ext2_inode *) inode)) {
		if (size > sizeof(inode->i_block))
			return EXT2_ET_INODE_CORRUPTED;
		memcpy(buf, inode->i_block, size);
		return 0;
	}
	if (inode->i_flags & EXT4_EXTENTS_FL) {
		blk64_t pblk;

		retval = ext2fs_bmap2(b->fs, ino, (struct ext2_inode *) inode,
				      NULL, 0, 0, NULL, &pblk);
		if (retval)
			return retval;
		if (!pblk)
			return EXT2_ET_INODE_CORRUPTED;
		retval = io_channel_read_blk64(b->fs->io, pblk, 1, buf);
	} else {
		if (inode->i_block[0] < b->fs->super->s_first_data_block ||
		    inode->i_block[0] >= ext2fs_blocks_count(b->fs->super))
			return EXT2_ET_CRYPT_BLOCK_OUT_OF_RANGE;
		retval = io_channel_read_blk64(b->fs->io, inode->i_block[0],
					       1, buf);
	}
	return retval;
}

static errcode_t set_symlink(struct backup *b, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     struct e2cb_inode_rec *r)
{
	char target[EXT2_MAX_BLOCK_SIZE + 4];
	char *b64;
	size_t len;
	errcode_t retval;

	retval = read_symlink(b, ino, inode, target, &len);
	if (retval)
		return retval;
	if (!(inode->i_flags & EXT4_ENCRYPT_FL)) {
		if (memchr(target, 0, len))
			return EXT2_ET_INODE_CORRUPTED;
		target[len] = 0;
		archive_entry_copy_symlink(b->entry, target);
		return 0;
	}
	/* ciphertext: raw in a record, base64url for tar's eyes */
	e2cb_seal((uint8_t *) target, len);
	archive_entry_xattr_add_entry(b->entry, E2CB_REC_SYMLINK, target,
				      len + 4);
	r->rflags |= E2CB_IF_SYMLINK;
	b64 = malloc(E2CB_B64_LEN(len) + 1);
	if (!b64)
		return EXT2_ET_NO_MEMORY;
	b64[e2cb_b64url_encode((uint8_t *) target, len, b64)] = 0;
	archive_entry_copy_symlink(b->entry, b64);
	free(b64);
	return 0;
}

/* 'e5' (context and i_size) for an encrypted inode; 'ef'/'ed' for a name
 * in an encrypted directory */
static errcode_t add_crypt_records(struct backup *b, ext2_ino_t ino,
				   struct ext2_inode_large *inode,
				   const struct child *c, int parent_enc,
				   struct e2cb_inode_rec *r)
{
	__u8 blob[EXT4_CRYPT_BLOB_MAX];
	__u8 ctx[EXT4_ENCRYPTED_METADATA_MAX];
	size_t ctx_len = 0, len;
	int is_dir = LINUX_S_ISDIR(inode->i_mode);
	errcode_t retval;

	if (inode->i_flags & EXT4_ENCRYPT_FL) {
		retval = ext2fs_get_encryption_context(b->fs, ino, inode, ctx,
						       sizeof(ctx), &ctx_len);
		if (retval)
			return retval;
		retval = ext2fs_encode_metadata_blob(EXT2_I_SIZE(inode), ctx,
						     ctx_len, blob,
						     sizeof(blob), &len);
		if (retval)
			return retval;
		archive_entry_xattr_add_entry(b->entry, E2CB_REC_METADATA,
					      blob, len);
		r->rflags |= E2CB_IF_METADATA;
	}
	if (!parent_enc || !c)
		return 0;
	/* a directory in an encrypted directory is always encrypted */
	if (is_dir && !ctx_len)
		return EXT2_ET_CRYPT_NO_CONTEXT;
	retval = ext2fs_encode_filename_blob(&c->name, is_dir, inode->i_mode,
					     ctx, ctx_len, blob, sizeof(blob),
					     &len);
	if (retval)
		return retval;
	archive_entry_xattr_add_entry(b->entry, E2CB_REC_NAME, blob, len);
	r->rflags |= E2CB_IF_NAME;
	if (c->name.has_hash) {
		r->rflags |= E2CB_IF_DIRENT_HASH;
		r->dirent_hash = c->name.hash;
		r->dirent_minor_hash = c->name.minor_hash;
	}
	return 0;
}

static void fill_inode_rec(struct backup *b, ext2_ino_t ino,
			   struct ext2_inode_large *inode,
			   struct e2cb_inode_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->ino = ino;
	r->mode = inode->i_mode;
	r->uid = inode_uid(*inode);
	r->gid = inode_gid(*inode);
	r->links_count = inode->i_links_count;
	r->size = EXT2_I_SIZE(inode);
	r->iflags = inode->i_flags;
	r->generation = inode->i_generation;
	e2cb_inode_times(inode, EXT2_INODE_SIZE(b->fs->super), r);
	if (LINUX_S_ISCHR(inode->i_mode) || LINUX_S_ISBLK(inode->i_mode))
		e2cb_inode_rdev((struct ext2_inode *) inode, &r->rdev_major,
				&r->rdev_minor);
}

static void fill_tar_header(struct backup *b, const struct e2cb_inode_rec *r)
{
	struct archive_entry *e = b->entry;
	int type;

	archive_entry_copy_pathname(e, entry_path(b));
	switch (r->mode & LINUX_S_IFMT) {
	case LINUX_S_IFDIR: type = AE_IFDIR; break;
	case LINUX_S_IFLNK: type = AE_IFLNK; break;
	case LINUX_S_IFCHR: type = AE_IFCHR; break;
	case LINUX_S_IFBLK: type = AE_IFBLK; break;
	case LINUX_S_IFIFO: type = AE_IFIFO; break;
	default: type = AE_IFREG; break;	/* sockets too: tar has none */
	}
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, r->mode & 07777);
	archive_entry_set_uid(e, r->uid);
	archive_entry_set_gid(e, r->gid);
	archive_entry_set_nlink(e, r->links_count);
	archive_entry_set_atime(e, r->atime.sec, r->atime.nsec);
	archive_entry_set_mtime(e, r->mtime.sec, r->mtime.nsec);
	archive_entry_set_ctime(e, r->ctime.sec, r->ctime.nsec);
	if (r->rflags & E2CB_IF_CRTIME)
		archive_entry_set_birthtime(e, r->crtime.sec, r->crtime.nsec);
	if (type == AE_IFCHR || type == AE_IFBLK) {
		archive_entry_set_rdevmajor(e, r->rdev_major);
		archive_entry_set_rdevminor(e, r->rdev_minor);
	}
	archive_entry_set_size(e, 0);
}

/* The record follows the data before it: sealed as the entry goes out */
static void seal_inode_rec(struct backup *b, struct entry_job *j)
{
	uint8_t rec[E2CB_INODE_REC_SIZE];

	j->r.seq = ++b->seq;
	j->r.prev_data_bytes = b->sum.bytes;
	j->r.prev_data_crc = e2cb_sum_final(&b->sum);
	e2cb_encode_inode(&j->r, rec);
	archive_entry_xattr_add_entry(j->entry, E2CB_REC_INODE, rec,
				      sizeof(rec));
	e2cb_sum_init(&b->sum);
}

/* Data of a regular file: stored blocks, or the inline data area */
static errcode_t prepare_data(struct backup *b, ext2_ino_t ino,
			      struct ext2_inode_large *inode,
			      struct region_list *rl, char **inline_buf,
			      size_t *inline_len, struct e2cb_inode_rec *r)
{
	uint64_t tar_size = 0;
	errcode_t retval;

	*inline_buf = NULL;
	*inline_len = 0;
	memset(rl, 0, sizeof(*rl));
	if (!LINUX_S_ISREG(inode->i_mode))
		return 0;
	if (!(inode->i_flags & EXT4_INLINE_DATA_FL)) {
		retval = map_regions(b, ino, inode, rl, &tar_size);
		if (retval)
			return retval;
		retval = preread_data(b, rl);
		if (retval)
			return retval;
		/* libarchive checks the map against the size: size first */
		archive_entry_set_size(b->entry, tar_size);
		add_sparse_map(b->entry, rl, tar_size);
		return 0;
	}
	retval = ext2fs_inline_data_size(b->fs, ino, inline_len);
	if (retval)
		return retval;
	if (*inline_len > EXT2_I_SIZE(inode))
		*inline_len = EXT2_I_SIZE(inode);
	retval = ext2fs_get_mem(*inline_len + 4096, inline_buf);
	if (retval)
		return retval;
	retval = ext2fs_inline_data_get(b->fs, ino, (struct ext2_inode *) inode,
					*inline_buf, NULL);
	if (retval)
		return retval;
	r->rflags |= E2CB_IF_INLINE;
	archive_entry_set_size(b->entry, EXT2_I_SIZE(inode));
	return 0;
}

static errcode_t write_inline(struct backup *b, const struct entry_job *j)
{
	const char *path = archive_entry_pathname(j->entry);
	uint64_t pos, size = j->r.size;
	size_t n, len = j->inline_len;

	if (len && archive_write_data(b->a, j->data, len) != (ssize_t) len)
		return archive_err(b, "entry ", path);
	/* i_size past the inline area reads as zeros */
	for (pos = len; pos < size; pos += n) {
		n = size - pos > sizeof(zero_buf) ? sizeof(zero_buf) :
			size - pos;
		if (archive_write_data(b->a, zero_buf, n) != (ssize_t) n)
			return archive_err(b, "entry ", path);
	}
	return 0;
}

/*
 * Sum the data of @j that is at hand, as write_entry() will write it;
 * inline data is followed by zeros up to i_size.
 */
static void sum_job_data(struct backup *b, const struct entry_job *j)
{
	unsigned int bs = b->fs->blocksize;
	uint64_t pos = 0, n;
	size_t i;

	if (j->r.rflags & E2CB_IF_INLINE) {
		e2cb_sum_add(&b->sum, 0, j->data, j->inline_len);
		for (pos = j->inline_len; pos < j->r.size; pos += n) {
			n = j->r.size - pos;
			if (n > sizeof(zero_buf))
				n = sizeof(zero_buf);
			e2cb_sum_add(&b->sum, pos, zero_buf, n);
		}
		return;
	}
	for (i = 0; i < j->count; i++) {
		e2cb_sum_add(&b->sum, j->regions[i].off, j->data + pos,
			     j->regions[i].len);
		pos += (j->regions[i].len + bs - 1) / bs * bs;
	}
}

/* Write the header, then the data */
static errcode_t write_entry(struct backup *b, struct entry_job *j)
{
	if (archive_write_header(b->a, j->entry) < ARCHIVE_WARN)
		return archive_err(b, "entry ",
				   archive_entry_pathname(j->entry));
	if (j->r.rflags & E2CB_IF_INLINE)
		return write_inline(b, j);
	if (j->r.rflags & E2CB_IF_HARDLINK)
		return 0;
	return write_regions(b, j);
}

/*
 * On the writer thread, a batch at a time, in order.  A closed pipe
 * kills it as it would the main thread (die_of_closed_pipe() raises
 * SIGPIPE on the thread that saw it), so SIGPIPE is let through here.
 */
static errcode_t emit_batch(void *priv, uint8_t *buf,
			    size_t len EXT2FS_ATTR((unused)),
			    uint64_t off EXT2FS_ATTR((unused)))
{
	struct job_batch *batch = (struct job_batch *) buf;
	struct backup *b = priv;
	sigset_t pipe_set;
	errcode_t err = 0;
	unsigned int i;

	if (!b->writer_ready) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
		b->writer_ready = 1;
	}
	for (i = 0; i < batch->count && !err; i++)
		err = write_entry(b, &batch->job[i]);
	return err;
}

static const struct e2cb_pipe_job batch_ops = { NULL, emit_batch };

/* Hand the batch being filled to the writer */
static errcode_t flush_batch(struct backup *b)
{
	struct job_batch *batch = b->batch;

	b->batch = NULL;
	if (!batch || !batch->count)
		return 0;
	b->nbatches++;
	return e2cb_pipe_submit(b->writer, &batch_ops, b, 0, 0);
}

/*
 * The entry and the data buffer for the next entry, @inode.  Its data
 * goes in the batch when it is sure to fit: the blocks it holds are an
 * upper bound.  Otherwise it is read into syncbuf and written here.
 * The pipe hands its buffers out in turn, and so go the entries: when
 * a buffer is free again, so are the entries that went with it.
 */
static errcode_t next_job(struct backup *b,
			  const struct ext2_inode_large *inode)
{
	unsigned int slots = e2cb_pipe_workers(b->writer) ? WRITER_BUFS : 1;
	uint64_t need = 0;
	errcode_t err = 0;

	if (LINUX_S_ISREG(inode->i_mode))
		need = ext2fs_get_stat_i_blocks(b->fs,
				(struct ext2_inode *) inode) * 512;
	if (need < EXT2_INODE_SIZE(b->fs->super))
		need = EXT2_INODE_SIZE(b->fs->super);	/* inline data */
	if (b->batch && (b->batch->count == BATCH_ENTRIES ||
			 need > IOBUF_SIZE - b->batch_used))
		err = flush_batch(b);
	if (!b->batch) {
		b->batch = (struct job_batch *) e2cb_pipe_buffer(b->writer);
		b->batch->count = 0;
		b->batch_used = 0;
		b->batch_regions = 0;
	}
	b->entry = b->job_entry[b->nbatches % slots][b->batch->count];
	b->preread = 0;
	if (need <= IOBUF_SIZE - b->batch_used) {
		b->iobuf = (char *) b->batch + BATCH_DATA + b->batch_used;
		b->iobuf_room = IOBUF_SIZE - b->batch_used;
	} else {
		b->iobuf = b->syncbuf;
		b->iobuf_room = 0;
	}
	return err;
}

/*
 * Fill in the job and seal its record, here where the entries go in
 * order.  The data is at @data, or NULL: read as it is written.
 */
static void fill_job(struct backup *b, struct entry_job *j,
		     const struct e2cb_inode_rec *r,
		     const struct region_list *rl, const char *data,
		     size_t inline_len)
{
	j->entry = b->entry;
	j->r = *r;
	j->tar_size = archive_entry_size(b->entry);
	j->data = data;
	j->data_pos = 0;
	j->regions = rl->r;
	j->count = rl->count;
	j->inline_len = inline_len;
	seal_inode_rec(b, j);
}

/*
 * Queue the entry in the batch when its data is all there; write it
 * here otherwise, once the writer is done with what came before.  An
 * error of the writer was reported there.
 */
static errcode_t send_entry(struct backup *b, const struct e2cb_inode_rec *r,
			    const struct region_list *rl,
			    const char *inline_buf, size_t inline_len)
{
	int has_data = LINUX_S_ISREG(r->mode) &&
		       !(r->rflags & (E2CB_IF_INLINE | E2CB_IF_HARDLINK));
	uint64_t used = 0;
	struct entry_job *j, now;
	errcode_t err;
	size_t i;

	if (r->rflags & E2CB_IF_INLINE)
		b->data_bytes += r->size;
	for (i = 0; i < rl->count; i++) {
		b->data_bytes += rl->r[i].len;
		used += (rl->r[i].len + b->fs->blocksize - 1) /
			b->fs->blocksize * b->fs->blocksize;
	}
	if (inline_len)
		used = inline_len;
	if (!b->iobuf_room || used > b->iobuf_room ||
	    (has_data && !b->preread)) {
		err = flush_batch(b);
		if (!err)
			err = e2cb_pipe_drain(b->writer);
		if (err)
			return err;
		fill_job(b, &now, r, rl, inline_len ? inline_buf :
			 b->preread ? b->iobuf : NULL, inline_len);
		if (now.data)
			sum_job_data(b, &now);
		return write_entry(b, &now);
	}
	if (inline_len)
		memcpy(b->iobuf, inline_buf, inline_len);
	j = &b->batch->job[b->batch->count++];
	fill_job(b, j, r, rl, b->iobuf, inline_len);
	j->regions = (struct region *) ((char *) b->batch + BATCH_REGIONS) +
		     b->batch_regions;
	if (rl->count)
		memcpy(j->regions, rl->r, rl->count * sizeof(*rl->r));
	sum_job_data(b, j);
	b->batch_regions += rl->count;
	b->batch_used += used;
	return 0;
}

static errcode_t backup_dir(struct backup *b, ext2_ino_t dir,
			    struct ext2_inode_large *dir_inode, int depth);

/*
 * Skipped entries are reported and counted; the trailer says so.  A
 * directory goes with what is in it.
 */
static void skip_entry(struct backup *b, ext2_ino_t ino,
		       const struct ext2_inode_large *inode, errcode_t err,
		       const char *what)
{
	com_err(program_name, err, "while %s inode %u (%s); skipped%s", what,
		ino, entry_path(b), inode && LINUX_S_ISDIR(inode->i_mode) ?
		", with all that is in the directory" : "");
	b->skipped++;
}

/*
 * Write one entry.  Returns an error only for failures that end the
 * backup (the archive cannot be written); damage in the source is
 * reported and skipped.
 */
static errcode_t backup_one(struct backup *b, ext2_ino_t ino,
			    const struct child *c, int parent_enc, int depth)
{
	struct ext2_inode_large *inode;
	struct e2cb_inode_rec r;
	struct region_list rl;
	const char *first;
	char *inline_buf = NULL;
	size_t inline_len = 0;
	size_t isize = EXT2_INODE_SIZE(b->fs->super);
	errcode_t retval, fatal = 0;

	retval = ext2fs_get_memzero(isize, &inode);
	if (retval)
		return retval;
	memset(&rl, 0, sizeof(rl));
	retval = ext2fs_read_inode_full(b->fs, ino,
					(struct ext2_inode *) inode, isize);
	if (retval) {
		skip_entry(b, ino, NULL, retval, "reading");
		goto out;
	}
	retval = ext2fs_check_linked_inode(b->fs, ino,
					   (struct ext2_inode *) inode);
	if (retval) {
		skip_entry(b, ino, inode, retval, "reading");
		goto out;
	}
	fatal = next_job(b, inode);
	if (fatal)
		goto out;
	archive_entry_clear(b->entry);
	fill_inode_rec(b, ino, inode, &r);
	fill_tar_header(b, &r);

	first = NULL;
	if (!LINUX_S_ISDIR(inode->i_mode) && inode->i_links_count > 1)
		first = link_lookup(&b->links, ino);
	if (first) {
		/* a further name: tar hard link, data stays at the first */
		r.rflags |= E2CB_IF_HARDLINK;
		archive_entry_copy_hardlink(b->entry, first);
		archive_entry_set_size(b->entry, 0);
		retval = add_crypt_records(b, ino, inode, c, parent_enc, &r);
		if (retval) {
			skip_entry(b, ino, inode, retval,
				   "reading the name of");
			goto out;
		}
		goto write_header;
	}

	retval = add_crypt_records(b, ino, inode, c, parent_enc, &r);
	if (!retval)
		retval = add_xattrs(b, ino, inode, &r);
	if (!retval && LINUX_S_ISLNK(inode->i_mode))
		retval = set_symlink(b, ino, inode, &r);
	if (!retval)
		retval = prepare_data(b, ino, inode, &rl, &inline_buf,
				      &inline_len, &r);
	if (retval) {
		skip_entry(b, ino, inode, retval,
			   b->why[0] ? b->why : "reading");
		b->why[0] = 0;
		goto out;
	}
	if (!LINUX_S_ISDIR(inode->i_mode) && inode->i_links_count > 1) {
		fatal = link_insert(&b->links, ino, entry_path(b));
		if (fatal)
			goto out;
	}
	b->inodes++;
	if (inode->i_flags & EXT4_ENCRYPT_FL)
		b->encrypted++;

write_header:
	r.path_crc = e2cb_crc32c(~0U, entry_path(b), strlen(entry_path(b)));
	fatal = send_entry(b, &r, &rl, inline_buf, inline_len);
	if (!fatal)
		b->entries++;
	if (fatal) {
		if (fatal != EXT2_ET_SHORT_WRITE) {
			com_err(program_name, fatal,
				"while reading the data of inode %u (%s)",
				ino, entry_path(b));
		}
		goto out;
	}
	show_progress(b, 0);
	if (LINUX_S_ISDIR(inode->i_mode))
		fatal = backup_dir(b, ino, inode, depth + 1);
out:
	free(rl.r);
	ext2fs_free_mem(&inline_buf);
	ext2fs_free_mem(&inode);
	return fatal;
}

static int collect_proc(ext2_filsys fs, struct ext2_dir_entry *de,
			unsigned int rec_space, void *priv)
{
	struct child_list *cl = priv;
	int len = ext2fs_dirent_name_len(de);
	struct child *c;
	errcode_t retval;

	if (de->name[0] == '.' && (len == 1 || (len == 2 &&
						de->name[1] == '.')))
		return 0;
	if (e2cb_grow((void **) &cl->c, &cl->size, cl->count, sizeof(*cl->c))) {
		cl->retval = EXT2_ET_NO_MEMORY;
		return DIRENT_ABORT;
	}
	c = &cl->c[cl->count];
	c->ino = de->inode;
	retval = ext2fs_dirent_encrypted_name(fs, &cl->dir, de, rec_space,
					      &c->name);
	if (retval) {
		com_err(program_name, retval, "in directory inode %u (%s), "
			"in the entry of inode %u; skipped", cl->dir_ino,
			entry_path(cl->b), de->inode);
		cl->b->skipped++;
		return 0;
	}
	cl->count++;
	return 0;
}

static int cmp_child_ino(const void *a, const void *b)
{
	ext2_ino_t x = ((const struct child *) a)->ino;
	ext2_ino_t y = ((const struct child *) b)->ino;

	return x < y ? -1 : x > y;
}

/*
 * What ext2fs_dir_walk() found damaged is counted, entries lost or kept
 * unverified (a checksum that fails): the archive is not a clean copy.
 */
static void dir_damage_proc(ext2_filsys fs EXT2FS_ATTR((unused)),
			    const struct ext2fs_dir_damage *d, void *priv)
{
	struct child_list *cl = priv;
	char where[128];

	e2cb_dir_damage_where(d, where, sizeof(where));
	com_err(program_name, d->err, "in directory inode %u (%s), %s; %s",
		cl->dir_ino, entry_path(cl->b), where,
		ext2fs_dir_lost_string(d->lost));
	cl->b->skipped++;
}

/* Runs of blocks to read ahead, merged across short gaps */
struct ra_runs {
	io_channel io;
	blk64_t start, count;
	blk64_t budget;			/* blocks still to advise */
};

static void ra_add(struct ra_runs *ra, blk64_t pblk, blk64_t len)
{
	if (len > ra->budget)
		len = ra->budget;
	ra->budget -= len;
	if (ra->count && pblk >= ra->start + ra->count &&
	    pblk <= ra->start + ra->count + READAHEAD_GAP) {
		ra->count = pblk + len - ra->start;
		return;
	}
	if (ra->count)
		io_channel_cache_readahead(ra->io, ra->start, ra->count);
	ra->start = pblk;
	ra->count = len;
}

/* The written extents of a file whose extent tree fits in its inode */
static void ra_add_inode(ext2_filsys fs, struct ra_runs *ra,
			 const struct ext2_inode *inode)
{
	const struct ext3_extent_header *eh = (const void *) inode->i_block;
	const struct ext3_extent *ex = (const void *) (eh + 1);
	blk64_t pblk, len;
	int i, n;

	if (!LINUX_S_ISREG(inode->i_mode) ||
	    (inode->i_flags & EXT4_INLINE_DATA_FL) ||
	    !(inode->i_flags & EXT4_EXTENTS_FL) ||
	    ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC ||
	    eh->eh_depth)
		return;
	n = ext2fs_le16_to_cpu(eh->eh_entries);
	for (i = 0; i < n && i < 4 && ra->budget; i++) {
		len = ext2fs_le16_to_cpu(ex[i].ee_len);
		pblk = ext2fs_le32_to_cpu(ex[i].ee_start) +
		       ((blk64_t) ext2fs_le16_to_cpu(ex[i].ee_start_hi) << 32);
		/* unwritten extents read as zeros: nothing to fetch */
		if (!len || len > EXT_INIT_MAX_LEN ||
		    pblk + len > ext2fs_blocks_count(fs->super))
			continue;
		ra_add(ra, pblk, len);
	}
}

/*
 * From a cold cache each small file's data is a read of its own, made
 * when its turn comes.  Ask the kernel for the data of the children
 * from @from on, up to a budget, so that it reads them in large
 * requests while the walk writes.  Advice only: what it skips or
 * gets wrong is read as before.  Returns where the advice stopped.
 */
static size_t readahead_children(struct backup *b,
				 const struct child_list *cl, size_t from)
{
	struct ra_runs ra = { b->fs->io, 0, 0,
			      READAHEAD_BYTES / b->fs->blocksize };
	struct ext2_inode inode;
	size_t i;

	for (i = from; i < cl->count && i - from < READAHEAD_FILES &&
	     ra.budget; i++) {
		if (cl->c[i].ino &&
		    cl->c[i].ino <= b->fs->super->s_inodes_count &&
		    !ext2fs_read_inode(b->fs, cl->c[i].ino, &inode))
			ra_add_inode(b->fs, &ra, &inode);
	}
	if (ra.count)
		io_channel_cache_readahead(ra.io, ra.start, ra.count);
	return i;
}

/* Path component: raw bytes, or base64url inside an encrypted dir */
static errcode_t push_child_path(struct backup *b, const struct child *c,
				 int parent_enc)
{
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];
	size_t len;

	if (parent_enc) {
		len = e2cb_b64url_encode(c->name.name, c->name.name_len, comp);
		return path_push(b, comp, len);
	}
	if (memchr(c->name.name, '/', c->name.name_len) ||
	    memchr(c->name.name, 0, c->name.name_len))
		return EXT2_ET_DIR_CORRUPTED;
	return path_push(b, (const char *) c->name.name, c->name.name_len);
}

/* Whether @c is the one name a backup of a non-directory archives */
static int only_child(struct backup *b, const struct child *c)
{
	const struct ext4_encrypted_name *n = &b->only_name;

	if (b->only_done || c->ino != b->only_ino)
		return 0;
	if (n->name_len && (c->name.name_len != n->name_len ||
			    memcmp(c->name.name, n->name, n->name_len)))
		return 0;
	b->only_done = 1;
	return 1;
}

static errcode_t backup_dir(struct backup *b, ext2_ino_t dir,
			    struct ext2_inode_large *dir_inode, int depth)
{
	struct child_list cl;
	int parent_enc = !!(dir_inode->i_flags & EXT4_ENCRYPT_FL);
	size_t i, old_len = b->path_len, ra_next = 0, ra_from = 0;
	errcode_t retval = 0;

	if (ext2fs_fast_test_inode_bitmap2(b->dirs_seen, dir)) {
		fprintf(stderr, "%s: directory inode %u (%s) is reached "
			"twice (a loop in the directory tree); skipped\n",
			program_name, dir, entry_path(b));
		b->skipped++;
		return 0;
	}
	ext2fs_fast_mark_inode_bitmap2(b->dirs_seen, dir);
	if (depth > MAX_DEPTH) {
		fprintf(stderr, "%s: %s is nested deeper than %d levels; "
			"skipped\n", program_name, entry_path(b), MAX_DEPTH);
		b->skipped++;
		return 0;
	}
	memset(&cl, 0, sizeof(cl));
	cl.b = b;
	cl.dir_ino = dir;
	memcpy(&cl.dir, dir_inode, sizeof(cl.dir));
	/* what can be read is backed up; the damage is reported */
	retval = ext2fs_dir_walk(b->fs, dir, &cl.dir, collect_proc,
				 dir_damage_proc, &cl);
	if (!retval)
		retval = cl.retval;
	if (retval) {
		free(cl.c);
		return retval;
	}
	/* inode order reads the inode tables, and mostly the data, in order */
	if (cl.count > 1)
		qsort(cl.c, cl.count, sizeof(*cl.c), cmp_child_ino);
	for (i = 0; i < cl.count && !retval; i++) {
		/*
		 * Without the whole filesystem read ahead, advise again
		 * once half of what was advised is done.
		 */
		if (!b->ra && i >= ra_from + (ra_next - ra_from) / 2 &&
		    ra_next < cl.count) {
			ra_from = ra_next;
			ra_next = readahead_children(b, &cl, ra_next);
		}
		if (!cl.c[i].ino ||
		    cl.c[i].ino > b->fs->super->s_inodes_count) {
			fprintf(stderr, "%s: in directory inode %u (%s): "
				"entry with bad inode number %u; skipped\n",
				program_name, dir, entry_path(b),
				cl.c[i].ino);
			b->skipped++;
			continue;
		}
		if (depth == 1 && b->only_ino && !only_child(b, &cl.c[i]))
			continue;
		if (push_child_path(b, &cl.c[i], parent_enc)) {
			fprintf(stderr, "%s: in directory inode %u (%s): "
				"entry with '/' or NUL in its name; skipped\n",
				program_name, dir, entry_path(b));
			b->skipped++;
			continue;
		}
		retval = backup_one(b, cl.c[i].ino, &cl.c[i], parent_enc,
				    depth);
		path_pop(b, old_len);
	}
	free(cl.c);
	return retval;
}

static void set_journal_state(struct e2cb_header *h,
			      const struct ext2fs_replay_stats *st)
{
	if (st->state == EXT2FS_REPLAY_SKIPPED) {
		h->journal_state = E2CB_JOURNAL_STALE;
	} else if (st->state == EXT2FS_REPLAY_DONE) {
		h->journal_state = E2CB_JOURNAL_REPLAYED;
		h->replay_transactions = st->transactions;
		h->replay_blocks = st->blocks;
		h->replay_fast_commits = st->fc_commits;
		h->replay_orphans = st->orphans;
	}
}

static errcode_t write_header_entry(struct backup *b, const char *src_path,
				    ext2_ino_t root)
{
	struct ext2_super_block *sb = b->fs->super;
	struct e2cb_header h;
	uint8_t buf[E2CB_HEADER_FIXED + sizeof(h.source_path) + 4];
	size_t len;

	memset(&h, 0, sizeof(h));
	h.block_size = b->fs->blocksize;
	memcpy(h.uuid, sb->s_uuid, 16);
	h.feature_compat = sb->s_feature_compat;
	h.feature_incompat = sb->s_feature_incompat;
	h.feature_ro_compat = sb->s_feature_ro_compat;
	memcpy(h.hash_seed, sb->s_hash_seed, 16);
	h.def_hash_version = sb->s_def_hash_version;
	memcpy(h.encrypt_pw_salt, sb->s_encrypt_pw_salt, 16);
	h.encoding = sb->s_encoding;
	h.encoding_flags = sb->s_encoding_flags;
	h.inode_size = EXT2_INODE_SIZE(sb);
	h.created = time(NULL);
	snprintf(h.tool_version, sizeof(h.tool_version), "e2cryptbak %s",
		 E2CRYPTBAK_VERSION);
	h.root_ino = root;
	set_journal_state(&h, &b->replay);
	/* a PATH longer than the record holds is named as debugfs would */
	if (strlen(src_path) >= sizeof(h.source_path))
		h.source_path_len = snprintf(h.source_path,
					     sizeof(h.source_path), "<%u>",
					     root);
	else
		h.source_path_len = strlen(src_path);
	if (h.source_path_len == strlen(src_path))
		memcpy(h.source_path, src_path, h.source_path_len);
	len = e2cb_encode_header(&h, buf, sizeof(buf));

	archive_entry_clear(b->entry);
	archive_entry_copy_pathname(b->entry, E2CB_HEADER_PATH);
	archive_entry_set_filetype(b->entry, AE_IFREG);
	archive_entry_set_perm(b->entry, 0444);
	archive_entry_set_mtime(b->entry, h.created, 0);
	archive_entry_set_size(b->entry, 0);
	archive_entry_xattr_add_entry(b->entry, E2CB_REC_HEADER, buf, len);
	if (archive_write_header(b->a, b->entry) < ARCHIVE_WARN)
		return archive_err(b, "the archive header", "");
	return 0;
}

static errcode_t write_trailer_entry(struct backup *b)
{
	struct e2cb_trailer t;
	uint8_t buf[E2CB_TRAILER_REC_SIZE];
	errcode_t err;

	/* the last entries first: the trailer sums them up */
	err = flush_batch(b);
	if (!err)
		err = e2cb_pipe_drain(b->writer);
	if (err)
		return err;
	b->entry = b->own_entry;
	memset(&t, 0, sizeof(t));
	t.seq = ++b->seq;
	t.tflags = b->skipped ? E2CB_TF_INCOMPLETE : 0;
	t.prev_data_bytes = b->sum.bytes;
	t.prev_data_crc = e2cb_sum_final(&b->sum);
	t.entries = b->entries;
	t.inodes = b->inodes;
	t.encrypted = b->encrypted;
	t.data_bytes = b->data_bytes;
	t.skipped = b->skipped;
	e2cb_encode_trailer(&t, buf);

	archive_entry_clear(b->entry);
	archive_entry_copy_pathname(b->entry, E2CB_TRAILER_PATH);
	archive_entry_set_filetype(b->entry, AE_IFREG);
	archive_entry_set_perm(b->entry, 0444);
	archive_entry_set_mtime(b->entry, time(NULL), 0);
	archive_entry_set_size(b->entry, 0);
	archive_entry_xattr_add_entry(b->entry, E2CB_REC_TRAILER, buf,
				      sizeof(buf));
	if (archive_write_header(b->a, b->entry) < ARCHIVE_WARN)
		return archive_err(b, "the archive trailer", "");
	return 0;
}

/*
 * On the output thread: write a block of the archive.  A file's dirty
 * pages are handed to writeback as they come, so that the page cache
 * does not fill and the final fsync() has little left to do.
 */
static errcode_t emit_output(void *priv, uint8_t *buf, size_t len,
			     uint64_t off EXT2FS_ATTR((unused)))
{
	struct backup *b = priv;
	ssize_t n;

	while (len) {
		n = write(b->out_fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		buf += n;
		len -= n;
		b->out_bytes += n;
	}
	if (b->out_is_file &&
	    b->out_bytes - b->out_synced >= WRITEBACK_BYTES) {
		sync_file_range(b->out_fd, b->out_synced,
				b->out_bytes - b->out_synced,
				SYNC_FILE_RANGE_WRITE);
		b->out_synced = b->out_bytes;
	}
	return 0;
}

static const struct e2cb_pipe_job output_job = {
	.emit = emit_output,
};

/*
 * A closed pipe kills us with SIGPIPE, as it would have without the
 * output thread (which takes no signal), unless SIGPIPE is ignored.
 */
static void die_of_closed_pipe(errcode_t err)
{
	struct sigaction sa;

	if (err == EPIPE && !sigaction(SIGPIPE, NULL, &sa) &&
	    sa.sa_handler == SIG_DFL)
		raise(SIGPIPE);
}

/* Queue the block being filled for the output thread */
static errcode_t submit_output(struct backup *b)
{
	errcode_t err;

	err = e2cb_pipe_submit(b->out, &output_job, b, b->out_len, 0);
	b->out_buf = NULL;
	b->out_len = 0;
	die_of_closed_pipe(err);
	return err;
}

/*
 * libarchive's write callback.  libarchive does no blocking of its own
 * (one copy less): the bytes are gathered here into blocks, which the
 * output thread writes while the walk goes on reading.  A failed write
 * is seen at the next block, or by finish_output().
 */
static la_ssize_t write_output(struct archive *a, void *priv,
			       const void *buf, size_t len)
{
	struct backup *b = priv;
	size_t done, n;
	errcode_t err;

	if (b->discard)
		return len;
	for (done = 0; done < len; done += n) {
		if (!b->out_buf)
			b->out_buf = e2cb_pipe_buffer(b->out);
		n = OUTBLOCK_SIZE - b->out_len;
		if (n > len - done)
			n = len - done;
		memcpy(b->out_buf + b->out_len, (const char *) buf + done, n);
		b->out_len += n;
		if (b->out_len < OUTBLOCK_SIZE)
			continue;
		err = submit_output(b);
		if (err) {
			archive_set_error(a, err, "Write error");
			return -1;
		}
	}
	return len;
}

/* libarchive's close callback: the last, partial block */
static int close_output(struct archive *a, void *priv)
{
	struct backup *b = priv;
	errcode_t err;

	if (!b->out_len || b->discard)
		return ARCHIVE_OK;
	err = submit_output(b);
	if (err) {
		archive_set_error(a, err, "Write error");
		return ARCHIVE_FATAL;
	}
	return ARCHIVE_OK;
}

/* Wait for the output thread to write what it was given */
static errcode_t finish_output(struct backup *b)
{
	errcode_t err;

	if (!b->out)
		return 0;
	err = e2cb_pipe_drain(b->out);
	die_of_closed_pipe(err);
	return err;
}

static errcode_t open_output(struct backup *b,
			     const struct e2cb_backup_opts *opts, int fd)
{
	struct stat st;
	errcode_t retval;
	unsigned int i;
	int r = ARCHIVE_OK;

	b->out_fd = fd;
	b->out_is_file = !fstat(fd, &st) && S_ISREG(st.st_mode);
	retval = e2cb_pipe_new(OUTBLOCK_SIZE, OUTBLOCK_BUFS, 1, &b->out);
	if (retval)
		return retval;
	b->a = archive_write_new();
	if (!b->a)
		return EXT2_ET_NO_MEMORY;
	archive_write_set_format_pax_restricted(b->a);
	/* SCHILY.xattr is what GNU tar and bsdtar both understand */
	archive_write_set_format_option(b->a, "pax", "xattrheader", "SCHILY");
	/*
	 * write_output() makes the blocks.  No padding after the last one,
	 * even on standard output: zeros after a zstd or xz stream are not
	 * a valid frame, and the same bytes should come out whatever the
	 * destination.
	 */
	archive_write_set_bytes_per_block(b->a, 0);
	archive_write_set_bytes_in_last_block(b->a, 1);
	if (!opts->compress)
		r = ARCHIVE_OK;
	else if (!strcmp(opts->compress, "gzip"))
		r = archive_write_add_filter_gzip(b->a);
	else if (!strcmp(opts->compress, "zstd"))
		r = archive_write_add_filter_zstd(b->a);
	else if (!strcmp(opts->compress, "xz"))
		r = archive_write_add_filter_xz(b->a);
	if (r != ARCHIVE_OK)
		return archive_err(b, "the filter ", opts->compress);
	r = archive_write_open2(b->a, b, NULL, write_output, close_output,
				NULL);
	if (r != ARCHIVE_OK)
		return archive_err(b, NULL, NULL);
	b->own_entry = archive_entry_new();
	b->syncbuf = malloc(IOBUF_SIZE);
	if (!b->own_entry || !b->syncbuf)
		return EXT2_ET_NO_MEMORY;
	for (i = 0; i < WRITER_BUFS * BATCH_ENTRIES; i++) {
		b->job_entry[i / BATCH_ENTRIES][i % BATCH_ENTRIES] =
			archive_entry_new();
		if (!b->job_entry[i / BATCH_ENTRIES][i % BATCH_ENTRIES])
			return EXT2_ET_NO_MEMORY;
	}
	return e2cb_pipe_new(BATCH_SIZE, WRITER_BUFS, 1, &b->writer);
}

/*
 * From a cold cache the walk's inode reads are random and one at a
 * time; let the kernel read the used part of every inode table ahead,
 * in large requests.  Advice only: errors do not matter.
 */
static void readahead_inode_tables(ext2_filsys fs)
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

/*
 * The inodes a whole-filesystem walk meets, for -p: those in use, less
 * the reserved ones but the root.  The group descriptors' counts, not the
 * superblock's, which the kernel updates only now and then.
 */
static uint64_t inodes_in_tree(ext2_filsys fs)
{
	uint64_t used = 0;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++)
		used += fs->super->s_inodes_per_group -
			ext2fs_bg_free_inodes_count(fs, g);
	if (used < EXT2_FIRST_INODE(fs->super))
		return 0;
	return used - (EXT2_FIRST_INODE(fs->super) - 1) + 1;
}

static int holds_ino_proc(ext2_ino_t dir EXT2FS_ATTR((unused)), int entry,
			  struct ext2_dir_entry *de,
			  int offset EXT2FS_ATTR((unused)),
			  int blocksize EXT2FS_ATTR((unused)),
			  char *buf EXT2FS_ATTR((unused)), void *priv)
{
	ext2_ino_t *want = priv;

	if (entry == DIRENT_DOT_FILE || entry == DIRENT_DOT_DOT_FILE ||
	    de->inode != *want)
		return 0;
	*want = 0;
	return DIRENT_ABORT;
}

/*
 * "<N>" alone names no directory entry: the first directory, in inode
 * order, that holds a name of inode N holds it in the archive too.
 */
static errcode_t find_dir_of(ext2_filsys fs, ext2_ino_t ino, ext2_ino_t *dir)
{
	ext2_inode_scan scan;
	struct ext2_inode inode;
	ext2_ino_t d, want;
	errcode_t retval;

	retval = ext2fs_open_inode_scan(fs, 0, &scan);
	if (retval)
		return retval;
	while (!(retval = ext2fs_get_next_inode(scan, &d, &inode)) && d) {
		if (!LINUX_S_ISDIR(inode.i_mode) || !inode.i_links_count ||
		    (d < EXT2_FIRST_INODE(fs->super) && d != EXT2_ROOT_INO))
			continue;
		want = ino;
		if (ext2fs_dir_iterate2(fs, d, 0, NULL, holds_ino_proc,
					&want) || want)
			continue;
		*dir = d;
		break;
	}
	ext2fs_close_inode_scan(scan);
	if (!retval && !d)
		retval = EXT2_ET_FILE_NOT_FOUND;
	return retval;
}

/*
 * The backup root: the directory PATH names, or the directory that holds
 * the non-directory PATH names, archived with that one name (which keeps
 * the raw name, and the context that encrypts it, in the archive).
 */
static errcode_t find_root(struct backup *b, const char *src_path,
			   ext2_ino_t *root)
{
	ext2_ino_t ino, dir;
	errcode_t retval;

	retval = e2cb_resolve_name(b->fs, src_path, &ino, &dir,
				   &b->only_name);
	if (retval)
		return retval;
	retval = ext2fs_check_directory(b->fs, ino);
	if (retval != EXT2_ET_NO_DIRECTORY) {
		*root = ino;
		return retval;
	}
	b->only_ino = ino;
	retval = 0;
	if (!dir) {
		memset(&b->only_name, 0, sizeof(b->only_name));
		retval = find_dir_of(b->fs, ino, &dir);
	}
	*root = dir;
	return retval;
}

static errcode_t backup_walk(struct backup *b, const char *src_path)
{
	ext2_ino_t root;
	errcode_t retval;

	readahead_inode_tables(b->fs);
	retval = find_root(b, src_path, &root);
	if (retval) {
		com_err(program_name, retval, "while looking up %s",
			src_path);
		return retval;
	}
	retval = ext2fs_allocate_inode_bitmap(b->fs, "directories seen",
					      &b->dirs_seen);
	if (retval)
		return retval;
	b->holes = mmap(NULL, HOLES_SIZE, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->holes == MAP_FAILED)
		b->holes = NULL;	/* zero_buf will do, slower */
	e2cb_sum_init(&b->sum);
	if (root == EXT2_ROOT_INO && !b->only_ino)
		b->inodes_total = inodes_in_tree(b->fs);
	b->entry = b->own_entry;
	retval = write_header_entry(b, src_path, root);
	if (retval)
		return retval;
	retval = backup_one(b, root, NULL, 0, 0);
	if (retval)
		return retval;
	return write_trailer_entry(b);
}

static void backup_free(struct backup *b)
{
	unsigned int i;

	/* the writer first: it may still be in libarchive */
	e2cb_pipe_free(b->writer);
	for (i = 0; i < WRITER_BUFS * BATCH_ENTRIES; i++)
		if (b->job_entry[i / BATCH_ENTRIES][i % BATCH_ENTRIES])
			archive_entry_free(b->job_entry[i / BATCH_ENTRIES]
						       [i % BATCH_ENTRIES]);
	if (b->own_entry)
		archive_entry_free(b->own_entry);
	free(b->syncbuf);
	if (b->a)
		archive_write_free(b->a);
	e2cb_readahead_stop(b->ra);
	if (b->dirs_seen)
		ext2fs_free_inode_bitmap(b->dirs_seen);
	e2cb_pipe_free(b->out);
	link_free(&b->links);
	if (b->holes)
		munmap((void *) b->holes, HOLES_SIZE);
	free(b->path);
	if (b->fs)
		ext2fs_close_free(&b->fs);
}

/*
 * Until the archive has its name, a fatal signal removes the temporary
 * file, then kills us as it would have (a shell still sees the signal).
 * Signals that were ignored (nohup) stay ignored.
 */
static struct e2cb_saved_signals saved_signals;
static const char *volatile tmp_to_remove;

static void remove_tmp_and_die(int sig)
{
	if (tmp_to_remove)
		unlink(tmp_to_remove);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard_tmp(const char *name)
{
	tmp_to_remove = name;
	e2cb_catch_signals(&saved_signals, remove_tmp_and_die, 0);
}

static void unguard_tmp(void)
{
	e2cb_release_signals(&saved_signals);
	tmp_to_remove = NULL;
}

/*
 * The archive goes to a temporary file beside its destination and takes
 * the final name only when whole, so an interrupted backup never leaves
 * a file that looks like an archive.
 */
static int open_dest(const struct e2cb_backup_opts *opts, char **tmp_name)
{
	struct stat st;
	int fd;

	*tmp_name = NULL;
	if (!strcmp(opts->output, "-")) {
		if (isatty(1)) {
			fprintf(stderr, "%s: refusing to write an archive to "
				"a terminal; use -o FILE or a pipe\n",
				program_name);
			return -1;
		}
		return 1;
	}
	/* a device or a FIFO (/dev/null, say) is written where it is: a
	 * rename would put a file in its place */
	if (!stat(opts->output, &st) && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		fd = open(opts->output, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			com_err(program_name, errno, "while opening %s",
				opts->output);
		return fd;
	}
	if (asprintf(tmp_name, "%s.tmpXXXXXX", opts->output) < 0)
		return -1;
	fd = mkstemp(*tmp_name);
	if (fd < 0) {
		com_err(program_name, errno, "while creating %s",
			opts->output);
		free(*tmp_name);
		*tmp_name = NULL;
		return -1;
	}
	fchmod(fd, 0600);
	guard_tmp(*tmp_name);
	return fd;
}

/*
 * The directory entry made by rename() is on disk only once the
 * directory is synced; filesystems that cannot sync a directory say
 * EINVAL, and have nothing to do.
 */
static int sync_parent(const char *path)
{
	char *dir = strdup(path), *slash;
	int fd, ret = 0;

	if (!dir)
		return ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) < 0 && errno != EINVAL))
		ret = errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return ret;
}

/*
 * The archive is renamed only once its data is on disk: after a crash
 * the name holds the whole archive, the previous file, or nothing --
 * never an empty or partial file.
 */
static int finish_dest(const struct e2cb_backup_opts *opts, char *tmp_name,
		       int fd, int ok)
{
	errcode_t err = 0;
	struct stat st;

	if (!tmp_name) {
		/* standard output, a device or a FIFO: a file is synced, a
		 * pipe needs not */
		if (ok && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    fsync(fd) < 0) {
			com_err(program_name, errno, "while writing %s",
				strcmp(opts->output, "-") ? opts->output :
				"standard output");
			ok = 0;
		}
		if (strcmp(opts->output, "-") && close(fd) < 0 && ok) {
			com_err(program_name, errno, "while writing %s",
				opts->output);
			ok = 0;
		}
		return ok;
	}
	if (ok && fsync(fd) < 0)
		err = errno;
	if (close(fd) < 0 && ok && !err)
		err = errno;
	if (err) {
		com_err(program_name, err, "while writing %s", opts->output);
		ok = 0;
	}
	if (ok && rename(tmp_name, opts->output) < 0) {
		com_err(program_name, errno, "while renaming %s to %s",
			tmp_name, opts->output);
		ok = 0;
	}
	if (!ok)
		unlink(tmp_name);
	unguard_tmp();
	if (ok && (err = sync_parent(opts->output)) != 0) {
		/* the archive is whole and named; its name may not last */
		com_err(program_name, err, "while syncing the directory of %s",
			opts->output);
		ok = 0;
	}
	free(tmp_name);
	return ok;
}

int e2cb_backup(const struct e2cb_backup_opts *opts)
{
	struct backup b;
	struct timespec t0, t1;
	char *tmp_name;
	double secs;
	errcode_t retval, err;
	int fd, ok;
	FILE *out;

	memset(&b, 0, sizeof(b));
	b.progress = opts->progress;
	b.dest = strcmp(opts->output, "-") ? opts->output : "standard output";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (e2cb_open_source(opts->device, opts->stale, &b.replay, &b.fs))
		return E2CB_EXIT_ERROR;
	fd = open_dest(opts, &tmp_name);
	if (fd < 0) {
		backup_free(&b);
		return E2CB_EXIT_ERROR;
	}
	retval = open_output(&b, opts, fd);
	/* a subtree may be a small part: its blocks are read as needed */
	if (!retval && !strcmp(opts->path, "/"))
		e2cb_readahead_start(b.fs, opts->device, &b.ra);
	if (!retval)
		retval = backup_walk(&b, opts->path);
	/* what is queued goes out before the output is finished */
	if (b.writer && (err = e2cb_pipe_drain(b.writer)) != 0 && !retval)
		retval = err;
	e2cb_readahead_stop(b.ra);
	b.ra = NULL;
	if (!retval && archive_write_close(b.a) != ARCHIVE_OK)
		retval = archive_err(&b, "at the end", "");
	/* what libarchive still writes of a failed archive goes nowhere */
	b.discard = retval != 0;
	err = finish_output(&b);
	if (err && !retval) {
		com_err(program_name, err, "while writing %s", b.dest);
		retval = err;
	}
	show_progress(&b, 1);
	ok = finish_dest(opts, tmp_name, fd, retval == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	out = strcmp(opts->output, "-") ? stdout : stderr;
	if (ok)
		fprintf(out, "%s: %llu inodes (%llu encrypted), %llu entries, "
			"%llu data bytes in %.2fs%s\n", opts->device,
			(unsigned long long) b.inodes,
			(unsigned long long) b.encrypted,
			(unsigned long long) b.entries,
			(unsigned long long) b.data_bytes, secs,
			b.skipped ? "; INCOMPLETE" : "");
	if (ok && b.skipped)
		fprintf(stderr, "%s: %llu entries were skipped or found "
			"damaged (see above): the archive is marked "
			"incomplete\n", program_name,
			(unsigned long long) b.skipped);
	backup_free(&b);
	if (!ok)
		return E2CB_EXIT_ERROR;
	return b.skipped ? E2CB_EXIT_INCOMPLETE : E2CB_EXIT_OK;
}
