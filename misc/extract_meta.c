/*
 * extract_meta.c --- e2cryptbak extract: owner, mode, xattrs and times
 *
 * What is applied to an object once it is complete, always through a
 * descriptor of it, never by its name.  One place for the order of the
 * steps and for what an untrusted archive may set, the same for every
 * kind of object.
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
#include <sys/xattr.h>
#include "extract.h"

/*
 * An archived attribute as setxattr(2) takes it (extract, restore
 * --online): its full name in @full (@size bytes), its value, an ACL
 * converted to the VFS's form in *@acl (to free).  Returns
 * EXT2_ET_EA_BAD_NAME_LEN for a name the VFS cannot hold (an index it
 * has no prefix for, ext4's own 8 and 9, a NUL, too long), or
 * EXT2_ET_EA_BAD_VALUE_SIZE for a malformed ACL (@full is set then).
 */
errcode_t e2cb_xattr_to_vfs(int index, const char *name, size_t name_len,
			    const void **value, size_t *value_len,
			    char *full, size_t size, void **acl)
{
	const char *prefix = e2cb_xattr_prefix(index);

	*acl = NULL;
	if (!prefix || index == 8 || index == 9 ||
	    memchr(name, 0, name_len) || strlen(prefix) + name_len >= size)
		return EXT2_ET_EA_BAD_NAME_LEN;
	snprintf(full, size, "%s%.*s", prefix, (int) name_len, name);
	if (index != 2 && index != 3)
		return 0;
	if (ext2fs_acl_to_vfs(*value, *value_len, acl, value_len))
		return EXT2_ET_EA_BAD_VALUE_SIZE;
	*value = *acl;
	return 0;
}

struct xattr_target {
	struct xt *x;
	int fd;				/* an open file or directory */
	const char *proc;		/* else the O_PATH one, by /proc */
	int caps;			/* this pass: security.capability */
	int failed;			/* an attribute could not be set */
};

/*
 * What the target cannot hold for this user (trusted.* when not root, a
 * filesystem without xattrs) is a warning; anything else -- a full disk,
 * a quota, an I/O error -- leaves the entry short of what was archived.
 */
static int xattr_unsettable(int err)
{
	return err == EPERM || err == EACCES || err == ENOTSUP ||
		err == EOPNOTSUPP;
}

static int set_one_xattr(int index, const char *name, size_t name_len,
			 const void *value, size_t value_len, void *priv)
{
	struct xattr_target *t = priv;
	char full[300];
	void *acl;
	int ret;

	if (t->caps != e2cb_xattr_is_capability(index, name, name_len))
		return 0;
	switch (e2cb_xattr_to_vfs(index, name, name_len, &value, &value_len,
				  full, sizeof(full), &acl)) {
	case 0:
		break;
	case EXT2_ET_EA_BAD_NAME_LEN:
		e2cb_x_report(t->x, 0, "extended attribute with name index "
			      "%d not restored", index);
		t->x->xattr_warnings++;
		return 0;
	default:
		e2cb_x_report(t->x, 0, "malformed ACL %s not restored", full);
		t->x->xattr_warnings++;
		return 0;
	}
	/* /proc/self/fd/N names the inode itself, even a symlink's */
	ret = t->proc ? setxattr(t->proc, full, value, value_len, 0) :
	      fsetxattr(t->fd, full, value, value_len, 0);
	if (ret < 0) {
		ret = errno;
		e2cb_x_report(t->x, ret, "cannot set extended attribute %s",
			      full);
		if (xattr_unsettable(ret))
			t->x->xattr_warnings++;
		else
			t->failed = 1;
	}
	free(acl);
	return 0;
}

static int set_times(int fd, int is_path, const char *proc,
		     const struct timespec ts[2], int type)
{
	if (!is_path)
		return futimens(fd, ts);
	if (utimensat(fd, "", ts, AT_EMPTY_PATH) == 0)
		return 0;
	/* an older kernel: through /proc, but not for a symlink */
	if (errno != EINVAL || type == LINUX_S_IFLNK)
		return -1;
	return utimensat(AT_FDCWD, proc, ts, 0);
}

/*
 * Owner, mode, xattrs and times of the object @fd holds: an open file
 * or directory, or (@is_path) an O_PATH descriptor of an object that
 * cannot be opened, acted on through /proc/self/fd, never by its name,
 * which others may swap for a symlink.  The order keeps each: chown
 * clears set-id bits and security.capability, an ACL set after the
 * mode agrees with it, and every change touches the times.
 */
void e2cb_x_apply_meta(struct xt *x, int fd, int is_path,
		       const struct meta *m, int type)
{
	char proc[32];
	struct xattr_target t = { x, fd, NULL, 0, 0 };
	struct timespec ts[2];
	int same_owner = x->is_root && !(x->policy & E2CB_NO_SAME_OWNER);
	int changed = 0, ret;
	struct stat st;

	/*
	 * Not the archived owner's (the group may come from a set-group-ID
	 * directory): its set-id bits and capability go.
	 */
	if (!same_owner)
		changed = fstat(fd, &st) < 0 || st.st_uid != m->uid ||
			  st.st_gid != m->gid;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (is_path)
		t.proc = proc;
	if (same_owner &&
	    fchownat(fd, "", m->uid, m->gid, AT_EMPTY_PATH) < 0) {
		e2cb_x_report(x, errno, "cannot set the owner");
		t.failed = 1;
	}
	if (type != LINUX_S_IFLNK) {
		mode_t mode = e2cb_policy_mode(x->policy, m->mode, x->umask,
					       changed) & 07777;

		ret = is_path ? chmod(proc, mode) : fchmod(fd, mode);
		if (ret < 0) {
			e2cb_x_report(x, errno, "cannot set the mode");
			t.failed = 1;
		}
	}
	if (m->xattrs) {
		e2cb_xattr_rec_iterate(m->xattrs, m->xattrs_len,
				       set_one_xattr, &t);
		t.caps = 1;
		if (!e2cb_policy_drops_caps(x->policy, changed))
			e2cb_xattr_rec_iterate(m->xattrs, m->xattrs_len,
					       set_one_xattr, &t);
	}
	ts[0].tv_sec = m->atime.sec;
	ts[0].tv_nsec = m->atime.nsec;
	ts[1].tv_sec = m->mtime.sec;
	ts[1].tv_nsec = m->mtime.nsec;
	if (set_times(fd, is_path, proc, ts, type) < 0) {
		e2cb_x_report(x, errno, "cannot set the times");
		t.failed = 1;
	}
	/* the entry is there, but not as archived: it counts as failed */
	if (t.failed)
		x->failed++;
}

void e2cb_x_meta_from(struct meta *m, const struct xentry *e)
{
	m->mode = e->mode;
	m->uid = e->uid;
	m->gid = e->gid;
	m->atime = e->atime;
	m->mtime = e->mtime;
	m->xattrs = NULL;
	m->xattrs_len = 0;
	if (e->xattrs && (m->xattrs = malloc(e->xattrs_len)) != NULL) {
		memcpy(m->xattrs, e->xattrs, e->xattrs_len);
		m->xattrs_len = e->xattrs_len;
	}
}

/* @e's own metadata, to the object @fd holds, made for it just now */
void e2cb_x_apply_entry_meta(struct xt *x, int fd, int is_path,
			     const struct xentry *e)
{
	struct meta m;

	e2cb_x_meta_from(&m, e);
	e2cb_x_apply_meta(x, fd, is_path, &m, e->mode & LINUX_S_IFMT);
	free(m.xattrs);
}
