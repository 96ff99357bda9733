/*
 * source_archive.c --- e2cryptbak's archive source: the reader behind
 * the source ops (source.h)
 *
 * Every check is the reader's (reader.c, reader_check.c): an entry is
 * handed out only once it holds, and its data is summed as it goes,
 * also when a sink's threads read it where data_map puts it and hand
 * back their sums.  Each pass reads the one descriptor from its start,
 * hashing all it reads but the data (whose sums the hashed records
 * hold), so that a second pass can tell it read what the first one
 * checked; a sink of one pass has the archive read as it comes.
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
#include <sys/stat.h>
#include <et/com_err.h>
#include "e2cryptbak.h"
#include "source.h"

struct archive_source {
	struct e2cb_source s;		/* first */
	int fd;				/* -1: one pass, the reader's */
	struct e2cb_reader *r;
	int rflags;			/* E2CB_READ_* */
	int passes;			/* one pass: rewound already */
	const char *err;		/* a failure outside the reader */
};

#define AS(src)	((struct archive_source *) (src))

static errcode_t as_rewind(struct e2cb_source *src)
{
	struct archive_source *as = AS(src);
	errcode_t retval;

	/* one pass: the reader stands at its first entry */
	if (as->fd < 0) {
		if (!as->passes++)
			return 0;
		com_err(program_name, EXT2_ET_UNIMPLEMENTED, "while "
			"reading %s again", src->shown);
		return EXT2_ET_UNIMPLEMENTED;
	}
	e2cb_reader_close(as->r);
	as->r = NULL;
	if (lseek(as->fd, 0, SEEK_SET) < 0) {
		retval = errno;
		com_err(program_name, retval, "while rewinding %s", src->shown);
		return retval;
	}
	retval = e2cb_reader_open_fd(as->fd, as->rflags, &as->r);
	if (retval)
		com_err(program_name, 0, "%s: %s", src->shown,
			e2cb_reader_error(as->r));
	return retval;
}

static int as_run(struct e2cb_source *src, const struct e2cb_sink *k)
{
	struct archive_source *as = AS(src);
	struct e2cb_entry *e;
	int ret, status;

	while ((ret = e2cb_reader_next(as->r, &e)) == 0) {
		status = k->entry(k->priv, src, e);
		if (status)
			return status;
	}
	return ret < 0 ? E2CB_SOURCE_FAILED : 0;
}

static errcode_t as_data(struct e2cb_source *src, e2cb_data_func func,
			 void *priv)
{
	return e2cb_reader_data(AS(src)->r, func, priv);
}

static errcode_t as_data_map(struct e2cb_source *src,
			     const struct e2cb_stretch **map, size_t *count,
			     int *fd)
{
	return e2cb_reader_data_map(AS(src)->r, map, count, fd);
}

static void as_data_sum(struct e2cb_source *src, uint64_t off, size_t len,
			uint32_t crc)
{
	e2cb_reader_sum_crc(AS(src)->r, off, len, crc);
}

static const struct e2cb_header *as_header(struct e2cb_source *src)
{
	return e2cb_reader_header(AS(src)->r);
}

static const struct e2cb_trailer *as_trailer(struct e2cb_source *src)
{
	return e2cb_reader_trailer(AS(src)->r);
}

static const uint8_t *as_entry_digest(struct e2cb_source *src)
{
	return e2cb_reader_entry_digest(AS(src)->r);
}

static errcode_t as_stream_digest(struct e2cb_source *src,
				  uint8_t out[E2CB_STREAM_DIGEST_LEN])
{
	return e2cb_reader_stream_digest(AS(src)->r, out);
}

static const char *as_error(struct e2cb_source *src)
{
	struct archive_source *as = AS(src);

	return as->err ? as->err : e2cb_reader_error(as->r);
}

static void as_close(struct e2cb_source *src)
{
	struct archive_source *as = AS(src);

	e2cb_reader_close(as->r);
	if (as->fd >= 0)
		close(as->fd);
	free(as);
}

static const struct e2cb_source_ops archive_source_ops = {
	.rewind = as_rewind,
	.run = as_run,
	.data = as_data,
	.data_map = as_data_map,
	.data_sum = as_data_sum,
	.header = as_header,
	.trailer = as_trailer,
	.entry_digest = as_entry_digest,
	.stream_digest = as_stream_digest,
	.error = as_error,
	.close = as_close,
};

/*
 * A pipe cannot be read twice: keep what @in gives (standard input, a
 * FIFO, a device) in a deleted file.
 */
static int spool(int in, const char *shown)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char tmpl[4096], buf[65536];
	errcode_t retval;
	ssize_t n;
	int fd;

	snprintf(tmpl, sizeof(tmpl), "%s/e2cryptbak-XXXXXX", dir);
	fd = mkstemp(tmpl);
	if (fd < 0) {
		com_err(program_name, errno, "while creating a file in %s "
			"to hold %s", dir, shown);
		return -1;
	}
	unlink(tmpl);
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		retval = n < 0 ? errno : e2cb_write_all(fd, buf, n, -1);
		if (retval) {
			com_err(program_name, retval, "while copying %s to %s",
				shown, dir);
			close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * The archive, opened once: its name is not looked at again, so what
 * is renamed over it later does not matter.  What is not a regular file
 * is read once, into a spool.
 */
static int open_archive(const char *name, const char *shown)
{
	struct stat st;
	int fd = 0, sfd;

	if (strcmp(name, "-")) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			com_err(program_name, errno, "while opening %s", name);
			return -1;
		}
	}
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		com_err(program_name, S_ISDIR(st.st_mode) ? EISDIR : errno,
			"while opening %s", shown);
		goto errout;
	}
	if (fd && S_ISREG(st.st_mode))
		return fd;
	sfd = spool(fd, shown);
	if (fd)
		close(fd);
	return sfd;
errout:
	if (fd)
		close(fd);
	return -1;
}

/*
 * One pass: the reader opens @name itself and reads it as it comes, a
 * pipe unspooled; its header is there already.  Said why on failure,
 * with @name as the command was given it.
 */
static errcode_t open_one_pass(struct archive_source *as, const char *name)
{
	errcode_t retval;

	as->fd = -1;
	retval = e2cb_reader_open(name, as->rflags, &as->r);
	if (retval)
		com_err(program_name, 0, "%s: %s", name,
			e2cb_reader_error(as->r));
	return retval;
}

/*
 * The archive @name ("-": standard input) for a sink of @flags; said
 * why on failure.  EXT2_ET_CRYPT_BAD_BLOB: it is not an archive, or
 * its header is damaged.
 */
errcode_t e2cb_archive_source_open(const char *name, unsigned int flags,
				   struct e2cb_source **ret)
{
	struct archive_source *as;
	errcode_t retval;

	*ret = NULL;
	as = calloc(1, sizeof(*as));
	if (!as)
		return EXT2_ET_NO_MEMORY;
	as->s.ops = &archive_source_ops;
	as->s.shown = strcmp(name, "-") ? name : "standard input";
	as->s.archive = 1;
	/* list checks all but the data; a second pass needs the digests */
	as->rflags = flags & E2CB_SINK_NO_DATA ? 0 : E2CB_READ_DATA;
	if (!(flags & E2CB_SINK_ONE_PASS)) {
		as->rflags |= E2CB_READ_HASH;
		as->fd = open_archive(name, as->s.shown);
		if (as->fd < 0) {
			free(as);
			return EXT2_ET_FILE_NOT_FOUND;
		}
	} else {
		retval = open_one_pass(as, name);
		if (retval) {
			as_close(&as->s);
			return retval;
		}
	}
	*ret = &as->s;
	return 0;
}
