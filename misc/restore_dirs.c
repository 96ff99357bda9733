/*
 * restore_dirs.c --- restore's names and directories
 *
 * Entries come in pre-order: the open directories form a stack, each
 * name is linked into the top one, and a directory that has all its
 * names is indexed or put inline as the kernel would hold it.  Each open
 * directory keeps its last block in memory (lib/ext2fs/dir_append.c):
 * names go at its end and the block is written once, when full or when
 * the directory closes, not once per name.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <et/com_err.h>
#include "restore.h"

/*
 * The directory an entry goes into.  The reader has checked that
 * entries come in pre-order, so the open directories form a stack and
 * an entry of depth d goes into its d-th frame.
 */
static struct dir_frame *find_parent(struct restore *rs,
				     const struct e2cb_entry *e)
{
	if (e->depth == 0 || e->depth > rs->depth)
		return NULL;
	rs->depth = e->depth;
	return &rs->stack[e->depth - 1];
}

/*
 * Directories deeper than @depth have all their entries: index the
 * large ones as the kernel would have, since appending left them
 * linear, and put the small ones we made inline where the kernel would
 * keep them so.  One too large for an index, or with no room left for
 * one, stays linear, as valid.
 */
errcode_t e2cb_restore_close_dirs(struct restore *rs, unsigned int depth)
{
	struct dir_frame *f;
	errcode_t retval = 0;

	while (rs->depth > depth && !retval) {
		f = &rs->stack[rs->depth - 1];
		/* its last names on disk first: a failure keeps it open */
		retval = e2cb_restore_frame_close(f);
		if (retval)
			break;
		rs->depth--;
		if (f->made) {
			retval = ext2fs_dir_make_inline(rs->fs, f->ino,
							rs->ea_share);
			if (retval)
				break;
		}
		retval = ext2fs_dx_index_dir(rs->fs, f->ino);
		if (retval == EXT2_ET_DIR_NO_SPACE ||
		    retval == EXT2_ET_BLOCK_ALLOC_FAIL) {
			rs->unindexed++;
			retval = 0;
		}
	}
	return retval;
}

/* Write what the open directories hold in memory, and let them go */
errcode_t e2cb_restore_flush_dirs(struct restore *rs)
{
	errcode_t retval = 0, err;
	size_t i;

	for (i = 0; i < rs->depth; i++) {
		err = e2cb_restore_frame_close(&rs->stack[i]);
		if (err && !retval)
			retval = err;
	}
	return retval;
}

/* Room for one more open directory, so that pushing it cannot fail */
errcode_t e2cb_restore_reserve_dir(struct restore *rs)
{
	if (e2cb_grow((void **) &rs->stack, &rs->stack_size, rs->depth,
		       sizeof(*rs->stack)))
		return EXT2_ET_NO_MEMORY;
	return 0;
}

void e2cb_restore_frame_init(struct restore *rs, struct dir_frame *f,
			     ext2_ino_t ino, int encrypted)
{
	memset(f, 0, sizeof(*f));
	f->ino = ino;
	f->encrypted = encrypted;
	ext2fs_dir_append_init(&f->app, rs->fs, ino);
}

/* The directory's names on disk, and its block let go once they are */
errcode_t e2cb_restore_frame_close(struct dir_frame *f)
{
	errcode_t retval;

	retval = ext2fs_dir_append_flush(&f->app);
	if (!retval)
		ext2fs_dir_append_free(&f->app);
	return retval;
}

errcode_t e2cb_restore_push_dir(struct restore *rs, ext2_ino_t ino,
				int encrypted)
{
	errcode_t retval;

	retval = e2cb_restore_reserve_dir(rs);
	if (retval)
		return retval;
	e2cb_restore_frame_init(rs, &rs->stack[rs->depth], ino, encrypted);
	rs->depth++;
	return 0;
}

/*
 * Link @ino into @dir as @n: written when its block is full or the
 * directory closed, or at once into a directory written through.
 */
errcode_t e2cb_restore_link(struct dir_frame *dir,
			    const struct ext4_encrypted_name *n,
			    ext2_ino_t ino, uint32_t mode)
{
	errcode_t retval;

	retval = ext2fs_dir_append(&dir->app, n, ino,
				   ext2fs_mode_to_file_type(mode));
	if (retval || !dir->write_through)
		return retval;
	retval = ext2fs_dir_append_flush(&dir->app);
	if (retval)
		ext2fs_dir_append_undo(&dir->app, n, ino);
	return retval;
}

/*
 * Write @inode, changed from @old; should that fail, put @old back (the
 * inode cache took the change already) so nothing of it remains.
 */
static errcode_t write_or_keep(ext2_filsys fs, ext2_ino_t ino,
			       struct ext2_inode *inode,
			       struct ext2_inode *old)
{
	errcode_t retval;

	retval = ext2fs_write_inode(fs, ino, inode);
	if (retval)
		ext2fs_write_inode(fs, ino, old);
	return retval;
}

static errcode_t bump_links(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_inode inode, old;
	errcode_t retval;

	retval = ext2fs_read_inode(fs, ino, &inode);
	if (retval)
		return retval;
	old = inode;
	if (inode.i_links_count < EXT2_LINK_MAX)
		inode.i_links_count++;
	return write_or_keep(fs, ino, &inode, &old);
}

/*
 * A new subdirectory's ".." links its parent.  Past EXT2_LINK_MAX the
 * count means nothing, and the kernel and e2fsck keep it at 1, which
 * the dir_nlink feature allows.
 */
errcode_t e2cb_restore_bump_dir_links(struct restore *rs, ext2_ino_t dir)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode inode, old;
	int capped;
	errcode_t retval;

	retval = ext2fs_read_inode(fs, dir, &inode);
	if (retval)
		return retval;
	old = inode;
	capped = inode.i_links_count == 1 ||
		 inode.i_links_count >= EXT2_LINK_MAX;
	inode.i_links_count = capped ? 1 : inode.i_links_count + 1;
	retval = write_or_keep(fs, dir, &inode, &old);
	if (retval || !capped)
		return retval;
	if (old.i_links_count != 1)
		rs->nlink_overflows++;
	if (!ext2fs_has_feature_dir_nlink(fs->super)) {
		ext2fs_set_feature_dir_nlink(fs->super);
		ext2fs_mark_super_dirty(fs);
	}
	return 0;
}

/* The first pass noted every inode with several names: where it went */
void e2cb_restore_note_link(struct restore *rs, ext2_ino_t from, ext2_ino_t to)
{
	struct link_info *l = e2cb_ino_map_find(&rs->plan.linked, from);

	if (l)
		l->to = to;
}

/* Take back the name @n of @ino in @dir: an entry that failed after it */
void e2cb_restore_unlink_name(struct dir_frame *dir,
			      const struct ext4_encrypted_name *n,
			      ext2_ino_t ino)
{
	errcode_t retval;

	retval = ext2fs_dir_append_undo(&dir->app, n, ino);
	if (retval)
		com_err(program_name, retval, "while taking back a name in "
			"directory %u", dir->ino);
}

static errcode_t restore_hardlink(struct restore *rs, struct dir_frame *dir,
				  const struct e2cb_entry *e,
				  const struct ext4_encrypted_name *n)
{
	const struct link_info *l = e2cb_ino_map_find(&rs->plan.linked,
							   e->rec.ino);
	ext2_ino_t ino = l ? l->to : 0;
	errcode_t retval;

	if (!ino)
		return EXT2_ET_FILE_NOT_FOUND;
	retval = e2cb_restore_link(dir, n, ino, e->rec.mode);
	if (retval)
		return retval;
	retval = bump_links(rs->fs, ino);
	if (retval)
		e2cb_restore_unlink_name(dir, n, ino);
	return retval;
}

/*
 * The archive's root maps onto PATH.  Its context (an encrypted root
 * goes only into a new or empty directory) and, where PATH is ours to
 * shape (made by us, or the filesystem root), its metadata too.
 */
static errcode_t restore_root(struct restore *rs, const struct e2cb_entry *e)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode_large *inode;
	struct xattr_list xl;
	errcode_t retval;

	retval = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super), &inode);
	if (retval)
		return retval;
	memset(&xl, 0, sizeof(xl));
	if (rs->target_new || rs->target == EXT2_ROOT_INO || e->ctx) {
		retval = ext2fs_read_inode_full(fs, rs->target,
				(struct ext2_inode *) inode,
				EXT2_INODE_SIZE(fs->super));
		if (!retval)
			retval = e2cb_restore_entry_xattrs(rs, e, &xl);
		if (retval)
			goto out;
		e2cb_restore_apply_rec(rs, inode, &e->rec);
		retval = ext2fs_xattrs_raw_replace(fs, rs->target, inode,
						   xl.x, xl.count);
		if (retval)
			goto out;
	}
	retval = e2cb_restore_push_dir(rs, rs->target, !!e->ctx);
out:
	free(xl.x);
	ext2fs_free_mem(&inode);
	return retval;
}

/* The target's own lost+found takes the archived one's metadata. */
static errcode_t merge_lost_found(struct restore *rs,
				  const struct e2cb_entry *e, ext2_ino_t ino)
{
	struct ext2_inode_large *inode;
	errcode_t retval;

	retval = ext2fs_get_memzero(EXT2_INODE_SIZE(rs->fs->super), &inode);
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(rs->fs, ino,
					(struct ext2_inode *) inode,
					EXT2_INODE_SIZE(rs->fs->super));
	if (!retval && LINUX_S_ISDIR(inode->i_mode)) {
		e2cb_restore_apply_rec(rs, inode, &e->rec);
		retval = e2cb_restore_write_inode(rs, ino, inode);
	}
	ext2fs_free_mem(&inode);
	return retval ? retval : e2cb_restore_push_dir(rs, ino, 0);
}

errcode_t e2cb_restore_entry(struct restore *rs, const struct e2cb_entry *e)
{
	struct ext4_encrypted_name n;
	struct dir_frame *dir;
	ext2_ino_t existing;
	errcode_t retval;

	if (!strcmp(e->path, "."))
		return rs->depth ? EXT2_ET_DIR_CORRUPTED : restore_root(rs, e);
	if (e->depth && e->depth < rs->depth) {
		retval = e2cb_restore_close_dirs(rs, e->depth);
		if (retval)
			return retval;
	}
	/* before @dir points into the stack, which this may move */
	if (LINUX_S_ISDIR(e->rec.mode)) {
		retval = e2cb_restore_reserve_dir(rs);
		if (retval)
			return retval;
	}
	dir = find_parent(rs, e);
	if (!dir)
		return EXT2_ET_DIR_CORRUPTED;
	e2cb_restore_entry_name(e, &n);
	if (!n.name_len || dir->encrypted != !!(e->rec.rflags & E2CB_IF_NAME))
		return EXT2_ET_CRYPT_BAD_BLOB;
	if (rs->lost_found_merge && dir->ino == EXT2_ROOT_INO &&
	    LINUX_S_ISDIR(e->rec.mode) && !strcmp(e->path, "lost+found")) {
		/* the lookup reads the directory on disk */
		retval = ext2fs_dir_append_flush(&dir->app);
		if (!retval)
			retval = e2cb_lookup_raw(rs->fs, dir->ino, n.name,
						 n.name_len, &existing);
		if (!retval)
			return merge_lost_found(rs, e, existing);
		/* a read error must not make a second lost+found */
		if (retval != EXT2_ET_FILE_NOT_FOUND)
			return retval;
	}
	if (e->rec.rflags & E2CB_IF_HARDLINK)
		return restore_hardlink(rs, dir, e, &n);
	return e2cb_restore_inode(rs, dir, e, &n);
}
