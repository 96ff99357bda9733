/*
 * dir_append.c --- fill a linear directory a block at a time
 *
 * ext2fs_link_raw() reads the block a name goes into, checks its
 * checksum, adds the name, sets the checksum and writes the block: for
 * a directory filled with many names, as a restore fills one, every
 * block is read and written once per name it holds.  An appender keeps
 * the directory's last block in memory instead and adds each name at
 * its end; the block is written once, when it is full or the caller
 * flushes it.  A new block is allocated only then, with its contents,
 * so that the directory on disk is whole at any time: it only lacks the
 * names not flushed yet.
 *
 * An indexed directory (or one the appender cannot read as linear) gets
 * its names through ext2fs_link_raw(), as before.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

#define NEW_BLOCK	(~(blk64_t) 0)	/* not allocated yet */
#define NO_ENTRY	(~0U)

enum { APPEND_CLOSED, APPEND_BLOCK, APPEND_DIRECT };

void ext2fs_dir_append_init(struct ext2fs_dir_append *a, ext2_filsys fs,
			    ext2_ino_t dir)
{
	memset(a, 0, sizeof(*a));
	a->fs = fs;
	a->dir = dir;
}

void ext2fs_dir_append_free(struct ext2fs_dir_append *a)
{
	ext2fs_free_mem(&a->buf);
	a->state = APPEND_CLOSED;
	a->dirty = 0;
}

static unsigned int room_end(const struct ext2fs_dir_append *a)
{
	return a->fs->blocksize - a->csum_size;
}

/* An empty block in memory, not on disk yet */
static errcode_t start_block(struct ext2fs_dir_append *a)
{
	errcode_t retval;

	memset(a->buf, 0, a->fs->blocksize);
	retval = ext2fs_set_rec_len(a->fs, room_end(a),
				    (struct ext2_dir_entry *) a->buf);
	if (retval)
		return retval;
	if (a->csum_size)
		ext2fs_initialize_dirent_tail(a->fs,
			EXT2_DIRENT_TAIL(a->buf, a->fs->blocksize));
	a->lblk = NEW_BLOCK;
	a->last = NO_ENTRY;
	a->tail = 0;
	a->undo_ok = 0;
	a->dirty = 0;
	return 0;
}

static int is_dot(const struct ext2_dir_entry *de)
{
	int len = ext2fs_dirent_name_len(de);

	return de->name[0] == '.' && (len == 1 ||
				      (len == 2 && de->name[1] == '.'));
}

/*
 * Find where the free room of the block read into a->buf starts: after
 * the last live entry.  0 when the block is not laid out as expected.
 */
static int scan_block(struct ext2fs_dir_append *a)
{
	ext2_filsys fs = a->fs;
	struct ext2_dir_entry *de;
	unsigned int off = 0, rec_len, min;

	a->last = NO_ENTRY;
	a->tail = 0;
	while (off < room_end(a)) {
		de = (struct ext2_dir_entry *) (a->buf + off);
		if (ext2fs_get_rec_len(fs, de, &rec_len) || rec_len < 8 ||
		    rec_len % 4 || off + rec_len > room_end(a))
			return 0;
		if (de->inode) {
			min = ext2fs_dir_rec_len(ext2fs_dirent_name_len(de),
						 a->has_hash && !is_dot(de));
			if (rec_len < min)
				return 0;
			a->last = off;
			a->tail = off + min;
		}
		off += rec_len;
	}
	return off == room_end(a);
}

/*
 * The first name: a linear directory's last block is read once, and
 * the names go after its last entry; anything else is linked directly.
 */
static errcode_t open_dir(struct ext2fs_dir_append *a)
{
	ext2_filsys fs = a->fs;
	struct ext2_inode diri;
	blk64_t nblocks, pblk;
	errcode_t retval;

	a->state = APPEND_DIRECT;
	retval = ext2fs_read_inode(fs, a->dir, &diri);
	if (retval)
		return retval;
	nblocks = EXT2_I_SIZE(&diri) / fs->blocksize;
	if (!(fs->flags & EXT2_FLAG_RW) || !LINUX_S_ISDIR(diri.i_mode) ||
	    (diri.i_flags & (EXT2_INDEX_FL | EXT4_INLINE_DATA_FL)) ||
	    !nblocks)
		return 0;
	if (ext2fs_has_feature_metadata_csum(fs->super))
		a->csum_size = sizeof(struct ext2_dir_entry_tail);
	a->has_hash = !!ext4_hash_in_dirent(&diri);
	retval = ext2fs_get_mem(fs->blocksize, &a->buf);
	if (retval)
		return retval;
	a->lblk = nblocks - 1;
	retval = ext2fs_bmap2(fs, a->dir, &diri, NULL, 0, a->lblk, NULL,
			      &pblk);
	if (!retval && pblk)
		retval = ext2fs_read_dir_block4(fs, pblk, a->buf, 0, a->dir);
	if (retval || !pblk || !scan_block(a)) {
		/* ext2fs_link_raw() finds it out again, and says so */
		ext2fs_free_mem(&a->buf);
		return 0;
	}
	a->undo_ok = 0;
	a->state = APPEND_BLOCK;
	return 0;
}

/*
 * Write the block being filled, if it changed: a new one is allocated
 * now.  On failure it stays pending, for the caller to flush again.
 */
errcode_t ext2fs_dir_append_flush(struct ext2fs_dir_append *a)
{
	struct ext2_inode diri;
	blk64_t pblk;
	errcode_t retval;

	if (a->state != APPEND_BLOCK || !a->dirty)
		return 0;
	if (a->lblk == NEW_BLOCK) {
		retval = ext2fs_dir_add_block(a->fs, a->dir, a->buf,
					      &a->lblk);
		if (retval)
			a->lblk = NEW_BLOCK;
	} else {
		retval = ext2fs_read_inode(a->fs, a->dir, &diri);
		if (!retval)
			retval = ext2fs_bmap2(a->fs, a->dir, &diri, NULL, 0,
					      a->lblk, NULL, &pblk);
		if (!retval && !pblk)
			retval = EXT2_ET_DIR_CORRUPTED;
		if (!retval)
			retval = ext2fs_write_dir_block4(a->fs, pblk, a->buf,
							 0, a->dir);
	}
	if (!retval)
		a->dirty = 0;
	return retval;
}

/* Put @n at the end of the block: 0 when it does not fit */
static int put_name(struct ext2fs_dir_append *a,
		    const struct ext4_encrypted_name *n, ext2_ino_t ino,
		    int file_type)
{
	ext2_filsys fs = a->fs;
	struct ext2_dir_entry *de;
	unsigned int need = ext2fs_dir_rec_len(n->name_len, n->has_hash);

	if (a->tail + need > room_end(a))
		return 0;
	if (a->last != NO_ENTRY)
		(void) ext2fs_set_rec_len(fs, a->tail - a->last,
				(struct ext2_dir_entry *) (a->buf + a->last));
	de = (struct ext2_dir_entry *) (a->buf + a->tail);
	memset(de, 0, need);
	ext2fs_fill_raw_dirent(fs, de, n, ino, file_type);
	(void) ext2fs_set_rec_len(fs, room_end(a) - a->tail, de);
	a->undo_last = a->last;
	a->undo_tail = a->tail;
	a->undo_ok = 1;
	a->last = a->tail;
	a->tail += need;
	a->dirty = 1;
	return 1;
}

/*
 * Link @ino into the directory under the raw name @n, as
 * ext2fs_link_raw() does; the block it went into is written by a later
 * call, or by ext2fs_dir_append_flush().
 */
errcode_t ext2fs_dir_append(struct ext2fs_dir_append *a,
			    const struct ext4_encrypted_name *n,
			    ext2_ino_t ino, int file_type)
{
	errcode_t retval;

	if (a->state == APPEND_CLOSED) {
		retval = open_dir(a);
		if (retval)
			return retval;
	}
	if (a->state == APPEND_DIRECT)
		return ext2fs_link_raw(a->fs, a->dir, n, ino, file_type,
				       &a->hint);
	if (n->name_len == 0)
		return EXT2_ET_INVALID_ARGUMENT;
	if (n->has_hash != a->has_hash)
		return EXT2_ET_CRYPT_BAD_DIRENT_HASH;
	if (put_name(a, n, ino, file_type))
		return 0;
	retval = ext2fs_dir_append_flush(a);
	if (!retval)
		retval = start_block(a);
	if (retval)
		return retval;
	return put_name(a, n, ino, file_type) ? 0 : EXT2_ET_DIR_NO_SPACE;
}

/*
 * Take back the name @n of @ino: from the block in memory when it is
 * the last one added, else from the directory on disk.
 */
errcode_t ext2fs_dir_append_undo(struct ext2fs_dir_append *a,
				 const struct ext4_encrypted_name *n,
				 ext2_ino_t ino)
{
	struct ext2_dir_entry *de;
	unsigned int at;
	int written;
	errcode_t retval;

	if (a->state == APPEND_BLOCK && a->undo_ok) {
		de = (struct ext2_dir_entry *) (a->buf + a->last);
		if (de->inode == ino &&
		    ext2fs_dirent_name_len(de) == n->name_len &&
		    !memcmp(de->name, n->name, n->name_len)) {
			written = !a->dirty;
			memset(a->buf + a->last, 0, room_end(a) - a->last);
			a->last = a->undo_last;
			a->tail = a->undo_tail;
			a->undo_ok = 0;
			at = a->last == NO_ENTRY ? 0 : a->last;
			retval = ext2fs_set_rec_len(a->fs, room_end(a) - at,
				(struct ext2_dir_entry *) (a->buf + at));
			if (retval)
				return retval;
			/* a new block left empty need not be written */
			a->dirty = a->last != NO_ENTRY ||
				   a->lblk != NEW_BLOCK;
			/* on disk already: the name leaves it now */
			return written ? ext2fs_dir_append_flush(a) : 0;
		}
	}
	retval = ext2fs_dir_append_flush(a);
	if (!retval)
		retval = ext2fs_unlink_raw(a->fs, a->dir, n, ino);
	return retval;
}
