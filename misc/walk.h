/*
 * walk.h --- e2cryptbak's walks of a filesystem, and where their
 * entries go (issues 20 and 22)
 *
 * Two walks yield backup's entries: backup.c's of an unmounted image
 * (backup_inode.c reads each inode) and source_online*.c's of a mounted
 * filesystem, through the keyless ioctls of contrib/kernel.  Each hands
 * its entries over in the shape of the writer's calls (archive.h), to
 * one of two ends: the archive writer (backup.c, for backup, call for
 * call, so that its archives stay as they were byte for byte) or the
 * entries of a source (source_walk.c, for copy, extract and any other
 * sink of source.h).  Any walk goes to either end; the command that
 * drives them, the header, the trailer's counts and -p are backup.c's
 * alone.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_WALK_H
#define E2CB_WALK_H

#include <time.h>
#include "e2cryptbak.h"

struct e2cb_walk;

typedef errcode_t (*e2cb_walk_data_func)(void *priv, uint64_t off,
					 const void *buf, size_t len);

/* Where the walk's entries go: the writer's calls, in its order */
struct e2cb_walk_ops {
	errcode_t (*begin)(struct e2cb_walk *wk, const char *path,
			   const struct e2cb_inode_rec *r, uint64_t need);
	void (*hardlink)(struct e2cb_walk *wk, const char *first);
	errcode_t (*add_context)(struct e2cb_walk *wk, const void *ctx,
				 size_t ctx_len);
	errcode_t (*add_name)(struct e2cb_walk *wk,
			      const struct ext4_encrypted_name *name,
			      const void *ctx, size_t ctx_len);
	void (*add_xattrs)(struct e2cb_walk *wk, uint8_t *rec, size_t len);
	errcode_t (*add_symlink)(struct e2cb_walk *wk, uint8_t *target,
				 size_t len, int encrypted);
	char *(*data_buf)(struct e2cb_walk *wk, uint64_t len);
	void (*set_stretches)(struct e2cb_walk *wk, uint64_t tar_size,
			      const struct e2cb_stretch *st, size_t count);
	void (*set_inline)(struct e2cb_walk *wk, const char *data,
			   size_t len);
	/* EXT2_ET_CANCEL_REQUESTED: the end stopped the walk, said why */
	errcode_t (*send)(struct e2cb_walk *wk);
	/* data not kept by data_buf, after send; NULL: send took it */
	errcode_t (*data)(struct e2cb_walk *wk, uint64_t off,
			  const void *buf, size_t len);
	/*
	 * Optional: the end's name for the entry at @path in what the
	 * walk reports (a sink that decrypts names shows the ones it
	 * can).  Valid until the next call.  NULL: @path.
	 */
	const char *(*shown)(struct e2cb_walk *wk, const char *path);
};

/* What a walk is: the image's (backup.c) or the mounted one's */
struct e2cb_walk_kind {
	/* One walk from the root; a pass after the first sees the same */
	errcode_t (*pass)(struct e2cb_walk *wk);
	/*
	 * The data of the entry being sent that was not kept (preread
	 * 0), read again for @func; an entry without data has none.
	 */
	errcode_t (*read_data)(struct e2cb_walk *wk,
			       e2cb_walk_data_func func, void *priv);
	/*
	 * Optional: where the data of the entry being sent lies, as
	 * source.h's data_map() gives it; EXT2_ET_UNIMPLEMENTED: none.
	 */
	errcode_t (*data_map)(struct e2cb_walk *wk,
			      const struct e2cb_stretch **map, size_t *count,
			      int *fd);
	void (*close)(struct e2cb_walk *wk);
};

struct e2cb_walk {
	const struct e2cb_walk_kind *kind;
	const struct e2cb_walk_ops *ops;	/* where the entries go */
	void *end;				/* and its state */
	struct e2cb_header hdr;			/* made when opened */
	unsigned int block_size;
	int preread;			/* all the entry's data is kept */
	/*
	 * Set by the end before a pass: it reads each regular file's data
	 * itself (no pre-read, no read-ahead; what cannot be read fails
	 * the entry), and it takes each name of a file whole, with its
	 * data, rather than the later ones as hard links.  The image's
	 * walk honours both.
	 */
	int sink_reads;
	int every_name;
	/* what a pass counted, as the trailer says it */
	uint64_t entries, inodes, encrypted, data_bytes, skipped;
	uint64_t inodes_total;		/* for -p; 0: not known */
	int progress;			/* -p */
	time_t last_progress;
};

/* backup.c: an unmounted ext4 device or image, the subtree @path */
extern errcode_t e2cb_image_walk_open(const char *device, const char *path,
				      int stale, int readahead,
				      struct e2cb_walk **ret);
/* The device's data for data_map(), for an end whose threads read it */
extern void e2cb_image_walk_map_data(struct e2cb_walk *wk,
				     const char *device);
/* The filesystem the image's walk reads, for what only it holds */
extern ext2_filsys e2cb_image_walk_fs(struct e2cb_walk *wk);
/* source_online_fs.c: the mounted filesystem's directory @dir */
extern errcode_t e2cb_online_walk_open(const char *dir,
				       struct e2cb_walk **ret);
/*
 * Freeze the mounted filesystem of the walk until e2cb_thaw() or the
 * walk is closed; @out: the descriptors written meanwhile (freeze.c)
 */
extern errcode_t e2cb_online_walk_freeze(struct e2cb_walk *wk,
					 const int *out, size_t nr_out);

/* backup.c: what every walk shares */
extern void e2cb_walk_progress(struct e2cb_walk *wk, int done);
extern void e2cb_walk_counts(const struct e2cb_walk *wk,
			     struct e2cb_trailer *t);

/* The current path as the walk's messages name it: the end's name */
static inline const char *e2cb_walk_shown(struct e2cb_walk *wk,
					  const char *path)
{
	return wk->ops && wk->ops->shown ? wk->ops->shown(wk, path) : path;
}

static inline errcode_t e2cb_walk_pass(struct e2cb_walk *wk)
{
	wk->entries = wk->inodes = wk->encrypted = wk->data_bytes = 0;
	wk->skipped = 0;
	return wk->kind->pass(wk);
}

static inline void e2cb_walk_close(struct e2cb_walk *wk)
{
	if (wk)
		wk->kind->close(wk);
}

#endif /* E2CB_WALK_H */
