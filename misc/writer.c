/*
 * writer.c --- e2cryptbak: write an archive, entry by entry
 *
 * The counterpart of reader.c.  A source hands each entry over as its
 * inode record, path, raw name, context, attributes, symlink target and
 * data stretches; here they become a pax tar entry with its records
 * (doc/archive-format.txt), written by libarchive on a thread of its
 * own, while outfile.c writes the archive's bytes on another.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mman.h>
#include <et/com_err.h>
#include "e2cryptbak.h"

#define IOBUF_SIZE	E2CB_WRITER_BUF
#define WRITER_BUFS	8		/* batches queued for the writer */
#define BATCH_ENTRIES	64

/* An entry as the writer thread writes it, with its data */
struct entry_job {
	struct archive_entry *entry;
	struct e2cb_inode_rec r;	/* sealed when queued */
	const char *data;		/* NULL: the source writes it */
	uint64_t data_pos;
	const struct e2cb_stretch *st;
	size_t count;
	uint64_t tar_size;
	size_t inline_len;		/* of E2CB_IF_INLINE data */
};

/*
 * Entries go to the writer thread in batches, each in a buffer of the
 * pipe: first the jobs, then their data (BATCH_DATA on: up to
 * IOBUF_SIZE), then their stretches.  A stretch holds a block at
 * least, so IOBUF_SIZE / 1024 of them always fit.  One entry at a time
 * costs more in handing over than libarchive takes to write it.
 */
struct job_batch {
	unsigned int count;
	struct entry_job job[BATCH_ENTRIES];
};
#define BATCH_DATA	((sizeof(struct job_batch) + 4095) & ~(size_t) 4095)
#define BATCH_REGIONS	(BATCH_DATA + IOBUF_SIZE)
#define BATCH_SIZE	(BATCH_REGIONS + \
			 IOBUF_SIZE / 1024 * sizeof(struct e2cb_stretch))

struct e2cb_writer {
	struct archive *a;
	struct e2cb_outfile *out;
	const char *dest;		/* the archive, for messages */
	unsigned int block_size;	/* the header's: the data's layout */
	struct e2cb_data_sum sum;	/* of the previous entry's data */
	uint32_t seq;
	const char *holes;		/* HOLES_SIZE zero bytes, or NULL */
	/* the entry being made */
	struct archive_entry *entry;
	struct e2cb_inode_rec rec;
	const struct e2cb_stretch *st;
	size_t count;
	const char *inline_data;
	size_t inline_len;
	char *iobuf;			/* where its data is read */
	size_t iobuf_room;		/* 0: the entry is written at once */
	int at_hand;			/* all its data is in iobuf */
	uint64_t pos;			/* of what e2cb_writer_data() wrote */
	char *syncbuf;			/* for the entries written at once */
	/* entries go to libarchive on a thread of their own */
	struct e2cb_pipe *pipe;
	int thread_ready;		/* the writer thread takes SIGPIPE */
	struct job_batch *batch;	/* the batch being filled, or NULL */
	size_t batch_used;		/* bytes of its data area taken */
	size_t batch_regions;		/* of its stretch area taken */
	unsigned int nbatches;
	struct archive_entry *job_entry[WRITER_BUFS][BATCH_ENTRIES];
	struct archive_entry *own_entry;	/* for the archive's ends */
	struct e2cb_recblk blk;		/* the writer thread's */
	int64_t created;		/* the header's */
};

/* Holes are fed to libarchive from here; it skips them without copying. */
static const char zero_buf[64 * 1024];

/*
 * libarchive takes a sparse file's holes as zeros in the data stream
 * and skips them; a mapping of the zero page feeds a large hole in few
 * calls without the memory.
 */
#define HOLES_SIZE	(256ULL << 20)

/*
 * A failure of libarchive, which ends the backup: it names the archive,
 * what was being written (@what and @name, or nothing), and errno when
 * a write failed -- a full disk or a closed pipe.
 */
static errcode_t archive_err(struct e2cb_writer *w, const char *what,
			     const char *name)
{
	const char *msg = archive_error_string(w->a);
	int err = archive_errno(w->a);
	char where[4200] = "";

	if (what)
		snprintf(where, sizeof(where), " (%s%s)", what, name);
	if (err > 0 && (!msg || !strcmp(msg, "Write error")))
		com_err(program_name, err, "while writing %s%s", w->dest,
			where);
	else if (err > 0)
		com_err(program_name, 0, "while writing %s%s: %s: %s", w->dest,
			where, msg, strerror(err));
	else
		com_err(program_name, 0, "while writing %s%s: %s", w->dest,
			where, msg ? msg : "unknown error");
	return EXT2_ET_SHORT_WRITE;
}

static errcode_t entry_err(struct e2cb_writer *w, struct archive_entry *e)
{
	return archive_err(w, "entry ", archive_entry_pathname(e));
}

static errcode_t feed_hole(struct e2cb_writer *w, struct archive_entry *e,
			   uint64_t len)
{
	const char *zeros = w->holes ? w->holes : zero_buf;
	size_t max = w->holes ? HOLES_SIZE : sizeof(zero_buf), n;

	while (len) {
		n = len > max ? max : len;
		if (archive_write_data(w->a, zeros, n) != (ssize_t) n)
			return entry_err(w, e);
		len -= n;
	}
	return 0;
}

/* The data of stretch @s, at hand, in pieces as it was read */
static errcode_t write_stretch(struct e2cb_writer *w, struct entry_job *j,
			       const struct e2cb_stretch *s)
{
	unsigned int bs = w->block_size;
	uint64_t done, n;

	for (done = 0; done < s->len; done += n) {
		n = s->len - done;
		if (n > IOBUF_SIZE)
			n = IOBUF_SIZE;
		if (archive_write_data(w->a, j->data + j->data_pos, n) !=
		    (ssize_t) n)
			return entry_err(w, j->entry);
		j->data_pos += (n + bs - 1) / bs * bs;
	}
	return 0;
}

static errcode_t write_stretches(struct e2cb_writer *w, struct entry_job *j)
{
	uint64_t pos = 0;
	errcode_t retval;
	size_t i;

	/* libarchive writes the sparse map with the first data */
	if (j->count == 0 && j->tar_size)
		return feed_hole(w, j->entry, j->tar_size);
	for (i = 0; i < j->count; i++) {
		retval = feed_hole(w, j->entry, j->st[i].off - pos);
		if (retval)
			return retval;
		retval = write_stretch(w, j, &j->st[i]);
		if (retval)
			return retval;
		pos = j->st[i].off + j->st[i].len;
	}
	return 0;
}

static errcode_t write_inline(struct e2cb_writer *w, const struct entry_job *j)
{
	uint64_t pos, size = j->r.size;
	size_t n, len = j->inline_len;

	if (len && archive_write_data(w->a, j->data, len) != (ssize_t) len)
		return entry_err(w, j->entry);
	/* i_size past the inline area reads as zeros */
	for (pos = len; pos < size; pos += n) {
		n = size - pos > sizeof(zero_buf) ? sizeof(zero_buf) :
			size - pos;
		if (archive_write_data(w->a, zero_buf, n) != (ssize_t) n)
			return entry_err(w, j->entry);
	}
	return 0;
}

/*
 * Sum the data of @j that is at hand, as write_entry() will write it;
 * inline data is followed by zeros up to i_size.
 */
static void sum_job_data(struct e2cb_writer *w, const struct entry_job *j)
{
	unsigned int bs = w->block_size;
	uint64_t pos = 0, n;
	size_t i;

	if (j->r.rflags & E2CB_IF_INLINE) {
		e2cb_sum_add(&w->sum, 0, j->data, j->inline_len);
		for (pos = j->inline_len; pos < j->r.size; pos += n) {
			n = j->r.size - pos;
			if (n > sizeof(zero_buf))
				n = sizeof(zero_buf);
			e2cb_sum_add(&w->sum, pos, zero_buf, n);
		}
		return;
	}
	for (i = 0; i < j->count; i++) {
		e2cb_sum_add(&w->sum, j->st[i].off, j->data + pos,
			     j->st[i].len);
		pos += (j->st[i].len + bs - 1) / bs * bs;
	}
}

/* Write the header, then the data at hand */
static errcode_t write_entry(struct e2cb_writer *w, struct entry_job *j)
{
	if (archive_write_header(w->a, j->entry) < ARCHIVE_WARN)
		return entry_err(w, j->entry);
	if (j->r.rflags & E2CB_IF_INLINE)
		return write_inline(w, j);
	if ((j->r.rflags & E2CB_IF_HARDLINK) || !j->data)
		return 0;
	return write_stretches(w, j);
}

/*
 * On the writer thread, a batch at a time, in order.  A closed pipe
 * kills it as it would the main thread (outfile.c raises SIGPIPE on
 * the thread that saw it), so SIGPIPE is let through here.
 */
static errcode_t emit_batch(void *priv, uint8_t *buf,
			    size_t len EXT2FS_ATTR((unused)),
			    uint64_t off EXT2FS_ATTR((unused)))
{
	struct job_batch *batch = (struct job_batch *) buf;
	struct e2cb_writer *w = priv;
	sigset_t pipe_set;
	errcode_t retval = 0;
	unsigned int i, end;

	if (!w->thread_ready) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
		w->thread_ready = 1;
	}
	for (i = 0; i < batch->count && !retval; i = end) {
		/* the records of as many entries as a records entry holds */
		e2cb_recblk_reset(&w->blk);
		for (end = i; end < batch->count &&
		     !e2cb_recblk_add(&w->blk, batch->job[end].entry,
				      batch->job[end].r.seq); end++)
			;
		if (end == i)
			end++;		/* too big: its own pax header */
		else if (e2cb_recblk_write(&w->blk, w->a, w->created))
			retval = archive_err(w, "a records entry", "");
		while (i < end && !retval)
			retval = write_entry(w, &batch->job[i++]);
	}
	return retval;
}

static const struct e2cb_pipe_job batch_ops = { NULL, emit_batch };

/* Hand the batch being filled to the writer thread */
static errcode_t flush_batch(struct e2cb_writer *w)
{
	struct job_batch *batch = w->batch;

	w->batch = NULL;
	if (!batch || !batch->count)
		return 0;
	w->nbatches++;
	return e2cb_pipe_submit(w->pipe, &batch_ops, w, 0, 0);
}

/* Wait for the writer thread to write all that was given to it */
static errcode_t drain_batches(struct e2cb_writer *w)
{
	errcode_t retval;

	retval = flush_batch(w);
	if (!retval)
		retval = e2cb_pipe_drain(w->pipe);
	return retval;
}

/*
 * The entry and the data buffer for the next entry, whose data is
 * @need bytes at most.  Its data goes in the batch when it is sure to
 * fit; otherwise in syncbuf, and the entry is written at once.  The
 * pipe hands its buffers out in turn, and so go the entries: when a
 * buffer is free again, so are the entries that went with it.
 */
static errcode_t next_job(struct e2cb_writer *w, uint64_t need)
{
	unsigned int slots = e2cb_pipe_workers(w->pipe) ? WRITER_BUFS : 1;
	errcode_t retval = 0;

	if (w->batch && (w->batch->count == BATCH_ENTRIES ||
			 need > IOBUF_SIZE - w->batch_used))
		retval = flush_batch(w);
	if (!w->batch) {
		w->batch = (struct job_batch *) e2cb_pipe_buffer(w->pipe);
		w->batch->count = 0;
		w->batch_used = 0;
		w->batch_regions = 0;
	}
	w->entry = w->job_entry[w->nbatches % slots][w->batch->count];
	w->at_hand = 0;
	if (need <= IOBUF_SIZE - w->batch_used) {
		w->iobuf = (char *) w->batch + BATCH_DATA + w->batch_used;
		w->iobuf_room = IOBUF_SIZE - w->batch_used;
	} else {
		w->iobuf = w->syncbuf;
		w->iobuf_room = 0;
	}
	return retval;
}

static void fill_tar_header(struct archive_entry *e, const char *path,
			    const struct e2cb_inode_rec *r)
{
	int type;

	archive_entry_copy_pathname(e, path);
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

/*
 * Begin the next entry: @path ("." for the root) and @r, whose data,
 * if any, is @need bytes at most.  An entry not sent is dropped by the
 * next one.
 */
errcode_t e2cb_writer_begin(struct e2cb_writer *w, const char *path,
			    const struct e2cb_inode_rec *r, uint64_t need)
{
	errcode_t retval;

	retval = next_job(w, need);
	if (retval)
		return retval;
	archive_entry_clear(w->entry);
	w->rec = *r;
	w->rec.path_crc = e2cb_crc32c(~0U, path, strlen(path));
	w->st = NULL;
	w->count = 0;
	w->inline_data = NULL;
	w->inline_len = 0;
	fill_tar_header(w->entry, path, r);
	return 0;
}

/* A further name of an inode: a tar hard link to the first, @first */
void e2cb_writer_hardlink(struct e2cb_writer *w, const char *first)
{
	w->rec.rflags |= E2CB_IF_HARDLINK;
	archive_entry_copy_hardlink(w->entry, first);
	archive_entry_set_size(w->entry, 0);
}

/* An encrypted inode: its context, with i_size, in the 'e5' blob */
errcode_t e2cb_writer_add_context(struct e2cb_writer *w, const void *ctx,
				  size_t ctx_len)
{
	__u8 blob[EXT4_CRYPT_BLOB_MAX];
	errcode_t retval;
	size_t len;

	retval = ext2fs_encode_metadata_blob(w->rec.size, ctx, ctx_len, blob,
					     sizeof(blob), &len);
	if (retval)
		return retval;
	archive_entry_xattr_add_entry(w->entry, E2CB_REC_METADATA, blob, len);
	w->rec.rflags |= E2CB_IF_METADATA;
	return 0;
}

/*
 * A name in an encrypted directory, raw, in the 'ef'/'ed' blob; @ctx
 * is the inode's context, for a directory.
 */
errcode_t e2cb_writer_add_name(struct e2cb_writer *w,
			       const struct ext4_encrypted_name *name,
			       const void *ctx, size_t ctx_len)
{
	__u8 blob[EXT4_CRYPT_BLOB_MAX];
	errcode_t retval;
	size_t len;

	retval = ext2fs_encode_filename_blob(name,
					     LINUX_S_ISDIR(w->rec.mode),
					     w->rec.mode, ctx, ctx_len, blob,
					     sizeof(blob), &len);
	if (retval)
		return retval;
	archive_entry_xattr_add_entry(w->entry, E2CB_REC_NAME, blob, len);
	e2cb_inode_rec_name(&w->rec, name);
	return 0;
}

/* The xattr record, @len bytes at @rec and room for 4 more: its seal */
void e2cb_writer_add_xattrs(struct e2cb_writer *w, uint8_t *rec, size_t len)
{
	e2cb_seal(rec, len);
	archive_entry_xattr_add_entry(w->entry, E2CB_REC_XATTRS, rec, len + 4);
	w->rec.rflags |= E2CB_IF_XATTRS;
}

/*
 * A symlink's target as stored, @len bytes at @target with room for 4
 * more.  Plaintext goes to tar as it is (no NUL in it); ciphertext is
 * raw in a record, base64url for tar's eyes.
 */
errcode_t e2cb_writer_add_symlink(struct e2cb_writer *w, uint8_t *target,
				  size_t len, int encrypted)
{
	char *b64;

	if (!encrypted) {
		target[len] = 0;
		archive_entry_copy_symlink(w->entry, (char *) target);
		return 0;
	}
	e2cb_seal(target, len);
	archive_entry_xattr_add_entry(w->entry, E2CB_REC_SYMLINK, target,
				      len + 4);
	w->rec.rflags |= E2CB_IF_SYMLINK;
	b64 = malloc(E2CB_B64_LEN(len) + 1);
	if (!b64)
		return EXT2_ET_NO_MEMORY;
	b64[e2cb_b64url_encode(target, len, b64)] = 0;
	archive_entry_copy_symlink(w->entry, b64);
	free(b64);
	return 0;
}

/*
 * Where the entry's data, @len bytes in whole blocks, each stretch from
 * a block boundary on, is to be read.  Up to E2CB_WRITER_BUF bytes it
 * is kept there for e2cb_writer_send(); more is not, and the source
 * writes it after the header with e2cb_writer_data(), reading it into
 * this buffer (E2CB_WRITER_BUF bytes) again.
 */
char *e2cb_writer_data_buf(struct e2cb_writer *w, uint64_t len)
{
	if (len > w->iobuf_room) {
		/* more than its blocks said: not for the batch */
		w->iobuf = w->syncbuf;
		w->iobuf_room = 0;
	}
	w->at_hand = len <= IOBUF_SIZE;
	return w->iobuf;
}

static void add_sparse_map(struct archive_entry *e,
			   const struct e2cb_stretch *st, size_t count,
			   uint64_t tar_size)
{
	size_t i;

	if (count == 1 && st[0].off == 0 && st[0].len == tar_size)
		return;
	if (count == 0 && tar_size == 0)
		return;
	for (i = 0; i < count; i++)
		archive_entry_sparse_add_entry(e, st[i].off, st[i].len);
	/* an all-hole file still needs a map, or tar expects its bytes */
	if (count == 0)
		archive_entry_sparse_add_entry(e, tar_size, 0);
}

/*
 * A regular file's data: @count stretches, in order, of a tar entry
 * @tar_size bytes long; @st stays valid until the entry is sent.
 */
void e2cb_writer_set_stretches(struct e2cb_writer *w, uint64_t tar_size,
			       const struct e2cb_stretch *st, size_t count)
{
	/* libarchive checks the map against the size: size first */
	archive_entry_set_size(w->entry, tar_size);
	add_sparse_map(w->entry, st, count, tar_size);
	w->st = st;
	w->count = count;
}

/* Inline data, @len bytes at @data until the entry is sent */
void e2cb_writer_set_inline(struct e2cb_writer *w, const char *data,
			    size_t len)
{
	w->rec.rflags |= E2CB_IF_INLINE;
	archive_entry_set_size(w->entry, w->rec.size);
	w->inline_data = data;
	w->inline_len = len;
}

/* The record follows the data before it: sealed as the entry goes out */
static void seal_inode_rec(struct e2cb_writer *w, struct entry_job *j)
{
	uint8_t rec[E2CB_INODE_REC_SIZE];

	j->r.seq = ++w->seq;
	j->r.prev_data_bytes = w->sum.bytes;
	j->r.prev_data_crc = e2cb_sum_final(&w->sum);
	e2cb_encode_inode(&j->r, rec);
	archive_entry_xattr_add_entry(j->entry, E2CB_REC_INODE, rec,
				      sizeof(rec));
	e2cb_sum_init(&w->sum);
}

/*
 * Fill in the job and seal its record, here where the entries go in
 * order.  The data is at @data, or NULL: the source writes it.
 */
static void fill_job(struct e2cb_writer *w, struct entry_job *j,
		     const char *data)
{
	j->entry = w->entry;
	j->r = w->rec;
	j->tar_size = archive_entry_size(w->entry);
	j->data = data;
	j->data_pos = 0;
	j->st = w->st;
	j->count = w->count;
	j->inline_len = w->inline_len;
	seal_inode_rec(w, j);
}

/* Write the entry here, once the writer thread is done with the rest */
static errcode_t send_now(struct e2cb_writer *w)
{
	struct entry_job now;
	errcode_t retval;

	retval = drain_batches(w);
	if (retval)
		return retval;
	fill_job(w, &now, w->inline_len ? w->inline_data :
		 w->at_hand ? w->iobuf : NULL);
	if (now.data)
		sum_job_data(w, &now);
	w->pos = 0;
	return write_entry(w, &now);
}

/*
 * Send the entry: queue it in the batch when its data is all there,
 * write it at once otherwise.  An error of the writer thread was
 * reported there.
 */
errcode_t e2cb_writer_send(struct e2cb_writer *w)
{
	const struct e2cb_inode_rec *r = &w->rec;
	int has_data = LINUX_S_ISREG(r->mode) &&
		       !(r->rflags & (E2CB_IF_INLINE | E2CB_IF_HARDLINK));
	unsigned int bs = w->block_size;
	uint64_t used = 0;
	struct e2cb_stretch *st;
	struct entry_job *j;
	size_t i;

	for (i = 0; i < w->count; i++)
		used += (w->st[i].len + bs - 1) / bs * bs;
	if (w->inline_len)
		used = w->inline_len;
	if (!w->iobuf_room || used > w->iobuf_room ||
	    (has_data && !w->at_hand))
		return send_now(w);
	if (w->inline_len)
		memcpy(w->iobuf, w->inline_data, w->inline_len);
	j = &w->batch->job[w->batch->count++];
	fill_job(w, j, w->iobuf);
	/* the stretches go with the batch: the source's are freed */
	st = (struct e2cb_stretch *) ((char *) w->batch + BATCH_REGIONS) +
	     w->batch_regions;
	if (w->count)
		memcpy(st, w->st, w->count * sizeof(*w->st));
	j->st = st;
	sum_job_data(w, j);
	w->batch_regions += w->count;
	w->batch_used += used;
	return 0;
}

/*
 * Data of the entry just sent that was not at hand: @len bytes at
 * offset @off, the stretches in order.
 */
errcode_t e2cb_writer_data(struct e2cb_writer *w, uint64_t off,
			   const void *buf, size_t len)
{
	errcode_t retval;

	retval = feed_hole(w, w->entry, off - w->pos);
	if (retval)
		return retval;
	e2cb_sum_add(&w->sum, off, buf, len);
	if (archive_write_data(w->a, buf, len) != (ssize_t) len)
		return entry_err(w, w->entry);
	w->pos = off + len;
	return 0;
}

/* One of the archive's ends: a file of no data holding record @name */
static errcode_t write_end_entry(struct e2cb_writer *w, const char *path,
				 int64_t mtime, const char *name,
				 const uint8_t *rec, size_t len,
				 const char *what)
{
	struct archive_entry *e = w->own_entry;

	archive_entry_clear(e);
	archive_entry_copy_pathname(e, path);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0444);
	archive_entry_set_mtime(e, mtime, 0);
	archive_entry_set_size(e, 0);
	archive_entry_xattr_add_entry(e, name, rec, len);
	if (archive_write_header(w->a, e) < ARCHIVE_WARN)
		return archive_err(w, what, "");
	return 0;
}

/*
 * The header entry, first: @h as the source fills it in, with when
 * and by what the archive is made.  Its block size lays out the data
 * in the buffers of e2cb_writer_data_buf().
 */
errcode_t e2cb_writer_header(struct e2cb_writer *w,
			     const struct e2cb_header *src)
{
	struct e2cb_header h = *src;
	uint8_t buf[E2CB_HEADER_FIXED + sizeof(h.source_path) + 4];
	size_t len;

	h.created = time(NULL);
	snprintf(h.tool_version, sizeof(h.tool_version), "e2cryptbak %s",
		 E2CRYPTBAK_VERSION);
	w->block_size = h.block_size;
	w->created = h.created;
	len = e2cb_encode_header(&h, buf, sizeof(buf));
	return write_end_entry(w, E2CB_HEADER_PATH, h.created,
			       E2CB_REC_HEADER, buf, len,
			       "the archive header");
}

/*
 * The trailer entry, last: @counts as the source counted, and the sum
 * of the last entry's data.
 */
errcode_t e2cb_writer_trailer(struct e2cb_writer *w,
			      const struct e2cb_trailer *counts)
{
	struct e2cb_trailer t;
	uint8_t buf[E2CB_TRAILER_REC_SIZE];
	errcode_t retval;

	/* the last entries first: the trailer sums them up */
	retval = drain_batches(w);
	if (retval)
		return retval;
	t = *counts;
	t.seq = ++w->seq;
	t.tflags = t.skipped ? E2CB_TF_INCOMPLETE : 0;
	t.prev_data_bytes = w->sum.bytes;
	t.prev_data_crc = e2cb_sum_final(&w->sum);
	e2cb_encode_trailer(&t, buf);
	return write_end_entry(w, E2CB_TRAILER_PATH, time(NULL),
			       E2CB_REC_TRAILER, buf, sizeof(buf),
			       "the archive trailer");
}

static errcode_t open_archive(struct e2cb_writer *w, const char *compress)
{
	int r = ARCHIVE_OK;

	w->a = archive_write_new();
	if (!w->a)
		return EXT2_ET_NO_MEMORY;
	archive_write_set_format_pax_restricted(w->a);
	/* SCHILY.xattr is what GNU tar and bsdtar both understand */
	archive_write_set_format_option(w->a, "pax", "xattrheader", "SCHILY");
	if (!compress)
		r = ARCHIVE_OK;
	else if (!strcmp(compress, "gzip"))
		r = archive_write_add_filter_gzip(w->a);
	else if (!strcmp(compress, "zstd"))
		r = archive_write_add_filter_zstd(w->a);
	else if (!strcmp(compress, "xz"))
		r = archive_write_add_filter_xz(w->a);
	if (r != ARCHIVE_OK)
		return archive_err(w, "the filter ", compress);
	if (e2cb_outfile_open_archive(w->out, w->a))
		return archive_err(w, NULL, NULL);
	return 0;
}

static errcode_t writer_setup(struct e2cb_writer *w, const char *compress)
{
	errcode_t retval;
	unsigned int i;

	w->dest = e2cb_outfile_name(w->out);
	e2cb_sum_init(&w->sum);
	retval = open_archive(w, compress);
	if (retval)
		return retval;
	w->own_entry = archive_entry_new();
	w->syncbuf = malloc(IOBUF_SIZE);
	if (!w->own_entry || !w->syncbuf || e2cb_recblk_init(&w->blk))
		return EXT2_ET_NO_MEMORY;
	for (i = 0; i < WRITER_BUFS * BATCH_ENTRIES; i++) {
		w->job_entry[i / BATCH_ENTRIES][i % BATCH_ENTRIES] =
			archive_entry_new();
		if (!w->job_entry[i / BATCH_ENTRIES][i % BATCH_ENTRIES])
			return EXT2_ET_NO_MEMORY;
	}
	retval = e2cb_pipe_new(BATCH_SIZE, WRITER_BUFS, 1, &w->pipe);
	if (retval)
		return retval;
	w->holes = mmap(NULL, HOLES_SIZE, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->holes == MAP_FAILED)
		w->holes = NULL;	/* zero_buf will do, slower */
	return 0;
}

/* Writes to @out, which it closes on failure */
static errcode_t writer_new(struct e2cb_outfile *out, const char *compress,
			    struct e2cb_writer **ret)
{
	struct e2cb_writer *w;

	w = calloc(1, sizeof(*w));
	if (!w) {
		e2cb_outfile_close(out, 0);
		return EXT2_ET_NO_MEMORY;
	}
	w->out = out;
	*ret = w;
	return writer_setup(w, compress);
}

int e2cb_writer_fd(const struct e2cb_writer *w)
{
	return e2cb_outfile_fd(w->out);
}

/*
 * Write an archive to @output ("-": standard output), compressed with
 * @compress (NULL, "gzip", "zstd" or "xz").  What fails is said here.
 * *@ret is NULL when the destination could not be opened; otherwise it
 * is set even when an error is returned, for e2cb_writer_finish() and
 * e2cb_writer_close().
 */
errcode_t e2cb_writer_open(const char *output, const char *compress,
			   struct e2cb_writer **ret)
{
	struct e2cb_outfile *out;
	errcode_t retval;

	*ret = NULL;
	retval = e2cb_outfile_open(output, &out);
	return retval ? retval : writer_new(out, compress, ret);
}

/* The same, to @fd, which stays open; @name names it in messages */
errcode_t e2cb_writer_open_fd(int fd, const char *name, const char *compress,
			      struct e2cb_writer **ret)
{
	struct e2cb_outfile *out;
	errcode_t retval;

	*ret = NULL;
	retval = e2cb_outfile_open_fd(fd, name, &out);
	return retval ? retval : writer_new(out, compress, ret);
}

/*
 * The end of the archive, after the trailer, or of a failed one when
 * @err says why: all that was queued is written out.  Returns the
 * first error, reported.
 */
errcode_t e2cb_writer_finish(struct e2cb_writer *w, errcode_t retval)
{
	errcode_t e;

	if (w->pipe && (e = e2cb_pipe_drain(w->pipe)) != 0 && !retval)
		retval = e;
	if (!retval && archive_write_close(w->a) != ARCHIVE_OK)
		retval = archive_err(w, "at the end", "");
	/* what libarchive still writes of a failed archive goes nowhere */
	if (retval)
		e2cb_outfile_discard(w->out);
	e = e2cb_outfile_drain(w->out);
	if (e && !retval) {
		com_err(program_name, e, "while writing %s", w->dest);
		retval = e;
	}
	return retval;
}

/*
 * After e2cb_writer_finish(): give the archive its name when @ok, else
 * remove it, and free the writer.  Returns whether the archive is
 * whole where it should be.
 */
int e2cb_writer_close(struct e2cb_writer *w, int ok)
{
	unsigned int i;

	if (!w)
		return 0;
	/* the writer thread first: it may still be in libarchive */
	e2cb_pipe_free(w->pipe);
	if (!ok)
		e2cb_outfile_discard(w->out);
	for (i = 0; i < WRITER_BUFS * BATCH_ENTRIES; i++)
		if (w->job_entry[i / BATCH_ENTRIES][i % BATCH_ENTRIES])
			archive_entry_free(w->job_entry[i / BATCH_ENTRIES]
						       [i % BATCH_ENTRIES]);
	if (w->own_entry)
		archive_entry_free(w->own_entry);
	e2cb_recblk_free(&w->blk);
	free(w->syncbuf);
	if (w->a)
		archive_write_free(w->a);
	if (w->holes)
		munmap((void *) w->holes, HOLES_SIZE);
	ok = e2cb_outfile_close(w->out, ok);
	free(w);
	return ok;
}
