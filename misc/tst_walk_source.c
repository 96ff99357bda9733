/*
 * tst_walk_source.c --- the entries of an image or a mounted
 * filesystem as a source (source_walk.c), one line each, for the tests
 *
 * Usage: tst_walk_source image DEVICE [PATH]
 *        tst_walk_source online MOUNTED_DIR
 *
 * Runs the source twice, as restore does.  For each entry of the first
 * pass it prints its path, its inode record but the sequence number
 * and the generation (0 online for what cannot be opened without its
 * key), i_size, its records in hex (context, raw name and hash, xattrs,
 * encrypted symlink target), its link and tar size, and a SHA-256 of
 * its data, holes as zeros; then the trailer's counts, and whether the
 * second pass handed out the same stream (its digest).  k_online_backup
 * holds the mounted source's lines against the image's.  Exits 0 when
 * both passes ran and agree, 1 otherwise.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <et/com_err.h>
#include "e2cryptbak.h"
#include "source.h"

const char *program_name = "tst_walk_source";

struct digest {
	EVP_MD_CTX *md;
	uint64_t pos;
};

static void hex(const char *tag, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	printf(" %s=", tag);
	for (i = 0; i < len; i++)
		printf("%02x", b[i]);
}

static errcode_t data_proc(const struct e2cb_entry *e EXT2FS_ATTR((unused)),
			   uint64_t off, const void *buf, size_t len,
			   void *priv)
{
	static const uint8_t zero[4096];
	struct digest *d = priv;
	uint64_t n;

	if (off < d->pos)
		return EXT2_ET_INVALID_ARGUMENT;
	for (; d->pos < off; d->pos += n) {
		n = off - d->pos > sizeof(zero) ? sizeof(zero) : off - d->pos;
		EVP_DigestUpdate(d->md, zero, n);
	}
	EVP_DigestUpdate(d->md, buf, len);
	d->pos += len;
	return 0;
}

static int print_entry(void *priv EXT2FS_ATTR((unused)),
		       struct e2cb_source *src, const struct e2cb_entry *e)
{
	const struct e2cb_inode_rec *r = &e->rec;
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	struct digest d = { EVP_MD_CTX_new(), 0 };
	errcode_t retval;

	printf("%s ino=%u mode=%o uid=%u gid=%u links=%u size=%llu "
	       "iflags=%x projid=%u rdev=%u,%u", e->path, r->ino, r->mode,
	       r->uid, r->gid, r->links_count, (unsigned long long) r->size,
	       r->iflags, r->projid, r->rdev_major, r->rdev_minor);
	printf(" times=%lld.%u,%lld.%u,%lld.%u,%lld.%u rflags=%x "
	       "hash=%x,%x i_size=%llu", (long long) r->atime.sec,
	       r->atime.nsec, (long long) r->mtime.sec, r->mtime.nsec,
	       (long long) r->ctime.sec, r->ctime.nsec,
	       (long long) r->crtime.sec, r->crtime.nsec, r->rflags,
	       r->dirent_hash, r->dirent_minor_hash,
	       (unsigned long long) e->i_size);
	hex("ctx", e->ctx, e->ctx_len);
	hex("name", e->name.name, e->name.name_len);
	hex("xattrs", e->xattrs, e->xattrs_len);
	hex("symlink", e->symlink, e->symlink_len);
	printf(" link=%s tar_size=%llu", e->linkname ? e->linkname : "-",
	       (unsigned long long) e->tar_size);
	if (!d.md || !EVP_DigestInit_ex(d.md, EVP_sha256(), NULL))
		return 1;
	retval = e2cb_source_data(src, data_proc, &d);
	EVP_DigestFinal_ex(d.md, md, &mdlen);
	EVP_MD_CTX_free(d.md);
	if (retval) {
		com_err(program_name, retval, "while reading the data of %s",
			e->path);
		return 1;
	}
	hex("data", md, mdlen);
	printf("\n");
	return 0;
}

static int count_entry(void *priv,
		       struct e2cb_source *src EXT2FS_ATTR((unused)),
		       const struct e2cb_entry *e EXT2FS_ATTR((unused)))
{
	(*(uint64_t *) priv)++;
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t first[E2CB_STREAM_DIGEST_LEN], second[E2CB_STREAM_DIGEST_LEN];
	struct e2cb_sink printer = { .entry = print_entry };
	struct e2cb_sink counter = { .entry = count_entry };
	const struct e2cb_trailer *t;
	struct e2cb_source *src;
	uint64_t again = 0;
	errcode_t retval;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "online"))
		retval = e2cb_online_source_open(argv[2], &src);
	else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "image"))
		retval = e2cb_image_source_open(argv[2], argc == 4 ? argv[3] :
						"/", 0, &src);
	else {
		fprintf(stderr, "Usage: %s image DEVICE [PATH] | online "
			"MOUNTED_DIR\n", program_name);
		return 2;
	}
	if (retval) {
		com_err(program_name, retval, "while opening %s", argv[2]);
		return 1;
	}
	counter.priv = &again;
	if (e2cb_source_rewind(src) ||
	    (ret = e2cb_source_run(src, &printer)) != 0 ||
	    e2cb_source_stream_digest(src, first) ||
	    e2cb_source_rewind(src) ||
	    (ret = e2cb_source_run(src, &counter)) != 0 ||
	    e2cb_source_stream_digest(src, second)) {
		com_err(program_name, 0, "a pass failed: %s",
			e2cb_source_error(src));
		e2cb_source_close(src);
		return 1;
	}
	t = src->ops->trailer(src);
	printf("trailer: entries=%llu inodes=%llu encrypted=%llu "
	       "data_bytes=%llu skipped=%llu\n",
	       (unsigned long long) t->entries,
	       (unsigned long long) t->inodes,
	       (unsigned long long) t->encrypted,
	       (unsigned long long) t->data_bytes,
	       (unsigned long long) t->skipped);
	ret = memcmp(first, second, sizeof(first)) != 0;
	com_err(program_name, 0, "second pass: %llu entries, %s stream "
		"digest", (unsigned long long) again,
		ret ? "ANOTHER" : "the same");
	e2cb_source_close(src);
	return ret;
}
