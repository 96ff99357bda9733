/*
 * reader_records.c --- the records entries of a version 2 archive
 *
 * A records entry (doc/archive-format.txt, 3.6) carries the records of
 * the entries that follow it, a group per entry.  Here it is read and
 * checked whole, before any entry it describes is handed out, so that
 * a forged one fails before restore or extract writes anything; then
 * each entry takes its group in turn, and reader_check.c finds its
 * records there instead of in its pax header.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define OPENSSL_SUPPRESS_DEPRECATED

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <openssl/sha.h>
#include "reader_int.h"
#include "support/e2cb_le.h"

/* The records entry carries its own record and nothing else */
static int records_rec(struct e2cb_reader *r, struct e2cb_records_rec *rr)
{
	const char *n;
	const void *v, *found = NULL;
	size_t s, len = 0;
	errcode_t retval;

	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK) {
		if (strcmp(n, E2CB_REC_RECORDS) || found)
			return e2cb_reader_damage(r, "the records entry "
						  "carries '%s' too", n);
		found = v;
		len = s;
	}
	if (r->hdr.version < 2)
		return e2cb_reader_damage(r, "a records entry in a version "
					  "%u archive", r->hdr.version);
	if (archive_entry_filetype(r->ae) != AE_IFREG ||
	    archive_entry_hardlink(r->ae) ||
	    archive_entry_sparse_count(r->ae))
		return e2cb_reader_damage(r, "the records entry is not a "
					  "plain file");
	retval = e2cb_decode_records_rec(found, len, rr);
	if (retval)
		return e2cb_reader_damage(r, "the records entry's record is "
					  "damaged (%s)",
					  error_message(retval));
	if (e2cb_reader_same_version(r, found, "the records entry"))
		return -1;
	if (archive_entry_size(r->ae) != (la_int64_t) rr->data_len)
		return e2cb_reader_damage(r, "the records entry holds %lld "
					  "bytes, its record says %u",
					  (long long) archive_entry_size(r->ae),
					  rr->data_len);
	if (rr->first_seq != r->next_seq)
		return e2cb_reader_damage(r, "the records entry begins at "
					  "sequence number %u where %u was "
					  "due", rr->first_seq, r->next_seq);
	return 0;
}

/* Its data, whole, into r->blk: at most E2CB_RECORDS_MAX bytes */
static int read_block(struct e2cb_reader *r, uint32_t len)
{
	size_t got = 0;
	la_ssize_t n;

	if (len > r->blk_size) {
		uint8_t *p = realloc(r->blk, len);

		if (!p)
			return e2cb_reader_damage(r, "no memory for its %u "
						  "bytes", len);
		r->blk = p;
		r->blk_size = len;
	}
	while (got < len) {
		n = archive_read_data(r->a, r->blk + got, len - got);
		if (n <= 0)
			return e2cb_reader_damage(r, "the records entry is "
						  "truncated (%zu of %u "
						  "bytes)", got, len);
		got += n;
	}
	r->in_entry = 0;
	if (archive_read_data_skip(r->a) < ARCHIVE_WARN)
		return e2cb_reader_damage(r, "after the records entry: %s",
					  archive_error_string(r->a));
	return 0;
}

/* One group's items: in increasing kind order, the inode record first */
static int check_items(struct e2cb_reader *r, const uint8_t *p, size_t len)
{
	unsigned int kind, last = 0;
	size_t pos = 0;
	uint32_t vlen;

	if (len < E2CB_ITEM_HEAD)
		return e2cb_reader_damage(r, "a group without records");
	while (pos < len) {
		if (len - pos < E2CB_ITEM_HEAD)
			return e2cb_reader_damage(r, "a record runs past its "
						  "group");
		kind = p[pos];
		vlen = e2cb_get_le32(p + pos + 4);
		if (!e2cb_rec_kind_name(kind) || p[pos + 1] || p[pos + 2] ||
		    p[pos + 3])
			return e2cb_reader_damage(r, "a record of unknown "
						  "kind %u", kind);
		if (kind <= last || (!last && kind != E2CB_KIND_INODE))
			return e2cb_reader_damage(r, "records out of order or "
						  "twice in a group");
		if (vlen > len - pos - E2CB_ITEM_HEAD)
			return e2cb_reader_damage(r, "a record runs past its "
						  "group");
		last = kind;
		pos += E2CB_ITEM_HEAD + vlen;
	}
	return 0;
}

/*
 * Every group, before the first entry it describes is handed out; @md
 * gets the SHA-256 of the whole data, which the seal is the start of
 */
static int check_groups(struct e2cb_reader *r,
			const struct e2cb_records_rec *rr, uint8_t *md)
{
	size_t pos = 0, len = rr->data_len;
	SHA256_CTX c;
	uint32_t i, glen;

	/* a crc32c would not do: its register is 0 after a sealed record,
	 * whatever the record, so it could not see one forged and sealed */
	SHA256_Init(&c);		/* not SHA256(): see writer_records.c */
	SHA256_Update(&c, r->blk, len);
	SHA256_Final(md, &c);
	if (E2CB_CHECK_SUMS && memcmp(md, rr->digest, sizeof(rr->digest)))
		return e2cb_reader_damage(r, "the records entry's data is "
					  "damaged (its digest)");
	for (i = 0; i < rr->count; i++) {
		if (len - pos < E2CB_GROUP_HEAD)
			return e2cb_reader_damage(r, "the records entry ends "
						  "in group %u of %u", i + 1,
						  rr->count);
		if (e2cb_get_le32(r->blk + pos) != rr->first_seq + i)
			return e2cb_reader_damage(r, "group %u has sequence "
				"number %u where %u was due", i + 1,
				e2cb_get_le32(r->blk + pos),
				rr->first_seq + i);
		glen = e2cb_get_le32(r->blk + pos + 4);
		if (glen > len - pos - E2CB_GROUP_HEAD)
			return e2cb_reader_damage(r, "group %u runs past the "
						  "records entry", i + 1);
		if (check_items(r, r->blk + pos + E2CB_GROUP_HEAD, glen))
			return -1;
		pos += E2CB_GROUP_HEAD + glen;
	}
	if (pos != len)
		return e2cb_reader_damage(r, "%zu bytes after the last group "
					  "of the records entry", len - pos);
	return 0;
}

/*
 * The entry whose header was just read: 1 if it is a records entry,
 * now read and checked whole, 0 if not, -1 for damage.
 */
int e2cb_reader_records_entry(struct e2cb_reader *r)
{
	struct e2cb_records_rec rr;
	uint8_t md[SHA256_DIGEST_LENGTH];
	size_t len;
	int dup = 0;

	if (!e2cb_reader_has_rec(r, E2CB_REC_RECORDS, &len, &dup))
		return 0;
	/* its damage is named by the records entry's path */
	r->cur.path = r->path.s;
	if (r->blk_left)
		return e2cb_reader_damage(r, "a records entry where %u entries "
					  "it did not describe were due",
					  r->blk_left);
	if (records_rec(r, &rr) || read_block(r, rr.data_len) ||
	    check_groups(r, &rr, md))
		return -1;
	/* the data's digest stands for it in the stream's */
	if ((r->flags & E2CB_READ_HASH) &&
	    e2cb_reader_digest_records(r, md, sizeof(md)))
		return -1;
	r->blk_pos = 0;
	r->blk_left = rr.count;
	return 1;
}

/*
 * The entry just read takes the next group, if a records entry
 * described it; then it must carry no record of its own.
 */
int e2cb_reader_take_group(struct e2cb_reader *r)
{
	const uint8_t *g;
	size_t dummy;
	int dup = 0;

	r->grp = NULL;
	r->grp_len = 0;
	if (!r->blk_left)
		return 0;	/* r->blk may be NULL: no offset to it */
	g = r->blk + r->blk_pos;
	if (e2cb_reader_has_rec(r, E2CB_REC_TRAILER, &dummy, &dup))
		return e2cb_reader_damage(r, "the trailer comes where %u more "
					  "entries were described",
					  r->blk_left);
	if (archive_entry_xattr_count(r->ae))
		return e2cb_reader_damage(r, "records in its pax header and "
					  "in a records entry");
	if (e2cb_get_le32(g) != r->next_seq)
		return e2cb_reader_damage(r, "its group has sequence number "
					  "%u where %u was due",
					  e2cb_get_le32(g), r->next_seq);
	r->grp_len = e2cb_get_le32(g + 4);
	r->grp = g + E2CB_GROUP_HEAD;
	r->blk_pos += E2CB_GROUP_HEAD + r->grp_len;
	r->blk_left--;
	if ((r->flags & E2CB_READ_HASH) &&
	    e2cb_reader_digest_group(r, g, E2CB_GROUP_HEAD + r->grp_len))
		return -1;
	return 0;
}

/* Record @name in the current entry's group, checked by check_items() */
const void *e2cb_reader_group_rec(struct e2cb_reader *r, const char *name,
				  size_t *len)
{
	unsigned int kind = e2cb_rec_kind(name);
	size_t pos = 0;
	uint32_t vlen;

	while (kind && pos < r->grp_len) {
		vlen = e2cb_get_le32(r->grp + pos + 4);
		if (r->grp[pos] == kind) {
			*len = vlen;
			return r->grp + pos + E2CB_ITEM_HEAD;
		}
		pos += E2CB_ITEM_HEAD + vlen;
	}
	return NULL;
}

void e2cb_reader_records_free(struct e2cb_reader *r)
{
	free(r->blk);
	r->blk = NULL;
	r->blk_size = 0;
}
