/*
 * e2cryptbak.h --- declarations shared by the e2cryptbak commands
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CRYPTBAK_H
#define E2CRYPTBAK_H

#include <signal.h>
#include <stdarg.h>

#include <ext2fs/ext2fs.h>
#include "archive.h"

/* exit codes, in the spirit of e2fsck's */
#define E2CB_EXIT_OK		0
#define E2CB_EXIT_INCOMPLETE	1	/* done, but entries were skipped */
#define E2CB_EXIT_DAMAGED	4	/* verify: the archive is damaged */
#define E2CB_EXIT_ERROR		8	/* operational error */
#define E2CB_EXIT_USAGE		16	/* usage or syntax error */

extern const char *program_name;
extern int e2cb_stdout_errno;

struct e2cb_backup_opts {
	const char *device;
	const char *output;		/* "-" for stdout */
	const char *path;		/* subtree, default "/" */
	const char *compress;		/* NULL, gzip, zstd or xz */
	int progress;
	int stale;			/* do not replay the journal */
	int online;			/* device: a mounted directory */
	int freeze;			/* online, frozen while read */
};

/*
 * What an archive may do to the files it makes (man page: UNTRUSTED
 * ARCHIVES); by default, as root, everything it holds.
 */
#define E2CB_NO_SAME_OWNER	0x01	/* owned by the user running us */
#define E2CB_NO_SAME_PERMS	0x02	/* mode & 0777 & ~umask, as tar */
#define E2CB_NO_DEVICES		0x04	/* no block or character devices */
#define E2CB_NO_SETID		0x08	/* no set-id bits, no capabilities */
#define E2CB_SAME_PERMS		0x10	/* extract by a user: as archived */
#define E2CB_UNTRUSTED		(E2CB_NO_SAME_OWNER | E2CB_NO_SAME_PERMS | \
				 E2CB_NO_DEVICES | E2CB_NO_SETID)

struct e2cb_restore_opts {
	const char *archive;		/* "-" for standard input */
	const char *device;
	const char *path;		/* where to restore, default "/" */
	const char *undo_file;
	int progress;
	int keep_ino;
	int set_uuid;
	int add_encrypt;		/* turn on the encrypt feature */
	int keep_pw_salt;		/* keep a salt other than the archive's */
	unsigned int policy;		/* E2CB_NO_* */
};

/* copy: the image source into restore's sink, no archive between */
struct e2cb_copy_opts {
	struct e2cb_restore_opts restore;	/* DST_DEVICE, DST_PATH */
	const char *source;		/* SRC_DEVICE */
	const char *source_path;	/* PATH, default "/" */
	int stale;			/* do not replay its journal */
};

struct e2cb_extract_opts {
	const char *source;		/* archive, "-", or ext4 device/image */
	const char *dir;		/* -C, default "." */
	char **paths;			/* subtrees, plaintext; none: all */
	int npaths;
	const char **key_files;
	int nkey_files;
	char **key_hex;			/* in argv: wiped once read */
	int nkey_hex;
	const char *passphrase_file;	/* with protector: its passphrase */
	const char **protectors;	/* google/fscrypt's, NAME or ID */
	int nprotectors;
	const char *protector_key;	/* a raw_key protector's key file */
	const char **fscrypt_dirs;	/* more .fscrypt directories */
	int nfscrypt_dirs;
	int overwrite;
	int list_only;			/* list -k: print, write nothing */
	int long_format;		/* list -l -k */
	int to_stdout;			/* -O: file data to standard output */
	int stale;			/* image: do not replay the journal */
	unsigned int policy;		/* E2CB_NO_*, E2CB_SAME_PERMS */
};

extern int e2cb_backup(const struct e2cb_backup_opts *opts);

/* What a backup counted, for the line it ends with */
struct e2cb_backup_counts {
	uint64_t inodes, encrypted, entries, data_bytes, skipped;
};
struct timespec;
extern void e2cb_backup_summary(const struct e2cb_backup_opts *opts,
				const struct e2cb_backup_counts *c,
				const struct timespec *t0);
extern int e2cb_restore(const struct e2cb_restore_opts *opts);
extern int e2cb_restore_online(const struct e2cb_restore_opts *opts);
extern int e2cb_copy(const struct e2cb_copy_opts *opts);
extern int e2cb_list(const char *archive_name, int long_format,
		     const char *const *fscrypt_dirs, int nfscrypt_dirs);
extern int e2cb_verify(const char *archive_name);

/* lister.c: one entry of list, list -l and list -k */
struct e2cb_list_line {
	uint32_t mode, uid, gid;
	uint64_t size;
	const char *path;		/* plaintext if known, else as stored */
	size_t path_len;
	const char *stored;		/* as stored; NULL: the same as path */
	size_t stored_len;
	int encrypted;			/* its name is encrypted */
	const char *link_to;		/* a hard link: the first name */
	size_t link_to_len;
	const char *target;		/* a symlink's target */
	size_t target_len;
	const char *note;		/* why it is not all there, or NULL */
	const uint8_t *ctx;		/* its fscrypt context, or NULL */
	size_t ctx_len;
};

struct e2cb_fsmeta;
extern void e2cb_list_line(const struct e2cb_list_line *l, int long_format,
			   const struct e2cb_fsmeta *m);

extern int e2cb_extract(const struct e2cb_extract_opts *opts);

/* fsmeta.c: google/fscrypt's protectors */
struct e2cb_fsmeta;
struct fscrypt_keyring;
extern errcode_t e2cb_fsmeta_new(struct e2cb_fsmeta **ret);
extern void e2cb_fsmeta_free(struct e2cb_fsmeta *m);
extern int e2cb_fsmeta_add_dir(struct e2cb_fsmeta *m, const char *dir);
extern void e2cb_fsmeta_add_image(struct e2cb_fsmeta *m, ext2_filsys fs);
extern int e2cb_fsmeta_add_archive(struct e2cb_fsmeta *m, const char *name,
				   int quiet);
extern size_t e2cb_fsmeta_count(const struct e2cb_fsmeta *m);
extern int e2cb_fsmeta_unlock(const struct e2cb_fsmeta *m,
			      const struct e2cb_extract_opts *o,
			      struct fscrypt_keyring *kr);
extern void e2cb_fsmeta_print_openers(const struct e2cb_fsmeta *m,
				      const uint8_t *ctx, size_t ctx_len);

/* pipeline.c */
#define E2CB_PIPE_MAX_WORKERS	4

struct e2cb_pipe;
struct e2cb_pipe_job {
	/* on a worker, several at once; @worker numbers it from 0 */
	errcode_t (*work)(void *priv, unsigned int worker, uint8_t *buf,
			  size_t len, uint64_t off);
	/* on a worker, one at a time, in the order of submission */
	errcode_t (*emit)(void *priv, uint8_t *buf, size_t len,
			  uint64_t off);
};

extern errcode_t e2cb_pipe_new(size_t bufsize, unsigned int nbuf,
			       unsigned int nworkers, struct e2cb_pipe **ret);
extern unsigned int e2cb_pipe_workers(const struct e2cb_pipe *p);
extern uint8_t *e2cb_pipe_buffer(struct e2cb_pipe *p);
extern errcode_t e2cb_pipe_submit(struct e2cb_pipe *p,
				  const struct e2cb_pipe_job *job, void *priv,
				  size_t len, uint64_t off);
extern errcode_t e2cb_pipe_run(struct e2cb_pipe *p,
			      const struct e2cb_pipe_job *job, void *priv,
			      size_t len, uint64_t off);
extern errcode_t e2cb_pipe_drain(struct e2cb_pipe *p);
extern void e2cb_pipe_free(struct e2cb_pipe *p);

/* readahead.c */
struct e2cb_readahead;
extern void e2cb_readahead_start(ext2_filsys fs, const char *device,
				 struct e2cb_readahead **ret);
extern void e2cb_readahead_stop(struct e2cb_readahead *ra);
/* files' data to read ahead, in runs; advice only */
struct e2cb_ra_files {
	ext2_filsys fs;
	blk64_t start, count;		/* the run being made */
	blk64_t budget;			/* blocks still to advise */
};
extern void e2cb_readahead_files_begin(struct e2cb_ra_files *ra,
				       ext2_filsys fs, uint64_t bytes);
extern void e2cb_readahead_file(struct e2cb_ra_files *ra, ext2_ino_t ino);
extern void e2cb_readahead_files_end(struct e2cb_ra_files *ra);
extern void e2cb_readahead_inode_tables(ext2_filsys fs);

/* report.c: com_err, with the path of the entry it is about first */
extern void e2cb_vreport_path(const void *path, size_t len, errcode_t code,
			      const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
extern void e2cb_report_path(const void *path, size_t len, errcode_t code,
			     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* freeze.c: backup --online --freeze */
extern errcode_t e2cb_freeze(int fd, dev_t dev, const char *shown,
			     const int *out, size_t nr_out);
extern void e2cb_thaw(void);

/* source_check.c: e2cb_check_source() flags */
#define E2CB_CHECK_WRITE	0x1	/* a restore target, its flock held */
#define E2CB_CHECK_NOLOCK	0x2	/* ... one it could not lock */
extern errcode_t e2cb_check_source(const char *device, int flags);

/* util.c */
#define E2CB_END_SIGNALS	3
struct e2cb_saved_signals {
	struct sigaction sa[E2CB_END_SIGNALS];
};
extern void e2cb_end_signal_set(sigset_t *set);
extern void e2cb_catch_signals(struct e2cb_saved_signals *saved,
			       void (*handler)(int), int flags);
extern void e2cb_release_signals(const struct e2cb_saved_signals *saved);

extern errcode_t e2cb_open_fs(const char *device, int flags,
			      ext2_filsys *ret_fs);
extern errcode_t e2cb_open_fs2(const char *device, int flags, io_manager io,
			       ext2_filsys *ret_fs);
struct ext2fs_replay_stats;
extern errcode_t e2cb_open_source(const char *device, int stale,
				  struct ext2fs_replay_stats *st,
				  ext2_filsys *ret_fs);
extern void e2cb_journal_state(const struct e2cb_header *h, char *buf,
			       size_t size);
extern void e2cb_inode_times(const struct ext2_inode_large *inode,
			     size_t inode_size, struct e2cb_inode_rec *r);
extern void e2cb_inode_rdev(const struct ext2_inode *inode,
			    uint32_t *major, uint32_t *minor);
extern errcode_t e2cb_lookup_raw(ext2_filsys fs, ext2_ino_t dir,
				 const uint8_t *name, size_t len,
				 ext2_ino_t *ret);
extern errcode_t e2cb_resolve_path(ext2_filsys fs, const char *path,
				   ext2_ino_t *ret);
extern errcode_t e2cb_resolve_name(ext2_filsys fs, const char *path,
				   ext2_ino_t *ret, ext2_ino_t *dir,
				   struct ext4_encrypted_name *name);
extern void e2cb_uuid_string(const uint8_t *uuid, char *out);
#define E2CB_SALT_STRLEN	35
extern int e2cb_salt_string(const uint8_t *salt, char *out);
extern void e2cb_format_policy(const uint8_t *ctx, size_t len, char *buf,
			       size_t bufsize);
extern uint32_t e2cb_policy_mode(unsigned int policy, uint32_t mode,
				 uint32_t mask, int owner_changed);
extern int e2cb_policy_drops_caps(unsigned int policy, int owner_changed);
extern int e2cb_xattr_is_capability(int index, const char *name,
				    size_t name_len);
extern uint32_t e2cb_get_umask(void);
extern void e2cb_dir_damage_where(const struct ext2fs_dir_damage *d,
				  char *buf, size_t size);

/* extract_meta.c: an archived attribute for setxattr(2) */
extern errcode_t e2cb_xattr_to_vfs(int index, const char *name,
				   size_t name_len, const void **value,
				   size_t *value_len, char *full, size_t size,
				   void **acl);

#endif /* E2CRYPTBAK_H */
