/*
 * writer_records.c --- the records entry before a batch of entries
 *
 * Format version 2 (doc/archive-format.txt, 3.6): the records of the
 * entries of one batch travel as the data of one records entry written
 * just before them, a group per entry, instead of a pax header of some
 * 500 bytes on each.  An entry whose records are taken out of its pax
 * header keeps whole seconds in its tar header, so that ustar alone
 * holds it unless its path, size or ids do not fit.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define OPENSSL_SUPPRESS_DEPRECATED

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <openssl/sha.h>
#include "e2cryptbak.h"
#include "support/e2cb_le.h"

errcode_t e2cb_recblk_init(struct e2cb_recblk *b)
{
	memset(b, 0, sizeof(*b));
	b->entry = archive_entry_new();
	return b->entry ? 0 : EXT2_ET_NO_MEMORY;
}

void e2cb_recblk_free(struct e2cb_recblk *b)
{
	if (b->entry)
		archive_entry_free(b->entry);
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

void e2cb_recblk_reset(struct e2cb_recblk *b)
{
	b->len = 0;
	b->count = 0;
}

/* Room for @need more bytes, within the limit a reader accepts */
static int make_room(struct e2cb_recblk *b, size_t need)
{
	size_t size = b->size ? b->size : 65536;
	uint8_t *p;

	if (need > E2CB_RECORDS_MAX - b->len)
		return -1;
	while (size < b->len + need)
		size *= 2;
	if (size == b->size)
		return 0;
	p = realloc(b->buf, size);
	if (!p)
		return -1;
	b->buf = p;
	b->size = size;
	return 0;
}

/*
 * Move the records of @e, the entry of @seq, into the block: 0, or -1
 * when they do not fit (@e is left as it was, to carry them itself).
 */
int e2cb_recblk_add(struct e2cb_recblk *b, struct archive_entry *e,
		    uint32_t seq)
{
	const void *val[E2CB_KIND_MAX + 1] = { NULL };
	size_t vlen[E2CB_KIND_MAX + 1], len = E2CB_GROUP_HEAD, s;
	unsigned int k;
	const char *n;
	const void *v;
	uint8_t *p;

	if (b->count == E2CB_RECORDS_MAX_GROUPS)
		return -1;
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &n, &v, &s) == ARCHIVE_OK) {
		k = e2cb_rec_kind(n);
		if (!k || val[k])
			return -1;
		val[k] = v;
		vlen[k] = s;
		len += E2CB_ITEM_HEAD + s;
	}
	if (!val[E2CB_KIND_INODE] || make_room(b, len))
		return -1;
	p = b->buf + b->len;
	e2cb_put_le32(p, seq);
	e2cb_put_le32(p + 4, len - E2CB_GROUP_HEAD);
	p += E2CB_GROUP_HEAD;
	/* in kind order, the inode record first, as a reader checks */
	for (k = 1; k <= E2CB_KIND_MAX; k++) {
		if (!val[k])
			continue;
		memset(p, 0, E2CB_ITEM_HEAD);
		p[0] = k;
		e2cb_put_le32(p + 4, vlen[k]);
		memcpy(p + E2CB_ITEM_HEAD, val[k], vlen[k]);
		p += E2CB_ITEM_HEAD + vlen[k];
	}
	if (!b->count)
		b->first_seq = seq;
	b->len += len;
	b->count++;
	archive_entry_xattr_clear(e);
	/* the inode record has the nanoseconds: no pax header for them */
	archive_entry_set_mtime(e, archive_entry_mtime(e), 0);
	return 0;
}

/* The records entry of the groups added, before their entries */
errcode_t e2cb_recblk_write(struct e2cb_recblk *b, struct archive *a,
			    int64_t mtime)
{
	struct archive_entry *e = b->entry;
	struct e2cb_records_rec rr;
	uint8_t rec[E2CB_RECORDS_REC_SIZE], md[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;

	if (!b->count)
		return 0;
	rr.first_seq = b->first_seq;
	rr.count = b->count;
	rr.data_len = b->len;
	/* not SHA256(): in OpenSSL 3 it goes through EVP, whose first
	 * fetch loads the configuration (reader_digest.c) */
	SHA256_Init(&c);
	SHA256_Update(&c, b->buf, b->len);
	SHA256_Final(md, &c);
	memcpy(rr.digest, md, sizeof(rr.digest));
	e2cb_encode_records_rec(&rr, rec);
	archive_entry_clear(e);
	archive_entry_copy_pathname(e, E2CB_RECORDS_PATH);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0444);
	archive_entry_set_mtime(e, mtime, 0);
	archive_entry_set_size(e, b->len);
	archive_entry_xattr_add_entry(e, E2CB_REC_RECORDS, rec, sizeof(rec));
	if (archive_write_header(a, e) < ARCHIVE_WARN ||
	    archive_write_data(a, b->buf, b->len) != (la_ssize_t) b->len)
		return EXT2_ET_SHORT_WRITE;
	return 0;
}
