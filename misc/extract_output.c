/*
 * extract_output.c --- e2cryptbak extract: keeping the output safe
 *
 * Making room for a name, checking that what a name opens is what this
 * run made, writing regular files under no name (or a temporary one)
 * until they are whole, and removing what is unfinished when a fatal
 * signal comes.  Apart so that every object the tree writer makes goes
 * through the same few checks, and what the signal handler reads stays
 * with it.
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
#include "extract.h"

/*
 * Make room for @name in @dirfd.  Returns 0 when free, 1 when it is a
 * directory and a directory is wanted (it is entered), -1 when the
 * existing entry stays (reported).
 */
int e2cb_x_make_room(struct xt *x, int dirfd, const char *name, int want_dir)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		e2cb_x_report(x, errno, "cannot look at the existing entry");
		return -1;
	}
	if (want_dir && S_ISDIR(st.st_mode))
		return 1;
	if (!x->o->overwrite) {
		e2cb_x_report(x, 0, "exists; not overwritten "
			      "(use --overwrite)");
		return -1;
	}
	if (unlinkat(dirfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0)) {
		int err = errno;

		e2cb_x_report_dest(x, err, "cannot replace the existing %s",
				   S_ISDIR(st.st_mode) ? "directory" : "entry");
		return -1;
	}
	return 0;
}

/* Others than us may add, remove or rename names in @dirfd */
static int others_may_write(struct xt *x, int dirfd)
{
	struct stat st;

	return fstat(dirfd, &st) < 0 || st.st_uid != x->euid ||
	       (st.st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * Whether @st, just opened by a name in @dirfd, is what we made or may
 * enter: of @type (S_IFMT bits) and, where others may write in @dirfd
 * and so could have swapped the name, ours.  Else it is reported.
 */
int e2cb_x_is_ours(struct xt *x, int dirfd, const struct stat *st,
		   mode_t type)
{
	if ((st->st_mode & S_IFMT) != type) {
		e2cb_x_report(x, 0, "replaced by a %s while being extracted; "
			      "left alone", S_ISLNK(st->st_mode) ? "symlink" :
			      S_ISDIR(st->st_mode) ? "directory" : "file of "
			      "another type");
		return 0;
	}
	if (st->st_uid != x->euid && others_may_write(x, dirfd)) {
		e2cb_x_report(x, 0, "owned by uid %u in a directory others "
			      "can write (replaced while being extracted?); "
			      "left alone", (unsigned int) st->st_uid);
		return 0;
	}
	return 1;
}

/*
 * The symlink, fifo, socket or device node just made as @name in
 * @dirfd, held from now on by an O_PATH descriptor (none of them can be
 * opened for real) that nobody can swap, as they could the name.
 * x->made describes it.  -1 when it is not the object made (reported).
 */
int e2cb_x_open_made(struct xt *x, int dirfd, const char *name,
		     mode_t type, dev_t rdev)
{
	int fd;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &x->made) < 0) {
		e2cb_x_report(x, errno, "cannot open what was made");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!e2cb_x_is_ours(x, dirfd, &x->made, type) ||
	    ((type == S_IFCHR || type == S_IFBLK) &&
	     x->made.st_rdev != rdev)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * @fd's inode takes @name in @dirfd: through /proc, which any user may,
 * or without it by the descriptor, which only root may.
 */
int e2cb_x_link_fd(int fd, int dirfd, const char *name)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno != ENOENT)
		return -1;
	return linkat(fd, "", dirfd, name, AT_EMPTY_PATH);
}

static struct e2cb_saved_signals saved_signals;
static struct xt *volatile sig_x;

/* What the signal handler reads changes with the signals held off */
static void block_signals(sigset_t *old)
{
	sigset_t set;

	e2cb_end_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void unblock_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/*
 * A fatal signal removes what is not finished -- the file being written
 * when it has a temporary name (an O_TMPFILE one goes with us) and the
 * staged names -- then kills us as it would have, for the shell to see
 * 128+N.  What was complete stays.
 */
static void cleanup_and_die(int sig)
{
	struct xt *x = sig_x;
	size_t i;

	if (x) {
		if (x->tmp_name[0])
			unlinkat(x->tmp_dirfd, x->tmp_name, 0);
		for (i = 0; i < x->nstaged; i++)
			unlinkat(x->root_fd, x->staged[i], 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Signals that were ignored (nohup) stay ignored. */
void e2cb_x_guard_output(struct xt *x)
{
	sig_x = x;
	e2cb_catch_signals(&saved_signals, cleanup_and_die, 0);
}

void e2cb_x_unguard_output(void)
{
	if (!sig_x)
		return;
	e2cb_release_signals(&saved_signals);
	sig_x = NULL;
}

/*
 * A full or failing destination fails every entry after it alike: the
 * first such error stops the extraction, instead of one message per
 * entry, and the exit status says so.
 */
void e2cb_x_check_dest(struct xt *x, errcode_t retval)
{
	if (!x->stop && (retval == ENOSPC || retval == EDQUOT || retval == EROFS ||
			 retval == EIO))
		x->stop = retval;
}

/* Nothing more is written, nor listed */
int e2cb_x_stopped(struct xt *x)
{
	return x->stop || (x->o->list_only && ferror(stdout));
}

errcode_t e2cb_x_out_create(struct xt *x, int dirfd, struct outfile *of)
{
	errcode_t retval = 0;
	sigset_t old;

	of->dirfd = dirfd;
	of->anon = 0;
	if (x->anon_files) {
		of->fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
				0600);
		if (of->fd >= 0) {
			of->anon = 1;
			return 0;
		}
		/* not on this filesystem, or (EISDIR) not in this kernel */
		if (errno != EOPNOTSUPP && errno != EISDIR &&
		    errno != EINVAL)
			return errno;
	}
	block_signals(&old);
	snprintf(x->tmp_name, sizeof(x->tmp_name), ".e2cryptbak-tmp.%ld.%u",
		 (long) getpid(), ++x->tmp_seq);
	x->tmp_dirfd = dirfd;
	of->fd = openat(dirfd, x->tmp_name, O_WRONLY | O_CREAT | O_EXCL |
			O_NOFOLLOW | O_CLOEXEC, 0600);
	if (of->fd < 0) {
		retval = errno;
		x->tmp_name[0] = 0;
	}
	unblock_signals(&old);
	return retval;
}

/* The whole file takes @name in its directory (free: e2cb_x_make_room saw) */
errcode_t e2cb_x_out_link(struct xt *x, struct outfile *of, const char *name)
{
	errcode_t retval = 0;
	sigset_t old;

	block_signals(&old);
	if (of->anon) {
		if (e2cb_x_link_fd(of->fd, of->dirfd, name) < 0)
			retval = errno;
		if (close(of->fd) < 0 && !retval) {
			retval = errno;
			unlinkat(of->dirfd, name, 0);
		}
	} else {
		if (close(of->fd) < 0)
			retval = errno;
		if (!retval && renameat(of->dirfd, x->tmp_name, of->dirfd,
				     name) < 0)
			retval = errno;
		if (retval)
			unlinkat(of->dirfd, x->tmp_name, 0);
		x->tmp_name[0] = 0;
	}
	of->fd = -1;
	unblock_signals(&old);
	return retval;
}

void e2cb_x_out_discard(struct xt *x, struct outfile *of)
{
	sigset_t old;

	block_signals(&old);
	close(of->fd);
	if (!of->anon && x->tmp_name[0]) {
		unlinkat(of->dirfd, x->tmp_name, 0);
		x->tmp_name[0] = 0;
	}
	of->fd = -1;
	unblock_signals(&old);
}

/*
 * An archive carries the data of a hard-linked file with its first name
 * only.  When that name lies outside the PATHs asked for, a later one
 * may lie inside: the file is written under a temporary name in DIR for
 * the later names to be linked to, and the name removed at the end.
 */
void e2cb_x_stage_file(struct xt *x, const struct xentry *e)
{
	struct fscrypt_inode *fi = NULL;
	char name[64], **p;
	uint64_t bytes;
	sigset_t old;

	if (x->fs || x->o->list_only || x->o->to_stdout ||
	    !e2cb_x_is_type(e, LINUX_S_IFREG) ||
	    e->links < 2 || e->hardlink || e2cb_x_link_find(x, e->ino))
		return;
	if (e->ctx && e2cb_x_open_inode(x, e, &fi))
		return;
	snprintf(name, sizeof(name), ".e2cryptbak-staged-%u.%ld", e->ino,
		 (long) getpid());
	/* listed before it exists, for a signal to find it */
	block_signals(&old);
	p = realloc(x->staged, (x->nstaged + 1) * sizeof(*p));
	if (p) {
		x->staged = p;
		p[x->nstaged] = strdup(name);
		if (p[x->nstaged])
			x->nstaged++;
		else
			p = NULL;
	}
	unblock_signals(&old);
	if (!p)
		goto out;
	bytes = x->bytes;
	if (!e2cb_x_extract_file(x, x->root_fd, name, e, fi)) {
		e2cb_x_link_add(x, e->ino, name, strlen(name), &x->made);
	} else {
		block_signals(&old);
		free(x->staged[--x->nstaged]);
		unblock_signals(&old);
	}
	x->bytes = bytes;
out:
	fscrypt_inode_close(fi);
}

void e2cb_x_unstage(struct xt *x)
{
	sigset_t old;
	size_t i;

	block_signals(&old);
	for (i = 0; i < x->nstaged; i++) {
		if (unlinkat(x->root_fd, x->staged[i], 0) < 0)
			com_err(program_name, errno, "while removing %s",
				x->staged[i]);
		free(x->staged[i]);
	}
	free(x->staged);
	x->staged = NULL;
	x->nstaged = 0;
	unblock_signals(&old);
}
