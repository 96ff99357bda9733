/*
 * outfile.c --- e2cryptbak: where the archive's bytes go
 *
 * An archive goes to a temporary file beside its destination and takes
 * the final name only when whole; standard output, a device or a FIFO
 * is written where it is.  The bytes are gathered into blocks, which a
 * thread of their own writes while the archive is being made.
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
#include <signal.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "e2cryptbak.h"

#define OUTBLOCK_SIZE	(256 * 1024)
#define OUTBLOCK_BUFS	8
#define WRITEBACK_BYTES	(32ULL << 20)

struct e2cb_outfile {
	const char *output;		/* as given */
	const char *dest;		/* for messages */
	char *tmp_name;			/* renamed to output when whole */
	int fd, is_file;
	int close_fd;			/* ours to close */
	struct e2cb_pipe *pipe;		/* to the output thread */
	uint8_t *buf;			/* the block being filled */
	size_t len;
	int discard;			/* the archive failed: write no more */
	uint64_t bytes, synced;
};

/*
 * On the output thread: write a block of the archive.  A file's dirty
 * pages are handed to writeback as they come, so that the page cache
 * does not fill and the final fsync() has little left to do.
 */
static errcode_t emit_output(void *priv, uint8_t *buf, size_t len,
			     uint64_t off EXT2FS_ATTR((unused)))
{
	struct e2cb_outfile *o = priv;
	errcode_t retval;

	retval = e2cb_write_all(o->fd, buf, len, -1);
	if (retval)
		return retval;
	o->bytes += len;
	if (o->is_file && o->bytes - o->synced >= WRITEBACK_BYTES) {
		sync_file_range(o->fd, o->synced, o->bytes - o->synced,
				SYNC_FILE_RANGE_WRITE);
		o->synced = o->bytes;
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
static void die_of_closed_pipe(errcode_t retval)
{
	struct sigaction sa;

	if (retval == EPIPE && !sigaction(SIGPIPE, NULL, &sa) &&
	    sa.sa_handler == SIG_DFL)
		raise(SIGPIPE);
}

/* Queue the block being filled for the output thread */
static errcode_t submit_output(struct e2cb_outfile *o)
{
	errcode_t retval;

	retval = e2cb_pipe_submit(o->pipe, &output_job, o, o->len, 0);
	o->buf = NULL;
	o->len = 0;
	die_of_closed_pipe(retval);
	return retval;
}

/*
 * Gather @buf into blocks for the output thread.  A failed write is
 * seen at the next block, or by e2cb_outfile_drain().
 */
static errcode_t outfile_write(struct e2cb_outfile *o, const void *buf,
			       size_t len)
{
	size_t done, n;
	errcode_t retval;

	if (o->discard)
		return 0;
	for (done = 0; done < len; done += n) {
		if (!o->buf)
			o->buf = e2cb_pipe_buffer(o->pipe);
		n = OUTBLOCK_SIZE - o->len;
		if (n > len - done)
			n = len - done;
		memcpy(o->buf + o->len, (const char *) buf + done, n);
		o->len += n;
		if (o->len < OUTBLOCK_SIZE)
			continue;
		retval = submit_output(o);
		if (retval)
			return retval;
	}
	return 0;
}

/* The last, partial block */
static errcode_t outfile_flush(struct e2cb_outfile *o)
{
	if (!o->len || o->discard)
		return 0;
	return submit_output(o);
}

/*
 * libarchive's write callback.  libarchive does no blocking of its own
 * (one copy less): we gather the bytes into blocks, which the output
 * thread writes while the source goes on reading.
 */
static la_ssize_t write_output(struct archive *a, void *priv,
			       const void *buf, size_t len)
{
	errcode_t retval;

	retval = outfile_write(priv, buf, len);
	if (retval) {
		archive_set_error(a, retval, "Write error");
		return -1;
	}
	return len;
}

/* libarchive's close callback: the last, partial block */
static int close_output(struct archive *a, void *priv)
{
	errcode_t retval;

	retval = outfile_flush(priv);
	if (retval) {
		archive_set_error(a, retval, "Write error");
		return ARCHIVE_FATAL;
	}
	return ARCHIVE_OK;
}

/* Open @a, its format and filters set, to write into @o */
int e2cb_outfile_open_archive(struct e2cb_outfile *o, struct archive *a)
{
	/*
	 * We make the blocks.  No padding after the last one, even on
	 * standard output: zeros after a zstd or xz stream are not a valid
	 * frame, and the same bytes should come out whatever the
	 * destination.
	 */
	archive_write_set_bytes_per_block(a, 0);
	archive_write_set_bytes_in_last_block(a, 1);
	return archive_write_open2(a, o, NULL, write_output, close_output,
				   NULL) != ARCHIVE_OK;
}

/* What is still written of a failed archive goes nowhere */
void e2cb_outfile_discard(struct e2cb_outfile *o)
{
	o->discard = 1;
}

/* Wait for the output thread to write what it was given */
errcode_t e2cb_outfile_drain(struct e2cb_outfile *o)
{
	errcode_t retval;

	retval = e2cb_pipe_drain(o->pipe);
	die_of_closed_pipe(retval);
	return retval;
}

const char *e2cb_outfile_name(const struct e2cb_outfile *o)
{
	return o->dest;
}

int e2cb_outfile_fd(const struct e2cb_outfile *o)
{
	return o->fd;
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

static errcode_t outfile_new(const char *output, const char *dest,
			     struct e2cb_outfile **ret)
{
	struct e2cb_outfile *o;
	errcode_t retval;

	o = calloc(1, sizeof(*o));
	if (!o)
		return EXT2_ET_NO_MEMORY;
	o->output = output;
	o->dest = dest;
	o->fd = -1;
	retval = e2cb_pipe_new(OUTBLOCK_SIZE, OUTBLOCK_BUFS, 1, &o->pipe);
	if (retval) {
		free(o);
		return retval;
	}
	*ret = o;
	return 0;
}

static void outfile_set_fd(struct e2cb_outfile *o, int fd, int close_fd)
{
	struct stat st;

	o->fd = fd;
	o->close_fd = close_fd;
	o->is_file = !fstat(fd, &st) && S_ISREG(st.st_mode);
}

static void outfile_free(struct e2cb_outfile *o)
{
	e2cb_pipe_free(o->pipe);
	free(o->tmp_name);
	free(o);
}

/*
 * Write to @fd, which stays open, and is synced if it is a file;
 * @dest names it in messages.
 */
errcode_t e2cb_outfile_open_fd(int fd, const char *dest,
			       struct e2cb_outfile **ret)
{
	errcode_t retval;

	retval = outfile_new(dest, dest, ret);
	if (!retval)
		outfile_set_fd(*ret, fd, 0);
	return retval;
}

/* A temporary file beside @o->output, removed if we are killed */
static errcode_t open_tmp(struct e2cb_outfile *o)
{
	int fd, err;

	if (asprintf(&o->tmp_name, "%s.tmpXXXXXX", o->output) < 0) {
		o->tmp_name = NULL;
		return EXT2_ET_NO_MEMORY;
	}
	fd = mkstemp(o->tmp_name);
	if (fd < 0) {
		err = errno;
		com_err(program_name, err, "while creating %s", o->output);
		return err;
	}
	fchmod(fd, 0600);
	guard_tmp(o->tmp_name);
	outfile_set_fd(o, fd, 1);
	return 0;
}

/*
 * Write the archive to @output, "-" for standard output.  What fails
 * is said here.
 */
errcode_t e2cb_outfile_open(const char *output, struct e2cb_outfile **ret)
{
	struct e2cb_outfile *o;
	struct stat st;
	errcode_t retval;
	int fd;

	if (!strcmp(output, "-")) {
		if (isatty(1)) {
			com_err(program_name, 0, "refusing to write an archive "
				"to a terminal; use -o FILE or a pipe");
			return EXT2_ET_BAD_DEVICE_NAME;
		}
		return e2cb_outfile_open_fd(1, "standard output", ret);
	}
	retval = outfile_new(output, output, &o);
	if (retval)
		return retval;
	/* a device or a FIFO (/dev/null, say) is written where it is: a
	 * rename would put a file in its place */
	if (!stat(output, &st) && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		fd = open(output, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			retval = errno;
			com_err(program_name, retval, "while opening %s",
				output);
		} else {
			outfile_set_fd(o, fd, 1);
		}
	} else {
		retval = open_tmp(o);
	}
	if (retval) {
		outfile_free(o);
		return retval;
	}
	*ret = o;
	return 0;
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

/* Standard output, a device or a FIFO: a file is synced, a pipe needs not */
static int finish_in_place(struct e2cb_outfile *o, int ok)
{
	struct stat st;

	if (ok && !fstat(o->fd, &st) && S_ISREG(st.st_mode) &&
	    fsync(o->fd) < 0) {
		com_err(program_name, errno, "while writing %s", o->dest);
		ok = 0;
	}
	if (o->close_fd && close(o->fd) < 0 && ok) {
		com_err(program_name, errno, "while writing %s", o->dest);
		ok = 0;
	}
	return ok;
}

/*
 * The archive is renamed only once its data is on disk: after a crash
 * the name holds the whole archive, the previous file, or nothing --
 * never an empty or partial file.
 */
static int finish_tmp(struct e2cb_outfile *o, int ok)
{
	errcode_t retval = 0;

	if (ok && fsync(o->fd) < 0)
		retval = errno;
	if (close(o->fd) < 0 && ok && !retval)
		retval = errno;
	if (retval) {
		com_err(program_name, retval, "while writing %s", o->output);
		ok = 0;
	}
	if (ok && rename(o->tmp_name, o->output) < 0) {
		com_err(program_name, errno, "while renaming %s to %s",
			o->tmp_name, o->output);
		ok = 0;
	}
	if (!ok)
		unlink(o->tmp_name);
	unguard_tmp();
	if (ok && (retval = sync_parent(o->output)) != 0) {
		/* the archive is whole and named; its name may not last */
		com_err(program_name, retval, "while syncing the directory of %s",
			o->output);
		ok = 0;
	}
	return ok;
}

/*
 * After e2cb_outfile_drain(): give the archive its name if @ok, remove
 * it if not.  Returns whether the archive is whole where it should be.
 */
int e2cb_outfile_close(struct e2cb_outfile *o, int ok)
{
	if (o->tmp_name)
		ok = finish_tmp(o, ok);
	else
		ok = finish_in_place(o, ok);
	outfile_free(o);
	return ok;
}
