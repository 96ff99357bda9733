/*
 * source_archive.c --- e2cryptbak's archive source: the reader behind
 * the source ops (source.h)
 *
 * Every check is the reader's (reader.c, reader_check.c): an entry is
 * handed out only once it holds, and its data is summed as it goes.
 * Each pass reads the one descriptor from its start, hashing all it
 * reads but the data (whose sums the hashed records hold), so that a
 * second pass can tell it read what the first one checked.
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
	int fd;
	struct e2cb_reader *r;
	const char *err;		/* a failure outside the reader */
};

#define AS(src)	((struct archive_source *) (src))

static errcode_t as_rewind(struct e2cb_source *src)
{
	struct archive_source *as = AS(src);
	errcode_t retval;

	e2cb_reader_close(as->r);
	as->r = NULL;
	if (lseek(as->fd, 0, SEEK_SET) < 0) {
		retval = errno;
		com_err(program_name, retval, "while rewinding %s", src->shown);
		return retval;
	}
	retval = e2cb_reader_open_fd(as->fd, E2CB_READ_DATA | E2CB_READ_HASH,
				     &as->r);
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
	errcode_t err;
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
		err = n < 0 ? errno : e2cb_write_all(fd, buf, n, -1);
		if (err) {
			com_err(program_name, err, "while copying %s to %s",
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

/* The archive @name ("-": standard input); said why on failure */
errcode_t e2cb_archive_source_open(const char *name,
				   struct e2cb_source **ret)
{
	struct archive_source *as;

	*ret = NULL;
	as = calloc(1, sizeof(*as));
	if (!as)
		return EXT2_ET_NO_MEMORY;
	as->s.ops = &archive_source_ops;
	as->s.shown = strcmp(name, "-") ? name : "standard input";
	as->s.archive = 1;
	as->fd = open_archive(name, as->s.shown);
	if (as->fd < 0) {
		free(as);
		return EXT2_ET_FILE_NOT_FOUND;
	}
	*ret = &as->s;
	return 0;
}
