/*
 * archive.h --- the e2cryptbak archive: records and container
 *
 * doc/archive-format.txt is the specification; this header mirrors it.
 * Every entry of the pax tar carries its records as SCHILY.xattr.*
 * values, so ordinary tar tools list the archive without complaint.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_ARCHIVE_H
#define E2CB_ARCHIVE_H

#include <stdint.h>
#include <archive.h>
#include <archive_entry.h>
#include <ext2fs/ext2fs.h>
#include "ext2fs/ext4_crypt.h"
#include "support/e2cb_support.h"

#define E2CB_FORMAT_VERSION	2	/* written */
#define E2CB_FORMAT_MIN_VERSION	1	/* the oldest read */
#define E2CB_VERSION_KNOWN(v)	((v) >= E2CB_FORMAT_MIN_VERSION && \
				 (v) <= E2CB_FORMAT_VERSION)

/* fuzzing builds let mutations past the checksums, to what they guard */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define E2CB_CHECK_SUMS		0
#else
#define E2CB_CHECK_SUMS		1
#endif

/* pseudo-xattr names of the records */
#define E2CB_REC_HEADER		"e2cryptbak.header"
#define E2CB_REC_TRAILER	"e2cryptbak.trailer"
#define E2CB_REC_INODE		"e2cryptbak.inode"
#define E2CB_REC_METADATA	"e2cryptbak.metadata"	/* 'e5' blob */
#define E2CB_REC_NAME		"e2cryptbak.name"	/* 'ef'/'ed' blob */
#define E2CB_REC_XATTRS		"e2cryptbak.xattrs"
#define E2CB_REC_SYMLINK	"e2cryptbak.symlink"
#define E2CB_REC_RECORDS	"e2cryptbak.records"	/* v2: 3.6 */

#define E2CB_HEADER_PATH	"e2cryptbak.header"
#define E2CB_TRAILER_PATH	"e2cryptbak.trailer"
#define E2CB_RECORDS_PATH	"e2cryptbak.records"

#define E2CB_HEADER_MAGIC	"E2CH"
#define E2CB_TRAILER_MAGIC	"E2CT"
#define E2CB_INODE_MAGIC	"E2CI"
#define E2CB_RECORDS_MAGIC	"E2CR"

#define E2CB_TOOL_VERSION_LEN	32
#define E2CB_HEADER_FIXED	160
#define E2CB_INODE_REC_SIZE	152
#define E2CB_TRAILER_REC_SIZE	76
#define E2CB_RECORDS_REC_SIZE	40
#define E2CB_RECORDS_DIGEST	16	/* of SHA-256 of its data */

/* a records entry (version 2): its data's bound, groups, and items */
#define E2CB_RECORDS_MAX	(1U << 20)
#define E2CB_RECORDS_MAX_GROUPS	4096
#define E2CB_GROUP_HEAD		8	/* le32 seq, le32 len */
#define E2CB_ITEM_HEAD		8	/* u8 kind, 3 reserved, le32 len */
enum e2cb_rec_kind {
	E2CB_KIND_INODE = 1,
	E2CB_KIND_METADATA,
	E2CB_KIND_NAME,
	E2CB_KIND_XATTRS,
	E2CB_KIND_SYMLINK,
	E2CB_KIND_MAX = E2CB_KIND_SYMLINK
};

struct e2cb_records_rec {
	uint32_t first_seq;
	uint32_t count;
	uint32_t data_len;
	uint8_t digest[E2CB_RECORDS_DIGEST];
};

/* e2cb_inode_rec.rflags: which other records the entry carries */
#define E2CB_IF_METADATA	0x0001
#define E2CB_IF_NAME		0x0002
#define E2CB_IF_XATTRS		0x0004
#define E2CB_IF_SYMLINK		0x0008
#define E2CB_IF_HARDLINK	0x0010	/* data is at the first entry */
#define E2CB_IF_DIRENT_HASH	0x0020
#define E2CB_IF_CRTIME		0x0040
#define E2CB_IF_PROJID		0x0080
#define E2CB_IF_INLINE		0x0100	/* data came from inline data */
#define E2CB_IF_KNOWN		0x01ff

/* e2cb_trailer.tflags */
#define E2CB_TF_INCOMPLETE	0x0001	/* entries were skipped */

struct e2cb_time {
	int64_t sec;
	uint32_t nsec;
};

struct e2cb_header {
	uint16_t version;
	uint32_t block_size;
	uint8_t uuid[16];
	uint32_t feature_compat, feature_incompat, feature_ro_compat;
	uint8_t hash_seed[16];
	uint8_t def_hash_version;
	uint8_t encrypt_pw_salt[16];
	uint16_t encoding, encoding_flags;
	uint32_t inode_size;
	uint32_t root_ino;
	int64_t created;
	char tool_version[E2CB_TOOL_VERSION_LEN + 1];
	uint16_t source_path_len;
	uint8_t journal_state;		/* E2CB_JOURNAL_* */
	uint32_t replay_transactions, replay_blocks;
	uint32_t replay_fast_commits, replay_orphans;
	char source_path[4096];		/* not NUL terminated on disk */
};

/* e2cb_header.journal_state: what the producer did with the journal */
#define E2CB_JOURNAL_CLEAN	0	/* nothing to replay (or not said) */
#define E2CB_JOURNAL_REPLAYED	1	/* replayed in memory, as a mount */
#define E2CB_JOURNAL_STALE	2	/* needed, not done: --stale */

struct e2cb_inode_rec {
	uint32_t seq;
	uint32_t ino;
	uint32_t mode;
	uint32_t uid, gid;
	uint32_t links_count;
	uint64_t size;
	uint32_t iflags;
	uint32_t projid;
	uint32_t generation;
	uint32_t rdev_major, rdev_minor;
	struct e2cb_time atime, mtime, ctime, crtime;
	uint32_t rflags;
	uint32_t dirent_hash, dirent_minor_hash;
	uint64_t prev_data_bytes;
	uint32_t prev_data_crc;
	uint32_t path_crc;
};

struct e2cb_trailer {
	uint32_t seq;
	uint32_t tflags;
	uint64_t prev_data_bytes;
	uint32_t prev_data_crc;
	uint64_t entries, inodes, encrypted, data_bytes, skipped;
};

/* Running checksum of an entry's data: bytes, then each region's extent */
struct e2cb_data_sum {
	uint32_t crc;
	uint64_t bytes;
	uint64_t region_start, region_len;
	int in_region;
};

extern void e2cb_sum_init(struct e2cb_data_sum *s);
extern void e2cb_sum_add(struct e2cb_data_sum *s, uint64_t offset,
			 const void *buf, size_t len);
extern void e2cb_sum_add_crc(struct e2cb_data_sum *s, uint64_t offset,
			     size_t len, uint32_t crc);
extern uint32_t e2cb_sum_final(struct e2cb_data_sum *s);

extern uint32_t e2cb_crc32c(uint32_t crc, const void *buf, size_t len);
extern uint32_t e2cb_crc32c_combine(uint32_t crc_a, uint32_t crc_b,
				    uint64_t len_b);

/* Each way this CPU can compute e2cb_crc32c(), the fastest last (tests) */
struct e2cb_crc32c_way {
	const char *name;
	uint32_t (*fn)(uint32_t crc, const void *buf, size_t len);
};

extern int e2cb_crc32c_ways(const struct e2cb_crc32c_way **ret);

/* records: encode returns the length written to @buf */
extern size_t e2cb_encode_header(const struct e2cb_header *h, uint8_t *buf,
				 size_t bufsize);
extern errcode_t e2cb_decode_header(const void *buf, size_t len,
				    struct e2cb_header *h);
/* The entry has a name record for @name: its flags, its stored hash */
extern void e2cb_inode_rec_name(struct e2cb_inode_rec *r,
				const struct ext4_encrypted_name *name);
extern size_t e2cb_encode_inode(const struct e2cb_inode_rec *r,
				uint8_t *buf);
extern errcode_t e2cb_decode_inode(const void *buf, size_t len,
				   struct e2cb_inode_rec *r);
extern size_t e2cb_encode_trailer(const struct e2cb_trailer *t,
				  uint8_t *buf);
extern errcode_t e2cb_decode_trailer(const void *buf, size_t len,
				     struct e2cb_trailer *t);
extern errcode_t e2cb_check_sealed(const void *buf, size_t len);
extern void e2cb_encode_records_rec(const struct e2cb_records_rec *rr,
				    uint8_t *buf);
extern errcode_t e2cb_decode_records_rec(const void *buf, size_t len,
					 struct e2cb_records_rec *rr);
extern const char *e2cb_rec_kind_name(unsigned int kind);
extern unsigned int e2cb_rec_kind(const char *name);
extern void e2cb_seal(uint8_t *buf, size_t len_without_crc);


/* xattr record: { u8 index, u8 name_len, le32 value_len, name, value }* */
struct e2cb_xattr_buf {
	uint8_t *buf;
	size_t len, size;
};
extern errcode_t e2cb_xattr_buf_add(struct e2cb_xattr_buf *xb, int index,
				    const char *name, size_t name_len,
				    const void *value, size_t value_len);
typedef int (*e2cb_xattr_func)(int index, const char *name,
			       size_t name_len, const void *value,
			       size_t value_len, void *priv);
extern errcode_t e2cb_xattr_rec_iterate(const void *rec, size_t len,
					e2cb_xattr_func func, void *priv);
extern const char *e2cb_xattr_prefix(int index);

/* One entry as the reader hands it out; pointers valid until the next */
struct e2cb_entry {
	uint64_t index;			/* 1 for the first after the header */
	unsigned int depth;		/* path components; 0 for the root */
	const char *path;
	const char *linkname;		/* hard link target or symlink text */
	uint64_t tar_size;
	struct e2cb_inode_rec rec;
	__u64 i_size;			/* from the 'e5' blob */
	const uint8_t *ctx;
	size_t ctx_len;
	struct ext4_encrypted_name name;	/* from the 'ef'/'ed' blob */
	const uint8_t *xattrs;
	size_t xattrs_len;
	const uint8_t *symlink;		/* raw encrypted target */
	size_t symlink_len;
};

/*
 * Limits of what a reader accepts, so that its memory never follows a
 * count or size the archive states: each is checked before anything
 * is allocated for it (doc/archive-format.txt 10.1, LIMITS in
 * e2cryptbak(8)).
 */
#define E2CB_MAX_PAX_HEADER	(1U << 20)	/* bytes of one entry's pax
						   extended header */
#define E2CB_MAX_STRETCHES	(1U << 20)	/* data stretches (sparse
						   map entries) of one entry */
#define E2CB_MAX_DEPTH		4096	/* path components of an entry */
#define E2CB_MAX_XATTRS		8192	/* attributes in a xattr record */
#define E2CB_MAX_SYMLINK	65536	/* bytes of a symlink target */
#define E2CB_SCAN_QUEUE		4096	/* entry starts read ahead */

/*
 * The tar stream as it is handed to libarchive, checked before it
 * gets there: one optional pax header and one ustar header per entry,
 * of the types e2cryptbak writes, no sparse map but format 1.0's and
 * none longer than E2CB_MAX_STRETCHES.  libarchive would allocate for
 * a sparse map as long as the archive says before we see the entry.
 */
struct e2cb_tarscan {
	uint64_t pos;			/* stream offset of the next byte */
	uint64_t end;			/* of the piece being read */
	int state;
	int failed;
	int pax_seen;			/* a pax header anywhere before */
	uint8_t block[512];
	size_t have;			/* of block, or of line */
	/* the entry's pax header */
	char *pax;
	size_t pax_len, pax_have, pax_size;
	int in_pax;			/* the ustar header is next */
	int64_t size;			/* "size": -1 unset */
	int sparse_major, sparse_minor;	/* -1 unset */
	int name_slash, path_slash;	/* -1 unset, else ends in '/' */
	char line[104];			/* a line of a sparse map */
	/* entry starts scanned, not yet reached by libarchive */
	uint64_t queue[E2CB_SCAN_QUEUE];
	size_t qhead, qlen;
	uint64_t entry_start;		/* the last one */
	uint64_t fail_at;		/* where the refused entry starts */
	char err[256];
	/* optional: each piece of the stream but the entries' data */
	void (*seen)(void *priv, const void *buf, size_t len);
	/* optional: an entry's ustar header is over, its pieces seen */
	void (*header_end)(void *priv);
	void *seen_priv;
	int header_done;		/* header_end() is due */
};

extern void e2cb_tarscan_init(struct e2cb_tarscan *s);
extern void e2cb_tarscan_free(struct e2cb_tarscan *s);
extern int e2cb_tarscan_feed(struct e2cb_tarscan *s, const void *buf,
			     size_t len);
extern uint64_t e2cb_tarscan_skippable(const struct e2cb_tarscan *s);
extern void e2cb_tarscan_skip(struct e2cb_tarscan *s, uint64_t len);
extern int e2cb_tarscan_expect(struct e2cb_tarscan *s, uint64_t pos);

struct e2cb_reader;

/* flags for e2cb_reader_open */
#define E2CB_READ_DATA	0x01	/* check each entry's data against its sum */
#define E2CB_READ_HASH	0x02	/* digests of the stream, each entry */

/* SHA-256; an entry's is cut to 16 bytes, 2^64 work for a collision */
#define E2CB_STREAM_DIGEST_LEN	32
#define E2CB_ENTRY_DIGEST_LEN	16

/* returned by e2cb_reader_next after a valid trailer and end of archive */
#define E2CB_READER_END	1

typedef errcode_t (*e2cb_data_func)(const struct e2cb_entry *e,
				    uint64_t offset, const void *buf,
				    size_t len, void *priv);

extern errcode_t e2cb_reader_open(const char *name, int flags,
				  struct e2cb_reader **ret);
extern errcode_t e2cb_reader_open_fd(int fd, int flags,
				     struct e2cb_reader **ret);
extern errcode_t e2cb_reader_stream_digest(struct e2cb_reader *r,
				uint8_t out[E2CB_STREAM_DIGEST_LEN]);
extern const uint8_t *e2cb_reader_entry_digest(struct e2cb_reader *r);
extern const struct e2cb_header *e2cb_reader_header(struct e2cb_reader *r);
extern const struct e2cb_trailer *e2cb_reader_trailer(struct e2cb_reader *r);
extern int e2cb_reader_next(struct e2cb_reader *r, struct e2cb_entry **ret);
extern errcode_t e2cb_reader_data(struct e2cb_reader *r, e2cb_data_func func,
				  void *priv);
/* A stretch of an entry's data in the archive file */
struct e2cb_stretch {
	uint64_t off;		/* in the entry's data */
	uint64_t len;
	uint64_t pos;		/* in the file */
};

extern errcode_t e2cb_reader_data_map(struct e2cb_reader *r,
				      const struct e2cb_stretch **ret,
				      size_t *count, int *fd);
extern void e2cb_reader_sum_crc(struct e2cb_reader *r, uint64_t off,
				size_t len, uint32_t crc);
extern const char *e2cb_reader_error(struct e2cb_reader *r);
extern void e2cb_reader_close(struct e2cb_reader *r);

/*
 * The writer (writer.c), the reader's counterpart.  For each entry, in
 * order: e2cb_writer_begin(); what it holds (hardlink, context, name,
 * xattrs, symlink); for a regular file its data, read into
 * e2cb_writer_data_buf() then set_stretches, or set_inline;
 * e2cb_writer_send(); and the data that was not at hand, with
 * e2cb_writer_data().  The stretches' pos is not used.
 */
struct e2cb_writer;

#define E2CB_WRITER_BUF	(1024 * 1024)	/* data an entry keeps at hand */

/* writer_records.c: the records entry of a batch (version 2) */
struct e2cb_recblk {
	struct archive_entry *entry;	/* the records entry's own */
	uint8_t *buf;			/* its data: the groups */
	size_t len, size;
	uint32_t first_seq, count;
};

extern errcode_t e2cb_recblk_init(struct e2cb_recblk *b);
extern void e2cb_recblk_free(struct e2cb_recblk *b);
extern void e2cb_recblk_reset(struct e2cb_recblk *b);
extern int e2cb_recblk_add(struct e2cb_recblk *b, struct archive_entry *e,
			   uint32_t seq);
extern errcode_t e2cb_recblk_write(struct e2cb_recblk *b, struct archive *a,
				   int64_t mtime);

extern errcode_t e2cb_writer_open(const char *output, const char *compress,
				  struct e2cb_writer **ret);
extern errcode_t e2cb_writer_open_fd(int fd, const char *name,
				     const char *compress,
				     struct e2cb_writer **ret);
extern errcode_t e2cb_writer_header(struct e2cb_writer *w,
				    const struct e2cb_header *h);
extern errcode_t e2cb_writer_begin(struct e2cb_writer *w, const char *path,
				   const struct e2cb_inode_rec *r,
				   uint64_t need);
extern void e2cb_writer_hardlink(struct e2cb_writer *w, const char *first);
extern errcode_t e2cb_writer_add_context(struct e2cb_writer *w,
					 const void *ctx, size_t ctx_len);
extern errcode_t e2cb_writer_add_name(struct e2cb_writer *w,
				      const struct ext4_encrypted_name *name,
				      const void *ctx, size_t ctx_len);
extern void e2cb_writer_add_xattrs(struct e2cb_writer *w, uint8_t *rec,
				   size_t len);
extern errcode_t e2cb_writer_add_symlink(struct e2cb_writer *w,
					 uint8_t *target, size_t len,
					 int encrypted);
extern char *e2cb_writer_data_buf(struct e2cb_writer *w, uint64_t len);
extern void e2cb_writer_set_stretches(struct e2cb_writer *w,
				      uint64_t tar_size,
				      const struct e2cb_stretch *st,
				      size_t count);
extern void e2cb_writer_set_inline(struct e2cb_writer *w, const char *data,
				   size_t len);
extern errcode_t e2cb_writer_send(struct e2cb_writer *w);
extern errcode_t e2cb_writer_data(struct e2cb_writer *w, uint64_t off,
				  const void *buf, size_t len);
extern errcode_t e2cb_writer_trailer(struct e2cb_writer *w,
				     const struct e2cb_trailer *counts);
extern errcode_t e2cb_writer_finish(struct e2cb_writer *w, errcode_t err);
extern int e2cb_writer_close(struct e2cb_writer *w, int ok);
/* The descriptor the archive is written to */
extern int e2cb_writer_fd(const struct e2cb_writer *w);

/* The writer's destination (outfile.c): a file named when whole */
struct e2cb_outfile;

extern errcode_t e2cb_outfile_open(const char *output,
				   struct e2cb_outfile **ret);
extern errcode_t e2cb_outfile_open_fd(int fd, const char *dest,
				      struct e2cb_outfile **ret);
extern const char *e2cb_outfile_name(const struct e2cb_outfile *o);
extern int e2cb_outfile_fd(const struct e2cb_outfile *o);
extern int e2cb_outfile_open_archive(struct e2cb_outfile *o,
				     struct archive *a);
extern void e2cb_outfile_discard(struct e2cb_outfile *o);
extern errcode_t e2cb_outfile_drain(struct e2cb_outfile *o);
extern int e2cb_outfile_close(struct e2cb_outfile *o, int ok);

#endif /* E2CB_ARCHIVE_H */
