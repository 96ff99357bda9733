/*
 * fc_replay.c --- the fast commits that follow the last full commit
 *
 * Placeholder until the replay of fast commits lands: it finds whether
 * the fast-commit area holds a commit for the transaction that follows
 * the last full one, and refuses such a journal rather than read a tree
 * without those commits.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "journal_replay.h"

#define FC_TAG_HEAD	9	/* EXT4_FC_TAG_HEAD */

struct fc_head {
	__u16	tag, len;	/* little-endian, as ext4 writes them */
	__u32	features, tid;
};

errcode_t ext2fs_fc_replay(ext2_filsys fs, struct ext2fs_journal *j,
			   struct ext2fs_replay_stats *stats)
{
	struct fc_head h;
	unsigned char *buf;
	errcode_t retval;

	(void) fs;
	if (j->fc_first >= j->total_len)
		return 0;
	retval = ext2fs_get_mem(j->blocksize, &buf);
	if (retval)
		return retval;
	retval = ext2fs_journal_read_block(j, j->fc_first, buf);
	if (retval)
		goto errout;
	memcpy(&h, buf, sizeof(h));
	if (ext2fs_le16_to_cpu(h.tag) == FC_TAG_HEAD &&
	    ext2fs_le32_to_cpu(h.tid) == j->end_tid) {
		snprintf(stats->why, sizeof(stats->why), "the journal holds "
			 "fast commits of transaction %u, which this version "
			 "cannot replay", j->end_tid);
		retval = EXT2_ET_JOURNAL_UNSUPPORTED;
	}
errout:
	ext2fs_free_mem(&buf);
	return retval;
}
