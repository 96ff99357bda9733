/*
 * restore.c --- e2cryptbak restore: write an archive back into an
 * unmounted ext4 filesystem without the key
 *
 * Names, contexts and ciphertext go back exactly as they were stored, so
 * the owner's key opens every file again.  The archive is checked whole
 * (and the target measured against it) before the first write; the
 * target is never written while mounted.  A fatal signal stops the
 * restore between two writes, with the target closed consistent.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "e2cryptbak.h"

/* inode flags that are the file's own, not artefacts of its layout */
#define RESTORE_FLAGS	(EXT2_SECRM_FL | EXT2_UNRM_FL | EXT2_SYNC_FL | \
			 EXT2_IMMUTABLE_FL | EXT2_APPEND_FL | \
			 EXT2_NODUMP_FL | EXT2_NOATIME_FL | \
			 EXT4_ENCRYPT_FL | EXT2_DIRSYNC_FL | \
			 EXT2_TOPDIR_FL | EXT4_PROJINHERIT_FL | \
			 EXT4_CASEFOLD_FL)

struct dir_frame {
	ext2_ino_t ino;
	blk64_t hint;			/* last block we linked into */
	int encrypted;
	int made;			/* by us: it may go inline */
};

struct ino_map {
	ext2_ino_t *from, *to;
	size_t count, size;
};

/* The policy part of a context: all but the nonce */
#define POLICY_MAX	24

/* An open directory of pass one, by depth */
struct plan_dir {
	uint64_t id;			/* its entry's number */
	uint8_t policy[POLICY_MAX];
	size_t policy_len;		/* 0: unencrypted */
};

/* An inode with several names: what its hard links must agree with */
struct link_info {
	ext2_ino_t ino;			/* in the archive; 0: free slot */
	ext2_ino_t to;			/* in the target */
	uint32_t mode;
	uint32_t names;			/* seen so far */
	uint8_t policy[POLICY_MAX];
	size_t policy_len;
};

struct link_table {
	struct link_info *slot;
	size_t size, count;		/* size: a power of 2 */
};

/* Names seen, as (directory, name) hashes; 0 is a free slot */
struct name_set {
	uint64_t *slot;
	size_t size, count;
};

/* What pass one learns about the archive and asks of the target */
struct plan {
	uint64_t entries, inodes, blocks, dirs, name_bytes;
	int has_encrypted, has_encrypted_data, has_lblk_policy;
	int has_casefold;
	int has_verity;			/* verity files with their tree */
	uint64_t verity_untreed;	/* and without: unencrypted ones */
	int has_v1;			/* e4crypt's passphrase keys are v1 */
	int root_encrypted;
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
	uint8_t (*digest)[E2CB_ENTRY_DIGEST_LEN];	/* each entry's */
	size_t digest_size;
	uint8_t stream[E2CB_STREAM_DIGEST_LEN];
	/* for the checks of each entry against its directory */
	struct plan_dir *open_dirs;
	size_t open_dirs_size;
	struct name_set names;
	struct link_table linked;
	/* for the target's checks */
	uint64_t max_size;		/* of a regular file, or its data */
	uint64_t max_symlink;
	uint64_t devices;		/* that --no-devices refuses */
	char *xattr_misfit;		/* the first entry whose attributes
					 * do not fit, refused */
};

/* A regular file's data goes to disk a stage at a time (fill_extents.c) */
#define FILL_STAGE_SIZE	(1U << 20)

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
	const char *shown;		/* the archive, for messages */
	int archive_fd;			/* every pass reads this one */
	ext2_filsys fs;
	struct e2cb_reader *r;
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
	int lock_fd;			/* holds the flock on the target */
	int writing;			/* the first write may have been done */
};

/*
 * SIGHUP, SIGINT and SIGTERM only ask us to stop: the loops look at
 * stop_signal between entries and between the data pieces of a file,
 * the entry being written is taken back, the filesystem is closed
 * consistent, and then we die of the signal (a shell still sees it).
 * Signals that were ignored (nohup) stay ignored.
 */
static struct e2cb_saved_signals saved_signals;
static volatile sig_atomic_t stop_signal;

static void note_signal(int sig)
{
	stop_signal = sig;
}

static void catch_signals(void)
{
	/* reads of the archive and writes to the target go on */
	e2cb_catch_signals(&saved_signals, note_signal, SA_RESTART);
}

static void release_signals(void)
{
	e2cb_release_signals(&saved_signals);
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGHUP: return "SIGHUP";
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	}
	return "a signal";
}

/* Everything is closed: die of the signal that stopped us. */
static void die_of_signal(void)
{
	int sig = stop_signal;

	release_signals();
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * For the test suite only (tests/r_takeback): E2CRYPTBAK_TEST_IO_FAIL=E:N
 * fails, with EIO and once, the Nth block read or write of the target
 * made while the writing pass handles its Eth entry (0 the archive's
 * root; E the number of entries: the last directories closed), so that
 * every failure point of every kind of entry can be reached and its
 * take-back checked.  Only the environment sets it, never an archive;
 * restore says so when it fires.  The channel's own manager is kept,
 * with its reads and writes counted first.
 */
static struct {
	uint64_t entry, nth;		/* where to fail */
	uint64_t at, count;		/* the entry now, its requests */
	int set, armed, fired;
	io_manager real;
	struct struct_io_manager shim;
} fault;

static errcode_t fault_hit(void)
{
	if (!fault.armed || fault.fired || ++fault.count != fault.nth)
		return 0;
	fault.fired = 1;
	fprintf(stderr, "%s: test: I/O request %llu of entry %llu fails\n",
		program_name, (unsigned long long) fault.nth,
		(unsigned long long) fault.entry);
	return EIO;
}

static errcode_t fault_read_blk(io_channel ch, unsigned long blk, int count,
				void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval : fault.real->read_blk(ch, blk, count, buf);
}

static errcode_t fault_write_blk(io_channel ch, unsigned long blk, int count,
				 const void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval : fault.real->write_blk(ch, blk, count, buf);
}

static errcode_t fault_read_blk64(io_channel ch, unsigned long long blk,
				  int count, void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval :
		fault.real->read_blk64(ch, blk, count, buf);
}

static errcode_t fault_write_blk64(io_channel ch, unsigned long long blk,
				   int count, const void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval :
		fault.real->write_blk64(ch, blk, count, buf);
}

static errcode_t fault_write_byte(io_channel ch, unsigned long off, int size,
				  const void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval : fault.real->write_byte(ch, off, size, buf);
}

static void fault_install(ext2_filsys fs)
{
	const char *spec = getenv("E2CRYPTBAK_TEST_IO_FAIL");
	unsigned long long entry, nth;
	struct struct_io_manager *m = &fault.shim;

	if (!spec || sscanf(spec, "%llu:%llu", &entry, &nth) != 2 || !nth)
		return;
	fault.entry = entry;
	fault.nth = nth;
	fault.set = 1;
	fault.at = -1;
	fault.real = fs->io->manager;
	*m = *fault.real;
	m->read_blk = m->read_blk ? fault_read_blk : NULL;
	m->write_blk = m->write_blk ? fault_write_blk : NULL;
	m->read_blk64 = m->read_blk64 ? fault_read_blk64 : NULL;
	m->write_blk64 = m->write_blk64 ? fault_write_blk64 : NULL;
	m->write_byte = m->write_byte ? fault_write_byte : NULL;
	fs->io->manager = m;
}

/* The writing pass is at entry @entry now (-1: between entries) */
static void fault_arm(uint64_t entry)
{
	if (!fault.set || entry == fault.at)
		return;
	fault.at = entry;
	fault.armed = entry == fault.entry;
	fault.count = 0;
}

static errcode_t map_add(struct ino_map *m, ext2_ino_t from, ext2_ino_t to)
{
	if (m->count == m->size) {
		size_t n = m->size ? m->size * 2 : 64;
		ext2_ino_t *f = realloc(m->from, n * sizeof(*f));

		if (!f)
			return EXT2_ET_NO_MEMORY;
		m->from = f;
		f = realloc(m->to, n * sizeof(*f));
		if (!f)
			return EXT2_ET_NO_MEMORY;
		m->to = f;
		m->size = n;
	}
	m->from[m->count] = from;
	m->to[m->count++] = to;
	return 0;
}

static void map_free(struct ino_map *m)
{
	free(m->from);
	free(m->to);
}

static int policy_ties_ino(const uint8_t *ctx, size_t len)
{
	return len == FSCRYPT_CONTEXT_V2_SIZE &&
	       (ctx[3] & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
			  FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32));
}

/* The component of @path after the last '/' */
static const char *last_component(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

static int is_top_level(const char *path)
{
	return strcmp(path, ".") && !strchr(path, '/');
}

/* The raw name of an entry: from its name record, or its path */
static void entry_name(const struct e2cb_entry *e,
		       struct ext4_encrypted_name *n)
{
	const char *comp;
	size_t len;

	if (e->rec.rflags & E2CB_IF_NAME) {
		*n = e->name;
		n->has_hash = !!(e->rec.rflags & E2CB_IF_DIRENT_HASH);
		n->hash = e->rec.dirent_hash;
		n->minor_hash = e->rec.dirent_minor_hash;
		return;
	}
	memset(n, 0, sizeof(*n));
	comp = last_component(e->path);
	len = strlen(comp);
	n->name_len = len > EXT2_NAME_LEN ? 0 : len;
	memcpy(n->name, comp, n->name_len);
}

/* Blocks the data will take: each block touched by a data piece */
static errcode_t count_data(const struct e2cb_entry *e EXT2FS_ATTR((unused)),
			    uint64_t off, const void *buf EXT2FS_ATTR((unused)),
			    size_t len, void *priv)
{
	struct plan *p = priv;

	if (stop_signal)
		return EXT2_ET_CANCEL_REQUESTED;
	if (len)
		p->blocks += (off + len - 1) / p->block_size -
			     off / p->block_size + 1;
	return 0;
}

static int refuse(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: refusing to restore: ", program_name);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return E2CB_EXIT_ERROR;
}

/*
 * The root maps onto a directory (the target's root, or PATH): an
 * archive of a single file, or one forged to look so, would change
 * that directory's type.
 */
static int check_root_entry(const struct e2cb_entry *e)
{
	char msg[120];

	if (LINUX_S_ISDIR(e->rec.mode))
		return 0;
	snprintf(msg, sizeof(msg), "the archive's root is not a directory "
		 "(mode 0%o); only a directory tree can be restored",
		 e->rec.mode);
	return refuse("%s", msg);
}

static int refuse_entry(const struct e2cb_entry *e, const char *why)
{
	fprintf(stderr, "%s: refusing to restore: entry %llu (%s): %s\n",
		program_name, (unsigned long long) e->index, e->path, why);
	return E2CB_EXIT_ERROR;
}

/* splitmix64's finalizer: table slots from keys that may be sequential */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * A name in a directory, as a key: FNV-1a over the raw bytes, which may
 * be ciphertext.  Two names that hash alike only make restore refuse.
 */
static uint64_t name_key(uint64_t dir, const uint8_t *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ mix64(dir);
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ name[i]) * 0x100000001b3ULL;
	return h | 1;
}

static int name_set_has(const struct name_set *set, uint64_t key)
{
	size_t i;

	if (!set->size)
		return 0;
	for (i = mix64(key) & (set->size - 1); set->slot[i];
	     i = (i + 1) & (set->size - 1))
		if (set->slot[i] == key)
			return 1;
	return 0;
}

/* Add @key to @set; 1 if it was there already, -1 out of memory */
static int name_set_add(struct name_set *set, uint64_t key)
{
	uint64_t *old = set->slot;
	size_t old_size = set->size, i, j;

	if ((set->count + 1) * 2 > set->size) {
		set->size = old_size ? old_size * 2 : 1024;
		set->slot = calloc(set->size, sizeof(*set->slot));
		if (!set->slot) {
			set->slot = old;
			set->size = old_size;
			return -1;
		}
		for (j = 0; j < old_size; j++) {
			if (!old[j])
				continue;
			for (i = mix64(old[j]) & (set->size - 1); set->slot[i];
			     i = (i + 1) & (set->size - 1))
				;
			set->slot[i] = old[j];
		}
		free(old);
	}
	for (i = mix64(key) & (set->size - 1); set->slot[i];
	     i = (i + 1) & (set->size - 1))
		if (set->slot[i] == key)
			return 1;
	set->slot[i] = key;
	set->count++;
	return 0;
}

static struct link_info *link_find(const struct link_table *t,
				   ext2_ino_t ino)
{
	size_t i;

	if (!t->size)
		return NULL;
	for (i = mix64(ino) & (t->size - 1); t->slot[i].ino;
	     i = (i + 1) & (t->size - 1))
		if (t->slot[i].ino == ino)
			return &t->slot[i];
	return NULL;
}

static struct link_info *link_slot(struct link_info *slot, size_t size,
				   ext2_ino_t ino)
{
	size_t i;

	for (i = mix64(ino) & (size - 1); slot[i].ino && slot[i].ino != ino;
	     i = (i + 1) & (size - 1))
		;
	return &slot[i];
}

/* @l into @t (replacing an entry of its inode); EXT2_ET_NO_MEMORY */
static errcode_t link_add(struct link_table *t, const struct link_info *l)
{
	struct link_info *old = t->slot, *s;
	size_t old_size = t->size, j;

	if ((t->count + 1) * 2 > t->size) {
		t->size = old_size ? old_size * 2 : 1024;
		t->slot = calloc(t->size, sizeof(*t->slot));
		if (!t->slot) {
			t->slot = old;
			t->size = old_size;
			return EXT2_ET_NO_MEMORY;
		}
		for (j = 0; j < old_size; j++)
			if (old[j].ino)
				*link_slot(t->slot, t->size, old[j].ino) =
					old[j];
		free(old);
	}
	s = link_slot(t->slot, t->size, l->ino);
	if (!s->ino)
		t->count++;
	*s = *l;
	return 0;
}

/*
 * A context's policy: what fscrypt_has_permitted_context() wants equal
 * between a directory and its children (all but the nonce).
 */
static size_t ctx_policy(const uint8_t *ctx, size_t len, uint8_t *policy)
{
	size_t n = 0;

	if (ctx && len == FSCRYPT_CONTEXT_V1_SIZE &&
	    ctx[0] == FSCRYPT_CONTEXT_V1)
		n = 12;
	else if (ctx && len == FSCRYPT_CONTEXT_V2_SIZE &&
		 ctx[0] == FSCRYPT_CONTEXT_V2)
		n = 24;
	else if (ctx)
		n = len < POLICY_MAX ? len : POLICY_MAX;
	if (n)
		memcpy(policy, ctx, n);
	return n;
}

static int same_policy(const uint8_t *a, size_t alen, const uint8_t *b,
		       size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* The kernel encrypts regular files, directories and symlinks only */
static int encryptable(uint32_t mode)
{
	return LINUX_S_ISREG(mode) || LINUX_S_ISDIR(mode) ||
	       LINUX_S_ISLNK(mode);
}

/* Open directory @e at its depth, for the entries below it */
static int push_plan_dir(struct restore *rs, const struct e2cb_entry *e)
{
	struct plan *p = &rs->plan;
	struct plan_dir *d;

	if (e2cb_grow((void **) &p->open_dirs, &p->open_dirs_size, e->depth,
		       sizeof(*p->open_dirs)))
		return -1;
	d = &p->open_dirs[e->depth];
	d->id = e->index;
	d->policy_len = ctx_policy(e->ctx, e->ctx_len, d->policy);
	return 0;
}

/*
 * An entry must fit its directory: a raw name (and a policy like the
 * directory's, for what the kernel encrypts) in an encrypted one, a
 * plain name in another, and a name no other entry there has.
 */
static int check_place(struct restore *rs, const struct e2cb_entry *e)
{
	const struct plan_dir *dir = &rs->plan.open_dirs[e->depth - 1];
	struct ext4_encrypted_name n;
	uint8_t policy[POLICY_MAX];
	size_t len;
	int named = !!(e->rec.rflags & E2CB_IF_NAME);

	if (dir->policy_len && !named)
		return refuse_entry(e, "no name record in an encrypted "
				    "directory");
	if (!dir->policy_len && named)
		return refuse_entry(e, "a name record in an unencrypted "
				    "directory");
	entry_name(e, &n);
	/* ciphertext names are padded to 16 bytes at least */
	if (named && n.name_len < 16)
		return refuse_entry(e, "a raw name shorter than 16 bytes in "
				    "an encrypted directory");
	len = ctx_policy(e->ctx, e->ctx_len, policy);
	if (dir->policy_len && !(e->rec.rflags & E2CB_IF_HARDLINK) &&
	    encryptable(e->rec.mode) &&
	    !same_policy(dir->policy, dir->policy_len, policy, len))
		return refuse_entry(e, "its encryption policy is not its "
				    "directory's");
	switch (name_set_add(&rs->plan.names,
			     name_key(dir->id, n.name, n.name_len))) {
	case 0:
		return 0;
	case 1:
		return refuse_entry(e, "its directory holds an entry of that "
				    "name already");
	}
	com_err(program_name, EXT2_ET_NO_MEMORY, "while checking names");
	return E2CB_EXIT_ERROR;
}

/* A hard link: its inode's type, its directory's policy, 65000 names */
static int check_link(struct restore *rs, const struct e2cb_entry *e)
{
	const struct plan_dir *dir = &rs->plan.open_dirs[e->depth - 1];
	struct link_info *l = link_find(&rs->plan.linked, e->rec.ino);

	if (!l)
		return refuse_entry(e, "a hard link to no earlier inode");
	if ((l->mode ^ e->rec.mode) & LINUX_S_IFMT)
		return refuse_entry(e, "a hard link whose type is not its "
				    "inode's");
	if (dir->policy_len && encryptable(l->mode) &&
	    !same_policy(dir->policy, dir->policy_len, l->policy,
			 l->policy_len))
		return refuse_entry(e, "a hard link to an inode whose "
				    "encryption policy is not its "
				    "directory's");
	if (++l->names > EXT2_LINK_MAX)
		return refuse_entry(e, "more hard links to one inode than "
				    "ext4 counts");
	return 0;
}

/* --no-same-owner gives @r to someone other than the archive says */
static int owner_changed(struct restore *rs, const struct e2cb_inode_rec *r)
{
	return (rs->opts->policy & E2CB_NO_SAME_OWNER) &&
	       (r->uid != rs->uid || r->gid != rs->gid);
}

struct xattr_list {
	struct ext2fs_raw_xattr *x;
	size_t count, size;
	int drop_caps;			/* leave security.capability out */
};

static int collect_xattr(int index, const char *name, size_t name_len,
			 const void *value, size_t value_len, void *priv)
{
	struct xattr_list *l = priv;

	if (l->drop_caps && e2cb_xattr_is_capability(index, name, name_len))
		return 0;
	if (e2cb_grow((void **) &l->x, &l->size, l->count, sizeof(*l->x)))
		return 1;
	l->x[l->count].index = index;
	l->x[l->count].name = name;
	l->x[l->count].name_len = name_len;
	l->x[l->count].value = value;
	l->x[l->count].value_len = value_len;
	l->count++;
	return 0;
}

/* The context first (it then lands in the inode), the rest after */
static errcode_t entry_xattrs(struct restore *rs, const struct e2cb_entry *e,
			      struct xattr_list *l)
{
	memset(l, 0, sizeof(*l));
	l->drop_caps = e2cb_policy_drops_caps(rs->opts->policy,
					      owner_changed(rs, &e->rec));
	if (e->ctx && collect_xattr(EXT4_XATTR_INDEX_ENCRYPTION, "c", 1,
				    e->ctx, e->ctx_len, l))
		return EXT2_ET_NO_MEMORY;
	if (e->xattrs && e2cb_xattr_rec_iterate(e->xattrs, e->xattrs_len,
						collect_xattr, l))
		return EXT2_ET_CRYPT_BAD_BLOB;
	return 0;
}

/*
 * The context and attributes go where the writing pass puts them
 * (ext2fs_xattrs_raw_write): in the inode while they fit, in order, the
 * rest in one EA block.  What does not fit is noted now, and said with
 * the target's other checks (check_fit), not found part way through the
 * restore.
 */
static int check_xattrs_fit(struct restore *rs, const struct e2cb_entry *e)
{
	ext2_filsys fs = rs->fs;
	struct xattr_list xl;
	size_t room, n_in, in_inode, in_block, len;
	char msg[240];
	errcode_t retval;

	if ((!e->ctx && !e->xattrs) || rs->plan.xattr_misfit)
		return 0;
	retval = entry_xattrs(rs, e, &xl);
	/* a new inode's fixed fields take 32 bytes past 128 (apply_rec) */
	room = ext2fs_xattrs_raw_room(fs, 32);
	if (!retval)
		retval = ext2fs_xattrs_raw_fit(fs, room, xl.x, xl.count,
					       &n_in, &in_inode, &in_block);
	free(xl.x);
	if (!retval)
		return 0;
	if (retval == EXT2_ET_EA_NO_SPACE)
		snprintf(msg, sizeof(msg), "its %sextended attributes "
			 "need %zu bytes of an EA block, which holds %zu "
			 "(the target's %u-byte inodes hold %zu bytes of "
			 "attributes, %zu of them here)",
			 e->ctx ? "encryption context and " : "",
			 in_block, (size_t) fs->blocksize -
			 sizeof(struct ext2_ext_attr_header) - sizeof(__u32),
			 EXT2_INODE_SIZE(fs->super), room, in_inode);
	else
		snprintf(msg, sizeof(msg), "its extended attributes cannot "
			 "be stored: %s", error_message(retval));
	len = strlen(e->path) + strlen(msg) + 40;
	rs->plan.xattr_misfit = malloc(len);
	if (!rs->plan.xattr_misfit)
		return refuse_entry(e, msg);
	snprintf(rs->plan.xattr_misfit, len, "entry %llu (%s): %s",
		 (unsigned long long) e->index, e->path, msg);
	return 0;
}

/*
 * An fs-verity file whose Merkle tree the archive carries (past i_size,
 * as for encrypted files; an unencrypted file's is not carried, 8.2):
 * restored with its tree, it is a verity file again.
 */
static int has_verity_tree(const struct e2cb_entry *e, uint64_t bs)
{
	return LINUX_S_ISREG(e->rec.mode) &&
		(e->rec.iflags & EXT4_VERITY_FL) &&
		e->tar_size > (e->rec.size + bs - 1) / bs * bs;
}

/* What the target must hold: sizes, symlinks */
static int note_sizes(struct plan *p, const struct e2cb_entry *e)
{
	uint64_t bs = p->block_size, size = e->rec.size;

	if (has_verity_tree(e, bs))
		p->has_verity = 1;
	else if (LINUX_S_ISREG(e->rec.mode) &&
		 (e->rec.iflags & EXT4_VERITY_FL))
		p->verity_untreed++;
	if (LINUX_S_ISREG(e->rec.mode)) {
		/* the data holds whole blocks; a verity tree lies past */
		if (!(e->rec.iflags & EXT4_VERITY_FL) &&
		    e->tar_size > (size + bs - 1) / bs * bs)
			return refuse_entry(e, "data beyond its size");
		if (size > p->max_size)
			p->max_size = size;
		if (e->tar_size > p->max_size)
			p->max_size = e->tar_size;
	}
	if (LINUX_S_ISLNK(e->rec.mode)) {
		if (!e->ctx && (!e->linkname ||
				strlen(e->linkname) != size))
			return refuse_entry(e, "a symlink whose size is not "
					    "its target's length");
		if (size > p->max_symlink)
			p->max_symlink = size;
	}
	return 0;
}

/*
 * Everything about one entry that the first pass can know, so that the
 * writing pass never fails on it.
 */
static int check_entry(struct restore *rs, const struct e2cb_entry *e)
{
	struct link_info l;
	int ret = 0;

	if (e->depth)
		ret = check_place(rs, e);
	if (!ret && (e->rec.rflags & E2CB_IF_HARDLINK))
		return check_link(rs, e);
	if (!ret)
		ret = note_sizes(&rs->plan, e);
	if (!ret)
		ret = check_xattrs_fit(rs, e);
	if (ret)
		return ret;
	if (LINUX_S_ISDIR(e->rec.mode) && push_plan_dir(rs, e))
		goto nomem;
	if (e->rec.links_count > 1 && !LINUX_S_ISDIR(e->rec.mode)) {
		memset(&l, 0, sizeof(l));
		l.ino = e->rec.ino;
		l.mode = e->rec.mode;
		l.names = 1;
		l.policy_len = ctx_policy(e->ctx, e->ctx_len, l.policy);
		if (link_add(&rs->plan.linked, &l))
			goto nomem;
	}
	return 0;
nomem:
	com_err(program_name, EXT2_ET_NO_MEMORY, "while checking %s",
		e->path);
	return E2CB_EXIT_ERROR;
}

/*
 * Each pass reads the one descriptor from its start, hashing what it
 * reads: the writing pass acts only on what the first pass checked.
 */
static errcode_t open_reader(struct restore *rs, struct e2cb_reader **r)
{
	errcode_t retval;

	*r = NULL;
	if (lseek(rs->archive_fd, 0, SEEK_SET) < 0) {
		retval = errno;
		com_err(program_name, retval, "while rewinding %s",
			rs->shown);
		return retval;
	}
	retval = e2cb_reader_open_fd(rs->archive_fd,
				     E2CB_READ_DATA | E2CB_READ_HASH, r);
	if (retval)
		fprintf(stderr, "%s: %s: %s\n", program_name, rs->shown,
			e2cb_reader_error(*r));
	return retval;
}

/*
 * Pass one: read and check the whole archive, and total what the
 * restore will need.  Nothing is written.
 */
static void note_time(struct plan *p, const struct e2cb_time *t)
{
	if (t->sec < p->time_min)
		p->time_min = t->sec;
	if (t->sec > p->time_max)
		p->time_max = t->sec;
}

static void note_times(struct plan *p, const struct e2cb_inode_rec *r)
{
	note_time(p, &r->atime);
	note_time(p, &r->mtime);
	note_time(p, &r->ctime);
	if (r->rflags & E2CB_IF_CRTIME)
		note_time(p, &r->crtime);
}

/*
 * --no-devices: every device node is named, up to a point, and the
 * restore is refused once the whole archive has been read, before the
 * first write.
 */
#define DEVICES_SHOWN	20

static void note_device(struct restore *rs, const struct e2cb_entry *e)
{
	struct plan *p = &rs->plan;

	if (!(rs->opts->policy & E2CB_NO_DEVICES) ||
	    (!LINUX_S_ISCHR(e->rec.mode) && !LINUX_S_ISBLK(e->rec.mode)))
		return;
	if (p->devices++ < DEVICES_SHOWN)
		fprintf(stderr, "%s: entry %llu (%s): %s device %u:%u\n",
			program_name, (unsigned long long) e->index, e->path,
			LINUX_S_ISCHR(e->rec.mode) ? "character" : "block",
			e->rec.rdev_major, e->rec.rdev_minor);
}

static int refuse_devices(struct restore *rs)
{
	char msg[120];

	if (!rs->plan.devices)
		return 0;
	if (rs->plan.devices > DEVICES_SHOWN)
		fprintf(stderr, "%s: and %llu more device nodes\n",
			program_name, (unsigned long long)
			(rs->plan.devices - DEVICES_SHOWN));
	snprintf(msg, sizeof(msg), "the archive holds %llu device nodes "
		 "(--no-devices)", (unsigned long long) rs->plan.devices);
	return refuse("%s", msg);
}

/*
 * Room in the target for what the first pass counted so far.  Checked
 * after every entry too: the first pass's tables (some 80 bytes an
 * entry) then stay within what the target could take, whatever the
 * archive holds.
 */
static int check_room(struct restore *rs)
{
	const struct plan *p = &rs->plan;
	ext2_filsys fs = rs->fs;
	uint64_t blocks_needed;
	char msg[120];

	/* a margin for extent tree blocks and directory slack */
	blocks_needed = p->blocks + p->name_bytes / (fs->blocksize / 2) +
			p->blocks / 64 + 16;
	if (blocks_needed > ext2fs_free_blocks_count(fs->super)) {
		snprintf(msg, sizeof(msg), "about %llu free blocks are "
			 "needed, the target has %llu",
			 (unsigned long long) blocks_needed,
			 (unsigned long long)
			 ext2fs_free_blocks_count(fs->super));
		return refuse("%s", msg);
	}
	if (p->inodes > fs->super->s_free_inodes_count) {
		snprintf(msg, sizeof(msg), "%llu inodes are needed, the "
			 "target has %u free", (unsigned long long) p->inodes,
			 fs->super->s_free_inodes_count);
		return refuse("%s", msg);
	}
	return 0;
}

static int plan_restore(struct restore *rs)
{
	struct plan *p = &rs->plan;
	struct e2cb_reader *r = NULL;
	struct e2cb_entry *e;
	errcode_t retval;
	int ret;

	retval = open_reader(rs, &r);
	if (retval) {
		e2cb_reader_close(r);
		return retval == EXT2_ET_CRYPT_BAD_BLOB ? E2CB_EXIT_DAMAGED :
			E2CB_EXIT_ERROR;
	}
	p->hdr = *e2cb_reader_header(r);
	memcpy(p->hdr_digest, e2cb_reader_entry_digest(r),
	       sizeof(p->hdr_digest));
	p->block_size = p->hdr.block_size;
	p->time_min = INT64_MAX;
	p->time_max = INT64_MIN;
	while ((ret = e2cb_reader_next(r, &e)) == 0) {
		if (stop_signal)
			break;
		if (e2cb_grow((void **) &p->digest, &p->digest_size,
			       p->entries, sizeof(*p->digest)))
			goto nomem;
		memcpy(p->digest[p->entries], e2cb_reader_entry_digest(r),
		       sizeof(*p->digest));
		p->entries++;
		ret = strcmp(e->path, ".") ? 0 : check_root_entry(e);
		if (!ret)
			ret = check_entry(rs, e);
		note_device(rs, e);
		if (ret) {
			e2cb_reader_close(r);
			return ret;
		}
		if (!strcmp(e->path, ".")) {
			p->root_encrypted = !!e->ctx;
		} else if (!(e->rec.rflags & E2CB_IF_HARDLINK)) {
			p->inodes++;
		}
		if (e->ctx) {
			p->has_encrypted = 1;
			if (LINUX_S_ISREG(e->rec.mode))
				p->has_encrypted_data = 1;
			if (policy_ties_ino(e->ctx, e->ctx_len))
				p->has_lblk_policy = 1;
			if (e->ctx[0] == FSCRYPT_CONTEXT_V1)
				p->has_v1 = 1;
		}
		if (strcmp(e->path, ".") &&
		    !(e->rec.rflags & E2CB_IF_HARDLINK) &&
		    (rs->opts->keep_ino ||
		     (e->ctx && policy_ties_ino(e->ctx, e->ctx_len))) &&
		    map_add(&p->fixed, e->rec.ino, e->rec.ino))
			goto nomem;
		if (e->rec.iflags & EXT4_CASEFOLD_FL)
			p->has_casefold = 1;
		note_times(p, &e->rec);
		if (LINUX_S_ISDIR(e->rec.mode) ||
		    (LINUX_S_ISLNK(e->rec.mode) && e->rec.size >= 60))
			p->blocks++;
		if (e->xattrs_len > 64)
			p->blocks++;
		p->name_bytes += ext2fs_dir_rec_len(e->rec.rflags &
				E2CB_IF_NAME ? e->name.name_len :
				strlen(last_component(e->path)) & 0xff, 1);
		if (is_top_level(e->path) &&
		    !(e->rec.rflags & E2CB_IF_NAME) &&
		    !strcmp(e->path, "lost+found")) {
			p->lf_mode = e->rec.mode;
			p->lf_ino = e->rec.ino;
			p->lf_encrypted = !!e->ctx;
		}
		if (is_top_level(e->path)) {
			if (e2cb_grow((void **) &p->top, &p->top_size,
				       p->ntop, sizeof(*p->top)))
				goto nomem;
			entry_name(e, &p->top[p->ntop++]);
		}
		if (e->depth == 2 && !(e->rec.rflags & E2CB_IF_NAME) &&
		    !strncmp(e->path, "lost+found/", 11)) {
			if (e2cb_grow((void **) &p->lf, &p->lf_size, p->nlf,
				       sizeof(*p->lf)))
				goto nomem;
			entry_name(e, &p->lf[p->nlf++]);
		}
		if (e2cb_reader_data(r, count_data, p)) {
			ret = -1;
			break;
		}
		ret = check_room(rs);
		if (ret) {
			e2cb_reader_close(r);
			return ret;
		}
	}
	if (stop_signal) {
		e2cb_reader_close(r);
		return E2CB_EXIT_ERROR;
	}
	if (ret < 0) {
		fprintf(stderr, "%s: %s: damaged, nothing restored: %s\n",
			program_name, rs->shown, e2cb_reader_error(r));
		e2cb_reader_close(r);
		return E2CB_EXIT_DAMAGED;
	}
	retval = e2cb_reader_stream_digest(r, p->stream);
	e2cb_reader_close(r);
	if (retval) {
		com_err(program_name, retval, "while reading %s", rs->shown);
		return E2CB_EXIT_ERROR;
	}
	return refuse_devices(rs);
nomem:
	com_err(program_name, EXT2_ET_NO_MEMORY, "while reading %s",
		rs->shown);
	e2cb_reader_close(r);
	return E2CB_EXIT_ERROR;
}

/* Inodes that could hold keys tied to this filesystem's UUID */
static int target_has_lblk_policies(ext2_filsys fs, int *found)
{
	ext2_inode_scan scan;
	struct ext2_inode_large *inode;
	__u8 ctx[EXT4_ENCRYPTED_METADATA_MAX];
	size_t len, isize = EXT2_INODE_SIZE(fs->super);
	ext2_ino_t ino;
	errcode_t retval;

	*found = 0;
	retval = ext2fs_get_mem(isize, &inode);
	if (retval)
		return retval;
	retval = ext2fs_open_inode_scan(fs, 0, &scan);
	if (retval)
		goto out;
	while (!(retval = ext2fs_get_next_inode_full(scan, &ino,
			(struct ext2_inode *) inode, isize)) && ino) {
		if (stop_signal) {
			retval = EXT2_ET_CANCEL_REQUESTED;
			break;
		}
		if (!inode->i_links_count ||
		    !(inode->i_flags & EXT4_ENCRYPT_FL))
			continue;
		if (!ext2fs_get_encryption_context(fs, ino, inode, ctx,
						   sizeof(ctx), &len) &&
		    policy_ties_ino(ctx, len)) {
			*found = 1;
			break;
		}
	}
	ext2fs_close_inode_scan(scan);
out:
	ext2fs_free_mem(&inode);
	return retval;
}

static int check_uuid(struct restore *rs, const struct e2cb_header *h)
{
	ext2_filsys fs = rs->fs;
	char want[37], have[37];
	int tied = 0;

	if (!rs->plan.has_lblk_policy ||
	    !memcmp(fs->super->s_uuid, h->uuid, 16))
		return 0;
	e2cb_uuid_string(h->uuid, want);
	e2cb_uuid_string(fs->super->s_uuid, have);
	if (!rs->opts->set_uuid) {
		fprintf(stderr, "%s: refusing to restore: the archive holds "
			"files whose encryption (IV_INO_LBLK_64/32) is tied "
			"to filesystem UUID %s and their inode numbers; the "
			"target's UUID is %s.  Use --set-uuid to give the "
			"target the archive's UUID.\n", program_name, want,
			have);
		return E2CB_EXIT_ERROR;
	}
	if (target_has_lblk_policies(fs, &tied) || tied) {
		if (stop_signal)
			return E2CB_EXIT_ERROR;
		return refuse("--set-uuid: the target already holds files "
			      "tied to its own UUID%s", "");
	}
	return 0;
}

static int cmp_ino(const void *a, const void *b)
{
	ext2_ino_t x = *(const ext2_ino_t *) a, y = *(const ext2_ino_t *) b;

	return x < y ? -1 : x > y;
}

/* Why inode @sorted[i] cannot be kept, or NULL */
static const char *ino_unfit(ext2_filsys fs, const ext2_ino_t *sorted,
			     size_t i)
{
	ext2_ino_t ino = sorted[i];

	if (i && sorted[i - 1] == ino)
		return "belongs to two entries of the archive";
	if (ino < EXT2_FIRST_INODE(fs->super))
		return "is reserved in the target";
	if (ino > fs->super->s_inodes_count)
		return "is beyond the target's last inode";
	if (ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		return "is in use in the target";
	return NULL;
}

/*
 * The inode numbers to keep must be distinct and free.  A lost+found
 * merged into the target's own keeps the target's number (it is among
 * them only by --keep-inode-numbers: it is never encrypted then).
 */
static int check_inodes_free(struct restore *rs)
{
	struct plan *p = &rs->plan;
	ext2_ino_t *sorted;
	const char *why = NULL;
	char msg[200];
	size_t i, n = 0;
	int skip_lf = rs->lost_found_merge && rs->opts->keep_ino;

	if (!rs->opts->keep_ino && !p->has_lblk_policy)
		return 0;
	sorted = malloc((p->fixed.count + 1) * sizeof(*sorted));
	if (!sorted) {
		com_err(program_name, EXT2_ET_NO_MEMORY, "while checking "
			"inode numbers");
		return E2CB_EXIT_ERROR;
	}
	for (i = 0; i < p->fixed.count; i++) {
		if (skip_lf && p->fixed.from[i] == p->lf_ino) {
			skip_lf = 0;
			continue;
		}
		sorted[n++] = p->fixed.from[i];
	}
	qsort(sorted, n, sizeof(*sorted), cmp_ino);
	for (i = 0; i < n && !why; i++)
		why = ino_unfit(rs->fs, sorted, i);
	if (why)
		snprintf(msg, sizeof(msg), "inode %u, which %s, %s",
			 sorted[i - 1], rs->opts->keep_ino ?
			 "--keep-inode-numbers keeps" :
			 "an IV_INO_LBLK policy ties its encryption to", why);
	free(sorted);
	return why ? refuse("%s", msg) : 0;
}

/*
 * e4crypt derives a v1 key from a passphrase and the salt in the
 * superblock: the archive's v1 files want the archive's salt.  A target
 * without a salt takes it (adjust_features); one with its own keeps it
 * only when asked, its own passphrase keys depending on it.
 */
static int check_salt(struct restore *rs, const struct e2cb_header *h)
{
	const uint8_t *have = rs->fs->super->s_encrypt_pw_salt;
	char want[E2CB_SALT_STRLEN], cur[E2CB_SALT_STRLEN];

	if (!rs->plan.has_v1 || rs->opts->keep_pw_salt ||
	    !e2cb_salt_string(h->encrypt_pw_salt, want) ||
	    !e2cb_salt_string(have, cur) ||
	    !memcmp(have, h->encrypt_pw_salt, 16))
		return 0;
	fprintf(stderr, "%s: refusing to restore: e4crypt derives the "
		"passphrase keys of the archive's v1-encrypted files with "
		"salt %s, and %s has salt %s.  Use --keep-pw-salt to keep "
		"the target's salt; \"e4crypt add_key -S %s\" then derives "
		"the archive's keys.\n", program_name, want, rs->opts->device,
		cur, want);
	return E2CB_EXIT_ERROR;
}

/*
 * Sizes the target's block size bounds: a file (extents map 2^32
 * blocks), a symlink (one block), an entry's extended attributes (one
 * block, and what the inode holds: check_xattrs_fit).
 */
static int check_fit(struct restore *rs)
{
	ext2_filsys fs = rs->fs;
	struct plan *p = &rs->plan;
	uint64_t max_file = ((uint64_t) fs->blocksize << 32) - 1;

	if (p->max_size > max_file)
		return refuse("the archive holds a file larger than %s's "
			      "blocks can map", rs->opts->device);
	if (p->max_symlink >= fs->blocksize)
		return refuse("the archive holds a symlink longer than %s's "
			      "block", rs->opts->device);
	if (p->xattr_misfit)
		return refuse("%s", p->xattr_misfit);
	return 0;
}

/* Everything the target must offer, checked before the first write. */
/* Times the target's inodes cannot hold: said before the first write */
static void warn_times(struct restore *rs)
{
	int extra = EXT2_INODE_SIZE(rs->fs->super) > EXT2_GOOD_OLD_INODE_SIZE;
	int64_t max = extra ? TIME_MAX_EXTRA : TIME_MAX_SMALL;
	const struct plan *p = &rs->plan;

	if (p->time_min >= TIME_MIN && p->time_max <= max)
		return;
	fprintf(stderr, "%s: the archive holds times from %lld to %lld "
		"seconds since 1970; the target's %u-byte inodes hold %lld "
		"to %lld: the others are clamped, as the kernel clamps "
		"them\n", program_name, (long long) p->time_min,
		(long long) p->time_max, EXT2_INODE_SIZE(rs->fs->super),
		(long long) TIME_MIN, (long long) max);
}

static int preflight(struct restore *rs, const struct e2cb_header *h)
{
	ext2_filsys fs = rs->fs;
	struct plan *p = &rs->plan;
	int ret;
	char msg[200];

	if (!ext2fs_has_feature_extents(fs->super))
		return refuse("%s is not ext4 (no extents feature)",
			      rs->opts->device);
	if (!(fs->super->s_state & EXT2_VALID_FS) ||
	    (fs->super->s_state & EXT2_ERROR_FS) ||
	    ext2fs_has_feature_journal_needs_recovery(fs->super))
		return refuse("%s was not cleanly unmounted or has errors; "
			      "run e2fsck first", rs->opts->device);
	if (p->has_encrypted && !ext2fs_has_feature_encrypt(fs->super)) {
		if (!rs->opts->add_encrypt)
			return refuse("%s lacks the encrypt feature; pass "
				      "--enable-encrypt to turn it on (as "
				      "tune2fs -O encrypt does)",
				      rs->opts->device);
	}
	if (p->has_encrypted_data && fs->blocksize != h->block_size) {
		snprintf(msg, sizeof(msg), "the archive's encrypted files "
			 "were written in %u-byte blocks, the target has "
			 "%u-byte blocks", h->block_size, fs->blocksize);
		return refuse("%s", msg);
	}
	if (p->has_casefold && (!ext2fs_has_feature_casefold(fs->super) ||
				fs->super->s_encoding != h->encoding))
		return refuse("the archive holds casefolded directories; "
			      "%s lacks casefold with the same encoding",
			      rs->opts->device);
	ret = check_room(rs);
	if (ret)
		return ret;
	if (check_fit(rs) || check_uuid(rs, h) || check_salt(rs, h))
		return E2CB_EXIT_ERROR;
	warn_times(rs);
	if (p->verity_untreed)
		fprintf(stderr, "%s: %llu fs-verity files are unencrypted: "
			"the archive holds no Merkle tree for them, and they "
			"are restored as plain files (fsverity enable makes "
			"them verity files again)\n", program_name,
			(unsigned long long) p->verity_untreed);
	return 0;
}

/* Out of range, a time is clamped, as the kernel clamps it on setting */
static void set_time(__u32 *sec, __u32 *extra, const struct e2cb_time *t,
		     int has_extra)
{
	int64_t max = has_extra ? TIME_MAX_EXTRA : TIME_MAX_SMALL;
	int64_t s = t->sec;
	uint32_t ns = t->nsec;

	if (s < TIME_MIN || s > max) {
		s = s < TIME_MIN ? TIME_MIN : max;
		ns = 0;
	}
	*sec = (__u32) s;
	if (has_extra)
		*extra = ((ns & 0x3fffffff) << 2) |
			 ((uint64_t) (s - (__s32) s) >> 32 & 3);
}

/*
 * Owner, mode, times, flags and project id from the archive, the owner
 * and mode as the policy lets them through
 */
static void apply_rec(struct restore *rs, struct ext2_inode_large *inode,
		      const struct e2cb_inode_rec *r)
{
	ext2_filsys fs = rs->fs;
	int extra = EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE;
	unsigned int policy = rs->opts->policy;
	uint32_t uid = r->uid, gid = r->gid;

	if (policy & E2CB_NO_SAME_OWNER) {
		uid = rs->uid;
		gid = rs->gid;
	}
	inode->i_mode = e2cb_policy_mode(policy, r->mode, rs->umask,
					 owner_changed(rs, r));
	inode->i_uid = uid & 0xffff;
	ext2fs_set_i_uid_high(*inode, uid >> 16);
	inode->i_gid = gid & 0xffff;
	ext2fs_set_i_gid_high(*inode, gid >> 16);
	inode->i_flags = (inode->i_flags & ~RESTORE_FLAGS) |
			 (r->iflags & RESTORE_FLAGS);
	if (extra && inode->i_extra_isize < 32)
		inode->i_extra_isize = 32;
	set_time(&inode->i_atime, &inode->i_atime_extra, &r->atime, extra);
	set_time(&inode->i_mtime, &inode->i_mtime_extra, &r->mtime, extra);
	set_time(&inode->i_ctime, &inode->i_ctime_extra, &r->ctime, extra);
	if (extra && (r->rflags & E2CB_IF_CRTIME))
		set_time(&inode->i_crtime, &inode->i_crtime_extra,
			 &r->crtime, 1);
	if (extra && (r->rflags & E2CB_IF_PROJID) &&
	    ext2fs_has_feature_project(fs->super))
		inode->i_projid = r->projid;
}

static errcode_t alloc_inode(struct restore *rs, const struct e2cb_entry *e,
			     ext2_ino_t parent, ext2_ino_t *ino)
{
	ext2_filsys fs = rs->fs;
	int fixed = rs->opts->keep_ino ||
		    (e->ctx && policy_ties_ino(e->ctx, e->ctx_len));
	errcode_t retval;

	if (fixed) {
		*ino = e->rec.ino;
		if (*ino < EXT2_FIRST_INODE(fs->super) ||
		    *ino > fs->super->s_inodes_count ||
		    ext2fs_test_inode_bitmap2(fs->inode_map, *ino))
			return EXT2_ET_INODE_ALLOC_FAIL;
	} else {
		retval = ext2fs_new_inode(fs, parent, e->rec.mode, NULL, ino);
		if (retval)
			return retval;
	}
	ext2fs_inode_alloc_stats2(fs, *ino, +1,
				  LINUX_S_ISDIR(e->rec.mode));
	return 0;
}

/* Map block 0 of a new inode to a fresh block holding @buf. */
static errcode_t write_first_block(ext2_filsys fs, ext2_ino_t ino,
				   struct ext2_inode_large *inode,
				   const void *buf, int is_dir)
{
	ext2_extent_handle_t handle;
	blk64_t blk;
	errcode_t retval;

	retval = ext2fs_new_block2(fs, ext2fs_find_inode_goal(fs, ino,
				   (struct ext2_inode *) inode, 0), NULL, &blk);
	if (retval)
		return retval;
	retval = is_dir ? ext2fs_write_dir_block4(fs, blk, (void *) buf, 0,
						  ino) :
		 io_channel_write_blk64(fs->io, blk, 1, buf);
	if (retval)
		return retval;
	ext2fs_block_alloc_stats2(fs, blk, +1);
	retval = ext2fs_extent_open2(fs, ino, (struct ext2_inode *) inode,
				     &handle);
	if (retval)
		return retval;
	retval = ext2fs_extent_set_bmap(handle, 0, blk, 0);
	ext2fs_extent_free(handle);
	if (retval)
		return retval;
	return ext2fs_iblk_add_blocks(fs, (struct ext2_inode *) inode, 1);
}

/* An empty extent tree in i_block, as every new file gets one */
static errcode_t init_extents(ext2_filsys fs, ext2_ino_t ino,
			      struct ext2_inode_large *inode)
{
	ext2_extent_handle_t handle;
	errcode_t retval;

	if (!ext2fs_has_feature_extents(fs->super))
		return 0;
	retval = ext2fs_extent_open2(fs, ino, (struct ext2_inode *) inode,
				     &handle);
	if (!retval)
		ext2fs_extent_free(handle);
	return retval;
}

static errcode_t write_inode(struct restore *rs, ext2_ino_t ino,
			     struct ext2_inode_large *inode)
{
	return ext2fs_write_inode_full(rs->fs, ino, (struct ext2_inode *) inode,
				       EXT2_INODE_SIZE(rs->fs->super));
}

static errcode_t make_dir_body(struct restore *rs, ext2_ino_t ino,
			       ext2_ino_t parent,
			       struct ext2_inode_large *inode)
{
	char *block;
	errcode_t retval;

	retval = ext2fs_new_dir_block(rs->fs, ino, parent, &block);
	if (retval)
		return retval;
	inode->i_links_count = 2;
	inode->i_size = rs->fs->blocksize;
	retval = write_inode(rs, ino, inode);
	if (!retval)
		retval = write_first_block(rs->fs, ino, inode, block, 1);
	if (!retval)
		retval = write_inode(rs, ino, inode);
	ext2fs_free_mem(&block);
	return retval;
}

/* Encrypted or not, a symlink's target is bytes: fast or in one block */
static errcode_t make_symlink_body(struct restore *rs, ext2_ino_t ino,
				   struct ext2_inode_large *inode,
				   const struct e2cb_entry *e)
{
	const void *target = e->symlink ? (const void *) e->symlink :
			     (const void *) e->linkname;
	size_t len = e->symlink ? e->symlink_len :
		     (e->linkname ? strlen(e->linkname) : 0);
	char *block;
	errcode_t retval;

	if (len == 0 || len >= rs->fs->blocksize || len != e->rec.size)
		return EXT2_ET_INVALID_ARGUMENT;
	inode->i_size = len;
	if (len < sizeof(inode->i_block)) {
		inode->i_flags &= ~EXT4_EXTENTS_FL;
		memset(inode->i_block, 0, sizeof(inode->i_block));
		memcpy(inode->i_block, target, len);
		return write_inode(rs, ino, inode);
	}
	retval = ext2fs_get_memzero(rs->fs->blocksize, &block);
	if (retval)
		return retval;
	memcpy(block, target, len);
	retval = write_inode(rs, ino, inode);
	if (!retval)
		retval = write_first_block(rs->fs, ino, inode, block, 0);
	if (!retval)
		retval = write_inode(rs, ino, inode);
	ext2fs_free_mem(&block);
	return retval;
}

static void set_rdev(struct ext2_inode_large *inode, uint32_t major,
		     uint32_t minor)
{
	memset(inode->i_block, 0, sizeof(inode->i_block));
	if (major < 256 && minor < 256) {
		inode->i_block[0] = major * 256 + minor;
	} else {
		inode->i_block[1] = (minor & 0xff) | (major << 8) |
				    ((minor & ~0xffU) << 12);
	}
}

static void take_range(ext2_filsys fs, blk64_t blk, blk_t num, int inuse)
{
	struct taken *t = fs->priv_data;
	size_t n = t->count;

	if (!t->on || inuse <= 0)
		return;
	if (n && t->r[n - 1].start + t->r[n - 1].len == blk) {
		t->r[n - 1].len += num;
		return;
	}
	if (e2cb_grow((void **) &t->r, &t->size, n, sizeof(*t->r))) {
		t->lost = 1;
		return;
	}
	t->r[n].start = blk;
	t->r[n].len = num;
	t->count++;
}

static void take_block(ext2_filsys fs, blk64_t blk, int inuse)
{
	take_range(fs, blk, 1, inuse);
}

static errcode_t file_write_at(struct fill *f, uint64_t off, const char *buf,
			       size_t len)
{
	unsigned int got;
	errcode_t retval;

	retval = ext2fs_file_llseek(f->file, off, EXT2_SEEK_SET, NULL);
	while (!retval && len) {
		retval = ext2fs_file_write(f->file, buf, len, &got);
		buf += got;
		len -= got;
		if (!retval && !got)
			retval = EXT2_ET_SHORT_WRITE;
	}
	return retval;
}

/* Data the filler allocated, as the block_alloc_stats callback sees it */
static void take_data_range(ext2_filsys fs, blk64_t blk, blk64_t len,
			    void *priv EXT2FS_ATTR((unused)))
{
	take_range(fs, blk, len, +1);
}

/* Staged blocks out, the mapping closed and on disk */
static errcode_t end_staging(struct fill *f)
{
	if (!f->staging)
		return 0;
	f->staging = 0;
	return ext2fs_extent_fill_finish(f->stager);
}

static errcode_t write_data_proc(const struct e2cb_entry *e
				 EXT2FS_ATTR((unused)), uint64_t off,
				 const void *buf, size_t len, void *priv)
{
	struct restore *rs = priv;
	struct fill *f = &rs->fill;
	errcode_t retval;

	/* a file of many GiB stops too; restore_inode takes it back */
	if (stop_signal)
		return EXT2_ET_CANCEL_REQUESTED;
	rs->done_bytes += len;
	/* data going back (never in our archives): block by block then */
	if (f->staging && off < f->end) {
		retval = end_staging(f);
		if (!retval)
			retval = ext2fs_file_open(rs->fs, f->ino,
						  EXT2_FILE_WRITE, &f->file);
		if (retval)
			return retval;
	}
	if (off + len > f->end)
		f->end = off + len;
	if (f->staging)
		return ext2fs_extent_fill_write(f->stager, off, buf, len);
	return file_write_at(f, off, buf, len);
}

/*
 * Data lands at its logical offsets, holes stay holes, and i_size comes
 * from the archive: the bytes past it in an encrypted file's last block
 * are ciphertext that must survive, so no truncation touches them.
 */
static errcode_t fill_regular(struct restore *rs, ext2_ino_t ino,
			      struct ext2_inode_large *inode,
			      const struct e2cb_entry *e)
{
	ext2_filsys fs = rs->fs;
	struct fill *f = &rs->fill;
	errcode_t retval, rc;

	retval = write_inode(rs, ino, inode);
	if (retval)
		return retval;
	f->ino = ino;
	f->inode = inode;
	f->end = 0;
	if (!f->stager && !ext2fs_extent_fill_new(fs, FILL_STAGE_SIZE,
						  &f->stager))
		ext2fs_extent_fill_set_alloc_func(f->stager, take_data_range,
						  NULL);
	f->staging = f->stager &&
		     !ext2fs_extent_fill_start(f->stager, ino,
					       (struct ext2_inode *) inode);
	if (!f->staging) {
		retval = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f->file);
		if (retval)
			return retval;
	}
	if (f->small_pending) {
		f->small_pending = 0;
		retval = f->small_end ? write_data_proc(e, 0, f->small,
							f->small_end, rs) : 0;
	} else {
		retval = e2cb_reader_data(rs->r, write_data_proc, rs);
	}
	if (retval && f->staging)	/* restore_inode takes it back */
		ext2fs_extent_fill_drop(f->stager);
	rc = end_staging(f);
	if (!retval)
		retval = rc;
	if (f->file) {
		rc = ext2fs_file_close(f->file);
		f->file = NULL;
		if (!retval)
			retval = rc;
	}
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *) inode,
					EXT2_INODE_SIZE(fs->super));
	if (retval)
		return retval;
	inode->i_size = e->rec.size & 0xffffffff;
	inode->i_size_high = e->rec.size >> 32;
	apply_rec(rs, inode, &e->rec);
	if (has_verity_tree(e, rs->plan.block_size))
		inode->i_flags |= EXT4_VERITY_FL;
	return write_inode(rs, ino, inode);
}

static errcode_t small_data_proc(const struct e2cb_entry *e, uint64_t off,
				 const void *buf, size_t len, void *priv)
{
	struct fill *f = &((struct restore *) priv)->fill;

	if (stop_signal)
		return EXT2_ET_CANCEL_REQUESTED;
	/* the first pass refused data past i_size */
	if (off + len > e->rec.size)
		return EXT2_ET_FILE_TOO_BIG;
	memcpy(f->small + off, buf, len);
	f->small_covered += len;
	if (off + len > f->small_end)
		f->small_end = off + len;
	return 0;
}

/*
 * A small file goes inline where the target has inline_data, as the
 * kernel writes it: its data whole, without holes, in i_block and in
 * "system.data", which must fit in the inode.  The kernel keeps no
 * encrypted inode inline, nor a verity file.  Data read but not
 * inlined waits in rs->fill for fill_regular().
 */
static errcode_t try_inline(struct restore *rs, ext2_ino_t ino,
			    struct ext2_inode_large *inode,
			    const struct e2cb_entry *e,
			    const struct xattr_list *xl, int *inlined)
{
	ext2_filsys fs = rs->fs;
	struct fill *f = &rs->fill;
	errcode_t retval;

	*inlined = 0;
	f->small_pending = 0;
	if (!ext2fs_has_feature_inline_data(fs->super) || e->ctx ||
	    (e->rec.iflags & EXT4_VERITY_FL) || !e->rec.size ||
	    e->rec.size > EXT2_INODE_SIZE(fs->super))
		return 0;
	if (!f->small) {
		retval = ext2fs_get_mem(EXT2_INODE_SIZE(fs->super), &f->small);
		if (retval)
			return retval;
	}
	memset(f->small, 0, e->rec.size);
	f->small_end = f->small_covered = 0;
	retval = e2cb_reader_data(rs->r, small_data_proc, rs);
	if (retval)
		return retval;
	f->small_pending = 1;
	if (f->small_covered != e->rec.size)
		return 0;
	retval = ext2fs_inline_data_raw_write(fs, ino, inode, xl->x,
					      xl->count, f->small,
					      e->rec.size, rs->ea_share);
	if (retval == EXT2_ET_INLINE_DATA_NO_SPACE)
		return 0;
	if (!retval) {
		f->small_pending = 0;
		rs->done_bytes += e->rec.size;
		*inlined = 1;
	}
	return retval;
}

/*
 * The directory an entry goes into.  The reader has checked that
 * entries come in pre-order, so the open directories form a stack and
 * an entry of depth d goes into its d-th frame.
 */
static struct dir_frame *find_parent(struct restore *rs,
				     const struct e2cb_entry *e)
{
	if (e->depth == 0 || e->depth > rs->depth)
		return NULL;
	rs->depth = e->depth;
	return &rs->stack[e->depth - 1];
}

/*
 * Directories deeper than @depth have all their entries: index the
 * large ones as the kernel would have, since appending left them
 * linear, and put the small ones we made inline where the kernel would
 * keep them so.  One too large for an index, or with no room left for
 * one, stays linear, as valid.
 */
static errcode_t close_dirs(struct restore *rs, unsigned int depth)
{
	errcode_t retval = 0;

	while (rs->depth > depth && !retval) {
		rs->depth--;
		if (rs->stack[rs->depth].made) {
			retval = ext2fs_dir_make_inline(rs->fs,
						rs->stack[rs->depth].ino,
						rs->ea_share);
			if (retval)
				break;
		}
		retval = ext2fs_dx_index_dir(rs->fs,
					     rs->stack[rs->depth].ino);
		if (retval == EXT2_ET_DIR_NO_SPACE ||
		    retval == EXT2_ET_BLOCK_ALLOC_FAIL) {
			rs->unindexed++;
			retval = 0;
		}
	}
	return retval;
}

/* Room for one more open directory, so that pushing it cannot fail */
static errcode_t reserve_dir(struct restore *rs)
{
	if (e2cb_grow((void **) &rs->stack, &rs->stack_size, rs->depth,
		       sizeof(*rs->stack)))
		return EXT2_ET_NO_MEMORY;
	return 0;
}

static errcode_t push_dir(struct restore *rs, ext2_ino_t ino, int encrypted)
{
	struct dir_frame *f;
	errcode_t retval;

	retval = reserve_dir(rs);
	if (retval)
		return retval;
	f = &rs->stack[rs->depth];
	f->ino = ino;
	f->hint = 0;
	f->encrypted = encrypted;
	f->made = 0;
	rs->depth++;
	return 0;
}

/*
 * Write @inode, changed from @old; should that fail, put @old back (the
 * inode cache took the change already) so nothing of it remains.
 */
static errcode_t write_or_keep(ext2_filsys fs, ext2_ino_t ino,
			       struct ext2_inode *inode,
			       struct ext2_inode *old)
{
	errcode_t retval;

	retval = ext2fs_write_inode(fs, ino, inode);
	if (retval)
		ext2fs_write_inode(fs, ino, old);
	return retval;
}

static errcode_t bump_links(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_inode inode, old;
	errcode_t retval;

	retval = ext2fs_read_inode(fs, ino, &inode);
	if (retval)
		return retval;
	old = inode;
	if (inode.i_links_count < EXT2_LINK_MAX)
		inode.i_links_count++;
	return write_or_keep(fs, ino, &inode, &old);
}

/*
 * A new subdirectory's ".." links its parent.  Past EXT2_LINK_MAX the
 * count means nothing, and the kernel and e2fsck keep it at 1, which
 * the dir_nlink feature allows.
 */
static errcode_t bump_dir_links(struct restore *rs, ext2_ino_t dir)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode inode, old;
	int capped;
	errcode_t retval;

	retval = ext2fs_read_inode(fs, dir, &inode);
	if (retval)
		return retval;
	old = inode;
	capped = inode.i_links_count == 1 ||
		 inode.i_links_count >= EXT2_LINK_MAX;
	inode.i_links_count = capped ? 1 : inode.i_links_count + 1;
	retval = write_or_keep(fs, dir, &inode, &old);
	if (retval || !capped)
		return retval;
	if (old.i_links_count != 1)
		rs->nlink_overflows++;
	if (!ext2fs_has_feature_dir_nlink(fs->super)) {
		ext2fs_set_feature_dir_nlink(fs->super);
		ext2fs_mark_super_dirty(fs);
	}
	return 0;
}

/* The first pass noted every inode with several names: where it went */
static void note_link(struct restore *rs, ext2_ino_t from, ext2_ino_t to)
{
	struct link_info *l = link_find(&rs->plan.linked, from);

	if (l)
		l->to = to;
}

/* Take back the name @n of @ino in @dir: an entry that failed after it */
static void unlink_name(struct restore *rs, struct dir_frame *dir,
			const struct ext4_encrypted_name *n, ext2_ino_t ino)
{
	errcode_t retval;

	retval = ext2fs_unlink_raw(rs->fs, dir->ino, n, ino);
	if (retval)
		com_err(program_name, retval, "while taking back a name in "
			"directory %u", dir->ino);
}

static errcode_t restore_hardlink(struct restore *rs, struct dir_frame *dir,
				  const struct e2cb_entry *e,
				  const struct ext4_encrypted_name *n)
{
	const struct link_info *l = link_find(&rs->plan.linked, e->rec.ino);
	ext2_ino_t ino = l ? l->to : 0;
	errcode_t retval;

	if (!ino)
		return EXT2_ET_FILE_NOT_FOUND;
	retval = ext2fs_link_raw(rs->fs, dir->ino, n, ino,
				 ext2fs_mode_to_file_type(e->rec.mode), &dir->hint);
	if (retval)
		return retval;
	retval = bump_links(rs->fs, ino);
	if (retval)
		unlink_name(rs, dir, n, ino);
	return retval;
}

/* Record the blocks allocated from now on, for an inode being made */
static void take_begin(struct restore *rs)
{
	rs->fs->priv_data = &rs->taken;
	/* ranges: libext2fs 1.47's callback sees an empty one (1.47.0's
	 * ext2fs_block_alloc_stats_range), the filler tells them */
	ext2fs_set_block_alloc_stats_callback(rs->fs, take_block, NULL);
	rs->taken.count = 0;
	rs->taken.lost = 0;
	rs->taken.on = 1;
}

/* Free what was recorded and is still in use */
static void take_back_blocks(struct restore *rs)
{
	struct taken *t = &rs->taken;
	blk64_t b;
	size_t i;

	t->on = 0;
	for (i = 0; i < t->count; i++)
		for (b = t->r[i].start; b < t->r[i].start + t->r[i].len; b++)
			if (ext2fs_test_block_bitmap2(rs->fs->block_map, b))
				ext2fs_block_alloc_stats2(rs->fs, b, -1);
	t->count = 0;
}

/* Was @blk allocated for the inode being made? */
static int taken_has(const struct taken *t, blk64_t blk)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		if (blk >= t->r[i].start && blk - t->r[i].start < t->r[i].len)
			return 1;
	return 0;
}

/*
 * An EA block the inode shares with earlier ones (ext2fs_ea_share) was
 * not allocated for it: take back the reference it took instead.
 */
static void release_shared_ea(struct restore *rs, ext2_ino_t ino,
			      struct ext2_inode_large *inode)
{
	blk64_t ea = ext2fs_file_acl_block(rs->fs,
					   (struct ext2_inode *) inode);

	if (ea && !taken_has(&rs->taken, ea))
		ext2fs_ea_block_put(rs->fs, ino, ea);
}

/*
 * Take back an inode that could not be completed, so a failed restore
 * leaves no orphan: the blocks allocated for it, and the inode itself.
 * @inode is the inode as restore_inode built it; its mapping is looked
 * at only if some blocks could not be recorded.
 */
static void discard_inode(struct restore *rs, ext2_ino_t ino,
			  struct ext2_inode_large *inode, int is_dir)
{
	ext2_filsys fs = rs->fs;
	size_t isize = EXT2_INODE_SIZE(fs->super);

	if (rs->taken.lost &&
	    ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *) inode))
		ext2fs_punch(fs, ino, (struct ext2_inode *) inode, NULL, 0,
			     ~0ULL);
	release_shared_ea(rs, ino, inode);
	take_back_blocks(rs);
	memset(inode, 0, isize);
	inode->i_dtime = time(NULL);
	ext2fs_write_inode_full(fs, ino, (struct ext2_inode *) inode, isize);
	ext2fs_inode_alloc_stats2(fs, ino, -1, is_dir);
}

static errcode_t make_body(struct restore *rs, ext2_ino_t ino,
			   ext2_ino_t parent, struct ext2_inode_large *inode,
			   const struct e2cb_entry *e)
{
	switch (e->rec.mode & LINUX_S_IFMT) {
	case LINUX_S_IFDIR:
		return make_dir_body(rs, ino, parent, inode);
	case LINUX_S_IFREG:
		return fill_regular(rs, ino, inode, e);
	case LINUX_S_IFLNK:
		return make_symlink_body(rs, ino, inode, e);
	case LINUX_S_IFCHR:
	case LINUX_S_IFBLK:
		set_rdev(inode, e->rec.rdev_major, e->rec.rdev_minor);
		break;
	}
	return write_inode(rs, ino, inode);
}

/* Create the inode of @e with all it carries, then link it. */
static errcode_t restore_inode(struct restore *rs, struct dir_frame *dir,
			       const struct e2cb_entry *e,
			       const struct ext4_encrypted_name *n)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode_large *inode;
	struct xattr_list xl;
	ext2_ino_t ino = 0;
	int is_dir = LINUX_S_ISDIR(e->rec.mode);
	int inlined = 0, made;
	errcode_t retval;

	retval = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super), &inode);
	if (retval)
		return retval;
	retval = entry_xattrs(rs, e, &xl);
	/* pushing a directory, once linked, must not fail */
	if (!retval && is_dir)
		retval = reserve_dir(rs);
	/* identical attribute sets share one EA block, as in the kernel */
	if (!retval && !rs->ea_share)
		retval = ext2fs_ea_share_new(&rs->ea_share);
	if (!retval)
		retval = alloc_inode(rs, e, dir->ino, &ino);
	if (retval)
		goto out;
	take_begin(rs);
	apply_rec(rs, inode, &e->rec);
	/* before any block checksum is computed over it */
	inode->i_generation = e->rec.generation;
	inode->i_links_count = 1;
	if (LINUX_S_ISREG(e->rec.mode))
		retval = try_inline(rs, ino, inode, e, &xl, &inlined);
	if (!retval && !inlined &&
	    (LINUX_S_ISREG(e->rec.mode) || is_dir ||
	     (LINUX_S_ISLNK(e->rec.mode) && e->rec.size >= 60)))
		retval = init_extents(fs, ino, inode);
	if (!retval && !inlined)
		retval = ext2fs_xattrs_raw_write_shared(fs, ino, inode, xl.x,
							xl.count,
							rs->ea_share);
	if (!retval)
		retval = inlined ? write_inode(rs, ino, inode) :
			 make_body(rs, ino, dir->ino, inode, e);
	/* the parent's blocks are not the inode's */
	rs->taken.on = 0;
	if (!retval)
		retval = ext2fs_link_raw(fs, dir->ino, n, ino,
					 ext2fs_mode_to_file_type(e->rec.mode),
					 &dir->hint);
	if (retval)
		goto undo;
	if (is_dir) {
		retval = bump_dir_links(rs, dir->ino);
		if (retval) {
			unlink_name(rs, dir, n, ino);
			goto undo;
		}
		/* e2fsck wants /lost+found in a block: not ours to inline */
		made = dir->ino != EXT2_ROOT_INO || n->name_len != 10 ||
		       memcmp(n->name, "lost+found", 10);
		push_dir(rs, ino, !!e->ctx);
		rs->stack[rs->depth - 1].made = made;
	} else if (e->rec.links_count > 1) {
		note_link(rs, e->rec.ino, ino);
	}
	goto out;
undo:
	discard_inode(rs, ino, inode, is_dir);
out:
	free(xl.x);
	ext2fs_free_mem(&inode);
	return retval;
}

/*
 * The archive's root maps onto PATH.  Its context (an encrypted root
 * goes only into a new or empty directory) and, where PATH is ours to
 * shape (made by us, or the filesystem root), its metadata too.
 */
static errcode_t restore_root(struct restore *rs, const struct e2cb_entry *e)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode_large *inode;
	struct xattr_list xl;
	errcode_t retval;

	retval = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super), &inode);
	if (retval)
		return retval;
	memset(&xl, 0, sizeof(xl));
	if (rs->target_new || rs->target == EXT2_ROOT_INO || e->ctx) {
		retval = ext2fs_read_inode_full(fs, rs->target,
				(struct ext2_inode *) inode,
				EXT2_INODE_SIZE(fs->super));
		if (!retval)
			retval = entry_xattrs(rs, e, &xl);
		if (retval)
			goto out;
		apply_rec(rs, inode, &e->rec);
		retval = ext2fs_xattrs_raw_replace(fs, rs->target, inode,
						   xl.x, xl.count);
		if (retval)
			goto out;
	}
	retval = push_dir(rs, rs->target, !!e->ctx);
out:
	free(xl.x);
	ext2fs_free_mem(&inode);
	return retval;
}

/* The target's own lost+found takes the archived one's metadata. */
static errcode_t merge_lost_found(struct restore *rs,
				  const struct e2cb_entry *e, ext2_ino_t ino)
{
	struct ext2_inode_large *inode;
	errcode_t retval;

	retval = ext2fs_get_memzero(EXT2_INODE_SIZE(rs->fs->super), &inode);
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(rs->fs, ino,
					(struct ext2_inode *) inode,
					EXT2_INODE_SIZE(rs->fs->super));
	if (!retval && LINUX_S_ISDIR(inode->i_mode)) {
		apply_rec(rs, inode, &e->rec);
		retval = write_inode(rs, ino, inode);
	}
	ext2fs_free_mem(&inode);
	return retval ? retval : push_dir(rs, ino, 0);
}

static errcode_t restore_entry(struct restore *rs, const struct e2cb_entry *e)
{
	struct ext4_encrypted_name n;
	struct dir_frame *dir;
	ext2_ino_t existing;
	errcode_t retval;

	if (!strcmp(e->path, "."))
		return rs->depth ? EXT2_ET_DIR_CORRUPTED : restore_root(rs, e);
	if (e->depth && e->depth < rs->depth) {
		retval = close_dirs(rs, e->depth);
		if (retval)
			return retval;
	}
	dir = find_parent(rs, e);
	if (!dir)
		return EXT2_ET_DIR_CORRUPTED;
	entry_name(e, &n);
	if (!n.name_len || dir->encrypted != !!(e->rec.rflags & E2CB_IF_NAME))
		return EXT2_ET_CRYPT_BAD_BLOB;
	if (rs->lost_found_merge && dir->ino == EXT2_ROOT_INO &&
	    LINUX_S_ISDIR(e->rec.mode) && !strcmp(e->path, "lost+found")) {
		retval = e2cb_lookup_raw(rs->fs, dir->ino, n.name, n.name_len,
					 &existing);
		if (!retval)
			return merge_lost_found(rs, e, existing);
		/* a read error must not make a second lost+found */
		if (retval != EXT2_ET_FILE_NOT_FOUND)
			return retval;
	}
	if (e->rec.rflags & E2CB_IF_HARDLINK)
		return restore_hardlink(rs, dir, e, &n);
	return restore_inode(rs, dir, e, &n);
}

static int count_entry(ext2_ino_t dir EXT2FS_ATTR((unused)),
		       int entry, struct ext2_dir_entry *de EXT2FS_ATTR((unused)),
		       int offset EXT2FS_ATTR((unused)),
		       int blocksize EXT2FS_ATTR((unused)),
		       char *buf EXT2FS_ATTR((unused)), void *priv)
{
	if (entry == DIRENT_OTHER_FILE)
		(*(int *) priv)++;
	return 0;
}

static int is_empty_dir(ext2_filsys fs, ext2_ino_t dir)
{
	int others = 0;

	if (ext2fs_dir_iterate2(fs, dir, 0, NULL, count_entry, &others))
		return 0;
	return others == 0;
}

/* Make a plain directory on the way to PATH (owned by root, 0755). */
static errcode_t make_path_dir(struct restore *rs, ext2_ino_t parent,
			       const char *name, size_t len, ext2_ino_t *ino)
{
	struct e2cb_entry e;
	struct dir_frame frame;
	struct ext4_encrypted_name n;
	time_t now = time(NULL);
	errcode_t retval;

	memset(&e, 0, sizeof(e));
	e.path = "";
	e.rec.mode = LINUX_S_IFDIR | 0755;
	e.rec.atime.sec = e.rec.mtime.sec = e.rec.ctime.sec = now;
	memset(&n, 0, sizeof(n));
	n.name_len = len;
	memcpy(n.name, name, len);
	memset(&frame, 0, sizeof(frame));
	frame.ino = parent;
	retval = restore_inode(rs, &frame, &e, &n);
	if (retval)
		return retval;
	/* restore_inode pushed the new directory: take it back off */
	*ino = rs->stack[--rs->depth].ino;
	return 0;
}

/*
 * Find PATH; no component of it may be encrypted.  Missing directories
 * on the way are only noted (rs->target_new) unless @create, the first
 * write of the restore: checks never write.
 */
static int prepare_path(struct restore *rs, int create)
{
	ext2_filsys fs = rs->fs;
	struct ext2_inode inode;
	const char *p = rs->opts->path, *end;
	ext2_ino_t ino = EXT2_ROOT_INO, next;
	int missing = 0;
	errcode_t retval;

	for (;;) {
		if (!missing) {
			retval = ext2fs_read_inode(fs, ino, &inode);
			if (retval)
				goto fail;
			if (!LINUX_S_ISDIR(inode.i_mode))
				return refuse("%s is not a directory",
					      rs->opts->path);
		}
		for (; *p == '/'; p++)
			;
		if (!*p)
			break;
		if (!missing && (inode.i_flags & EXT4_ENCRYPT_FL))
			return refuse("%s lies inside an encrypted directory, "
				      "where names need its key",
				      rs->opts->path);
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if (end - p > EXT2_NAME_LEN)
			return refuse("a component of %s is too long",
				      rs->opts->path);
		retval = missing ? EXT2_ET_FILE_NOT_FOUND :
			 e2cb_lookup_raw(fs, ino, (const uint8_t *) p,
					 end - p, &next);
		if (retval == EXT2_ET_FILE_NOT_FOUND) {
			rs->target_new = 1;
			missing = !create;
			retval = create ? make_path_dir(rs, ino, p, end - p,
							&next) : 0;
		} else if (!retval) {
			rs->target_new = 0;
		}
		if (retval)
			goto fail;
		ino = next;
		p = end;
	}
	if (missing)
		return 0;
	if (inode.i_flags & EXT4_ENCRYPT_FL)
		return refuse("%s is an encrypted directory; names there "
			      "need its key", rs->opts->path);
	rs->target = ino;
	return 0;
fail:
	com_err(program_name, retval, "while looking up %s", rs->opts->path);
	return E2CB_EXIT_ERROR;
}

/*
 * e2fsck wants /lost+found an unencrypted directory (the kernel refuses
 * to encrypt the root, so never encrypts the name "lost+found" there
 * either); below PATH the name is like any other.
 */
static int check_lost_found(struct restore *rs)
{
	uint32_t mode = rs->plan.lf_mode;

	if (!mode || rs->target != EXT2_ROOT_INO)
		return 0;
	if (!LINUX_S_ISDIR(mode))
		return refuse("the archive's lost+found is not a directory; "
			      "e2fsck wants /lost+found a directory: give "
			      "a PATH%s", "");
	if (rs->plan.lf_encrypted)
		return refuse("the archive's lost+found is encrypted; "
			      "e2fsck wants /lost+found unencrypted: give "
			      "a PATH%s", "");
	return 0;
}

static int refuse_name(const char *where,
		       const struct ext4_encrypted_name *n)
{
	char shown[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];

	shown[e2cb_b64url_encode(n->name, n->name_len, shown)] = 0;
	fprintf(stderr, "%s: refusing to restore: %s already holds an "
		"entry named %.*s (base64url %s)\n", program_name, where,
		(int) n->name_len, (const char *) n->name, shown);
	return E2CB_EXIT_ERROR;
}

static int note_name(ext2_ino_t dir EXT2FS_ATTR((unused)),
		     int entry EXT2FS_ATTR((unused)),
		     struct ext2_dir_entry *de,
		     int offset EXT2FS_ATTR((unused)),
		     int blocksize EXT2FS_ATTR((unused)),
		     char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct name_set *set = priv;

	if (name_set_add(set, name_key(0, (const uint8_t *) de->name,
				       ext2fs_dirent_name_len(de))) >= 0)
		return 0;
	set->count = 0;		/* out of memory: dir_names says so */
	return DIRENT_ABORT;
}

/*
 * The names @dir holds, as keys: one read of the directory, and one
 * lookup for each name found there, not one read of it for every name.
 */
static errcode_t dir_names(ext2_filsys fs, ext2_ino_t dir,
			   struct name_set *set)
{
	errcode_t retval;

	memset(set, 0, sizeof(*set));
	retval = ext2fs_dir_iterate2(fs, dir, 0, NULL, note_name, set);
	if (!retval && set->count == 0)	/* "." at least is there */
		retval = EXT2_ET_NO_MEMORY;
	if (retval)
		com_err(program_name, retval, "while reading directory %u",
			dir);
	return retval;
}

/* Whether @dir (whose names @set holds) has @n, and which inode */
static int name_taken(ext2_filsys fs, ext2_ino_t dir,
		      const struct name_set *set,
		      const struct ext4_encrypted_name *n, ext2_ino_t *ino)
{
	return name_set_has(set, name_key(0, n->name, n->name_len)) &&
	       !e2cb_lookup_raw(fs, dir, n->name, n->name_len, ino);
}

/* The target's lost+found takes the archived one's names: free ones */
static int check_lost_found_names(struct restore *rs, ext2_ino_t lf)
{
	struct plan *p = &rs->plan;
	struct name_set set;
	ext2_ino_t ino;
	size_t i;
	int ret = 0;

	if (!p->nlf)
		return 0;
	if (dir_names(rs->fs, lf, &set))
		return E2CB_EXIT_ERROR;
	for (i = 0; i < p->nlf && !ret; i++)
		if (name_taken(rs->fs, lf, &set, &p->lf[i], &ino))
			ret = refuse_name("/lost+found", &p->lf[i]);
	free(set.slot);
	return ret;
}

/* @top, at PATH, must be free, lost+found at the root excepted. */
static int check_top_name(struct restore *rs, const struct name_set *set,
			  const struct ext4_encrypted_name *top)
{
	ext2_ino_t ino;

	if (!name_taken(rs->fs, rs->target, set, top, &ino))
		return 0;
	if (rs->target == EXT2_ROOT_INO && top->name_len == 10 &&
	    !memcmp(top->name, "lost+found", 10) &&
	    !ext2fs_check_directory(rs->fs, ino)) {
		rs->lost_found_merge = 1;
		return check_lost_found_names(rs, ino);
	}
	return refuse_name(rs->opts->path, top);
}

/* Names at PATH must be free, lost+found at the root excepted. */
static int check_collisions(struct restore *rs)
{
	struct plan *p = &rs->plan;
	struct name_set set;
	size_t i;
	int ret = 0;

	if (check_lost_found(rs))
		return E2CB_EXIT_ERROR;
	if (p->root_encrypted) {
		if (rs->target == EXT2_ROOT_INO)
			return refuse("the archive's root is an encrypted "
				      "directory; give a PATH for it%s", "");
		if (!rs->target_new && !is_empty_dir(rs->fs, rs->target))
			return refuse("%s must be new or empty to take the "
				      "archive's encrypted root",
				      rs->opts->path);
		return 0;
	}
	/* a directory still to be made holds nothing */
	if (rs->target_new || !p->ntop)
		return 0;
	if (dir_names(rs->fs, rs->target, &set))
		return E2CB_EXIT_ERROR;
	for (i = 0; i < p->ntop && !ret; i++)
		ret = check_top_name(rs, &set, &p->top[i]);
	free(set.slot);
	return ret;
}

/*
 * A pipe cannot be read twice: keep what @in gives (standard input, a
 * FIFO, a device) in a deleted file.
 */
static int spool(int in, const char *shown)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char tmpl[4096], buf[65536];
	ssize_t n;
	int fd;

	snprintf(tmpl, sizeof(tmpl), "%s/e2cryptbak-XXXXXX", dir);
	fd = mkstemp(tmpl);
	if (fd < 0) {
		com_err(program_name, errno, "while creating a file in %s "
			"to hold %s", dir, shown);
		return -1;
	}
	unlink(tmpl);
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(fd, buf, n) != n) {
			com_err(program_name, errno, "while copying %s to %s",
				shown, dir);
			close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * The archive, opened once: its name is not looked at again, so what
 * is renamed over it later does not matter.  What is not a regular file
 * is read once, into a spool.
 */
static int open_archive(struct restore *rs)
{
	const char *name = rs->opts->archive;
	struct stat st;
	int fd = 0, sfd;

	if (strcmp(name, "-")) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			com_err(program_name, errno, "while opening %s", name);
			return -1;
		}
	}
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		com_err(program_name, S_ISDIR(st.st_mode) ? EISDIR : errno,
			"while opening %s", rs->shown);
		goto errout;
	}
	if (fd && S_ISREG(st.st_mode))
		return fd;
	sfd = spool(fd, rs->shown);
	if (fd)
		close(fd);
	return sfd;
errout:
	if (fd)
		close(fd);
	return -1;
}

/*
 * EXT2_FLAG_EXCLUSIVE keeps a second writer off a block device only; an
 * image file takes a lock, held until the filesystem is closed.  Backup,
 * extract and list look for it (e2cb_check_source), however they reach
 * the same blocks.
 */
static int lock_target(struct restore *rs)
{
	const char *dev = rs->opts->device;

	rs->lock_fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (rs->lock_fd < 0)
		return 0;		/* opening it for real says why */
	if (!flock(rs->lock_fd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno == EWOULDBLOCK) {
		/* names the holder, unless it let go meanwhile */
		if (!e2cb_check_source(dev, 1))
			fprintf(stderr, "%s: %s is in use by another "
				"e2cryptbak restore (or another program holds "
				"a lock on it)\n", program_name, dev);
		return -1;
	}
	/* a filesystem without flock (some NFS): go on as before */
	com_err(program_name, errno, "while locking %s (going on without "
		"the lock)", dev);
	return 0;
}

/*
 * libext2fs opens the undo file by name, following a symlink, and as
 * root: in a directory others can write, the name could be a symlink to
 * any file, which the undo records would then overwrite.  Open it here
 * without following one, make sure it is a plain file, and hand
 * libext2fs /proc/self/fd/N, this very file.
 */
static int open_undo(const char *name, char *path, size_t size)
{
	struct stat st;
	int fd;

	fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		com_err(program_name, errno, "while opening the undo file %s",
			name);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		fprintf(stderr, "%s: %s: the undo file must be a regular file "
			"with one name\n", program_name, name);
		close(fd);
		return -1;
	}
	snprintf(path, size, "/proc/self/fd/%d", fd);
	if (access(path, F_OK) < 0)
		snprintf(path, size, "%s", name);	/* no /proc */
	return fd;
}

static errcode_t open_target(struct restore *rs)
{
	io_manager io = unix_io_manager;
	errcode_t retval;
	char undo[4096];
	int undo_fd = -1;

	if (lock_target(rs))
		return EXT2_ET_FILE_RO;
	if (rs->opts->undo_file) {
		undo_fd = open_undo(rs->opts->undo_file, undo, sizeof(undo));
		if (undo_fd < 0)
			return EXT2_ET_FILE_RO;
		set_undo_io_backing_manager(unix_io_manager);
		retval = set_undo_io_backup_file(undo);
		if (retval) {
			com_err(program_name, retval, "while setting up the "
				"undo file %s", rs->opts->undo_file);
			close(undo_fd);
			return retval;
		}
		io = undo_io_manager;
	}
	retval = e2cb_open_fs2(rs->opts->device, EXT2_FLAG_RW |
			       EXT2_FLAG_EXCLUSIVE, io, &rs->fs);
	/* the undo manager has opened its own descriptors of it */
	if (undo_fd >= 0)
		close(undo_fd);
	if (retval)
		return retval;
	/* bad group descriptors can make libext2fs overrun its buffers */
	retval = ext2fs_check_desc(rs->fs);
	if (retval) {
		com_err(program_name, retval, "in the group descriptors of "
			"%s; run e2fsck", rs->opts->device);
		return retval;
	}
	retval = ext2fs_read_bitmaps(rs->fs);
	if (retval)
		com_err(program_name, retval, "while reading the bitmaps of %s",
			rs->opts->device);
	else
		fault_install(rs->fs);
	return retval;
}

/*
 * The checks read the whole archive and may take long: the target, an
 * image file say, may have been mounted through a loop device meanwhile.
 * Asked again right before the first write.
 */
static int check_unmounted(struct restore *rs)
{
	if (!e2cb_check_source(rs->opts->device, 1))
		return 0;
	fprintf(stderr, "%s: refusing to restore: %s became busy while the "
		"archive was checked; nothing was written\n", program_name,
		rs->opts->device);
	return E2CB_EXIT_ERROR;
}

static void adjust_salt(struct restore *rs, const struct e2cb_header *h)
{
	uint8_t *have = rs->fs->super->s_encrypt_pw_salt;
	char want[E2CB_SALT_STRLEN], cur[E2CB_SALT_STRLEN];

	if (!rs->plan.has_v1 || !e2cb_salt_string(h->encrypt_pw_salt, want) ||
	    !memcmp(have, h->encrypt_pw_salt, 16))
		return;
	if (e2cb_salt_string(have, cur)) {
		printf("%s: passphrase salt %s kept; \"e4crypt add_key -S "
		       "%s\" derives the archive's passphrase keys\n",
		       rs->opts->device, cur, want);
		return;
	}
	memcpy(have, h->encrypt_pw_salt, 16);
	printf("%s: passphrase salt set to the archive's, %s\n",
	       rs->opts->device, want);
}

/* Features the archive needs, set only after every check passed */
static void adjust_features(struct restore *rs, const struct e2cb_header *h)
{
	struct ext2_super_block *sb = rs->fs->super;

	if (rs->plan.has_encrypted && !ext2fs_has_feature_encrypt(sb)) {
		ext2fs_set_feature_encrypt(sb);
		printf("%s: encrypt feature turned on\n", rs->opts->device);
	}
	if (rs->plan.has_verity && !ext2fs_has_feature_verity(sb)) {
		ext2fs_set_feature_verity(sb);
		printf("%s: verity feature turned on\n", rs->opts->device);
	}
	adjust_salt(rs, h);
	if (!rs->plan.has_lblk_policy)
		goto out;
	if (memcmp(sb->s_uuid, h->uuid, 16)) {
		/* keep checksums valid across the UUID change */
		if (ext2fs_has_feature_metadata_csum(sb) &&
		    !ext2fs_has_feature_csum_seed(sb)) {
			sb->s_checksum_seed = ext2fs_crc32c_le(~0, sb->s_uuid,
							       16);
			ext2fs_set_feature_csum_seed(sb);
		}
		memcpy(sb->s_uuid, h->uuid, 16);
		ext2fs_init_csum_seed(rs->fs);
		ext2fs_set_gdt_csum(rs->fs);
		printf("%s: UUID set to the archive's\n", rs->opts->device);
	}
	ext2fs_set_feature_stable_inodes(sb);
out:
	ext2fs_mark_super_dirty(rs->fs);
}

static void show_progress(struct restore *rs, time_t *last, int done)
{
	time_t now = time(NULL);

	if (!rs->opts->progress || (!done && now == *last))
		return;
	*last = now;
	fprintf(stderr, "\r%s: %llu/%llu entries%s", program_name,
		(unsigned long long) rs->done_entries,
		(unsigned long long) rs->plan.entries, done ? "\n" : "");
}

/* The writing pass reads what the first one checked, or stops. */
static int changed(struct restore *rs, const char *why)
{
	fprintf(stderr, "%s: %s changed since it was checked: %s\n",
		program_name, rs->shown, why);
	return E2CB_EXIT_ERROR;
}

static int same_entry(struct restore *rs)
{
	uint64_t i = rs->done_entries;

	return i < rs->plan.entries &&
	       !memcmp(rs->plan.digest[i], e2cb_reader_entry_digest(rs->r),
		       sizeof(*rs->plan.digest));
}

/* At the end of the writing pass: the stream was the one checked */
static int same_stream(struct restore *rs)
{
	uint8_t got[E2CB_STREAM_DIGEST_LEN];
	errcode_t retval;

	retval = e2cb_reader_stream_digest(rs->r, got);
	if (retval) {
		com_err(program_name, retval, "while reading %s", rs->shown);
		return E2CB_EXIT_ERROR;
	}
	if (rs->done_entries != rs->plan.entries ||
	    memcmp(got, rs->plan.stream, sizeof(got)))
		return changed(rs, "its bytes are not the ones checked");
	return 0;
}

/* Pass two: the archive, checked once already, goes in. */
static int write_entries(struct restore *rs)
{
	struct e2cb_entry *e = NULL;
	time_t last = 0;
	errcode_t retval = 0;
	int ret = 0;

	if (open_reader(rs, &rs->r))
		return E2CB_EXIT_ERROR;
	/* adjust_features() wrote what the checked header asked */
	if (memcmp(rs->plan.hdr_digest, e2cb_reader_entry_digest(rs->r),
		   sizeof(rs->plan.hdr_digest)))
		return changed(rs, "its header");
	while (!stop_signal && (ret = e2cb_reader_next(rs->r, &e)) == 0) {
		if (!same_entry(rs))
			return changed(rs, e->path);
		fault_arm(rs->done_entries);
		retval = restore_entry(rs, e);
		fault_arm(-1);
		if (retval)
			break;
		rs->done_entries++;
		show_progress(rs, &last, 0);
	}
	if (!retval && ret > 0 && !stop_signal) {
		e = NULL;
		fault_arm(rs->done_entries);
		retval = close_dirs(rs, 0);
		fault_arm(-1);
	}
	show_progress(rs, &last, 1);
	if (stop_signal)
		return E2CB_EXIT_ERROR;
	if (ret < 0)
		return changed(rs, e2cb_reader_error(rs->r));
	if (retval) {
		com_err(program_name, retval, "while restoring %s",
			e ? e->path : "the last directories");
		return E2CB_EXIT_ERROR;
	}
	return same_stream(rs);
}

static void restore_free(struct restore *rs)
{
	free(rs->stack);
	map_free(&rs->plan.fixed);
	free(rs->plan.top);
	free(rs->plan.lf);
	free(rs->plan.digest);
	free(rs->plan.open_dirs);
	free(rs->plan.names.slot);
	free(rs->plan.linked.slot);
	free(rs->plan.xattr_misfit);
	ext2fs_extent_fill_free(rs->fill.stager);
	ext2fs_free_mem(&rs->fill.small);
	ext2fs_ea_share_free(rs->ea_share);
	free(rs->taken.r);
	e2cb_reader_close(rs->r);
}

/* The target as it stands: flushed only if something was written */
static int close_target(struct restore *rs)
{
	errcode_t retval = 0;

	if (rs->fs && rs->writing) {
		retval = ext2fs_close_free(&rs->fs);
		if (retval)
			com_err(program_name, retval, "while closing %s",
				rs->opts->device);
	} else if (rs->fs) {
		/* only the MMP block, which opening it marked as ours */
		ext2fs_mmp_stop(rs->fs);
		ext2fs_free(rs->fs);
		rs->fs = NULL;
	}
	if (rs->lock_fd >= 0)
		close(rs->lock_fd);
	rs->lock_fd = -1;
	return retval ? E2CB_EXIT_ERROR : 0;
}

int e2cb_restore(const struct e2cb_restore_opts *opts)
{
	struct restore rs;
	const struct e2cb_header *hdr = &rs.plan.hdr;
	int ret;

	memset(&rs, 0, sizeof(rs));
	rs.opts = opts;
	rs.shown = strcmp(opts->archive, "-") ? opts->archive :
		   "standard input";
	rs.lock_fd = -1;
	rs.uid = geteuid();
	rs.gid = getegid();
	rs.umask = e2cb_get_umask();
	/* until the target is open a signal just kills us: the spool is
	 * a deleted file */
	rs.archive_fd = open_archive(&rs);
	if (rs.archive_fd < 0)
		return E2CB_EXIT_ERROR;
	catch_signals();
	if (open_target(&rs)) {
		ret = E2CB_EXIT_ERROR;
		goto out;
	}
	ret = plan_restore(&rs);
	if (ret || stop_signal)
		goto out;
	ret = preflight(&rs, hdr);
	if (!ret)
		ret = prepare_path(&rs, 0);
	if (!ret)
		ret = check_collisions(&rs);
	if (!ret)
		ret = check_inodes_free(&rs);
	if (!ret && !stop_signal)
		ret = check_unmounted(&rs);
	if (ret || stop_signal)
		goto out;
	rs.writing = 1;
	/* directories made on the way to PATH count as the root's */
	fault_arm(0);
	ret = prepare_path(&rs, 1);
	if (!ret) {
		adjust_features(&rs, hdr);
		ret = write_entries(&rs);
	}
	if (stop_signal)
		fprintf(stderr, "%s: stopped by %s\n", program_name,
			signal_name(stop_signal));
	if (ret || stop_signal)
		fprintf(stderr, "%s: restored %llu of %llu entries; the target "
			"is consistent up to there%s%s\n", program_name,
			(unsigned long long) rs.done_entries,
			(unsigned long long) rs.plan.entries,
			opts->undo_file ? "; e2undo rolls it back with " : "",
			opts->undo_file ? opts->undo_file : "");
	else
		printf("%s: restored %llu entries (%llu inodes) from %s\n",
		       opts->device, (unsigned long long) rs.done_entries,
		       (unsigned long long) rs.plan.inodes, rs.shown);
	if (rs.unindexed)
		printf("%s: %u director%s left unindexed: too large for "
		       "an index of %d levels, or no room for one\n",
		       opts->device, rs.unindexed,
		       rs.unindexed == 1 ? "y" : "ies",
		       ext2fs_has_feature_largedir(rs.fs->super) ? 3 : 2);
	/* the kernel keeps the count at 1 only in an indexed directory */
	if (rs.nlink_overflows &&
	    (rs.unindexed || !ext2fs_has_feature_dir_index(rs.fs->super)))
		printf("%s: %u director%s with more than %u subdirectories "
		       "not indexed; run e2fsck -fD before the kernel adds "
		       "subdirectories there\n", opts->device,
		       rs.nlink_overflows, rs.nlink_overflows == 1 ? "y" :
		       "ies", EXT2_LINK_MAX - 2);
out:
	restore_free(&rs);
	if (close_target(&rs))
		ret = E2CB_EXIT_ERROR;
	close(rs.archive_fd);
	if (stop_signal) {
		if (!rs.writing)
			fprintf(stderr, "%s: stopped by %s before the first "
				"write; %s is unchanged\n", program_name,
				signal_name(stop_signal), opts->device);
		die_of_signal();
	}
	release_signals();
	return ret;
}
