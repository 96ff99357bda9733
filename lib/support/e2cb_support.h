/*
 * e2cb_support.h --- e2cryptbak's shared helpers (lib/support)
 *
 * What every source and sink of e2cryptbak needs and none owns: the
 * inode map, the path buffer, growable arrays, base64url, full reads
 * and writes, the escaping of paths shown, little-endian fields and the
 * names of the fscrypt modes.
 * Each has a file of its own here and a tst_ program.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_SUPPORT_H
#define E2CB_SUPPORT_H

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "e2cb_le.h"

/*
 * splitmix64's finalizer, for the slots of hash tables whose keys may be
 * sequential, or (in a forged archive) chosen to collide in a table of a
 * power-of-two size
 */
static inline uint64_t e2cb_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * The order of two names of one directory (raw bytes, no string
 * function: a ciphertext name may hold NULs): by their bytes, the
 * shorter first.  Backup and backup --online write the names of one
 * inode in this order, which no directory layout decides.
 */
static inline int e2cb_name_cmp(const void *a, size_t alen,
				const void *b, size_t blen)
{
	int r = memcmp(a, b, alen < blen ? alen : blen);

	if (r)
		return r;
	return alen < blen ? -1 : alen > blen;
}

/* ino_map.c: inode number (never 0) -> a value of fixed size */
struct e2cb_ino_map {
	uint32_t *ino;			/* 0: a free slot */
	uint8_t *val;			/* size slots of val_size bytes */
	size_t val_size;
	size_t count, size;
	int paths;			/* values are char *, ours to free */
};

extern void e2cb_ino_map_init(struct e2cb_ino_map *m, size_t val_size);
extern void e2cb_ino_map_init_paths(struct e2cb_ino_map *m);
extern void *e2cb_ino_map_find(const struct e2cb_ino_map *m, uint32_t ino);
extern errcode_t e2cb_ino_map_add(struct e2cb_ino_map *m, uint32_t ino,
				  void **ret);
extern errcode_t e2cb_ino_map_add_path(struct e2cb_ino_map *m, uint32_t ino,
				       const char *path, size_t len);
extern const char *e2cb_ino_map_path(const struct e2cb_ino_map *m,
				     uint32_t ino);
extern void *e2cb_ino_map_next(const struct e2cb_ino_map *m, size_t *pos,
			       uint32_t *ino);
extern void e2cb_ino_map_free(struct e2cb_ino_map *m);

/* path_buf.c: a path built a component at a time, cut back to a length */
struct e2cb_path_buf {
	char *s;			/* NUL terminated; NULL while empty */
	size_t len, size;
};

extern errcode_t e2cb_path_push(struct e2cb_path_buf *p, const void *comp,
				size_t len);
extern void e2cb_path_cut(struct e2cb_path_buf *p, size_t len);
extern errcode_t e2cb_path_set(struct e2cb_path_buf *p, const void *s,
			       size_t len);
extern void e2cb_path_free(struct e2cb_path_buf *p);

/* grow.c: room in *@arr (of *@size elements) for @need, or element @count */
extern int e2cb_grow_to(void **arr, size_t *size, size_t need, size_t elem);
extern int e2cb_grow(void **arr, size_t *size, size_t count, size_t elem);

/* b64url.c: base64url (RFC 4648 section 5) without padding */
extern size_t e2cb_b64url_encode(const uint8_t *in, size_t len, char *out);
extern int e2cb_b64url_decode(const char *in, size_t len, uint8_t *out,
			      size_t outsize, size_t *outlen);
#define E2CB_B64_LEN(n)	(((n) * 4 + 2) / 3)

/* io_all.c: all of a write or read, or an errno (or EXT2_ET_SHORT_*) */
extern errcode_t e2cb_write_all(int fd, const void *buf, size_t len,
				int64_t off);
extern errcode_t e2cb_pread_all(int fd, void *buf, size_t len, uint64_t pos);
extern DIR *e2cb_dir_stream(int dfd);

/* escape.c: a path as every command shows it, control bytes as \xHH */
extern void e2cb_put_path(FILE *f, const void *s, size_t len);
#define E2CB_ESCAPED_MAX(n)	(4 * (n) + 1)
extern size_t e2cb_escape(char *out, const void *s, size_t len);


#endif /* E2CB_SUPPORT_H */
