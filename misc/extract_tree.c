/*
 * extract_tree.c --- e2cryptbak extract: the objects of the plaintext tree
 *
 * One function for each kind of object a source gives: a regular file
 * (or its data on standard output), a further name of a file written
 * already, a symlink, a device node, fifo or socket, a directory; and
 * the table of the inodes written, for those further names.  Everything
 * is made relative to descriptors of directories this run opened.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "extract.h"

/* Where the first name of image or archive inode @ino went, or NULL */
const struct link *e2cb_x_link_find(struct xt *x, uint32_t ino)
{
	return e2cb_ino_map_find(&x->links, ino);
}

/*
 * @made, just written as @path, takes further names of @ino from now;
 * without the memory to note it they could not be made: a failure
 */
void e2cb_x_link_add(struct xt *x, uint32_t ino, const char *path,
		     size_t len, const struct stat *made)
{
	struct link *l;
	errcode_t retval;
	char *copy;

	copy = malloc(len + 1);
	retval = copy ? e2cb_ino_map_add(&x->links, ino, (void **) &l) :
		     EXT2_ET_NO_MEMORY;
	if (retval) {
		free(copy);
		e2cb_x_report(x, retval, "its other names cannot be linked to it");
		x->failed++;
		return;
	}
	if (len)	/* the root's path is empty, and may be NULL */
		memcpy(copy, path, len);
	copy[len] = 0;
	free(l->path);
	l->ino = ino;
	l->path = copy;
	l->len = len;
	l->dev = made->st_dev;
	l->host_ino = made->st_ino;
}

/* The table goes, with the run */
void e2cb_x_free_links(struct xt *x)
{
	struct link *l;
	size_t pos = 0;
	uint32_t ino;

	while ((l = e2cb_ino_map_next(&x->links, &pos, &ino)))
		free(l->path);
	e2cb_ino_map_free(&x->links);
}

/*
 * The directory holding @path (relative to DIR), opened one component
 * at a time without following symlinks; *last is the final component.
 */
static int open_parent(struct xt *x, char *path, const char **last)
{
	char *p = path, *slash;
	int fd = dup(x->root_fd), nfd;

	while (fd >= 0 && (slash = strchr(p, '/'))) {
		*slash = 0;
		nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			     O_CLOEXEC);
		*slash = '/';
		close(fd);
		fd = nfd;
		p = slash + 1;
	}
	*last = p;
	return fd;
}

/*
 * The source's data of @e through @w, all of it written or failed when
 * this returns: the pipe may still be writing when the feed fails.
 */
static errcode_t feed_data(struct xt *x, const struct xentry *e,
			   struct writer *w)
{
	errcode_t retval;

	retval = e2cb_x_feed(x, e, w);
	if (retval)
		w->len = 0;	/* nothing more of this file goes out */
	e2cb_xw_finish(w);
	e2cb_xw_release(w);
	return retval ? retval : w->err;
}

/*
 * A regular file: its data, then its metadata, and only then its name,
 * so that what has the name is whole.
 */
errcode_t e2cb_x_extract_file(struct xt *x, int dirfd, const char *name,
			      const struct xentry *e,
			      struct fscrypt_inode *fi)
{
	struct outfile of;
	struct writer w;
	uint64_t bytes = x->bytes;
	errcode_t retval;

	if (e2cb_x_make_room(x, dirfd, name, 0) < 0)
		return EEXIST;
	retval = e2cb_x_out_create(x, dirfd, &of);
	if (retval) {
		e2cb_x_report_dest(x, retval, "cannot create");
		return retval;
	}
	e2cb_xw_init(&w, x, of.fd, fi, e->size);
	retval = feed_data(x, e, &w);
	/* nothing is written past i_size: a hole at the end is left */
	if (!retval && (fstat(of.fd, &x->made) < 0 ||
		     ((uint64_t) x->made.st_size != e->size &&
		      ftruncate(of.fd, e->size) < 0))) {
		retval = errno;
		w.write_failed = 1;
	}
	x->made.st_size = e->size;
	if (retval) {
		if (!w.reported)
			e2cb_x_report(x, retval, w.write_failed ? "cannot write" :
				      "while writing the data");
		if (w.write_failed)
			e2cb_x_check_dest(x, retval);
		goto fail;
	}
	e2cb_x_apply_entry_meta(x, of.fd, 0, e);
	retval = e2cb_x_out_link(x, &of, name);
	if (retval) {
		e2cb_x_report_dest(x, retval, "cannot create");
		x->bytes = bytes;
		return retval;
	}
	return 0;

fail:
	e2cb_x_out_discard(x, &of);
	x->bytes = bytes;
	return retval;
}

/*
 * -O: the plaintext of a regular file goes to standard output, holes as
 * zeros.  Whatever goes wrong in the middle leaves the stream with a
 * file cut short: nothing more is written after it.
 */
errcode_t e2cb_x_stream_file(struct xt *x, const struct xentry *e,
			     struct fscrypt_inode *fi)
{
	struct writer w;
	errcode_t retval;

	e2cb_xw_init(&w, x, STDOUT_FILENO, fi, e->size);
	w.stream = 1;
	retval = feed_data(x, e, &w);
	if (!retval) {
		/* a hole at the end */
		retval = e2cb_xw_stream_out(&w, NULL, 0, e->size);
		w.write_failed = !!retval;
	}
	if (retval) {
		if (!w.reported)
			e2cb_x_report(x, retval, w.write_failed ? "cannot write "
				      "to standard output" : "while writing "
				      "the data");
		if (w.pos && !x->stop) {
			x->stop = retval;
			x->stop_cut = !w.write_failed;
		} else {
			e2cb_x_check_dest(x, retval);
		}
		if (w.write_failed && !x->stop)
			x->stop = retval;
	}
	return retval;
}

/*
 * A further name of an inode written already, found again by the path
 * of its first name, and linked only if that still names the inode.
 */
errcode_t e2cb_x_extract_link(struct xt *x, int dirfd, const struct link *l)
{
	const char *name = e2cb_x_cur_name(x), *last;
	char *path = strdup(l->path);
	errcode_t retval = 0;
	struct stat st;
	int pfd, fd = -1;

	if (!path)
		return ENOMEM;
	if (e2cb_x_make_room(x, dirfd, name, 0) < 0) {
		free(path);
		return EEXIST;
	}
	pfd = open_parent(x, path, &last);
	if (pfd >= 0)
		fd = openat(pfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		retval = errno;
		e2cb_x_report(x, retval, "cannot link to %s", l->path);
	} else if (st.st_dev != l->dev || st.st_ino != l->host_ino) {
		e2cb_x_report(x, 0, "cannot link to %s: replaced by another "
			      "file", l->path);
		retval = EEXIST;
	} else if (e2cb_x_link_fd(fd, dirfd, name) < 0) {
		retval = errno;
		e2cb_x_report_dest(x, retval, "cannot link to %s", l->path);
	}
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	free(path);
	return retval;
}

errcode_t e2cb_x_extract_symlink(struct xt *x, int dirfd,
				 const struct xentry *e,
				 struct fscrypt_inode *fi)
{
	const char *name = e2cb_x_cur_name(x);
	uint8_t *target;
	size_t len;
	errcode_t retval = 0;
	int fd;

	target = malloc(e->target_len + 1);
	if (!target)
		return ENOMEM;
	if (fi) {
		retval = fscrypt_decrypt_symlink(fi, e->target, e->target_len,
					      target, e->target_len, &len);
	} else {
		len = e->target_len;
		/* an empty target (a damaged inode) has no buffer at all */
		if (!len || memchr(e->target, 0, len))
			retval = FSCRYPT_ET_BAD_SYMLINK;
		else
			memcpy(target, e->target, len);
	}
	if (retval) {
		e2cb_x_report(x, retval, "cannot read the symlink target");
		goto out;
	}
	target[len] = 0;
	if (e2cb_x_make_room(x, dirfd, name, 0) < 0) {
		retval = EEXIST;
		goto out;
	}
	if (symlinkat((char *) target, dirfd, name) < 0) {
		retval = errno;
		e2cb_x_report_dest(x, retval, "cannot create the symlink");
		goto out;
	}
	fd = e2cb_x_open_made(x, dirfd, name, S_IFLNK, 0);
	if (fd < 0) {
		retval = EEXIST;
		goto out;
	}
	e2cb_x_apply_entry_meta(x, fd, 1, e);
	close(fd);
out:
	fscrypt_wipe(target, e->target_len + 1);
	free(target);
	return retval;
}

errcode_t e2cb_x_extract_special(struct xt *x, int dirfd,
				 const struct xentry *e)
{
	const char *name = e2cb_x_cur_name(x);
	int type = e->mode & LINUX_S_IFMT;
	mode_t mode = 0600;
	dev_t dev = 0;
	int fd;

	switch (type) {
	case LINUX_S_IFCHR:
	case LINUX_S_IFBLK:
		if (x->policy & E2CB_NO_DEVICES) {
			e2cb_x_report(x, 0, "device node not created "
				      "(--no-devices)");
			x->nodevices++;
			return 0;
		}
		if (!x->is_root) {
			x->notroot++;
			return 0;
		}
		mode |= type == LINUX_S_IFCHR ? S_IFCHR : S_IFBLK;
		dev = makedev(e->rdev_major, e->rdev_minor);
		break;
	case LINUX_S_IFIFO:
		mode |= S_IFIFO;
		break;
	case LINUX_S_IFSOCK:
		mode |= S_IFSOCK;
		break;
	default:
		e2cb_x_report(x, 0, "unknown file type 0%o; skipped", type);
		return EXT2_ET_INODE_CORRUPTED;
	}
	if (e2cb_x_make_room(x, dirfd, name, 0) < 0)
		return EEXIST;
	if (mknodat(dirfd, name, mode, dev) < 0) {
		errcode_t retval = errno;

		e2cb_x_report_dest(x, retval, "cannot create");
		return retval;
	}
	fd = e2cb_x_open_made(x, dirfd, name, mode & S_IFMT, dev);
	if (fd < 0)
		return EEXIST;
	e2cb_x_apply_entry_meta(x, fd, 1, e);
	close(fd);
	return 0;
}

/* The directory for @e: made (mode 0700 until its end), or entered */
int e2cb_x_extract_dir(struct xt *x, int dirfd, int *apply)
{
	const char *name = e2cb_x_cur_name(x);
	struct stat st;
	int room, fd;

	*apply = 1;
	room = e2cb_x_make_room(x, dirfd, name, 1);
	if (room < 0)
		return -1;
	if (room == 0 && mkdirat(dirfd, name, 0700) < 0) {
		int err = errno;

		e2cb_x_report_dest(x, err, "cannot create the directory");
		return -1;
	}
	/* an existing directory is merged into, its own metadata kept */
	if (room == 1 && !x->o->overwrite)
		*apply = 0;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0 || (room == 0 && fstat(fd, &st) < 0)) {
		e2cb_x_report(x, errno, "cannot open the directory");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/*
	 * One made here must be ours still.  An existing one, or one the
	 * archive lists again, is merged into, whoever made it: it is
	 * reached without following a symlink, and only by descriptors.
	 */
	if (room == 0 && !e2cb_x_is_ours(x, dirfd, &st, S_IFDIR)) {
		close(fd);
		return -1;
	}
	return fd;
}
