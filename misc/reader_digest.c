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
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reader_int.h"

/*
 * The scan holds at most E2CB_SCAN_QUEUE entry starts that libarchive
 * has not reached; their headers' digests, and the current entry's.
 */
#define RING_LEN	(E2CB_SCAN_QUEUE + 2)

/* A piece of the stream that is not an entry's data */
static void hash_seen(void *priv, const void *buf, size_t len)
{
	struct e2cb_reader *r = priv;

	if (!EVP_DigestUpdate(r->piece, buf, len))
		r->stream_failed = 1;
}

/* An entry's header is whole: its digest waits for libarchive */
static void hash_header_end(void *priv)
{
	struct e2cb_reader *r = priv;
	uint8_t *md = r->ring[r->produced % RING_LEN];

	if (r->produced - r->consumed == RING_LEN ||
	    !EVP_DigestFinal_ex(r->piece, md, NULL) ||
	    !EVP_DigestUpdate(r->stream, md, E2CB_STREAM_DIGEST_LEN) ||
	    !EVP_DigestInit_ex(r->piece, r->sha256, NULL)) {
		r->stream_failed = 1;
		return;
	}
	r->produced++;
}

errcode_t e2cb_reader_hash_start(struct e2cb_reader *r)
{
	/* fetched once: EVP_sha256() would be looked up at each init */
	r->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	r->stream = EVP_MD_CTX_new();
	r->piece = EVP_MD_CTX_new();
	r->sparse = EVP_MD_CTX_new();
	r->ring = malloc(RING_LEN * sizeof(*r->ring));
	if (!r->sha256 || !r->stream || !r->piece || !r->sparse ||
	    !r->ring ||
	    !EVP_DigestInit_ex(r->stream, r->sha256, NULL) ||
	    !EVP_DigestInit_ex(r->piece, r->sha256, NULL))
		return EXT2_ET_NO_MEMORY;
	r->scan.seen = hash_seen;
	r->scan.header_end = hash_header_end;
	r->scan.seen_priv = r;
	return 0;
}

void e2cb_reader_hash_free(struct e2cb_reader *r)
{
	EVP_MD_CTX_free(r->stream);
	EVP_MD_CTX_free(r->piece);
	EVP_MD_CTX_free(r->sparse);
	EVP_MD_free(r->sha256);
	free(r->ring);
}

static int hash_u64(EVP_MD_CTX *c, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = v >> (8 * i);
	return EVP_DigestUpdate(c, b, 8);
}

/* The header's digest, then the stretches libarchive read from the map */
static int hash_sparse(struct e2cb_reader *r, const uint8_t *md,
		       uint8_t *out)
{
	EVP_MD_CTX *c = r->sparse;
	la_int64_t off, len;

	if (!EVP_DigestInit_ex(c, r->sha256, NULL) ||
	    !EVP_DigestUpdate(c, md, E2CB_STREAM_DIGEST_LEN))
		return -1;
	while (archive_entry_sparse_next(r->ae, &off, &len) == ARCHIVE_OK)
		if (!hash_u64(c, off) || !hash_u64(c, len))
			return -1;
	return EVP_DigestFinal_ex(c, out, NULL) ? 0 : -1;
}

/*
 * The digest of the entry libarchive just read the header of, the
 * first one the scan finished and nobody took.  A caller compares it
 * with the same entry's in an earlier pass before acting on it.
 */
int e2cb_reader_digest_entry(struct e2cb_reader *r)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	const uint8_t *h;

	if (r->stream_failed)
		return e2cb_reader_damage(r, "out of memory");
	/* libarchive cannot give a header that the scan has not read */
	if (r->consumed == r->produced)
		return e2cb_reader_damage(r, "its header is not where the "
					  "tar stream's scan found one");
	h = r->ring[r->consumed++ % RING_LEN];
	if (!archive_entry_sparse_reset(r->ae)) {
		memcpy(r->digest, h, sizeof(r->digest));
		return 0;
	}
	if (hash_sparse(r, h, md))
		return e2cb_reader_damage(r, "out of memory");
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
	uint8_t md[EVP_MAX_MD_SIZE];
	ssize_t n;

	if (!r->stream)
		return EXT2_ET_INVALID_ARGUMENT;
	if (r->stream_failed)
		return EXT2_ET_NO_MEMORY;
	while ((n = read(r->fd, r->hash_buf, E2CB_HASH_BUF_SIZE)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (!EVP_DigestUpdate(r->piece, r->hash_buf, n))
			return EXT2_ET_NO_MEMORY;
	}
	if (!EVP_DigestFinal_ex(r->piece, md, NULL) ||
	    !EVP_DigestUpdate(r->stream, md, E2CB_STREAM_DIGEST_LEN) ||
	    !EVP_DigestFinal_ex(r->stream, out, NULL))
		return EXT2_ET_NO_MEMORY;
	return 0;
}
