/*
 * restore_online_make.c --- restore --online: each entry created in
 * the mounted target, and its data written
 *
 * In an encrypted directory an entry is made by its raw name with
 * FS_IOC_CREATE_RAW (contrib/kernel), its ciphertext written with
 * FS_IOC_WRITE_RAW_DATA: no key is needed, and none is used if loaded.
 * In an unencrypted one, with the ordinary *at() calls on the
 * directory's descriptor.  The owner and mode are given at creation;
 * what needs the whole inode waits (restore_online_finish.c).
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
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <et/com_err.h>
#include "restore_online.h"

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL	0x40000000
#endif

/* The owner and mode the entry gets, as the POLICY options allow */
void e2cb_ro_owner(const struct ro *ro, const struct e2cb_entry *e,
		   uint32_t *mode, uint32_t *uid, uint32_t *gid)
{
	const struct restore *rs = &ro->rs;
	unsigned int policy = rs->opts->policy;
	int same = !(policy & E2CB_NO_SAME_OWNER);

	*uid = same ? e->rec.uid : rs->uid;
	*gid = same ? e->rec.gid : rs->gid;
	*mode = (e->rec.mode & LINUX_S_IFMT) |
		(e2cb_policy_mode(policy, e->rec.mode, rs->umask,
				  !same && (e->rec.uid != rs->uid ||
					    e->rec.gid != rs->gid)) & 07777);
}

/* The inode @ino in @dfd, by the name readdir(3) shows for it; -1 */
int e2cb_ro_open_by_ino(int dfd, uint64_t ino, int flags)
{
	struct dirent *de;
	struct stat st;
	int ret = -1;
	DIR *d;

	d = e2cb_dir_stream(dfd);
	if (!d)
		return -1;
	errno = ENOENT;
	while ((de = readdir(d))) {
		if (de->d_ino != ino || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		ret = openat(dfd, de->d_name, flags | O_NOFOLLOW | O_CLOEXEC);
		if (ret >= 0 && (fstat(ret, &st) < 0 || st.st_ino != ino)) {
			close(ret);
			ret = -1;
			errno = ESTALE;
		}
		break;
	}
	closedir(d);
	return ret;
}

errcode_t e2cb_ro_note_made(struct ro *ro, uint64_t ino)
{
	void *slot;

	return e2cb_ino_map_add(&ro->made, ino, &slot);
}

/* The raw name of @e, as the ioctls take it */
static void raw_name(struct fscrypt_entry_name *en,
		     const struct ext4_encrypted_name *n)
{
	memset(en, 0, sizeof(*en));
	en->name_len = n->name_len;
	memcpy(en->name, n->name, n->name_len);
}

/* Ciphertext gathered into whole blocks, FS_IOC_WRITE_RAW_DATA each */
struct raw_writer {
	struct ro *ro;
	int dfd;
	struct fscrypt_entry_name name;
	uint64_t start;			/* of what buf holds */
	size_t have;
	uint64_t end;			/* i_size, to a whole block */
};

static errcode_t raw_flush(struct raw_writer *w)
{
	struct fscrypt_write_raw_data_arg wa;
	uint32_t bs = w->ro->bs;
	size_t whole = (w->have + bs - 1) / bs * bs;

	if (!w->have)
		return 0;
	/* the last block is whole in an archive; a short one is padded */
	memset(w->ro->buf + w->have, 0, whole - w->have);
	memset(&wa, 0, sizeof(wa));
	wa.entry = w->name;
	wa.lblk = w->start / bs;
	wa.buf = (uintptr_t) w->ro->buf;
	wa.nr_blocks = whole / bs;
	if (ioctl(w->dfd, FS_IOC_WRITE_RAW_DATA, &wa) < 0)
		return errno;
	w->start += w->have;
	w->have = 0;
	return 0;
}

static errcode_t raw_data(const struct e2cb_entry *e EXT2FS_ATTR((unused)),
			  uint64_t off, const void *buf, size_t len,
			  void *priv)
{
	struct raw_writer *w = priv;
	errcode_t retval;
	size_t n;

	if (e2cb_restore_stopped())
		return EXT2_ET_CANCEL_REQUESTED;
	/* a verity tree past the data: the kernel has no place for it */
	if (off >= w->end)
		return 0;
	if (len > w->end - off)
		len = w->end - off;
	if (w->have && off != w->start + w->have) {
		retval = raw_flush(w);
		if (retval)
			return retval;
	}
	if (!w->have) {
		if (off % w->ro->bs)
			return EXT2_ET_INVALID_ARGUMENT;
		w->start = off;
	}
	while (len) {
		n = RO_DATA_BUF - w->have;
		if (n > len)
			n = len;
		memcpy(w->ro->buf + w->have, buf, n);
		w->have += n;
		buf = (const uint8_t *) buf + n;
		len -= n;
		if (w->have == RO_DATA_BUF) {
			retval = raw_flush(w);
			if (retval)
				return retval;
		}
	}
	return 0;
}

/* An unencrypted file's data, by pwrite(2) on its descriptor */
static errcode_t plain_data(const struct e2cb_entry *e EXT2FS_ATTR((unused)),
			    uint64_t off, const void *buf, size_t len,
			    void *priv)
{
	int fd = *(int *) priv;

	if (e2cb_restore_stopped())
		return EXT2_ET_CANCEL_REQUESTED;
	return e2cb_write_all(fd, buf, len, off);
}

/* The 'e5' blob of @e, for FS_IOC_CREATE_RAW */
static errcode_t set_blob(struct fscrypt_create_raw_arg *ca,
			  const struct e2cb_entry *e)
{
	size_t len;
	errcode_t retval;

	retval = ext2fs_encode_metadata_blob(e->rec.size, e->ctx, e->ctx_len,
					     ca->metadata,
					     sizeof(ca->metadata), &len);
	ca->metadata_size = len;
	return retval;
}

/* A hard link to an inode made earlier, by its first name */
static errcode_t make_link(struct ro *ro, struct ro_dir *dir,
			   const struct e2cb_entry *e,
			   const struct ext4_encrypted_name *n,
			   const char *plain)
{
	struct ro_link *l = e2cb_ino_map_find(&ro->links, e->rec.ino);
	struct fscrypt_create_raw_arg ca;

	if (!l)
		return EXT2_ET_FILE_NOT_FOUND;	/* the plan saw to it */
	if (!dir->enc) {
		if (linkat(l->pathfd, "", dir->fd, plain, AT_EMPTY_PATH) < 0)
			return errno;
		return 0;
	}
	memset(&ca, 0, sizeof(ca));
	raw_name(&ca.entry, n);
	if (n->has_hash) {
		ca.flags |= FSCRYPT_CREATE_RAW_HASH;
		ca.hash = n->hash;
		ca.minor_hash = n->minor_hash;
	}
	ca.flags |= FSCRYPT_CREATE_RAW_LINK;
	ca.link_dirfd = l->dirfd;
	ca.link = l->name;
	if (ioctl(dir->fd, FS_IOC_CREATE_RAW, &ca) < 0)
		return errno;
	return ca.ino == l->to ? 0 : ESTALE;
}

/* In an encrypted directory (or a policy root in a plain one) */
static errcode_t make_raw(struct ro *ro, struct ro_dir *dir,
			  const struct e2cb_entry *e,
			  const struct fscrypt_entry_name *en,
			  const struct ext4_encrypted_name *n, uint64_t *ino)
{
	struct fscrypt_create_raw_arg ca;
	errcode_t retval;

	memset(&ca, 0, sizeof(ca));
	ca.entry = *en;
	if (n && n->has_hash) {
		ca.flags |= FSCRYPT_CREATE_RAW_HASH;
		ca.hash = n->hash;
		ca.minor_hash = n->minor_hash;
	}
	e2cb_ro_owner(ro, e, &ca.mode, &ca.uid, &ca.gid);
	if (LINUX_S_ISCHR(e->rec.mode) || LINUX_S_ISBLK(e->rec.mode)) {
		ca.rdev_major = e->rec.rdev_major;
		ca.rdev_minor = e->rec.rdev_minor;
	}
	if (e->ctx) {
		retval = set_blob(&ca, e);
		if (retval)
			return retval;
	}
	if (LINUX_S_ISLNK(e->rec.mode)) {
		ca.target = (uintptr_t) e->symlink;
		ca.target_size = e->symlink_len;
	}
	/* a casefolded directory below one that is not */
	if (LINUX_S_ISDIR(e->rec.mode) && (e->rec.iflags & EXT4_CASEFOLD_FL) &&
	    !dir->casefold)
		ca.flags |= FSCRYPT_CREATE_RAW_CASEFOLD;
	if (ioctl(dir->fd, FS_IOC_CREATE_RAW, &ca) < 0)
		return errno;
	*ino = ca.ino;
	return e2cb_ro_note_made(ro, ca.ino);
}

/* Casefolding, set on an empty unencrypted directory (no key needed) */
errcode_t e2cb_ro_set_casefold(int fd)
{
	int fl;

	if (ioctl(fd, FS_IOC_GETFLAGS, &fl) < 0)
		return errno;
	fl |= FS_CASEFOLD_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &fl) < 0)
		return errno;
	return 0;
}

/* In an unencrypted directory: the *at() calls, O_EXCL all */
static errcode_t make_plain(struct ro *ro, struct ro_dir *dir,
			    const struct e2cb_entry *e, const char *name,
			    uint64_t *ino, int *fd)
{
	uint32_t mode, uid, gid, type = e->rec.mode & LINUX_S_IFMT;
	dev_t dev = makedev(e->rec.rdev_major, e->rec.rdev_minor);
	struct stat st;
	int ret;

	e2cb_ro_owner(ro, e, &mode, &uid, &gid);
	*fd = -1;
	switch (type) {
	case LINUX_S_IFREG:
		*fd = openat(dir->fd, name, O_WRONLY | O_CREAT | O_EXCL |
			     O_NOFOLLOW | O_CLOEXEC, 0600);
		break;
	case LINUX_S_IFDIR:
		if (mkdirat(dir->fd, name, 0700) < 0)
			return errno;
		*fd = openat(dir->fd, name, O_RDONLY | O_DIRECTORY |
			     O_NOFOLLOW | O_CLOEXEC);
		break;
	case LINUX_S_IFLNK:
		if (symlinkat(e->linkname, dir->fd, name) < 0)
			return errno;
		*fd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		break;
	default:
		if (mknodat(dir->fd, name, type | 0600, dev) < 0)
			return errno;
		*fd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (*fd < 0 || fstat(*fd, &st) < 0)
		return errno;
	/* what we made, unless another process swapped it meanwhile */
	if ((st.st_mode & S_IFMT) != type || st.st_uid != ro->rs.uid ||
	    (type == LINUX_S_IFDIR && st.st_nlink != 2)) {
		close(*fd);
		*fd = -1;
		return ESTALE;
	}
	*ino = st.st_ino;
	ret = e2cb_ro_note_made(ro, st.st_ino);
	if (ret)
		return ret;
	if (fchownat(*fd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return errno;
	if (type != LINUX_S_IFLNK) {
		char proc[40];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", *fd);
		if (chmod(proc, mode & 07777) < 0)
			return errno;
	}
	if (type == LINUX_S_IFDIR && (e->rec.iflags & EXT4_CASEFOLD_FL))
		return e2cb_ro_set_casefold(*fd);
	return 0;
}

/* The first name of an inode with more: what the others link to */
static errcode_t keep_link(struct ro *ro, struct ro_dir *dir,
			   const struct e2cb_entry *e,
			   const struct ext4_encrypted_name *n,
			   uint64_t ino, int fd)
{
	struct ro_link *l;
	void *slot;
	errcode_t retval;

	retval = e2cb_ino_map_add(&ro->links, e->rec.ino, &slot);
	if (retval)
		return retval;
	l = slot;
	memset(l, 0, sizeof(*l));
	l->to = ino;
	l->dirfd = -1;
	l->pathfd = -1;
	if (dir->enc) {
		raw_name(&l->name, n);
		l->dirfd = fcntl(dir->fd, F_DUPFD_CLOEXEC, 0);
		return l->dirfd < 0 ? errno : 0;
	}
	/* linkat(AT_EMPTY_PATH) takes any descriptor of the inode */
	l->pathfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return l->pathfd < 0 ? errno : 0;
}

/* The data of a regular file just made */
static errcode_t write_data(struct ro *ro, struct ro_dir *dir,
			    const struct e2cb_entry *e,
			    const struct ext4_encrypted_name *n,
			    struct e2cb_source *src, int fd)
{
	struct raw_writer w;
	errcode_t retval;

	if (!e->ctx) {
		retval = e2cb_source_data(src, plain_data, &fd);
		if (!retval && ftruncate(fd, e->rec.size) < 0)
			retval = errno;
		return retval;
	}
	memset(&w, 0, sizeof(w));
	w.ro = ro;
	w.dfd = dir->fd;
	raw_name(&w.name, n);
	w.end = (e->rec.size + ro->bs - 1) / ro->bs * ro->bs;
	retval = e2cb_source_data(src, raw_data, &w);
	if (!retval)
		retval = raw_flush(&w);
	return retval;
}

/*
 * Make the entry @e in @dir under the name @n (its own, or PATH's
 * for the root): a new inode (its number in *@ino), or a name of one
 * made earlier (*@ino 0).  A directory is handed back open in *@dirfd
 * (else -1).
 */
errcode_t e2cb_ro_make(struct ro *ro, struct ro_dir *dir,
		       const struct e2cb_entry *e,
		       const struct ext4_encrypted_name *n,
		       struct e2cb_source *src, uint64_t *ino, int *dirfd)
{
	struct fscrypt_entry_name en;
	char plain[EXT2_NAME_LEN + 1];
	int fd = -1;
	errcode_t retval;

	*dirfd = -1;
	*ino = 0;
	plain[0] = 0;
	if (!dir->enc) {
		/* a plain name (the plan refused a raw one here) */
		if (!n->name_len || memchr(n->name, 0, n->name_len) ||
		    memchr(n->name, '/', n->name_len))
			return EXT2_ET_INVALID_ARGUMENT;
		memcpy(plain, n->name, n->name_len);
		plain[n->name_len] = 0;
	}
	if (e->rec.rflags & E2CB_IF_HARDLINK)
		return make_link(ro, dir, e, n, plain);
	if (dir->enc || e->ctx) {
		/* in a plain directory, only a policy root (the plan) */
		raw_name(&en, n);
		retval = make_raw(ro, dir, e, &en, dir->enc ? n : NULL, ino);
		if (!retval && LINUX_S_ISDIR(e->rec.mode)) {
			fd = e2cb_ro_open_by_ino(dir->fd, *ino, O_RDONLY |
						 O_DIRECTORY);
			if (fd < 0)
				retval = errno;
		}
	} else {
		retval = make_plain(ro, dir, e, plain, ino, &fd);
	}
	if (!retval && LINUX_S_ISREG(e->rec.mode))
		retval = write_data(ro, dir, e, n, src, fd);
	if (!retval && e->rec.links_count > 1 && !LINUX_S_ISDIR(e->rec.mode))
		retval = keep_link(ro, dir, e, n, *ino, fd);
	if (!retval && LINUX_S_ISDIR(e->rec.mode)) {
		*dirfd = fd;
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	return retval;
}
