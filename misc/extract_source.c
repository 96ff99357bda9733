/*
 * extract_source.c --- e2cryptbak extract: the source of the entries,
 * an archive or an ext4 device or image (source.h)
 *
 * The entries of an image are those backup would archive, from its own
 * walk (source_walk.c, backup.c): what the image holds that cannot be
 * read -- damaged directories, loops, bad inodes -- is reported and
 * skipped there, in backup's words but with the path as extract names
 * it (x_shown()), and counted in the source's trailer.  An archive's
 * are the reader's, every one checked there; damage ends the run.
 * Each entry goes to the per-entry driver as extract's own, and a
 * regular file's data to the writer, read once: by its workers, which
 * pread() the stretches of the device or of an archive that is a
 * plain file themselves (e2cb_source_data_map) as they decrypt, or by
 * this thread; what they read of an archive goes back to the source,
 * which checks its sums.  Otherwise (a compressed archive, a pipe)
 * through the source's data().
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "extract.h"
#include "source.h"

/* What the driver takes of an entry, from an archive or an image */
void e2cb_x_entry_from(struct xentry *xe, const struct e2cb_entry *e)
{
	const char *slash;

	memset(xe, 0, sizeof(*xe));
	xe->ino = e->rec.ino;
	xe->mode = e->rec.mode;
	xe->uid = e->rec.uid;
	xe->gid = e->rec.gid;
	xe->links = e->rec.links_count;
	xe->size = e->rec.size;
	xe->atime = e->rec.atime;
	xe->mtime = e->rec.mtime;
	xe->rdev_major = e->rec.rdev_major;
	xe->rdev_minor = e->rec.rdev_minor;
	xe->hardlink = !!(e->rec.rflags & E2CB_IF_HARDLINK);
	if (e->rec.rflags & E2CB_IF_METADATA) {
		xe->ctx = e->ctx;
		xe->ctx_len = e->ctx_len;
	}
	if (e->rec.rflags & E2CB_IF_NAME) {
		xe->name = e->name.name;
		xe->name_len = e->name.name_len;
	} else if (e->depth) {
		/* a plaintext name: the path is its bytes */
		slash = strrchr(e->path, '/');
		xe->name = (const uint8_t *) (slash ? slash + 1 : e->path);
		xe->name_len = strlen((const char *) xe->name);
	}
	xe->xattrs = e->xattrs;
	xe->xattrs_len = e->xattrs_len;
	if (e->symlink) {
		xe->target = e->symlink;
		xe->target_len = e->symlink_len;
	} else if (LINUX_S_ISLNK(e->rec.mode) && e->linkname &&
		   !xe->hardlink) {
		xe->target = (const uint8_t *) e->linkname;
		xe->target_len = strlen(e->linkname);
	}
}

static errcode_t source_data(const struct e2cb_entry *e EXT2FS_ATTR((unused)),
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
		e2cb_source_error(x->src));
	x->damaged = 1;
}

/*
 * @n bytes at @pos of the device into @buf, on this thread.  A failure
 * is narrowed to its first block, kept for feed_map() to name, as the
 * workers' are (read_planned()).
 */
static errcode_t read_here(struct writer *w, int fd, uint8_t *buf, size_t n,
			   uint64_t pos, uint64_t off)
{
	unsigned int bs = w->x->block_size;
	errcode_t retval;
	uint64_t b;

	retval = e2cb_pread_all(fd, buf, n, pos);
	if (!retval)
		return 0;
	for (b = 0; b < n; b += bs)
		if (e2cb_pread_all(fd, buf + b, n - b < bs ? n - b : bs,
				   pos + b))
			break;
	if (b >= n)
		b = 0;
	e2cb_xw_read_error(w, retval, pos + b, off + b);
	return retval;
}

/*
 * A stretch of the device, straight into the pipe's buffers: the
 * workers read it as they decrypt (w->plan), or this thread does;
 * what no buffer takes (plaintext) goes through x->iobuf.  Nothing
 * past w->end is needed.
 */
static errcode_t map_stretch(struct xt *x, struct writer *w, int fd,
			     const struct e2cb_stretch *m)
{
	uint64_t off = m->off, pos = m->pos, left = m->len;
	size_t n, room;
	uint8_t *dst;
	errcode_t retval;

	while (left && !w->err && off < w->end) {
		n = left < IOBUF_SIZE ? left : IOBUF_SIZE;
		if (n > w->end - off)
			n = w->end - off;
		dst = e2cb_xw_room(w, off, &room);
		if (dst && n > room)
			n = room;
		if (dst && w->plan) {
			e2cb_xw_plan_read(w, dst, pos, n);
		} else {
			retval = read_here(w, fd, dst ? dst : x->iobuf, n, pos,
					off);
			if (retval)
				return retval;
		}
		if (dst)
			e2cb_xw_commit(w, n);
		else
			e2cb_xw_add(w, off, x->iobuf, n);
		off += n;
		pos += n;
		left -= n;
	}
	return 0;
}

/* A read of the map failed: a block of the image, or the archive */
static void report_read(struct xt *x, struct writer *w)
{
	if (x->src->archive) {
		e2cb_x_report(x, w->read_err, "cannot read the archive at "
			      "byte %llu (byte %llu of the data)",
			      (unsigned long long) w->bad_pos,
			      (unsigned long long) w->bad_byte);
		x->damaged = 1;
	} else {
		e2cb_x_report(x, w->read_err, "cannot read block %llu (byte "
			      "%llu of the data)",
			      (unsigned long long) (w->bad_pos / x->block_size),
			      (unsigned long long) w->bad_byte);
	}
	w->reported = 1;
}

/*
 * The data where the source maps it: a file of more than a buffer read
 * by the workers, a buffer each, a smaller one here.  Nothing was read
 * before (E2CB_SINK_READS_DATA): the first block that cannot be read
 * is named here.  What is read goes back to a source that sums it
 * (w->sum_to), in order, all of it written when this returns.
 */
static errcode_t feed_map(struct xt *x, struct writer *w)
{
	const struct e2cb_stretch *map;
	size_t count, i;
	errcode_t retval;
	int fd;

	retval = e2cb_source_data_map(x->src, &map, &count, &fd);
	if (retval)
		return retval;
	w->plan = !!w->fis[1];
	w->read_fd = fd;
	w->sum_to = e2cb_source_sums_data(x->src) ? x->src : NULL;
	for (i = 0; i < count && !retval && !w->err; i++)
		retval = map_stretch(x, w, fd, &map[i]);
	if (!retval && (w->plan || w->sum_to))
		retval = e2cb_xw_finish(w);
	w->plan = 0;
	w->sum_to = NULL;
	if (w->read_err) {
		report_read(x, w);
		return w->read_err;
	}
	return retval;
}

/* The data of a regular file through the writer @w */
errcode_t e2cb_x_feed(struct xt *x,
		      const struct xentry *e EXT2FS_ATTR((unused)),
		      struct writer *w)
{
	errcode_t retval = EXT2_ET_UNIMPLEMENTED;

	/*
	 * An archive's data() hands out what libarchive has read already,
	 * summing it here: its map pays where the workers read and sum a
	 * buffer each, not for a file this thread would pread() alone.
	 */
	if (w->fis[1] || !e2cb_source_sums_data(x->src))
		retval = feed_map(x, w);
	if (retval == EXT2_ET_CRYPT_BAD_BLOB && x->src->archive) {
		report_damage(x);
		w->reported = 1;
	}
	if (retval != EXT2_ET_UNIMPLEMENTED)
		return retval;
	retval = e2cb_source_data(x->src, source_data, w);
	/* source_data() fails nothing: the source found what failed */
	if (retval == EXT2_ET_CRYPT_BAD_BLOB && x->src->archive)
		report_damage(x);
	if (retval)
		w->reported = 1;
	return retval;
}

/*
 * @len bytes of @s, escaped as every path shown, into x->shown after
 * @at bytes; returns the length.
 */
static size_t shown_add(struct xt *x, size_t at, const char *s, size_t len)
{
	if (e2cb_grow_to((void **) &x->shown, &x->shown_size,
			 at + E2CB_ESCAPED_MAX(len) + 1, 1))
		return at;
	return at + e2cb_escape(x->shown + at, s, len);
}

/* Which frame holds the directory at the source's @path (its @len) */
static size_t frame_of(struct xt *x, const char *path, size_t len,
		       size_t *clen)
{
	size_t j, n;

	for (j = x->depth; j-- > 1;) {
		n = j + 1 < x->depth ? x->st[j + 1].cipher_len :
				       x->cipher.len;
		if (n < len && path[n] == '/' &&
		    !memcmp(x->cipher.s, path, n)) {
			*clen = n + 1;
			return j;
		}
		if (n == len && !memcmp(x->cipher.s, path, n)) {
			*clen = n;
			return j;
		}
	}
	*clen = 0;
	return 0;
}

/* The last name of a path, decrypted with its directory's key */
static int shown_name(struct frame *f, const char *comp, size_t len,
		      uint8_t name[FSCRYPT_NAME_MAX + 1], size_t *name_len)
{
	uint8_t ct[EXT2_NAME_LEN];
	size_t ct_len, dec_len;

	if (!f->encrypted || !f->names || memchr(comp, '/', len) ||
	    e2cb_b64url_decode(comp, len, ct, sizeof(ct), &ct_len))
		return -1;
	if (fscrypt_decrypt_name(f->names, ct, ct_len, name, &dec_len) ||
	    fscrypt_check_name(name, dec_len, name_len))
		return -1;
	return 0;
}

/*
 * What the image source reports on, named as extract names it: the
 * directories on the way down as the driver named them (decrypted where
 * the key decrypts them), and a last name the driver has not seen yet
 * decrypted with its directory's key.  Without the key, the source's
 * path, as the driver's own messages show it.
 */
static const char *x_shown(void *priv, const char *path)
{
	struct xt *x = priv;
	uint8_t name[FSCRYPT_NAME_MAX + 1];
	size_t len = strlen(path), clen, plen, name_len, o = 0, j = 0;

	/* after what the driver printed, as its own messages are */
	fflush(stdout);
	if (len == 1 && path[0] == '.')
		len = 0;
	if (x->depth) {
		j = frame_of(x, path, len, &clen);
		plen = j + 1 < x->depth ? x->st[j + 1].plain_len :
					  x->plain.len;
		o = shown_add(x, 0, x->plain.s ? x->plain.s : "", plen);
		path += clen;
		len -= clen;
	}
	if (len && o)
		o = shown_add(x, o, "/", 1);
	if (len && x->depth &&
	    !shown_name(&x->st[j], path, len, name, &name_len))
		o = shown_add(x, o, (const char *) name, name_len);
	else if (len)
		o = shown_add(x, o, path, len);
	if (!o)
		o = shown_add(x, 0, ".", 1);
	return x->shown ? x->shown : ".";
}

/* The sink: each entry of the source through the driver */
static int x_entry(void *priv, struct e2cb_source *src EXT2FS_ATTR((unused)),
		   const struct e2cb_entry *e)
{
	struct xt *x = priv;
	struct xentry xe;

	if (e2cb_x_stopped(x))
		return E2CB_EXIT_ERROR;		/* finish() says why */
	e2cb_x_entry_from(&xe, e);
	e2cb_x_process(x, &xe, e->depth);
	/* the archive's damage ends the run: said already */
	return x->damaged ? E2CB_EXIT_DAMAGED : 0;
}

/* An archive, or something that holds an ext4 superblock */
int e2cb_x_looks_like_image(const char *name)
{
	uint8_t buf[2048];
	struct stat st;
	ssize_t n;
	int fd;

	if (!strcmp(name, "-"))
		return 0;
	if (!stat(name, &st) && S_ISBLK(st.st_mode))
		return 1;
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n < (ssize_t) sizeof(buf))
		return 0;
	/* gzip, xz, zstd, or a ustar header: an archive */
	if ((buf[0] == 0x1f && buf[1] == 0x8b) ||
	    !memcmp(buf, "\xfd" "7zXZ", 5) ||
	    !memcmp(buf, "\x28\xb5\x2f\xfd", 4) ||
	    !memcmp(buf + 257, "ustar", 5))
		return 0;
	return buf[1080] == 0x53 && buf[1081] == 0xef;
}

/*
 * The image or device, its journal replayed in memory unless --stale,
 * or the archive, read as it comes (one pass; list -k reads no data)
 */
int e2cb_x_open_source(struct xt *x, int image, uint8_t salt[16])
{
	const struct e2cb_header *h;
	errcode_t retval;

	if (!image) {
		retval = e2cb_archive_source_open(x->o->source,
						  x->sink_flags, &x->src);
		if (retval)
			return retval == EXT2_ET_CRYPT_BAD_BLOB ?
				E2CB_EXIT_DAMAGED : E2CB_EXIT_ERROR;
	} else {
		retval = e2cb_image_source_open(x->o->source, "/",
						x->o->stale, &x->src);
		if (retval) {
			com_err(program_name, retval, "while opening %s",
				x->o->source);
			return E2CB_EXIT_ERROR;
		}
		/* as before: a name taken alone (PATH, -O) has the data */
		e2cb_image_source_every_name(x->src);
		x->fs = e2cb_image_source_fs(x->src);
	}
	h = e2cb_source_header(x->src);
	memcpy(x->uuid, h->uuid, 16);
	memcpy(salt, h->encrypt_pw_salt, 16);
	x->block_size = h->block_size;
	return 0;
}

/*
 * The whole source, from its root.  What an image's source skipped
 * counts as failed: it said what, and why.  An archive that is damaged
 * ends the run there (exit 4).
 */
void e2cb_x_walk(struct xt *x)
{
	struct e2cb_sink sink = { x_entry, x, x->sink_flags, x_shown };
	const struct e2cb_trailer *t;
	int ret;

	/* an archive's source says why; the image's is out of memory */
	if (e2cb_source_rewind(x->src)) {
		if (!x->src->archive)
			com_err(program_name, EXT2_ET_NO_MEMORY,
				"while setting up");
		x->failed++;
		return;
	}
	ret = e2cb_source_run(x->src, &sink);
	if (ret == E2CB_SOURCE_FAILED && x->src->archive) {
		if (!x->damaged)
			report_damage(x);
		return;
	}
	if (ret == E2CB_SOURCE_FAILED) {
		fflush(stdout);
		com_err(program_name, 0, "%s: %s; extraction stopped",
			x->o->source, e2cb_source_error(x->src));
		x->failed++;
		return;
	}
	t = e2cb_source_trailer(x->src);
	if (!ret && t && !x->src->archive)
		x->failed += t->skipped;
}
