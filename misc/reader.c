/*
 * reader.c --- read and check an e2cryptbak archive, entry by entry
 *
 * Every check that the format allows is made here, once, for all the
 * commands that read archives: record checksums, the sequence numbers
 * that reveal lost or reordered entries, the path each record was
 * written for, the data sum that the next entry carries, and the trailer
 * that proves the archive is whole.
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
#include <openssl/evp.h>
#include "e2cryptbak.h"

#define HASH_BUF_SIZE	65536

/*
 * An inode with several names, and the digest of the path its data was
 * archived at: a path may be a megabyte long, and a forged archive can
 * give every entry such a path and several names.
 */
struct link_first {
	uint32_t ino;
	uint8_t path_md[16];
};

struct e2cb_reader {
	struct archive *a;
	struct archive_entry *ae;
	struct archive *dec;		/* the decompressor, if compressed */
	int flags;
	int fd;				/* the archive's */
	int own_fd;
	mode_t fd_mode;
	int64_t fd_start;		/* where in fd the archive begins */
	int plain_file;			/* fd: a regular file, not compressed */
	int in_entry;			/* libarchive is at an entry's data */
	/* what the decompressor's sniffing read, given again to the tar
	 * reader when the archive turns out not to be compressed */
	char *replay;
	size_t replay_len, replay_off;
	int recording;
	struct e2cb_tarscan scan;	/* what libarchive is handed */
	struct e2cb_stretch *map;	/* the current entry's data in fd */
	size_t map_len, map_size;
	struct e2cb_header hdr;
	struct e2cb_trailer trailer;
	struct e2cb_entry cur;
	struct e2cb_data_sum sum;	/* of the current entry's data */
	int data_done;			/* current entry's data consumed */
	uint32_t next_seq;
	uint64_t entries, inodes, encrypted, data_bytes;
	char *path;
	size_t path_size;
	/*
	 * The directories enclosing the entry: each is a prefix of the
	 * deepest one's path, so that path and their lengths are all that
	 * is kept (a copy of each would grow with the square of the depth).
	 */
	char *dir_path;			/* the deepest; "" for the root */
	size_t dir_path_size;
	size_t *dir_len;		/* each one's length in dir_path */
	size_t ndirs, dirs_size;
	uint64_t prev_index;		/* the entry before the current one */
	char *prev_path;
	struct link_first *linked;	/* inodes a hard link may name */
	size_t nlinked, linked_size;
	/* E2CB_READ_HASH: the stream read, and the current entry */
	EVP_MD_CTX *stream, *entry;
	char *hash_buf;			/* HASH_BUF_SIZE: what read() gets */
	uint8_t digest[E2CB_ENTRY_DIGEST_LEN];
	char err[1024];
};

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
static int damage(struct e2cb_reader *r, const char *fmt, ...)
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
static int damage_prev(struct e2cb_reader *r, const char *fmt, ...)
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

/* The value of record @name, or NULL; a record given twice is damage. */
static const void *find_rec(struct e2cb_reader *r, const char *name,
			    size_t *len, int *dup)
{
	const char *n;
	const void *v, *found = NULL;
	size_t s;

	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK) {
		if (strcmp(n, name))
			continue;
		if (found)
			*dup = 1;
		found = v;
		*len = s;
	}
	return found;
}

/* Any record we do not know is a sign of damage or of a newer format. */
static int check_rec_names(struct e2cb_reader *r)
{
	static const char *const known[] = {
		E2CB_REC_HEADER, E2CB_REC_TRAILER, E2CB_REC_INODE,
		E2CB_REC_METADATA, E2CB_REC_NAME, E2CB_REC_XATTRS,
		E2CB_REC_SYMLINK, NULL
	};
	const char *n;
	const void *v;
	size_t s;
	int i;

	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK) {
		for (i = 0; known[i] && strcmp(n, known[i]); i++)
			;
		if (!known[i])
			return damage(r, "unknown record '%s'", n);
	}
	return 0;
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
 * libarchive reads the descriptor through us: we hash what it reads
 * (E2CB_READ_HASH), and we check the tar stream before it does.
 */
static ssize_t fd_read(struct e2cb_reader *r, struct archive *a,
		       const void **buf)
{
	ssize_t n;
	char *p;

	if (r->replay_off < r->replay_len) {
		*buf = r->replay + r->replay_off;
		n = r->replay_len - r->replay_off;
		r->replay_off = r->replay_len;
		return n;
	}
	do
		n = read(r->fd, r->hash_buf, HASH_BUF_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "%s", strerror(errno));
		return -1;
	}
	if (r->stream && !EVP_DigestUpdate(r->stream, r->hash_buf, n)) {
		archive_set_error(a, ENOMEM, "cannot hash the archive");
		return -1;
	}
	if (r->recording && n) {
		p = realloc(r->replay, r->replay_len + n);
		if (!p) {
			archive_set_error(a, ENOMEM, "out of memory");
			return -1;
		}
		memcpy(p + r->replay_len, r->hash_buf, n);
		r->replay = p;
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

static errcode_t start_hashes(struct e2cb_reader *r)
{
	r->stream = EVP_MD_CTX_new();
	r->entry = EVP_MD_CTX_new();
	if (!r->stream || !r->entry ||
	    !EVP_DigestInit_ex(r->stream, EVP_sha256(), NULL))
		return EXT2_ET_NO_MEMORY;
	return 0;
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
	r->replay_len = r->replay_off = 0;
	return archive_read_next_header(r->dec, &raw);
}

static int open_tar(struct e2cb_reader *r)
{
	archive_read_support_format_tar(r->a);
	/* "._x" is a file of that name, not metadata of "x" to read whole */
	archive_read_set_format_option(r->a, "tar", "mac-ext", NULL);
	archive_read_set_read_callback(r->a, tar_read);
	archive_read_set_callback_data(r->a, r);
	if (!r->dec && !r->stream && S_ISREG(r->fd_mode))
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
	r->hash_buf = malloc(HASH_BUF_SIZE);
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
		retval = start_hashes(r);
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
	/* data read around libarchive would not be hashed */
	r->plain_file = r->fd_start >= 0 && S_ISREG(r->fd_mode) &&
			!(r->flags & E2CB_READ_HASH) && !r->dec;
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

/* The header and trailer entries are empty files carrying one record */
static int check_marker_entry(struct e2cb_reader *r, const char *rec)
{
	const char *n;
	const void *v;
	size_t s;

	if (archive_entry_size(r->ae) != 0 ||
	    archive_entry_filetype(r->ae) != AE_IFREG)
		return damage(r, "the %s entry is not an empty file", rec);
	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK)
		if (strcmp(n, rec))
			return damage(r, "the %s entry carries '%s' too", rec,
				      n);
	return 0;
}

static int digest_entry(struct e2cb_reader *r);

static int read_header(struct e2cb_reader *r)
{
	const void *v;
	size_t len = 0;
	int dup = 0;
	errcode_t err;

	if (next_tar_header(r, "the header")) {
		if (r->scan.failed)
			snprintf(r->err, sizeof(r->err), "not an e2cryptbak "
				 "archive (%s)", r->scan.err);
		return -1;
	}
	if ((r->flags & E2CB_READ_HASH) && digest_entry(r))
		return -1;
	v = find_rec(r, E2CB_REC_HEADER, &len, &dup);
	if (!v || dup)
		return damage(r, "not an e2cryptbak archive (the first "
			      "entry has no %s record)", E2CB_REC_HEADER);
	if (check_marker_entry(r, E2CB_REC_HEADER))
		return -1;
	err = e2cb_decode_header(v, len, &r->hdr);
	if (err == EXT2_ET_CRYPT_UNKNOWN_CONTEXT_VERSION)
		return damage(r, "archive format version %u is not "
			      "supported (this is %u)",
			      ((const uint8_t *) v)[4] |
			      (((const uint8_t *) v)[5] << 8),
			      E2CB_FORMAT_VERSION);
	if (err)
		return damage(r, "the archive header is damaged (%s)",
			      error_message(err));
	r->next_seq = 1;
	return 0;
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

/*
 * E2CB_READ_HASH: the SHA-256 of all the descriptor holds from where the
 * reader began, what libarchive read and the rest to its end.  Only
 * once, when the reader is done.
 */
errcode_t e2cb_reader_stream_digest(struct e2cb_reader *r,
				    uint8_t out[E2CB_STREAM_DIGEST_LEN])
{
	unsigned int len;
	ssize_t n;

	if (!r->stream)
		return EXT2_ET_INVALID_ARGUMENT;
	while ((n = read(r->fd, r->hash_buf, HASH_BUF_SIZE)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (!EVP_DigestUpdate(r->stream, r->hash_buf, n))
			return EXT2_ET_NO_MEMORY;
	}
	if (!EVP_DigestFinal_ex(r->stream, out, &len))
		return EXT2_ET_NO_MEMORY;
	return 0;
}

/*
 * E2CB_READ_HASH: a digest of all the current entry's tar header says;
 * before the first e2cb_reader_next(), the archive header entry's.
 */
const uint8_t *e2cb_reader_entry_digest(struct e2cb_reader *r)
{
	return r->digest;
}

/* Read what is left of the current entry's data into the sum. */
static int drain_data(struct e2cb_reader *r)
{
	if (r->data_done)
		return 0;
	if (!(r->flags & E2CB_READ_DATA)) {
		r->data_done = 1;
		r->in_entry = 0;
		if (archive_read_data_skip(r->a) < ARCHIVE_WARN)
			return damage(r, "while skipping its data: %s",
				      stream_why(r));
		return 0;
	}
	if (e2cb_reader_data(r, NULL, NULL))
		return -1;
	return 0;
}

/* The previous entry's data, as the sum in the record after it says */
static int check_prev_data(struct e2cb_reader *r, uint64_t bytes,
			   uint32_t crc)
{
	uint32_t got = e2cb_sum_final(&r->sum);

	if (!(r->flags & E2CB_READ_DATA))
		return 0;
	if (r->sum.bytes != bytes || (E2CB_CHECK_SUMS && got != crc))
		return damage_prev(r, "its data is damaged (%llu bytes read, "
				   "crc32c %08x; %llu bytes, %08x recorded "
				   "in the next entry)",
			      (unsigned long long) r->sum.bytes, got,
			      (unsigned long long) bytes, crc);
	return 0;
}

static int read_trailer(struct e2cb_reader *r, const void *v, size_t len)
{
	struct archive_entry *extra;
	errcode_t err;
	int ret;

	err = e2cb_decode_trailer(v, len, &r->trailer);
	if (!err && (r->trailer.tflags & ~E2CB_TF_INCOMPLETE))
		err = EXT2_ET_CRYPT_BAD_BLOB;
	if (err)
		return damage(r, "the trailer is damaged (%s)",
			      error_message(err));
	if (r->trailer.seq != r->next_seq)
		return damage(r, "the trailer has sequence number %u where "
			      "%u was due: entries are missing",
			      r->trailer.seq, r->next_seq);
	if (check_prev_data(r, r->trailer.prev_data_bytes,
			    r->trailer.prev_data_crc))
		return -1;
	if (r->trailer.entries != r->entries ||
	    r->trailer.inodes != r->inodes ||
	    r->trailer.encrypted != r->encrypted)
		return damage(r, "the trailer counts %llu entries, %llu "
			      "inodes, %llu encrypted; the archive holds "
			      "%llu, %llu, %llu",
			      (unsigned long long) r->trailer.entries,
			      (unsigned long long) r->trailer.inodes,
			      (unsigned long long) r->trailer.encrypted,
			      (unsigned long long) r->entries,
			      (unsigned long long) r->inodes,
			      (unsigned long long) r->encrypted);
	if ((r->flags & E2CB_READ_DATA) &&
	    r->trailer.data_bytes != r->data_bytes)
		return damage(r, "the trailer counts %llu data bytes; the "
			      "archive holds %llu",
			      (unsigned long long) r->trailer.data_bytes,
			      (unsigned long long) r->data_bytes);
	extra = archive_entry_new();
	ret = read_tar_header(r, extra);
	archive_entry_free(extra);
	if (r->scan.failed)
		return damage(r, "after it: refused: %s", r->scan.err);
	if (ret != ARCHIVE_EOF)
		return damage(r, "entries follow the trailer");
	return E2CB_READER_END;
}

static int decode_crypt_records(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0;
	int dup = 0, is_dir = 0;
	uint32_t mode = 0;
	const uint8_t *dctx;
	size_t dctx_len;
	errcode_t err;

	v = find_rec(r, E2CB_REC_METADATA, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_METADATA) || dup)
		return damage(r, "the metadata record is %s",
			      dup ? "duplicated" : v ? "unexpected" :
			      "missing");
	if (v) {
		err = ext2fs_decode_metadata_blob(v, len, &e->i_size, &e->ctx,
						  &e->ctx_len);
		if (err)
			return damage(r, "the metadata record is damaged (%s)",
				      error_message(err));
		if (e->i_size != e->rec.size)
			return damage(r, "the metadata record's i_size %llu "
				      "differs from the inode's %llu",
				      (unsigned long long) e->i_size,
				      (unsigned long long) e->rec.size);
	}
	v = find_rec(r, E2CB_REC_NAME, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_NAME) || dup)
		return damage(r, "the name record is %s",
			      dup ? "duplicated" : v ? "unexpected" :
			      "missing");
	if (!v)
		return 0;
	err = ext2fs_decode_filename_blob(v, len, &e->name, &is_dir, &mode,
					  &dctx, &dctx_len);
	if (err)
		return damage(r, "the name record is damaged (%s)",
			      error_message(err));
	if (is_dir != LINUX_S_ISDIR(e->rec.mode) ||
	    (is_dir && mode != e->rec.mode))
		return damage(r, "the name record disagrees with the inode "
			      "about the file type or mode");
	return 0;
}

static int count_xattr(int index EXT2FS_ATTR((unused)),
		       const char *name EXT2FS_ATTR((unused)),
		       size_t name_len EXT2FS_ATTR((unused)),
		       const void *value EXT2FS_ATTR((unused)),
		       size_t value_len EXT2FS_ATTR((unused)), void *priv)
{
	(*(size_t *) priv)++;
	return 0;
}

static int decode_other_records(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0, n = 0;
	int dup = 0;

	v = find_rec(r, E2CB_REC_XATTRS, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_XATTRS) || dup)
		return damage(r, "the xattr record is %s",
			      dup ? "duplicated" : v ? "unexpected" :
			      "missing");
	if (v && e2cb_xattr_rec_iterate(v, len, count_xattr, &n))
		return damage(r, "the xattr record is damaged");
	if (n > E2CB_MAX_XATTRS)
		return damage(r, "%zu extended attributes, over the limit of "
			      "%d", n, E2CB_MAX_XATTRS);
	e->xattrs = v;
	e->xattrs_len = v ? len : 0;
	v = find_rec(r, E2CB_REC_SYMLINK, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_SYMLINK) || dup)
		return damage(r, "the symlink record is %s",
			      dup ? "duplicated" : v ? "unexpected" :
			      "missing");
	if (v && (e2cb_check_sealed(v, len) || len - 4 != e->rec.size))
		return damage(r, "the symlink record is damaged");
	e->symlink = v;
	e->symlink_len = v ? len - 4 : 0;
	return 0;
}

/* The last component of an encrypted name must be its base64url. */
static int check_name_path(struct e2cb_reader *r, const struct e2cb_entry *e)
{
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];
	size_t plen = strlen(e->path), clen;

	if (!(e->rec.rflags & E2CB_IF_NAME)) {
		const char *slash = strrchr(e->path, '/');

		clen = slash ? plen - (slash + 1 - e->path) : plen;
		if (clen > EXT2_NAME_LEN)
			return damage(r, "the name is longer than %d bytes",
				      EXT2_NAME_LEN);
		return 0;
	}
	clen = e2cb_b64url_encode(e->name.name, e->name.name_len, comp);
	if (plen < clen || memcmp(e->path + plen - clen, comp, clen) ||
	    (plen > clen && e->path[plen - clen - 1] != '/'))
		return damage(r, "the path does not end in the base64url of "
			      "the raw name");
	return 0;
}

static int decode_entry(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0;
	int dup = 0;
	errcode_t err;

	v = find_rec(r, E2CB_REC_INODE, &len, &dup);
	if (!v || dup)
		return damage(r, "the inode record is %s",
			      dup ? "duplicated" : "missing");
	err = e2cb_decode_inode(v, len, &e->rec);
	if (err)
		return damage(r, "the inode record is damaged (%s)",
			      error_message(err));
	if (e->rec.seq != r->next_seq)
		return damage(r, "sequence number %u where %u was due: "
			      "entries are missing or out of order",
			      e->rec.seq, r->next_seq);
	if (E2CB_CHECK_SUMS &&
	    e->rec.path_crc != e2cb_crc32c(~0U, e->path, strlen(e->path)))
		return damage(r, "the path was altered");
	if (check_prev_data(r, e->rec.prev_data_bytes, e->rec.prev_data_crc))
		return -1;
	if (find_rec(r, E2CB_REC_HEADER, &len, &dup))
		return damage(r, "a header record on an inode entry");
	if (check_rec_names(r) || decode_crypt_records(r, e) ||
	    decode_other_records(r, e) || check_name_path(r, e))
		return -1;
	return 0;
}

/*
 * tar writers append '/' to directory names; the archive's own paths
 * (over which path_crc runs) have none, and the root is ".".
 */
static int normalize_path(struct e2cb_reader *r, const char *path)
{
	size_t len;
	char *p;

	/* an entry without a path has no name of its own: name the one
	 * before it */
	if (!path)
		return damage_prev(r, "the entry after this one has no path");
	len = strlen(path);
	if (len + 2 > r->path_size) {
		p = realloc(r->path, len + 2);
		if (!p)
			return damage(r, "out of memory");
		r->path = p;
		r->path_size = len + 2;
	}
	memcpy(r->path, path, len + 1);
	while (len > 1 && r->path[len - 1] == '/')
		r->path[--len] = 0;
	if (!strcmp(r->path, "./") || !strcmp(r->path, "/"))
		strcpy(r->path, ".");
	return 0;
}

/* Paths are relative, made of real names: no "", ".", ".." or "/x" */
static int check_path_syntax(struct e2cb_reader *r, const char *path)
{
	const char *p = path, *end;
	size_t len;

	if (!strcmp(path, "."))
		return 0;
	for (;;) {
		end = strchr(p, '/');
		len = end ? (size_t) (end - p) : strlen(p);
		if (len == 0 || len > EXT2_NAME_LEN * 2 ||
		    (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return damage(r, "the path is not a plain relative "
				      "path");
		if (!end)
			return 0;
		p = end + 1;
	}
}

/*
 * Entries come in pre-order: each one's directory is an earlier entry
 * still open.  Pop what it closes; e->depth is its number of components.
 */
static int check_path_order(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const char *slash = strrchr(e->path, '/');
	size_t plen = slash ? (size_t) (slash - e->path) : 0;
	size_t top;

	if (!strcmp(e->path, ".")) {
		if (r->ndirs || e->index != 1)
			return damage(r, "the root entry is not the first");
		e->depth = 0;
		return 0;
	}
	/* the root's length is 0, and only the root's */
	while (r->ndirs) {
		top = r->dir_len[r->ndirs - 1];
		if (top == plen && !memcmp(r->dir_path, e->path, plen))
			break;
		r->ndirs--;
	}
	if (!r->ndirs)
		return damage(r, "the entry's directory is not an earlier "
			      "entry");
	e->depth = r->ndirs;
	if (e->depth > E2CB_MAX_DEPTH)
		return damage(r, "nested %u levels deep, over the limit of "
			      "%d", e->depth, E2CB_MAX_DEPTH);
	return 0;
}

/* @path is a child of the deepest open directory, or the root */
static int push_dir(struct e2cb_reader *r, const char *path)
{
	size_t len = strcmp(path, ".") ? strlen(path) : 0;
	size_t *d;
	char *p;

	if (r->ndirs == r->dirs_size) {
		d = realloc(r->dir_len, (r->dirs_size * 2 + 16) * sizeof(*d));
		if (!d)
			return damage(r, "out of memory");
		r->dir_len = d;
		r->dirs_size = r->dirs_size * 2 + 16;
	}
	if (len + 1 > r->dir_path_size) {
		p = realloc(r->dir_path, len + 1);
		if (!p)
			return damage(r, "out of memory");
		r->dir_path = p;
		r->dir_path_size = len + 1;
	}
	memcpy(r->dir_path, path, len);
	r->dir_path[len] = 0;
	r->dir_len[r->ndirs++] = len;
	return 0;
}

/* The inodes with several names, for the hard links' targets */
static const struct link_first *linked_find(struct e2cb_reader *r,
					    uint32_t ino)
{
	size_t i;

	if (!r->linked_size)
		return NULL;
	for (i = ino % r->linked_size; r->linked[i].ino; i = (i + 1) %
	     r->linked_size)
		if (r->linked[i].ino == ino)
			return &r->linked[i];
	return NULL;
}

static void linked_insert(struct link_first *t, size_t size,
			  const struct link_first *l)
{
	size_t i;

	for (i = l->ino % size; t[i].ino; i = (i + 1) % size)
		;
	t[i] = *l;
}

static int path_digest(const char *path, uint8_t md[16])
{
	uint8_t full[EVP_MAX_MD_SIZE];

	if (!EVP_Digest(path, strlen(path), full, NULL, EVP_sha256(), NULL))
		return -1;
	memcpy(md, full, 16);
	return 0;
}

static int linked_add(struct e2cb_reader *r, uint32_t ino, const char *path)
{
	struct link_first *old = r->linked, l = { .ino = ino };
	size_t old_size = r->linked_size, j;

	if (path_digest(path, l.path_md))
		return damage(r, "out of memory");
	if ((r->nlinked + 1) * 2 > r->linked_size) {
		r->linked_size = old_size ? old_size * 2 : 64;
		r->linked = calloc(r->linked_size, sizeof(*r->linked));
		if (!r->linked) {
			r->linked = old;
			r->linked_size = old_size;
			return damage(r, "out of memory");
		}
		for (j = 0; j < old_size; j++)
			if (old[j].ino)
				linked_insert(r->linked, r->linked_size,
					      &old[j]);
		free(old);
	}
	linked_insert(r->linked, r->linked_size, &l);
	r->nlinked++;
	return 0;
}

/*
 * A hard link names the inode's first entry: by inode number in its
 * record (what restore and extract follow), and by path in the tar
 * header (what tar follows).  A hostile or damaged archive could make
 * the two differ.
 */
static int check_hard_link(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const struct link_first *first = linked_find(r, e->rec.ino);
	const char *target = archive_entry_hardlink(r->ae);
	uint8_t md[16];

	if (LINUX_S_ISDIR(e->rec.mode) || !first)
		return damage(r, "a hard link to inode %u, which no earlier "
			      "entry holds", e->rec.ino);
	if (path_digest(target, md))
		return damage(r, "out of memory");
	/* the path itself, by SHA-256: a crc is no match for a forger */
	if (memcmp(md, first->path_md, sizeof(md)))
		return damage(r, "the hard link's tar target is not the "
			      "entry that holds inode %u", e->rec.ino);
	return 0;
}

static int expected_tar_type(uint32_t mode)
{
	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFDIR: return AE_IFDIR;
	case LINUX_S_IFLNK: return AE_IFLNK;
	case LINUX_S_IFCHR: return AE_IFCHR;
	case LINUX_S_IFBLK: return AE_IFBLK;
	case LINUX_S_IFIFO: return AE_IFIFO;
	case LINUX_S_IFREG:
	case LINUX_S_IFSOCK: return AE_IFREG;
	}
	return -1;
}

/* What the inode record says must agree with the tar header and itself */
static int check_consistency(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const struct e2cb_inode_rec *rec = &e->rec;
	int hard = !!(rec->rflags & E2CB_IF_HARDLINK);

	if (hard != !!archive_entry_hardlink(r->ae))
		return damage(r, "the hard link flag and the tar header "
			      "disagree");
	if (hard && check_hard_link(r, e))
		return -1;
	if (!hard && expected_tar_type(rec->mode) !=
	    (int) archive_entry_filetype(r->ae))
		return damage(r, "the tar type disagrees with the inode's "
			      "mode 0%o", rec->mode);
	if (!hard && !!(rec->rflags & E2CB_IF_METADATA) !=
	    !!(rec->iflags & EXT4_ENCRYPT_FL))
		return damage(r, "the inode's encrypt flag and its metadata "
			      "record disagree");
	if (!hard && LINUX_S_ISLNK(rec->mode) &&
	    rec->size > E2CB_MAX_SYMLINK)
		return damage(r, "a symlink target of %llu bytes, over the "
			      "limit of %d", (unsigned long long) rec->size,
			      E2CB_MAX_SYMLINK);
	if ((rec->rflags & E2CB_IF_SYMLINK) &&
	    (!LINUX_S_ISLNK(rec->mode) || !(rec->iflags & EXT4_ENCRYPT_FL)))
		return damage(r, "a symlink record on an entry that is not "
			      "an encrypted symlink");
	if ((hard || !LINUX_S_ISREG(rec->mode)) && e->tar_size)
		return damage(r, "data on an entry that has none");
	if (((rec->rflags & E2CB_IF_DIRENT_HASH) &&
	     !(rec->rflags & E2CB_IF_NAME)) ||
	    ((rec->rflags & E2CB_IF_INLINE) && !LINUX_S_ISREG(rec->mode)))
		return damage(r, "the inode record's flags contradict each "
			      "other");
	return 0;
}

static void hash_u64(EVP_MD_CTX *c, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = v >> (8 * i);
	EVP_DigestUpdate(c, b, 8);
}

/* with its length, so that no two sequences of fields hash alike */
static void hash_bytes(EVP_MD_CTX *c, const void *p, size_t len)
{
	hash_u64(c, p ? len : ~0ULL);
	if (p)
		EVP_DigestUpdate(c, p, len);
}

static void hash_str(EVP_MD_CTX *c, const char *s)
{
	hash_bytes(c, s, s ? strlen(s) : 0);
}

/*
 * Everything of the tar header that any check or write may rest on:
 * its fields, every record, the sparse map.  A caller compares it with
 * the digest of the same entry in an earlier pass before acting on it.
 */
static int digest_entry(struct e2cb_reader *r)
{
	EVP_MD_CTX *c = r->entry;
	struct archive_entry *ae = r->ae;
	uint8_t md[EVP_MAX_MD_SIZE];
	const char *n;
	const void *v;
	size_t s;
	la_int64_t off, len;
	unsigned int mdlen;

	if (!EVP_DigestInit_ex(c, EVP_sha256(), NULL))
		return damage(r, "out of memory");
	hash_str(c, archive_entry_pathname(ae));
	hash_str(c, archive_entry_hardlink(ae));
	hash_str(c, archive_entry_symlink(ae));
	hash_u64(c, archive_entry_mode(ae));
	hash_u64(c, archive_entry_size(ae));
	hash_u64(c, archive_entry_uid(ae));
	hash_u64(c, archive_entry_gid(ae));
	hash_u64(c, archive_entry_mtime(ae));
	hash_u64(c, archive_entry_rdevmajor(ae));
	hash_u64(c, archive_entry_rdevminor(ae));
	hash_u64(c, archive_entry_xattr_reset(ae));
	while (archive_entry_xattr_next(ae, &n, &v, &s) == ARCHIVE_OK) {
		hash_str(c, n);
		hash_bytes(c, v, s);
	}
	hash_u64(c, archive_entry_sparse_reset(ae));
	while (archive_entry_sparse_next(ae, &off, &len) == ARCHIVE_OK) {
		hash_u64(c, off);
		hash_u64(c, len);
	}
	if (!EVP_DigestFinal_ex(c, md, &mdlen))
		return damage(r, "out of memory");
	memcpy(r->digest, md, sizeof(r->digest));
	return 0;
}

int e2cb_reader_next(struct e2cb_reader *r, struct e2cb_entry **ret)
{
	struct e2cb_entry *e = &r->cur;
	const void *v;
	size_t len = 0;
	int dup = 0;

	if (drain_data(r))
		return -1;
	memset(e, 0, sizeof(*e));
	e->index = r->next_seq;
	if (next_tar_header(r, "an entry or the trailer"))
		return -1;
	if (normalize_path(r, archive_entry_pathname(r->ae)))
		return -1;
	if ((r->flags & E2CB_READ_HASH) && digest_entry(r))
		return -1;
	e->path = r->path;
	v = find_rec(r, E2CB_REC_TRAILER, &len, &dup);
	if (v) {
		if (dup || check_marker_entry(r, E2CB_REC_TRAILER))
			return damage(r, "the trailer entry is malformed");
		return read_trailer(r, v, len);
	}
	if (check_path_syntax(r, e->path) || decode_entry(r, e))
		return -1;
	e->linkname = archive_entry_hardlink(r->ae);
	if (!e->linkname)
		e->linkname = archive_entry_symlink(r->ae);
	e->tar_size = archive_entry_size(r->ae);
	if (check_consistency(r, e) || check_path_order(r, e))
		return -1;
	if (LINUX_S_ISDIR(e->rec.mode) && push_dir(r, e->path))
		return -1;
	if (!(e->rec.rflags & E2CB_IF_HARDLINK) && e->rec.links_count > 1 &&
	    !LINUX_S_ISDIR(e->rec.mode) &&
	    linked_add(r, e->rec.ino, e->path))
		return -1;
	r->next_seq++;
	r->entries++;
	if (!(e->rec.rflags & E2CB_IF_HARDLINK)) {
		r->inodes++;
		if (e->rec.iflags & EXT4_ENCRYPT_FL)
			r->encrypted++;
	}
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
			damage(r, "data beyond the entry's size");
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
		damage(r, "while reading its data: %s", stream_why(r));
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	return 0;
}

static int add_stretch(struct e2cb_reader *r, la_int64_t off,
		       la_int64_t len, uint64_t pos)
{
	struct e2cb_stretch *m;
	size_t size;

	if (!len)
		return 0;
	if (r->map_len == E2CB_MAX_STRETCHES)
		return damage(r, "more than %u data stretches",
			      E2CB_MAX_STRETCHES);
	if (off < 0 || len < 0 || (uint64_t) off > r->cur.tar_size ||
	    (uint64_t) len > r->cur.tar_size - off)
		return damage(r, "data beyond the entry's size");
	if (r->map_len == r->map_size) {
		size = r->map_size ? 2 * r->map_size : 16;
		m = realloc(r->map, size * sizeof(*m));
		if (!m)
			return damage(r, "no memory for its data's map");
		r->map = m;
		r->map_size = size;
	}
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
 * caller hands what it reads to e2cb_reader_sum_data() or, summed from
 * 0, to e2cb_reader_sum_crc(), in order, before e2cb_reader_next().
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
		damage(r, "while skipping its data: %s", stream_why(r));
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	/* what libarchive skipped is that data and the block's padding */
	skipped = r->fd_start + archive_filter_bytes(r->a, 0) - pos;
	if (skipped < total || skipped - total >= 512) {
		damage(r, "its data is not where its sparse map puts it");
		return EXT2_ET_CRYPT_BAD_BLOB;
	}
	r->data_bytes += total;
	*ret = r->map;
	*count = r->map_len;
	*fd = r->fd;
	return 0;
}

/* Data the caller of e2cb_reader_data_map() read, into the entry's sum */
void e2cb_reader_sum_data(struct e2cb_reader *r, uint64_t off,
			  const void *buf, size_t len)
{
	e2cb_sum_add(&r->sum, off, buf, len);
}

/* The same, summed already: @crc is the crc32c of the @len bytes from 0 */
void e2cb_reader_sum_crc(struct e2cb_reader *r, uint64_t off, size_t len,
			 uint32_t crc)
{
	e2cb_sum_add_crc(&r->sum, off, len, crc);
}

/*
 * When the caller of e2cb_reader_data_map() could not sum all it read
 * (its output failed, and it stopped): the sum from the start, reading
 * the data again into @buf, so that the next entry still checks it.
 */
errcode_t e2cb_reader_sum_again(struct e2cb_reader *r, uint8_t *buf,
				size_t bufsize)
{
	const struct e2cb_stretch *m;
	uint64_t done;
	size_t n;
	ssize_t got;

	e2cb_sum_init(&r->sum);
	for (m = r->map; m < r->map + r->map_len; m++) {
		for (done = 0; done < m->len; done += got) {
			n = m->len - done < bufsize ? m->len - done : bufsize;
			got = pread(r->fd, buf, n, m->pos + done);
			if (got < 0 && errno == EINTR) {
				got = 0;
				continue;
			}
			if (got <= 0) {
				damage(r, "while reading its data: %s",
				       got ? strerror(errno) :
				       "unexpected end of the archive");
				return EXT2_ET_CRYPT_BAD_BLOB;
			}
			e2cb_sum_add(&r->sum, m->off + done, buf, got);
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
	free(r->dir_len);
	free(r->dir_path);
	free(r->linked);
	free(r->prev_path);
	free(r->path);
	EVP_MD_CTX_free(r->stream);
	EVP_MD_CTX_free(r->entry);
	free(r->hash_buf);
	free(r);
}
