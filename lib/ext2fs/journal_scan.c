/*
 * journal_scan.c --- replay a jbd2 journal as the kernel does on mount
 *
 * The three passes of fs/jbd2/recovery.c: SCAN finds the end of the
 * valid log and checks the checksums, REVOKE collects the revoked
 * blocks, REPLAY maps every block that survives them to its newest copy
 * in the journal.  Nothing is copied and nothing is written: the
 * copy-on-write layer (replay_io.c) reads each replayed block from the
 * journal itself.  Where the kernel would fail the mount, so do we, with
 * the reason in j->why.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "journal_replay.h"
#include <ext2fs/crypt_err.h>

enum pass { PASS_SCAN, PASS_REVOKE, PASS_REPLAY };

#define TAIL_SIZE	4		/* struct jbd2_journal_block_tail */
#define REVOKE_HDR	16		/* header, then be32 r_count */

/* Revoked blocks and the newest transaction that revoked each */
struct revoke_tab {
	blk64_t		*blk;
	__u32		*tid;
	size_t		size, used;
};

struct scan_info {
	__u32		start_tid, end_tid;
	__u32		failed_tid;	/* a commit failed its checksum */
	__u32		replays, revoke_hits;
	struct revoke_tab revoked;
	io_channel	overlay;
};

static int tid_gt(__u32 x, __u32 y)
{
	return (__s32) (x - y) > 0;
}

static int tid_geq(__u32 x, __u32 y)
{
	return (__s32) (x - y) >= 0;
}

static __u32 get_be32(const void *p)
{
	const unsigned char *b = p;

	return ((__u32) b[0] << 24) | ((__u32) b[1] << 16) |
		((__u32) b[2] << 8) | b[3];
}

static __u16 get_be16(const void *p)
{
	const unsigned char *b = p;

	return (__u16) ((b[0] << 8) | b[1]);
}

static int has_csum_v2or3(const struct ext2fs_journal *j)
{
	return j->incompat & (JBD2_FEATURE_INCOMPAT_CSUM_V2 |
			      JBD2_FEATURE_INCOMPAT_CSUM_V3);
}

static errcode_t say(struct ext2fs_journal *j, errcode_t code,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep the first reason: later failures follow from it */
static errcode_t say(struct ext2fs_journal *j, errcode_t code,
		     const char *fmt, ...)
{
	va_list ap;

	if (!j->why[0]) {
		va_start(ap, fmt);
		vsnprintf(j->why, sizeof(j->why), fmt, ap);
		va_end(ap);
	}
	return code;
}

errcode_t ext2fs_journal_read_block(struct ext2fs_journal *j, __u32 jblk,
				    void *buf)
{
	errcode_t retval;

	if (jblk >= j->total_len)
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "journal block %u is "
			   "past its end (%u blocks)", jblk, j->total_len);
	if (!j->bmap[jblk])
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "journal block %u is "
			   "not mapped by the journal inode", jblk);
	retval = io_channel_read_blk64(j->fs->io, j->bmap[jblk], 1, buf);
	if (retval)
		return say(j, retval, "cannot read journal block %u "
			   "(block %llu)", jblk,
			   (unsigned long long) j->bmap[jblk]);
	return 0;
}

/* A block's checksum, computed with its own checksum field zeroed */
static int block_csum_ok(const struct ext2fs_journal *j, unsigned char *buf,
			 size_t csum_off)
{
	__u32 provided = get_be32(buf + csum_off);
	__u32 calc;

	memset(buf + csum_off, 0, 4);
	calc = ext2fs_crc32c_le(j->csum_seed, buf, j->blocksize);
	buf[csum_off] = provided >> 24;
	buf[csum_off + 1] = provided >> 16;
	buf[csum_off + 2] = provided >> 8;
	buf[csum_off + 3] = provided;
	return provided == calc;
}

static int descriptor_csum_ok(const struct ext2fs_journal *j,
			      unsigned char *buf)
{
	if (!has_csum_v2or3(j))
		return 1;
	return block_csum_ok(j, buf, j->blocksize - TAIL_SIZE);
}

static int commit_csum_ok(const struct ext2fs_journal *j, unsigned char *buf)
{
	if (!has_csum_v2or3(j))
		return 1;
	return block_csum_ok(j, buf, offsetof(struct jbd2_commit_header,
					      h_chksum));
}

/* The kernel's rescue for a commit block written only in part */
static int commit_csum_partial_ok(const struct ext2fs_journal *j,
				  const unsigned char *buf,
				  unsigned char *scratch)
{
	memset(scratch, 0, j->blocksize);
	memcpy(scratch, buf, sizeof(struct jbd2_commit_header));
	return block_csum_ok(j, scratch, offsetof(struct jbd2_commit_header,
						  h_chksum));
}

static int tag_bytes(const struct ext2fs_journal *j)
{
	int sz = 12;

	if (j->incompat & JBD2_FEATURE_INCOMPAT_CSUM_V3)
		return 16;
	if (j->incompat & JBD2_FEATURE_INCOMPAT_CSUM_V2)
		sz += 2;
	if (!(j->incompat & JBD2_FEATURE_INCOMPAT_64BIT))
		sz -= 4;
	return sz;
}

/* The low 16 bits of the flags, where both tag layouts keep them */
static int tag_flags(const unsigned char *tag)
{
	return get_be16(tag + 6);
}

static blk64_t tag_block(const struct ext2fs_journal *j,
			 const unsigned char *tag)
{
	blk64_t blk = get_be32(tag);

	if (j->incompat & JBD2_FEATURE_INCOMPAT_64BIT)
		blk |= (blk64_t) get_be32(tag + 8) << 32;
	return blk;
}

static int tag_csum_ok(const struct ext2fs_journal *j,
		       const unsigned char *tag, const void *data, __u32 seq)
{
	unsigned char be_seq[4] = { seq >> 24, seq >> 16, seq >> 8, seq };
	__u32 csum;

	if (!has_csum_v2or3(j))
		return 1;
	csum = ext2fs_crc32c_le(j->csum_seed, be_seq, 4);
	csum = ext2fs_crc32c_le(csum, data, j->blocksize);
	if (j->incompat & JBD2_FEATURE_INCOMPAT_CSUM_V3)
		return get_be32(tag + 12) == csum;
	return get_be16(tag + 4) == (csum & 0xffff);
}

static unsigned int descr_space(const struct ext2fs_journal *j)
{
	return j->blocksize - (has_csum_v2or3(j) ? TAIL_SIZE : 0);
}

static int count_tags(const struct ext2fs_journal *j,
		      const unsigned char *buf)
{
	unsigned int off = sizeof(struct jbd2_header);
	int n = 0, tb = tag_bytes(j), flags;

	while (off + tb <= descr_space(j)) {
		flags = tag_flags(buf + off);
		n++;
		off += tb;
		if (!(flags & JBD2_FLAG_SAME_UUID))
			off += 16;
		if (flags & JBD2_FLAG_LAST_TAG)
			break;
	}
	return n;
}

static __u32 wrap(const struct ext2fs_journal *j, __u32 blk)
{
	if (blk >= j->last)
		blk -= j->last - j->first;
	return blk;
}

/* --- the revoke table ---------------------------------------------------- */

static size_t revoke_slot(const struct revoke_tab *t, blk64_t blk)
{
	return (size_t) ((blk * 0x9e3779b97f4a7c15ULL) >> 24) &
		(t->size - 1);
}

static errcode_t revoke_grow(struct revoke_tab *t)
{
	struct revoke_tab n = { NULL, NULL, t->size ? t->size * 2 : 256, 0 };
	errcode_t retval;
	size_t i, k;

	retval = ext2fs_get_array(n.size, sizeof(*n.blk), &n.blk);
	if (!retval)
		retval = ext2fs_get_array(n.size, sizeof(*n.tid), &n.tid);
	if (retval) {
		ext2fs_free_mem(&n.blk);
		return retval;
	}
	memset(n.blk, 0xff, n.size * sizeof(*n.blk));
	for (i = 0; i < t->size; i++) {
		if (t->blk[i] == ~0ULL)
			continue;
		for (k = revoke_slot(&n, t->blk[i]); n.blk[k] != ~0ULL;
		     k = (k + 1) & (n.size - 1))
			;
		n.blk[k] = t->blk[i];
		n.tid[k] = t->tid[i];
	}
	n.used = t->used;
	ext2fs_free_mem(&t->blk);
	ext2fs_free_mem(&t->tid);
	*t = n;
	return 0;
}

static __u32 *revoke_find(const struct revoke_tab *t, blk64_t blk)
{
	size_t k;

	if (!t->used)
		return NULL;
	for (k = revoke_slot(t, blk); t->blk[k] != ~0ULL;
	     k = (k + 1) & (t->size - 1))
		if (t->blk[k] == blk)
			return &t->tid[k];
	return NULL;
}

static errcode_t revoke_set(struct revoke_tab *t, blk64_t blk, __u32 tid)
{
	__u32 *have = revoke_find(t, blk);
	errcode_t retval;
	size_t k;

	if (have) {
		if (tid_gt(tid, *have))
			*have = tid;
		return 0;
	}
	if ((t->used + 1) * 2 > t->size) {
		retval = revoke_grow(t);
		if (retval)
			return retval;
	}
	for (k = revoke_slot(t, blk); t->blk[k] != ~0ULL;
	     k = (k + 1) & (t->size - 1))
		;
	t->blk[k] = blk;
	t->tid[k] = tid;
	t->used++;
	return 0;
}

/* Revoked in transaction @tid or a later one: not to be replayed */
static int revoked(const struct revoke_tab *t, blk64_t blk, __u32 tid)
{
	__u32 *have = revoke_find(t, blk);

	return have && !tid_gt(tid, *have);
}

static errcode_t scan_revoke_block(struct ext2fs_journal *j,
				   const unsigned char *buf, __u32 tid,
				   struct scan_info *info)
{
	unsigned int rec = (j->incompat & JBD2_FEATURE_INCOMPAT_64BIT) ? 8 : 4;
	__u32 count = get_be32(buf + 12), off;
	errcode_t retval;
	blk64_t blk;

	if (count > descr_space(j))
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "transaction %u: "
			   "revoke block claims %u bytes", tid, count);
	for (off = REVOKE_HDR; off + rec <= count; off += rec) {
		blk = get_be32(buf + off);
		if (rec == 8)
			blk = blk << 32 | get_be32(buf + off + 4);
		retval = revoke_set(&info->revoked, blk, tid);
		if (retval)
			return retval;
	}
	return 0;
}

/* --- the passes ------------------------------------------------------------ */

/* v1 transaction checksums (journal_checksum without csum v2/v3) */
static errcode_t sum_transaction_part(struct ext2fs_journal *j,
				      const unsigned char *descr,
				      __u32 *next, __u32 *crc,
				      unsigned char *buf)
{
	int i, n = count_tags(j, descr);
	errcode_t retval;

	*crc = ext2fs_crc32_be(*crc, descr, j->blocksize);
	for (i = 0; i < n; i++) {
		retval = ext2fs_journal_read_block(j, *next, buf);
		if (retval)
			return retval;
		*next = wrap(j, *next + 1);
		*crc = ext2fs_crc32_be(*crc, buf, j->blocksize);
	}
	return 0;
}

/* REPLAY: map each block of a descriptor to its copy in the journal */
static errcode_t replay_descriptor(struct ext2fs_journal *j,
				   const unsigned char *descr, __u32 tid,
				   __u32 *next, struct scan_info *info,
				   unsigned char *buf, int *bad)
{
	unsigned int off = sizeof(struct jbd2_header);
	int tb = tag_bytes(j), flags;
	errcode_t retval;
	blk64_t blk;
	__u32 io_block;

	while (off + tb <= descr_space(j)) {
		flags = tag_flags(descr + off);
		io_block = *next;
		*next = wrap(j, *next + 1);
		retval = ext2fs_journal_read_block(j, io_block, buf);
		if (retval)
			return retval;
		blk = tag_block(j, descr + off);
		if (revoked(&info->revoked, blk, tid)) {
			info->revoke_hits++;
		} else if (!tag_csum_ok(j, descr + off, buf, tid)) {
			/* the kernel goes on, then fails the mount */
			say(j, EXT2_ET_JOURNAL_BAD_CSUM, "transaction %u: "
			    "the copy of block %llu (journal block %u) "
			    "fails its checksum", tid,
			    (unsigned long long) blk, io_block);
			*bad = 1;
		} else if (blk >= ext2fs_blocks_count(j->fs->super)) {
			return say(j, EXT2_ET_JOURNAL_DAMAGED, "transaction "
				   "%u: block %llu is outside the filesystem",
				   tid, (unsigned long long) blk);
		} else {
			retval = ext2fs_replay_io_map(info->overlay, blk,
						      j->bmap[io_block],
						      flags & JBD2_FLAG_ESCAPE);
			if (retval)
				return retval;
			info->replays++;
		}
		off += tb;
		if (!(flags & JBD2_FLAG_SAME_UUID))
			off += 16;
		if (flags & JBD2_FLAG_LAST_TAG)
			break;
	}
	return 0;
}

struct pass_state {
	enum pass	pass;
	__u32		next_tid, next_blk;
	__u32		crc;		/* v1 transaction checksum */
	int		need_check_time, bad;
	__u64		last_time;
	unsigned char	*buf, *data, *scratch;
};

enum step { STEP_NEXT, STEP_END, STEP_DONE };

static enum step on_descriptor(struct ext2fs_journal *j, struct pass_state *s,
			       struct scan_info *info, errcode_t *err)
{
	if (!descriptor_csum_ok(j, s->buf)) {
		/* lazy journal init leaves stale blocks: judged at commit */
		if (s->pass != PASS_SCAN) {
			*err = say(j, EXT2_ET_JOURNAL_BAD_CSUM, "transaction "
				   "%u: descriptor block %u fails its "
				   "checksum", s->next_tid, s->next_blk - 1);
			return STEP_END;
		}
		s->need_check_time = 1;
	}
	if (s->pass == PASS_REPLAY) {
		*err = replay_descriptor(j, s->buf, s->next_tid, &s->next_blk,
					 info, s->data, &s->bad);
		return *err ? STEP_END : STEP_NEXT;
	}
	if (s->pass == PASS_SCAN &&
	    (j->compat & JBD2_FEATURE_COMPAT_CHECKSUM) &&
	    !s->need_check_time && !info->end_tid) {
		if (sum_transaction_part(j, s->buf, &s->next_blk, &s->crc,
					 s->data))
			return STEP_DONE;	/* the kernel just stops */
		return STEP_NEXT;
	}
	s->next_blk = wrap(j, s->next_blk + count_tags(j, s->buf));
	return STEP_NEXT;
}

/* PASS_SCAN's v1 checksum of a whole transaction: 0 if it fails */
static int v1_sum_ok(struct pass_state *s, const struct jbd2_commit_header *c)
{
	__u32 found = get_be32(&c->h_chksum[0]);

	return (s->crc == found && c->h_chksum_type == JBD2_CRC32_CHKSUM &&
		c->h_chksum_size == JBD2_CRC32_CHKSUM_SIZE) ||
		(c->h_chksum_type == 0 && c->h_chksum_size == 0 &&
		 found == 0);
}

static enum step on_commit(struct ext2fs_journal *j, struct pass_state *s,
			   struct scan_info *info, errcode_t *err)
{
	struct jbd2_commit_header *c = (void *) s->buf;
	__u64 time = ((__u64) get_be32(&c->h_commit_sec) << 32) |
		get_be32((char *) &c->h_commit_sec + 4);
	int failed = 0;

	if (s->need_check_time) {
		if (time >= s->last_time) {
			*err = say(j, EXT2_ET_JOURNAL_BAD_CSUM, "transaction "
				   "%u fails its checksums", s->next_tid);
			return STEP_END;
		}
		return STEP_DONE;	/* a stale block of an older log */
	}
	if (s->pass == PASS_SCAN &&
	    (j->compat & JBD2_FEATURE_COMPAT_CHECKSUM)) {
		if (info->end_tid) {
			info->failed_tid = info->end_tid;
			return STEP_END;
		}
		if (!v1_sum_ok(s, c))
			failed = 1;
		s->crc = ~0U;
	}
	if (s->pass == PASS_SCAN && !failed && !commit_csum_ok(j, s->buf) &&
	    !commit_csum_partial_ok(j, s->buf, s->scratch))
		failed = 1;
	if (failed) {
		if (time < s->last_time)
			return STEP_DONE;
		info->end_tid = s->next_tid;
		if (!(j->incompat & JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT)) {
			info->failed_tid = s->next_tid;
			return STEP_END;
		}
	}
	if (s->pass == PASS_SCAN)
		s->last_time = time;
	s->next_tid++;
	return STEP_NEXT;
}

static enum step on_revoke(struct ext2fs_journal *j, struct pass_state *s,
			   struct scan_info *info, errcode_t *err)
{
	/* a bad checksum is judged at the commit, as a descriptor's is */
	if (s->pass == PASS_SCAN && !descriptor_csum_ok(j, s->buf))
		s->need_check_time = 1;
	if (s->pass != PASS_REVOKE)
		return STEP_NEXT;
	*err = scan_revoke_block(j, s->buf, s->next_tid, info);
	return *err ? STEP_END : STEP_NEXT;
}

/*
 * One pass over the log.  STEP_END leaves the loop as the kernel's
 * "break" does, STEP_DONE as its "goto done" does: both then settle where
 * the log ends; an error leaves at once.
 */
static errcode_t do_pass(struct ext2fs_journal *j, struct pass_state *s,
			 struct scan_info *info)
{
	const struct jbd2_header *h = (void *) s->buf;
	enum step step = STEP_NEXT;
	unsigned long long steps = 0;
	errcode_t retval = 0;

	s->next_tid = j->sequence;
	s->next_blk = j->start;
	s->crc = ~0U;
	s->need_check_time = 0;
	s->last_time = 0;
	if (s->pass == PASS_SCAN)
		info->start_tid = s->next_tid;
	while (step == STEP_NEXT) {
		if (s->pass != PASS_SCAN &&
		    tid_geq(s->next_tid, info->end_tid))
			break;
		/* a log of descriptors without a commit would never end */
		if (++steps > 2ULL * j->total_len)
			return say(j, EXT2_ET_JOURNAL_DAMAGED, "the log runs "
				   "round without end at transaction %u",
				   s->next_tid);
		retval = ext2fs_journal_read_block(j, s->next_blk, s->buf);
		if (retval)
			return retval;
		s->next_blk = wrap(j, s->next_blk + 1);
		if (get_be32(&h->h_magic) != JBD2_MAGIC ||
		    get_be32(&h->h_sequence) != s->next_tid)
			break;
		switch (get_be32(&h->h_blocktype)) {
		case JBD2_DESCRIPTOR_BLOCK:
			step = on_descriptor(j, s, info, &retval);
			break;
		case JBD2_COMMIT_BLOCK:
			step = on_commit(j, s, info, &retval);
			break;
		case JBD2_REVOKE_BLOCK:
			step = on_revoke(j, s, info, &retval);
			break;
		default:
			step = STEP_DONE;
		}
		if (retval)
			return retval;
	}
	if (s->pass == PASS_SCAN) {
		if (!info->end_tid)
			info->end_tid = s->next_tid;
	} else if (info->end_tid != s->next_tid) {
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "pass %d ended at "
			   "transaction %u, the scan at %u", s->pass,
			   s->next_tid, info->end_tid);
	}
	if (s->bad)
		return EXT2_ET_JOURNAL_BAD_CSUM;
	return 0;
}

errcode_t ext2fs_journal_recover(struct ext2fs_journal *j, io_channel overlay,
				 struct ext2fs_replay_stats *stats)
{
	struct scan_info info;
	struct pass_state s;
	errcode_t retval;

	memset(&info, 0, sizeof(info));
	memset(&s, 0, sizeof(s));
	info.overlay = overlay;
	j->end_tid = j->sequence;
	if (!j->start)
		return 0;		/* clean: the kernel replays nothing */
	retval = ext2fs_get_mem(j->blocksize, &s.buf);
	if (!retval)
		retval = ext2fs_get_mem(j->blocksize, &s.data);
	if (!retval)
		retval = ext2fs_get_mem(j->blocksize, &s.scratch);
	for (s.pass = PASS_SCAN; !retval && s.pass <= PASS_REPLAY; s.pass++)
		retval = do_pass(j, &s, &info);
	/* jbd2_journal_load() then fails the mount */
	if (!retval && info.failed_tid)
		retval = say(j, EXT2_ET_JOURNAL_BAD_CSUM, "transaction %u is "
			     "corrupt: its commit block fails its checksum",
			     info.failed_tid);
	j->end_tid = info.end_tid;
	if (stats) {
		stats->first_tid = info.start_tid;
		stats->end_tid = info.end_tid;
		stats->transactions = info.end_tid - info.start_tid;
		stats->blocks = info.replays;
		stats->revoked = info.revoke_hits;
	}
	ext2fs_free_mem(&info.revoked.blk);
	ext2fs_free_mem(&info.revoked.tid);
	ext2fs_free_mem(&s.buf);
	ext2fs_free_mem(&s.data);
	ext2fs_free_mem(&s.scratch);
	return retval;
}

/* --- loading the journal --------------------------------------------------- */

static int map_journal_block(ext2_filsys fs, blk64_t *blocknr,
			     e2_blkcnt_t blockcnt, blk64_t ref_blk,
			     int ref_offset, void *priv)
{
	struct ext2fs_journal *j = priv;

	(void) fs; (void) ref_blk; (void) ref_offset;
	if (blockcnt >= 0 && (blk64_t) blockcnt < j->total_len)
		j->bmap[blockcnt] = *blocknr;
	return 0;
}

/* Over the whole 1024-byte superblock, its checksum field zeroed */
static int jsb_csum_ok(const struct jbd2_superblock *jsb)
{
	struct jbd2_superblock copy = *jsb;

	copy.s_checksum = 0;
	return get_be32(&jsb->s_checksum) ==
		ext2fs_crc32c_le(~0U, (unsigned char *) &copy, sizeof(copy));
}

/* journal_check_superblock()'s checks, in its order */
static errcode_t check_jsb(struct ext2fs_journal *j,
			   const struct jbd2_superblock *jsb)
{
	__u32 type = get_be32(&jsb->s_header.h_blocktype), nfc = 0;

	if (get_be32(&jsb->s_header.h_magic) != JBD2_MAGIC ||
	    get_be32(&jsb->s_blocksize) != j->blocksize)
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "no valid journal "
			   "superblock");
	if (type != JBD2_SUPERBLOCK_V1 && type != JBD2_SUPERBLOCK_V2)
		return say(j, EXT2_ET_JOURNAL_UNSUPPORTED, "journal "
			   "superblock of unknown format %u", type);
	if (j->maxlen > j->total_len)
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "journal inode too "
			   "short: %u blocks, the journal says %u",
			   j->total_len, j->maxlen);
	if (!j->first || j->first >= j->total_len)
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "invalid first log "
			   "block %u", j->first);
	if (type == JBD2_SUPERBLOCK_V1)
		return 0;
	if (get_be32(&jsb->s_feature_ro_compat) ||
	    (j->incompat & ~JBD2_KNOWN_INCOMPAT))
		return say(j, EXT2_ET_JOURNAL_UNSUPPORTED, "unknown journal "
			   "features (incompat 0x%x, ro_compat 0x%x)",
			   j->incompat, get_be32(&jsb->s_feature_ro_compat));
	if (j->incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT)
		nfc = get_be32(&jsb->s_num_fc_blks) ?: JBD2_DEFAULT_FC_BLOCKS;
	if (j->maxlen < JBD2_MIN_JOURNAL_BLOCKS ||
	    j->maxlen - JBD2_MIN_JOURNAL_BLOCKS < nfc)
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "journal too short: "
			   "%u blocks, %u of them for fast commits",
			   j->maxlen, nfc);
	if ((j->incompat & JBD2_FEATURE_INCOMPAT_CSUM_V2) &&
	    (j->incompat & JBD2_FEATURE_INCOMPAT_CSUM_V3))
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "journal checksums "
			   "v2 and v3 at once");
	if (has_csum_v2or3(j) && (j->compat & JBD2_FEATURE_COMPAT_CHECKSUM))
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "journal checksums "
			   "v1 and v2/v3 at once");
	if (!has_csum_v2or3(j))
		return 0;
	if (jsb->s_checksum_type != JBD2_CRC32C_CHKSUM)
		return say(j, EXT2_ET_JOURNAL_UNSUPPORTED, "unknown journal "
			   "checksum type %u", jsb->s_checksum_type);
	if (!jsb_csum_ok(jsb))
		return say(j, EXT2_ET_JOURNAL_BAD_CSUM, "the journal "
			   "superblock fails its checksum");
	return 0;
}

static errcode_t map_journal(struct ext2fs_journal *j, ext2_ino_t ino)
{
	struct ext2_inode inode;
	errcode_t retval;

	retval = ext2fs_read_inode(j->fs, ino, &inode);
	if (retval)
		return say(j, retval, "cannot read the journal inode %u", ino);
	if (!LINUX_S_ISREG(inode.i_mode) ||
	    EXT2_I_SIZE(&inode) / j->blocksize < JBD2_MIN_JOURNAL_BLOCKS ||
	    EXT2_I_SIZE(&inode) / j->blocksize > (1ULL << 31))
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "the journal inode %u "
			   "is not a journal (mode 0%o, %llu bytes)", ino,
			   inode.i_mode,
			   (unsigned long long) EXT2_I_SIZE(&inode));
	j->total_len = EXT2_I_SIZE(&inode) / j->blocksize;
	if (j->total_len > ext2fs_blocks_count(j->fs->super))
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "the journal inode %u "
			   "is larger than the filesystem", ino);
	retval = ext2fs_get_arrayzero(j->total_len, sizeof(*j->bmap),
				      &j->bmap);
	if (retval)
		return retval;
	retval = ext2fs_block_iterate3(j->fs, ino, BLOCK_FLAG_READ_ONLY |
				       BLOCK_FLAG_DATA_ONLY, NULL,
				       map_journal_block, j);
	if (retval)
		return say(j, retval, "cannot map the journal inode %u", ino);
	return 0;
}

/*
 * Load the journal of @fs (as found on disk: the kernel too reads the
 * journal inode before the replay) and check its superblock as the
 * kernel does before it replays anything.
 */
errcode_t ext2fs_journal_load(ext2_filsys fs, struct ext2fs_journal **ret)
{
	struct ext2_super_block *sb = fs->super;
	struct jbd2_superblock *jsb = NULL;
	struct ext2fs_journal *j;
	errcode_t retval;

	retval = ext2fs_get_memzero(sizeof(*j), &j);
	if (retval)
		return retval;
	*ret = j;
	j->fs = fs;
	j->blocksize = fs->blocksize;
	if (!ext2fs_has_feature_journal(sb))
		return say(j, EXT2_ET_JOURNAL_DAMAGED, "the filesystem needs "
			   "recovery but has no journal");
	if (!sb->s_journal_inum)
		return say(j, EXT2_ET_JOURNAL_EXTERNAL, "the journal is on "
			   "another device (0x%x); it cannot be replayed "
			   "from this one", sb->s_journal_dev);
	retval = map_journal(j, sb->s_journal_inum);
	if (retval)
		return retval;
	retval = ext2fs_get_mem(fs->blocksize, &jsb);
	if (retval)
		return retval;
	retval = ext2fs_journal_read_block(j, 0, jsb);
	if (retval)
		goto errout;
	j->maxlen = get_be32(&jsb->s_maxlen);
	j->first = get_be32(&jsb->s_first);
	j->sequence = get_be32(&jsb->s_sequence);
	j->start = get_be32(&jsb->s_start);
	if (get_be32(&jsb->s_header.h_blocktype) == JBD2_SUPERBLOCK_V2) {
		j->compat = get_be32(&jsb->s_feature_compat);
		j->incompat = get_be32(&jsb->s_feature_incompat);
	}
	retval = check_jsb(j, jsb);
	if (retval)
		goto errout;
	if (j->maxlen < j->total_len)
		j->total_len = j->maxlen;
	if (has_csum_v2or3(j))
		j->csum_seed = ext2fs_crc32c_le(~0U, jsb->s_uuid,
				     sizeof(jsb->s_uuid));
	j->last = j->maxlen;
	if (j->incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT) {
		j->fc_last = j->maxlen;
		j->last = j->maxlen - (get_be32(&jsb->s_num_fc_blks) ?:
				       JBD2_DEFAULT_FC_BLOCKS);
		j->fc_first = j->last + 1;
	}
errout:
	ext2fs_free_mem(&jsb);
	return retval;
}

void ext2fs_journal_free(struct ext2fs_journal *j)
{
	if (!j)
		return;
	ext2fs_free_mem(&j->bmap);
	ext2fs_free_mem(&j);
}
