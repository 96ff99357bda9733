/*
 * restore_online.c --- e2cryptbak restore --online: an archive into a
 * mounted ext4 filesystem, without the key (issue 23)
 *
 * The archive source and restore's first pass (restore_plan.c) check
 * the whole stream before anything is written; then this sink makes
 * each entry below MOUNTPOINT/PATH through the keyless restore ioctls
 * of contrib/kernel (restore_online_make.c) and sets what needs the
 * whole inode (restore_online_finish.c).  All or nothing, as far as
 * the kernel allows: on any failure what this restore made is removed.
 * Other processes may use the filesystem meanwhile: everything is
 * reached through directory descriptors and checked by inode number.
 *
 * This file is the command: the target, the checks, the passes.
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
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <sys/resource.h>
#include <linux/fs.h>
#include <et/com_err.h>
#include "restore_online.h"

#ifndef EXT4_SUPER_MAGIC
#define EXT4_SUPER_MAGIC	0xEF53
#endif
#ifndef STATX_ATTR_ENCRYPTED
#define STATX_ATTR_ENCRYPTED	0x00000800
#endif

static int refuse(struct ro *ro, const char *why)
{
	com_err(program_name, 0, "refusing to restore into %s: %s; nothing "
		"was written", ro->target, why);
	return E2CB_EXIT_ERROR;
}

/* Whether the directory @fd (or its entry @name) is encrypted */
static int is_encrypted(int fd, const char *name)
{
	struct statx stx;

	if (statx(fd, name, name[0] ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH,
		  STATX_BASIC_STATS, &stx) < 0)
		return -1;
	return !!(stx.stx_attributes & STATX_ATTR_ENCRYPTED);
}

/*
 * Whether this kernel has FS_IOC_CREATE_RAW: asked with a reserved
 * field set, which it refuses (EINVAL) before looking at anything.
 */
static int probe(struct ro *ro)
{
	struct fscrypt_create_raw_arg ca;

	memset(&ca, 0, sizeof(ca));
	ca.__pad = 1;
	if (ioctl(ro->parent_fd, FS_IOC_CREATE_RAW, &ca) < 0 &&
	    errno == EINVAL)
		return 0;
	if (errno == ENOTTY || errno == EOPNOTSUPP)
		return refuse(ro, "this kernel lacks the keyless restore "
			      "ioctls (contrib/kernel)");
	if (errno == EPERM || errno == EACCES)
		return refuse(ro, "restore --online needs CAP_DAC_OVERRIDE, "
			      "CAP_CHOWN and CAP_FOWNER (FS_IOC_CREATE_RAW "
			      "said EPERM)");
	com_err(program_name, errno, "while asking %s for FS_IOC_CREATE_RAW",
		ro->target);
	return E2CB_EXIT_ERROR;
}

/* PATH, if it is there: an empty, unencrypted directory, opened */
static int open_existing(struct ro *ro)
{
	struct stat st, st2;
	struct dirent *de;
	int empty = 1;
	DIR *d;

	if (fstatat(ro->parent_fd, ro->leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		com_err(program_name, errno, "while looking at %s",
			ro->target);
		return E2CB_EXIT_ERROR;
	}
	if (!S_ISDIR(st.st_mode))
		return refuse(ro, "it exists and is not a directory");
	ro->top_fd = openat(ro->parent_fd, ro->leaf, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
	if (ro->top_fd < 0 || fstat(ro->top_fd, &st2) < 0 ||
	    st2.st_ino != st.st_ino) {
		com_err(program_name, errno, "while opening %s", ro->target);
		return E2CB_EXIT_ERROR;
	}
	ro->top_ino = st.st_ino;
	d = e2cb_dir_stream(ro->top_fd);
	if (!d) {
		com_err(program_name, errno, "while reading %s", ro->target);
		return E2CB_EXIT_ERROR;
	}
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	if (!empty)
		return refuse(ro, "it exists and is not an empty directory");
	if (is_encrypted(ro->top_fd, "") != 0)
		return refuse(ro, "it is an encrypted directory (an entry "
			      "below it needs a raw name, which PATH's "
			      "entries have only in an archive of it)");
	return 0;
}

/* MOUNTPOINT/PATH: its directory open, on ext4, with the ioctls */
static int open_target(struct ro *ro)
{
	char *dir, *slash;
	struct statfs sfs;
	size_t len;
	int ret;

	dir = strdup(ro->target);
	if (!dir)
		return E2CB_EXIT_ERROR;
	for (len = strlen(dir); len > 1 && dir[len - 1] == '/'; len--)
		dir[len - 1] = 0;
	slash = strrchr(dir, '/');
	ro->leaf = strdup(slash ? slash + 1 : dir);
	if (slash == dir)
		dir[1] = 0;
	else if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	if (!ro->leaf || !ro->leaf[0] || !strcmp(ro->leaf, ".") ||
	    !strcmp(ro->leaf, "..")) {
		free(dir);
		return refuse(ro, "PATH must name a directory to create, or "
			      "an empty one, below the mount point");
	}
	ro->parent_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ro->parent_fd < 0) {
		com_err(program_name, errno, "while opening %s", dir);
		free(dir);
		return E2CB_EXIT_ERROR;
	}
	free(dir);
	if (fstatfs(ro->parent_fd, &sfs) < 0 ||
	    sfs.f_type != EXT4_SUPER_MAGIC)
		return refuse(ro, "it is not on a mounted ext4 filesystem");
	ro->bs = sfs.f_bsize;
	ro->rs.online_bs = sfs.f_bsize;
	ro->rs.online_free_blocks = sfs.f_bfree;
	ro->rs.online_free_inodes = sfs.f_ffree;
	ret = probe(ro);
	if (!ret && is_encrypted(ro->parent_fd, "") != 0)
		ret = refuse(ro, "its directory is encrypted (PATH would "
			     "need a raw name)");
	if (!ret)
		ret = open_existing(ro);
	return ret;
}

/* What the first pass found that this target cannot take */
static int check_online(struct ro *ro)
{
	const struct plan *p = &ro->rs.plan;
	char msg[200];

	if (p->has_lblk_policy)
		return refuse(ro, "the archive holds IV_INO_LBLK_64 or "
			      "IV_INO_LBLK_32 policies, whose ciphertext "
			      "depends on inode numbers, which cannot be "
			      "chosen online (restore it offline with "
			      "--keep-inode-numbers --set-uuid)");
	if (p->enc_in_plain) {
		snprintf(msg, sizeof(msg), "entry %llu is an encrypted "
			 "non-directory in an unencrypted directory, which "
			 "the kernel cannot create",
			 (unsigned long long) p->enc_in_plain);
		return refuse(ro, msg);
	}
	if (p->has_encrypted_data && p->block_size != ro->bs) {
		snprintf(msg, sizeof(msg), "the archive's ciphertext is in "
			 "%u-byte blocks, the filesystem's are %u bytes",
			 p->block_size, ro->bs);
		return refuse(ro, msg);
	}
	if (p->root_encrypted && ro->top_fd >= 0)
		return refuse(ro, "the archive's root is an encrypted "
			      "directory, which is created with its own "
			      "context: PATH must not exist");
	return 0;
}

/* The directory @fd, open for its entries */
static errcode_t push_dir(struct ro *ro, int fd, int enc, int casefold,
			  const struct e2cb_entry *e, uint64_t ino)
{
	size_t old = ro->stack_size;
	struct ro_dir *d;
	errcode_t retval;

	if (e2cb_grow((void **) &ro->stack, &ro->stack_size, ro->depth,
		       sizeof(*ro->stack))) {
		close(fd);
		return EXT2_ET_NO_MEMORY;
	}
	/* a frame keeps its list of entries for the next at its depth */
	memset(ro->stack + old, 0, (ro->stack_size - old) * sizeof(*ro->stack));
	d = &ro->stack[ro->depth++];
	d->fd = fd;
	d->enc = enc;
	d->casefold = casefold;
	d->nkids = 0;
	retval = e2cb_ro_meta_from(&d->meta, ro, e, ino);
	return retval;
}

/*
 * PATH's ACLs, inherited from its parent's default ACL or its own:
 * new inodes would inherit them (posix_acl_create), which the archive
 * does not say.  The root's own are set when PATH is closed.
 */
static errcode_t drop_acls(int fd)
{
	static const char *const acls[] = {
		"system.posix_acl_default", "system.posix_acl_access"
	};
	size_t i;

	for (i = 0; i < sizeof(acls) / sizeof(acls[0]); i++)
		if (fremovexattr(fd, acls[i]) < 0 && errno != ENODATA &&
		    errno != EOPNOTSUPP)
			return errno;
	return 0;
}

/* The archive's root: PATH, made now unless it was there, empty */
static errcode_t make_top(struct ro *ro, const struct e2cb_entry *e,
			  struct e2cb_source *src)
{
	struct ro_dir parent;
	struct ext4_encrypted_name n;
	uint64_t ino;
	errcode_t retval;
	int fd;

	if (ro->top_fd >= 0) {
		fd = fcntl(ro->top_fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		retval = (e->rec.iflags & EXT4_CASEFOLD_FL) ?
			e2cb_ro_set_casefold(fd) : 0;
		if (!retval)
			retval = drop_acls(fd);
		if (retval) {
			close(fd);
			return retval;
		}
		retval = push_dir(ro, fd, 0, !!(e->rec.iflags &
						 EXT4_CASEFOLD_FL), e,
				  ro->top_ino);
		if (!retval)
			ro->stack[0].meta.set_owner = 1;
		return retval;
	}
	memset(&parent, 0, sizeof(parent));
	parent.fd = ro->parent_fd;
	memset(&n, 0, sizeof(n));
	n.name_len = strlen(ro->leaf) > EXT2_NAME_LEN ? 0 : strlen(ro->leaf);
	memcpy(n.name, ro->leaf, n.name_len);
	retval = e2cb_ro_make(ro, &parent, e, &n, src, &ino, &fd);
	if (retval)
		return retval;
	ro->top_made = 1;
	ro->top_ino = ino;
	ro->top_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	retval = ro->top_fd < 0 ? errno : drop_acls(fd);
	if (retval) {
		close(fd);
		return retval;
	}
	return push_dir(ro, fd, !!e->ctx, !!(e->rec.iflags &
					     EXT4_CASEFOLD_FL), e, ino);
}

/* Close the open directories deeper than @depth */
static errcode_t close_dirs(struct ro *ro, size_t depth)
{
	errcode_t retval = 0, err;

	while (ro->depth > depth) {
		err = e2cb_ro_close_dir(ro, &ro->stack[--ro->depth]);
		if (!retval)
			retval = err;
	}
	return retval;
}

/* One entry below the root */
static errcode_t make_entry(struct ro *ro, const struct e2cb_entry *e,
			    struct e2cb_source *src)
{
	struct ext4_encrypted_name n;
	struct ro_dir *dir;
	uint64_t ino;
	errcode_t retval;
	int fd;

	retval = close_dirs(ro, e->depth);
	if (retval)
		return retval;
	if (ro->depth != e->depth)
		return EXT2_ET_DIR_CORRUPTED;	/* the reader's order */
	dir = &ro->stack[e->depth - 1];
	if (e2cb_grow((void **) &dir->kids, &dir->kids_size, dir->nkids,
		       sizeof(*dir->kids)))
		return EXT2_ET_NO_MEMORY;
	e2cb_restore_entry_name(e, &n);
	retval = e2cb_ro_make(ro, dir, e, &n, src, &ino, &fd);
	if (retval || !ino)
		return retval;
	if (fd >= 0)
		return push_dir(ro, fd, dir->enc || e->ctx,
				dir->casefold ||
				(e->rec.iflags & EXT4_CASEFOLD_FL), e, ino);
	retval = e2cb_ro_meta_from(&dir->kids[dir->nkids], ro, e, ino);
	dir->nkids++;
	return retval;
}

/* -p: the entries made so far, once a second and at the end */
static void show_progress(struct ro *ro, int done)
{
	time_t now = time(NULL);

	if (!ro->rs.opts->progress || (!done && now == ro->last))
		return;
	ro->last = now;
	fprintf(stderr, "\r%s: %llu/%llu entries%s", program_name,
		(unsigned long long) ro->rs.done_entries,
		(unsigned long long) ro->rs.plan.entries, done ? "\n" : "");
}

/* One entry of the writing pass: 1 to stop, with ro->retval */
static int write_one(void *priv, struct e2cb_source *src,
		     const struct e2cb_entry *e)
{
	struct ro *ro = priv;
	struct restore *rs = &ro->rs;

	if (e2cb_restore_stopped())
		return 1;
	ro->at = e;
	if (!e2cb_restore_same_entry(rs))
		return e2cb_restore_changed(rs, e->path);
	rs->writing = 1;
	ro->retval = e->depth ? make_entry(ro, e, src) : make_top(ro, e, src);
	if (ro->retval)
		return 1;
	rs->done_entries++;
	show_progress(ro, 0);
	return 0;
}

/* Pass two: the stream, checked once already, goes in */
static int write_pass(struct ro *ro)
{
	struct restore *rs = &ro->rs;
	struct e2cb_sink sink = { .entry = write_one, .priv = ro };
	int ret;

	ret = e2cb_restore_rewind(rs);
	if (ret)
		return ret;
	ret = e2cb_source_run(rs->src, &sink);
	show_progress(ro, 1);
	if (!ret && !e2cb_restore_stopped()) {
		ro->at = NULL;
		ro->retval = close_dirs(ro, 0);
		if (!ro->retval)
			ro->retval = e2cb_ro_set_flags(ro);
	}
	if (e2cb_restore_stopped())
		return E2CB_EXIT_ERROR;
	if (ret == E2CB_SOURCE_FAILED)
		return e2cb_restore_changed(rs, e2cb_source_error(rs->src));
	if (ro->retval) {
		if (ro->at)
			e2cb_report_path(ro->at->path, strlen(ro->at->path),
					 ro->retval, "while restoring it");
		else
			com_err(program_name, ro->retval, "while finishing "
				"the last directories");
		if (ro->retval == EOPNOTSUPP && ro->at &&
		    (ro->at->rec.iflags & EXT4_CASEFOLD_FL))
			com_err(program_name, 0, "%s: a casefolded directory "
				"needs the casefold feature (tune2fs -O "
				"casefold, unmounted)", ro->target);
		return E2CB_EXIT_ERROR;
	}
	if (ret)
		return ret;
	return e2cb_restore_same_stream(rs);
}

/* Each entry's descriptors and copies, whatever became of the pass */
static void ro_free(struct ro *ro)
{
	struct ro_link *l;
	size_t pos = 0, i;
	uint32_t ino;

	while (ro->depth) {
		struct ro_dir *d = &ro->stack[--ro->depth];

		for (i = 0; i < d->nkids; i++)
			e2cb_ro_meta_free(&d->kids[i]);
		e2cb_ro_meta_free(&d->meta);
		close(d->fd);
	}
	for (i = 0; i < ro->stack_size; i++)
		free(ro->stack[i].kids);
	free(ro->stack);
	while ((l = e2cb_ino_map_next(&ro->links, &pos, &ino))) {
		if (l->dirfd >= 0)
			close(l->dirfd);
		if (l->pathfd >= 0)
			close(l->pathfd);
	}
	e2cb_ino_map_free(&ro->links);
	e2cb_ino_map_free(&ro->made);
	for (i = 0; i < ro->nflags; i++) {
		close(ro->flags[i].pathfd);
		free(ro->flags[i].path);
	}
	free(ro->flags);
	free(ro->buf);
	free(ro->leaf);
	if (ro->top_fd >= 0)
		close(ro->top_fd);
	if (ro->parent_fd >= 0)
		close(ro->parent_fd);
	e2cb_restore_plan_free(&ro->rs.plan);
}

/* A descriptor for each directory open and each inode linked to */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int restore_online(struct ro *ro)
{
	int ret;

	ret = open_target(ro);
	if (!ret && !e2cb_restore_stopped())
		ret = e2cb_restore_plan(&ro->rs);
	if (!ret && !e2cb_restore_stopped())
		ret = check_online(ro);
	if (ret || e2cb_restore_stopped())
		return ret ? ret : E2CB_EXIT_ERROR;
	ret = write_pass(ro);
	if (ret || e2cb_restore_stopped()) {
		if (e2cb_restore_stopped())
			com_err(program_name, 0, "stopped by %s",
				e2cb_restore_signal_name(
					e2cb_restore_stopped()));
		e2cb_ro_undo(ro);
		return E2CB_EXIT_ERROR;
	}
	printf("%s: restored %llu entries (%llu inodes) from %s online\n",
	       ro->target, (unsigned long long) ro->rs.done_entries,
	       (unsigned long long) ro->rs.plan.inodes, ro->rs.shown);
	if (ro->unset_flags) {
		com_err(program_name, 0, "%u entries lack inode flags the "
			"archive gives them (see above)", ro->unset_flags);
		return E2CB_EXIT_INCOMPLETE;
	}
	return 0;
}

/*
 * restore --online ARCHIVE|- MOUNTPOINT/PATH: the archive source into
 * the mounted filesystem, checked whole before the first write.
 */
int e2cb_restore_online(const struct e2cb_restore_opts *opts)
{
	struct e2cb_source *src;
	struct ro ro;
	int ret, sig;

	if (e2cb_archive_source_open(opts->archive, 0, &src))
		return E2CB_EXIT_ERROR;
	memset(&ro, 0, sizeof(ro));
	ro.rs.opts = opts;
	ro.rs.src = src;
	ro.rs.shown = src->shown;
	ro.rs.lock_fd = -1;
	ro.rs.uid = geteuid();
	ro.rs.gid = getegid();
	ro.rs.umask = e2cb_get_umask();
	e2cb_ino_map_init(&ro.rs.plan.linked, sizeof(struct link_info));
	e2cb_ino_map_init(&ro.links, sizeof(struct ro_link));
	e2cb_ino_map_init(&ro.made, 1);
	ro.target = opts->device;
	ro.parent_fd = -1;
	ro.top_fd = -1;
	ro.buf = malloc(RO_DATA_BUF);
	if (!ro.buf) {
		e2cb_source_close(src);
		return E2CB_EXIT_ERROR;
	}
	raise_fd_limit();
	/*
	 * The modes are the archive's (POLICY applies ro.rs.umask): the
	 * kernel masks a new inode's with the umask where no default ACL
	 * is inherited (posix_acl_create)
	 */
	umask(0);
	e2cb_restore_catch_signals();
	ret = restore_online(&ro);
	umask(ro.rs.umask);
	sig = e2cb_restore_stopped();
	ro_free(&ro);
	e2cb_source_close(src);
	if (sig)
		e2cb_restore_die_of_signal();
	e2cb_restore_release_signals();
	return ret;
}
