/*
 * extract_image.c --- e2cryptbak extract: an ext4 device or image as the source
 *
 * Walks an unmounted ext4 filesystem through libext2fs in pre-order,
 * turning each inode into the entry the driver takes, and feeds a
 * regular file's blocks to the writer.  Damage is reported against the
 * entry it touches, and what can be read of the rest is extracted.
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
#include <unistd.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "ext2fs/journal_replay.h"
#include "extract.h"

struct run_ctx {
	struct xt *x;
	struct writer *w;
	errcode_t err;
};

static void report_bad_block(struct xt *x, errcode_t err, blk64_t blk,
			     uint64_t byte)
{
	e2cb_x_report(x, err, "cannot read block %llu (byte %llu of the "
		      "data)", (unsigned long long) blk,
		      (unsigned long long) byte);
}

/* Name the first block of @count at @pblk that cannot be read. */
static void report_bad_run(struct run_ctx *rc, blk64_t pblk, blk64_t count,
			   blk64_t lblk)
{
	ext2_filsys fs = rc->x->fs;
	errcode_t err = rc->err;
	blk64_t i;

	for (i = 0; i < count; i++) {
		err = io_channel_read_blk64(fs->io, pblk + i, 1,
					    rc->x->iobuf);
		if (err)
			break;
	}
	if (i == count)
		i = 0;
	report_bad_block(rc->x, err ? err : rc->err, pblk + i,
			 (lblk + i) * fs->blocksize);
}

static int run_proc(ext2_filsys fs, blk64_t lblk, blk64_t pblk,
		    blk64_t count, void *priv)
{
	struct run_ctx *rc = priv;
	blk64_t n, max = IOBUF_SIZE / fs->blocksize;
	uint8_t *dst;
	size_t room;

	while (count) {
		if (lblk * fs->blocksize >= rc->w->end)
			return BLOCK_ABORT;
		n = count < max ? count : max;
		dst = e2cb_xw_room(rc->w, lblk * fs->blocksize, &room);
		if (dst && room >= fs->blocksize) {
			if (n > room / fs->blocksize)
				n = room / fs->blocksize;
			/* workers read the device, not a replay's changes */
			if (rc->w->plan &&
			    !ext2fs_replay_io_changed(fs->io, pblk, n))
				e2cb_xw_plan_read(rc->w, dst,
						  pblk * fs->blocksize,
						  n * fs->blocksize);
			else
				rc->err = io_channel_read_blk64(fs->io, pblk,
								n, dst);
			if (rc->err) {
				report_bad_run(rc, pblk, n, lblk);
				return BLOCK_ABORT;
			}
			e2cb_xw_commit(rc->w, n * fs->blocksize);
		} else {
			rc->err = io_channel_read_blk64(fs->io, pblk, n,
							rc->x->iobuf);
			if (rc->err) {
				report_bad_run(rc, pblk, n, lblk);
				return BLOCK_ABORT;
			}
			e2cb_xw_add(rc->w, lblk * fs->blocksize, rc->x->iobuf,
				    n * fs->blocksize);
		}
		lblk += n;
		pblk += n;
		count -= n;
	}
	return 0;
}

static errcode_t image_feed(struct xt *x, const struct xentry *e,
			    struct writer *w)
{
	struct ext2_inode *inode = (struct ext2_inode *) x->cur_inode;
	struct run_ctx rc = { x, w, 0 };
	size_t size = 0;
	char *buf;
	errcode_t err;

	if (!(inode->i_flags & EXT4_INLINE_DATA_FL)) {
		/* a worker for each buffer: they read as they decrypt */
		w->plan = x->img_fd >= 0 && w->fis[1];
		w->read_fd = x->img_fd;
		err = ext2fs_stored_runs_iterate(x->fs, e->ino, inode,
						 run_proc, &rc);
		if (!err)
			err = rc.err;
		if (err || !w->plan)
			return err;
		e2cb_xw_finish(w);
		if (w->read_err) {
			report_bad_block(x, w->read_err,
					 w->bad_pos / x->block_size,
					 w->bad_byte);
			w->reported = 1;
		}
		return w->read_err;
	}
	err = ext2fs_inline_data_size(x->fs, e->ino, &size);
	if (err)
		return err;
	buf = malloc(size + 1);
	if (!buf)
		return ENOMEM;
	err = ext2fs_inline_data_get(x->fs, e->ino, inode, buf, &size);
	if (!err)
		e2cb_xw_add(w, 0, (uint8_t *) buf, size);
	free(buf);
	return err;
}

/* The target as stored: in i_block, inline, or in the one block */
static errcode_t image_symlink(struct xt *x, ext2_ino_t ino,
			       struct ext2_inode_large *inode, uint8_t *buf,
			       size_t *len)
{
	struct ext2_inode *i = (struct ext2_inode *) inode;
	uint64_t size = EXT2_I_SIZE(inode);
	size_t got = 0;
	blk64_t pblk = 0;
	errcode_t err;

	if (size == 0 || size >= x->fs->blocksize)
		return EXT2_ET_INODE_CORRUPTED;
	*len = size;
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		err = ext2fs_inline_data_size(x->fs, ino, &got);
		if (!err && (got < size || got > x->fs->blocksize))
			err = EXT2_ET_INODE_CORRUPTED;
		return err ? err : ext2fs_inline_data_get(x->fs, ino, i, buf,
							  &got);
	}
	if (ext2fs_is_fast_symlink(i)) {
		if (size > sizeof(inode->i_block))
			return EXT2_ET_INODE_CORRUPTED;
		memcpy(buf, inode->i_block, size);
		return 0;
	}
	err = ext2fs_bmap2(x->fs, ino, i, NULL, 0, 0, NULL, &pblk);
	if (!err && !pblk)
		err = EXT2_ET_INODE_CORRUPTED;
	if (!err)
		err = io_channel_read_blk64(x->fs->io, pblk, 1, x->iobuf);
	if (!err)
		memcpy(buf, x->iobuf, size);
	return err;
}

struct xattr_collect {
	struct e2cb_xattr_buf xb;
	errcode_t err;
};

/* All but the context and the inline data, as the archive keeps them */
static int collect_xattr(int index, const char *name, size_t name_len,
			 const void *value, size_t value_len, void *priv)
{
	struct xattr_collect *c = priv;

	if ((index == EXT4_XATTR_INDEX_ENCRYPTION && name_len == 1 &&
	     name[0] == 'c') ||
	    (index == 7 && name_len == 4 && !memcmp(name, "data", 4)))
		return 0;
	c->err = e2cb_xattr_buf_add(&c->xb, index, name, name_len, value,
				    value_len);
	return c->err ? XATTR_ABORT : 0;
}

struct child {
	ext2_ino_t ino;
	struct ext4_encrypted_name name;
};

struct child_list {
	struct child *c;
	size_t count, size;
	struct ext2_inode dir;
	struct xt *x;
	errcode_t err;
};

static int child_proc(ext2_filsys fs, struct ext2_dir_entry *de,
		      unsigned int rec_space, void *priv)
{
	struct child_list *cl = priv;
	int len = ext2fs_dirent_name_len(de);
	struct child *c;
	errcode_t err;

	if (de->name[0] == '.' && (len == 1 ||
				   (len == 2 && de->name[1] == '.')))
		return 0;
	if (e2cb_grow((void **) &cl->c, &cl->size, cl->count, sizeof(*c))) {
		cl->err = ENOMEM;
		return DIRENT_ABORT;
	}
	c = &cl->c[cl->count];
	c->ino = de->inode;
	err = ext2fs_dirent_encrypted_name(fs, &cl->dir, de, rec_space,
					   &c->name);
	if (err) {
		e2cb_x_report(cl->x, err, "the entry of inode %u is damaged; "
			      "skipped", de->inode);
		cl->x->failed++;
		return 0;
	}
	cl->count++;
	return 0;
}

/* Damage in a directory: what could be read of it is extracted */
static void dir_damage_proc(ext2_filsys fs EXT2FS_ATTR((unused)),
			    const struct ext2fs_dir_damage *d, void *priv)
{
	struct child_list *cl = priv;
	char where[128];

	e2cb_dir_damage_where(d, where, sizeof(where));
	e2cb_x_report(cl->x, d->err, "damaged directory, %s; %s", where,
		      ext2fs_dir_lost_string(d->lost));
	cl->x->failed++;
}

static int map_proc(ext2_filsys fs EXT2FS_ATTR((unused)),
		    blk64_t lblk EXT2FS_ATTR((unused)),
		    blk64_t pblk EXT2FS_ATTR((unused)),
		    blk64_t count EXT2FS_ATTR((unused)),
		    void *priv EXT2FS_ATTR((unused)))
{
	return 0;
}

/*
 * What the entry of @ino would miss, found before anything is written:
 * the inode is not what a name can lead to, or its block map is damaged.
 */
static errcode_t check_image_inode(struct xt *x, ext2_ino_t ino,
				   struct ext2_inode_large *inode)
{
	struct ext2_inode *i = (struct ext2_inode *) inode;
	errcode_t err;

	err = ext2fs_check_linked_inode(x->fs, ino, i);
	if (err || !LINUX_S_ISREG(i->i_mode) ||
	    (i->i_flags & EXT4_INLINE_DATA_FL))
		return err;
	return ext2fs_stored_runs_iterate(x->fs, ino, i, map_proc, NULL);
}

static void walk_image_dir(struct xt *x, ext2_ino_t dir,
			   struct ext2_inode_large *inode, size_t depth);

/* What the inode's own fields say of the entry */
static void entry_from_inode(struct xentry *xe, ext2_ino_t ino,
			     struct ext2_inode_large *inode, size_t isize)
{
	struct e2cb_inode_rec rec;

	xe->ino = ino;
	xe->mode = inode->i_mode;
	xe->uid = inode_uid(*inode);
	xe->gid = inode_gid(*inode);
	xe->links = inode->i_links_count;
	xe->size = EXT2_I_SIZE(inode);
	memset(&rec, 0, sizeof(rec));
	e2cb_inode_times(inode, isize, &rec);
	xe->atime = rec.atime;
	xe->mtime = rec.mtime;
	if (LINUX_S_ISCHR(xe->mode) || LINUX_S_ISBLK(xe->mode))
		e2cb_inode_rdev((struct ext2_inode *) inode, &xe->rdev_major,
				&xe->rdev_minor);
}

/*
 * Inode @ino, reached by @name (NULL: the root), given to the driver;
 * a directory's entries follow it, depth first.
 */
static void image_entry(struct xt *x, ext2_ino_t ino,
			const struct ext4_encrypted_name *name, size_t depth)
{
	size_t isize = EXT2_INODE_SIZE(x->fs->super), len;
	struct ext2_inode_large *inode;
	struct xattr_collect xc;
	struct xentry xe;
	uint8_t ctx[EXT4_ENCRYPTED_METADATA_MAX], *target = NULL;
	errcode_t err;

	memset(&xe, 0, sizeof(xe));
	memset(&xc, 0, sizeof(xc));
	if (name) {
		xe.name = name->name;
		xe.name_len = name->name_len;
	}
	inode = calloc(1, isize);
	if (!inode)
		return;
	err = ext2fs_read_inode_full(x->fs, ino, (struct ext2_inode *) inode,
				     isize);
	if (err) {
		/* with no mode, the driver cannot name it: say where it is */
		if (name)
			e2cb_x_report(x, err, "while reading inode %u, an "
				      "entry of this directory; not extracted",
				      ino);
		else
			com_err(program_name, err, "while reading the root "
				"inode %u; nothing extracted", ino);
		x->failed++;
		goto out;
	}
	xe.err = check_image_inode(x, ino, inode);
	entry_from_inode(&xe, ino, inode, isize);
	if (!xe.err && (inode->i_flags & EXT4_ENCRYPT_FL)) {
		xe.ctx = ctx;
		xe.err = ext2fs_get_encryption_context(x->fs, ino, inode, ctx,
						       sizeof(ctx), &len);
		xe.ctx_len = xe.err ? 0 : len;
		if (xe.err)
			xe.err_what = "cannot decrypt";
	}
	err = xe.err ? 0 : ext2fs_xattrs_raw_iterate(x->fs, ino, inode,
						     collect_xattr, &xc);
	if (!err)
		err = xc.err;
	if (err)
		xe.err = err;
	if (!xe.err && xc.xb.len) {
		e2cb_seal(xc.xb.buf, xc.xb.len);
		xe.xattrs = xc.xb.buf;
		xe.xattrs_len = xc.xb.len + 4;
	}
	if (!xe.err && LINUX_S_ISLNK(xe.mode)) {
		target = malloc(x->fs->blocksize + 1);
		xe.err = target ? image_symlink(x, ino, inode, target, &len) :
			 ENOMEM;
		if (!xe.err) {
			xe.target = target;
			xe.target_len = len;
		}
	}
	x->cur_inode = inode;
	if (e2cb_x_process(x, &xe, depth) && !xe.err && LINUX_S_ISDIR(xe.mode))
		walk_image_dir(x, ino, inode, depth + 1);
out:
	free(target);
	free(xc.xb.buf);
	free(inode);
}

static void walk_image_dir(struct xt *x, ext2_ino_t dir,
			   struct ext2_inode_large *inode, size_t depth)
{
	struct child_list cl;
	errcode_t err;
	size_t i;

	if (ext2fs_fast_test_inode_bitmap2(x->dirs_seen, dir)) {
		e2cb_x_report(x, 0, "directory inode %u is reached twice; not "
			      "entered again", dir);
		x->failed++;
		return;
	}
	ext2fs_fast_mark_inode_bitmap2(x->dirs_seen, dir);
	memset(&cl, 0, sizeof(cl));
	cl.x = x;
	memcpy(&cl.dir, inode, sizeof(cl.dir));
	err = ext2fs_dir_walk(x->fs, dir, &cl.dir, child_proc,
			      dir_damage_proc, &cl);
	if (err || cl.err) {
		e2cb_x_report(x, err ? err : cl.err,
			      "while reading the directory");
		x->failed++;
	}
	for (i = 0; i < cl.count; i++) {
		if (!cl.c[i].ino ||
		    cl.c[i].ino > x->fs->super->s_inodes_count) {
			e2cb_x_report(x, 0, "entry with bad inode number %u; "
				      "skipped", cl.c[i].ino);
			x->failed++;
			continue;
		}
		image_entry(x, cl.c[i].ino, &cl.c[i].name, depth);
	}
	free(cl.c);
}

/* An archive, or something that holds an ext4 superblock */
int e2cb_x_looks_like_image(const char *name)
{
	uint8_t buf[2048];
	struct stat st;
	ssize_t n;
	int fd;

	if (!strcmp(name, "-"))
		return 0;
	if (!stat(name, &st) && S_ISBLK(st.st_mode))
		return 1;
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n < (ssize_t) sizeof(buf))
		return 0;
	/* gzip, xz, zstd, or a ustar header: an archive */
	if ((buf[0] == 0x1f && buf[1] == 0x8b) ||
	    !memcmp(buf, "\xfd" "7zXZ", 5) ||
	    !memcmp(buf, "\x28\xb5\x2f\xfd", 4) ||
	    !memcmp(buf + 257, "ustar", 5))
		return 0;
	return buf[1080] == 0x53 && buf[1081] == 0xef;
}

/* The image or device, for a walk from its root */
int e2cb_x_open_image(struct xt *x, uint8_t salt[16])
{
	struct ext2fs_replay_stats replay;
	errcode_t err;

	if (e2cb_open_source(x->o->source, x->o->stale, &replay, &x->fs))
		return E2CB_EXIT_ERROR;
	memcpy(x->uuid, x->fs->super->s_uuid, 16);
	memcpy(salt, x->fs->super->s_encrypt_pw_salt, 16);
	x->block_size = x->fs->blocksize;
	x->feed = image_feed;
	/* the workers' reads; without it, this thread reads */
	x->img_fd = open(x->o->source, O_RDONLY | O_CLOEXEC);
	err = ext2fs_allocate_inode_bitmap(x->fs, "directories seen",
					   &x->dirs_seen);
	if (err) {
		com_err(program_name, err, "while setting up");
		return E2CB_EXIT_ERROR;
	}
	return 0;
}

void e2cb_x_walk_image(struct xt *x)
{
	image_entry(x, EXT2_ROOT_INO, NULL, 0);
}
