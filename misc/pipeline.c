/*
 * pipeline.c --- empty filled buffers on a second thread, in order
 *
 * Extract reads ciphertext, decrypts it and writes the plaintext; one
 * thread doing all three leaves a core idle while the kernel copies the
 * output into the page cache.  Here the reading thread fills buffers
 * and a worker thread runs a job on each (decrypt and write), in the
 * order they were submitted, so the reading of one buffer overlaps the
 * work on the previous ones.  Where no thread can be started, a job
 * runs at once on the submitting thread.
 *
 * The buffers may hold plaintext: they are wiped when freed.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "e2cryptbak.h"
#include "fscrypt/fscrypt.h"

#define MAX_BUFS	8

struct slot {
	uint8_t *buf;
	e2cb_pipe_func fn;
	void *priv;
	size_t len;
	uint64_t off;
	int queued;
};

struct e2cb_pipe {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int threaded, quit;
	size_t bufsize;
	unsigned int nbuf;
	unsigned int fill;		/* the next slot to hand out */
	unsigned int work;		/* the next slot the worker runs */
	unsigned int pending;		/* queued or running */
	errcode_t err;			/* the first job error */
	struct slot slot[MAX_BUFS];
};

static void *worker(void *arg)
{
	struct e2cb_pipe *p = arg;
	struct slot *s;
	errcode_t err;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		s = &p->slot[p->work];
		while (!s->queued && !p->quit)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!s->queued)
			break;
		/* after an error the rest only waits to be discarded */
		err = p->err;
		pthread_mutex_unlock(&p->lock);
		if (!err)
			err = s->fn(s->priv, s->buf, s->len, s->off);
		pthread_mutex_lock(&p->lock);
		if (err && !p->err)
			p->err = err;
		s->queued = 0;
		p->pending--;
		p->work = (p->work + 1) % p->nbuf;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The worker takes no signal: the main thread's handlers clean up. */
static int start_worker(struct e2cb_pipe *p)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->thread, NULL, worker, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret == 0;
}

errcode_t e2cb_pipe_new(size_t bufsize, unsigned int nbuf, int threaded,
			struct e2cb_pipe **ret)
{
	struct e2cb_pipe *p;
	unsigned int i;

	if (nbuf < 2 || nbuf > MAX_BUFS)
		return EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->bufsize = bufsize;
	p->nbuf = threaded ? nbuf : 1;
	for (i = 0; i < p->nbuf; i++) {
		p->slot[i].buf = malloc(bufsize);
		if (!p->slot[i].buf) {
			e2cb_pipe_free(p);
			return ENOMEM;
		}
	}
	p->threaded = threaded && start_worker(p);
	*ret = p;
	return 0;
}

/* The buffer to fill next: waits until the worker has emptied it */
uint8_t *e2cb_pipe_buffer(struct e2cb_pipe *p)
{
	struct slot *s = &p->slot[p->threaded ? p->fill : 0];

	if (p->threaded) {
		pthread_mutex_lock(&p->lock);
		while (s->queued)
			pthread_cond_wait(&p->cond, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
	return s->buf;
}

/*
 * Run @fn on the buffer last handed out, filled with @len bytes.
 * Returns the first error of any job so far: the caller stops there.
 */
errcode_t e2cb_pipe_submit(struct e2cb_pipe *p, e2cb_pipe_func fn,
			   void *priv, size_t len, uint64_t off)
{
	struct slot *s;
	errcode_t err;

	if (!p->threaded) {
		err = fn(priv, p->slot[0].buf, len, off);
		if (err && !p->err)
			p->err = err;
		return p->err;
	}
	pthread_mutex_lock(&p->lock);
	s = &p->slot[p->fill];
	s->fn = fn;
	s->priv = priv;
	s->len = len;
	s->off = off;
	s->queued = 1;
	p->pending++;
	p->fill = (p->fill + 1) % p->nbuf;
	pthread_cond_broadcast(&p->cond);
	err = p->err;
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* Wait for every job; return and forget the first error */
errcode_t e2cb_pipe_drain(struct e2cb_pipe *p)
{
	errcode_t err;

	if (p->threaded) {
		pthread_mutex_lock(&p->lock);
		while (p->pending)
			pthread_cond_wait(&p->cond, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
	err = p->err;
	p->err = 0;
	return err;
}

void e2cb_pipe_free(struct e2cb_pipe *p)
{
	unsigned int i;

	if (!p)
		return;
	if (p->threaded) {
		e2cb_pipe_drain(p);
		pthread_mutex_lock(&p->lock);
		p->quit = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	for (i = 0; i < p->nbuf; i++) {
		if (!p->slot[i].buf)
			continue;
		fscrypt_wipe(p->slot[i].buf, p->bufsize);
		free(p->slot[i].buf);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
