/*
 * source_online.c --- e2cryptbak backup --online: the entries of a
 * mounted ext4 filesystem, without the key (issue 22)
 *
 * The tree is walked with openat() and statx() on O_PATH descriptors,
 * never following a name someone could swap: each entry is opened once,
 * without following symlinks, checked to be the inode its directory
 * entry names and on the same mount, and everything else is read
 * through that descriptor (reopened through /proc/self/fd where it has
 * to be read).  Encrypted directories are read with the keyless ioctls
 * of contrib/kernel: FS_IOC_READ_RAW_DIR (the names as stored, and the
 * stored hashes of casefolded directories), FS_IOC_GET_RAW_ENTRY (the
 * 'e5' blob: context and true i_size; an encrypted symlink's stored
 * target) and FS_IOC_READ_RAW_DATA (ciphertext as stored, holes as
 * holes).  Plaintext is read with ordinary reads, its holes found with
 * SEEK_DATA and SEEK_HOLE.
 *
 * The entries go to the end of the walk (walk.h: the archive writer,
 * or a source's entries) as backup's image walk (backup.c) would hand
 * them over for the same filesystem, in the same order: a directory's
 * children by inode number, from the entries in the order the
 * directory lists them.  What the kernel does not tell an unprivileged
 * reader of a keyless inode (the flags and the generation of what
 * cannot be opened) is said in the man page.  What cannot be read as
 * the kernel sees it is reported, and skipped and counted; what
 * changes once its entry is out ends the pass.
 *
 * Nothing here assumes libext2fs: only its blob codec is used.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define _GNU_SOURCE
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <linux/types.h>
#include <linux/magic.h>
#include <et/com_err.h>
#include "source_online.h"

static const char *opath(const struct online *o)
{
	return o->path.len ? o->path.s : ".";
}

static void skip(struct online *o, int err, const char *what)
{
	if (o->why[0])
		what = o->why;
	if (err == E2CB_CHANGED)
		com_err(program_name, 0, "%s changed while it was read (%s); "
			"skipped", opath(o), what);
	else if (err == EOPNOTSUPP)
		com_err(program_name, 0, "%s: %s cannot be archived online "
			"yet; skipped", opath(o), what);
	else
		com_err(program_name, err, "while %s %s; skipped", what,
			opath(o));
	o->why[0] = 0;
	o->wk.skipped++;
}

/*
 * A new descriptor of the inode open as O_PATH @fd: the same inode,
 * whatever its name is now (the magic link is not a name to follow)
 */
int e2cb_online_reopen(int fd, int flags)
{
	char name[40];
	int ret;

	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	ret = open(name, flags | O_CLOEXEC | O_NOATIME);
	if (ret < 0 && errno == EPERM)
		ret = open(name, flags | O_CLOEXEC);
	return ret;
}

void e2cb_online_entry_name(struct fscrypt_entry_name *en,
			   const struct online_child *c)
{
	memset(en, 0, sizeof(*en));
	if (!c) {
		en->name_len = 1;
		en->name[0] = '.';
		return;
	}
	en->pos = c->pos;
	en->name_len = c->name.name_len;
	memcpy(en->name, c->name.name, c->name.name_len);
}

/*
 * The 'e5' blob and stored target of @c in @dfd ("." if @c is NULL):
 * an encrypted directory, or a plain one holding the encrypted @c
 */
static errcode_t get_raw_entry(int dfd, const struct online_child *c,
			       struct online_entry *oe)
{
	struct fscrypt_get_raw_entry_arg ga;
	errcode_t retval;
	__u64 i_size;

	memset(&ga, 0, sizeof(ga));
	e2cb_online_entry_name(&ga.entry, c);
	ga.target = (uintptr_t) oe->target;
	ga.target_size = TARGET_MAX;
	if (ioctl(dfd, FS_IOC_GET_RAW_ENTRY, &ga) < 0)
		return errno;
	if (ga.ino != oe->stx.stx_ino ||
	    (ga.mode & S_IFMT) != (oe->stx.stx_mode & S_IFMT))
		return E2CB_CHANGED;
	if (ga.metadata_size > sizeof(oe->meta) ||
	    ga.target_size > TARGET_MAX)
		return EXT2_ET_CRYPT_BAD_BLOB;
	oe->target_len = ga.target_size;
	oe->have_target = S_ISLNK(ga.mode);
	if (!oe->enc)
		return ga.metadata_size ? EXT2_ET_CRYPT_BAD_BLOB : 0;
	memcpy(oe->meta, ga.metadata, ga.metadata_size);
	oe->meta_len = ga.metadata_size;
	retval = ext2fs_decode_metadata_blob(oe->meta, oe->meta_len, &i_size,
					     &oe->ctx, &oe->ctx_len);
	oe->i_size = i_size;
	return retval;
}

/* The 'e5' blob of the encrypted directory @oe, asked of itself */
static errcode_t get_raw_self(struct online_entry *oe)
{
	int fd = e2cb_online_reopen(oe->fd, O_RDONLY | O_DIRECTORY);
	errcode_t retval;

	if (fd < 0)
		return errno;
	retval = get_raw_entry(fd, NULL, oe);
	close(fd);
	return retval;
}

/*
 * The flags, generation and project of what can be opened; of the rest
 * what statx says, and the extent flag as the kernel sets it.
 */
static void inode_flags(const struct online_entry *oe,
			struct e2cb_inode_rec *r)
{
	const struct statx *s = &oe->stx;
	struct fsxattr fsx;
	int fd = -1, flags;
	unsigned int gen;

	if (S_ISDIR(s->stx_mode) || S_ISREG(s->stx_mode))
		fd = e2cb_online_reopen(oe->fd, O_RDONLY | O_NONBLOCK);
	if (fd >= 0 && !ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		r->iflags = flags;
		if (!ioctl(fd, FS_IOC_GETVERSION, &gen))
			r->generation = gen;
		if (!ioctl(fd, FS_IOC_FSGETXATTR, &fsx))
			r->projid = fsx.fsx_projid;
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	if (s->stx_attributes & STATX_ATTR_IMMUTABLE)
		r->iflags |= EXT2_IMMUTABLE_FL;
	if (s->stx_attributes & STATX_ATTR_APPEND)
		r->iflags |= EXT2_APPEND_FL;
	if (s->stx_attributes & STATX_ATTR_NODUMP)
		r->iflags |= EXT2_NODUMP_FL;
	if (s->stx_attributes & STATX_ATTR_ENCRYPTED)
		r->iflags |= EXT4_ENCRYPT_FL;
	if (s->stx_attributes & STATX_ATTR_VERITY)
		r->iflags |= EXT4_VERITY_FL;
	/* a fast symlink's target is in i_block: no extent tree */
	if (S_ISDIR(s->stx_mode) || S_ISREG(s->stx_mode) ||
	    (S_ISLNK(s->stx_mode) && r->size >= EXT2_N_BLOCKS * 4))
		r->iflags |= EXT4_EXTENTS_FL;
}

static void set_time(struct e2cb_time *t, const struct statx_timestamp *s)
{
	t->sec = s->tv_sec;
	t->nsec = s->tv_nsec;
}

static void fill_inode_rec(const struct online *o,
			   const struct online_entry *oe,
			   struct e2cb_inode_rec *r)
{
	const struct statx *s = &oe->stx;

	memset(r, 0, sizeof(*r));
	r->ino = s->stx_ino;
	r->mode = s->stx_mode;
	r->uid = s->stx_uid;
	r->gid = s->stx_gid;
	r->links_count = s->stx_nlink;
	r->size = oe->enc ? oe->i_size : s->stx_size;
	set_time(&r->atime, &s->stx_atime);
	set_time(&r->mtime, &s->stx_mtime);
	set_time(&r->ctime, &s->stx_ctime);
	if (s->stx_mask & STATX_BTIME) {
		set_time(&r->crtime, &s->stx_btime);
		r->rflags |= E2CB_IF_CRTIME;
	}
	/*
	 * A 128-byte inode has no i_projid (FS_IOC_FSGETXATTR says 0);
	 * a larger one has it since Linux 4.5 made 32 extra bytes the
	 * minimum.  An unknown inode size (the header could not read the
	 * superblock) is taken as large.
	 */
	if (o->wk.hdr.inode_size != EXT2_GOOD_OLD_INODE_SIZE)
		r->rflags |= E2CB_IF_PROJID;
	if (S_ISCHR(s->stx_mode) || S_ISBLK(s->stx_mode)) {
		r->rdev_major = s->stx_rdev_major;
		r->rdev_minor = s->stx_rdev_minor;
	}
	inode_flags(oe, r);
}

/* The index of a VFS xattr name, and the rest of the name after it */
static int xattr_index(const char *name, const char **rest)
{
	static const int idx[] = { 2, 3, 8, 1, 4, 6, 7 };
	const char *p;
	size_t i, n;

	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		p = e2cb_xattr_prefix(idx[i]);
		n = strlen(p);
		if (!strncmp(name, p, n)) {
			*rest = name + n;
			return idx[i];
		}
	}
	return -1;
}

/*
 * The attribute @name of @proc into @xb, as ext4 stores it: a POSIX ACL
 * in its on-disk form (the VFS gives its own), the rest byte for byte
 */
static errcode_t add_one_xattr(const char *proc, const char *name,
			       struct e2cb_xattr_buf *xb)
{
	const char *rest;
	ssize_t vlen;
	size_t len;
	char *value, *disk = NULL;
	int index = xattr_index(name, &rest);
	errcode_t retval;

	if (index < 0 || index == 8)
		return EOPNOTSUPP;	/* said by read_xattrs() */
	vlen = getxattr(proc, name, NULL, 0);
	if (vlen < 0)
		return errno;
	value = malloc(vlen + 1);
	if (!value)
		return EXT2_ET_NO_MEMORY;
	vlen = getxattr(proc, name, value, vlen);
	if (vlen < 0) {
		retval = errno == ERANGE ? E2CB_CHANGED : errno;
		goto out;
	}
	len = vlen;
	if (index == 2 || index == 3) {
		disk = malloc(vlen + 1);
		retval = disk ? ext2fs_acl_from_vfs(value, vlen, disk, &len) :
			EXT2_ET_NO_MEMORY;
		if (retval)
			goto out;
	}
	retval = e2cb_xattr_buf_add(xb, index, rest, strlen(rest),
				    disk ? disk : value, len);
out:
	free(disk);
	free(value);
	return retval;
}

/* The attributes, in the order ext4 lists them (in-inode, then block) */
static errcode_t read_xattrs(struct online *o, const struct online_entry *oe)
{
	struct e2cb_xattr_buf xb;
	char proc[40], *list = NULL, *p;
	ssize_t len;
	errcode_t retval = 0;

	memset(&xb, 0, sizeof(xb));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", oe->fd);
	len = listxattr(proc, NULL, 0);
	if (len < 0)
		return errno == ENOTSUP ? 0 : errno;
	if (!len)
		return 0;
	list = malloc(len + 1);
	if (!list)
		return EXT2_ET_NO_MEMORY;
	len = listxattr(proc, list, len);
	if (len < 0)
		retval = errno == ERANGE ? E2CB_CHANGED : errno;
	for (p = list; !retval && p < list + len; p += strlen(p) + 1) {
		retval = add_one_xattr(proc, p, &xb);
		if (retval == EOPNOTSUPP)
			snprintf(o->why, sizeof(o->why), "the attribute %.40s",
				 p);
	}
	if (!retval && xb.len)
		o->wk.ops->add_xattrs(&o->wk, xb.buf, xb.len);
	free(xb.buf);
	free(list);
	return retval;
}

static errcode_t read_symlink(struct online *o, struct online_entry *oe)
{
	ssize_t n;

	if (oe->enc) {
		errcode_t retval;

		/* the kernel hands the target over as stored: a forged
		 * length is refused as the offline walk refuses it */
		if (!oe->have_target)
			return EXT2_ET_INODE_CORRUPTED;
		retval = ext2fs_check_encrypted_symlink(oe->target,
							oe->target_len);
		if (retval)
			return retval;
		return o->wk.ops->add_symlink(&o->wk, oe->target,
					      oe->target_len, 1);
	}
	n = readlinkat(oe->fd, "", (char *) oe->target, TARGET_MAX);
	if (n < 0)
		return errno;
	if (n == 0 || (uint64_t) n != oe->stx.stx_size)
		return E2CB_CHANGED;
	return o->wk.ops->add_symlink(&o->wk, oe->target, n, 0);
}

/*
 * Open the entry @c of @dfd (the root, @c NULL, is open already) and
 * read what it is.  An error skips it, as for a damaged entry.
 */
static errcode_t look_up(struct online *o, int dfd, int parent_enc,
			 const struct online_child *c, struct online_entry *oe)
{
	unsigned int want = STATX_BASIC_STATS | STATX_BTIME | STATX_MNT_ID;

	if (c) {
		oe->fd = openat(dfd, c->shown, O_PATH | O_NOFOLLOW |
				O_CLOEXEC);
		if (oe->fd < 0)
			return errno == ENOENT ? E2CB_CHANGED : errno;
	}
	if (statx(oe->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, want,
		  &oe->stx) < 0)
		return errno;
	if (c && oe->stx.stx_ino != c->ino)
		return E2CB_CHANGED;
	if (makedev(oe->stx.stx_dev_major, oe->stx.stx_dev_minor) != o->dev ||
	    oe->stx.stx_mnt_id != o->mnt_id) {
		strcpy(o->why, "another filesystem mounted over it: at");
		return EXDEV;
	}
	oe->enc = !!(oe->stx.stx_attributes & STATX_ATTR_ENCRYPTED);
	if (parent_enc && c)
		return get_raw_entry(dfd, c, oe);
	if (!oe->enc)
		return 0;
	/*
	 * An encrypted file or symlink in a plain directory (renamed out
	 * of its own) cannot be opened without its key: its directory is
	 * asked, by the plain name, as an encrypted one is by the raw
	 * name.  The root of an encrypted tree answers for itself.
	 */
	if (c && !S_ISDIR(oe->stx.stx_mode)) {
		errcode_t retval = get_raw_entry(dfd, c, oe);

		/* a series older than this: encrypted directories only */
		if (retval == ENODATA) {
			strcpy(o->why, "an encrypted file in an unencrypted "
			       "directory (an older contrib/kernel)");
			retval = EOPNOTSUPP;
		}
		return retval;
	}
	return get_raw_self(oe);
}

/* The records of the entry; the name's in an encrypted directory */
static errcode_t crypt_records(struct online *o, struct online_entry *oe,
			       const struct online_child *c, int parent_enc)
{
	errcode_t retval;

	if (oe->enc) {
		retval = o->wk.ops->add_context(&o->wk, oe->ctx,
						oe->ctx_len);
		if (retval)
			return retval;
	}
	if (!parent_enc || !c)
		return 0;
	if (S_ISDIR(oe->stx.stx_mode) && !oe->enc)
		return EXT2_ET_CRYPT_NO_CONTEXT;
	return o->wk.ops->add_name(&o->wk, &c->name, oe->ctx, oe->ctx_len);
}

/* Writer errors (the archive cannot be written) end the backup */
#define IS_FATAL(err)	((err) == EXT2_ET_SHORT_WRITE || \
			 (err) == EXT2_ET_CANCEL_REQUESTED || \
			 (err) == EXT2_ET_NO_MEMORY)

/* Whether the inode's size and times are still those it was read with */
errcode_t e2cb_online_unchanged(const struct online_entry *oe)
{
	struct statx now;
	const struct statx *was = &oe->stx;

	if (statx(oe->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		  STATX_BASIC_STATS, &now) < 0)
		return errno;
	if (now.stx_size != was->stx_size ||
	    now.stx_mtime.tv_sec != was->stx_mtime.tv_sec ||
	    now.stx_mtime.tv_nsec != was->stx_mtime.tv_nsec ||
	    now.stx_ctime.tv_sec != was->stx_ctime.tv_sec ||
	    now.stx_ctime.tv_nsec != was->stx_ctime.tv_nsec)
		return E2CB_CHANGED;
	return 0;
}

static errcode_t walk_data(void *priv, uint64_t off, const void *buf,
			   size_t len)
{
	struct online *o = priv;

	return o->wk.ops->data(&o->wk, off, buf, len);
}

/*
 * Hand the entry to the end, and the data it could not keep after it,
 * read again: it must be what the first read found.
 */
static errcode_t send_entry(struct online *o, struct online_entry *oe,
			    struct data_reader *dr, int has_data)
{
	errcode_t fatal;

	o->send_oe = oe;
	o->send_dr = has_data ? dr : NULL;
	fatal = o->wk.ops->send(&o->wk);
	if (!fatal && has_data && !o->wk.preread && o->wk.ops->data) {
		fatal = e2cb_online_read_data(o, dr, NULL, walk_data, o);
		if (!fatal)
			fatal = e2cb_online_unchanged(oe);
		if (fatal && !IS_FATAL(fatal))
			com_err(program_name, fatal == E2CB_CHANGED ? 0 :
				fatal, "while reading the data of %s again%s",
				opath(o), fatal == E2CB_CHANGED ?
				": it changed while it was read" : "");
	}
	o->send_oe = NULL;
	o->send_dr = NULL;
	if (!fatal)
		o->wk.entries++;
	return fatal;
}

/*
 * ext4 keeps an fs-verity file's Merkle tree past i_size, encrypted like
 * the data: FS_IOC_READ_RAW_DATA reads on to the end of it (end_lblk),
 * but the series before that change stops at i_size (end_lblk, then a
 * reserved field, 0).  An unencrypted file's tree is not carried
 * (archive-format.txt 8.2), as offline.
 */
static int verity_tree_read(const struct online *o,
			    const struct data_reader *dr)
{
	uint64_t data_blocks = (dr->i_size + o->bs - 1) / o->bs;

	return dr->da.end_lblk > data_blocks;
}

/*
 * The file goes out without its tree (restore makes it a plain file),
 * said and counted, so the archive says it is incomplete.
 */
static void untreed_verity(struct online *o)
{
	com_err(program_name, 0, "%s: an fs-verity file: its Merkle tree "
		"cannot be archived online yet (restore makes it a plain "
		"file; fsverity enable makes it a verity file again)",
		opath(o));
	o->wk.skipped++;
}

/*
 * The entry, its records and its data.  Returns an error only for what
 * ends the backup; *@sent says whether the entry went out.
 */
static errcode_t write_entry(struct online *o, struct online_entry *oe,
			     int dfd, const struct online_child *c,
			     int parent_enc, int *sent)
{
	struct e2cb_inode_rec r;
	struct data_reader dr;
	const char *first = NULL;
	int multi = !S_ISDIR(oe->stx.stx_mode) && oe->stx.stx_nlink > 1;
	int is_reg = S_ISREG(oe->stx.stx_mode);
	uint64_t need = oe->stx.stx_blocks * 512;
	errcode_t retval, fatal;
	size_t i;

	memset(&dr, 0, sizeof(dr));
	dr.fd = -1;
	fill_inode_rec(o, oe, &r);
	fatal = o->wk.ops->begin(&o->wk, opath(o), &r,
				 need < 256 ? 256 : need);
	if (fatal)
		return fatal;
	if (multi)
		first = e2cb_ino_map_path(&o->links, r.ino);
	if (first)
		o->wk.ops->hardlink(&o->wk, first);
	retval = crypt_records(o, oe, c, parent_enc);
	if (!retval && !first)
		retval = read_xattrs(o, oe);
	if (!retval && !first && S_ISLNK(oe->stx.stx_mode))
		retval = read_symlink(o, oe);
	if (!retval && !first && is_reg)
		retval = e2cb_online_prepare_data(o, oe, dfd, c, &dr,
				!!(r.iflags & EXT4_INLINE_DATA_FL));
	if (!retval && !first)
		retval = e2cb_online_unchanged(oe);
	if (retval) {
		if (IS_FATAL(retval))
			return retval;
		skip(o, retval, "reading");
		goto out;
	}
	if (multi && !first) {
		fatal = e2cb_ino_map_add_path(&o->links, r.ino, opath(o),
					      strlen(opath(o)));
		if (fatal)
			goto out;
	}
	if (!first) {
		o->wk.inodes++;
		o->wk.encrypted += oe->enc;
		for (i = 0; is_reg && i < o->count; i++)
			o->wk.data_bytes += o->st[i].len;
	}
	fatal = send_entry(o, oe, &dr, is_reg && !first);
	*sent = !fatal;
	if (!fatal && !first && oe->enc && (r.iflags & EXT4_VERITY_FL) &&
	    !verity_tree_read(o, &dr))
		untreed_verity(o);
out:
	if (!oe->enc && dr.fd >= 0)
		close(dr.fd);
	return fatal;
}

static errcode_t online_dir(struct online *o, struct online_entry *oe,
			    int depth);

/* One entry, and what it holds if it is a directory */
errcode_t e2cb_online_one(struct online *o, int dfd, int parent_enc,
			    const struct online_child *c,
			    struct online_entry *oe, int depth)
{
	errcode_t retval, fatal = 0;
	int sent = 0;

	retval = look_up(o, dfd, parent_enc, c, oe);
	if (retval) {
		skip(o, retval, "reading");
		goto out;
	}
	fatal = write_entry(o, oe, dfd, c, parent_enc, &sent);
	if (!fatal && sent)
		e2cb_walk_progress(&o->wk, 0);
	if (!fatal && sent && S_ISDIR(oe->stx.stx_mode))
		fatal = online_dir(o, oe, depth + 1);
out:
	if (c && oe->fd >= 0)
		close(oe->fd);
	return fatal;
}

struct child_list {
	struct online_child *c;
	size_t count, size;
};

static errcode_t add_child(struct child_list *cl, uint64_t ino,
			   uint64_t pos, const void *name, size_t len)
{
	struct online_child *c;

	if (e2cb_grow((void **) &cl->c, &cl->size, cl->count, sizeof(*c)))
		return EXT2_ET_NO_MEMORY;
	c = &cl->c[cl->count++];
	memset(c, 0, sizeof(*c));
	c->ino = ino;
	c->pos = pos;
	c->name.name_len = len;
	memcpy(c->name.name, name, len);
	return 0;
}

static int is_dot(const uint8_t *name, size_t len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

/* The entries of an encrypted directory as stored, raw names */
static errcode_t read_raw_dir(struct online *o, int dfd,
			      struct child_list *cl)
{
	struct fscrypt_read_raw_dir_arg ra;
	const struct fscrypt_raw_dirent *de;
	struct online_child *c;
	unsigned int off;
	errcode_t retval;

	memset(&ra, 0, sizeof(ra));
	do {
		ra.buf = (uintptr_t) o->buf;
		ra.buf_size = RAW_DIR_BUF;
		if (ioctl(dfd, FS_IOC_READ_RAW_DIR, &ra) < 0)
			return errno;
		for (off = 0; off < ra.filled; off += de->rec_len) {
			de = (const void *) (o->buf + off);
			if (ra.filled - off < sizeof(*de) ||
			    de->rec_len < sizeof(*de) + de->name_len ||
			    de->rec_len % 8 || off + de->rec_len > ra.filled ||
			    !de->name_len)
				return EXT2_ET_DIR_CORRUPTED;
			if (is_dot(de->name, de->name_len))
				continue;
			retval = add_child(cl, de->ino, de->pos, de->name,
					   de->name_len);
			if (retval)
				return retval;
			c = &cl->c[cl->count - 1];
			c->name.file_type = de->file_type;
			c->name.has_hash = !!(de->flags &
					      FSCRYPT_RAW_DIRENT_HASH);
			c->name.hash = de->hash;
			c->name.minor_hash = de->minor_hash;
		}
		if (!ra.filled && !(ra.flags & FSCRYPT_READ_RAW_DIR_EOF))
			return EXT2_ET_DIR_CORRUPTED;
	} while (!(ra.flags & FSCRYPT_READ_RAW_DIR_EOF));
	return 0;
}

/* Where the children of inode @ino begin in @cl, sorted by inode */
static size_t first_of_ino(const struct child_list *cl, uint64_t ino)
{
	size_t lo = 0, hi = cl->count, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cl->c[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * readdir(3): the names of a plain directory; of an encrypted one
 * (@cl its raw names, sorted by inode), a name each inode can be
 * opened by (its no-key name without the key).
 */
static errcode_t read_names(int dfd, int enc, struct child_list *cl)
{
	struct dirent *de;
	errcode_t retval = 0;
	size_t len, i;
	DIR *d;

	d = e2cb_dir_stream(dfd);
	if (!d)
		return errno;
	while (!retval && (errno = 0, de = readdir(d))) {
		len = strlen(de->d_name);
		if (is_dot((uint8_t *) de->d_name, len))
			continue;
		if (!enc) {
			retval = add_child(cl, de->d_ino, 0, de->d_name, len);
			if (!retval)
				memcpy(cl->c[cl->count - 1].shown,
				       de->d_name, len + 1);
			continue;
		}
		/* @cl is sorted by inode: the raw names of this one */
		for (i = first_of_ino(cl, de->d_ino);
		     i < cl->count && cl->c[i].ino == de->d_ino; i++)
			if (!cl->c[i].found) {
				memcpy(cl->c[i].shown, de->d_name, len + 1);
				cl->c[i].found = 1;
			}
	}
	if (!retval && errno)
		retval = errno;
	closedir(d);
	return retval;
}

/*
 * By inode; the names of one inode by their bytes, as backup orders
 * them: readdir's order (by hash in an indexed directory) is not the
 * order of the blocks that backup reads
 */
static int cmp_child_ino(const void *a, const void *b)
{
	const struct online_child *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return e2cb_name_cmp(x->name.name, x->name.name_len,
			     y->name.name, y->name.name_len);
}

/* Path component: raw bytes, or base64url inside an encrypted dir */
static errcode_t push_child_path(struct online *o,
				 const struct online_child *c, int enc)
{
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];
	size_t len;

	if (enc) {
		len = e2cb_b64url_encode(c->name.name, c->name.name_len, comp);
		return e2cb_path_push(&o->path, comp, len);
	}
	return e2cb_path_push(&o->path, c->name.name, c->name.name_len);
}

/* The children of the directory @oe, in backup's order: by inode */
static errcode_t online_dir(struct online *o, struct online_entry *oe,
			    int depth)
{
	struct child_list cl;
	struct online_entry *sub = NULL;
	size_t i, old_len = o->path.len;
	int dfd, enc = oe->enc;
	errcode_t retval = 0;

	if (depth > MAX_DEPTH) {
		com_err(program_name, 0, "%s is nested deeper than %d levels; "
			"skipped", opath(o), MAX_DEPTH);
		o->wk.skipped++;
		return 0;
	}
	memset(&cl, 0, sizeof(cl));
	dfd = e2cb_online_reopen(oe->fd, O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		skip(o, errno, "opening the directory");
		return 0;
	}
	if (enc)
		retval = read_raw_dir(o, dfd, &cl);
	/* by inode: backup's order, and read_names() finds them so */
	if (enc && cl.count > 1)
		qsort(cl.c, cl.count, sizeof(*cl.c), cmp_child_ino);
	if (!retval)
		retval = read_names(dfd, enc, &cl);
	if (retval) {
		skip(o, retval, "reading the directory");
		retval = retval == EXT2_ET_NO_MEMORY ? retval : 0;
		goto out;
	}
	if (!enc && cl.count > 1)
		qsort(cl.c, cl.count, sizeof(*cl.c), cmp_child_ino);
	sub = malloc(sizeof(*sub));
	if (!sub) {
		retval = EXT2_ET_NO_MEMORY;
		goto out;
	}
	for (i = 0; i < cl.count && !retval; i++) {
		retval = push_child_path(o, &cl.c[i], enc);
		if (retval)
			break;
		memset(sub, 0, sizeof(*sub));
		sub->fd = -1;
		if (enc && !cl.c[i].found)
			skip(o, E2CB_CHANGED, "finding a name to open");
		else
			retval = e2cb_online_one(o, dfd, enc, &cl.c[i], sub,
					    depth);
		e2cb_path_cut(&o->path, old_len);
	}
out:
	free(sub);
	free(cl.c);
	close(dfd);
	return retval;
}

