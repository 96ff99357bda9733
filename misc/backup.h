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
#include "walk.h"

#define IOBUF_SIZE	E2CB_WRITER_BUF

struct region_list;

/*
 * The walk of the image (walk.h); where its entries go is wk.ops'.
 * backup_inode.c reads what each inode holds.
 */
struct backup {
	struct e2cb_walk wk;			/* first */
	ext2_filsys fs;
	struct ext2fs_replay_stats replay;	/* what opening it replayed */
	ext2fs_inode_bitmap dirs_seen;
	struct e2cb_ino_map links;	/* hard-linked inode -> first path */
	char *iobuf;			/* where the entry's data is read */
	const struct region_list *sending;	/* of the entry being sent */
	int fd;				/* the device, for data_map; -1 */
	char why[96];			/* what failed, for skip_entry() */
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
	return e2cb_walk_shown(&b->wk, entry_path(b));
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
extern errcode_t e2cb_backup_read_data(struct backup *b,
				       const struct region_list *rl,
				       e2cb_walk_data_func func, void *priv);

#endif /* E2CB_BACKUP_H */
