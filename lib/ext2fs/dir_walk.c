/*
 * dir_walk.c --- read a directory's entries, damage and all
 *
 * ext2fs_dir_iterate2() gives up at the first block that cannot be
 * read, fails its checksum or holds a bad entry, and whatever follows is
 * lost.  A backup of a damaged filesystem must save what can be read.
 * This walker reads the blocks one by one, checks every entry as
 * ext2fs_process_dir_block() does, hands out the good ones and reports
 * the damage through a callback, saying what was lost; then it goes on,
 * with the next entry when the damaged one's name length says where that
 * is (e2fsck's salvage_directory() guess), else with the next block.
 * A block that fails its checksum but whose entries all pass the checks
 * is read, as e2fsck keeps it, and reported: its names may be damaged.
 * The htree index is never used: its blocks hold no live entries, and a
 * damaged index hides nothing.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

struct walk {
	ext2_filsys fs;
	ext2_ino_t dir;
	ext2fs_dir_walk_func func;
	ext2fs_dir_damage_func damage;
	void *priv;
	char *buf;
	blk64_t next_lblk;		/* the first block not yet read */
	int aborted;
};

static void report(ext2_filsys fs, struct walk *w, blk64_t lblk,
		   blk64_t pblk, unsigned int offset, ext2_ino_t ino,
		   errcode_t retval, int lost)
{
	struct ext2fs_dir_damage d;

	memset(&d, 0, sizeof(d));
	d.lblk = lblk;
	d.pblk = pblk;
	d.offset = offset;
	d.ino = ino;
	d.err = retval;
	d.lost = lost;
	if (w->damage)
		w->damage(fs, &d, w->priv);
}

/*
 * The entry at @off of a block whose entries end at @end: 0 when sound,
 * else what is wrong with it.  *@rec_len is set when the record itself
 * is sound (even if what it holds is not).
 */
static errcode_t check_entry(ext2_filsys fs, char *buf, unsigned int off,
			     unsigned int end, unsigned int *rec_len)
{
	struct ext2_dir_entry *de = (struct ext2_dir_entry *) (buf + off);
	unsigned int len = 0, name_len;

	*rec_len = 0;
	if (end - off < 8)
		return EXT2_ET_CRYPT_DIRENT_OVERRUN;
	if (ext2fs_get_rec_len(fs, de, &len))
		return EXT2_ET_CRYPT_DIRENT_BAD_REC_LEN;
	name_len = ext2fs_dirent_name_len(de);
	if (len < 8 || len % 4)
		return EXT2_ET_CRYPT_DIRENT_BAD_REC_LEN;
	if (len > end - off)
		return EXT2_ET_CRYPT_DIRENT_OVERRUN;
	*rec_len = len;
	if (name_len + 8 > len || (de->inode && name_len == 0))
		return EXT2_ET_CRYPT_DIRENT_BAD_NAME_LEN;
	return 0;
}

static void walk_block(ext2_filsys fs, struct walk *w, blk64_t lblk,
		       blk64_t pblk, int csum_bad)
{
	struct ext2_dir_entry *de;
	unsigned int off = 0, end = fs->blocksize, rec_len, next, skip;
	errcode_t retval;
	int damaged = 0, ret;

	while (off < end && !w->aborted) {
		de = (struct ext2_dir_entry *) (w->buf + off);
		retval = check_entry(fs, w->buf, off, end, &rec_len);
		if (retval && rec_len) {
			/* the record is sound, what it holds is not */
			report(fs, w, lblk, pblk, off, de->inode, retval,
			       EXT2FS_DIR_LOST_ENTRY);
			damaged = 1;
			off += rec_len;
			continue;
		}
		if (retval) {
			damaged = 1;
			skip = 0;
			if (end - off >= 8)
				skip = EXT2_DIR_REC_LEN(
					ext2fs_dirent_name_len(de));
			next = off + skip;
			if (skip > 8 && next <= end && (next == end ||
			    !check_entry(fs, w->buf, next, end, &rec_len))) {
				report(fs, w, lblk, pblk, off,
				       end - off >= 8 ? de->inode : 0, retval,
				       EXT2FS_DIR_LOST_ENTRY);
				off = next;
				continue;
			}
			report(fs, w, lblk, pblk, off,
			       end - off >= 8 ? de->inode : 0, retval,
			       EXT2FS_DIR_LOST_REST_OF_BLOCK);
			break;
		}
		if (de->inode) {
			ret = w->func(fs, de, end - off, w->priv);
			if (ret & DIRENT_ABORT)
				w->aborted = 1;
		}
		off += rec_len;
	}
	if (csum_bad && !damaged && !w->aborted)
		report(fs, w, lblk, pblk, 0, 0, EXT2_ET_DIR_CSUM_INVALID,
		       EXT2FS_DIR_LOST_NOTHING);
}

static int run_proc(ext2_filsys fs, blk64_t lblk, blk64_t pblk,
		    blk64_t count, void *priv)
{
	struct walk *w = priv;
	errcode_t retval;
	blk64_t i;

	for (i = 0; i < count && !w->aborted; i++) {
		w->next_lblk = lblk + i + 1;
		retval = ext2fs_read_dir_block4(fs, pblk + i, w->buf, 0, w->dir);
		if (retval && retval != EXT2_ET_DIR_CSUM_INVALID) {
			report(fs, w, lblk + i, pblk + i, 0, 0, retval,
			       EXT2FS_DIR_LOST_BLOCK);
			continue;
		}
		walk_block(fs, w, lblk + i, pblk + i, retval != 0);
	}
	return w->aborted ? BLOCK_ABORT : 0;
}

/* Inline directories are small and never encrypted: libext2fs reads them. */
static int inline_proc(ext2_ino_t dir EXT2FS_ATTR((unused)),
		       int entry EXT2FS_ATTR((unused)),
		       struct ext2_dir_entry *de,
		       int offset EXT2FS_ATTR((unused)), int blocksize,
		       char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct walk *w = priv;
	int ret;

	ret = w->func(w->fs, de, blocksize, w->priv);
	if (ret & DIRENT_ABORT)
		w->aborted = 1;
	return ret & DIRENT_ABORT;
}

/*
 * Call @func for each live entry of directory @dir ("." and ".."
 * included), with the room the entry has in its block; @func returns
 * DIRENT_ABORT to stop.  Whatever is damaged is passed to @damage (which
 * may be NULL) and skipped.  @inode may be NULL.  Returns an error only
 * when the inode cannot be read or memory runs out; a block map that
 * fails part way is damage (EXT2FS_DIR_LOST_REST).
 */
errcode_t ext2fs_dir_walk(ext2_filsys fs, ext2_ino_t dir,
			  struct ext2_inode *inode, ext2fs_dir_walk_func func,
			  ext2fs_dir_damage_func damage, void *priv)
{
	struct ext2_inode ibuf;
	struct walk w;
	errcode_t retval;

	if (!inode) {
		retval = ext2fs_read_inode(fs, dir, &ibuf);
		if (retval)
			return retval;
		inode = &ibuf;
	}
	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.dir = dir;
	w.func = func;
	w.damage = damage;
	w.priv = priv;
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		retval = ext2fs_dir_iterate2(fs, dir, 0, NULL, inline_proc, &w);
		if (retval && !w.aborted)
			report(fs, &w, 0, 0, 0, 0, retval, EXT2FS_DIR_LOST_REST);
		return 0;
	}
	retval = ext2fs_get_mem(fs->blocksize, &w.buf);
	if (retval)
		return retval;
	retval = ext2fs_stored_runs_iterate(fs, dir, inode, run_proc, &w);
	if (retval && !w.aborted)
		report(fs, &w, w.next_lblk, 0, 0, 0, retval,
		       EXT2FS_DIR_LOST_REST);
	ext2fs_free_mem(&w.buf);
	return 0;
}

/* What a report of ext2fs_dir_walk() means for the entries */
const char *ext2fs_dir_lost_string(int lost)
{
	switch (lost) {
	case EXT2FS_DIR_LOST_NOTHING:
		return "its entries pass the checks and are kept, but may be "
		       "damaged";
	case EXT2FS_DIR_LOST_ENTRY:
		return "the entry is skipped";
	case EXT2FS_DIR_LOST_REST_OF_BLOCK:
		return "the rest of the block is skipped";
	case EXT2FS_DIR_LOST_BLOCK:
		return "the entries in the block are skipped";
	default:
		return "the rest of the directory is skipped";
	}
}
