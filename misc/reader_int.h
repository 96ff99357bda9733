/*
 * reader_int.h --- the archive reader's state, shared by its files
 *
 * reader.c reads the stream (the descriptor, the decompressor, the tar
 * reader, each entry's data and the sums of it); reader_check.c checks
 * what each entry's records say; reader_digest.c makes the digests of
 * E2CB_READ_HASH.  Nothing else sees this.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_READER_INT_H
#define E2CB_READER_INT_H

#include <sys/types.h>
#include <openssl/evp.h>
#include "e2cryptbak.h"

struct e2cb_reader {
	struct archive *a;
	struct archive_entry *ae;
	struct archive *dec;		/* the decompressor, if compressed */
	int flags;
	int fd;				/* the archive's */
	int own_fd;
	mode_t fd_mode;
	int64_t fd_start;		/* where in fd the archive begins */
	int plain_file;			/* fd: a regular file, not compressed */
	int in_entry;			/* libarchive is at an entry's data */
	/* what the decompressor's sniffing read, given again to the tar
	 * reader when the archive turns out not to be compressed */
	char *replay;
	size_t replay_len, replay_off, replay_size;
	int recording;
	struct e2cb_tarscan scan;	/* what libarchive is handed */
	struct e2cb_stretch *map;	/* the current entry's data in fd */
	size_t map_len, map_size;
	/* data_map() handed out the map: how far its sums came back */
	int map_open, map_bad;
	size_t map_at;			/* the stretch, */
	uint64_t map_in;		/* and the bytes of it summed */
	struct e2cb_header hdr;
	struct e2cb_trailer trailer;
	struct e2cb_entry cur;
	struct e2cb_data_sum sum;	/* of the current entry's data */
	int data_done;			/* current entry's data consumed */
	uint32_t next_seq;
	uint64_t entries, inodes, encrypted, data_bytes;
	struct e2cb_path_buf path;	/* the current entry's */
	/*
	 * The directories enclosing the entry: each is a prefix of the
	 * deepest one's path, so that path and their lengths are all that
	 * is kept (a copy of each would grow with the square of the depth).
	 */
	struct e2cb_path_buf dir_path;	/* the deepest; "" for the root */
	size_t *dir_len;		/* each one's length in dir_path */
	size_t ndirs, dirs_size;
	uint64_t prev_index;		/* the entry before the current one */
	char *prev_path;
	/*
	 * Inodes a hard link may name, with the digest of the path their
	 * data was archived at: a path may be a megabyte long, and a
	 * forged archive can give every entry such a path and several
	 * names.
	 */
	struct e2cb_ino_map linked;
	/* E2CB_READ_HASH: the digests being made (reader_digest.c) */
	struct e2cb_reader_digests *dg;
	int stream_failed;
	char *hash_buf;			/* E2CB_HASH_BUF_SIZE bytes */
	uint8_t digest[E2CB_ENTRY_DIGEST_LEN];
	/* version 2: the last records entry's data (reader_records.c) */
	uint8_t *blk;
	size_t blk_size;
	size_t blk_pos;			/* the next group */
	uint32_t blk_left;		/* groups not taken yet */
	const uint8_t *grp;		/* the current entry's items, or NULL */
	size_t grp_len;
	char err[1024];
};

#define E2CB_LINK_MD_LEN	16	/* of the path a hard link names */
#define E2CB_HASH_BUF_SIZE	65536

/* reader.c: the message of damage in the entry being read, or the one
 * before it (where damage that shows only at the next entry lies) */
extern int e2cb_reader_damage(struct e2cb_reader *r, const char *fmt, ...)
	EXT2FS_ATTR((format(printf, 2, 3)));
extern int e2cb_reader_damage_prev(struct e2cb_reader *r, const char *fmt,
				   ...)
	EXT2FS_ATTR((format(printf, 2, 3)));

/* reader_digest.c */
extern errcode_t e2cb_reader_hash_start(struct e2cb_reader *r);
extern void e2cb_reader_hash_free(struct e2cb_reader *r);
extern int e2cb_reader_digest_entry(struct e2cb_reader *r);
extern int e2cb_reader_digest_records(struct e2cb_reader *r,
				      const void *buf, size_t len);
extern int e2cb_reader_digest_group(struct e2cb_reader *r,
				    const void *buf, size_t len);

/* reader_records.c: version 2's records entries */
extern int e2cb_reader_records_entry(struct e2cb_reader *r);
extern int e2cb_reader_take_group(struct e2cb_reader *r);
extern const void *e2cb_reader_group_rec(struct e2cb_reader *r,
					 const char *name, size_t *len);
extern void e2cb_reader_records_free(struct e2cb_reader *r);

/* reader_check.c: each returns 0, or -1 with the damage in r->err */
extern void e2cb_reader_checks_init(struct e2cb_reader *r);
extern void e2cb_reader_checks_free(struct e2cb_reader *r);
extern int e2cb_reader_check_header(struct e2cb_reader *r);
extern const void *e2cb_reader_has_rec(struct e2cb_reader *r,
				       const char *name, size_t *len,
				       int *dup);
extern int e2cb_reader_same_version(struct e2cb_reader *r, const void *rec,
				    const char *what);
extern int e2cb_reader_set_path(struct e2cb_reader *r, const char *path);
extern int e2cb_reader_check_entry(struct e2cb_reader *r,
				   struct e2cb_entry *e);

#endif /* E2CB_READER_INT_H */
