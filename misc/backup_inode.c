/*
 * backup_inode.c --- e2cryptbak backup: what an inode holds, read out
 * of the image for its archive entry
 *
 * The context, the raw name, the attributes, the symlink target as
 * stored, and the stored blocks, ciphertext as it lies on disk, holes
 * kept as holes.  The writer makes the records of them.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <et/com_err.h>
#include "backup.h"

static int region_proc(ext2_filsys fs, blk64_t lblk, blk64_t pblk,
		       blk64_t count, void *priv)
{
	struct region_list *rl = priv;
	uint64_t off = lblk * fs->blocksize;
	uint64_t len = count * fs->blocksize;
	uint64_t pos = pblk * fs->blocksize;
	struct e2cb_stretch *last = rl->count ? &rl->r[rl->count - 1] : NULL;

	/* an unencrypted file's data ends at i_size, as tar expects */
	if (off >= rl->limit)
		return 0;
	if (off + len > rl->limit)
		len = rl->limit - off;
	if (last && last->off + last->len == off &&
	    last->len % fs->blocksize == 0 && last->pos + last->len == pos) {
		last->len += len;
		return 0;
	}
	if (e2cb_grow((void **) &rl->r, &rl->size, rl->count, sizeof(*rl->r))) {
		rl->retval = EXT2_ET_NO_MEMORY;
		return BLOCK_ABORT;
	}
	rl->r[rl->count].off = off;
	rl->r[rl->count].len = len;
	rl->r[rl->count].pos = pos;
	rl->count++;
	return 0;
}

/*
 * Read @count blocks at @pblk into @buf.  When that fails, the blocks
 * are read one by one to find the first that cannot be: *@bad.
 */
static errcode_t read_blocks(struct backup *b, blk64_t pblk, blk64_t count,
			     char *buf, blk64_t *bad)
{
	errcode_t retval;
	blk64_t i;

	/*
	 * A negative count is in bytes and bypasses unix_io's block cache,
	 * which then keeps the inode tables and directories that the next
	 * inodes need instead of file data.
	 */
	*bad = pblk;
	retval = io_channel_read_blk64(b->fs->io, pblk,
				       -(int) (count * b->fs->blocksize), buf);
	if (!retval || count == 1)
		return retval;
	for (i = 0; i < count; i++) {
		*bad = pblk + i;
		retval = io_channel_read_blk64(b->fs->io, pblk + i,
					       -(int) b->fs->blocksize,
					       buf + i * b->fs->blocksize);
		if (retval)
			return retval;
	}
	return 0;
}

/*
 * Read the data of a regular file before its header is written: once
 * it is, the entry cannot be taken back, and a block that cannot be
 * read would leave a damaged file in the archive.  Data that fits in
 * the writer's buffer stays there; more is read twice, the second
 * time (e2cb_backup_write_data()) mostly from the page cache.
 */
static errcode_t preread_data(struct backup *b, const struct region_list *rl)
{
	unsigned int bs = b->fs->blocksize;
	uint64_t total = 0, pos = 0, done, n;
	const struct e2cb_stretch *r;
	blk64_t count, bad;
	errcode_t retval;
	size_t i;

	b->wk.preread = 0;
	for (i = 0; i < rl->count; i++)
		total += (rl->r[i].len + bs - 1) / bs * bs;
	b->iobuf = b->wk.ops->data_buf(&b->wk, total);
	for (i = 0; i < rl->count; i++) {
		r = &rl->r[i];
		for (done = 0; done < r->len; done += n) {
			n = r->len - done;
			if (n > IOBUF_SIZE)
				n = IOBUF_SIZE;
			count = (n + bs - 1) / bs;
			retval = read_blocks(b, (r->pos + done) / bs, count,
					     b->iobuf +
					     (total <= IOBUF_SIZE ? pos : 0),
					     &bad);
			if (retval) {
				snprintf(b->why, sizeof(b->why), "reading "
					 "block %llu (byte %llu of its data) "
					 "of", (unsigned long long) bad,
					 (unsigned long long) (r->off +
					 (bad - r->pos / bs) * bs));
				return retval;
			}
			pos += count * bs;
		}
	}
	b->wk.preread = total <= IOBUF_SIZE;
	return 0;
}

/*
 * The end reads the data itself, and says what it cannot: reading it
 * here first would read it twice.  Whatever goes through the walk
 * after all is read once, a buffer at a time.
 */
static errcode_t no_preread(struct backup *b)
{
	b->wk.preread = 0;
	b->iobuf = b->wk.ops->data_buf(&b->wk, IOBUF_SIZE);
	return 0;
}

/*
 * Read the next @count blocks of stretch @r, @done bytes into it, into
 * iobuf.  What cannot be read now, though it could be a moment ago, is
 * stored as zeros: the header is out, and the entry must be whole.
 * The archive says it is incomplete.
 */
static void fetch_blocks(struct backup *b, const struct e2cb_stretch *r,
			 uint64_t done, blk64_t count)
{
	unsigned int bs = b->fs->blocksize;
	blk64_t pblk = (r->pos + done) / bs, bad, i;
	errcode_t retval;

	if (!read_blocks(b, pblk, count, b->iobuf, &bad))
		return;
	for (i = bad - pblk; i < count; i++) {
		retval = io_channel_read_blk64(b->fs->io, pblk + i, -(int) bs,
					       b->iobuf + i * bs);
		if (!retval)
			continue;
		memset(b->iobuf + i * bs, 0, bs);
		com_err(program_name, retval, "while reading block %llu "
			"(byte %llu of the data of %s), read a moment ago; "
			"stored as zeros: the file is damaged in the archive",
			(unsigned long long) (pblk + i),
			(unsigned long long) (r->off + done + i * bs),
			shown_path(b));
		b->wk.skipped++;
	}
}

/*
 * Not read before (b->sink_reads): the end can still fail the entry,
 * so what cannot be read is named and fails it rather than being
 * stored as zeros.  The end counts it.
 */
static errcode_t fetch_first(struct backup *b, const struct e2cb_stretch *r,
			     uint64_t done, blk64_t count)
{
	unsigned int bs = b->fs->blocksize;
	blk64_t pblk = (r->pos + done) / bs, bad;
	errcode_t retval;

	retval = read_blocks(b, pblk, count, b->iobuf, &bad);
	if (retval)
		com_err(program_name, retval, "while reading block %llu "
			"(byte %llu of the data of %s)",
			(unsigned long long) bad,
			(unsigned long long) (r->off + done +
					      (bad - pblk) * bs),
			shown_path(b));
	return retval;
}

/*
 * The data of the entry just sent, too large to be kept from
 * preread_data(), or not read before: read, a buffer at a time, for
 * @func.
 */
errcode_t e2cb_backup_read_data(struct backup *b,
				const struct region_list *rl,
				e2cb_walk_data_func func, void *priv)
{
	unsigned int bs = b->fs->blocksize;
	const struct e2cb_stretch *r;
	uint64_t done, n;
	errcode_t retval;
	size_t i;

	for (i = 0; i < rl->count; i++) {
		r = &rl->r[i];
		for (done = 0; done < r->len; done += n) {
			n = r->len - done;
			if (n > IOBUF_SIZE)
				n = IOBUF_SIZE;
			if (b->wk.sink_reads) {
				retval = fetch_first(b, r, done,
						     (n + bs - 1) / bs);
				if (retval)
					return retval;
			} else {
				fetch_blocks(b, r, done, (n + bs - 1) / bs);
			}
			retval = func(priv, r->off + done, b->iobuf, n);
			if (retval)
				return retval;
		}
	}
	return 0;
}

/* The map entries of the regions: libarchive joins those that abut */
static size_t sparse_runs(const struct region_list *rl)
{
	size_t i, n = 0;

	for (i = 0; i < rl->count; i++)
		if (!i || rl->r[i - 1].off + rl->r[i - 1].len != rl->r[i].off)
			n++;
	return n;
}

/* The stored regions, and the size the tar entry must cover */
static errcode_t map_regions(struct backup *b, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     struct region_list *rl, uint64_t *tar_size)
{
	uint64_t i_size = EXT2_I_SIZE(inode);
	errcode_t retval;

	memset(rl, 0, sizeof(*rl));
	/* ciphertext is kept whole: i_size alone says where it ends */
	rl->limit = (inode->i_flags & EXT4_ENCRYPT_FL) ? ~0ULL : i_size;
	retval = ext2fs_stored_runs_iterate(b->fs, ino,
					    (struct ext2_inode *) inode,
					    region_proc, rl);
	if (!retval)
		retval = rl->retval;
	if (retval)
		return retval;
	/* beyond 2^32 blocks: corrupt, and holes no one could feed */
	if (i_size > ((uint64_t) 1 << 32) * b->fs->blocksize)
		return EXT2_ET_FILE_TOO_BIG;
	/* the sparse map, and the (size, 0) that may end it: readers
	 * refuse more (doc/archive-format.txt 10.1) */
	if (sparse_runs(rl) + 1 > E2CB_MAX_STRETCHES) {
		snprintf(b->why, sizeof(b->why), "archiving (more than %u "
			 "data stretches: holes), in", E2CB_MAX_STRETCHES);
		return EXT2_ET_FILE_TOO_BIG;
	}
	*tar_size = i_size;
	if (rl->count && rl->r[rl->count - 1].off +
	    rl->r[rl->count - 1].len > *tar_size)
		*tar_size = rl->r[rl->count - 1].off +
			    rl->r[rl->count - 1].len;
	return 0;
}

/* The inline data area, up to i_size */
static errcode_t read_inline(struct backup *b, ext2_ino_t ino,
			     struct ext2_inode_large *inode, char **buf,
			     size_t *len)
{
	errcode_t retval;

	retval = ext2fs_inline_data_size(b->fs, ino, len);
	if (retval)
		return retval;
	if (*len > EXT2_I_SIZE(inode))
		*len = EXT2_I_SIZE(inode);
	retval = ext2fs_get_mem(*len + 4096, buf);
	if (retval)
		return retval;
	return ext2fs_inline_data_get(b->fs, ino, (struct ext2_inode *) inode,
				      *buf, NULL);
}

/*
 * Data of a regular file: stored blocks, read into the writer's buffer,
 * or the inline data area, into *@inline_buf.
 */
errcode_t e2cb_backup_prepare_data(struct backup *b, ext2_ino_t ino,
				   struct ext2_inode_large *inode,
				   struct region_list *rl, char **inline_buf,
				   size_t *inline_len)
{
	uint64_t tar_size = 0;
	errcode_t retval;

	*inline_buf = NULL;
	*inline_len = 0;
	memset(rl, 0, sizeof(*rl));
	if (!LINUX_S_ISREG(inode->i_mode))
		return 0;
	if (!(inode->i_flags & EXT4_INLINE_DATA_FL)) {
		retval = map_regions(b, ino, inode, rl, &tar_size);
		if (retval)
			return retval;
		retval = b->wk.sink_reads ? no_preread(b) : preread_data(b, rl);
		if (retval)
			return retval;
		b->wk.ops->set_stretches(&b->wk, tar_size, rl->r, rl->count);
		return 0;
	}
	retval = read_inline(b, ino, inode, inline_buf, inline_len);
	if (retval)
		return retval;
	b->wk.ops->set_inline(&b->wk, *inline_buf, *inline_len);
	return 0;
}

struct xattr_ctx {
	struct e2cb_xattr_buf xb;
	errcode_t retval;
};

/*
 * The context (index 9 "c") travels in the 'e5' blob, and inline data
 * ("system.data") in the entry's data; every other attribute is kept
 * byte for byte with its index.
 */
static int xattr_proc(int index, const char *name, size_t name_len,
		      const void *value, size_t value_len, void *priv)
{
	struct xattr_ctx *xc = priv;

	if (index == EXT4_XATTR_INDEX_ENCRYPTION && name_len == 1 &&
	    name[0] == 'c')
		return 0;
	if (index == 7 && name_len == 4 && memcmp(name, "data", 4) == 0)
		return 0;
	xc->retval = e2cb_xattr_buf_add(&xc->xb, index, name, name_len,
					value, value_len);
	return xc->retval ? XATTR_ABORT : 0;
}

errcode_t e2cb_backup_xattrs(struct backup *b, ext2_ino_t ino,
			     struct ext2_inode_large *inode)
{
	struct xattr_ctx xc;
	errcode_t retval;

	memset(&xc, 0, sizeof(xc));
	retval = ext2fs_xattrs_raw_iterate(b->fs, ino, inode, xattr_proc,
					   &xc);
	if (!retval)
		retval = xc.retval;
	/* e2cb_xattr_buf_add() leaves room for the seal */
	if (!retval && xc.xb.len)
		b->wk.ops->add_xattrs(&b->wk, xc.xb.buf, xc.xb.len);
	free(xc.xb.buf);
	return retval;
}

/*
 * A symlink's target as stored: inline, in i_block, or in one block,
 * read whole into @buf (EXT2_MAX_BLOCK_SIZE bytes at least).
 */
static errcode_t read_symlink(struct backup *b, ext2_ino_t ino,
			      struct ext2_inode_large *inode, char *buf,
			      size_t *len)
{
	uint64_t size = EXT2_I_SIZE(inode);
	size_t got = 0;
	errcode_t retval;

	if (size == 0 || size >= b->fs->blocksize)
		return EXT2_ET_INODE_CORRUPTED;
	*len = size;
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		retval = ext2fs_inline_data_size(b->fs, ino, &got);
		if (!retval && got < size)
			retval = EXT2_ET_INODE_CORRUPTED;
		if (!retval)
			retval = ext2fs_inline_data_get(b->fs, ino,
					(struct ext2_inode *) inode, buf, &got);
		return retval;
	}
	if (ext2fs_is_fast_symlink((struct ext2_inode *) inode)) {
		if (size > sizeof(inode->i_block))
			return EXT2_ET_INODE_CORRUPTED;
		memcpy(buf, inode->i_block, size);
		return 0;
	}
	if (inode->i_flags & EXT4_EXTENTS_FL) {
		blk64_t pblk;

		retval = ext2fs_bmap2(b->fs, ino, (struct ext2_inode *) inode,
				      NULL, 0, 0, NULL, &pblk);
		if (retval)
			return retval;
		if (!pblk)
			return EXT2_ET_INODE_CORRUPTED;
		retval = io_channel_read_blk64(b->fs->io, pblk, 1, buf);
	} else {
		if (inode->i_block[0] < b->fs->super->s_first_data_block ||
		    inode->i_block[0] >= ext2fs_blocks_count(b->fs->super))
			return EXT2_ET_CRYPT_BLOCK_OUT_OF_RANGE;
		retval = io_channel_read_blk64(b->fs->io, inode->i_block[0],
					       1, buf);
	}
	return retval;
}

errcode_t e2cb_backup_symlink(struct backup *b, ext2_ino_t ino,
			      struct ext2_inode_large *inode)
{
	char target[EXT2_MAX_BLOCK_SIZE + 4];
	int encrypted = !!(inode->i_flags & EXT4_ENCRYPT_FL);
	size_t len;
	errcode_t retval;

	retval = read_symlink(b, ino, inode, target, &len);
	if (retval)
		return retval;
	if (!encrypted && memchr(target, 0, len))
		return EXT2_ET_INODE_CORRUPTED;
	if (encrypted) {
		retval = ext2fs_check_encrypted_symlink(target, len);
		if (retval)
			return retval;
	}
	return b->wk.ops->add_symlink(&b->wk, (uint8_t *) target, len,
				       encrypted);
}

/* 'e5' (context and i_size) for an encrypted inode; 'ef'/'ed' for a name
 * in an encrypted directory */
errcode_t e2cb_backup_crypt_records(struct backup *b, ext2_ino_t ino,
				    struct ext2_inode_large *inode,
				    const struct child *c, int parent_enc)
{
	__u8 ctx[EXT4_ENCRYPTED_METADATA_MAX];
	size_t ctx_len = 0;
	errcode_t retval;

	if (inode->i_flags & EXT4_ENCRYPT_FL) {
		retval = ext2fs_get_encryption_context(b->fs, ino, inode, ctx,
						       sizeof(ctx), &ctx_len);
		if (retval)
			return retval;
		retval = b->wk.ops->add_context(&b->wk, ctx, ctx_len);
		if (retval)
			return retval;
	}
	if (!parent_enc || !c)
		return 0;
	/* a directory in an encrypted directory is always encrypted */
	if (LINUX_S_ISDIR(inode->i_mode) && !ctx_len)
		return EXT2_ET_CRYPT_NO_CONTEXT;
	return b->wk.ops->add_name(&b->wk, &c->name, ctx, ctx_len);
}
