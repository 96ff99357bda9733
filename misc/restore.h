/*
 * restore.h --- what the parts of e2cryptbak restore share
 *
 * restore.c is the command (options, the archive, the target, the two
 * passes); restore_plan.c the first pass, which checks the archive whole;
 * restore_target.c the checks of the target and PATH; restore_dirs.c
 * names and directories; restore_inode.c and restore_data.c the inodes
 * and their data; restore_takeback.c the take-back of an entry that
 * failed; restore_fault.c the test suite's failing io manager.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_RESTORE_H
#define E2CB_RESTORE_H

#include "e2cryptbak.h"
#include "source.h"

/* A directory of the writing pass, open for its entries */
struct dir_frame {
	ext2_ino_t ino;
	struct ext2fs_dir_append app;	/* its last block, being filled */
	int encrypted;
	int made;			/* by us: it may go inline */
	int write_through;		/* each name on disk when linked */
};

/* Inode numbers of the archive and the ones they get */
struct ino_map {
	ext2_ino_t *from, *to;
	size_t count, size;
};

/* The policy part of a context: all but the nonce */
#define POLICY_MAX	24

struct name_set {
	uint64_t *slot;
	size_t size, count;
};

/* An open directory of pass one, by depth */
struct plan_dir {
	uint64_t id;			/* its entry's number */
	uint8_t policy[POLICY_MAX];
	size_t policy_len;		/* 0: unencrypted */
	struct name_set names;		/* its entries' so far */
};

/* An inode with several names: what its hard links must agree with */
struct link_info {
	ext2_ino_t ino;			/* in the archive */
	ext2_ino_t to;			/* in the target */
	uint32_t mode;
	uint32_t names;			/* seen so far */
	uint8_t policy[POLICY_MAX];
	size_t policy_len;
};

/* Names seen, as (directory, name) hashes; 0 is a free slot */
/* Each entry's digest, from the first pass (restore_digests.c) */
struct digest_list {
	uint8_t (*mem)[E2CB_ENTRY_DIGEST_LEN];	/* the first ones */
	size_t mem_size, in_mem;
	uint64_t count;
	FILE *spill;			/* the others, in order */
	int no_spill;			/* none to be had: all in @mem */
	int reading;
	uint64_t at;			/* the one @spill is at */
};

/* What pass one learns about the archive and asks of the target */
struct plan {
	uint64_t entries, inodes, blocks, dirs, name_bytes;
	int has_encrypted, has_encrypted_data, has_lblk_policy;
	int data_bs_bound;		/* ciphertext tied to the block size */
	uint32_t max_data_unit;		/* the largest one a policy sets */
	int has_casefold;
	int has_verity;			/* verity files with their tree */
	uint64_t verity_untreed;	/* and without: unencrypted ones */
	int has_v1;			/* e4crypt's passphrase keys are v1 */
	int root_encrypted;
	ext2_ino_t root_ino;		/* the root's, tied by its policy */
	uint32_t lf_mode;		/* a top-level "lost+found" entry */
	ext2_ino_t lf_ino;
	int lf_encrypted;
	uint32_t block_size;		/* the archive's */
	int64_t time_min, time_max;	/* of the inodes' timestamps */
	struct ino_map fixed;		/* inode numbers that must be kept */
	struct ext4_encrypted_name *top;	/* names directly at PATH */
	size_t ntop, top_size;
	struct ext4_encrypted_name *lf;	/* names in that lost+found */
	size_t nlf, lf_size;
	struct e2cb_header hdr;
	/* what was checked, for the writing pass to match */
	uint8_t hdr_digest[E2CB_ENTRY_DIGEST_LEN];
	struct digest_list digests;	/* each entry's */
	uint8_t stream[E2CB_STREAM_DIGEST_LEN];
	/* for the checks of each entry against its directory */
	struct plan_dir *open_dirs;	/* the path to the entry */
	size_t open_dirs_size, ndirs;
	struct e2cb_ino_map linked;	/* of struct link_info */
	/* for the target's checks */
	uint64_t max_size;		/* of a regular file, or its data */
	uint64_t max_symlink;
	uint64_t devices;		/* that --no-devices refuses */
	char *xattr_misfit;		/* the first entry whose attributes
					 * do not fit, refused */
	uint64_t enc_in_plain;		/* the first encrypted non-directory
					 * in an unencrypted directory */
};

/* The seconds an inode holds: ext4's s_time_min and s_time_max */
#define TIME_MIN		((int64_t) INT32_MIN)
#define TIME_MAX_SMALL		((int64_t) INT32_MAX)
#define TIME_MAX_EXTRA		(((int64_t) 1 << 34) - 1 + INT32_MIN)

struct fill {
	ext2_ino_t ino;
	struct ext2_inode_large *inode;
	struct ext2fs_extent_fill *stager;	/* NULL: none could be had */
	int staging;			/* else by ext2fs_file_write */
	ext2_file_t file;
	uint64_t end;			/* end of the data so far */
	char *small;			/* a small file's data, read whole */
	size_t small_end, small_covered;	/* where it ends, its bytes */
	int small_pending;		/* read, not inlined: fill from it */
};

/*
 * The blocks allocated for the inode being made (its data, extent tree,
 * directory and EA blocks), as libext2fs reports them: what taking the
 * inode back frees, even where a failed write left its mapping behind.
 */
struct taken {
	struct taken_range {
		blk64_t start, len;
	} *r;
	size_t count, size;
	int on;				/* recording */
	int lost;			/* out of memory: some not recorded */
};

struct restore {
	const struct e2cb_restore_opts *opts;
	const char *shown;		/* the source, for messages */
	struct e2cb_source *src;	/* every pass reads this one */
	ext2_filsys fs;
	struct plan plan;
	ext2_ino_t target;
	int target_new;			/* PATH made by us */
	int lost_found_merge;
	struct dir_frame *stack;
	size_t depth, stack_size;
	struct fill fill;		/* regular file being filled */
	struct ext2fs_ea_share *ea_share;	/* EA blocks to share */
	uint64_t done_entries, done_bytes;
	unsigned int nlink_overflows;	/* directories counted as 1 */
	unsigned int unindexed;		/* no index would fit */
	uint32_t uid, gid, umask;	/* ours, for opts->policy */
	struct taken taken;		/* blocks of the inode being made */
	ext2fs_inode_bitmap reserved;	/* fixed numbers held from the
					 * others until their entry */
	int lock_fd;			/* holds the flock on the target */
	int writing;			/* the first write may have been done */
	/* restore --online: no fs, what statfs says of the mounted one */
	uint32_t online_bs;
	uint64_t online_free_blocks, online_free_inodes;
};

/* An entry's context and attributes, for ext2fs_xattrs_raw_write */
struct xattr_list {
	struct ext2fs_raw_xattr *x;
	size_t count, size;
	int drop_caps;			/* leave security.capability out */
};

/* restore_digests.c */
extern int e2cb_digests_add(struct digest_list *l, const uint8_t *d);
extern int e2cb_digests_same(struct digest_list *l, uint64_t i,
			     const uint8_t *d);
extern void e2cb_digests_free(struct digest_list *l);

/* restore.c */
extern int e2cb_restore_stopped(void);
extern int e2cb_restore_source(const struct e2cb_restore_opts *opts,
			       struct e2cb_source *src);
extern void e2cb_restore_catch_signals(void);
extern void e2cb_restore_release_signals(void);
extern void e2cb_restore_die_of_signal(void);
extern const char *e2cb_restore_signal_name(int sig);
extern int e2cb_restore_rewind(struct restore *rs);
extern int e2cb_restore_same_entry(struct restore *rs);
extern int e2cb_restore_same_stream(struct restore *rs);
extern int e2cb_restore_changed(struct restore *rs, const char *why);

/* restore_plan.c */
extern int e2cb_restore_plan(struct restore *rs);
extern void e2cb_restore_plan_free(struct plan *p);
extern int e2cb_restore_check_room(struct restore *rs);
extern int e2cb_restore_refuse(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
extern int e2cb_restore_policy_ties_ino(const uint8_t *ctx, size_t len);
extern void e2cb_restore_entry_name(const struct e2cb_entry *e,
				    struct ext4_encrypted_name *n);
extern int e2cb_restore_has_verity_tree(const struct e2cb_entry *e,
					uint64_t bs);
extern uint64_t e2cb_restore_target_bs(const struct restore *rs);
extern uint64_t e2cb_restore_data_end(const struct restore *rs,
				      const struct e2cb_entry *e);
extern uint64_t e2cb_restore_name_key(uint64_t dir, const uint8_t *name,
				      size_t len);
extern int e2cb_restore_name_set_has(const struct name_set *set,
				     uint64_t key);
extern int e2cb_restore_name_set_add(struct name_set *set, uint64_t key);

/* restore_target.c */
extern int e2cb_restore_preflight(struct restore *rs,
				  const struct e2cb_header *h);
extern int e2cb_restore_prepare_path(struct restore *rs, int create);
extern int e2cb_restore_check_collisions(struct restore *rs);
extern int e2cb_restore_check_inodes_free(struct restore *rs);

/* restore_dirs.c */
extern errcode_t e2cb_restore_entry(struct restore *rs,
				    const struct e2cb_entry *e);
extern errcode_t e2cb_restore_close_dirs(struct restore *rs,
					 unsigned int depth);
extern errcode_t e2cb_restore_reserve_dir(struct restore *rs);
extern void e2cb_restore_frame_init(struct restore *rs, struct dir_frame *f,
				    ext2_ino_t ino, int encrypted);
extern errcode_t e2cb_restore_frame_close(struct dir_frame *f);
extern errcode_t e2cb_restore_flush_dirs(struct restore *rs);
extern errcode_t e2cb_restore_link(struct dir_frame *dir,
				   const struct ext4_encrypted_name *n,
				   ext2_ino_t ino, uint32_t mode);
extern errcode_t e2cb_restore_push_dir(struct restore *rs, ext2_ino_t ino,
				       int encrypted);
extern errcode_t e2cb_restore_bump_dir_links(struct restore *rs,
					     ext2_ino_t dir);
extern void e2cb_restore_note_link(struct restore *rs, ext2_ino_t from,
				   ext2_ino_t to);
extern void e2cb_restore_unlink_name(struct dir_frame *dir,
				     const struct ext4_encrypted_name *n,
				     ext2_ino_t ino);

/* restore_inode.c */
extern errcode_t e2cb_restore_inode(struct restore *rs,
				    struct dir_frame *dir,
				    const struct e2cb_entry *e,
				    const struct ext4_encrypted_name *n);
extern void e2cb_restore_apply_rec(struct restore *rs,
				   struct ext2_inode_large *inode,
				   const struct e2cb_inode_rec *r);
extern errcode_t e2cb_restore_entry_xattrs(struct restore *rs,
					   const struct e2cb_entry *e,
					   struct xattr_list *l);
extern errcode_t e2cb_restore_write_inode(struct restore *rs, ext2_ino_t ino,
					  struct ext2_inode_large *inode);
extern errcode_t e2cb_restore_reserve_fixed(struct restore *rs);
extern void e2cb_restore_release_fixed(struct restore *rs);

/* restore_data.c */
extern errcode_t e2cb_restore_fill_regular(struct restore *rs, ext2_ino_t ino,
					   struct ext2_inode_large *inode,
					   const struct e2cb_entry *e);
extern errcode_t e2cb_restore_try_inline(struct restore *rs, ext2_ino_t ino,
					 struct ext2_inode_large *inode,
					 const struct e2cb_entry *e,
					 const struct xattr_list *xl,
					 int *inlined);
extern void e2cb_restore_fill_free(struct fill *f);

/* restore_takeback.c */
extern void e2cb_restore_take_begin(struct restore *rs);
extern void e2cb_restore_take_end(struct restore *rs);
extern void e2cb_restore_take_range(ext2_filsys fs, blk64_t blk, blk_t num,
				    int inuse);
extern void e2cb_restore_discard_inode(struct restore *rs, ext2_ino_t ino,
				       struct ext2_inode_large *inode,
				       int is_dir);

/* restore_fault.c */
extern void e2cb_restore_fault_install(ext2_filsys fs);
extern void e2cb_restore_fault_arm(uint64_t entry);

#endif /* E2CB_RESTORE_H */
