/*
 * source_online.h --- backup --online: what source_online.c (the walk,
 * the entries) and source_online_fs.c (the data, the mount, the walk's
 * ends) share
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_SOURCE_ONLINE_H
#define E2CB_SOURCE_ONLINE_H

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "e2cryptbak.h"
#include "walk.h"

#include "online_uapi.h"

#define RAW_DIR_BUF	65536
#define MAX_DEPTH	4096
#define TARGET_MAX	4096
/* what was read is not what is there now */
#define E2CB_CHANGED	ESTALE

/* A directory entry: the name as stored, and a name to open it by */
struct online_child {
	uint64_t ino, pos;
	struct ext4_encrypted_name name;
	char shown[256];		/* readdir's: a no-key name, maybe */
	int found;
};

struct online_entry;
struct data_reader;

/* The walk of a mounted filesystem (walk.h) */
struct online {
	struct e2cb_walk wk;		/* first */
	struct e2cb_path_buf path;
	struct e2cb_ino_map links;
	const char *dir;		/* as given, for messages */
	dev_t dev;
	uint64_t mnt_id;
	uint32_t root_ino;
	unsigned int bs;
	uint64_t inodes_used;		/* when the walk was opened */
	uint32_t first_ino;		/* the superblock's, for -p */
	struct online_entry *root;	/* open from the start */
	uint8_t *buf;			/* E2CB_WRITER_BUF, a read */
	uint8_t *keep;			/* E2CB_WRITER_BUF, data kept */
	char why[80];			/* what was being done, for skip() */
	struct e2cb_stretch *st;
	size_t count, size;
	/* the entry being sent, for its data read again */
	struct online_entry *send_oe;
	struct data_reader *send_dr;
};

/* What one entry holds, read before its header goes out */
struct online_entry {
	struct statx stx;
	int fd;				/* O_PATH */
	int enc;
	uint8_t meta[FSCRYPT_RAW_METADATA_MAX_SIZE];
	uint32_t meta_len;
	uint64_t i_size;
	const uint8_t *ctx;
	size_t ctx_len;
	uint8_t target[TARGET_MAX + 1];
	size_t target_len;
	int have_target;
};

/* One piece of a file's data: @len bytes at @off, or a hole */
struct piece {
	uint64_t off, len;
	int hole;
	const uint8_t *data;
};

struct data_reader {
	int fd;				/* the file, or its directory */
	int enc;
	const struct online_child *c;
	uint64_t i_size;
	uint64_t pos;			/* next byte */
	struct fscrypt_read_raw_data_arg da;
};

/* source_online.c */
extern int e2cb_online_reopen(int fd, int flags);
extern void e2cb_online_entry_name(struct fscrypt_entry_name *en,
				   const struct online_child *c);
extern errcode_t e2cb_online_one(struct online *o, int dfd, int parent_enc,
				 const struct online_child *c,
				 struct online_entry *oe, int depth);
extern errcode_t e2cb_online_unchanged(const struct online_entry *oe);

/* source_online_fs.c */
extern errcode_t e2cb_online_read_data(struct online *o,
				       struct data_reader *dr, char *keep,
				       e2cb_walk_data_func again, void *priv);
extern errcode_t e2cb_online_prepare_data(struct online *o,
					  struct online_entry *oe, int dfd,
					  const struct online_child *c,
					  struct data_reader *dr, int inlined);

#endif /* E2CB_SOURCE_ONLINE_H */
