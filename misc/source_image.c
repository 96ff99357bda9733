/*
 * source_image.c --- e2cryptbak's image source: the entries of an
 * unmounted ext4 filesystem, without the key (source.h)
 *
 * The walk is backup's (backup.c, backup_inode.c): the same entries in
 * the same order, with the same records, made into struct e2cb_entry
 * here instead of an archive.  The records go through the archive's
 * encodings and back (the 'e5' and 'ef'/'ed' blobs, the sealed xattr
 * record), so that a sink sees what it would see in backup's archive.
 * The data is read from the image when the sink asks for it.  What the
 * image holds that cannot be archived is reported and skipped, as
 * backup does, and counted in the trailer.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <fcntl.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <et/com_err.h>
#include "backup.h"
#include "source.h"

struct image_source {
	struct e2cb_source s;		/* first */
	struct backup b;
	struct e2cb_header hdr;
	struct e2cb_trailer trailer;
	const struct e2cb_sink *sink;
	int status;			/* the sink's, that ended the pass */
	uint64_t sent;			/* entries of the pass */
	int nomem;			/* the entry could not be kept */
	char err[160];
	/* the entry being made */
	struct e2cb_entry e;
	uint8_t meta_blob[EXT4_CRYPT_BLOB_MAX];
	uint8_t *xattrs;
	size_t xattrs_size;
	uint8_t symlink[EXT2_MAX_BLOCK_SIZE + 4];
	const char *inline_data;
	size_t inline_len;
	const struct e2cb_stretch *st;
	size_t count;
	const struct region_list *rl;
	char *iobuf;			/* IOBUF_SIZE: preread data */
	int fd;				/* the device, for data_map */
	/* what ties a second pass to the first: the records' digests */
	EVP_MD_CTX *md, *stream;
	uint8_t digest[E2CB_ENTRY_DIGEST_LEN];	/* the header's, then the
						 * entry's */
	int md_failed;
	int no_digests;			/* E2CB_SINK_ONE_PASS */
};

#define IS(src)		((struct image_source *) (src))
#define IS_OF(bp)	((struct image_source *) ((char *) (bp) - \
			 offsetof(struct image_source, b)))

static errcode_t ie_begin(struct backup *b, const char *path,
			  const struct e2cb_inode_rec *r,
			  uint64_t need EXT2FS_ATTR((unused)))
{
	struct image_source *is = IS_OF(b);
	struct e2cb_entry *e = &is->e;
	const char *p;

	memset(e, 0, sizeof(*e));
	e->path = path;
	if (strcmp(path, "."))
		for (e->depth = 1, p = path; (p = strchr(p, '/')); p++)
			e->depth++;
	e->rec = *r;
	e->rec.path_crc = e2cb_crc32c(~0U, path, strlen(path));
	is->inline_data = NULL;
	is->inline_len = 0;
	is->st = NULL;
	is->count = 0;
	is->nomem = 0;
	return 0;
}

static void ie_hardlink(struct backup *b, const char *first)
{
	struct e2cb_entry *e = &IS_OF(b)->e;

	e->rec.rflags |= E2CB_IF_HARDLINK;
	e->linkname = first;
}

/* Through the 'e5' blob, as the reader would have it */
static errcode_t ie_add_context(struct backup *b, const void *ctx,
				size_t ctx_len)
{
	struct image_source *is = IS_OF(b);
	struct e2cb_entry *e = &is->e;
	errcode_t retval;
	size_t len;

	retval = ext2fs_encode_metadata_blob(e->rec.size, ctx, ctx_len,
					     is->meta_blob,
					     sizeof(is->meta_blob), &len);
	if (!retval)
		retval = ext2fs_decode_metadata_blob(is->meta_blob, len,
						     &e->i_size, &e->ctx,
						     &e->ctx_len);
	if (!retval)
		e->rec.rflags |= E2CB_IF_METADATA;
	return retval;
}

/* Through the 'ef'/'ed' blob, as the reader would have it */
static errcode_t ie_add_name(struct backup *b,
			     const struct ext4_encrypted_name *name,
			     const void *ctx, size_t ctx_len)
{
	struct e2cb_entry *e = &IS_OF(b)->e;
	__u8 blob[EXT4_CRYPT_BLOB_MAX];
	const __u8 *dctx;
	size_t len, dctx_len;
	__u32 mode;
	int is_dir;
	errcode_t retval;

	retval = ext2fs_encode_filename_blob(name, LINUX_S_ISDIR(e->rec.mode),
					     e->rec.mode, ctx, ctx_len, blob,
					     sizeof(blob), &len);
	if (!retval)
		retval = ext2fs_decode_filename_blob(blob, len, &e->name,
						     &is_dir, &mode, &dctx,
						     &dctx_len);
	if (retval)
		return retval;
	e->rec.rflags |= E2CB_IF_NAME;
	if (name->has_hash) {
		e->rec.rflags |= E2CB_IF_DIRENT_HASH;
		e->rec.dirent_hash = name->hash;
		e->rec.dirent_minor_hash = name->minor_hash;
	}
	return 0;
}

/* @rec has room for its seal; the walk frees it before the entry goes */
static void ie_add_xattrs(struct backup *b, uint8_t *rec, size_t len)
{
	struct image_source *is = IS_OF(b);

	e2cb_seal(rec, len);
	if (e2cb_grow((void **) &is->xattrs, &is->xattrs_size, len + 3, 1)) {
		is->nomem = 1;		/* ie_send() fails the walk */
		return;
	}
	memcpy(is->xattrs, rec, len + 4);
	is->e.xattrs = is->xattrs;
	is->e.xattrs_len = len + 4;
	is->e.rec.rflags |= E2CB_IF_XATTRS;
}

/* Plaintext as tar's symlink text, ciphertext raw */
static errcode_t ie_add_symlink(struct backup *b, uint8_t *target,
				size_t len, int encrypted)
{
	struct image_source *is = IS_OF(b);

	if (len > EXT2_MAX_BLOCK_SIZE)
		return EXT2_ET_INODE_CORRUPTED;
	memcpy(is->symlink, target, len);
	is->symlink[len] = 0;
	if (!encrypted) {
		is->e.linkname = (const char *) is->symlink;
		return 0;
	}
	is->e.symlink = is->symlink;
	is->e.symlink_len = len;
	is->e.rec.rflags |= E2CB_IF_SYMLINK;
	return 0;
}

static char *ie_data_buf(struct backup *b,
			 uint64_t len EXT2FS_ATTR((unused)))
{
	return IS_OF(b)->iobuf;
}

static void ie_set_stretches(struct backup *b, uint64_t tar_size,
			     const struct e2cb_stretch *st, size_t count)
{
	struct image_source *is = IS_OF(b);

	is->e.tar_size = tar_size;
	is->st = st;
	is->count = count;
}

static void ie_set_inline(struct backup *b, const char *data, size_t len)
{
	struct image_source *is = IS_OF(b);

	is->e.rec.rflags |= E2CB_IF_INLINE;
	is->e.tar_size = is->e.rec.size;
	is->inline_data = data;
	is->inline_len = len;
}

static void hash_bytes(EVP_MD_CTX *c, const void *p, size_t len)
{
	uint8_t n[8];
	int i;

	for (i = 0; i < 8; i++)
		n[i] = (uint64_t) len >> (8 * i);
	EVP_DigestUpdate(c, n, 8);
	if (len)
		EVP_DigestUpdate(c, p, len);
}

/* SHA-256 of the records, cut to E2CB_ENTRY_DIGEST_LEN */
static void digest_entry(struct image_source *is)
{
	const struct e2cb_entry *e = &is->e;
	uint8_t rec[E2CB_INODE_REC_SIZE], md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;
	EVP_MD_CTX *c = is->md;
	size_t i;

	if (!EVP_DigestInit_ex(c, EVP_sha256(), NULL)) {
		is->md_failed = 1;
		return;
	}
	hash_bytes(c, e->path, strlen(e->path));
	hash_bytes(c, e->linkname, e->linkname ? strlen(e->linkname) : 0);
	hash_bytes(c, rec, e2cb_encode_inode(&e->rec, rec));
	hash_bytes(c, e->ctx, e->ctx_len);
	hash_bytes(c, &e->name, sizeof(e->name));
	hash_bytes(c, e->xattrs, e->xattrs_len);
	hash_bytes(c, e->symlink, e->symlink_len);
	hash_bytes(c, &e->tar_size, sizeof(e->tar_size));
	for (i = 0; i < is->count; i++)
		hash_bytes(c, &is->st[i], 2 * sizeof(uint64_t));
	if (!EVP_DigestFinal_ex(c, md, &mdlen))
		is->md_failed = 1;
	memcpy(is->digest, md, sizeof(is->digest));
	EVP_DigestUpdate(is->stream, is->digest, sizeof(is->digest));
}

/* The entry goes to the sink, which takes its data (is_data()) */
static errcode_t ie_send(struct backup *b, const struct region_list *rl)
{
	struct image_source *is = IS_OF(b);

	if (is->nomem)
		return EXT2_ET_NO_MEMORY;
	is->e.index = is->e.rec.seq = ++is->sent;
	if (!is->no_digests)
		digest_entry(is);
	is->rl = rl;
	is->status = is->sink->entry(is->sink->priv, &is->s, &is->e);
	is->rl = NULL;
	return is->status ? EXT2_ET_CANCEL_REQUESTED : 0;
}

static errcode_t ie_header(struct backup *b EXT2FS_ATTR((unused)),
			   const struct e2cb_header *h EXT2FS_ATTR((unused)))
{
	return 0;
}

static errcode_t ie_trailer(struct backup *b EXT2FS_ATTR((unused)),
			    const struct e2cb_trailer *t EXT2FS_ATTR((unused)))
{
	return 0;
}

/* In what the walk reports: the sink's name for the path */
static const char *ie_shown(struct backup *b)
{
	const struct e2cb_sink *k = IS_OF(b)->sink;

	if (!k || !k->shown)
		return entry_path(b);
	return k->shown(k->priv, entry_path(b));
}

static const struct e2cb_walk_ops entry_ops = {
	.header = ie_header,
	.begin = ie_begin,
	.hardlink = ie_hardlink,
	.add_context = ie_add_context,
	.add_name = ie_add_name,
	.add_xattrs = ie_add_xattrs,
	.add_symlink = ie_add_symlink,
	.data_buf = ie_data_buf,
	.set_stretches = ie_set_stretches,
	.set_inline = ie_set_inline,
	.send = ie_send,
	.data = NULL,		/* the sink took it during send */
	.trailer = ie_trailer,
	.shown = ie_shown,
};

struct data_pass {
	const struct e2cb_entry *e;
	e2cb_data_func func;
	void *priv;
};

static errcode_t reread_proc(void *priv, uint64_t off, const void *buf,
			     size_t len)
{
	struct data_pass *dp = priv;

	return dp->func(dp->e, off, buf, len, dp->priv);
}

/*
 * The data of the entry being sent: inline, or its stretches, kept
 * since the walk read them, or read (again) a buffer at a time; for
 * a sink that reads the data itself, what cannot be read is named
 * and fails it.
 */
static errcode_t is_data(struct e2cb_source *src, e2cb_data_func func,
			 void *priv)
{
	struct image_source *is = IS(src);
	const struct e2cb_entry *e = &is->e;
	unsigned int bs = is->b.fs->blocksize;
	struct data_pass dp = { e, func, priv };
	errcode_t retval;
	uint64_t pos = 0;
	size_t i;

	if (!LINUX_S_ISREG(e->rec.mode) || (e->rec.rflags & E2CB_IF_HARDLINK))
		return 0;
	if (e->rec.rflags & E2CB_IF_INLINE)
		return is->inline_len ? func(e, 0, is->inline_data,
					     is->inline_len, priv) : 0;
	if (!is->b.preread)
		return is->rl ? e2cb_backup_read_data(&is->b, is->rl,
						      reread_proc, &dp) : 0;
	for (i = 0; i < is->count; i++) {
		if (!is->st[i].len)
			continue;
		retval = func(e, is->st[i].off, is->iobuf + pos,
			      is->st[i].len, priv);
		if (retval)
			return retval;
		pos += (is->st[i].len + bs - 1) / bs * bs;
	}
	return 0;
}

/*
 * Where the stored blocks of the entry being sent are on the device,
 * for the sink's threads to read: the walk has read them all
 * (preread_data()), so none is unreadable a moment ago, or the sink
 * reads them first and says what it cannot (E2CB_SINK_READS_DATA).
 * Blocks the journal's replay changed are in memory only: those go
 * through is_data().
 */
static errcode_t is_data_map(struct e2cb_source *src,
			     const struct e2cb_stretch **map, size_t *count,
			     int *fd)
{
	struct image_source *is = IS(src);
	const struct e2cb_entry *e = &is->e;
	unsigned int bs = is->b.fs->blocksize;
	const struct e2cb_stretch *r;
	size_t i;

	if (is->fd < 0 || !is->rl || !LINUX_S_ISREG(e->rec.mode) ||
	    (e->rec.rflags & (E2CB_IF_HARDLINK | E2CB_IF_INLINE)))
		return EXT2_ET_UNIMPLEMENTED;
	for (i = 0; i < is->rl->count; i++) {
		r = &is->rl->r[i];
		if (ext2fs_replay_io_changed(is->b.fs->io, r->pos / bs,
					     (r->len + bs - 1) / bs))
			return EXT2_ET_UNIMPLEMENTED;
	}
	*map = is->rl->r;
	*count = is->rl->count;
	*fd = is->fd;
	return 0;
}

/* Each pass walks from the root; the header's digest comes first */
static errcode_t is_rewind(struct e2cb_source *src)
{
	struct image_source *is = IS(src);
	uint8_t h[E2CB_HEADER_FIXED + sizeof(is->hdr.source_path)];
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;

	if (!EVP_DigestInit_ex(is->stream, EVP_sha256(), NULL) ||
	    !EVP_Digest(h, e2cb_encode_header(&is->hdr, h, sizeof(h)), md,
			&mdlen, EVP_sha256(), NULL))
		return EXT2_ET_NO_MEMORY;
	memcpy(is->digest, md, sizeof(is->digest));
	EVP_DigestUpdate(is->stream, is->digest, sizeof(is->digest));
	is->md_failed = 0;
	return 0;
}

static const uint8_t *is_entry_digest(struct e2cb_source *src)
{
	return IS(src)->no_digests ? NULL : IS(src)->digest;
}

/* Of the records handed out in the pass (not of the data) */
static errcode_t is_stream_digest(struct e2cb_source *src,
				  uint8_t out[E2CB_STREAM_DIGEST_LEN])
{
	struct image_source *is = IS(src);
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;

	if (is->no_digests)
		return EXT2_ET_UNIMPLEMENTED;
	if (is->md_failed || !EVP_DigestFinal_ex(is->stream, md, &mdlen))
		return EXT2_ET_NO_MEMORY;
	memcpy(out, md, E2CB_STREAM_DIGEST_LEN);
	return 0;
}

static int is_run(struct e2cb_source *src, const struct e2cb_sink *k)
{
	struct image_source *is = IS(src);
	errcode_t retval;

	is->sink = k;
	is->status = 0;
	is->sent = 0;
	is->b.sink_reads = !!(k->flags & E2CB_SINK_READS_DATA);
	/* a SHA-256 an entry: a tenth of extract -O of many small files */
	is->no_digests = !!(k->flags & E2CB_SINK_ONE_PASS);
	retval = e2cb_backup_pass(&is->b);
	is->sink = NULL;
	if (retval == EXT2_ET_CANCEL_REQUESTED && is->status)
		return is->status;
	if (retval) {
		snprintf(is->err, sizeof(is->err), "%s",
			 error_message(retval));
		return E2CB_SOURCE_FAILED;
	}
	e2cb_backup_counts(&is->b, &is->trailer);
	return 0;
}

static const struct e2cb_header *is_header(struct e2cb_source *src)
{
	return &IS(src)->hdr;
}

static const struct e2cb_trailer *is_trailer(struct e2cb_source *src)
{
	return &IS(src)->trailer;
}

static const char *is_error(struct e2cb_source *src)
{
	return IS(src)->err;
}

static void is_close(struct e2cb_source *src)
{
	struct image_source *is = IS(src);

	e2cb_backup_free(&is->b);
	EVP_MD_CTX_free(is->md);
	EVP_MD_CTX_free(is->stream);
	free(is->xattrs);
	free(is->iobuf);
	if (is->fd >= 0)
		close(is->fd);
	free(is);
}

/*
 * Each name of a file as a whole entry, with its data, rather than the
 * later ones as hard links to the first: for a sink that may take any
 * one name alone (extract's PATHs, -O).  Before a pass.
 */
void e2cb_image_source_every_name(struct e2cb_source *src)
{
	IS(src)->b.every_name = 1;
}

ext2_filsys e2cb_image_source_fs(struct e2cb_source *src)
{
	return IS(src)->b.fs;
}

static const struct e2cb_source_ops image_source_ops = {
	.rewind = is_rewind,
	.run = is_run,
	.data = is_data,
	.data_map = is_data_map,
	.header = is_header,
	.trailer = is_trailer,
	.entry_digest = is_entry_digest,
	.stream_digest = is_stream_digest,
	.error = is_error,
	.close = is_close,
};

/*
 * The unmounted filesystem on @device, from @path on, as backup would
 * archive it; its journal is replayed in memory unless @stale.  Says
 * why on failure.
 */
errcode_t e2cb_image_source_open(const char *device, const char *path,
				 int stale, struct e2cb_source **ret)
{
	struct image_source *is;
	errcode_t retval;

	*ret = NULL;
	is = calloc(1, sizeof(*is));
	if (!is)
		return EXT2_ET_NO_MEMORY;
	is->s.ops = &image_source_ops;
	is->s.shown = device;
	is->fd = -1;
	is->b.ops = &entry_ops;
	e2cb_ino_map_init_paths(&is->b.links);
	is->iobuf = malloc(IOBUF_SIZE);
	is->md = EVP_MD_CTX_new();
	is->stream = EVP_MD_CTX_new();
	if (!is->iobuf || !is->md || !is->stream) {
		retval = EXT2_ET_NO_MEMORY;
		goto errout;
	}
	retval = e2cb_open_source(device, stale, &is->b.replay, &is->b.fs);
	if (retval)
		goto errout;
	/* for is_data_map(); without it, the data goes through is_data() */
	is->fd = open(device, O_RDONLY | O_CLOEXEC);
	retval = e2cb_backup_start(&is->b, path, &is->hdr);
	if (retval)
		goto errout;
	snprintf(is->hdr.tool_version, sizeof(is->hdr.tool_version), "%s",
		 E2CRYPTBAK_VERSION);
	*ret = &is->s;
	return 0;
errout:
	is_close(&is->s);
	return retval;
}
