/*
 * reader.c --- read and check an e2cryptbak archive, entry by entry
 *
 * Every check that the format allows is made by the reader, once, for
 * all the commands that read archives: record checksums, the sequence
 * numbers that reveal lost or reordered entries, the path each record
 * was written for, the data sum that the next entry carries, and the
 * trailer that proves the archive is whole.  This file reads the stream
 * (the descriptor, a decompressor, the tar reader behind the scan of
 * tarscan.c) and each entry's data; reader_check.c checks what each
 * entry's records say, reader_digest.c makes the digests.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/stat.h>
#include "reader_int.h"

static int vdamage(struct e2cb_reader *r, uint64_t index, const char *path,
		   const char *fmt, va_list ap)
{
	char msg[768];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* a path may be a megabyte long: its end, and the message */
	if (path && strlen(path) > 200)
		snprintf(r->err, sizeof(r->err), "entry %llu (...%s): %s",
			 (unsigned long long) index,
			 path + strlen(path) - 200, msg);
	else if (path)
		snprintf(r->err, sizeof(r->err), "entry %llu (%s): %s",
			 (unsigned long long) index, path, msg);
	else
		snprintf(r->err, sizeof(r->err), "%s", msg);
	return -1;
}

/* Damage in the entry being read */
int e2cb_reader_damage(struct e2cb_reader *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vdamage(r, r->cur.index, r->cur.path, fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * Damage that shows only once the next entry is reached: in the data of
 * the entry before (its sum is in the next record), or a stream that
 * ends after it.  Name that entry, where the damage lies.
 */
int e2cb_reader_damage_prev(struct e2cb_reader *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vdamage(r, r->prev_index, r->prev_path, fmt, ap);
	va_end(ap);
	return ret;
}

/* libarchive does not always say why a read failed */
static const char *archive_why(struct e2cb_reader *r)
{
	const char *msg = archive_error_string(r->a);

	return msg ? msg : "unexpected end of the archive";
}

const char *e2cb_reader_error(struct e2cb_reader *r)
{
	return r->err;
}

const struct e2cb_header *e2cb_reader_header(struct e2cb_reader *r)
{
	return &r->hdr;
}

const struct e2cb_trailer *e2cb_reader_trailer(struct e2cb_reader *r)
{
	return &r->trailer;
}

/*
 * The next tar header could not be read: the archive is cut short (or
 * damaged) at the entry that was due, whose path is not known yet.
 */
/*
 * libarchive reads the next header where the scan of the stream found
 * one, or not at all: the scan is what stands between a forged header
 * and libarchive's allocations.
 */
static int read_tar_header(struct e2cb_reader *r, struct archive_entry *ae)
{
	int ret;

	if (r->in_entry && archive_read_data_skip(r->a) < ARCHIVE_WARN)
		return ARCHIVE_FATAL;
	r->in_entry = 0;
	if (e2cb_tarscan_expect(&r->scan, archive_filter_bytes(r->a, 0)))
		return ARCHIVE_FATAL;
	ret = archive_read_next_header2(r->a, ae);
	/* a header that fails its checksum: libarchive would look on */
	if (ret == ARCHIVE_RETRY)
		ret = ARCHIVE_FATAL;
	r->in_entry = ret >= ARCHIVE_WARN && ret != ARCHIVE_EOF;
	return ret;
}

/* Why the stream could not be read: the scan's refusal, or libarchive's */
static const char *stream_why(struct e2cb_reader *r)
{
	return r->scan.failed ? r->scan.err : archive_why(r);
}

static int next_tar_header(struct e2cb_reader *r, const char *what)
{
	int ret = read_tar_header(r, r->ae);
	char where[512] = "";

	if (ret >= ARCHIVE_WARN && ret != ARCHIVE_EOF)
		return 0;
	if (r->prev_path)
		snprintf(where, sizeof(where), ", the one after entry %llu "
			 "(%s)", (unsigned long long) r->prev_index,
			 r->prev_path);
	if (r->scan.failed) {
		snprintf(r->err, sizeof(r->err), "entry %llu (%s%s): "
			 "refused: %s", (unsigned long long) r->next_seq,
			 what, where, r->scan.err);
		return -1;
	}
	snprintf(r->err, sizeof(r->err), "entry %llu (%s%s): the archive %s "
		 "(%s)", (unsigned long long) r->next_seq, what, where,
		 ret == ARCHIVE_EOF ? "ends before it: it is truncated" :
		 "is truncated or damaged in its header",
		 ret == ARCHIVE_EOF ? "no more entries" : archive_why(r));
	return -1;
}

/*
 * libarchive reads the descriptor through us: we check the tar stream
 * before it does, and hash what the scan says is not data
 * (E2CB_READ_HASH, reader_digest.c).
 */
static ssize_t fd_read(struct e2cb_reader *r, struct archive *a,
		       const void **buf)
{
	ssize_t n;

	if (r->replay_off < r->replay_len) {
		*buf = r->replay + r->replay_off;
		n = r->replay_len - r->replay_off;
		r->replay_off = r->replay_len;
		return n;
	}
	do
		n = read(r->fd, r->hash_buf, E2CB_HASH_BUF_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "%s", strerror(errno));
		return -1;
	}
	if (r->recording && n) {
		if (e2cb_grow_to((void **) &r->replay, &r->replay_size,
				 r->replay_len + n, 1)) {
			archive_set_error(a, ENOMEM, "out of memory");
			return -1;
		}
		memcpy(r->replay + r->replay_len, r->hash_buf, n);
		r->replay_len += n;
		r->replay_off = r->replay_len;
	}
	*buf = r->hash_buf;
	return n;
}

/* The decompressor reads the descriptor */
static la_ssize_t dec_read(struct archive *a, void *priv, const void **buf)
{
	return fd_read(priv, a, buf);
}

/* The tar reader reads the decompressor's output, or the descriptor */
static la_ssize_t tar_read(struct archive *a, void *priv, const void **buf)
{
	struct e2cb_reader *r = priv;
	la_int64_t off;
	uint64_t before;
	size_t len;
	ssize_t n;
	int ret;

	if (r->dec) {
		ret = archive_read_data_block(r->dec, buf, &len, &off);
		if (ret == ARCHIVE_EOF)
			return 0;
		if (ret != ARCHIVE_OK) {
			archive_set_error(a, archive_errno(r->dec), "%s",
					  archive_error_string(r->dec) ?
					  archive_error_string(r->dec) :
					  "cannot decompress the archive");
			return -1;
		}
		n = len;
	} else {
		n = fd_read(r, a, buf);
		if (n < 0)
			return n;
	}
	if (r->scan.failed) {
		archive_set_error(a, EINVAL, "%s", r->scan.err);
		return -1;
	}
	before = r->scan.pos;
	/* the entries before a refused one are handed out, not it */
	if (e2cb_tarscan_feed(&r->scan, *buf, n))
		n = r->scan.fail_at > before ? r->scan.fail_at - before : 0;
	if (!n && r->scan.failed) {
		archive_set_error(a, EINVAL, "%s", r->scan.err);
		return -1;
	}
	return n;
}

/* Data of an uncompressed regular file: skipped unread, never beyond it */
static la_int64_t tar_skip(struct archive *a, void *priv, la_int64_t request)
{
	struct e2cb_reader *r = priv;
	uint64_t n = e2cb_tarscan_skippable(&r->scan);
	off_t here;

	(void) a;
	if ((uint64_t) request < n)
		n = request;
	/* libarchive reads what we do not skip */
	if (!n || r->replay_off < r->replay_len)
		return 0;
	here = lseek(r->fd, 0, SEEK_CUR);
	if (here < 0 || lseek(r->fd, here + n, SEEK_SET) < 0)
		return 0;
	e2cb_tarscan_skip(&r->scan, n);
	return n;
}

/*
 * A decompressor first, with libarchive's sniffing of the filters; if
 * the stream is not compressed it goes, and the tar reader reads the
 * descriptor itself, what the sniffing read given again.
 */
static int open_decompressor(struct e2cb_reader *r)
{
	struct archive_entry *raw;

	r->dec = archive_read_new();
	if (!r->dec)
		return ARCHIVE_FATAL;
	archive_read_support_filter_all(r->dec);
	archive_read_support_format_raw(r->dec);
	r->recording = 1;
	if (archive_read_open(r->dec, r, NULL, dec_read, NULL) != ARCHIVE_OK)
		return ARCHIVE_FATAL;
	r->recording = 0;
	if (archive_filter_count(r->dec) == 1 &&
	    archive_filter_code(r->dec, 0) == ARCHIVE_FILTER_NONE) {
		archive_read_free(r->dec);
		r->dec = NULL;
		r->replay_off = 0;
		return ARCHIVE_OK;
	}
	free(r->replay);
	r->replay = NULL;
	r->replay_len = r->replay_off = r->replay_size = 0;
	return archive_read_next_header(r->dec, &raw);
}

static int open_tar(struct e2cb_reader *r)
{
	archive_read_support_format_tar(r->a);
	/* "._x" is a file of that name, not metadata of "x" to read whole */
	archive_read_set_format_option(r->a, "tar", "mac-ext", NULL);
	archive_read_set_read_callback(r->a, tar_read);
	archive_read_set_callback_data(r->a, r);
	if (!r->dec && S_ISREG(r->fd_mode))
		archive_read_set_skip_callback(r->a, tar_skip);
	return archive_read_open1(r->a);
}

/* @name, or when NULL the descriptor r->fd (standard input by default) */
static errcode_t open_archive(struct e2cb_reader *r, const char *name)
{
	const char *shown = name ? name : "the archive";
	struct archive *failed;
	struct stat st;
	errcode_t retval;

	r->a = archive_read_new();
	r->ae = archive_entry_new();
	r->hash_buf = malloc(E2CB_HASH_BUF_SIZE);
	if (!r->a || !r->ae || !r->hash_buf)
		return EXT2_ET_NO_MEMORY;
	e2cb_tarscan_init(&r->scan);
	if (name && strcmp(name, "-")) {
		r->fd = open(name, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			snprintf(r->err, sizeof(r->err), "cannot open %s: %s",
				 name, strerror(errno));
			return EXT2_ET_FILE_NOT_FOUND;
		}
		r->own_fd = 1;
	}
	if (fstat(r->fd, &st) == 0)
		r->fd_mode = st.st_mode;
	if (S_ISDIR(r->fd_mode)) {
		snprintf(r->err, sizeof(r->err), "cannot open %s: %s", shown,
			 strerror(EISDIR));
		return EXT2_ET_FILE_NOT_FOUND;
	}
	r->fd_start = lseek(r->fd, 0, SEEK_CUR);
	if (r->flags & E2CB_READ_HASH) {
		retval = e2cb_reader_hash_start(r);
		if (retval)
			return retval;
	}
	if (open_decompressor(r) < ARCHIVE_WARN)
		failed = r->dec;
	else if (open_tar(r) != ARCHIVE_OK)
		failed = r->a;
	else
		failed = NULL;
	/* refused before libarchive saw a header: not one of ours */
	if (failed && r->scan.failed) {
		snprintf(r->err, sizeof(r->err), "not an e2cryptbak archive "
			 "(%s)", r->scan.err);
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	if (failed) {
		snprintf(r->err, sizeof(r->err), "cannot open %s: %s", shown,
			 archive_error_string(failed) ?
			 archive_error_string(failed) : strerror(ENOMEM));
		return EXT2_ET_FILE_NOT_FOUND;
	}
	r->plain_file = r->fd_start >= 0 && S_ISREG(r->fd_mode) && !r->dec;
	return 0;
}

/*
 * A FIFO we opened is read to its end before it is closed, as
 * libarchive does for the files it opens: the writer is not cut off
 * with EPIPE, and whoever opens the FIFO next does not get our tail.
 */
static void close_archive_fd(struct e2cb_reader *r)
{
	char buf[65536];

	if (!r->own_fd)
		return;
	if (S_ISFIFO(r->fd_mode) || S_ISSOCK(r->fd_mode))
		while (read(r->fd, buf, sizeof(buf)) > 0)
			;
	close(r->fd);
}

static int read_header(struct e2cb_reader *r)
{
	if (next_tar_header(r, "the header")) {
		if (r->scan.failed)
			snprintf(r->err, sizeof(r->err), "not an e2cryptbak "
				 "archive (%s)", r->scan.err);
		return -1;
	}
	if ((r->flags & E2CB_READ_HASH) && e2cb_reader_digest_entry(r))
		return -1;
	return e2cb_reader_check_header(r);
}

static errcode_t reader_start(const char *name, int fd, int flags,
				struct e2cb_reader **ret)
{
	struct e2cb_reader *r;
	errcode_t retval;

	r = calloc(1, sizeof(*r));
	if (!r)
		return EXT2_ET_NO_MEMORY;
	*ret = r;
	r->flags = flags;
	r->fd = fd;
	r->data_done = 1;
	e2cb_sum_init(&r->sum);
	e2cb_reader_checks_init(r);
	retval = open_archive(r, name);
	if (retval)
		return retval;
	if (read_header(r))
		return EXT2_ET_CRYPT_BAD_BLOB;
	return 0;
}

errcode_t e2cb_reader_open(const char *name, int flags,
			   struct e2cb_reader **ret)
{
	return reader_start(name, 0, flags, ret);
}

/*
 * The archive from @fd's current offset on.  @fd stays the caller's:
 * a caller that reads an archive twice holds one descriptor, so that
 * both passes read the same file, whatever is renamed over its name.
 */
errcode_t e2cb_reader_open_fd(int fd, int flags, struct e2cb_reader **ret)
{
	return reader_start(NULL, fd, flags, ret);
}

static int finish_map(struct e2cb_reader *r);

/* Read what is left of the current entry's data into the sum. */
static int drain_data(struct e2cb_reader *r)
{
	if (r->map_open)
		return finish_map(r);
	if (r->data_done)
		return 0;
	if (!(r->flags & E2CB_READ_DATA)) {
		r->data_done = 1;
		r->in_entry = 0;
		if (archive_read_data_skip(r->a) < ARCHIVE_WARN)
			return e2cb_reader_damage(r, "while skipping its "
						  "data: %s", stream_why(r));
		return 0;
	}
	if (e2cb_reader_data(r, NULL, NULL))
		return -1;
	return 0;
}

/* After the trailer: the end of the archive, and nothing but the end */
static int trailer_is_last(struct e2cb_reader *r)
{
	struct archive_entry *extra;
	int ret;

	extra = archive_entry_new();
	ret = read_tar_header(r, extra);
	archive_entry_free(extra);
	if (r->scan.failed)
		return e2cb_reader_damage(r, "after it: refused: %s",
					  r->scan.err);
	if (ret != ARCHIVE_EOF)
		return e2cb_reader_damage(r, "entries follow the trailer");
	return E2CB_READER_END;
}

int e2cb_reader_next(struct e2cb_reader *r, struct e2cb_entry **ret)
{
	struct e2cb_entry *e = &r->cur;
	int checked;

	if (drain_data(r))
		return -1;
	memset(e, 0, sizeof(*e));
	e->index = r->next_seq;
	do {
		if (next_tar_header(r, "an entry or the trailer"))
			return -1;
		if (e2cb_reader_set_path(r, archive_entry_pathname(r->ae)))
			return -1;
		if ((r->flags & E2CB_READ_HASH) &&
		    e2cb_reader_digest_entry(r))
			return -1;
		/* version 2: records entries are read here, not handed out */
		checked = e2cb_reader_records_entry(r);
		if (checked < 0)
			return -1;
	} while (checked);
	if (e2cb_reader_take_group(r))
		return -1;
	e->path = r->path.s;
	checked = e2cb_reader_check_entry(r, e);
	if (checked == E2CB_READER_END)
		return trailer_is_last(r);
	if (checked)
		return -1;
	e2cb_sum_init(&r->sum);
	r->data_done = 0;
	free(r->prev_path);
	r->prev_path = strdup(e->path);
	r->prev_index = e->index;
	*ret = e;
	return 0;
}

/* Hand the current entry's data to @func (may be NULL), summing it. */
errcode_t e2cb_reader_data(struct e2cb_reader *r, e2cb_data_func func,
			   void *priv)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	errcode_t retval;
	int ret;

	if (r->data_done)
		return 0;
	r->data_done = 1;
	while ((ret = archive_read_data_block(r->a, &buf, &len, &off)) ==
	       ARCHIVE_OK) {
		if (off < 0 || (uint64_t) off + len > r->cur.tar_size) {
			e2cb_reader_damage(r, "data beyond the entry's size");
			return EXT2_ET_CRYPT_BAD_BLOB;
		}
		e2cb_sum_add(&r->sum, off, buf, len);
		r->data_bytes += len;
		if (func) {
			retval = func(&r->cur, off, buf, len, priv);
			if (retval)
				return retval;
		}
	}
	/* at its end libarchive is ready for the next header */
	r->in_entry = 0;
	if (ret != ARCHIVE_EOF) {
		e2cb_reader_damage(r, "while reading its data: %s",
				   stream_why(r));
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	return 0;
}

static int add_stretch(struct e2cb_reader *r, la_int64_t off,
		       la_int64_t len, uint64_t pos)
{
	struct e2cb_stretch *m;

	if (!len)
		return 0;
	if (r->map_len == E2CB_MAX_STRETCHES)
		return e2cb_reader_damage(r, "more than %u data stretches",
					  E2CB_MAX_STRETCHES);
	if (off < 0 || len < 0 || (uint64_t) off > r->cur.tar_size ||
	    (uint64_t) len > r->cur.tar_size - off)
		return e2cb_reader_damage(r, "data beyond the entry's size");
	if (e2cb_grow((void **) &r->map, &r->map_size, r->map_len,
		      sizeof(*r->map)))
		return e2cb_reader_damage(r, "no memory for its data's map");
	m = &r->map[r->map_len++];
	m->off = off;
	m->len = len;
	m->pos = pos;
	return 0;
}

/*
 * Where libarchive would read the entry's data, from @pos of the file
 * on: the sparse map's stretches back to back, or the whole size.
 */
static int map_data(struct e2cb_reader *r, uint64_t pos, uint64_t *total)
{
	la_int64_t off, len;

	r->map_len = 0;
	*total = 0;
	if (!archive_entry_sparse_reset(r->ae)) {
		*total = r->cur.tar_size;
		return add_stretch(r, 0, r->cur.tar_size, pos);
	}
	while (archive_entry_sparse_next(r->ae, &off, &len) == ARCHIVE_OK) {
		if (add_stretch(r, off, len, pos + *total))
			return -1;
		*total += len;
	}
	return 0;
}

/*
 * The current entry's data as stretches of the archive file, for a
 * caller that reads them itself (pread() on @fd) instead of copying
 * them out of libarchive: possible when the archive is an uncompressed
 * regular file that holds all of them.  The data is skipped here; the
 * caller hands back the crc32c of what it read, in order
 * (e2cb_reader_sum_crc()), and what it did not the reader reads
 * itself before the next entry (finish_map()): the sum is checked
 * there as for any data.
 * EXT2_ET_UNIMPLEMENTED: it cannot be read so, and nothing was done.
 */
errcode_t e2cb_reader_data_map(struct e2cb_reader *r,
			       const struct e2cb_stretch **ret, size_t *count,
			       int *fd)
{
	uint64_t pos, total, skipped;
	struct stat st;

	if (r->data_done || !r->plain_file || fstat(r->fd, &st))
		return EXT2_ET_UNIMPLEMENTED;
	pos = r->fd_start + archive_filter_bytes(r->a, 0);
	if (map_data(r, pos, &total)) {
		r->data_done = 1;
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	/* a truncated archive: libarchive says so as it reads */
	if (pos + total > (uint64_t) st.st_size)
		return EXT2_ET_UNIMPLEMENTED;
	r->data_done = 1;
	r->in_entry = 0;
	if (archive_read_data_skip(r->a) < ARCHIVE_WARN) {
		e2cb_reader_damage(r, "while skipping its data: %s",
				   stream_why(r));
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	/* what libarchive skipped is that data and the block's padding */
	skipped = r->fd_start + archive_filter_bytes(r->a, 0) - pos;
	if (skipped < total || skipped - total >= 512) {
		e2cb_reader_damage(r, "its data is not where its sparse map "
				   "puts it");
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	r->data_bytes += total;
	r->map_open = 1;
	r->map_at = 0;
	r->map_in = 0;
	r->map_bad = 0;
	*ret = r->map;
	*count = r->map_len;
	*fd = r->fd;
	return 0;
}

/*
 * A piece of the mapped data, summed already by whoever read it: @crc
 * is the crc32c of the @len bytes at @off, from 0.  It must follow the
 * pieces before it in the map (it may run on into a stretch that
 * abuts); one that does not is left out, and finish_map() sums all
 * the data again.
 */
void e2cb_reader_sum_crc(struct e2cb_reader *r, uint64_t off, size_t len,
			 uint32_t crc)
{
	const struct e2cb_stretch *m;
	uint64_t at = off, left = len, n;

	if (!r->map_open || r->map_bad || !len)
		return;
	while (left) {
		m = r->map + r->map_at;
		if (r->map_at == r->map_len || m->off + r->map_in != at) {
			r->map_bad = 1;
			return;
		}
		n = m->len - r->map_in < left ? m->len - r->map_in : left;
		r->map_in += n;
		at += n;
		left -= n;
		if (r->map_in == m->len) {
			r->map_at++;
			r->map_in = 0;
		}
	}
	e2cb_sum_add_crc(&r->sum, off, len, crc);
}

/*
 * The mapped data the caller did not sum (past what it needed, or
 * after its output failed), read here; all of it again when what it
 * gave was not in order.  Then the next entry checks the sum.
 */
static int finish_map(struct e2cb_reader *r)
{
	const struct e2cb_stretch *m;
	errcode_t retval;
	uint64_t done;
	size_t n;

	r->map_open = 0;
	if (r->map_bad) {
		e2cb_sum_init(&r->sum);
		r->map_at = 0;
		r->map_in = 0;
	}
	for (; r->map_at < r->map_len; r->map_at++, r->map_in = 0) {
		m = r->map + r->map_at;
		for (done = r->map_in; done < m->len; done += n) {
			n = m->len - done < E2CB_HASH_BUF_SIZE ? m->len - done :
			    E2CB_HASH_BUF_SIZE;
			retval = e2cb_pread_all(r->fd, r->hash_buf, n,
						m->pos + done);
			if (retval)
				return e2cb_reader_damage(r, "while reading "
					"its data: %s",
					retval == EXT2_ET_SHORT_READ ?
					"unexpected end of the archive" :
					strerror(retval));
			e2cb_sum_add(&r->sum, m->off + done, r->hash_buf, n);
		}
	}
	return 0;
}

void e2cb_reader_close(struct e2cb_reader *r)
{
	if (!r)
		return;
	if (r->ae)
		archive_entry_free(r->ae);
	if (r->a)
		archive_read_free(r->a);
	if (r->dec)
		archive_read_free(r->dec);
	close_archive_fd(r);
	e2cb_tarscan_free(&r->scan);
	free(r->replay);
	free(r->map);
	e2cb_reader_checks_free(r);
	e2cb_reader_records_free(r);
	free(r->prev_path);
	e2cb_reader_hash_free(r);
	free(r->hash_buf);
	free(r);
}

