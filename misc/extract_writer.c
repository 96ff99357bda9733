/*
 * extract_writer.c --- e2cryptbak extract: the decrypting data writer
 *
 * The data of a regular file, from either source, goes through one
 * writer: whole data units are gathered into the pipe's buffers, which
 * its workers read (when the source lets them), decrypt and hand back in
 * order to be written to the file or to standard output.  Apart from the
 * rest because it is the only part that runs on the other threads.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <pthread.h>
#include "extract.h"
#include "source.h"

/* -O: holes before @off come out as zeros, nothing past i_size */
errcode_t e2cb_xw_stream_out(struct writer *w, const uint8_t *buf, size_t len,
			     uint64_t off)
{
	static const uint8_t zeros[65536];
	uint64_t n;
	errcode_t retval;

	while (w->pos < off && w->pos < w->size) {
		n = off - w->pos;
		if (n > w->size - w->pos)
			n = w->size - w->pos;
		if (n > sizeof(zeros))
			n = sizeof(zeros);
		retval = e2cb_write_all(w->fd, zeros, n, -1);
		if (retval)
			return retval;
		w->pos += n;
	}
	if (off >= w->size)
		return 0;
	if (len > w->size - off)
		len = w->size - off;
	retval = e2cb_write_all(w->fd, buf, len, -1);
	if (!retval)
		w->pos = off + len;
	return retval;
}

/* Where the data goes: its place in the file, or the stream */
static errcode_t put_data(struct writer *w, const uint8_t *buf, size_t len,
			  uint64_t off)
{
	if (w->stream)
		return e2cb_xw_stream_out(w, buf, len, off);
	/* the last unit's tail past i_size would only be cut again */
	if (off >= w->size)
		return 0;
	if (len > w->size - off)
		len = w->size - off;
	return e2cb_write_all(w->fd, buf, len, off);
}

/* Only the first read error of all is kept, to be named */
void e2cb_xw_read_error(struct writer *w, errcode_t retval, uint64_t pos,
			uint64_t byte)
{
	pthread_mutex_lock(&w->x->crypt_lock);
	if (!w->read_err) {
		w->read_err = retval;
		w->bad_pos = pos;
		w->bad_byte = byte;
	}
	pthread_mutex_unlock(&w->x->crypt_lock);
}

/*
 * A worker's reads of the plan of @buf, which holds the data at @off.
 * A failure is narrowed to its first block, kept for the feed to name
 * (only the first of all the workers' is).
 */
static errcode_t read_planned(struct writer *w, uint8_t *buf, uint64_t off)
{
	struct read_plan *plan = BUF_PLAN(buf);
	unsigned int bs = w->x->block_size, i;
	uint64_t b;
	errcode_t retval = 0;

	for (i = 0; i < plan->count && !retval; i++)
		retval = e2cb_pread_all(w->read_fd, buf + plan->seg[i].dst,
				       plan->seg[i].len, plan->seg[i].pos);
	if (!retval)
		return 0;
	i--;
	for (b = 0; b < plan->seg[i].len; b += bs)
		if (e2cb_pread_all(w->read_fd, buf + plan->seg[i].dst + b,
				     plan->seg[i].len - b < bs ?
				     plan->seg[i].len - b : bs,
				     plan->seg[i].pos + b))
			break;
	if (b >= plan->seg[i].len)
		b = 0;
	e2cb_xw_read_error(w, retval, plan->seg[i].pos + b,
			   off + plan->seg[i].dst + b);
	return retval;
}

/* Pipe work, on the workers, several at once: decrypt a buffer */
static errcode_t decrypt_work(void *priv, unsigned int worker, uint8_t *buf,
			      size_t len, uint64_t off)
{
	struct writer *w = priv;
	errcode_t retval;

	if (w->plan) {
		retval = read_planned(w, buf, off);
		if (retval)
			return retval;
	}
	if (w->sum_to)
		BUF_PLAN(buf)->crc = e2cb_crc32c(0, buf, len);
	if (w->fis[worker])
		return fscrypt_decrypt_data(w->fis[worker], off, buf, len);
	pthread_mutex_lock(&w->x->crypt_lock);
	retval = fscrypt_decrypt_data(w->fi, off, buf, len);
	pthread_mutex_unlock(&w->x->crypt_lock);
	return retval;
}

/* Pipe emit, one buffer at a time, in order: write it out */
static errcode_t emit_data(void *priv, uint8_t *buf, size_t len,
			   uint64_t off)
{
	struct writer *w = priv;
	errcode_t retval;

	/* in order: the archive's sum is of the data in order */
	if (w->sum_to)
		e2cb_source_data_sum(w->sum_to, off, len, BUF_PLAN(buf)->crc);
	retval = put_data(w, buf, len, off);
	if (retval) {
		w->write_failed = 1;
		return retval;
	}
	if (off < w->size)
		w->done_bytes += w->size - off < len ? w->size - off : len;
	return 0;
}

static const struct e2cb_pipe_job decrypt_job = { decrypt_work, emit_data };

void e2cb_xw_release(struct writer *w)
{
	unsigned int i;

	for (i = 1; i < E2CB_PIPE_MAX_WORKERS; i++) {
		fscrypt_inode_close(w->fis[i]);
		w->fis[i] = NULL;
	}
	w->fis[0] = NULL;
}

/*
 * A writer for @size bytes of data to @fd; encrypted data (@fi) larger
 * than a buffer gets a handle on @fi for each pipe worker, so that they
 * decrypt at once.
 */
void e2cb_xw_init(struct writer *w, struct xt *x, int fd,
		  struct fscrypt_inode *fi, uint64_t size)
{
	unsigned int i, n = e2cb_pipe_workers(x->pipe);

	memset(w, 0, sizeof(*w));
	w->x = x;
	w->fd = fd;
	w->fi = fi;
	w->size = size;
	w->du = fi ? fscrypt_inode_data_unit(fi) : 1;
	w->end = (size + w->du - 1) / w->du * w->du;
	/* one worker never runs two jobs at once; nor one buffer */
	if (!fi || n <= 1) {
		w->fis[0] = fi;
		return;
	}
	if (size <= IOBUF_SIZE)
		return;
	w->fis[0] = fi;
	for (i = 1; i < n; i++) {
		if (fscrypt_inode_dup(fi, &w->fis[i])) {
			/* not to be copied: the workers take turns */
			e2cb_xw_release(w);
			break;
		}
	}
}

/*
 * Hand what is buffered (whole data units) to the pipe; the @last of a
 * file runs here when the pipe is idle (most files fit one buffer).
 */
static errcode_t w_flush_last(struct writer *w, int last)
{
	size_t len = w->len;

	w->len = 0;
	if (!len || w->err)
		return w->err;
	if (len % w->du) {
		w->err = FSCRYPT_ET_BAD_LENGTH;
		return w->err;
	}
	if (last)
		w->err = e2cb_pipe_run(w->x->pipe, &decrypt_job, w, len,
				       w->off);
	else
		w->err = e2cb_pipe_submit(w->x->pipe, &decrypt_job, w, len,
					  w->off);
	return w->err;
}

static errcode_t w_flush(struct writer *w)
{
	return w_flush_last(w, 0);
}

/* Flush, and wait until the pipe has written everything */
errcode_t e2cb_xw_finish(struct writer *w)
{
	errcode_t retval;

	w_flush_last(w, 1);
	retval = e2cb_pipe_drain(w->x->pipe);
	if (!w->err)
		w->err = retval;
	w->x->bytes += w->done_bytes;
	w->done_bytes = 0;
	return w->err;
}

/* Start a buffer for the data at @off, with no reads planned */
static void w_new_buf(struct writer *w, uint64_t off)
{
	w->buf = e2cb_pipe_buffer(w->x->pipe);
	BUF_PLAN(w->buf)->count = 0;
	w->off = off;
}

/*
 * Where the data at @off goes: on in the buffer being filled, or at the
 * start of a new one.  NULL when the writer failed, or when @off, not
 * following what is buffered, does not start a data unit.
 */
static uint8_t *w_buf_at(struct writer *w, uint64_t off)
{
	if (w->len && off != w->off + w->len)
		w_flush(w);
	if (w->err)
		return NULL;
	if (!w->len) {
		if (off % w->du)
			return NULL;
		w_new_buf(w, off);
	}
	return w->buf + w->len;
}

/*
 * Room in the buffer for encrypted data at @off, to read straight into
 * (no copy), or NULL: then e2cb_xw_add() takes the data.
 */
uint8_t *e2cb_xw_room(struct writer *w, uint64_t off, size_t *room)
{
	uint8_t *dst;

	if (w->err || !w->fi || off >= w->end)
		return NULL;
	dst = w_buf_at(w, off);
	if (dst)
		*room = IOBUF_SIZE - w->len;
	return dst;
}

/*
 * Instead of reading them: the @len bytes at @pos of w->read_fd go to
 * @dst, room e2cb_xw_room() gave, when a worker takes the buffer.  A
 * buffer gets a segment for each extent of an image's file in it, at
 * most one a block; an archive's stretches of data lie back to back:
 * one.
 */
void e2cb_xw_plan_read(struct writer *w, uint8_t *dst, uint64_t pos,
		       uint32_t len)
{
	struct read_plan *plan = BUF_PLAN(w->buf);
	unsigned int i = plan->count;
	uint32_t at = dst - w->buf;

	if (i && plan->seg[i - 1].pos + plan->seg[i - 1].len == pos &&
	    plan->seg[i - 1].dst + plan->seg[i - 1].len == at) {
		plan->seg[i - 1].len += len;
		return;
	}
	plan->seg[i].pos = pos;
	plan->seg[i].len = len;
	plan->seg[i].dst = at;
	plan->count++;
}

/* @len bytes were read into the room e2cb_xw_room() gave */
void e2cb_xw_commit(struct writer *w, size_t len)
{
	if (len > w->end - (w->off + w->len))
		len = w->end - (w->off + w->len);
	w->len += len;
	if (w->len == IOBUF_SIZE)
		w_flush(w);
}

errcode_t e2cb_xw_add(struct writer *w, uint64_t off, const uint8_t *data,
		      size_t len)
{
	uint8_t *dst;
	size_t n;

	if (w->err)
		return 0;
	/* past the last data unit there is only fs-verity's metadata */
	if (off >= w->end)
		return 0;
	if (len > w->end - off)
		len = w->end - off;
	if (!w->fi) {
		if (w->sum_to)
			e2cb_source_data_sum(w->sum_to, off, len,
					     e2cb_crc32c(0, data, len));
		w->err = put_data(w, data, len, off);
		w->write_failed = !!w->err;
		if (!w->err)
			w->x->bytes += len;
		return 0;
	}
	while (len && !w->err) {
		dst = w_buf_at(w, off);
		if (!dst) {
			if (!w->err)
				w->err = FSCRYPT_ET_BAD_LENGTH;
			break;
		}
		n = IOBUF_SIZE - w->len;
		if (n > len)
			n = len;
		memcpy(dst, data, n);
		w->len += n;
		data += n;
		off += n;
		len -= n;
		if (w->len == IOBUF_SIZE)
			w_flush(w);
	}
	return 0;
}
