/*
 * journal_replay.h --- read an ext4 image as the kernel would mount it:
 * its journal replayed, its fast commits applied and its orphans handled,
 * all in memory, without writing the device.
 *
 * The jbd2 on-disk structures here follow the kernel's include/linux/jbd2.h
 * and Documentation/filesystems/ext4/journal.rst; the fast-commit ones
 * fs/ext4/fast_commit.h.  Every on-disk jbd2 field is big-endian.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#ifndef EXT2FS_JOURNAL_REPLAY_H
#define EXT2FS_JOURNAL_REPLAY_H

#include <ext2fs/ext2fs.h>
#include <ext2fs/crypt_err.h>

/* --- jbd2 on disk ------------------------------------------------------ */

#define JBD2_MAGIC		0xc03b3998U

#define JBD2_DESCRIPTOR_BLOCK	1
#define JBD2_COMMIT_BLOCK	2
#define JBD2_SUPERBLOCK_V1	3
#define JBD2_SUPERBLOCK_V2	4
#define JBD2_REVOKE_BLOCK	5
#define JBD2_FC_BLOCK		6	/* in the kernel's headers only */

#define JBD2_FEATURE_COMPAT_CHECKSUM		0x00000001
#define JBD2_FEATURE_INCOMPAT_REVOKE		0x00000001
#define JBD2_FEATURE_INCOMPAT_64BIT		0x00000002
#define JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT	0x00000004
#define JBD2_FEATURE_INCOMPAT_CSUM_V2		0x00000008
#define JBD2_FEATURE_INCOMPAT_CSUM_V3		0x00000010
#define JBD2_FEATURE_INCOMPAT_FAST_COMMIT	0x00000020
#define JBD2_KNOWN_INCOMPAT	0x0000003fU

#define JBD2_FLAG_ESCAPE	1
#define JBD2_FLAG_SAME_UUID	2
#define JBD2_FLAG_DELETED	4
#define JBD2_FLAG_LAST_TAG	8

#define JBD2_CRC32_CHKSUM	1
#define JBD2_CRC32C_CHKSUM	4
#define JBD2_CRC32_CHKSUM_SIZE	4

#define JBD2_DEFAULT_FC_BLOCKS	256
#define JBD2_MIN_JOURNAL_BLOCKS	1024

struct jbd2_header {
	__u32	h_magic;
	__u32	h_blocktype;
	__u32	h_sequence;
};

struct jbd2_superblock {
	struct jbd2_header s_header;
	__u32	s_blocksize;
	__u32	s_maxlen;
	__u32	s_first;
	__u32	s_sequence;
	__u32	s_start;
	__s32	s_errno;
	__u32	s_feature_compat;
	__u32	s_feature_incompat;
	__u32	s_feature_ro_compat;
	__u8	s_uuid[16];
	__u32	s_nr_users;
	__u32	s_dynsuper;
	__u32	s_max_transaction;
	__u32	s_max_trans_data;
	__u8	s_checksum_type;
	__u8	s_padding2[3];
	__u32	s_num_fc_blks;
	__u32	s_head;
	__u32	s_padding[40];
	__u32	s_checksum;
	__u8	s_users[16 * 48];
};

struct jbd2_commit_header {
	__u32	h_magic;
	__u32	h_blocktype;
	__u32	h_sequence;
	__u8	h_chksum_type;
	__u8	h_chksum_size;
	__u8	h_padding[2];
	__u32	h_chksum[8];
	__u64	h_commit_sec;
	__u32	h_commit_nsec;
};

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(struct jbd2_superblock) == 1024,
	       "the jbd2 superblock is 1024 bytes");
#endif

/* --- the journal, as the replay reads it -------------------------------- */

struct ext2fs_journal {
	ext2_filsys	fs;		/* the filesystem as found on disk */
	blk64_t		*bmap;		/* journal block -> device block */
	__u32		total_len;	/* blocks mapped, at most maxlen */
	__u32		maxlen;		/* blocks in the journal */
	__u32		first;		/* first log block */
	__u32		last;		/* end of the log (exclusive) */
	__u32		fc_first;	/* the kernel's j_fc_first */
	__u32		fc_last;	/* its j_fc_last (= maxlen) */
	__u32		blocksize;
	__u32		sequence;	/* s_sequence: first expected tid */
	__u32		start;		/* s_start: 0 when clean */
	__u32		compat, incompat;
	__u32		csum_seed;	/* crc32c(~0, s_uuid) for csum v2/v3 */
	__u32		end_tid;	/* after the scan: first tid not found */
	char		why[160];	/* what is wrong, when it is */
};

/* ext2fs_replay_stats.state */
#define EXT2FS_REPLAY_CLEAN	0	/* nothing to replay */
#define EXT2FS_REPLAY_DONE	1	/* replayed in memory */
#define EXT2FS_REPLAY_SKIPPED	2	/* needed, not done: stale on purpose */

/* What replaying found and did: for messages and the archive header */
struct ext2fs_replay_stats {
	int	state;
	__u32	transactions;	/* full commits replayed */
	__u32	blocks;		/* blocks replayed, after revocation */
	__u32	revoked;	/* blocks not replayed: revoked */
	__u32	fc_commits;	/* fast commits replayed */
	__u32	fc_tags;	/* fast-commit tags applied */
	__u32	orphans;	/* orphan inodes handled */
	__u32	first_tid, end_tid;
	char	why[160];	/* what is wrong, when replaying fails */
};

/* ext2fs_open_replayed() flags */
#define EXT2FS_REPLAY_STALE	0x0001	/* read the stale on-disk state */

/*
 * Open @device read-only, as the kernel would see it once mounted.  A
 * clean filesystem opens as ext2fs_open2() would open it.  Otherwise the
 * journal, fast commits and orphans are replayed into a copy-on-write
 * layer in memory (replay_io): the device is never written.  @stats, if
 * not NULL, says what was done.  With EXT2FS_REPLAY_STALE nothing is
 * replayed: the caller asks for the stale state on purpose.
 */
extern errcode_t ext2fs_open_replayed(const char *device, int open_flags,
				      int replay_flags,
				      struct ext2fs_replay_stats *stats,
				      ext2_filsys *ret_fs);

extern errcode_t ext2fs_replay_fs(ext2_filsys stale, const char *device,
				  int open_flags, int replay_flags,
				  struct ext2fs_replay_stats *stats,
				  ext2_filsys *ret_fs);

/* Whether @fs needs a replay: needs_recovery, or orphans to handle */
extern int ext2fs_needs_replay(ext2_filsys fs);

/* journal_scan.c: the three passes of jbd2 recovery */
extern errcode_t ext2fs_journal_load(ext2_filsys fs,
				     struct ext2fs_journal **ret);
extern errcode_t ext2fs_journal_read_block(struct ext2fs_journal *j,
					   __u32 jblk, void *buf);
extern errcode_t ext2fs_journal_recover(struct ext2fs_journal *j,
					io_channel overlay,
					struct ext2fs_replay_stats *stats);
extern void ext2fs_journal_free(struct ext2fs_journal *j);

/*
 * fc_replay.c: apply the fast commits that follow the last full commit
 * (transaction j->end_tid), as ext4_fc_replay() does, to @fs, which is
 * open read-write over the replay layer.
 */
extern errcode_t ext2fs_fc_replay(ext2_filsys fs, struct ext2fs_journal *j,
				  struct ext2fs_replay_stats *stats);

/* orphan_cleanup.c: truncate or free the orphans, as ext4_orphan_cleanup() does */
extern errcode_t ext2fs_orphan_cleanup(ext2_filsys fs,
				       struct ext2fs_replay_stats *stats);

/* replay_io.c: a copy-on-write layer over a read-only device */
extern io_manager replay_io_manager;
extern errcode_t ext2fs_replay_io_set_unit(io_channel channel,
					   unsigned int unit);
extern errcode_t ext2fs_replay_io_map(io_channel channel, blk64_t blk,
				      blk64_t src, int escape);
extern int ext2fs_replay_io_changed(io_channel channel, blk64_t blk,
				    blk64_t count);
extern unsigned long long ext2fs_replay_io_count(io_channel channel);
extern io_channel ext2fs_replay_io_adopt(io_channel channel);

#endif /* EXT2FS_JOURNAL_REPLAY_H */
