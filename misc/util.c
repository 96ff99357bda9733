/*
 * util.c --- helpers shared by the e2cryptbak commands
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "e2cryptbak.h"
#include "ext2fs/journal_replay.h"

/* Why standard output failed, where the command saw it happen */
int e2cb_stdout_errno;

/* A device or image shorter than its filesystem has lost data. */
static errcode_t check_device_size(const char *device, ext2_filsys fs)
{
	blk64_t dev_blocks = 0;
	errcode_t retval;

	retval = ext2fs_get_device_size2(device, fs->blocksize, &dev_blocks);
	if (retval == EXT2_ET_UNIMPLEMENTED)
		return 0;
	if (retval) {
		com_err(program_name, retval, "while finding the size of %s",
			device);
		return retval;
	}
	if (dev_blocks >= ext2fs_blocks_count(fs->super))
		return 0;
	com_err(program_name, 0, "%s is truncated: its filesystem has %llu "
		"blocks, it holds only %llu", device,
		(unsigned long long) ext2fs_blocks_count(fs->super),
		(unsigned long long) dev_blocks);
	return EXT2_ET_SHORT_READ;
}

/*
 * Open @device through libext2fs.  A filesystem mounted read-write,
 * however the kernel reaches it, is changing under us (and must never be
 * written by us): refuse it.  A read-only mount is stable and may be read.
 */
errcode_t e2cb_open_fs(const char *device, int flags, ext2_filsys *ret_fs)
{
	return e2cb_open_fs2(device, flags, unix_io_manager, ret_fs);
}

errcode_t e2cb_open_fs2(const char *device, int flags, io_manager io,
			ext2_filsys *ret_fs)
{
	errcode_t retval;

	retval = e2cb_check_source(device, flags & EXT2_FLAG_RW ?
				    E2CB_CHECK_WRITE : 0);
	if (retval)
		return retval;
	retval = ext2fs_open2(device, NULL, flags | EXT2_FLAG_64BITS, 0, 0,
			      io, ret_fs);
	if (retval) {
		com_err(program_name, retval, "while opening %s", device);
		if (retval == EXT2_ET_BAD_MAGIC ||
		    retval == EXT2_ET_SHORT_READ)
			com_err(program_name, 0, "%s does not hold an ext4 "
				"filesystem (or it is damaged)", device);
		return retval;
	}
	retval = check_device_size(device, *ret_fs);
	if (retval)
		ext2fs_close_free(ret_fs);
	return retval;
}

/*
 * Open a source to read it as the kernel would mount it: an image of a
 * filesystem in use has its journal replayed and its orphans handled in
 * memory (lib/ext2fs/open_replayed.c), never on the device.  With @stale
 * the on-disk state is read as it is, on purpose, and said so.
 */
errcode_t e2cb_open_source(const char *device, int stale,
			   struct ext2fs_replay_stats *st, ext2_filsys *ret_fs)
{
	ext2_filsys fs = NULL;
	errcode_t retval;

	memset(st, 0, sizeof(*st));
	retval = e2cb_open_fs(device, 0, &fs);
	if (retval || !ext2fs_needs_replay(fs)) {
		*ret_fs = fs;
		return retval;
	}
	/* the handle opened and checked above is the replay's stale one */
	retval = ext2fs_replay_fs(fs, device, EXT2_FLAG_64BITS,
				  stale ? EXT2FS_REPLAY_STALE : 0, st, ret_fs);
	if (retval || *ret_fs != fs)
		ext2fs_close_free(&fs);
	if (retval) {
		com_err(program_name, retval, "while replaying the journal "
			"of %s%s%s", device, st->why[0] ? ": " : "", st->why);
		com_err(program_name, 0, "%s needs recovery that cannot be "
			"done as the kernel would do it; --stale reads its "
			"stale on-disk state instead", device);
		return retval;
	}
	if (st->state == EXT2FS_REPLAY_SKIPPED)
		com_err(program_name, 0, "%s: needs journal recovery; reading "
			"the stale on-disk state, as --stale asks: it is NOT "
			"what the kernel would mount", device);
	else
		com_err(program_name, 0, "%s: replayed the journal in memory: "
			"%u transactions, %u blocks, %u fast commits, %u "
			"orphans", device, st->transactions, st->blocks,
			st->fc_commits, st->orphans);
	return 0;
}

/* What the header says of the source's journal, for list and verify */
void e2cb_journal_state(const struct e2cb_header *h, char *buf, size_t size)
{
	switch (h->journal_state) {
	case E2CB_JOURNAL_CLEAN:
		snprintf(buf, size, "clean");
		break;
	case E2CB_JOURNAL_REPLAYED:
		snprintf(buf, size, "replayed: %u transactions, %u blocks, "
			 "%u fast commits, %u orphans",
			 h->replay_transactions, h->replay_blocks,
			 h->replay_fast_commits, h->replay_orphans);
		break;
	case E2CB_JOURNAL_STALE:
		snprintf(buf, size, "NOT replayed (--stale): the stale "
			 "on-disk state of a filesystem that needed "
			 "recovery");
		break;
	default:
		snprintf(buf, size, "unknown state %u", h->journal_state);
	}
}

static int has_extra_field(size_t inode_size,
			   const struct ext2_inode_large *inode, size_t end)
{
	return inode_size > EXT2_GOOD_OLD_INODE_SIZE &&
	       EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize >= end &&
	       EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize <= inode_size;
}

/* The low two bits of an _extra field extend the epoch; the rest is ns. */
static void decode_time(__u32 sec, __u32 extra, int has_extra,
			struct e2cb_time *t)
{
	t->sec = (__s32) sec;
	t->nsec = 0;
	if (has_extra) {
		t->sec += (int64_t) (extra & 3) << 32;
		t->nsec = extra >> 2;
	}
}

#define FIELD_END(f) (offsetof(struct ext2_inode_large, f) + \
		      sizeof(((struct ext2_inode_large *) 0)->f))

/* An _extra field, or 0 where the inode (128 bytes, say) has none */
#define EXTRA(inode, size, f) \
	(has_extra_field(size, inode, FIELD_END(f)) ? (inode)->f : 0)

void e2cb_inode_times(const struct ext2_inode_large *inode,
		      size_t inode_size, struct e2cb_inode_rec *r)
{
	decode_time(inode->i_atime, EXTRA(inode, inode_size, i_atime_extra),
		    has_extra_field(inode_size, inode, FIELD_END(i_atime_extra)),
		    &r->atime);
	decode_time(inode->i_mtime, EXTRA(inode, inode_size, i_mtime_extra),
		    has_extra_field(inode_size, inode, FIELD_END(i_mtime_extra)),
		    &r->mtime);
	decode_time(inode->i_ctime, EXTRA(inode, inode_size, i_ctime_extra),
		    has_extra_field(inode_size, inode, FIELD_END(i_ctime_extra)),
		    &r->ctime);
	memset(&r->crtime, 0, sizeof(r->crtime));
	if (has_extra_field(inode_size, inode, FIELD_END(i_crtime_extra))) {
		decode_time(inode->i_crtime, inode->i_crtime_extra, 1,
			    &r->crtime);
		r->rflags |= E2CB_IF_CRTIME;
	}
	r->projid = 0;
	if (has_extra_field(inode_size, inode, FIELD_END(i_projid))) {
		r->projid = inode->i_projid;
		r->rflags |= E2CB_IF_PROJID;
	}
}

/* Device numbers as the kernel decodes them (old and new encodings) */
void e2cb_inode_rdev(const struct ext2_inode *inode, uint32_t *major,
		     uint32_t *minor)
{
	__u32 dev;

	if (inode->i_block[0]) {
		dev = inode->i_block[0];
		*major = (dev >> 8) & 0xff;
		*minor = dev & 0xff;
	} else {
		dev = inode->i_block[1];
		*major = (dev & 0xfff00) >> 8;
		*minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
	}
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	while (n--) {
		*out++ = digits[*p >> 4];
		*out++ = digits[*p++ & 15];
	}
	*out = 0;
}

/* "v2 AES-256-XTS/AES-256-CTS pad32 iv_ino_lblk_64 du512 key=..." */
void e2cb_format_policy(const uint8_t *ctx, size_t len, char *buf,
			size_t bufsize)
{
	char key[2 * FSCRYPT_KEY_IDENTIFIER_SIZE + 1];
	char du[16] = "";
	uint8_t flags;

	if (ext2fs_validate_encryption_context(ctx, len)) {
		snprintf(buf, bufsize, "invalid-context");
		return;
	}
	flags = ctx[3];
	if (ctx[0] == FSCRYPT_CONTEXT_V1) {
		hex(ctx + 4, FSCRYPT_KEY_DESCRIPTOR_SIZE, key);
	} else {
		hex(ctx + 8, FSCRYPT_KEY_IDENTIFIER_SIZE, key);
		if (ctx[4])
			snprintf(du, sizeof(du), " du%u", 1U << ctx[4]);
	}
	snprintf(buf, bufsize, "v%u %s/%s pad%u%s%s%s%s %s=%s", ctx[0],
		 ext2fs_encryption_mode_name(ctx[1]),
		 ext2fs_encryption_mode_name(ctx[2]),
		 4U << (flags & FSCRYPT_POLICY_FLAGS_PAD_MASK),
		 (flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) ? " direct_key" : "",
		 (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) ?
		 " iv_ino_lblk_64" : "",
		 (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32) ?
		 " iv_ino_lblk_32" : "", du,
		 ctx[0] == FSCRYPT_CONTEXT_V1 ? "descriptor" : "key",
		 key);
}

void e2cb_uuid_string(const uint8_t *uuid, char *out)
{
	int i;

	for (i = 0; i < 16; i++) {
		out += sprintf(out, "%02x", uuid[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*out++ = '-';
	}
	*out = 0;
}

/*
 * A passphrase salt (s_encrypt_pw_salt) as "e4crypt add_key -S" takes
 * it: "0x" and 32 hex digits.  Returns 0 for the all-zero salt, which
 * the file system does not have yet.
 */
int e2cb_salt_string(const uint8_t *salt, char *out)
{
	int i, set = 0;

	out += sprintf(out, "0x");
	for (i = 0; i < 16; i++) {
		out += sprintf(out, "%02x", salt[i]);
		set |= salt[i];
	}
	return set != 0;
}

struct lookup {
	const uint8_t *name;
	size_t len;
	ext2_ino_t ino;
};

static int lookup_proc(ext2_ino_t dir_ino EXT2FS_ATTR((unused)),
			int entry EXT2FS_ATTR((unused)),
			struct ext2_dir_entry *de,
		       int offset EXT2FS_ATTR((unused)),
		       int blocksize EXT2FS_ATTR((unused)),
		       char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct lookup *l = priv;

	if ((size_t) ext2fs_dirent_name_len(de) != l->len ||
	    memcmp(de->name, l->name, l->len))
		return 0;
	l->ino = de->inode;
	return DIRENT_ABORT;
}

/* Find the entry of @dir named by the @len bytes at @name. */
errcode_t e2cb_lookup_raw(ext2_filsys fs, ext2_ino_t dir,
			  const uint8_t *name, size_t len, ext2_ino_t *ret)
{
	struct ext4_encrypted_name n;
	struct ext2_inode inode;
	struct lookup l;
	errcode_t retval;

	/*
	 * By the index when there is one, but for a name whose hash is
	 * stored, not computed, and only in a target being written: a
	 * source may be damaged, and is read without its index.
	 */
	if (len && len <= EXT2_NAME_LEN &&
	    !ext2fs_read_inode(fs, dir, &inode) &&
	    (inode.i_flags & EXT2_INDEX_FL) && !ext4_hash_in_dirent(&inode) &&
	    (fs->flags & EXT2_FLAG_RW)) {
		memset(&n, 0, sizeof(n));
		memcpy(n.name, name, len);
		n.name_len = len;
		retval = ext2fs_dx_lookup(fs, dir, &n, ret);
		if (!retval || retval == EXT2_ET_FILE_NOT_FOUND)
			return retval;
	}
	l.name = name;
	l.len = len;
	l.ino = 0;
	retval = ext2fs_dir_iterate2(fs, dir, 0, NULL, lookup_proc, &l);
	if (retval)
		return retval;
	if (!l.ino)
		return EXT2_ET_FILE_NOT_FOUND;
	*ret = l.ino;
	return 0;
}

/*
 * Resolve @path from the root.  Inside an encrypted directory a
 * component is the base64url of the raw name, as `e2cryptbak list`
 * shows it; no string function sees the decoded bytes.
 */
/*
 * A path that begins "<N>" starts at inode N, as in debugfs: a deep
 * encrypted tree's base64url path may be longer than any PATH_MAX.
 */
static errcode_t start_inode(ext2_filsys fs, const char **p,
			     ext2_ino_t *ino)
{
	struct ext2_inode inode;
	unsigned long n;
	char *end;
	errcode_t retval;

	if (**p != '<')
		return 0;
	errno = 0;
	n = strtoul(*p + 1, &end, 10);
	if (errno || end == *p + 1 || *end != '>' || !n ||
	    n > fs->super->s_inodes_count)
		return EXT2_ET_BAD_INODE_NUM;
	if ((n < EXT2_FIRST_INODE(fs->super) && n != EXT2_ROOT_INO) ||
	    !ext2fs_test_inode_bitmap2(fs->inode_map, n))
		return EXT2_ET_BAD_INODE_NUM;
	retval = ext2fs_read_inode(fs, n, &inode);
	if (retval)
		return retval;
	if (!inode.i_links_count)
		return EXT2_ET_BAD_INODE_NUM;
	*ino = n;
	*p = end + 1;
	return 0;
}

errcode_t e2cb_resolve_path(ext2_filsys fs, const char *path,
			    ext2_ino_t *ret)
{
	return e2cb_resolve_name(fs, path, ret, NULL, NULL);
}

/*
 * e2cb_resolve_path(), and also the directory of the last component and
 * its raw name: *@dir is 0 when @path has no component ("/", "<N>").
 */
errcode_t e2cb_resolve_name(ext2_filsys fs, const char *path,
			    ext2_ino_t *ret, ext2_ino_t *dir,
			    struct ext4_encrypted_name *name)
{
	uint8_t raw[EXT2_NAME_LEN];
	struct ext2_inode inode;
	struct lookup l;
	const char *p = path, *end;
	ext2_ino_t ino = EXT2_ROOT_INO;
	errcode_t retval;

	if (dir)
		*dir = 0;

	if (*p == '<') {
		if (!fs->inode_map) {
			retval = ext2fs_read_inode_bitmap(fs);
			if (retval)
				return retval;
		}
		retval = start_inode(fs, &p, &ino);
		if (retval)
			return retval;
	}
	while (*p) {
		for (; *p == '/'; p++)
			;
		if (!*p)
			break;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		retval = ext2fs_read_inode(fs, ino, &inode);
		if (retval)
			return retval;
		if (!LINUX_S_ISDIR(inode.i_mode))
			return EXT2_ET_NO_DIRECTORY;
		l.name = (const uint8_t *) p;
		l.len = end - p;
		if (inode.i_flags & EXT4_ENCRYPT_FL) {
			if (e2cb_b64url_decode(p, end - p, raw, sizeof(raw),
					       &l.len))
				return EXT2_ET_FILE_NOT_FOUND;
			l.name = raw;
		}
		if (l.len > EXT2_NAME_LEN)
			return EXT2_ET_FILE_NOT_FOUND;
		if (dir)
			*dir = ino;
		if (name) {
			memset(name, 0, sizeof(*name));
			memcpy(name->name, l.name, l.len);
			name->name_len = l.len;
		}
		retval = e2cb_lookup_raw(fs, ino, l.name, l.len, &ino);
		if (retval)
			return retval;
		p = end;
	}
	*ret = ino;
	return 0;
}

/* Where ext2fs_dir_walk() found damage: "block 3 (at 1234), offset 40" */
void e2cb_dir_damage_where(const struct ext2fs_dir_damage *d, char *buf,
			   size_t size)
{
	int n;

	n = snprintf(buf, size, "%s %llu", d->lost == EXT2FS_DIR_LOST_REST ?
		     "from block" : "block", (unsigned long long) d->lblk);
	if (d->pblk && n > 0 && (size_t) n < size)
		n += snprintf(buf + n, size - n, " (at %llu)",
			      (unsigned long long) d->pblk);
	if ((d->lost == EXT2FS_DIR_LOST_ENTRY ||
	     d->lost == EXT2FS_DIR_LOST_REST_OF_BLOCK) && n > 0 &&
	    (size_t) n < size)
		n += snprintf(buf + n, size - n, ", offset %u", d->offset);
	if (d->ino && d->lost == EXT2FS_DIR_LOST_ENTRY && n > 0 &&
	    (size_t) n < size)
		snprintf(buf + n, size - n, " (inode %u)", d->ino);
}

/*
 * The signals that end a command early: SIGHUP, SIGINT and SIGTERM.
 * e2cb_catch_signals() gives them to @handler, with all three held off
 * while it runs, and keeps what they did before; signals that were
 * ignored (nohup) stay ignored.  e2cb_release_signals() puts it back.
 */
static const int end_signals[E2CB_END_SIGNALS] = { SIGHUP, SIGINT, SIGTERM };

/*
 * The mode an archived @mode (type bits included) becomes under
 * @policy, @mask being the umask.  Set-id bits go, on all but
 * directories, with --no-setid, and where the archived owner or group
 * does not come with them (@owner_changed): chown(2) would clear them
 * too, and a file that runs as someone the archive did not name is not
 * what it asked for.
 */
uint32_t e2cb_policy_mode(unsigned int policy, uint32_t mode, uint32_t mask,
			  int owner_changed)
{
	if (policy & E2CB_NO_SAME_PERMS)
		mode &= LINUX_S_IFMT | (0777 & ~mask);
	if (((policy & E2CB_NO_SETID) || owner_changed) &&
	    !LINUX_S_ISDIR(mode))
		mode &= ~(LINUX_S_ISUID | LINUX_S_ISGID);
	return mode;
}

/* Is this stored attribute security.capability (name index 6)? */
int e2cb_xattr_is_capability(int index, const char *name, size_t name_len)
{
	return index == 6 && name_len == 10 &&
	       !memcmp(name, "capability", 10);
}

/* security.capability goes with the set-id bits, as on chown(2) */
int e2cb_policy_drops_caps(unsigned int policy, int owner_changed)
{
	return (policy & E2CB_NO_SETID) || owner_changed;
}

uint32_t e2cb_get_umask(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return mask;
}

void e2cb_end_signal_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < E2CB_END_SIGNALS; i++)
		sigaddset(set, end_signals[i]);
}

void e2cb_catch_signals(struct e2cb_saved_signals *saved,
			void (*handler)(int), int flags)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	e2cb_end_signal_set(&sa.sa_mask);
	for (i = 0; i < E2CB_END_SIGNALS; i++) {
		sigaction(end_signals[i], NULL, &saved->sa[i]);
		if (saved->sa[i].sa_handler != SIG_IGN)
			sigaction(end_signals[i], &sa, NULL);
	}
}

void e2cb_release_signals(const struct e2cb_saved_signals *saved)
{
	size_t i;

	for (i = 0; i < E2CB_END_SIGNALS; i++)
		sigaction(end_signals[i], &saved->sa[i], NULL);
}
