/*
 * extract.h --- what the modules of e2cryptbak extract share
 *
 * extract.c drives one entry at a time, as a source gives it; the
 * sources of source.h (an archive: the reader; an image: backup's
 * walk), opened and fed by extract_source.c, give the entries, and
 * the output side (extract_tree.c, with extract_output.c for its
 * safety, extract_meta.c for what is applied to each object and
 * extract_writer.c for the data) makes them.  extract_keys.c holds the
 * keys, extract_select.c the PATHs asked for.  Private to those files.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_EXTRACT_H
#define E2CB_EXTRACT_H

#include <stdio.h>
#include <pthread.h>
#include <sys/stat.h>
#include "e2cryptbak.h"
#include "fscrypt/fscrypt.h"

#define IOBUF_SIZE	(1024 * 1024)
#define PIPE_BUFS	(E2CB_PIPE_MAX_WORKERS + 2)
#define MAX_READ_SEGS	(IOBUF_SIZE / EXT2_MIN_BLOCK_SIZE)
#define MAX_DEPTH	4096

/* Why the entries below a directory are not extracted */
enum skip {
	SKIP_NONE,
	SKIP_SILENT,		/* outside the PATHs asked for */
	SKIP_MISSING,		/* the key for their names was not given */
	SKIP_FAILED,		/* the directory itself could not be made */
};

/* Where an entry stands with respect to the PATH operands */
enum sel { SEL_ALL, SEL_ANCESTOR, SEL_NONE };

/* What is applied to an object once it is complete */
struct meta {
	uint32_t mode, uid, gid;
	struct e2cb_time atime, mtime;
	uint8_t *xattrs;		/* a sealed xattr record, or NULL */
	size_t xattrs_len;
};

/* A directory on the way down, until its last entry is done */
struct frame {
	int fd;				/* -1: not created */
	int skip;
	int sel;
	int encrypted;			/* entries' names are ciphertext */
	struct fscrypt_inode *names;	/* their key */
	struct fscrypt_key_spec spec;	/* SKIP_MISSING: the key wanted */
	size_t plain_len, cipher_len;
	int apply_meta;
	struct meta meta;
};

/* One object as a source describes it */
struct xentry {
	uint32_t ino;
	uint32_t mode, uid, gid, links;
	uint64_t size;
	struct e2cb_time atime, mtime;
	uint32_t rdev_major, rdev_minor;
	const uint8_t *ctx;		/* NULL: not encrypted */
	size_t ctx_len;
	const uint8_t *name;		/* raw, as on disk; NULL: the root */
	size_t name_len;
	const uint8_t *xattrs;		/* sealed xattr record, or NULL */
	size_t xattrs_len;
	const uint8_t *target;		/* symlink: as stored */
	size_t target_len;
	int hardlink;			/* the data went with an earlier name */
};

/* An inode written with more than one name: where its first went */
struct link {
	uint32_t ino;
	char *path;			/* plaintext, relative to DIR */
	size_t len;
	dev_t dev;			/* the inode written, to find again */
	ino_t host_ino;
};

/*
 * The reads that fill a pipe buffer, left to the worker that decrypts
 * it: copying the ciphertext out of the page cache costs about what
 * decrypting it does, and the reading thread alone would leave the
 * workers waiting.  Each pipe buffer carries its plan past its
 * IOBUF_SIZE bytes of data, and, read from an archive, the crc32c of
 * that data for the archive's sum.
 */
struct read_plan {
	unsigned int count;
	uint32_t crc;
	struct {
		uint64_t pos;		/* in the image or archive */
		uint32_t len;
		uint32_t dst;		/* in the buffer */
	} seg[MAX_READ_SEGS];
};

#define PIPE_BUF_SIZE		(IOBUF_SIZE + sizeof(struct read_plan))
#define BUF_PLAN(buf)		((struct read_plan *) ((buf) + IOBUF_SIZE))

struct xt;
struct writer;
struct e2cb_source;		/* source.h's */
struct missing;			/* extract_keys.c's */
struct sel_path;		/* extract_select.c's */

/* One run of extract or list -k, as all its modules see it */
struct xt {
	const struct e2cb_extract_opts *o;
	struct fscrypt_keyring *kr;
	struct e2cb_source *src;	/* the archive's or the image's */
	unsigned int sink_flags;	/* E2CB_SINK_*: how it is read */
	ext2_filsys fs;			/* the image source's */
	uint8_t uuid[16];
	unsigned int block_size;
	int root_fd;
	int created_root;
	int is_root;
	uid_t euid;
	unsigned int policy;		/* E2CB_NO_*: what the archive may do */
	uint32_t umask;			/* for E2CB_NO_SAME_PERMS */
	struct stat made;		/* what e2cb_x_extract_*() last made */
	struct frame *st;
	size_t depth, st_size;
	struct e2cb_path_buf plain, cipher;
	char *shown;			/* a path the source names, as shown */
	size_t shown_size;
	struct e2cb_ino_map links;	/* of struct link */
	struct missing *miss;
	size_t nmiss;
	struct sel_path *sel;
	size_t nsel;
	char **staged;			/* names in DIR to remove at the end */
	size_t nstaged;
	uint8_t *iobuf;
	struct e2cb_pipe *pipe;		/* decrypts and writes behind us */
	pthread_mutex_t crypt_lock;	/* for a mode no worker can copy */
	uint64_t entries, files, bytes;
	uint64_t missing, refused, failed, notroot, nodevices;
	uint64_t xattr_warnings;
	uint64_t enc_seen, enc_ok;
	int damaged;
	errcode_t stop;			/* the output failed: no more entries */
	int stop_cut;			/* -O: a file streamed is cut short */
	int anon_files;			/* files are made with O_TMPFILE */
	int tmp_dirfd;			/* else the file being written is */
	char tmp_name[64];		/* tmp_name in tmp_dirfd, or "" */
	unsigned int tmp_seq;
};

/* Data of one regular file on its way out: decrypted whole data units */
struct writer {
	struct xt *x;
	int fd;
	struct fscrypt_inode *fi;	/* NULL: plaintext */
	/* each pipe worker's handle on fi, or NULLs: share fi, locked */
	struct fscrypt_inode *fis[E2CB_PIPE_MAX_WORKERS];
	uint64_t size;			/* i_size */
	uint64_t end;			/* nothing past this is needed */
	unsigned int du;
	uint8_t *buf;			/* the pipe's buffer being filled */
	uint64_t off;			/* of what is in buf */
	size_t len;
	errcode_t err;
	int write_failed;		/* the output failed, not the source */
	int reported;			/* the feed has said what went wrong */
	uint64_t done_bytes;		/* written by the pipe's jobs */
	int stream;			/* -O: fd is written in order */
	uint64_t pos;			/* stream: bytes written so far */
	int plan;			/* e2cb_xw_plan_read(): workers read */
	int read_fd;			/* what they read */
	struct e2cb_source *sum_to;	/* what they read goes back to it */
	errcode_t read_err;		/* the first read of theirs failed */
	uint64_t bad_pos, bad_byte;	/* where: in read_fd, in the data */
};

/*
 * A regular file is written without a name (O_TMPFILE), or under a
 * temporary one in its directory where the filesystem cannot, and
 * takes its own name only when whole: a file cut short by a full disk
 * or a signal is never left looking complete.
 */
struct outfile {
	int fd;
	int dirfd;
	int anon;			/* O_TMPFILE */
};

static inline int e2cb_x_is_type(const struct xentry *e, int type)
{
	return (e->mode & LINUX_S_IFMT) == type;
}

/* extract.c: the per-entry driver, and messages */
extern int e2cb_x_process(struct xt *x, const struct xentry *e,
			  size_t depth);
extern void e2cb_x_report(struct xt *x, errcode_t err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
extern void e2cb_x_report_dest(struct xt *x, errcode_t err,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
extern const char *e2cb_x_cur_name(struct xt *x);

/* extract_select.c: the PATHs asked for */
extern int e2cb_x_set_selection(struct xt *x);
extern int e2cb_x_select(struct xt *x, int parent_sel);
extern int e2cb_x_report_unselected(struct xt *x);
extern void e2cb_x_free_selection(struct xt *x);

/* extract_keys.c: the keys, given and missing */
extern int e2cb_x_load_keys(struct xt *x, const uint8_t salt[16]);
extern errcode_t e2cb_x_open_inode(struct xt *x, const struct xentry *e,
				   struct fscrypt_inode **ret);
extern void e2cb_x_note_missing(struct xt *x,
				const struct fscrypt_key_spec *spec);
extern void e2cb_x_print_missing(struct xt *x);
extern void e2cb_x_note_unused_keys(struct xt *x);
extern void e2cb_x_free_missing(struct xt *x);

/* extract_source.c: the source, an archive or an image */
extern void e2cb_x_entry_from(struct xentry *xe,
			      const struct e2cb_entry *e);
extern int e2cb_x_looks_like_image(const char *name);
extern int e2cb_x_open_source(struct xt *x, int image, uint8_t salt[16]);
extern void e2cb_x_walk(struct xt *x);
extern errcode_t e2cb_x_feed(struct xt *x, const struct xentry *e,
			     struct writer *w);

/* extract_tree.c: the objects of the plaintext tree */
extern const struct link *e2cb_x_link_find(struct xt *x, uint32_t ino);
extern void e2cb_x_link_add(struct xt *x, uint32_t ino, const char *path,
			    size_t len, const struct stat *made);
extern void e2cb_x_free_links(struct xt *x);
extern errcode_t e2cb_x_extract_file(struct xt *x, int dirfd,
				     const char *name, const struct xentry *e,
				     struct fscrypt_inode *fi);
extern errcode_t e2cb_x_stream_file(struct xt *x, const struct xentry *e,
				    struct fscrypt_inode *fi);
extern errcode_t e2cb_x_extract_link(struct xt *x, int dirfd,
				     const struct link *l);
extern errcode_t e2cb_x_extract_symlink(struct xt *x, int dirfd,
					const struct xentry *e,
					struct fscrypt_inode *fi);
extern errcode_t e2cb_x_extract_special(struct xt *x, int dirfd,
					const struct xentry *e);
extern int e2cb_x_extract_dir(struct xt *x, int dirfd, int *apply);

/* extract_output.c: what keeps the output safe */
extern void e2cb_x_guard_output(struct xt *x);
extern void e2cb_x_unguard_output(void);
extern void e2cb_x_check_dest(struct xt *x, errcode_t err);
extern int e2cb_x_stopped(struct xt *x);
extern int e2cb_x_make_room(struct xt *x, int dirfd, const char *name,
			    int want_dir);
extern int e2cb_x_is_ours(struct xt *x, int dirfd, const struct stat *st,
			  mode_t type);
extern int e2cb_x_open_made(struct xt *x, int dirfd, const char *name,
			    mode_t type, dev_t rdev);
extern int e2cb_x_link_fd(int fd, int dirfd, const char *name);
extern errcode_t e2cb_x_out_create(struct xt *x, int dirfd,
				   struct outfile *of);
extern errcode_t e2cb_x_out_link(struct xt *x, struct outfile *of,
				 const char *name);
extern void e2cb_x_out_discard(struct xt *x, struct outfile *of);
extern void e2cb_x_stage_file(struct xt *x, const struct xentry *e);
extern void e2cb_x_unstage(struct xt *x);

/* extract_meta.c: owner, mode, xattrs and times */
extern void e2cb_x_meta_from(struct meta *m, const struct xentry *e);
extern void e2cb_x_apply_meta(struct xt *x, int fd, int is_path,
			      const struct meta *m, int type);
extern void e2cb_x_apply_entry_meta(struct xt *x, int fd, int is_path,
				    const struct xentry *e);

/* extract_writer.c: the data of regular files, decrypted */
extern void e2cb_xw_init(struct writer *w, struct xt *x, int fd,
			 struct fscrypt_inode *fi, uint64_t size);
extern void e2cb_xw_release(struct writer *w);
extern errcode_t e2cb_xw_finish(struct writer *w);
extern uint8_t *e2cb_xw_room(struct writer *w, uint64_t off, size_t *room);
extern void e2cb_xw_plan_read(struct writer *w, uint8_t *dst, uint64_t pos,
			      uint32_t len);
extern void e2cb_xw_commit(struct writer *w, size_t len);
extern errcode_t e2cb_xw_add(struct writer *w, uint64_t off,
			     const uint8_t *data, size_t len);
extern errcode_t e2cb_xw_stream_out(struct writer *w, const uint8_t *buf,
				    size_t len, uint64_t off);
extern void e2cb_xw_read_error(struct writer *w, errcode_t err, uint64_t pos,
			       uint64_t byte);

#endif /* E2CB_EXTRACT_H */
