/*
 * restore_inode.c --- restore's inodes: metadata, attributes, bodies
 *
 * An entry's inode is made whole (owner, mode and times as the policy
 * lets them through, context and attributes, its directory block,
 * symlink target or data) before its name is linked; what fails on
 * the way is taken back (restore_takeback.c).
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <et/com_err.h>
#include "restore.h"

/* inode flags that are the file's own, not artefacts of its layout */
#define RESTORE_FLAGS	(EXT2_SECRM_FL | EXT2_UNRM_FL | EXT2_SYNC_FL | \
			 EXT2_IMMUTABLE_FL | EXT2_APPEND_FL | \
			 EXT2_NODUMP_FL | EXT2_NOATIME_FL | \
			 EXT4_ENCRYPT_FL | EXT2_DIRSYNC_FL | \
			 EXT2_TOPDIR_FL | EXT4_PROJINHERIT_FL | \
			 EXT4_CASEFOLD_FL)

/* --no-same-owner gives @r to someone other than the archive says */
static int owner_changed(struct restore *rs, const struct e2cb_inode_rec *r)
{
	return (rs->opts->policy & E2CB_NO_SAME_OWNER) &&
	       (r->uid != rs->uid || r->gid != rs->gid);
}

static int collect_xattr(int index, const char *name, size_t name_len,
			 const void *value, size_t value_len, void *priv)
{
	struct xattr_list *l = priv;

	if (l->drop_caps && e2cb_xattr_is_capability(index, name, name_len))
		return 0;
	if (e2cb_grow((void **) &l->x, &l->size, l->count, sizeof(*l->x)))
		return 1;
	l->x[l->count].index = index;
	l->x[l->count].name = name;
	l->x[l->count].name_len = name_len;
	l->x[l->count].value = value;
	l->x[l->count].value_len = value_len;
	l->count++;
	return 0;
}

/* The context first (it then lands in the inode), the rest after */
errcode_t e2cb_restore_entry_xattrs(struct restore *rs,
				    const struct e2cb_entry *e,
				    struct xattr_list *l)
{
	memset(l, 0, sizeof(*l));
	l->drop_caps = e2cb_policy_drops_caps(rs->opts->policy,
					      owner_changed(rs, &e->rec));
	if (e->ctx && collect_xattr(EXT4_XATTR_INDEX_ENCRYPTION, "c", 1,
				    e->ctx, e->ctx_len, l))
		return EXT2_ET_NO_MEMORY;
	if (e->xattrs && e2cb_xattr_rec_iterate(e->xattrs, e->xattrs_len,
						collect_xattr, l))
		return EXT2_ET_CRYPT_BAD_BLOB;
	return 0;
}

/* Out of range, a time is clamped, as the kernel clamps it on setting */
static void set_time(__u32 *sec, __u32 *extra, const struct e2cb_time *t,
		     int has_extra)
{
	int64_t max = has_extra ? TIME_MAX_EXTRA : TIME_MAX_SMALL;
	int64_t s = t->sec;
	uint32_t ns = t->nsec;

	if (s < TIME_MIN || s > max) {
		s = s < TIME_MIN ? TIME_MIN : max;
		ns = 0;
	}
	*sec = (__u32) s;
	if (has_extra)
		*extra = ((ns & 0x3fffffff) << 2) |
			 ((uint64_t) (s - (__s32) s) >> 32 & 3);
}

/*
 * Owner, mode, times, flags and project id from the archive, the owner
 * and mode as the policy lets them through
 */
void e2cb_restore_apply_rec(struct restore *rs, struct ext2_inode_large *inode,
			    const struct e2cb_inode_rec *r)
{
	ext2_filsys fs = rs->fs;
	int extra = EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE;
	unsigned int policy = rs->opts->policy;
	uint32_t uid = r->uid, gid = r->gid;

	if (policy & E2CB_NO_SAME_OWNER) {
		uid = rs->uid;
		gid = rs->gid;
	}
	inode->i_mode = e2cb_policy_mode(policy, r->mode, rs->umask,
					 owner_changed(rs, r));
	inode->i_uid = uid & 0xffff;
	ext2fs_set_i_uid_high(*inode, uid >> 16);
	inode->i_gid = gid & 0xffff;
	ext2fs_set_i_gid_high(*inode, gid >> 16);
	inode->i_flags = (inode->i_flags & ~RESTORE_FLAGS) |
			 (r->iflags & RESTORE_FLAGS);
	if (extra && inode->i_extra_isize < 32)
		inode->i_extra_isize = 32;
	set_time(&inode->i_atime, &inode->i_atime_extra, &r->atime, extra);
	set_time(&inode->i_mtime, &inode->i_mtime_extra, &r->mtime, extra);
	set_time(&inode->i_ctime, &inode->i_ctime_extra, &r->ctime, extra);
	if (extra && (r->rflags & E2CB_IF_CRTIME))
		set_time(&inode->i_crtime, &inode->i_crtime_extra,
			 &r->crtime, 1);
	if (extra && (r->rflags & E2CB_IF_PROJID) &&
	    ext2fs_has_feature_project(fs->super))
		inode->i_projid = r->projid;
}

/*
 * The inode numbers that must be kept are held in the inode bitmap from
 * the start of the writing pass, each until its entry takes it: an
 * inode allocated before (a directory made on the way to PATH, an
 * unencrypted one) would take it otherwise.  Only numbers free then
 * are held, and what is left is let go before the bitmap is written.
 */
errcode_t e2cb_restore_reserve_fixed(struct restore *rs)
{
	const struct ino_map *m = &rs->plan.fixed;
	ext2_filsys fs = rs->fs;
	errcode_t retval;
	size_t i;

	if (!m->count && !rs->plan.root_ino)
		return 0;
	retval = ext2fs_allocate_inode_bitmap(fs, "inodes held",
					      &rs->reserved);
	if (retval)
		return retval;
	for (i = 0; i <= m->count; i++) {
		ext2_ino_t ino = i < m->count ? m->from[i] :
				 rs->plan.root_ino;

		if (ino < EXT2_FIRST_INODE(fs->super) ||
		    ino > fs->super->s_inodes_count ||
		    ext2fs_test_inode_bitmap2(fs->inode_map, ino))
			continue;
		ext2fs_mark_inode_bitmap2(rs->reserved, ino);
		ext2fs_mark_inode_bitmap2(fs->inode_map, ino);
	}
	return 0;
}

/* What is still held goes back to the free inodes */
void e2cb_restore_release_fixed(struct restore *rs)
{
	ext2_filsys fs = rs->fs;
	ext2_ino_t ino;

	if (!rs->reserved)
		return;
	for (ino = 1; fs && ino <= fs->super->s_inodes_count; ino++)
		if (ext2fs_fast_test_inode_bitmap2(rs->reserved, ino))
			ext2fs_unmark_inode_bitmap2(fs->inode_map, ino);
	ext2fs_free_inode_bitmap(rs->reserved);
	rs->reserved = NULL;
}

static errcode_t alloc_inode(struct restore *rs, const struct e2cb_entry *e,
			     ext2_ino_t parent, ext2_ino_t *ino)
{
	ext2_filsys fs = rs->fs;
	/* a directory on the way to PATH ("") has one only for the root */
	int fixed = e->rec.ino && (rs->opts->keep_ino || !e->path[0] ||
		    (e->ctx && e2cb_restore_policy_ties_ino(e->ctx,
							    e->ctx_len)));
	errcode_t retval;

	if (fixed) {
		*ino = e->rec.ino;
		if (rs->reserved && *ino <= fs->super->s_inodes_count &&
		    ext2fs_test_inode_bitmap2(rs->reserved, *ino)) {
			ext2fs_unmark_inode_bitmap2(rs->reserved, *ino);
			ext2fs_unmark_inode_bitmap2(fs->inode_map, *ino);
		}
		if (*ino < EXT2_FIRST_INODE(fs->super) ||
		    *ino > fs->super->s_inodes_count ||
		    ext2fs_test_inode_bitmap2(fs->inode_map, *ino))
			return EXT2_ET_INODE_ALLOC_FAIL;
	} else {
		retval = ext2fs_new_inode(fs, parent, e->rec.mode, NULL, ino);
		if (retval)
			return retval;
	}
	ext2fs_inode_alloc_stats2(fs, *ino, +1,
				  LINUX_S_ISDIR(e->rec.mode));
	return 0;
}

/* Map block 0 of a new inode to a fresh block holding @buf. */
static errcode_t write_first_block(ext2_filsys fs, ext2_ino_t ino,
				   struct ext2_inode_large *inode,
				   const void *buf, int is_dir)
{
	ext2_extent_handle_t handle;
	blk64_t blk;
	errcode_t retval;

	retval = ext2fs_new_block2(fs, ext2fs_find_inode_goal(fs, ino,
				   (struct ext2_inode *) inode, 0), NULL, &blk);
	if (retval)
		return retval;
	retval = is_dir ? ext2fs_write_dir_block4(fs, blk, (void *) buf, 0,
						  ino) :
		 io_channel_write_blk64(fs->io, blk, 1, buf);
	if (retval)
		return retval;
	ext2fs_block_alloc_stats2(fs, blk, +1);
	retval = ext2fs_extent_open2(fs, ino, (struct ext2_inode *) inode,
				     &handle);
	if (retval)
		return retval;
	retval = ext2fs_extent_set_bmap(handle, 0, blk, 0);
	ext2fs_extent_free(handle);
	if (retval)
		return retval;
	return ext2fs_iblk_add_blocks(fs, (struct ext2_inode *) inode, 1);
}

/* An empty extent tree in i_block, as every new file gets one */
static errcode_t init_extents(ext2_filsys fs, ext2_ino_t ino,
			      struct ext2_inode_large *inode)
{
	ext2_extent_handle_t handle;
	errcode_t retval;

	if (!ext2fs_has_feature_extents(fs->super))
		return 0;
	retval = ext2fs_extent_open2(fs, ino, (struct ext2_inode *) inode,
				     &handle);
	if (!retval)
		ext2fs_extent_free(handle);
	return retval;
}

errcode_t e2cb_restore_write_inode(struct restore *rs, ext2_ino_t ino,
				   struct ext2_inode_large *inode)
{
	return ext2fs_write_inode_full(rs->fs, ino, (struct ext2_inode *) inode,
				       EXT2_INODE_SIZE(rs->fs->super));
}

static errcode_t make_dir_body(struct restore *rs, ext2_ino_t ino,
			       ext2_ino_t parent,
			       struct ext2_inode_large *inode)
{
	char *block;
	errcode_t retval;

	retval = ext2fs_new_dir_block(rs->fs, ino, parent, &block);
	if (retval)
		return retval;
	inode->i_links_count = 2;
	inode->i_size = rs->fs->blocksize;
	retval = e2cb_restore_write_inode(rs, ino, inode);
	if (!retval)
		retval = write_first_block(rs->fs, ino, inode, block, 1);
	if (!retval)
		retval = e2cb_restore_write_inode(rs, ino, inode);
	ext2fs_free_mem(&block);
	return retval;
}

/* Encrypted or not, a symlink's target is bytes: fast or in one block */
static errcode_t make_symlink_body(struct restore *rs, ext2_ino_t ino,
				   struct ext2_inode_large *inode,
				   const struct e2cb_entry *e)
{
	const void *target = e->symlink ? (const void *) e->symlink :
			     (const void *) e->linkname;
	size_t len = e->symlink ? e->symlink_len :
		     (e->linkname ? strlen(e->linkname) : 0);
	char *block;
	errcode_t retval;

	if (len == 0 || len >= rs->fs->blocksize || len != e->rec.size)
		return EXT2_ET_INVALID_ARGUMENT;
	inode->i_size = len;
	if (len < sizeof(inode->i_block)) {
		inode->i_flags &= ~EXT4_EXTENTS_FL;
		memset(inode->i_block, 0, sizeof(inode->i_block));
		memcpy(inode->i_block, target, len);
		return e2cb_restore_write_inode(rs, ino, inode);
	}
	retval = ext2fs_get_memzero(rs->fs->blocksize, &block);
	if (retval)
		return retval;
	memcpy(block, target, len);
	retval = e2cb_restore_write_inode(rs, ino, inode);
	if (!retval)
		retval = write_first_block(rs->fs, ino, inode, block, 0);
	if (!retval)
		retval = e2cb_restore_write_inode(rs, ino, inode);
	ext2fs_free_mem(&block);
	return retval;
}

static void set_rdev(struct ext2_inode_large *inode, uint32_t major,
		     uint32_t minor)
{
	memset(inode->i_block, 0, sizeof(inode->i_block));
	if (major < 256 && minor < 256) {
		inode->i_block[0] = major * 256 + minor;
	} else {
		inode->i_block[1] = (minor & 0xff) | (major << 8) |
				    ((minor & ~0xffU) << 12);
	}
}

static errcode_t make_body(struct restore *rs, ext2_ino_t ino,
			   ext2_ino_t parent, struct ext2_inode_large *inode,
			   const struct e2cb_entry *e)
{
	switch (e->rec.mode & LINUX_S_IFMT) {
	case LINUX_S_IFDIR:
		return make_dir_body(rs, ino, parent, inode);
	case LINUX_S_IFREG:
		return e2cb_restore_fill_regular(rs, ino, inode, e);
	case LINUX_S_IFLNK:
		return make_symlink_body(rs, ino, inode, e);
	case LINUX_S_IFCHR:
	case LINUX_S_IFBLK:
		set_rdev(inode, e->rec.rdev_major, e->rec.rdev_minor);
		break;
	}
	return e2cb_restore_write_inode(rs, ino, inode);
}

/* Create the inode of @e with all it carries, then link it. */
errcode_t e2cb_restore_inode(struct restore *rs, struct dir_frame *dir,
			     const struct e2cb_entry *e,
			     const struct ext4_encrypted_name *n)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode_large *inode;
	struct xattr_list xl;
	ext2_ino_t ino = 0;
	int is_dir = LINUX_S_ISDIR(e->rec.mode);
	int inlined = 0, made;
	errcode_t retval;

	retval = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super), &inode);
	if (retval)
		return retval;
	retval = e2cb_restore_entry_xattrs(rs, e, &xl);
	/* pushing a directory, once linked, must not fail */
	if (!retval && is_dir)
		retval = e2cb_restore_reserve_dir(rs);
	/* identical attribute sets share one EA block, as in the kernel */
	if (!retval && !rs->ea_share)
		retval = ext2fs_ea_share_new(&rs->ea_share);
	if (!retval)
		retval = alloc_inode(rs, e, dir->ino, &ino);
	if (retval)
		goto out;
	e2cb_restore_take_begin(rs);
	e2cb_restore_apply_rec(rs, inode, &e->rec);
	/* before any block checksum is computed over it */
	inode->i_generation = e->rec.generation;
	inode->i_links_count = 1;
	if (LINUX_S_ISREG(e->rec.mode))
		retval = e2cb_restore_try_inline(rs, ino, inode, e, &xl,
						 &inlined);
	if (!retval && !inlined &&
	    (LINUX_S_ISREG(e->rec.mode) || is_dir ||
	     (LINUX_S_ISLNK(e->rec.mode) && e->rec.size >= 60)))
		retval = init_extents(fs, ino, inode);
	if (!retval && !inlined)
		retval = ext2fs_xattrs_raw_write_shared(fs, ino, inode, xl.x,
							xl.count,
							rs->ea_share);
	if (!retval)
		retval = inlined ? e2cb_restore_write_inode(rs, ino, inode) :
			 make_body(rs, ino, dir->ino, inode, e);
	/* the parent's blocks are not the inode's */
	e2cb_restore_take_end(rs);
	if (!retval)
		retval = e2cb_restore_link(dir, n, ino, e->rec.mode);
	if (retval)
		goto undo;
	if (is_dir) {
		retval = e2cb_restore_bump_dir_links(rs, dir->ino);
		if (retval) {
			e2cb_restore_unlink_name(dir, n, ino);
			goto undo;
		}
		/* e2fsck wants /lost+found in a block: not ours to inline */
		made = dir->ino != EXT2_ROOT_INO || n->name_len != 10 ||
		       memcmp(n->name, "lost+found", 10);
		e2cb_restore_push_dir(rs, ino, !!e->ctx);
		rs->stack[rs->depth - 1].made = made;
	} else if (e->rec.links_count > 1) {
		e2cb_restore_note_link(rs, e->rec.ino, ino);
	}
	goto out;
undo:
	e2cb_restore_discard_inode(rs, ino, inode, is_dir);
out:
	free(xl.x);
	ext2fs_free_mem(&inode);
	return retval;
}
