/*
 * extract_archive.c --- e2cryptbak extract: an archive as the source
 *
 * Walks an archive's entries in order, turning each record into the
 * entry the driver takes, and feeds a regular file's data to the writer:
 * read here, or by the writer's workers straight from an archive that is
 * a plain file.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include "extract.h"

static errcode_t archive_data(const struct e2cb_entry *ae EXT2FS_ATTR((unused)),
			      uint64_t off, const void *buf, size_t len,
			      void *priv)
{
	/* a write error stops the writing, not the reading */
	return e2cb_xw_add(priv, off, buf, len);
}

/* The archive is damaged, as the reader found: nothing more is read */
static void report_damage(struct xt *x)
{
	fflush(stdout);
	com_err(program_name, 0, "%s: damaged: %s", x->o->source,
		e2cb_reader_error(x->r));
	x->damaged = 1;
}

/*
 * A stretch of the archive: what is to be decrypted the workers read,
 * and sum; the rest, past the last data unit (fs-verity's), is read and
 * summed here once they are done, to keep the sum in order.
 */
static errcode_t plan_stretch(struct xt *x, struct writer *w, int fd,
			      const struct e2cb_stretch *m)
{
	uint64_t off = m->off, pos = m->pos, left = m->len;
	size_t n, room;
	uint8_t *dst;
	errcode_t err;

	while (left && !w->err) {
		n = left < IOBUF_SIZE ? left : IOBUF_SIZE;
		dst = off < w->end ? e2cb_xw_room(w, off, &room) : NULL;
		if (dst) {
			if (n > room)
				n = room;
			if (n > w->end - off)
				n = w->end - off;
			e2cb_xw_plan_read(w, dst, pos, n);
			e2cb_xw_commit(w, n);
		} else {
			if (off >= w->end)
				e2cb_xw_finish(w);
			err = e2cb_pread_all(fd, x->iobuf, n, pos);
			if (err) {
				e2cb_xw_read_error(w, err, pos, off);
				return err;
			}
			if (off >= w->end)
				e2cb_reader_sum_data(x->r, off, x->iobuf, n);
			else
				e2cb_xw_add(w, off, x->iobuf, n);
		}
		off += n;
		pos += n;
		left -= n;
	}
	return 0;
}

/*
 * The data of a file larger than a buffer, from an archive that is a
 * plain file: the workers read it there as they decrypt, rather than
 * this thread copying it out of libarchive and summing it.
 */
static errcode_t archive_feed_direct(struct xt *x, struct writer *w)
{
	const struct e2cb_stretch *map;
	size_t count, i;
	errcode_t err;
	int fd;

	err = e2cb_reader_data_map(x->r, &map, &count, &fd);
	if (err)
		return err;
	w->plan = 1;
	w->read_fd = fd;
	w->sum_to = x->r;
	for (i = 0; i < count && !err && !w->err; i++)
		err = plan_stretch(x, w, fd, &map[i]);
	e2cb_xw_finish(w);
	w->plan = 0;
	w->sum_to = NULL;
	if (w->read_err) {
		e2cb_x_report(x, w->read_err, "cannot read the archive at "
			      "byte %llu (byte %llu of the data)",
			      (unsigned long long) w->bad_pos,
			      (unsigned long long) w->bad_byte);
		x->damaged = 1;
		w->reported = 1;
		return w->read_err;
	}
	/* a buffer left out of the sum: sum it all again */
	if (w->err && e2cb_reader_sum_again(x->r, x->iobuf, IOBUF_SIZE))
		report_damage(x);
	return 0;
}

static errcode_t archive_feed(struct xt *x,
			      const struct xentry *e EXT2FS_ATTR((unused)),
			      struct writer *w)
{
	errcode_t err = EXT2_ET_UNIMPLEMENTED;

	/* a worker for each buffer: they read as they decrypt */
	if (w->fis[1])
		err = archive_feed_direct(x, w);
	if (err == EXT2_ET_UNIMPLEMENTED)
		err = e2cb_reader_data(x->r, archive_data, w);
	if (err == EXT2_ET_CRYPT_BAD_BLOB) {
		report_damage(x);
		w->reported = 1;
	}
	return err;
}

void e2cb_x_walk_archive(struct xt *x)
{
	struct e2cb_entry *e;
	struct xentry xe;
	int ret = 0;

	while (!x->damaged && !e2cb_x_stopped(x) &&
	       (ret = e2cb_reader_next(x->r, &e)) == 0) {
		e2cb_x_entry_from(&xe, e);
		e2cb_x_process(x, &xe, e->depth);
	}
	if (!x->damaged && ret < 0)
		report_damage(x);
}

int e2cb_x_open_archive(struct xt *x, uint8_t salt[16])
{
	const struct e2cb_header *h;
	errcode_t err;

	err = e2cb_reader_open(x->o->source, x->o->list_only ? 0 :
			       E2CB_READ_DATA, &x->r);
	if (err) {
		com_err(program_name, 0, "%s: %s", x->o->source,
			e2cb_reader_error(x->r));
		return err == EXT2_ET_CRYPT_BAD_BLOB ? E2CB_EXIT_DAMAGED :
		       E2CB_EXIT_ERROR;
	}
	h = e2cb_reader_header(x->r);
	memcpy(x->uuid, h->uuid, 16);
	memcpy(salt, h->encrypt_pw_salt, 16);
	x->block_size = h->block_size;
	x->feed = archive_feed;
	return 0;
}
