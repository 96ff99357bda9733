/*
 * source_walk.c --- e2cryptbak's image and mounted sources: the
 * entries of a walk (walk.h) of an unmounted ext4 filesystem or of a
 * mounted one, without the key (source.h)
 *
 * The walks are backup's (backup.c, source_online*.c): the same entries
 * in the same order, with the same records, made into struct e2cb_entry
 * here instead of an archive.  The records go through the archive's
 * encodings and back (the 'e5' and 'ef'/'ed' blobs, the sealed xattr
 * record), so that a sink sees what it would see in backup's archive.
 * The data is read from the filesystem when the sink asks for it.
 * What the walk cannot archive is reported and skipped, as backup
 * does, and counted in the trailer.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <openssl/evp.h>
#include <et/com_err.h>
#include "walk.h"
#include "source.h"

struct walk_source {
	struct e2cb_source s;		/* first */
	struct e2cb_walk *wk;
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
	int sending;			/* the entry is the sink's */
	char *iobuf;			/* E2CB_WRITER_BUF: preread data */
	/* what ties a second pass to the first: the records' digests */
	EVP_MD_CTX *md, *stream;
	uint8_t digest[E2CB_ENTRY_DIGEST_LEN];	/* the header's, then the
						 * entry's */
	int md_failed;
	int no_digests;			/* E2CB_SINK_ONE_PASS */
};

#define IS(src)		((struct walk_source *) (src))
#define IS_OF(wk)	((struct walk_source *) (wk)->end)

static errcode_t ie_begin(struct e2cb_walk *wk, const char *path,
			  const struct e2cb_inode_rec *r,
			  uint64_t need EXT2FS_ATTR((unused)))
{
	struct walk_source *is = IS_OF(wk);
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

static void ie_hardlink(struct e2cb_walk *wk, const char *first)
{
	struct e2cb_entry *e = &IS_OF(wk)->e;

	e->rec.rflags |= E2CB_IF_HARDLINK;
	e->linkname = first;
}

/* Through the 'e5' blob, as the reader would have it */
static errcode_t ie_add_context(struct e2cb_walk *wk, const void *ctx,
				size_t ctx_len)
{
	struct walk_source *is = IS_OF(wk);
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
static errcode_t ie_add_name(struct e2cb_walk *wk,
			     const struct ext4_encrypted_name *name,
			     const void *ctx, size_t ctx_len)
{
	struct e2cb_entry *e = &IS_OF(wk)->e;
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
	e2cb_inode_rec_name(&e->rec, name);
	return 0;
}

/* @rec has room for its seal; the walk frees it before the entry goes */
static void ie_add_xattrs(struct e2cb_walk *wk, uint8_t *rec, size_t len)
{
	struct walk_source *is = IS_OF(wk);

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
static errcode_t ie_add_symlink(struct e2cb_walk *wk, uint8_t *target,
				size_t len, int encrypted)
{
	struct walk_source *is = IS_OF(wk);

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

static char *ie_data_buf(struct e2cb_walk *wk,
			 uint64_t len EXT2FS_ATTR((unused)))
{
	return IS_OF(wk)->iobuf;
}

static void ie_set_stretches(struct e2cb_walk *wk, uint64_t tar_size,
			     const struct e2cb_stretch *st, size_t count)
{
	struct walk_source *is = IS_OF(wk);

	is->e.tar_size = tar_size;
	is->st = st;
	is->count = count;
}

static void ie_set_inline(struct e2cb_walk *wk, const char *data, size_t len)
{
	struct walk_source *is = IS_OF(wk);

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
static void digest_entry(struct walk_source *is)
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
static errcode_t ie_send(struct e2cb_walk *wk)
{
	struct walk_source *is = IS_OF(wk);

	if (is->nomem)
		return EXT2_ET_NO_MEMORY;
	is->e.index = is->e.rec.seq = ++is->sent;
	if (!is->no_digests)
		digest_entry(is);
	is->sending = 1;
	is->status = is->sink->entry(is->sink->priv, &is->s, &is->e);
	is->sending = 0;
	return is->status ? EXT2_ET_CANCEL_REQUESTED : 0;
}

/* In what the walk reports: the sink's name for the path */
static const char *ie_shown(struct e2cb_walk *wk, const char *path)
{
	const struct e2cb_sink *k = IS_OF(wk)->sink;

	if (!k || !k->shown)
		return path;
	return k->shown(k->priv, path);
}

static const struct e2cb_walk_ops entry_ops = {
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
	struct walk_source *is = IS(src);
	const struct e2cb_entry *e = &is->e;
	unsigned int bs = is->wk->block_size;
	struct data_pass dp = { e, func, priv };
	errcode_t retval;
	uint64_t pos = 0;
	size_t i;

	if (!LINUX_S_ISREG(e->rec.mode) || (e->rec.rflags & E2CB_IF_HARDLINK))
		return 0;
	if (e->rec.rflags & E2CB_IF_INLINE)
		return is->inline_len ? func(e, 0, is->inline_data,
					     is->inline_len, priv) : 0;
	if (!is->wk->preread)
		return is->sending ? is->wk->kind->read_data(is->wk,
							     reread_proc,
							     &dp) : 0;
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
 * Where the stored blocks of the entry being sent lie, for the sink's
 * threads to read: the walk's to say (the image's, of its device),
 * while the sink holds the entry.
 */
static errcode_t is_data_map(struct e2cb_source *src,
			     const struct e2cb_stretch **map, size_t *count,
			     int *fd)
{
	struct walk_source *is = IS(src);
	const struct e2cb_entry *e = &is->e;

	if (!is->sending || !is->wk->kind->data_map ||
	    !LINUX_S_ISREG(e->rec.mode) ||
	    (e->rec.rflags & (E2CB_IF_HARDLINK | E2CB_IF_INLINE)))
		return EXT2_ET_UNIMPLEMENTED;
	return is->wk->kind->data_map(is->wk, map, count, fd);
}

/* Each pass walks from the root; the header's digest comes first */
static errcode_t is_rewind(struct e2cb_source *src)
{
	struct walk_source *is = IS(src);
	uint8_t h[E2CB_HEADER_FIXED + sizeof(is->wk->hdr.source_path)];
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;

	if (!EVP_DigestInit_ex(is->stream, EVP_sha256(), NULL) ||
	    !EVP_Digest(h, e2cb_encode_header(&is->wk->hdr, h, sizeof(h)), md,
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
	struct walk_source *is = IS(src);
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
	struct walk_source *is = IS(src);
	errcode_t retval;

	is->sink = k;
	is->status = 0;
	is->sent = 0;
	is->wk->sink_reads = !!(k->flags & E2CB_SINK_READS_DATA);
	/* a SHA-256 an entry: a tenth of extract -O of many small files */
	is->no_digests = !!(k->flags & E2CB_SINK_ONE_PASS);
	retval = e2cb_walk_pass(is->wk);
	is->sink = NULL;
	if (retval == EXT2_ET_CANCEL_REQUESTED && is->status)
		return is->status;
	if (retval) {
		snprintf(is->err, sizeof(is->err), "%s",
			 error_message(retval));
		return E2CB_SOURCE_FAILED;
	}
	e2cb_walk_counts(is->wk, &is->trailer);
	return 0;
}

static const struct e2cb_header *is_header(struct e2cb_source *src)
{
	return &IS(src)->wk->hdr;
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
	struct walk_source *is = IS(src);

	e2cb_walk_close(is->wk);
	EVP_MD_CTX_free(is->md);
	EVP_MD_CTX_free(is->stream);
	free(is->xattrs);
	free(is->iobuf);
	free(is);
}

/*
 * Each name of a file as a whole entry, with its data, rather than the
 * later ones as hard links to the first: for a sink that may take any
 * one name alone (extract's PATHs, -O).  Before a pass.
 */
void e2cb_image_source_every_name(struct e2cb_source *src)
{
	IS(src)->wk->every_name = 1;
}

ext2_filsys e2cb_image_source_fs(struct e2cb_source *src)
{
	return e2cb_image_walk_fs(IS(src)->wk);
}

static const struct e2cb_source_ops walk_source_ops = {
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

/* The entries of the walk @wk, which the source closes; NULL: fails */
static errcode_t walk_source_open(struct e2cb_walk *wk, const char *shown,
				  struct e2cb_source **ret)
{
	struct walk_source *is;

	*ret = NULL;
	if (!wk)
		return EXT2_ET_NO_MEMORY;
	is = calloc(1, sizeof(*is));
	if (!is) {
		e2cb_walk_close(wk);
		return EXT2_ET_NO_MEMORY;
	}
	is->s.ops = &walk_source_ops;
	is->s.shown = shown;
	is->wk = wk;
	wk->ops = &entry_ops;
	wk->end = is;
	is->iobuf = malloc(E2CB_WRITER_BUF);
	is->md = EVP_MD_CTX_new();
	is->stream = EVP_MD_CTX_new();
	if (!is->iobuf || !is->md || !is->stream) {
		is_close(&is->s);
		return EXT2_ET_NO_MEMORY;
	}
	snprintf(wk->hdr.tool_version, sizeof(wk->hdr.tool_version), "%s",
		 E2CRYPTBAK_VERSION);
	*ret = &is->s;
	return 0;
}

/*
 * The unmounted filesystem on @device, from @path on, as backup would
 * archive it; its journal is replayed in memory unless @stale.  Says
 * why on failure.
 */
errcode_t e2cb_image_source_open(const char *device, const char *path,
				 int stale, struct e2cb_source **ret)
{
	struct e2cb_walk *wk;
	errcode_t retval;

	*ret = NULL;
	retval = e2cb_image_walk_open(device, path, stale, 0, &wk);
	if (retval)
		return retval;
	/* for is_data_map(); without it, the data goes through is_data() */
	e2cb_image_walk_map_data(wk, device);
	return walk_source_open(wk, device, ret);
}

/*
 * The mounted filesystem's directory @dir, as backup --online would
 * archive it.  Says why on failure.
 */
errcode_t e2cb_online_source_open(const char *dir, struct e2cb_source **ret)
{
	struct e2cb_walk *wk;
	errcode_t retval;

	*ret = NULL;
	retval = e2cb_online_walk_open(dir, &wk);
	if (retval)
		return retval;
	return walk_source_open(wk, dir, ret);
}
