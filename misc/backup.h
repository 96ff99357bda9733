/*
 * backup.h --- e2cryptbak backup: what backup.c and backup_inode.c share
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_BACKUP_H
#define E2CB_BACKUP_H

#include <time.h>
#include "e2cryptbak.h"
#include "ext2fs/journal_replay.h"

#define IOBUF_SIZE	E2CB_WRITER_BUF

struct backup;
struct region_list;

/*
 * Where the walk's entries go, in the shape of the writer's calls
 * (archive.h): backup's is the archive writer (backup.c), the image
 * source's makes struct e2cb_entry of them (source_image.c).  One
 * walk, two ends; the writer keeps its own calls, and so backup's
 * archives stay as they were, byte for byte.
 */
struct e2cb_walk_ops {
	errcode_t (*header)(struct backup *b, const struct e2cb_header *h);
	errcode_t (*begin)(struct backup *b, const char *path,
			   const struct e2cb_inode_rec *r, uint64_t need);
	void (*hardlink)(struct backup *b, const char *first);
	errcode_t (*add_context)(struct backup *b, const void *ctx,
				 size_t ctx_len);
	errcode_t (*add_name)(struct backup *b,
			      const struct ext4_encrypted_name *name,
			      const void *ctx, size_t ctx_len);
	void (*add_xattrs)(struct backup *b, uint8_t *rec, size_t len);
	errcode_t (*add_symlink)(struct backup *b, uint8_t *target,
				 size_t len, int encrypted);
	char *(*data_buf)(struct backup *b, uint64_t len);
	void (*set_stretches)(struct backup *b, uint64_t tar_size,
			      const struct e2cb_stretch *st, size_t count);
	void (*set_inline)(struct backup *b, const char *data, size_t len);
	/* EXT2_ET_CANCEL_REQUESTED: the end stopped the walk, said why */
	errcode_t (*send)(struct backup *b, const struct region_list *rl);
	/* data not kept by data_buf, after send; NULL: send took it */
	errcode_t (*data)(struct backup *b, uint64_t off, const void *buf,
			  size_t len);
	errcode_t (*trailer)(struct backup *b, const struct e2cb_trailer *t);
	/* optional: how the end names the current path in messages */
	const char *(*shown)(struct backup *b);
};

/* The walk of the image; where its entries go is ops' */
struct backup {
	ext2_filsys fs;
	struct ext2fs_replay_stats replay;	/* what opening it replayed */
	const struct e2cb_walk_ops *ops;
	struct e2cb_writer *w;			/* backup's */
	void *out;				/* the image source's */
	ext2fs_inode_bitmap dirs_seen;
	struct e2cb_ino_map links;	/* hard-linked inode -> first path */
	uint64_t entries, inodes, encrypted, data_bytes, skipped;
	uint64_t inodes_total;
	char *iobuf;			/* where the entry's data is read */
	int preread;			/* all the entry's data is there */
	int sink_reads;			/* the end reads the data itself */
	int every_name;			/* each name of a file is whole */
	char why[96];			/* what failed, for skip_entry() */
	int progress;
	time_t last_progress;
	struct e2cb_path_buf path;
	/* PATH names a non-directory: the root holds this one name */
	ext2_ino_t only_ino;
	struct ext4_encrypted_name only_name;	/* name_len 0: any name */
	int only_done;
	struct e2cb_readahead *ra;
	ext2_ino_t root;		/* of the walk */
};

/* A child of the directory being walked, copied out of its block */
struct child {
	ext2_ino_t ino;
	struct ext4_encrypted_name name;
};

/* The stored blocks of a file, in bytes after clipping; pos is pblk's */
struct region_list {
	struct e2cb_stretch *r;
	size_t count, size;
	uint64_t limit;			/* data past this is not kept */
	errcode_t retval;
};

/*
 * The current path, relative to the backup root; the root itself is
 * "" here and "." in the archive.
 */
static inline const char *entry_path(const struct backup *b)
{
	return b->path.len ? b->path.s : ".";
}

/* The current path as messages name it: the end's name for it */
static inline const char *shown_path(struct backup *b)
{
	return b->ops->shown ? b->ops->shown(b) : entry_path(b);
}

/* backup_inode.c: what an inode holds, read out of the image */
extern errcode_t e2cb_backup_crypt_records(struct backup *b, ext2_ino_t ino,
					   struct ext2_inode_large *inode,
					   const struct child *c,
					   int parent_enc);
extern errcode_t e2cb_backup_xattrs(struct backup *b, ext2_ino_t ino,
				    struct ext2_inode_large *inode);
extern errcode_t e2cb_backup_symlink(struct backup *b, ext2_ino_t ino,
				     struct ext2_inode_large *inode);
extern errcode_t e2cb_backup_prepare_data(struct backup *b, ext2_ino_t ino,
					  struct ext2_inode_large *inode,
					  struct region_list *rl,
					  char **inline_buf,
					  size_t *inline_len);
typedef errcode_t (*e2cb_walk_data_func)(void *priv, uint64_t off,
					 const void *buf, size_t len);
extern errcode_t e2cb_backup_read_data(struct backup *b,
				       const struct region_list *rl,
				       e2cb_walk_data_func func, void *priv);

/* backup.c: the walk, for the image source */
extern errcode_t e2cb_backup_start(struct backup *b, const char *src_path,
				   struct e2cb_header *h);
extern errcode_t e2cb_backup_pass(struct backup *b);
extern void e2cb_backup_counts(const struct backup *b,
			       struct e2cb_trailer *t);
extern void e2cb_backup_free(struct backup *b);

#endif /* E2CB_BACKUP_H */
