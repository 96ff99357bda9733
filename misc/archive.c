/*
 * archive.c --- encode and decode the records of an e2cryptbak archive
 *
 * All integers are little-endian; every record ends in a crc32c of what
 * precedes it, so any damaged byte is caught where it lies.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <stdlib.h>
#include "archive.h"

void e2cb_seal(uint8_t *buf, size_t len_without_crc)
{
	e2cb_put_le32(buf + len_without_crc,
		      e2cb_crc32c(~0U, buf, len_without_crc));
}

errcode_t e2cb_check_sealed(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len < 4)
		return EXT2_ET_CRYPT_BAD_BLOB;
	if (E2CB_CHECK_SUMS &&
	    e2cb_get_le32(p + len - 4) != e2cb_crc32c(~0U, p, len - 4))
		return EXT2_ET_CRYPT_BLOB_CSUM;
	return 0;
}

/* magic, version and fixed size: common to the three record kinds */
static void put_preamble(uint8_t *p, const char *magic, uint16_t size)
{
	memcpy(p, magic, 4);
	e2cb_put_le16(p + 4, E2CB_FORMAT_VERSION);
	e2cb_put_le16(p + 6, size);
}

static errcode_t check_preamble(const uint8_t *p, size_t len,
				const char *magic, size_t size)
{
	if (len < 8 || memcmp(p, magic, 4))
		return EXT2_ET_CRYPT_BAD_BLOB;
	/* an unknown version only if the record is otherwise intact */
	if (!E2CB_VERSION_KNOWN(e2cb_get_le16(p + 4)))
		return e2cb_check_sealed(p, len) ? EXT2_ET_CRYPT_BAD_BLOB :
			EXT2_ET_CRYPT_UNKNOWN_CONTEXT_VERSION;
	if (e2cb_get_le16(p + 6) != size || len < size)
		return EXT2_ET_CRYPT_BAD_BLOB;
	return e2cb_check_sealed(p, len);
}

size_t e2cb_encode_header(const struct e2cb_header *h, uint8_t *buf,
			  size_t bufsize)
{
	size_t len = E2CB_HEADER_FIXED + h->source_path_len;

	if (len + 4 > bufsize)
		return 0;
	memset(buf, 0, E2CB_HEADER_FIXED);
	put_preamble(buf, E2CB_HEADER_MAGIC, E2CB_HEADER_FIXED);
	e2cb_put_le32(buf + 8, h->block_size);
	memcpy(buf + 12, h->uuid, 16);
	e2cb_put_le32(buf + 28, h->feature_compat);
	e2cb_put_le32(buf + 32, h->feature_incompat);
	e2cb_put_le32(buf + 36, h->feature_ro_compat);
	memcpy(buf + 40, h->hash_seed, 16);
	buf[56] = h->def_hash_version;
	memcpy(buf + 60, h->encrypt_pw_salt, 16);
	e2cb_put_le16(buf + 76, h->encoding);
	e2cb_put_le16(buf + 78, h->encoding_flags);
	e2cb_put_le32(buf + 80, h->inode_size);
	e2cb_put_le32(buf + 84, h->root_ino);
	e2cb_put_le64(buf + 88, h->created);
	memcpy(buf + 96, h->tool_version,
	       strnlen(h->tool_version, E2CB_TOOL_VERSION_LEN));
	e2cb_put_le16(buf + 128, h->source_path_len);
	buf[130] = h->journal_state;
	e2cb_put_le32(buf + 132, h->replay_transactions);
	e2cb_put_le32(buf + 136, h->replay_blocks);
	e2cb_put_le32(buf + 140, h->replay_fast_commits);
	e2cb_put_le32(buf + 144, h->replay_orphans);
	memcpy(buf + E2CB_HEADER_FIXED, h->source_path, h->source_path_len);
	e2cb_seal(buf, len);
	return len + 4;
}

errcode_t e2cb_decode_header(const void *buf, size_t len,
			     struct e2cb_header *h)
{
	const uint8_t *p = buf;
	errcode_t retval;

	/* the version first: a newer format may have another size */
	if (len < 8 || memcmp(p, E2CB_HEADER_MAGIC, 4))
		return EXT2_ET_CRYPT_BAD_BLOB;
	if (!E2CB_VERSION_KNOWN(e2cb_get_le16(p + 4)) &&
	    e2cb_check_sealed(p, len) == 0)
		return EXT2_ET_CRYPT_UNKNOWN_CONTEXT_VERSION;
	if (len < E2CB_HEADER_FIXED + 4 ||
	    len != E2CB_HEADER_FIXED + 4 + e2cb_get_le16(p + 128) ||
	    e2cb_get_le16(p + 128) > sizeof(h->source_path))
		return EXT2_ET_CRYPT_BAD_BLOB;
	retval = check_preamble(p, len, E2CB_HEADER_MAGIC, E2CB_HEADER_FIXED);
	if (retval)
		return retval;
	memset(h, 0, sizeof(*h));
	h->version = e2cb_get_le16(p + 4);
	h->block_size = e2cb_get_le32(p + 8);
	memcpy(h->uuid, p + 12, 16);
	h->feature_compat = e2cb_get_le32(p + 28);
	h->feature_incompat = e2cb_get_le32(p + 32);
	h->feature_ro_compat = e2cb_get_le32(p + 36);
	memcpy(h->hash_seed, p + 40, 16);
	h->def_hash_version = p[56];
	memcpy(h->encrypt_pw_salt, p + 60, 16);
	h->encoding = e2cb_get_le16(p + 76);
	h->encoding_flags = e2cb_get_le16(p + 78);
	h->inode_size = e2cb_get_le32(p + 80);
	h->root_ino = e2cb_get_le32(p + 84);
	h->created = (int64_t) e2cb_get_le64(p + 88);
	memcpy(h->tool_version, p + 96, E2CB_TOOL_VERSION_LEN);
	h->source_path_len = e2cb_get_le16(p + 128);
	h->journal_state = p[130];
	h->replay_transactions = e2cb_get_le32(p + 132);
	h->replay_blocks = e2cb_get_le32(p + 136);
	h->replay_fast_commits = e2cb_get_le32(p + 140);
	h->replay_orphans = e2cb_get_le32(p + 144);
	memcpy(h->source_path, p + E2CB_HEADER_FIXED, h->source_path_len);
	if (h->block_size < 1024 || h->block_size > 65536 ||
	    (h->block_size & (h->block_size - 1)))
		return EXT2_ET_CRYPT_BAD_BLOB;
	return 0;
}

static void put_time(uint8_t *p, const struct e2cb_time *t)
{
	e2cb_put_le64(p, (uint64_t) t->sec);
	e2cb_put_le32(p + 8, t->nsec);
}

static void get_time(const uint8_t *p, struct e2cb_time *t)
{
	t->sec = (int64_t) e2cb_get_le64(p);
	t->nsec = e2cb_get_le32(p + 8);
}

size_t e2cb_encode_inode(const struct e2cb_inode_rec *r, uint8_t *buf)
{
	memset(buf, 0, E2CB_INODE_REC_SIZE);
	put_preamble(buf, E2CB_INODE_MAGIC, E2CB_INODE_REC_SIZE);
	e2cb_put_le32(buf + 8, r->seq);
	e2cb_put_le32(buf + 12, r->ino);
	e2cb_put_le32(buf + 16, r->mode);
	e2cb_put_le32(buf + 20, r->uid);
	e2cb_put_le32(buf + 24, r->gid);
	e2cb_put_le32(buf + 28, r->links_count);
	e2cb_put_le64(buf + 32, r->size);
	e2cb_put_le32(buf + 40, r->iflags);
	e2cb_put_le32(buf + 44, r->projid);
	e2cb_put_le32(buf + 48, r->generation);
	e2cb_put_le32(buf + 52, r->rdev_major);
	e2cb_put_le32(buf + 56, r->rdev_minor);
	put_time(buf + 60, &r->atime);
	put_time(buf + 72, &r->mtime);
	put_time(buf + 84, &r->ctime);
	put_time(buf + 96, &r->crtime);
	e2cb_put_le32(buf + 108, r->rflags);
	e2cb_put_le32(buf + 112, r->dirent_hash);
	e2cb_put_le32(buf + 116, r->dirent_minor_hash);
	e2cb_put_le64(buf + 120, r->prev_data_bytes);
	e2cb_put_le32(buf + 128, r->prev_data_crc);
	e2cb_put_le32(buf + 132, r->path_crc);
	e2cb_seal(buf, E2CB_INODE_REC_SIZE - 4);
	return E2CB_INODE_REC_SIZE;
}

errcode_t e2cb_decode_inode(const void *buf, size_t len,
			    struct e2cb_inode_rec *r)
{
	const uint8_t *p = buf;
	errcode_t retval;

	if (len != E2CB_INODE_REC_SIZE)
		return EXT2_ET_CRYPT_BAD_BLOB;
	retval = check_preamble(p, len, E2CB_INODE_MAGIC,
				E2CB_INODE_REC_SIZE);
	if (retval)
		return retval;
	r->seq = e2cb_get_le32(p + 8);
	r->ino = e2cb_get_le32(p + 12);
	r->mode = e2cb_get_le32(p + 16);
	r->uid = e2cb_get_le32(p + 20);
	r->gid = e2cb_get_le32(p + 24);
	r->links_count = e2cb_get_le32(p + 28);
	r->size = e2cb_get_le64(p + 32);
	r->iflags = e2cb_get_le32(p + 40);
	r->projid = e2cb_get_le32(p + 44);
	r->generation = e2cb_get_le32(p + 48);
	r->rdev_major = e2cb_get_le32(p + 52);
	r->rdev_minor = e2cb_get_le32(p + 56);
	get_time(p + 60, &r->atime);
	get_time(p + 72, &r->mtime);
	get_time(p + 84, &r->ctime);
	get_time(p + 96, &r->crtime);
	r->rflags = e2cb_get_le32(p + 108);
	r->dirent_hash = e2cb_get_le32(p + 112);
	r->dirent_minor_hash = e2cb_get_le32(p + 116);
	r->prev_data_bytes = e2cb_get_le64(p + 120);
	r->prev_data_crc = e2cb_get_le32(p + 128);
	r->path_crc = e2cb_get_le32(p + 132);
	if (r->rflags & ~E2CB_IF_KNOWN)
		return EXT2_ET_CRYPT_BAD_BLOB;
	return 0;
}

size_t e2cb_encode_trailer(const struct e2cb_trailer *t, uint8_t *buf)
{
	memset(buf, 0, E2CB_TRAILER_REC_SIZE);
	put_preamble(buf, E2CB_TRAILER_MAGIC, E2CB_TRAILER_REC_SIZE);
	e2cb_put_le32(buf + 8, t->seq);
	e2cb_put_le32(buf + 12, t->tflags);
	e2cb_put_le64(buf + 16, t->prev_data_bytes);
	e2cb_put_le32(buf + 24, t->prev_data_crc);
	e2cb_put_le64(buf + 32, t->entries);
	e2cb_put_le64(buf + 40, t->inodes);
	e2cb_put_le64(buf + 48, t->encrypted);
	e2cb_put_le64(buf + 56, t->data_bytes);
	e2cb_put_le64(buf + 64, t->skipped);
	e2cb_seal(buf, E2CB_TRAILER_REC_SIZE - 4);
	return E2CB_TRAILER_REC_SIZE;
}

errcode_t e2cb_decode_trailer(const void *buf, size_t len,
			      struct e2cb_trailer *t)
{
	const uint8_t *p = buf;
	errcode_t retval;

	if (len != E2CB_TRAILER_REC_SIZE)
		return EXT2_ET_CRYPT_BAD_BLOB;
	retval = check_preamble(p, len, E2CB_TRAILER_MAGIC,
				E2CB_TRAILER_REC_SIZE);
	if (retval)
		return retval;
	t->seq = e2cb_get_le32(p + 8);
	t->tflags = e2cb_get_le32(p + 12);
	t->prev_data_bytes = e2cb_get_le64(p + 16);
	t->prev_data_crc = e2cb_get_le32(p + 24);
	t->entries = e2cb_get_le64(p + 32);
	t->inodes = e2cb_get_le64(p + 40);
	t->encrypted = e2cb_get_le64(p + 48);
	t->data_bytes = e2cb_get_le64(p + 56);
	t->skipped = e2cb_get_le64(p + 64);
	return 0;
}

void e2cb_sum_init(struct e2cb_data_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->crc = ~0U;
}

static void sum_close_region(struct e2cb_data_sum *s)
{
	uint8_t ext[16];

	if (!s->in_region)
		return;
	e2cb_put_le64(ext, s->region_start);
	e2cb_put_le64(ext + 8, s->region_len);
	s->crc = e2cb_crc32c(s->crc, ext, sizeof(ext));
	s->in_region = 0;
}

/*
 * Data arrives in offset order; adjacent pieces form one region, so the
 * sum does not depend on how a reader happens to split the stream.
 * The caller then adds the @len bytes at @offset to s->crc.
 */
static void sum_region_grow(struct e2cb_data_sum *s, uint64_t offset,
			    size_t len)
{
	if (s->in_region && s->region_start + s->region_len != offset)
		sum_close_region(s);
	if (!s->in_region) {
		s->in_region = 1;
		s->region_start = offset;
		s->region_len = 0;
	}
	s->region_len += len;
	s->bytes += len;
}

void e2cb_sum_add(struct e2cb_data_sum *s, uint64_t offset,
		  const void *buf, size_t len)
{
	if (len == 0)
		return;
	sum_region_grow(s, offset, len);
	s->crc = e2cb_crc32c(s->crc, buf, len);
}

/* The same for data summed elsewhere: @crc is its crc32c from 0 */
void e2cb_sum_add_crc(struct e2cb_data_sum *s, uint64_t offset, size_t len,
		      uint32_t crc)
{
	if (len == 0)
		return;
	sum_region_grow(s, offset, len);
	s->crc = e2cb_crc32c_combine(s->crc, crc, len);
}

uint32_t e2cb_sum_final(struct e2cb_data_sum *s)
{
	sum_close_region(s);
	return s->crc;
}

/* Linux names of the ext4 xattr name indexes (fs/ext4/xattr.c) */
const char *e2cb_xattr_prefix(int index)
{
	switch (index) {
	case 1: return "user.";
	case 2: return "system.posix_acl_access";
	case 3: return "system.posix_acl_default";
	case 4: return "trusted.";
	case 6: return "security.";
	case 7: return "system.";
	case 8: return "system.richacl";
	}
	return NULL;
}

errcode_t e2cb_xattr_buf_add(struct e2cb_xattr_buf *xb, int index,
			     const char *name, size_t name_len,
			     const void *value, size_t value_len)
{
	size_t need = xb->len + 6 + name_len + value_len + 4;
	uint8_t *p;

	if (name_len > 255 || index < 0 || index > 255)
		return EXT2_ET_CRYPT_BAD_EA;
	if (e2cb_grow_to((void **) &xb->buf, &xb->size, need, 1))
		return EXT2_ET_NO_MEMORY;
	p = xb->buf + xb->len;
	p[0] = index;
	p[1] = name_len;
	e2cb_put_le32(p + 2, value_len);
	memcpy(p + 6, name, name_len);
	memcpy(p + 6 + name_len, value, value_len);
	xb->len += 6 + name_len + value_len;
	return 0;
}

/* The record is the entries followed by a crc32c of them. */
errcode_t e2cb_xattr_rec_iterate(const void *rec, size_t len,
				 e2cb_xattr_func func, void *priv)
{
	const uint8_t *p = rec, *end;
	uint32_t vlen;
	errcode_t retval;

	retval = e2cb_check_sealed(rec, len);
	if (retval)
		return retval;
	end = p + len - 4;
	while (p < end) {
		if (end - p < 6)
			return EXT2_ET_CRYPT_BAD_BLOB;
		vlen = e2cb_get_le32(p + 2);
		if ((size_t) (end - p - 6) < p[1] ||
		    (size_t) (end - p - 6 - p[1]) < vlen)
			return EXT2_ET_CRYPT_BAD_BLOB;
		if (func && func(p[0], (const char *) p + 6, p[1],
				 p + 6 + p[1], vlen, priv))
			break;
		p += 6 + p[1] + vlen;
	}
	return 0;
}

void e2cb_inode_rec_name(struct e2cb_inode_rec *r,
			 const struct ext4_encrypted_name *name)
{
	r->rflags |= E2CB_IF_NAME;
	if (name->has_hash) {
		r->rflags |= E2CB_IF_DIRENT_HASH;
		r->dirent_hash = name->hash;
		r->dirent_minor_hash = name->minor_hash;
	}
}

/* The record of a records entry (version 2 only) */
void e2cb_encode_records_rec(const struct e2cb_records_rec *rr, uint8_t *buf)
{
	memset(buf, 0, E2CB_RECORDS_REC_SIZE);
	put_preamble(buf, E2CB_RECORDS_MAGIC, E2CB_RECORDS_REC_SIZE);
	e2cb_put_le32(buf + 8, rr->first_seq);
	e2cb_put_le32(buf + 12, rr->count);
	e2cb_put_le32(buf + 16, rr->data_len);
	memcpy(buf + 20, rr->digest, E2CB_RECORDS_DIGEST);
	e2cb_seal(buf, E2CB_RECORDS_REC_SIZE - 4);
}

errcode_t e2cb_decode_records_rec(const void *buf, size_t len,
				  struct e2cb_records_rec *rr)
{
	const uint8_t *p = buf;
	errcode_t retval;

	if (len != E2CB_RECORDS_REC_SIZE)
		return EXT2_ET_CRYPT_BAD_BLOB;
	retval = check_preamble(p, len, E2CB_RECORDS_MAGIC,
				E2CB_RECORDS_REC_SIZE);
	if (retval)
		return retval;
	if (e2cb_get_le16(p + 4) < 2)
		return EXT2_ET_CRYPT_BAD_BLOB;
	rr->first_seq = e2cb_get_le32(p + 8);
	rr->count = e2cb_get_le32(p + 12);
	rr->data_len = e2cb_get_le32(p + 16);
	memcpy(rr->digest, p + 20, E2CB_RECORDS_DIGEST);
	if (!rr->count || rr->count > E2CB_RECORDS_MAX_GROUPS ||
	    rr->data_len > E2CB_RECORDS_MAX)
		return EXT2_ET_CRYPT_BAD_BLOB;
	return 0;
}

static const char *const kind_names[E2CB_KIND_MAX + 1] = {
	[E2CB_KIND_INODE] = E2CB_REC_INODE,
	[E2CB_KIND_METADATA] = E2CB_REC_METADATA,
	[E2CB_KIND_NAME] = E2CB_REC_NAME,
	[E2CB_KIND_XATTRS] = E2CB_REC_XATTRS,
	[E2CB_KIND_SYMLINK] = E2CB_REC_SYMLINK,
};

/* The record name of an item's kind, or NULL */
const char *e2cb_rec_kind_name(unsigned int kind)
{
	return kind && kind <= E2CB_KIND_MAX ? kind_names[kind] : NULL;
}

/* The kind of an inode entry's record @name, or 0 */
unsigned int e2cb_rec_kind(const char *name)
{
	unsigned int k;

	for (k = 1; k <= E2CB_KIND_MAX; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return 0;
}
