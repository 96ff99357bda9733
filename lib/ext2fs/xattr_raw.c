/*
 * xattr_raw.c --- walk an inode's extended attributes as stored
 *
 * The generic xattr handle of libext2fs names attributes by prefix and
 * reports an index it does not know (9, the fscrypt context, among them)
 * by its bare name, so "c" in index 9 and "c" in index 0 look the same.
 * A backup must keep the index: this walker hands out (index, name,
 * value) exactly as on disk, in-inode attributes first, then the EA
 * block, every offset checked against the area it lies in.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include <ext2fs/ext2_ext_attr.h>
#include "ext4_crypt.h"

/* values in EA inodes are bounded as the kernel bounds them */
#define EA_INODE_VALUE_MAX	(64 * 1024 * 1024)

static errcode_t read_ea_inode_value(ext2_filsys fs, ext2_ino_t ea_ino,
				     size_t size, char **value)
{
	ext2_file_t file;
	unsigned int got = 0;
	errcode_t retval, rc;

	if (size > EA_INODE_VALUE_MAX)
		return EXT2_ET_EA_BAD_VALUE_SIZE;
	retval = ext2fs_get_mem(size ? size : 1, value);
	if (retval)
		return retval;
	retval = ext2fs_file_open(fs, ea_ino, 0, &file);
	if (retval)
		goto errout;
	retval = ext2fs_file_read(file, *value, size, &got);
	rc = ext2fs_file_close(file);
	if (!retval)
		retval = rc;
	if (!retval && got != size)
		retval = EXT2_ET_EA_BAD_VALUE_SIZE;
errout:
	if (retval)
		ext2fs_free_mem(value);
	return retval;
}

/*
 * Walk the entries from @first to @end; value offsets are relative to
 * @vbase and values must end before @vend.  Returns XATTR_ABORT in
 * *@stop when the callback asked to stop.
 */
static errcode_t walk_entries(ext2_filsys fs, const char *first,
			      const char *end, const char *vbase,
			      const char *vend, ext2fs_xattr_raw_func func,
			      void *priv, int *stop)
{
	const struct ext2_ext_attr_entry *e;
	const char *p = first, *value;
	char *ea_value = NULL;
	errcode_t retval;
	int ret;

	while (p + sizeof(__u32) <= end) {
		e = (const struct ext2_ext_attr_entry *) p;
		if (EXT2_EXT_IS_LAST_ENTRY(e))
			return 0;
		if (p + sizeof(*e) > end ||
		    p + EXT2_EXT_ATTR_LEN(e->e_name_len) > end)
			return EXT2_ET_CRYPT_BAD_EA;
		if (e->e_value_inum) {
			if (!ext2fs_has_feature_ea_inode(fs->super) ||
			    e->e_value_inum > fs->super->s_inodes_count)
				return EXT2_ET_CRYPT_BAD_EA;
			retval = read_ea_inode_value(fs, e->e_value_inum,
						     e->e_value_size,
						     &ea_value);
			if (retval)
				return retval;
			value = ea_value;
		} else {
			if (e->e_value_offs + (size_t) e->e_value_size >
			    (size_t) (vend - vbase))
				return EXT2_ET_CRYPT_BAD_EA;
			value = vbase + e->e_value_offs;
		}
		ret = func(e->e_name_index, EXT2_EXT_ATTR_NAME(e),
			   e->e_name_len, value, e->e_value_size, priv);
		ext2fs_free_mem(&ea_value);
		if (ret & XATTR_ABORT) {
			*stop = 1;
			return 0;
		}
		p = (const char *) EXT2_EXT_ATTR_NEXT(e);
	}
	return EXT2_ET_CRYPT_BAD_EA;
}

static errcode_t walk_in_inode(ext2_filsys fs,
			       const struct ext2_inode_large *inode,
			       ext2fs_xattr_raw_func func, void *priv,
			       int *stop)
{
	size_t isize = EXT2_INODE_SIZE(fs->super);
	const char *start, *end;
	__u32 magic;

	if (isize <= EXT2_GOOD_OLD_INODE_SIZE ||
	    EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize +
	    sizeof(__u32) > isize)
		return 0;
	/* as the kernel: the entries are read as __u32s, aligned */
	if (inode->i_extra_isize & 3)
		return EXT2_ET_CRYPT_BAD_EA;
	start = (const char *) inode + EXT2_GOOD_OLD_INODE_SIZE +
		inode->i_extra_isize;
	end = (const char *) inode + isize;
	memcpy(&magic, start, sizeof(magic));
	if (ext2fs_le32_to_cpu(magic) != EXT2_EXT_ATTR_MAGIC)
		return 0;
	start += sizeof(__u32);
	/* in-inode value offsets count from the first entry */
	return walk_entries(fs, start, end, start, end, func, priv, stop);
}

static errcode_t walk_block(ext2_filsys fs, ext2_ino_t ino,
			    const struct ext2_inode_large *inode,
			    ext2fs_xattr_raw_func func, void *priv,
			    int *stop)
{
	blk64_t blk = ext2fs_file_acl_block(fs, (struct ext2_inode *) inode);
	char *block = NULL;
	errcode_t retval;

	if (!blk)
		return 0;
	if (blk < fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_BAD_EA_BLOCK_NUM;
	retval = ext2fs_get_mem(fs->blocksize, &block);
	if (retval)
		return retval;
	retval = ext2fs_read_ext_attr3(fs, blk, block, ino);
	if (!retval)
		retval = walk_entries(fs,
				block + sizeof(struct ext2_ext_attr_header),
				block + fs->blocksize, block,
				block + fs->blocksize, func, priv, stop);
	ext2fs_free_mem(&block);
	return retval;
}

/*
 * Call @func for every extended attribute of @ino.  @inode is the full
 * on-disk inode (EXT2_INODE_SIZE bytes).  @func returns XATTR_ABORT to
 * stop.  Inline data ("system.data") is reported like any other entry.
 */
errcode_t ext2fs_xattrs_raw_iterate(ext2_filsys fs, ext2_ino_t ino,
				    const struct ext2_inode_large *inode,
				    ext2fs_xattr_raw_func func, void *priv)
{
	errcode_t retval;
	int stop = 0;

	retval = walk_in_inode(fs, inode, func, priv, &stop);
	if (retval || stop)
		return retval;
	return walk_block(fs, ino, inode, func, priv, &stop);
}

static int raw_cmp(const struct ext2fs_raw_xattr *a,
		   const struct ext2fs_raw_xattr *b)
{
	if (a->index != b->index)
		return a->index - b->index;
	if (a->name_len != b->name_len)
		return (int) a->name_len - (int) b->name_len;
	return memcmp(a->name, b->name, a->name_len);
}

/* Lay @count attributes out in [start, end): entries up, values down. */
static void put_entries(char *start, char *end, int in_inode,
			const struct ext2fs_raw_xattr **list, size_t count)
{
	struct ext2_ext_attr_entry *e;
	char *p = start, *vbase = in_inode ? start : start - sizeof(
				struct ext2_ext_attr_header);
	char *v = end;
	size_t i;

	for (i = 0; i < count; i++) {
		e = (struct ext2_ext_attr_entry *) p;
		v -= EXT2_EXT_ATTR_SIZE(list[i]->value_len);
		memset(e, 0, sizeof(*e));
		e->e_name_len = list[i]->name_len;
		e->e_name_index = list[i]->index;
		e->e_value_offs = list[i]->value_len ? v - vbase : 0;
		e->e_value_size = list[i]->value_len;
		memcpy(EXT2_EXT_ATTR_NAME(e), list[i]->name,
		       list[i]->name_len);
		memset(v, 0, EXT2_EXT_ATTR_SIZE(list[i]->value_len));
		memcpy(v, list[i]->value, list[i]->value_len);
		e->e_hash = ext2fs_ext_attr_hash_entry(e, v);
		p = (char *) EXT2_EXT_ATTR_NEXT(e);
	}
}

static size_t attr_space(const struct ext2fs_raw_xattr *x)
{
	return EXT2_EXT_ATTR_LEN(x->name_len) +
	       EXT2_EXT_ATTR_SIZE(x->value_len);
}

static int cmp_ptr(const void *a, const void *b)
{
	return raw_cmp(*(const struct ext2fs_raw_xattr * const *) a,
		       *(const struct ext2fs_raw_xattr * const *) b);
}

/*
 * The EA blocks written through a share table, by the hash of their
 * contents: an inode whose block would be the same takes one of them
 * with one more reference, as the kernel's mbcache has it share.
 */
struct ea_slot {
	__u32 hash;
	blk64_t blk;			/* 0: a free slot */
};

struct ext2fs_ea_share {
	struct ea_slot *slot;
	size_t size, count;		/* size: a power of 2 */
};

errcode_t ext2fs_ea_share_new(struct ext2fs_ea_share **ret)
{
	return ext2fs_get_memzero(sizeof(**ret), ret);
}

void ext2fs_ea_share_free(struct ext2fs_ea_share *share)
{
	if (!share)
		return;
	ext2fs_free_mem(&share->slot);
	ext2fs_free_mem(&share);
}

static void share_put(struct ea_slot *slot, size_t size, __u32 hash,
		      blk64_t blk)
{
	size_t i;

	for (i = hash & (size - 1); slot[i].blk; i = (i + 1) & (size - 1))
		;
	slot[i].hash = hash;
	slot[i].blk = blk;
}

static errcode_t share_add(struct ext2fs_ea_share *share, __u32 hash,
			   blk64_t blk)
{
	struct ea_slot *n;
	size_t size, i;
	errcode_t retval;

	if ((share->count + 1) * 2 > share->size) {
		size = share->size ? share->size * 2 : 64;
		retval = ext2fs_get_arrayzero(size, sizeof(*n), &n);
		if (retval)
			return retval;
		for (i = 0; i < share->size; i++)
			if (share->slot[i].blk)
				share_put(n, size, share->slot[i].hash,
					  share->slot[i].blk);
		ext2fs_free_mem(&share->slot);
		share->slot = n;
		share->size = size;
	}
	share_put(share->slot, share->size, hash, blk);
	share->count++;
	return 0;
}

/*
 * Whether @blk still holds the attributes of @want (a block image with
 * its hash set), in use and with a reference to spare; it is then read
 * into @buf.  A block taken back since, or reused, does not.
 */
static int same_ea_block(ext2_filsys fs, blk64_t blk, ext2_ino_t ino,
			 const char *want, char *buf)
{
	const struct ext2_ext_attr_header *w = (const void *) want;
	const struct ext2_ext_attr_header *h = (const void *) buf;

	if (!ext2fs_test_block_bitmap2(fs->block_map, blk) ||
	    ext2fs_read_ext_attr3(fs, blk, buf, ino))
		return 0;
	return h->h_magic == w->h_magic && h->h_blocks == w->h_blocks &&
	       h->h_hash == w->h_hash && h->h_refcount >= 1 &&
	       h->h_refcount < EXT2_EXT_ATTR_REFCOUNT_MAX &&
	       !memcmp(buf + sizeof(*h), want + sizeof(*h),
		       fs->blocksize - sizeof(*h));
}

/* Give @inode a block of @share's that holds @want already, if any */
static errcode_t share_find(ext2_filsys fs, struct ext2fs_ea_share *share,
			    ext2_ino_t ino, struct ext2_inode_large *inode,
			    const char *want, int *found)
{
	const struct ext2_ext_attr_header *w = (const void *) want;
	struct ext2_ext_attr_header *h;
	char *buf;
	size_t i;
	errcode_t retval;

	*found = 0;
	if (!share->size)
		return 0;
	retval = ext2fs_get_mem(fs->blocksize, &buf);
	if (retval)
		return retval;
	h = (struct ext2_ext_attr_header *) buf;
	for (i = w->h_hash & (share->size - 1); share->slot[i].blk;
	     i = (i + 1) & (share->size - 1)) {
		if (share->slot[i].hash != w->h_hash ||
		    !same_ea_block(fs, share->slot[i].blk, ino, want, buf))
			continue;
		h->h_refcount++;
		retval = ext2fs_write_ext_attr3(fs, share->slot[i].blk, buf,
						ino);
		if (retval)
			break;
		ext2fs_file_acl_block_set(fs, (struct ext2_inode *) inode,
					  share->slot[i].blk);
		retval = ext2fs_iblk_add_blocks(fs,
					(struct ext2_inode *) inode, 1);
		*found = 1;
		break;
	}
	ext2fs_free_mem(&buf);
	return retval;
}

static errcode_t write_ea_block(ext2_filsys fs, ext2_ino_t ino,
				struct ext2_inode_large *inode,
				const struct ext2fs_raw_xattr **list,
				size_t count, struct ext2fs_ea_share *share)
{
	int found = 0;
	struct ext2_ext_attr_header *h;
	blk64_t blk, goal;
	char *buf;
	errcode_t retval;

	/* the kernel searches block entries in (index, len, name) order */
	qsort(list, count, sizeof(*list), cmp_ptr);
	retval = ext2fs_get_memzero(fs->blocksize, &buf);
	if (retval)
		return retval;
	h = (struct ext2_ext_attr_header *) buf;
	h->h_magic = EXT2_EXT_ATTR_MAGIC;
	h->h_refcount = 1;
	h->h_blocks = 1;
	put_entries(buf + sizeof(*h), buf + fs->blocksize, 0, list, count);
	/* over the entries up to the last: the kernel's mbcache key */
	ext2fs_ext_attr_block_rehash(h, (struct ext2_ext_attr_entry *)
				     (buf + fs->blocksize));
	if (share) {
		retval = share_find(fs, share, ino, inode, buf, &found);
		if (retval || found)
			goto errout;
	}
	goal = ext2fs_find_inode_goal(fs, ino, (struct ext2_inode *) inode,
				      0);
	retval = ext2fs_new_block2(fs, goal, NULL, &blk);
	if (retval)
		goto errout;
	retval = ext2fs_write_ext_attr3(fs, blk, buf, ino);
	if (retval)
		goto errout;
	ext2fs_block_alloc_stats2(fs, blk, +1);
	ext2fs_file_acl_block_set(fs, (struct ext2_inode *) inode, blk);
	retval = ext2fs_iblk_add_blocks(fs, (struct ext2_inode *) inode, 1);
	if (!retval && share)
		retval = share_add(share, h->h_hash, blk);
errout:
	ext2fs_free_mem(&buf);
	return retval;
}

/*
 * The bytes of attributes an inode whose fixed fields end @extra_isize
 * bytes past the first 128 holds: what is left of it but the magic
 * before the entries and the four zero bytes after them, as the kernel
 * counts it (fs/ext4/xattr.c).
 */
size_t ext2fs_xattrs_raw_room(ext2_filsys fs, unsigned int extra_isize)
{
	size_t isize = EXT2_INODE_SIZE(fs->super);
	size_t start = EXT2_GOOD_OLD_INODE_SIZE + extra_isize;

	if (isize <= EXT2_GOOD_OLD_INODE_SIZE ||
	    start + 2 * sizeof(__u32) > isize)
		return 0;
	return isize - start - 2 * sizeof(__u32);
}

/* Room for in-inode attributes, or 0 (and *start NULL) when none */
static size_t in_inode_room(ext2_filsys fs, struct ext2_inode_large *inode,
			    char **start)
{
	size_t room;

	*start = NULL;
	if (EXT2_INODE_SIZE(fs->super) <= EXT2_GOOD_OLD_INODE_SIZE)
		return 0;
	if (inode->i_extra_isize < sizeof(inode->i_extra_isize))
		inode->i_extra_isize = sizeof(struct ext2_inode_large) -
				       EXT2_GOOD_OLD_INODE_SIZE;
	room = ext2fs_xattrs_raw_room(fs, inode->i_extra_isize);
	if (room)
		*start = (char *) inode + EXT2_GOOD_OLD_INODE_SIZE +
			 inode->i_extra_isize;
	return room;
}

/*
 * Where ext2fs_xattrs_raw_write() puts @list: the first *@n_in in the
 * inode's @room bytes (while they fit, in order), the rest in one EA
 * block.  *@in_inode and *@in_block get the bytes each part takes,
 * entries and values rounded as on disk; EXT2_ET_EA_NO_SPACE when the
 * block, its header and the four zero bytes after the entries
 * (the kernel's layout) cannot hold its part.
 */
errcode_t ext2fs_xattrs_raw_fit(ext2_filsys fs, size_t room,
				const struct ext2fs_raw_xattr *list,
				size_t count, size_t *n_in,
				size_t *in_inode, size_t *in_block)
{
	size_t i;

	*n_in = *in_inode = *in_block = 0;
	for (i = 0; i < count; i++) {
		if (list[i].name_len > 255 || list[i].index > 255 ||
		    list[i].index < 0)
			return EXT2_ET_EA_BAD_NAME_LEN;
		if (*n_in == i && *in_inode + attr_space(&list[i]) <= room) {
			*in_inode += attr_space(&list[i]);
			(*n_in)++;
		} else {
			*in_block += attr_space(&list[i]);
		}
	}
	if (*in_block + sizeof(struct ext2_ext_attr_header) +
	    sizeof(__u32) > fs->blocksize)
		return EXT2_ET_EA_NO_SPACE;
	return 0;
}

/*
 * Give @inode (the full in-memory inode, written back by the caller)
 * exactly the attributes in @list, with their name indexes: in-inode
 * while they fit, in order, the rest in a new EA block.  The inode must
 * not have an EA block yet.  Values go no further than one block: this
 * does not create EA inodes.
 */
errcode_t ext2fs_xattrs_raw_write(ext2_filsys fs, ext2_ino_t ino,
				  struct ext2_inode_large *inode,
				  const struct ext2fs_raw_xattr *list,
				  size_t count)
{
	return ext2fs_xattrs_raw_write_shared(fs, ino, inode, list, count,
					      NULL);
}

/*
 * ext2fs_xattrs_raw_write(); the EA block, if one is needed, is one of
 * @share's when one holds the same attributes (see ext2fs_ea_share).
 */
errcode_t ext2fs_xattrs_raw_write_shared(ext2_filsys fs, ext2_ino_t ino,
					 struct ext2_inode_large *inode,
					 const struct ext2fs_raw_xattr *list,
					 size_t count,
					 struct ext2fs_ea_share *share)
{
	const struct ext2fs_raw_xattr **ptrs = NULL;
	size_t room, used, n_in, blk_used, i;
	char *start;
	__u32 magic = ext2fs_cpu_to_le32(EXT2_EXT_ATTR_MAGIC);
	errcode_t retval;

	if (ext2fs_file_acl_block(fs, (struct ext2_inode *) inode))
		return EXT2_ET_EA_KEY_NOT_FOUND;
	room = in_inode_room(fs, inode, &start);
	retval = ext2fs_xattrs_raw_fit(fs, room, list, count, &n_in, &used,
				       &blk_used);
	if (retval)
		return retval;
	retval = ext2fs_get_array(count ? count : 1, sizeof(*ptrs), &ptrs);
	if (retval)
		return retval;
	for (i = 0; i < count; i++)
		ptrs[i] = &list[i];
	if (start) {
		memset(start, 0, (char *) inode + EXT2_INODE_SIZE(fs->super) -
		       start);
		if (n_in) {
			memcpy(start, &magic, sizeof(magic));
			put_entries(start + sizeof(magic), (char *) inode +
				    EXT2_INODE_SIZE(fs->super), 1, ptrs,
				    n_in);
		}
	}
	if (count > n_in)
		retval = write_ea_block(fs, ino, inode, ptrs + n_in,
					count - n_in, share);
	ext2fs_free_mem(&ptrs);
	return retval;
}

/*
 * The largest "system.data" value that the inode holds before those of
 * the attributes in @list that ext2fs_inline_data_raw_write() would put
 * there with an empty one: all the room the kernel gives an inline
 * directory that outgrows i_block.
 */
size_t ext2fs_inline_data_raw_max(ext2_filsys fs,
				  struct ext2_inode_large *inode,
				  const struct ext2fs_raw_xattr *list,
				  size_t count)
{
	struct ext2fs_raw_xattr x = { 7, "data", 4, NULL, 0 };
	char *start;
	size_t room = in_inode_room(fs, inode, &start);
	size_t used = attr_space(&x), i;

	if (room < used)
		return 0;
	for (i = 0; i < count && used + attr_space(&list[i]) <= room; i++)
		used += attr_space(&list[i]);
	return (room - used) & ~(size_t) EXT2_EXT_ATTR_ROUND;
}

/*
 * Give a new @inode inline data, @size bytes at @data, and the attributes
 * in @list, as the kernel stores them: the first 60 bytes in i_block, the
 * rest the value of "system.data", which goes in the inode first (the
 * kernel looks for it there only); the others follow as
 * ext2fs_xattrs_raw_write_shared() places them.
 * EXT2_ET_INLINE_DATA_NO_SPACE, and nothing changed, when "system.data"
 * does not fit in the inode.
 */
errcode_t ext2fs_inline_data_raw_write(ext2_filsys fs, ext2_ino_t ino,
				       struct ext2_inode_large *inode,
				       const struct ext2fs_raw_xattr *list,
				       size_t count, const void *data,
				       size_t size,
				       struct ext2fs_ea_share *share)
{
	struct ext2fs_raw_xattr *all;
	size_t head = size < EXT4_MIN_INLINE_DATA_SIZE ? size :
		      EXT4_MIN_INLINE_DATA_SIZE;
	char *start;
	errcode_t retval;

	if (!ext2fs_has_feature_inline_data(fs->super))
		return EXT2_ET_INLINE_DATA_NO_SPACE;
	retval = ext2fs_get_array(count + 1, sizeof(*all), &all);
	if (retval)
		return retval;
	all[0].index = 7;		/* "system." */
	all[0].name = "data";
	all[0].name_len = 4;
	all[0].value = (const char *) data + head;
	all[0].value_len = size - head;
	if (count)
		memcpy(all + 1, list, count * sizeof(*all));
	if (attr_space(&all[0]) > in_inode_room(fs, inode, &start)) {
		retval = EXT2_ET_INLINE_DATA_NO_SPACE;
		goto errout;
	}
	retval = ext2fs_xattrs_raw_write_shared(fs, ino, inode, all,
						count + 1, share);
	if (retval)
		goto errout;
	inode->i_flags = (inode->i_flags & ~EXT4_EXTENTS_FL) |
			 EXT4_INLINE_DATA_FL;
	memset(inode->i_block, 0, sizeof(inode->i_block));
	memcpy(inode->i_block, data, head);
	inode->i_size = size;
	inode->i_size_high = 0;
errout:
	ext2fs_free_mem(&all);
	return retval;
}

/* Drop the inode's reference to its EA block. */
/* Give back @ino's reference to EA block @blk, freeing it with the last */
errcode_t ext2fs_ea_block_put(ext2_filsys fs, ext2_ino_t ino, blk64_t blk)
{
	__u32 count = 0;
	errcode_t retval;

	if (!blk)
		return 0;
	retval = ext2fs_adjust_ea_refcount3(fs, blk, NULL, -1, &count, ino);
	if (!retval && count == 0 &&
	    ext2fs_test_block_bitmap2(fs->block_map, blk))
		ext2fs_block_alloc_stats2(fs, blk, -1);
	return retval;
}

errcode_t ext2fs_xattrs_raw_release(ext2_filsys fs, ext2_ino_t ino,
				    struct ext2_inode_large *inode)
{
	blk64_t blk = ext2fs_file_acl_block(fs, (struct ext2_inode *) inode);
	errcode_t retval;

	if (!blk)
		return 0;
	retval = ext2fs_ea_block_put(fs, ino, blk);
	if (retval)
		return retval;
	ext2fs_file_acl_block_set(fs, (struct ext2_inode *) inode, 0);
	return ext2fs_iblk_sub_blocks(fs, (struct ext2_inode *) inode, 1);
}

/*
 * Replace all attributes of an existing inode with @list, and write the
 * inode.  @inode is the full on-disk inode, updated in place.
 */
errcode_t ext2fs_xattrs_raw_replace(ext2_filsys fs, ext2_ino_t ino,
				    struct ext2_inode_large *inode,
				    const struct ext2fs_raw_xattr *list,
				    size_t count)
{
	errcode_t retval;

	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return EXT2_ET_INLINE_DATA_CANT_ITERATE;
	retval = ext2fs_xattrs_raw_release(fs, ino, inode);
	if (!retval)
		retval = ext2fs_xattrs_raw_write(fs, ino, inode, list, count);
	if (!retval)
		retval = ext2fs_write_inode_full(fs, ino,
						 (struct ext2_inode *) inode,
						 EXT2_INODE_SIZE(fs->super));
	return retval;
}

/*
 * Append to @list, of *@count attributes, a copy of one (its name and
 * value in one allocation, freed by ext2fs_raw_xattrs_free): for those
 * who write attributes anew after iterating over them.
 */
errcode_t ext2fs_raw_xattr_copy_add(struct ext2fs_raw_xattr **list,
				    size_t *count, int index,
				    const char *name, size_t name_len,
				    const void *value, size_t value_len)
{
	struct ext2fs_raw_xattr *x;
	char *copy;
	errcode_t retval;

	retval = ext2fs_resize_array(sizeof(*x), *count, *count + 1, list);
	if (!retval)
		retval = ext2fs_get_mem(name_len + value_len + 1, &copy);
	if (retval)
		return retval;
	memcpy(copy, name, name_len);
	memcpy(copy + name_len, value, value_len);
	x = &(*list)[(*count)++];
	x->index = index;
	x->name = copy;
	x->name_len = name_len;
	x->value = copy + name_len;
	x->value_len = value_len;
	return 0;
}

/* Free the copies from @first on, and @list */
void ext2fs_raw_xattrs_free(struct ext2fs_raw_xattr *list, size_t first,
			    size_t count)
{
	size_t i;

	for (i = first; i < count; i++)
		ext2fs_free_mem(&list[i].name);
	ext2fs_free_mem(&list);
}
