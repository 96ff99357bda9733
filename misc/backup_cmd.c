/*
 * backup_cmd.c --- e2cryptbak backup: a walk into the archive writer
 *
 * The walk is of an unmounted image (backup.c) or, with --online, of a
 * mounted filesystem (source_online.c); either hands each entry to its
 * end, here the archive writer (writer.c), call for call.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <et/com_err.h>
#include "backup.h"

/* The line a backup ends with, offline or online */
void e2cb_backup_summary(const struct e2cb_backup_opts *opts,
			 const struct e2cb_backup_counts *c,
			 const struct timespec *t0)
{
	FILE *out = strcmp(opts->output, "-") ? stdout : stderr;
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(out, "%s: %llu inodes (%llu encrypted), %llu entries, "
		"%llu data bytes in %.2fs%s\n", opts->device,
		(unsigned long long) c->inodes,
		(unsigned long long) c->encrypted,
		(unsigned long long) c->entries,
		(unsigned long long) c->data_bytes,
		(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9,
		c->skipped ? "; INCOMPLETE" : "");
	if (c->skipped)
		com_err(program_name, 0, "%llu entries were skipped or found "
			"damaged (see above): the archive is marked incomplete",
			(unsigned long long) c->skipped);
}

/* Backup's end of a walk: the archive writer, call for call */
#define W(wk)	((struct e2cb_writer *) (wk)->end)

static errcode_t w_begin(struct e2cb_walk *wk, const char *path,
			 const struct e2cb_inode_rec *r, uint64_t need)
{
	return e2cb_writer_begin(W(wk), path, r, need);
}

static void w_hardlink(struct e2cb_walk *wk, const char *first)
{
	e2cb_writer_hardlink(W(wk), first);
}

static errcode_t w_add_context(struct e2cb_walk *wk, const void *ctx,
			       size_t ctx_len)
{
	return e2cb_writer_add_context(W(wk), ctx, ctx_len);
}

static errcode_t w_add_name(struct e2cb_walk *wk,
			    const struct ext4_encrypted_name *name,
			    const void *ctx, size_t ctx_len)
{
	return e2cb_writer_add_name(W(wk), name, ctx, ctx_len);
}

static void w_add_xattrs(struct e2cb_walk *wk, uint8_t *rec, size_t len)
{
	e2cb_writer_add_xattrs(W(wk), rec, len);
}

static errcode_t w_add_symlink(struct e2cb_walk *wk, uint8_t *target,
			       size_t len, int encrypted)
{
	return e2cb_writer_add_symlink(W(wk), target, len, encrypted);
}

static char *w_data_buf(struct e2cb_walk *wk, uint64_t len)
{
	return e2cb_writer_data_buf(W(wk), len);
}

static void w_set_stretches(struct e2cb_walk *wk, uint64_t tar_size,
			    const struct e2cb_stretch *st, size_t count)
{
	e2cb_writer_set_stretches(W(wk), tar_size, st, count);
}

static void w_set_inline(struct e2cb_walk *wk, const char *data, size_t len)
{
	e2cb_writer_set_inline(W(wk), data, len);
}

static errcode_t w_send(struct e2cb_walk *wk)
{
	return e2cb_writer_send(W(wk));
}

static errcode_t w_data(struct e2cb_walk *wk, uint64_t off, const void *buf,
			size_t len)
{
	return e2cb_writer_data(W(wk), off, buf, len);
}

static const struct e2cb_walk_ops writer_ops = {
	.begin = w_begin,
	.hardlink = w_hardlink,
	.add_context = w_add_context,
	.add_name = w_add_name,
	.add_xattrs = w_add_xattrs,
	.add_symlink = w_add_symlink,
	.data_buf = w_data_buf,
	.set_stretches = w_set_stretches,
	.set_inline = w_set_inline,
	.send = w_send,
	.data = w_data,
};

/* The header, a pass of the walk into the archive, the trailer */
static errcode_t write_archive(struct e2cb_walk *wk)
{
	struct e2cb_trailer t;
	errcode_t retval;

	retval = e2cb_writer_header(W(wk), &wk->hdr);
	if (!retval)
		retval = e2cb_walk_pass(wk);
	if (retval)
		return retval;
	e2cb_walk_counts(wk, &t);
	return e2cb_writer_trailer(W(wk), &t);
}

/*
 * e2cryptbak backup: an unmounted image (a subtree, read ahead whole
 * when it is all of it), or with --online a mounted filesystem
 */
int e2cb_backup(const struct e2cb_backup_opts *opts)
{
	struct e2cb_walk *wk;
	struct e2cb_writer *w;
	struct timespec t0;
	uint64_t skipped;
	errcode_t retval;
	int ok;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (opts->online)
		retval = e2cb_online_walk_open(opts->device, &wk);
	else
		retval = e2cb_image_walk_open(opts->device, opts->path,
					      opts->stale,
					      !strcmp(opts->path, "/"), &wk);
	if (retval)
		return E2CB_EXIT_ERROR;
	retval = e2cb_writer_open(opts->output, opts->compress, &w);
	if (!w) {
		e2cb_walk_close(wk);
		return E2CB_EXIT_ERROR;
	}
	wk->ops = &writer_ops;
	wk->end = w;
	wk->progress = opts->progress;
	if (!retval && opts->freeze) {
		int out[2] = { e2cb_writer_fd(w), 2 };

		retval = e2cb_online_walk_freeze(wk, out, 2);
	}
	if (!retval)
		retval = write_archive(wk);
	e2cb_thaw();
	retval = e2cb_writer_finish(w, retval);
	e2cb_walk_progress(wk, 1);
	ok = e2cb_writer_close(w, retval == 0);
	if (ok) {
		struct e2cb_backup_counts c = { wk->inodes, wk->encrypted,
			wk->entries, wk->data_bytes, wk->skipped };

		e2cb_backup_summary(opts, &c, &t0);
	}
	skipped = wk->skipped;
	e2cb_walk_close(wk);
	if (!ok)
		return E2CB_EXIT_ERROR;
	return skipped ? E2CB_EXIT_INCOMPLETE : E2CB_EXIT_OK;
}
