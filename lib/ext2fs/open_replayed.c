/*
 * open_replayed.c --- open an ext4 image as the kernel would mount it
 *
 * A copy of a filesystem in use (a VM or LVM snapshot, dd of a running
 * disk) holds committed transactions that only its journal has, and
 * orphans the kernel would clean up on mount.  Reading its metadata as
 * it lies on disk gives a tree that never existed: files missing,
 * deleted ones back, renames undone.  Here the kernel's mount-time work
 * is done in memory, in the kernel's order -- the journal, then the fast
 * commits, then the orphans -- on a copy-on-write layer over the device
 * opened read-only (replay_io.c): the image is never written.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "journal_replay.h"

int ext2fs_needs_replay(ext2_filsys fs)
{
	return ext2fs_has_feature_journal_needs_recovery(fs->super) ||
		fs->super->s_last_orphan ||
		ext2fs_has_feature_orphan_present(fs->super);
}

/* The replayed filesystem, opened over @chan (which it takes over) */
static errcode_t open_over(const char *device, int flags, io_channel chan,
			   ext2_filsys *ret_fs)
{
	io_channel left;
	errcode_t retval;

	ext2fs_replay_io_adopt(chan);
	/* writable, for the fast commits and orphans: the layer keeps it */
	retval = ext2fs_open2(device, NULL, flags | EXT2_FLAG_RW |
			      EXT2_FLAG_SKIP_MMP, 0, 0, replay_io_manager,
			      ret_fs);
	left = ext2fs_replay_io_adopt(NULL);
	if (left)
		io_channel_close(left);
	return retval;
}

/* What the mount leaves in memory that the caller must see */
static void settle_super(ext2_filsys fs, ext2_filsys stale)
{
	ext2fs_clear_feature_journal_needs_recovery(fs->super);
	/* ext4_load_journal() keeps the error state the disk had */
	fs->super->s_state |= stale->super->s_state & EXT2_ERROR_FS;
}

/* From here on the filesystem is only read: nothing to flush anywhere */
static void make_read_only(ext2_filsys fs)
{
	fs->flags &= ~(EXT2_FLAG_RW | EXT2_FLAG_DIRTY | EXT2_FLAG_CHANGED |
		       EXT2_FLAG_BB_DIRTY | EXT2_FLAG_IB_DIRTY);
}

static errcode_t replay(const char *device, int flags, ext2_filsys stale,
			struct ext2fs_replay_stats *st, ext2_filsys *ret_fs)
{
	struct ext2fs_journal *j = NULL;
	ext2_filsys fs = NULL;
	io_channel chan = NULL;
	errcode_t retval;

	retval = replay_io_manager->open(device, 0, &chan);
	if (retval)
		goto errout;
	retval = ext2fs_replay_io_set_unit(chan, stale->blocksize);
	if (retval) {
		io_channel_close(chan);
		goto errout;
	}
	if (ext2fs_has_feature_journal_needs_recovery(stale->super)) {
		retval = ext2fs_journal_load(stale, &j);
		if (!retval)
			retval = ext2fs_journal_recover(j, chan, st);
		if (retval) {
			if (j)
				snprintf(st->why, sizeof(st->why), "%s",
					 j->why);
			io_channel_close(chan);
			goto errout;
		}
	}
	retval = open_over(device, flags, chan, &fs);
	if (retval) {
		snprintf(st->why, sizeof(st->why), "cannot open the "
			 "filesystem its journal leaves");
		goto errout;
	}
	settle_super(fs, stale);
	if (j && j->start && (j->incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT)) {
		retval = ext2fs_fc_replay(fs, j, st);
		if (retval) {
			if (!st->why[0])
				snprintf(st->why, sizeof(st->why), "%s",
					 j->why);
			goto errout;
		}
	}
	retval = ext2fs_orphan_cleanup(fs, st);
	if (retval) {
		if (!st->why[0])
			snprintf(st->why, sizeof(st->why), "while handling "
				 "the orphan inodes");
		goto errout;
	}
	/*
	 * The kernel sets it with needs_recovery at a mount and clears both
	 * at a clean unmount: the orphans are done, as a backup --online
	 * header and one of the image the kernel unmounted say
	 */
	ext2fs_clear_feature_orphan_present(fs->super);
	make_read_only(fs);
	st->state = EXT2FS_REPLAY_DONE;
	*ret_fs = fs;
	fs = NULL;
errout:
	if (fs) {
		make_read_only(fs);
		ext2fs_close_free(&fs);
	}
	ext2fs_journal_free(j);
	return retval;
}

/*
 * Replay @stale (open read-only on @device) into a new filesystem handle
 * in *@ret_fs; @stale is left open, for the caller to close.  A clean
 * filesystem, or EXT2FS_REPLAY_STALE, gives back @stale itself.
 */
errcode_t ext2fs_replay_fs(ext2_filsys stale, const char *device,
			   int open_flags, int replay_flags,
			   struct ext2fs_replay_stats *stats,
			   ext2_filsys *ret_fs)
{
	struct ext2fs_replay_stats dummy;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	*ret_fs = stale;
	if (!ext2fs_needs_replay(stale))
		return 0;
	if (replay_flags & EXT2FS_REPLAY_STALE) {
		stats->state = EXT2FS_REPLAY_SKIPPED;
		return 0;
	}
	*ret_fs = NULL;
	return replay(device, open_flags & ~EXT2_FLAG_RW, stale, stats,
		      ret_fs);
}

errcode_t ext2fs_open_replayed(const char *device, int open_flags,
			       int replay_flags,
			       struct ext2fs_replay_stats *stats,
			       ext2_filsys *ret_fs)
{
	ext2_filsys stale = NULL;
	errcode_t retval;

	retval = ext2fs_open2(device, NULL, open_flags & ~EXT2_FLAG_RW, 0, 0,
			      unix_io_manager, &stale);
	if (retval)
		return retval;
	retval = ext2fs_replay_fs(stale, device, open_flags, replay_flags,
				  stats, ret_fs);
	if (retval || *ret_fs != stale)
		ext2fs_close_free(&stale);
	return retval;
}
