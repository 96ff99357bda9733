/*
 * pipeline.c --- work on filled buffers on other threads, emit in order
 *
 * Extract reads ciphertext, decrypts it and writes the plaintext; one
 * thread doing all three leaves a core idle while the kernel copies the
 * output into the page cache.  Here the reading thread fills buffers
 * and worker threads take them: each runs the job's work (decryption)
 * on the buffer it took, several at once; the job's emit (the write)
 * runs in the order the buffers were submitted, by whichever worker
 * finds the next one done, while the others go on working.  Where no
 * thread can be started, a job runs at once on the submitting thread.
 *
 * Every wake-up costs (in a virtual machine, an interrupt between
 * CPUs), so threads are woken only when they have something to do: a
 * worker when a buffer is queued, the submitting thread once half of
 * the buffers are free again, or all are.
 *
 * A worker is numbered: work() is told which one runs it, so that a
 * caller can give each worker state of its own (a cipher context).
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

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_TAKEN, SLOT_DONE };

struct slot {
	uint8_t *buf;
	const struct e2cb_pipe_job *job;
	void *priv;
	size_t len;
	uint64_t off;
	errcode_t err;			/* its work's */
	enum slot_state state;
};

struct e2cb_pipe {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a slot was queued, or quit */
	pthread_cond_t room;		/* slots were freed */
	pthread_t thread[E2CB_PIPE_MAX_WORKERS];
	unsigned int nthreads;
	unsigned int idle;		/* workers waiting on work */
	int room_wanted;		/* someone waits on room */
	int emitting;			/* a worker runs the emits */
	int quit;
	size_t bufsize;
	unsigned int nbuf;
	unsigned int fill;		/* the next slot to hand out */
	unsigned int take;		/* the next slot a worker takes */
	unsigned int emit;		/* the next slot to emit */
	unsigned int pending;		/* not free */
	errcode_t err;			/* the first job error */
	struct slot slot[MAX_BUFS];
};

struct worker_arg {
	struct e2cb_pipe *p;
	unsigned int id;
};

/* With the lock held: the slot emitted is free again */
static void free_slot(struct e2cb_pipe *p, struct slot *s, errcode_t retval)
{
	if (retval && !p->err)
		p->err = retval;
	s->state = SLOT_FREE;
	p->pending--;
	p->emit = (p->emit + 1) % p->nbuf;
	if (p->room_wanted && (!p->pending || 2 * p->pending <= p->nbuf)) {
		p->room_wanted = 0;
		pthread_cond_broadcast(&p->room);
	}
}

/*
 * With the lock held: emit the done slots in order, unless another
 * worker is at it (it will find ours done when it gets there).
 */
static void emit_done(struct e2cb_pipe *p)
{
	struct slot *s;
	errcode_t retval;

	if (p->emitting)
		return;
	p->emitting = 1;
	while ((s = &p->slot[p->emit])->state == SLOT_DONE) {
		retval = s->err ? s->err : p->err;
		pthread_mutex_unlock(&p->lock);
		if (!retval && s->job->emit)
			retval = s->job->emit(s->priv, s->buf, s->len, s->off);
		pthread_mutex_lock(&p->lock);
		free_slot(p, s, retval);
	}
	p->emitting = 0;
}

static void *worker(void *arg)
{
	struct e2cb_pipe *p = ((struct worker_arg *) arg)->p;
	unsigned int id = ((struct worker_arg *) arg)->id;
	struct slot *s;
	errcode_t retval;

	free(arg);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->slot[p->take].state != SLOT_QUEUED && !p->quit) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
		}
		if (p->slot[p->take].state != SLOT_QUEUED)
			break;
		s = &p->slot[p->take];
		s->state = SLOT_TAKEN;
		p->take = (p->take + 1) % p->nbuf;
		/* after an error the rest only waits to be discarded */
		retval = p->err;
		pthread_mutex_unlock(&p->lock);
		if (!retval && s->job->work)
			retval = s->job->work(s->priv, id, s->buf, s->len, s->off);
		pthread_mutex_lock(&p->lock);
		s->err = retval;
		s->state = SLOT_DONE;
		emit_done(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The workers take no signal: the main thread's handlers clean up. */
static void start_workers(struct e2cb_pipe *p, unsigned int n)
{
	struct worker_arg *a;
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (p->nthreads < n) {
		a = malloc(sizeof(*a));
		if (!a)
			break;
		a->p = p;
		a->id = p->nthreads;
		if (pthread_create(&p->thread[p->nthreads], NULL, worker, a)) {
			free(a);
			break;
		}
		p->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * @nworkers threads (0: none, jobs run in e2cb_pipe_submit()); @nbuf
 * buffers of @bufsize circulate, one being filled while the others
 * wait for or are in the workers' hands.
 */
errcode_t e2cb_pipe_new(size_t bufsize, unsigned int nbuf,
			unsigned int nworkers, struct e2cb_pipe **ret)
{
	struct e2cb_pipe *p;
	unsigned int i;

	if (nbuf < 2 || nbuf > MAX_BUFS || nworkers > E2CB_PIPE_MAX_WORKERS)
		return EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->room, NULL);
	p->bufsize = bufsize;
	p->nbuf = nworkers ? nbuf : 1;
	for (i = 0; i < p->nbuf; i++) {
		p->slot[i].buf = malloc(bufsize);
		if (!p->slot[i].buf) {
			e2cb_pipe_free(p);
			return ENOMEM;
		}
	}
	start_workers(p, nworkers);
	if (!p->nthreads)
		p->nbuf = 1;
	*ret = p;
	return 0;
}

/* How many workers run (0: jobs run on the submitting thread) */
unsigned int e2cb_pipe_workers(const struct e2cb_pipe *p)
{
	return p->nthreads;
}

/* The buffer to fill next: waits until the workers are done with it */
uint8_t *e2cb_pipe_buffer(struct e2cb_pipe *p)
{
	struct slot *s = &p->slot[p->fill];

	if (p->nthreads) {
		pthread_mutex_lock(&p->lock);
		while (s->state != SLOT_FREE) {
			p->room_wanted = 1;
			pthread_cond_wait(&p->room, &p->lock);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return s->buf;
}

/* @job on slot @s, on the calling thread: no worker holds a slot */
static errcode_t run_here(struct e2cb_pipe *p, struct slot *s,
			  const struct e2cb_pipe_job *job, void *priv,
			  size_t len, uint64_t off)
{
	errcode_t retval = 0;

	if (!p->err && job->work)
		retval = job->work(priv, 0, s->buf, len, off);
	if (!retval && !p->err && job->emit)
		retval = job->emit(priv, s->buf, len, off);
	if (retval && !p->err)
		p->err = retval;
	return p->err;
}

/*
 * Run @job on the buffer last handed out, filled with @len bytes.
 * Returns the first error of any job so far: the caller stops there.
 */
errcode_t e2cb_pipe_submit(struct e2cb_pipe *p,
			   const struct e2cb_pipe_job *job, void *priv,
			   size_t len, uint64_t off)
{
	struct slot *s = &p->slot[p->fill];
	errcode_t retval = 0;

	if (!p->nthreads)
		return run_here(p, s, job, priv, len, off);
	pthread_mutex_lock(&p->lock);
	s->job = job;
	s->priv = priv;
	s->len = len;
	s->off = off;
	s->state = SLOT_QUEUED;
	p->pending++;
	p->fill = (p->fill + 1) % p->nbuf;
	if (p->idle)
		pthread_cond_signal(&p->work);
	retval = p->err;
	pthread_mutex_unlock(&p->lock);
	return retval;
}

/*
 * As e2cb_pipe_submit(), but when nothing is pending the job runs here,
 * on the calling thread: a small file's one buffer costs no hand-over
 * and no wake-up (several futex calls each way) for work the caller
 * would only wait for.  With jobs pending it is queued behind them, to
 * keep the order of the emits.
 */
errcode_t e2cb_pipe_run(struct e2cb_pipe *p,
			const struct e2cb_pipe_job *job, void *priv,
			size_t len, uint64_t off)
{
	unsigned int pending = 0;

	if (p->nthreads) {
		/* only the submitting thread adds jobs: none can come now */
		pthread_mutex_lock(&p->lock);
		pending = p->pending;
		pthread_mutex_unlock(&p->lock);
	}
	if (pending)
		return e2cb_pipe_submit(p, job, priv, len, off);
	return run_here(p, &p->slot[p->fill], job, priv, len, off);
}

/* Wait for every job; return and forget the first error */
errcode_t e2cb_pipe_drain(struct e2cb_pipe *p)
{
	errcode_t retval;

	pthread_mutex_lock(&p->lock);
	while (p->pending) {
		p->room_wanted = 1;
		pthread_cond_wait(&p->room, &p->lock);
	}
	retval = p->err;
	p->err = 0;
	pthread_mutex_unlock(&p->lock);
	return retval;
}

void e2cb_pipe_free(struct e2cb_pipe *p)
{
	unsigned int i;

	if (!p)
		return;
	if (p->nthreads) {
		e2cb_pipe_drain(p);
		pthread_mutex_lock(&p->lock);
		p->quit = 1;
		pthread_cond_broadcast(&p->work);
		pthread_mutex_unlock(&p->lock);
		for (i = 0; i < p->nthreads; i++)
			pthread_join(p->thread[i], NULL);
	}
	for (i = 0; i < MAX_BUFS; i++) {
		if (!p->slot[i].buf)
			continue;
		fscrypt_wipe(p->slot[i].buf, p->bufsize);
		free(p->slot[i].buf);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->room);
	free(p);
}
