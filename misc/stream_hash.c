/*
 * stream_hash.c --- the SHA-256 of an archive as it is read, on a
 * thread of its own
 *
 * restore reads the archive twice and proves that the second pass read
 * the bytes the first one checked by hashing all of both (issue 26).
 * Hashed in line, SHA-256 took two thirds of restore's time; here the
 * reader fills one buffer while the hasher, on another CPU, hashes the
 * ones before it, in order.  On one CPU the buffers are hashed in line,
 * as before.
 *
 * The reader hands libarchive the buffer it just filled; libarchive
 * keeps it only until its next read, so a ring of buffers is enough:
 * the one filled next is never the one libarchive holds, and the
 * reader waits for the hasher only when it is a whole ring behind.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <openssl/evp.h>
#include "e2cryptbak.h"
#include "stream_hash.h"

#define RING		4

struct e2cb_stream_hash {
	EVP_MD_CTX *ctx;
	char *buf[RING];
	size_t len[RING];
	unsigned int fill;		/* the buffer the reader fills next */
	unsigned int queued;		/* filled, not yet hashed */
	int threaded, stop, failed;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the hasher: a buffer is queued */
	pthread_cond_t done;		/* the reader: a buffer is free */
};

static int hash_one(struct e2cb_stream_hash *h, unsigned int i)
{
	return EVP_DigestUpdate(h->ctx, h->buf[i], h->len[i]) ? 0 : -1;
}

/* The hasher hashes what is queued, then ends; the reader waits for it */
static void stop_hasher(struct e2cb_stream_hash *h)
{
	if (!h->threaded)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = 1;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	h->threaded = 0;
}

static void *hasher(void *arg)
{
	struct e2cb_stream_hash *h = arg;
	unsigned int i;
	int bad;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->queued && !h->stop)
			pthread_cond_wait(&h->wake, &h->lock);
		if (!h->queued)
			break;
		/* the oldest queued buffer: the reader does not touch it */
		i = (h->fill + RING - h->queued) % RING;
		pthread_mutex_unlock(&h->lock);
		bad = hash_one(h, i);
		pthread_mutex_lock(&h->lock);
		h->failed |= bad;
		h->queued--;
		pthread_cond_signal(&h->done);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

errcode_t e2cb_stream_hash_start(struct e2cb_stream_hash **ret)
{
	struct e2cb_stream_hash *h;
	int i;

	h = calloc(1, sizeof(*h));
	if (!h)
		return EXT2_ET_NO_MEMORY;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || !EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL))
		goto errout;
	for (i = 0; i < RING; i++) {
		h->buf[i] = malloc(E2CB_STREAM_HASH_BUF);
		if (!h->buf[i])
			goto errout;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	pthread_cond_init(&h->done, NULL);
	h->threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		      !pthread_create(&h->thread, NULL, hasher, h);
	*ret = h;
	return 0;
errout:
	e2cb_stream_hash_free(h);
	return EXT2_ET_NO_MEMORY;
}

/* The buffer to read into next (E2CB_STREAM_HASH_BUF bytes) */
void *e2cb_stream_hash_buf(struct e2cb_stream_hash *h)
{
	if (h->threaded) {
		pthread_mutex_lock(&h->lock);
		while (h->queued == RING)
			pthread_cond_wait(&h->done, &h->lock);
		pthread_mutex_unlock(&h->lock);
	}
	return h->buf[h->fill];
}

/* The buffer e2cb_stream_hash_buf() gave holds @len bytes: hash them */
errcode_t e2cb_stream_hash_add(struct e2cb_stream_hash *h, size_t len)
{
	unsigned int i = h->fill;
	int failed;

	h->len[i] = len;
	if (!h->threaded) {
		h->failed |= hash_one(h, i);
		return h->failed ? EXT2_ET_NO_MEMORY : 0;
	}
	pthread_mutex_lock(&h->lock);
	h->fill = (i + 1) % RING;
	h->queued++;
	failed = h->failed;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
	return failed ? EXT2_ET_NO_MEMORY : 0;
}

/* Everything added hashed: the digest.  Once; the thread ends. */
errcode_t e2cb_stream_hash_final(struct e2cb_stream_hash *h,
				 uint8_t out[E2CB_STREAM_DIGEST_LEN])
{
	unsigned int len;

	stop_hasher(h);
	if (h->failed || !EVP_DigestFinal_ex(h->ctx, out, &len))
		return EXT2_ET_NO_MEMORY;
	return 0;
}

void e2cb_stream_hash_free(struct e2cb_stream_hash *h)
{
	int i;

	if (!h)
		return;
	stop_hasher(h);
	for (i = 0; i < RING; i++)
		free(h->buf[i]);
	EVP_MD_CTX_free(h->ctx);
	free(h);
}
