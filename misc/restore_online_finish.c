/*
 * restore_online_finish.c --- restore --online: what is set once an
 * inode is whole, and the undoing of a failed restore
 *
 * Extended attributes, times and inode flags are set through a
 * descriptor of the inode, opened by the name readdir(3) shows for the
 * inode number FS_IOC_CREATE_RAW returned (plaintext with the key, a
 * no-key name without) and checked by st_ino: never by a path another
 * process could swap.  Directories are finished after what they hold,
 * so that their times stay; inode flags are set last of all, since an
 * immutable or append-only inode takes no more links.
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
#include <dirent.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <et/com_err.h>
#include "restore_online.h"

errcode_t e2cb_ro_meta_from(struct ro_meta *m, const struct ro *ro,
			    const struct e2cb_entry *e, uint64_t ino)
{
	memset(m, 0, sizeof(*m));
	m->ino = ino;
	e2cb_ro_owner(ro, e, &m->mode, &m->uid, &m->gid);
	/* security.capability goes with another owner, as on chown(2) */
	m->drop_caps = e2cb_policy_drops_caps(ro->rs.opts->policy,
					      m->uid != e->rec.uid ||
					      m->gid != e->rec.gid);
	m->iflags = e->rec.iflags;
	m->projid = e->rec.projid;
	m->has_projid = !!(e->rec.rflags & E2CB_IF_PROJID);
	m->atime = e->rec.atime;
	m->mtime = e->rec.mtime;
	m->path = strdup(e->path);
	if (!m->path)
		return EXT2_ET_NO_MEMORY;
	if (e->xattrs && e->xattrs_len) {
		m->xattrs = malloc(e->xattrs_len);
		if (!m->xattrs)
			return EXT2_ET_NO_MEMORY;
		memcpy(m->xattrs, e->xattrs, e->xattrs_len);
		m->xattrs_len = e->xattrs_len;
	}
	return 0;
}

void e2cb_ro_meta_free(struct ro_meta *m)
{
	free(m->xattrs);
	free(m->path);
	m->xattrs = NULL;
	m->path = NULL;
}

struct xattr_set {
	const char *proc;
	int caps;			/* this round: security.capability */
	errcode_t retval;
	const struct ro_meta *m;
};

static int set_one_xattr(int index, const char *name, size_t name_len,
			 const void *value, size_t value_len, void *priv)
{
	struct xattr_set *x = priv;
	char full[300];
	void *acl;

	if (x->caps != e2cb_xattr_is_capability(index, name, name_len))
		return 0;
	x->retval = e2cb_xattr_to_vfs(index, name, name_len, &value,
				      &value_len, full, sizeof(full), &acl);
	if (x->retval == EXT2_ET_EA_BAD_NAME_LEN)
		e2cb_report_path(x->m->path, strlen(x->m->path), 0,
				 "an extended attribute of name index %d "
				 "cannot be set", index);
	if (x->retval)
		return XATTR_ABORT;
	/* /proc/self/fd/N names the inode itself, even a symlink's */
	if (setxattr(x->proc, full, value, value_len, 0) < 0) {
		x->retval = errno;
		e2cb_report_path(x->m->path, strlen(x->m->path), errno,
				 "while setting the extended attribute %s",
				 full);
	}
	free(acl);
	return x->retval ? XATTR_ABORT : 0;
}

/* Inode flags that cannot be set here are said, each entry */
static void note_flags(struct ro *ro, const struct ro_meta *m)
{
	uint32_t rest = m->iflags & ~(RO_SETTABLE_FL | RO_IMPLIED_FL);

	if (!rest)
		return;
	e2cb_report_path(m->path, strlen(m->path), 0, "inode flags 0x%x%s "
			 "cannot be set online; not set", rest,
			 (rest & EXT4_VERITY_FL) ? " (fs-verity)" : "");
	ro->unset_flags++;
}

/* Keep what the flags need for the end: a descriptor of the inode */
static errcode_t defer_flags(struct ro *ro, int fd, const struct ro_meta *m)
{
	struct ro_flags *f;

	if (!(m->iflags & RO_SETTABLE_FL) && (!m->has_projid || !m->projid))
		return 0;
	if (e2cb_grow((void **) &ro->flags, &ro->flags_size, ro->nflags,
		       sizeof(*ro->flags)))
		return EXT2_ET_NO_MEMORY;
	f = &ro->flags[ro->nflags];
	memset(f, 0, sizeof(*f));
	f->pathfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->pathfd < 0)
		return errno;
	f->ino = m->ino;
	f->iflags = m->iflags & RO_SETTABLE_FL;
	f->projid = m->projid;
	f->has_projid = m->has_projid && m->projid;
	f->mode = m->mode;
	f->path = strdup(m->path);
	ro->nflags++;
	return f->path ? 0 : EXT2_ET_NO_MEMORY;
}

/*
 * Owner and mode (of PATH that existed: the rest got theirs at
 * creation), xattrs, times: in this order, since chown clears set-id
 * bits and security.capability, and every change touches the times.
 */
static errcode_t apply_meta(struct ro *ro, int fd, const struct ro_meta *m)
{
	struct xattr_set x;
	struct timespec ts[2];
	char proc[40];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (m->set_owner) {
		if (fchownat(fd, "", m->uid, m->gid, AT_EMPTY_PATH) < 0 ||
		    chmod(proc, m->mode & 07777) < 0)
			return errno;
	}
	memset(&x, 0, sizeof(x));
	x.proc = proc;
	x.m = m;
	if (m->xattrs) {
		e2cb_xattr_rec_iterate(m->xattrs, m->xattrs_len,
				       set_one_xattr, &x);
		x.caps = 1;
		if (!x.retval && !m->drop_caps)
			e2cb_xattr_rec_iterate(m->xattrs, m->xattrs_len,
					       set_one_xattr, &x);
		if (x.retval)
			return x.retval;
	}
	ts[0].tv_sec = m->atime.sec;
	ts[0].tv_nsec = m->atime.nsec;
	ts[1].tv_sec = m->mtime.sec;
	ts[1].tv_nsec = m->mtime.nsec;
	if (utimensat(fd, "", ts, AT_EMPTY_PATH) < 0)
		return errno;
	note_flags(ro, m);
	return defer_flags(ro, fd, m);
}

static int cmp_meta_ino(const void *a, const void *b)
{
	uint64_t x = ((const struct ro_meta *) a)->ino;
	uint64_t y = ((const struct ro_meta *) b)->ino;

	return x < y ? -1 : x > y;
}

/* What @d holds, each by the name readdir(3) shows for its inode */
static errcode_t finish_kids(struct ro *ro, struct ro_dir *d)
{
	struct ro_meta key, *m;
	struct dirent *de;
	struct stat st;
	errcode_t retval = 0;
	size_t i;
	int fd;
	DIR *dir;

	if (!d->nkids)
		return 0;
	qsort(d->kids, d->nkids, sizeof(*d->kids), cmp_meta_ino);
	dir = e2cb_dir_stream(d->fd);
	if (!dir)
		return errno;
	while (!retval && (errno = 0, de = readdir(dir))) {
		key.ino = de->d_ino;
		m = bsearch(&key, d->kids, d->nkids, sizeof(*d->kids),
			    cmp_meta_ino);
		if (!m || m->finished || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		fd = openat(d->fd, de->d_name, O_PATH | O_NOFOLLOW |
			    O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			retval = errno;
		else if (st.st_ino != m->ino)
			retval = ESTALE;
		else
			retval = apply_meta(ro, fd, m);
		if (fd >= 0)
			close(fd);
		m->finished = 1;	/* one name is enough */
		if (retval)
			e2cb_report_path(m->path, strlen(m->path), retval,
					 "while setting its attributes and "
					 "times");
	}
	if (!retval && errno)
		retval = errno;
	closedir(dir);
	for (i = 0; !retval && i < d->nkids; i++)
		if (!d->kids[i].finished) {
			e2cb_report_path(d->kids[i].path,
					 strlen(d->kids[i].path), 0,
					 "gone from its directory");
			retval = ENOENT;
		}
	return retval;
}

/* Close the directory @d: its entries finished, then itself */
errcode_t e2cb_ro_close_dir(struct ro *ro, struct ro_dir *d)
{
	errcode_t retval;
	size_t i;

	retval = finish_kids(ro, d);
	if (!retval)
		retval = apply_meta(ro, d->fd, &d->meta);
	for (i = 0; i < d->nkids; i++)
		e2cb_ro_meta_free(&d->kids[i]);
	d->nkids = 0;
	e2cb_ro_meta_free(&d->meta);
	close(d->fd);
	d->fd = -1;
	return retval;
}

/* One inode's flags and project, through a descriptor opened for it */
static errcode_t set_one_flags(struct ro *ro, struct ro_flags *f)
{
	struct fsxattr fsx;
	char proc[40];
	int fd, fl;
	errcode_t retval = 0;

	if (!LINUX_S_ISDIR(f->mode) && !LINUX_S_ISREG(f->mode)) {
		e2cb_report_path(f->path, strlen(f->path), 0, "inode flags "
				 "0x%x need the file open, which its type "
				 "does not allow; not set", f->iflags);
		ro->unset_flags++;
		return 0;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->pathfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOKEY) {
		e2cb_report_path(f->path, strlen(f->path), 0, "inode flags "
				 "0x%x%s need the file open, which needs its "
				 "key; not set", f->iflags,
				 f->has_projid ? " and project" : "");
		ro->unset_flags++;
		return 0;
	}
	if (fd < 0)
		return errno;
	if (f->iflags) {
		if (ioctl(fd, FS_IOC_GETFLAGS, &fl) < 0)
			retval = errno;
		fl = (fl & ~RO_SETTABLE_FL) | f->iflags;
		if (!retval && ioctl(fd, FS_IOC_SETFLAGS, &fl) < 0)
			retval = errno;
	}
	if (!retval && f->has_projid) {
		if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0)
			retval = errno;
		fsx.fsx_projid = f->projid;
		if (!retval && ioctl(fd, FS_IOC_FSSETXATTR, &fsx) < 0)
			retval = errno;
	}
	close(fd);
	if (retval)
		e2cb_report_path(f->path, strlen(f->path), retval,
				 "while setting its inode flags");
	return retval;
}

/* Inode flags, last: an immutable inode takes no more links */
errcode_t e2cb_ro_set_flags(struct ro *ro)
{
	errcode_t retval = 0;
	size_t i;

	for (i = 0; !retval && i < ro->nflags; i++)
		retval = set_one_flags(ro, &ro->flags[i]);
	return retval;
}

/* Immutable or append-only, which we may have set: cleared to remove */
static void clear_flags(struct ro *ro)
{
	char proc[40];
	size_t i;
	int fd, fl;

	for (i = 0; i < ro->nflags; i++) {
		if (!(ro->flags[i].iflags & (EXT2_IMMUTABLE_FL |
					     EXT2_APPEND_FL)))
			continue;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d",
			 ro->flags[i].pathfd);
		fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!ioctl(fd, FS_IOC_GETFLAGS, &fl)) {
			fl &= ~(EXT2_IMMUTABLE_FL | EXT2_APPEND_FL);
			ioctl(fd, FS_IOC_SETFLAGS, &fl);
		}
		close(fd);
	}
}

struct undo_count {
	unsigned long removed, left;
};

/* A name of @dfd, as readdir(3) showed it, and its inode */
struct undo_name {
	char name[NAME_MAX + 1];
	uint64_t ino;
};

static void undo_dir(struct ro *ro, int dfd, struct undo_count *c,
		     unsigned int depth);

/* Remove @u from @dfd if it is still the inode we made */
static void undo_one(struct ro *ro, int dfd, const struct undo_name *u,
		     struct undo_count *c, unsigned int depth)
{
	struct stat st;
	int sub;

	if (fstatat(dfd, u->name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_ino != u->ino) {
		c->left++;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		sub = openat(dfd, u->name, O_RDONLY | O_DIRECTORY |
			     O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || fstat(sub, &st) < 0 || st.st_ino != u->ino) {
			if (sub >= 0)
				close(sub);
			c->left++;
			return;
		}
		undo_dir(ro, sub, c, depth + 1);
		close(sub);
	}
	if (unlinkat(dfd, u->name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0))
		c->left++;
	else
		c->removed++;
}

/* Everything below @dfd that we made, depth first */
static void undo_dir(struct ro *ro, int dfd, struct undo_count *c,
		     unsigned int depth)
{
	struct undo_name *names = NULL;
	size_t n = 0, size = 0, i;
	struct dirent *de;
	DIR *d;

	if (depth > E2CB_MAX_DEPTH || !(d = e2cb_dir_stream(dfd))) {
		c->left++;
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !e2cb_ino_map_find(&ro->made, de->d_ino))
			continue;
		if (e2cb_grow((void **) &names, &size, n, sizeof(*names))) {
			c->left++;
			break;
		}
		snprintf(names[n].name, sizeof(names[n].name), "%s",
			 de->d_name);
		names[n++].ino = de->d_ino;
	}
	closedir(d);
	for (i = 0; i < n; i++)
		undo_one(ro, dfd, &names[i], c, depth);
	free(names);
}

/*
 * Take back everything this restore made, by the names readdir(3)
 * shows and checked by st_ino (no key needed), PATH too if we made it.
 */
void e2cb_ro_undo(struct ro *ro)
{
	struct undo_count c = { 0, 0 };
	struct stat st;

	clear_flags(ro);
	if (ro->top_fd >= 0)
		undo_dir(ro, ro->top_fd, &c, 0);
	if (ro->top_made) {
		if (fstatat(ro->parent_fd, ro->leaf, &st,
			    AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == ro->top_ino &&
		    !unlinkat(ro->parent_fd, ro->leaf, AT_REMOVEDIR))
			c.removed++;
		else
			c.left++;
	}
	if (c.left)
		com_err(program_name, 0, "%s: removed %lu of the entries this "
			"restore made; %lu could not be removed", ro->target,
			c.removed, c.left);
	else
		com_err(program_name, 0, "%s: removed the %lu entries this "
			"restore made; nothing of it is left", ro->target,
			c.removed);
}
