/*
 * restore_online.h --- restore --online: what its files share
 *
 * restore_online.c is the command (the target, the two passes, the
 * end); restore_online_make.c creates each entry and writes its data;
 * restore_online_finish.c sets what is set once an inode is whole
 * (xattrs, times, inode flags) and takes everything back on failure.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_RESTORE_ONLINE_H
#define E2CB_RESTORE_ONLINE_H

#include <stdint.h>
#include <time.h>
#include "restore.h"
#include "online_uapi.h"

/* What is set on an inode once it is whole, through a descriptor */
struct ro_meta {
	uint64_t ino;			/* in the target */
	uint32_t mode, uid, gid;
	uint32_t iflags, projid;
	int has_projid;
	int set_owner;			/* PATH existed: owner and mode too */
	int finished;			/* by one of its names */
	int drop_caps;			/* not the archived owner's */
	struct e2cb_time atime, mtime;
	uint8_t *xattrs;
	size_t xattrs_len;
	char *path;			/* the archive's, for messages */
};

/* A directory of the writing pass, open for its entries */
struct ro_dir {
	int fd;				/* O_RDONLY | O_DIRECTORY */
	int enc;
	int casefold;
	struct ro_meta meta;		/* its own, set when it is closed */
	struct ro_meta *kids;		/* what it holds, set likewise */
	size_t nkids, kids_size;
};

/* The first name of an inode with several, for the others */
struct ro_link {
	uint32_t to;			/* its inode number in the target */
	int dirfd;			/* its directory, kept open */
	int pathfd;			/* unencrypted: O_PATH of the inode */
	struct fscrypt_entry_name name;	/* encrypted: the raw name */
};

/* An inode whose flags wait for the end (a later link would fail) */
struct ro_flags {
	int pathfd;			/* O_PATH, checked by st_ino */
	uint64_t ino;
	uint32_t iflags, projid;
	int has_projid;
	uint32_t mode;
	char *path;
};

struct ro {
	struct restore rs;		/* the first pass's, fs NULL */
	const char *target;		/* MOUNTPOINT/PATH, as given */
	int parent_fd;			/* PATH's directory */
	char *leaf;			/* PATH's last component */
	int top_fd;			/* PATH, once there */
	uint64_t top_ino;
	int top_made;			/* PATH created by us */
	struct ro_dir *stack;
	size_t depth, stack_size;	/* open: stack[0 .. depth - 1] */
	struct e2cb_ino_map links;	/* archive ino -> struct ro_link */
	struct e2cb_ino_map made;	/* target inos we created */
	struct ro_flags *flags;
	size_t nflags, flags_size;
	uint8_t *buf;			/* RO_DATA_BUF of ciphertext */
	uint32_t bs;
	unsigned int unset_flags;	/* entries whose flags could not be */
	time_t last;			/* of the last progress line */
	errcode_t retval;		/* why the writing pass stopped */
	const struct e2cb_entry *at;	/* the entry it stopped at */
};

/* FS_IOC_WRITE_RAW_DATA takes at most 1 MiB a call */
#define RO_DATA_BUF		(1024 * 1024)

/* Inode flags FS_IOC_SETFLAGS sets; the rest come with the inode */
#define RO_SETTABLE_FL	(EXT2_SECRM_FL | EXT2_UNRM_FL | EXT2_SYNC_FL | \
			 EXT2_IMMUTABLE_FL | EXT2_APPEND_FL | \
			 EXT2_NODUMP_FL | EXT2_NOATIME_FL | \
			 EXT2_DIRSYNC_FL | EXT2_TOPDIR_FL | \
			 EXT2_NOTAIL_FL | EXT4_PROJINHERIT_FL)
/* ... what the kernel sets itself, or ext4 keeps to itself */
#define RO_IMPLIED_FL	(EXT4_EXTENTS_FL | EXT4_ENCRYPT_FL | \
			 EXT2_INDEX_FL | EXT4_INLINE_DATA_FL | \
			 EXT4_HUGE_FILE_FL | EXT4_EA_INODE_FL | \
			 EXT4_CASEFOLD_FL)

/* restore_online_make.c */
extern errcode_t e2cb_ro_make(struct ro *ro, struct ro_dir *dir,
			      const struct e2cb_entry *e,
			      const struct ext4_encrypted_name *n,
			      struct e2cb_source *src, uint64_t *ino,
			      int *dirfd);
extern void e2cb_ro_owner(const struct ro *ro, const struct e2cb_entry *e,
			  uint32_t *mode, uint32_t *uid, uint32_t *gid);
extern errcode_t e2cb_ro_note_made(struct ro *ro, uint64_t ino);
extern int e2cb_ro_open_by_ino(int dfd, uint64_t ino, int flags);
extern errcode_t e2cb_ro_set_casefold(int fd);

/* restore_online_finish.c */
extern errcode_t e2cb_ro_meta_from(struct ro_meta *m, const struct ro *ro,
				   const struct e2cb_entry *e, uint64_t ino);
extern void e2cb_ro_meta_free(struct ro_meta *m);
extern errcode_t e2cb_ro_close_dir(struct ro *ro, struct ro_dir *d);
extern errcode_t e2cb_ro_set_flags(struct ro *ro);
extern void e2cb_ro_undo(struct ro *ro);

#endif /* E2CB_RESTORE_ONLINE_H */
