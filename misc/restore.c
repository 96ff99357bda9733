/*
 * restore.c --- e2cryptbak restore: write an archive back into an
 * unmounted ext4 filesystem without the key
 *
 * Names, contexts and ciphertext go back exactly as they were stored, so
 * the owner's key opens every file again.  The archive is checked whole
 * (and the target measured against it) before the first write; the
 * target is never written while mounted.  A fatal signal stops the
 * restore between two writes, with the target closed consistent.
 *
 * This file is the command: the archive, the target, the two passes.
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
#include <signal.h>
#include <unistd.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "restore.h"

/*
 * SIGHUP, SIGINT and SIGTERM only ask us to stop: the loops look at
 * stop_signal between entries and between the data pieces of a file,
 * the entry being written is taken back, the filesystem is closed
 * consistent, and then we die of the signal (a shell still sees it).
 * Signals that were ignored (nohup) stay ignored.
 */
static struct e2cb_saved_signals saved_signals;
static volatile sig_atomic_t stop_signal;

/* For the loops of the other files: stop between two writes */
int e2cb_restore_stopped(void)
{
	return stop_signal;
}

static void note_signal(int sig)
{
	stop_signal = sig;
}

void e2cb_restore_catch_signals(void)
{
	/* reads of the archive and writes to the target go on */
	e2cb_catch_signals(&saved_signals, note_signal, SA_RESTART);
}

void e2cb_restore_release_signals(void)
{
	e2cb_release_signals(&saved_signals);
}

const char *e2cb_restore_signal_name(int sig)
{
	switch (sig) {
	case SIGHUP: return "SIGHUP";
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	}
	return "a signal";
}

/* Everything is closed: die of the signal that stopped us. */
void e2cb_restore_die_of_signal(void)
{
	int sig = stop_signal;

	e2cb_restore_release_signals();
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * EXT2_FLAG_EXCLUSIVE keeps a second writer off a block device only; an
 * image file takes a lock, held until the filesystem is closed.  Backup,
 * extract and list look for it (e2cb_check_source), however they reach
 * the same blocks.
 */
static int lock_target(struct restore *rs)
{
	const char *dev = rs->opts->device;

	rs->lock_fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (rs->lock_fd < 0)
		return 0;		/* opening it for real says why */
	if (!flock(rs->lock_fd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno == EWOULDBLOCK) {
		/* names the holder, unless it let go meanwhile */
		if (!e2cb_check_source(dev, E2CB_CHECK_WRITE |
						E2CB_CHECK_NOLOCK))
			com_err(program_name, 0, "%s is in use by another "
				"e2cryptbak restore (or another program holds "
				"a lock on it)", dev);
		return -1;
	}
	/* a filesystem without flock (some NFS): go on as before */
	com_err(program_name, errno, "while locking %s (going on without "
		"the lock)", dev);
	return 0;
}

/*
 * libext2fs opens the undo file by name, following a symlink, and as
 * root: in a directory others can write, the name could be a symlink to
 * any file, which the undo records would then overwrite.  Open it here
 * without following one, make sure it is a plain file, and hand
 * libext2fs /proc/self/fd/N, this very file.
 */
static int open_undo(const char *name, char *path, size_t size)
{
	struct stat st;
	int fd;

	fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		com_err(program_name, errno, "while opening the undo file %s",
			name);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		com_err(program_name, 0, "%s: the undo file must be a regular "
			"file with one name", name);
		close(fd);
		return -1;
	}
	snprintf(path, size, "/proc/self/fd/%d", fd);
	if (access(path, F_OK) < 0)
		snprintf(path, size, "%s", name);	/* no /proc */
	return fd;
}

static errcode_t open_target(struct restore *rs)
{
	io_manager io = unix_io_manager;
	errcode_t retval;
	char undo[4096];
	int undo_fd = -1;

	if (lock_target(rs))
		return EXT2_ET_FILE_RO;
	if (rs->opts->undo_file) {
		undo_fd = open_undo(rs->opts->undo_file, undo, sizeof(undo));
		if (undo_fd < 0)
			return EXT2_ET_FILE_RO;
		set_undo_io_backing_manager(unix_io_manager);
		retval = set_undo_io_backup_file(undo);
		if (retval) {
			com_err(program_name, retval, "while setting up the "
				"undo file %s", rs->opts->undo_file);
			close(undo_fd);
			return retval;
		}
		io = undo_io_manager;
	}
	retval = e2cb_open_fs2(rs->opts->device, EXT2_FLAG_RW |
			       EXT2_FLAG_EXCLUSIVE, io, &rs->fs);
	/* the undo manager has opened its own descriptors of it */
	if (undo_fd >= 0)
		close(undo_fd);
	if (retval)
		return retval;
	/* bad group descriptors can make libext2fs overrun its buffers */
	retval = ext2fs_check_desc(rs->fs);
	if (retval) {
		com_err(program_name, retval, "in the group descriptors of "
			"%s; run e2fsck", rs->opts->device);
		return retval;
	}
	retval = ext2fs_read_bitmaps(rs->fs);
	if (retval)
		com_err(program_name, retval, "while reading the bitmaps of %s",
			rs->opts->device);
	else
		e2cb_restore_fault_install(rs->fs);
	return retval;
}

/*
 * The checks read the whole archive and may take long: the target, an
 * image file say, may have been mounted through a loop device meanwhile.
 * Asked again right before the first write.
 */
static int check_unmounted(struct restore *rs)
{
	if (!e2cb_check_source(rs->opts->device, E2CB_CHECK_WRITE))
		return 0;
	com_err(program_name, 0, "refusing to restore: %s became busy while "
		"the archive was checked; nothing was written",
		rs->opts->device);
	return E2CB_EXIT_ERROR;
}

static void adjust_salt(struct restore *rs, const struct e2cb_header *h)
{
	uint8_t *have = rs->fs->super->s_encrypt_pw_salt;
	char want[E2CB_SALT_STRLEN], cur[E2CB_SALT_STRLEN];

	if (!rs->plan.has_v1 || !e2cb_salt_string(h->encrypt_pw_salt, want) ||
	    !memcmp(have, h->encrypt_pw_salt, 16))
		return;
	if (e2cb_salt_string(have, cur)) {
		printf("%s: passphrase salt %s kept; \"e4crypt add_key -S "
		       "%s\" derives the archive's passphrase keys\n",
		       rs->opts->device, cur, want);
		return;
	}
	memcpy(have, h->encrypt_pw_salt, 16);
	printf("%s: passphrase salt set to the archive's, %s\n",
	       rs->opts->device, want);
}

/* Features the archive needs, set only after every check passed */
static void adjust_features(struct restore *rs, const struct e2cb_header *h)
{
	struct ext2_super_block *sb = rs->fs->super;

	if (rs->plan.has_encrypted && !ext2fs_has_feature_encrypt(sb)) {
		ext2fs_set_feature_encrypt(sb);
		printf("%s: encrypt feature turned on\n", rs->opts->device);
	}
	if (rs->plan.has_verity && !ext2fs_has_feature_verity(sb)) {
		ext2fs_set_feature_verity(sb);
		printf("%s: verity feature turned on\n", rs->opts->device);
	}
	adjust_salt(rs, h);
	if (!rs->plan.has_lblk_policy)
		goto out;
	if (memcmp(sb->s_uuid, h->uuid, 16)) {
		/* keep checksums valid across the UUID change */
		if (ext2fs_has_feature_metadata_csum(sb) &&
		    !ext2fs_has_feature_csum_seed(sb)) {
			sb->s_checksum_seed = ext2fs_crc32c_le(~0, sb->s_uuid,
							       16);
			ext2fs_set_feature_csum_seed(sb);
		}
		memcpy(sb->s_uuid, h->uuid, 16);
		ext2fs_init_csum_seed(rs->fs);
		ext2fs_set_gdt_csum(rs->fs);
		printf("%s: UUID set to the archive's\n", rs->opts->device);
	}
	ext2fs_set_feature_stable_inodes(sb);
out:
	ext2fs_mark_super_dirty(rs->fs);
}

static void show_progress(struct restore *rs, time_t *last, int done)
{
	time_t now = time(NULL);

	if (!rs->opts->progress || (!done && now == *last))
		return;
	*last = now;
	fprintf(stderr, "\r%s: %llu/%llu entries%s", program_name,
		(unsigned long long) rs->done_entries,
		(unsigned long long) rs->plan.entries, done ? "\n" : "");
}

/* The writing pass reads what the first one checked, or stops. */
int e2cb_restore_changed(struct restore *rs, const char *why)
{
	com_err(program_name, 0, "%s changed since it was checked: %s",
		rs->shown, why);
	return E2CB_EXIT_ERROR;
}

int e2cb_restore_same_entry(struct restore *rs)
{
	return e2cb_digests_same(&rs->plan.digests, rs->done_entries,
				 e2cb_source_entry_digest(rs->src));
}

/* The writing pass starts again, from the header that was checked */
int e2cb_restore_rewind(struct restore *rs)
{
	const uint8_t *d;

	if (e2cb_source_rewind(rs->src))
		return E2CB_EXIT_ERROR;
	d = e2cb_source_entry_digest(rs->src);
	if (d && memcmp(rs->plan.hdr_digest, d, sizeof(rs->plan.hdr_digest)))
		return e2cb_restore_changed(rs, "its header");
	return 0;
}

/* At the end of the writing pass: the stream was the one checked */
int e2cb_restore_same_stream(struct restore *rs)
{
	uint8_t got[E2CB_STREAM_DIGEST_LEN];
	errcode_t retval;

	retval = e2cb_source_stream_digest(rs->src, got);
	if (retval) {
		com_err(program_name, retval, "while reading %s", rs->shown);
		return E2CB_EXIT_ERROR;
	}
	if (rs->done_entries != rs->plan.entries ||
	    memcmp(got, rs->plan.stream, sizeof(got)))
		return e2cb_restore_changed(rs, "its bytes are not the ones "
					    "checked");
	return 0;
}

/* What the writing pass was at, for its messages */
struct write_pass {
	struct restore *rs;
	const struct e2cb_entry *e;
	errcode_t retval;
	time_t last;
};

/* One entry of pass two: 1 to stop, with wp->retval or a signal */
static int write_one(void *priv, struct e2cb_source *src EXT2FS_ATTR((unused)),
		     const struct e2cb_entry *e)
{
	struct write_pass *wp = priv;
	struct restore *rs = wp->rs;

	if (stop_signal)
		return 1;
	wp->e = e;
	if (!e2cb_restore_same_entry(rs))
		return e2cb_restore_changed(rs, e->path);
	e2cb_restore_fault_arm(rs->done_entries);
	wp->retval = e2cb_restore_entry(rs, e);
	e2cb_restore_fault_arm(-1);
	if (wp->retval)
		return 1;
	rs->done_entries++;
	show_progress(rs, &wp->last, 0);
	return 0;
}

/* Pass two: the stream, checked once already, goes in. */
static int write_entries(struct restore *rs)
{
	struct write_pass wp = { .rs = rs };
	struct e2cb_sink sink = { .entry = write_one, .priv = &wp };
	errcode_t flushed;
	int ret;

	/* adjust_features() wrote what the checked header asked */
	ret = e2cb_restore_rewind(rs);
	if (ret)
		return ret;
	ret = e2cb_source_run(rs->src, &sink);
	if (!ret && !stop_signal) {
		wp.e = NULL;
		e2cb_restore_fault_arm(rs->done_entries);
		wp.retval = e2cb_restore_close_dirs(rs, 0);
		e2cb_restore_fault_arm(-1);
	}
	/* stopped or not, what the directories hold goes to disk */
	flushed = e2cb_restore_flush_dirs(rs);
	if (flushed) {
		com_err(program_name, flushed, "while writing the names of "
			"the open directories");
		return E2CB_EXIT_ERROR;
	}
	show_progress(rs, &wp.last, 1);
	if (stop_signal)
		return E2CB_EXIT_ERROR;
	if (ret == E2CB_SOURCE_FAILED)
		return e2cb_restore_changed(rs, e2cb_source_error(rs->src));
	if (wp.retval) {
		com_err(program_name, wp.retval, "while restoring %s",
			wp.e ? wp.e->path : "the last directories");
		return E2CB_EXIT_ERROR;
	}
	if (ret)
		return ret;
	return e2cb_restore_same_stream(rs);
}

static void restore_free(struct restore *rs)
{
	size_t i;

	for (i = 0; i < rs->depth; i++)
		ext2fs_dir_append_free(&rs->stack[i].app);
	free(rs->stack);
	e2cb_restore_plan_free(&rs->plan);
	e2cb_restore_fill_free(&rs->fill);
	ext2fs_ea_share_free(rs->ea_share);
	free(rs->taken.r);
}

/* The target as it stands: flushed only if something was written */
static int close_target(struct restore *rs)
{
	errcode_t retval = 0;

	e2cb_restore_release_fixed(rs);
	if (rs->fs && rs->writing) {
		retval = ext2fs_close_free(&rs->fs);
		if (retval)
			com_err(program_name, retval, "while closing %s",
				rs->opts->device);
	} else if (rs->fs) {
		/* only the MMP block, which opening it marked as ours */
		ext2fs_mmp_stop(rs->fs);
		ext2fs_free(rs->fs);
		rs->fs = NULL;
	}
	if (rs->lock_fd >= 0)
		close(rs->lock_fd);
	rs->lock_fd = -1;
	return retval ? E2CB_EXIT_ERROR : 0;
}

/* Everything checked against the target, before the first write */
static int check_target(struct restore *rs)
{
	int ret;

	ret = e2cb_restore_preflight(rs, &rs->plan.hdr);
	if (!ret)
		ret = e2cb_restore_prepare_path(rs, 0);
	if (!ret)
		ret = e2cb_restore_check_collisions(rs);
	if (!ret)
		ret = e2cb_restore_check_inodes_free(rs);
	if (!ret && !stop_signal)
		ret = check_unmounted(rs);
	return ret;
}

/* The writing pass, once every check passed */
static int write_target(struct restore *rs)
{
	int ret;

	rs->writing = 1;
	if (e2cb_restore_reserve_fixed(rs)) {
		com_err(program_name, EXT2_ET_NO_MEMORY, "while holding the "
			"inode numbers to keep");
		return E2CB_EXIT_ERROR;
	}
	/* directories made on the way to PATH count as the root's */
	e2cb_restore_fault_arm(0);
	ret = e2cb_restore_prepare_path(rs, 1);
	if (!ret) {
		adjust_features(rs, &rs->plan.hdr);
		ret = write_entries(rs);
	}
	return ret;
}

/* What was restored, or how far it got */
static void report(struct restore *rs, int ret)
{
	const struct e2cb_restore_opts *opts = rs->opts;

	if (stop_signal)
		com_err(program_name, 0, "stopped by %s",
			e2cb_restore_signal_name(stop_signal));
	if (ret || stop_signal)
		com_err(program_name, 0, "restored %llu of %llu entries; the "
			"target is consistent up to there%s%s",
			(unsigned long long) rs->done_entries,
			(unsigned long long) rs->plan.entries,
			opts->undo_file ? "; e2undo rolls it back with " : "",
			opts->undo_file ? opts->undo_file : "");
	else
		printf("%s: %s %llu entries (%llu inodes) from %s\n",
		       opts->device, rs->src->archive ? "restored" : "copied",
		       (unsigned long long) rs->done_entries,
		       (unsigned long long) rs->plan.inodes, rs->shown);
	if (rs->unindexed)
		printf("%s: %u director%s left unindexed: too large for "
		       "an index of %d levels, or no room for one\n",
		       opts->device, rs->unindexed,
		       rs->unindexed == 1 ? "y" : "ies",
		       ext2fs_has_feature_largedir(rs->fs->super) ? 3 : 2);
	/* the kernel keeps the count at 1 only in an indexed directory */
	if (rs->nlink_overflows &&
	    (rs->unindexed || !ext2fs_has_feature_dir_index(rs->fs->super)))
		printf("%s: %u director%s with more than %u subdirectories "
		       "not indexed; run e2fsck -fD before the kernel adds "
		       "subdirectories there\n", opts->device,
		       rs->nlink_overflows, rs->nlink_overflows == 1 ? "y" :
		       "ies", EXT2_LINK_MAX - 2);
}

/*
 * The restore sink: @src, checked whole against the target, written
 * into it.  The caller closes @src, unless a signal stopped us.
 */
int e2cb_restore_source(const struct e2cb_restore_opts *opts,
			struct e2cb_source *src)
{
	struct restore rs;
	int ret;

	memset(&rs, 0, sizeof(rs));
	e2cb_ino_map_init(&rs.plan.linked, sizeof(struct link_info));
	rs.opts = opts;
	rs.src = src;
	rs.shown = src->shown;
	rs.lock_fd = -1;
	rs.uid = geteuid();
	rs.gid = getegid();
	rs.umask = e2cb_get_umask();
	e2cb_restore_catch_signals();
	if (open_target(&rs)) {
		ret = E2CB_EXIT_ERROR;
		goto out;
	}
	ret = e2cb_restore_plan(&rs);
	if (ret || stop_signal)
		goto out;
	ret = check_target(&rs);
	if (ret || stop_signal)
		goto out;
	ret = write_target(&rs);
	report(&rs, ret);
out:
	restore_free(&rs);
	if (close_target(&rs))
		ret = E2CB_EXIT_ERROR;
	if (stop_signal) {
		e2cb_source_close(src);
		if (!rs.writing)
			com_err(program_name, 0, "stopped by %s before the "
				"first write; %s is unchanged",
				e2cb_restore_signal_name(stop_signal), opts->device);
		e2cb_restore_die_of_signal();
	}
	e2cb_restore_release_signals();
	return ret;
}

int e2cb_restore(const struct e2cb_restore_opts *opts)
{
	struct e2cb_source *src;
	int ret;

	/* until the target is open a signal just kills us: the spool is
	 * a deleted file */
	if (e2cb_archive_source_open(opts->archive, 0, &src))
		return E2CB_EXIT_ERROR;
	ret = e2cb_restore_source(opts, src);
	e2cb_source_close(src);
	return ret;
}

/* Whether @a and @b name the same file or device (both exist) */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return 0;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * copy: the image source, walked as backup walks it, into the restore
 * sink.  Every check of restore applies; the source is read twice,
 * once for the checks, once for the writes.
 */
int e2cb_copy(const struct e2cb_copy_opts *opts)
{
	const struct e2cb_trailer *t;
	struct e2cb_source *src;
	int ret;

	if (same_file(opts->source, opts->restore.device)) {
		com_err(program_name, 0, "refusing to copy: %s and %s are the "
			"same filesystem", opts->source, opts->restore.device);
		return E2CB_EXIT_ERROR;
	}
	if (e2cb_image_source_open(opts->source, opts->source_path,
				   opts->stale, &src))
		return E2CB_EXIT_ERROR;
	ret = e2cb_restore_source(&opts->restore, src);
	t = src->ops->trailer(src);
	if (!ret && t && t->skipped) {
		com_err(program_name, 0, "%llu entries of %s were skipped or "
			"found damaged (see above): the copy is incomplete",
			(unsigned long long) t->skipped, opts->source);
		ret = E2CB_EXIT_INCOMPLETE;
	}
	e2cb_source_close(src);
	return ret;
}
