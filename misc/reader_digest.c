/*
 * reader_digest.c --- the digests that tie restore's two passes
 *
 * E2CB_READ_HASH (doc/design.txt, "Restore's two passes"): each entry's
 * digest covers the bytes of the tar stream that libarchive parses its
 * header from, as the scan hands them on (tarscan.c: the pax header,
 * its records, the ustar header, and what came between the header
 * before and them: the end of a sparse map's first line), and a sparse
 * entry's map as libarchive parsed it (the rest of the map lies in the
 * data area).  The stream's digest is that of each entry's digest in
 * turn, then of what follows the last header: the end of the stream
 * and the rest of the descriptor.  Every byte that is not an entry's
 * data is hashed once.
 *
 * The scan reads ahead of libarchive: the digests of the headers it
 * finished wait in a ring until libarchive reaches their entries.
 *
 * SHA-256 by OpenSSL's own functions, not EVP's: the first
 * EVP_MD_fetch() loads the configuration and the default provider's
 * tables, 6 million instructions (2 ms) that 0.1.5's restore did not
 * spend, and each EVP call goes through the provider.  These functions
 * are deprecated in OpenSSL 3, not gone, and use SHA-NI alike.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define OPENSSL_SUPPRESS_DEPRECATED

#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/sha.h>
#include "reader_int.h"
#include "support/e2cb_le.h"

/*
 * The scan holds at most E2CB_SCAN_QUEUE entry starts that libarchive
 * has not reached; their headers' digests, and the current entry's.
 */
#define RING_LEN	(E2CB_SCAN_QUEUE + 2)

struct e2cb_reader_digests {
	SHA256_CTX stream;		/* of the entries' digests */
	SHA256_CTX piece;		/* of the header being scanned */
	SHA256_CTX records;		/* of the records entries' data */
	uint64_t produced, consumed;	/* headers scanned, and reached */
	uint8_t ring[RING_LEN][SHA256_DIGEST_LENGTH];
};

/* A piece of the stream that is not an entry's data */
static void hash_seen(void *priv, const void *buf, size_t len)
{
	struct e2cb_reader *r = priv;

	SHA256_Update(&r->dg->piece, buf, len);
}

/* An entry's header is whole: its digest waits for libarchive */
static void hash_header_end(void *priv)
{
	struct e2cb_reader *r = priv;
	struct e2cb_reader_digests *dg = r->dg;
	uint8_t *md = dg->ring[dg->produced % RING_LEN];

	if (dg->produced - dg->consumed == RING_LEN) {
		r->stream_failed = 1;
		return;
	}
	SHA256_Final(md, &dg->piece);
	SHA256_Update(&dg->stream, md, SHA256_DIGEST_LENGTH);
	SHA256_Init(&dg->piece);
	dg->produced++;
}

errcode_t e2cb_reader_hash_start(struct e2cb_reader *r)
{
	r->dg = calloc(1, sizeof(*r->dg));
	if (!r->dg)
		return EXT2_ET_NO_MEMORY;
	SHA256_Init(&r->dg->stream);
	SHA256_Init(&r->dg->piece);
	SHA256_Init(&r->dg->records);
	r->scan.seen = hash_seen;
	r->scan.header_end = hash_header_end;
	r->scan.seen_priv = r;
	return 0;
}

void e2cb_reader_hash_free(struct e2cb_reader *r)
{
	free(r->dg);
}

/* The header's digest, then the stretches libarchive read from the map */
static void hash_sparse(struct e2cb_reader *r, const uint8_t *md,
			uint8_t *out)
{
	SHA256_CTX c;
	la_int64_t off, len;
	uint8_t b[16];

	SHA256_Init(&c);
	SHA256_Update(&c, md, SHA256_DIGEST_LENGTH);
	while (archive_entry_sparse_next(r->ae, &off, &len) == ARCHIVE_OK) {
		e2cb_put_le64(b, off);
		e2cb_put_le64(b + 8, len);
		SHA256_Update(&c, b, sizeof(b));
	}
	SHA256_Final(out, &c);
}

/*
 * The digest of the entry libarchive just read the header of, the
 * first one the scan finished and nobody took.  A caller compares it
 * with the same entry's in an earlier pass before acting on it.
 */
int e2cb_reader_digest_entry(struct e2cb_reader *r)
{
	struct e2cb_reader_digests *dg = r->dg;
	uint8_t md[SHA256_DIGEST_LENGTH];
	const uint8_t *h;

	if (r->stream_failed)
		return e2cb_reader_damage(r, "more headers read ahead than "
					  "the scan allows");
	/* libarchive cannot give a header that the scan has not read */
	if (dg->consumed == dg->produced)
		return e2cb_reader_damage(r, "its header is not where the "
					  "tar stream's scan found one");
	h = dg->ring[dg->consumed++ % RING_LEN];
	if (!archive_entry_sparse_reset(r->ae)) {
		memcpy(r->digest, h, sizeof(r->digest));
		return 0;
	}
	hash_sparse(r, h, md);
	memcpy(r->digest, md, sizeof(r->digest));
	return 0;
}

/*
 * A records entry's data (version 2) is data to the scan: the stream's
 * digest takes the data's SHA-256 apart, in archive order, as the
 * reader checks each records entry.
 */
int e2cb_reader_digest_records(struct e2cb_reader *r, const void *buf,
			       size_t len)
{
	SHA256_Update(&r->dg->records, buf, len);
	return 0;
}

/* An entry whose records are in a group: its digest covers the group */
int e2cb_reader_digest_group(struct e2cb_reader *r, const void *buf,
			     size_t len)
{
	SHA256_CTX c;
	uint8_t md[SHA256_DIGEST_LENGTH];

	SHA256_Init(&c);
	SHA256_Update(&c, r->digest, sizeof(r->digest));
	SHA256_Update(&c, buf, len);
	SHA256_Final(md, &c);
	memcpy(r->digest, md, sizeof(r->digest));
	return 0;
}

/*
 * E2CB_READ_HASH: a digest of all the current entry's tar header says;
 * before the first e2cb_reader_next(), the archive header entry's.
 */
const uint8_t *e2cb_reader_entry_digest(struct e2cb_reader *r)
{
	return r->digest;
}

/*
 * E2CB_READ_HASH: the digest of the tar stream from where the reader
 * began, but the entries' data, and of the rest of the descriptor to
 * its end.  Only once, when the reader is done.
 */
errcode_t e2cb_reader_stream_digest(struct e2cb_reader *r,
				    uint8_t out[E2CB_STREAM_DIGEST_LEN])
{
	uint8_t md[SHA256_DIGEST_LENGTH];
	ssize_t n;

	if (!r->dg)
		return EXT2_ET_INVALID_ARGUMENT;
	if (r->stream_failed)
		return EXT2_ET_INVALID_ARGUMENT;
	while ((n = read(r->fd, r->hash_buf, E2CB_HASH_BUF_SIZE)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		SHA256_Update(&r->dg->piece, r->hash_buf, n);
	}
	SHA256_Final(md, &r->dg->piece);
	SHA256_Update(&r->dg->stream, md, sizeof(md));
	SHA256_Final(md, &r->dg->records);
	SHA256_Update(&r->dg->stream, md, sizeof(md));
	SHA256_Final(out, &r->dg->stream);
	return 0;
}
