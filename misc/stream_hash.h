/*
 * stream_hash.h --- the SHA-256 of an archive as it is read
 * (stream_hash.c)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_STREAM_HASH_H
#define E2CB_STREAM_HASH_H

#define E2CB_STREAM_HASH_BUF	65536	/* bytes of each read */

struct e2cb_stream_hash;

extern errcode_t e2cb_stream_hash_start(struct e2cb_stream_hash **ret);
extern void *e2cb_stream_hash_buf(struct e2cb_stream_hash *h);
extern errcode_t e2cb_stream_hash_add(struct e2cb_stream_hash *h,
				      size_t len);
extern errcode_t e2cb_stream_hash_final(struct e2cb_stream_hash *h,
					uint8_t out[E2CB_STREAM_DIGEST_LEN]);
extern void e2cb_stream_hash_free(struct e2cb_stream_hash *h);

#endif /* E2CB_STREAM_HASH_H */
