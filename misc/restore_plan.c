/*
 * restore_plan.c --- restore's first pass: the archive checked whole
 *
 * Every entry is read and checked against its directory, its links and
 * what any target could hold, and the first pass totals what the
 * writing pass will need of the target.  Nothing is written.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <et/com_err.h>
#include "restore.h"

static errcode_t map_add(struct ino_map *m, ext2_ino_t from, ext2_ino_t to)
{
	size_t size = m->size;

	if (e2cb_grow((void **) &m->from, &size, m->count, sizeof(*m->from)))
		return EXT2_ET_NO_MEMORY;
	if (e2cb_grow((void **) &m->to, &m->size, m->count, sizeof(*m->to)))
		return EXT2_ET_NO_MEMORY;
	m->from[m->count] = from;
	m->to[m->count++] = to;
	return 0;
}

static void map_free(struct ino_map *m)
{
	free(m->from);
	free(m->to);
}

int e2cb_restore_policy_ties_ino(const uint8_t *ctx, size_t len)
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
void e2cb_restore_entry_name(const struct e2cb_entry *e,
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

/*
 * Where an entry's data ends in the target: an encrypted file's last
 * block holds ciphertext past i_size, whole data units; into smaller
 * blocks (data units set by the policy, check_target) the blocks past
 * the one that holds i_size would lie past the end of the file.  A
 * verity tree lies further on, and is kept whole.
 */
uint64_t e2cb_restore_data_end(const struct restore *rs,
			       const struct e2cb_entry *e)
{
	uint64_t bs = e2cb_restore_target_bs(rs);

	if (!e->ctx || bs >= rs->plan.block_size ||
	    (e->rec.iflags & EXT4_VERITY_FL))
		return UINT64_MAX;
	return (e->rec.size + bs - 1) / bs * bs;
}

/* The target's block size: a mounted one's is what statfs said */
uint64_t e2cb_restore_target_bs(const struct restore *rs)
{
	return rs->fs ? rs->fs->blocksize : rs->online_bs;
}

/* Blocks the data will take: each target block touched by a data piece */
static errcode_t count_data(const struct e2cb_entry *e, uint64_t off,
			    const void *buf EXT2FS_ATTR((unused)),
			    size_t len, void *priv)
{
	struct restore *rs = priv;
	uint64_t bs = e2cb_restore_target_bs(rs);
	uint64_t end = e2cb_restore_data_end(rs, e);

	if (e2cb_restore_stopped())
		return EXT2_ET_CANCEL_REQUESTED;
	if (off >= end)
		return 0;
	if (len > end - off)
		len = end - off;
	if (len)
		rs->plan.blocks += (off + len - 1) / bs - off / bs + 1;
	return 0;
}

int e2cb_restore_refuse(const char *fmt, ...)
{
	char *why = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&why, fmt, ap);
	va_end(ap);
	com_err(program_name, 0, "refusing to restore: %s",
		n < 0 ? "(out of memory for the reason)" : why);
	if (n >= 0)
		free(why);
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
	return e2cb_restore_refuse("%s", msg);
}

static int refuse_entry(const struct e2cb_entry *e, const char *why)
{
	com_err(program_name, 0, "refusing to restore: entry %llu (%s): %s",
		(unsigned long long) e->index, e->path, why);
	return E2CB_EXIT_ERROR;
}

/*
 * A name in a directory, as a key: FNV-1a over the raw bytes, which may
 * be ciphertext.  Two names that hash alike only make restore refuse.
 */
uint64_t e2cb_restore_name_key(uint64_t dir, const uint8_t *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ e2cb_mix64(dir);
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ name[i]) * 0x100000001b3ULL;
	return h | 1;
}

/* The slot of @key in @slot (of @size, 2^n), or the free one it would take */
static size_t name_slot(const uint64_t *slot, size_t size, uint64_t key)
{
	size_t i;

	for (i = e2cb_mix64(key) & (size - 1); slot[i] && slot[i] != key;
	     i = (i + 1) & (size - 1))
		;
	return i;
}

int e2cb_restore_name_set_has(const struct name_set *set, uint64_t key)
{
	return set->size && set->slot[name_slot(set->slot, set->size, key)];
}

/* Add @key to @set; 1 if it was there already, -1 out of memory */
int e2cb_restore_name_set_add(struct name_set *set, uint64_t key)
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
		for (j = 0; j < old_size; j++)
			if (old[j])
				set->slot[name_slot(set->slot, set->size,
						    old[j])] = old[j];
		free(old);
	}
	i = name_slot(set->slot, set->size, key);
	if (set->slot[i])
		return 1;
	set->slot[i] = key;
	set->count++;
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

/*
 * The directories from @depth down are whole (entries come in
 * pre-order): their names are needed no more, so that what the check
 * of names holds is the names of the directories on one path, not of
 * the whole archive.
 */
static void close_plan_dirs(struct plan *p, size_t depth)
{
	while (p->ndirs > depth)
		free(p->open_dirs[--p->ndirs].names.slot);
}

/* Open directory @e at its depth, for the entries below it */
static int push_plan_dir(struct restore *rs, const struct e2cb_entry *e)
{
	struct plan *p = &rs->plan;
	struct plan_dir *d;

	close_plan_dirs(p, e->depth);
	if (e2cb_grow((void **) &p->open_dirs, &p->open_dirs_size, e->depth,
		       sizeof(*p->open_dirs)))
		return -1;
	d = &p->open_dirs[e->depth];
	memset(d, 0, sizeof(*d));
	d->id = e->index;
	d->policy_len = ctx_policy(e->ctx, e->ctx_len, d->policy);
	p->ndirs = e->depth + 1;
	return 0;
}

/*
 * An entry must fit its directory: a raw name (and a policy like the
 * directory's, for what the kernel encrypts) in an encrypted one, a
 * plain name in another, and a name no other entry there has.
 */
static int check_place(struct restore *rs, const struct e2cb_entry *e)
{
	struct plan_dir *dir = &rs->plan.open_dirs[e->depth - 1];
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
	e2cb_restore_entry_name(e, &n);
	/* ciphertext names are padded to 16 bytes at least */
	if (named && n.name_len < 16)
		return refuse_entry(e, "a raw name shorter than 16 bytes in "
				    "an encrypted directory");
	len = ctx_policy(e->ctx, e->ctx_len, policy);
	/* only the kernel's policy roots: what restore --online can make */
	if (!dir->policy_len && e->ctx && !LINUX_S_ISDIR(e->rec.mode) &&
	    !rs->plan.enc_in_plain)
		rs->plan.enc_in_plain = e->index;
	if (dir->policy_len && !(e->rec.rflags & E2CB_IF_HARDLINK) &&
	    encryptable(e->rec.mode) &&
	    !same_policy(dir->policy, dir->policy_len, policy, len))
		return refuse_entry(e, "its encryption policy is not its "
				    "directory's");
	close_plan_dirs(&rs->plan, e->depth);
	switch (e2cb_restore_name_set_add(&dir->names,
					  e2cb_restore_name_key(dir->id, n.name,
								n.name_len))) {
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
	struct link_info *l = e2cb_ino_map_find(&rs->plan.linked,
						     e->rec.ino);

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

/*
 * The context and attributes go where the writing pass puts them
 * (ext2fs_xattrs_raw_write): in the inode while they fit, in order, the
 * rest in one EA block.  What does not fit is noted now, and said with
 * the target's other checks (restore_target.c), not found part way
 * through the restore.
 */
static int check_xattrs_fit(struct restore *rs, const struct e2cb_entry *e)
{
	ext2_filsys fs = rs->fs;
	struct xattr_list xl;
	size_t room, n_in, in_inode, in_block, len;
	char msg[240];
	errcode_t retval;

	/* online, the kernel says ENOSPC, and the restore is undone */
	if ((!e->ctx && !e->xattrs) || rs->plan.xattr_misfit || !fs)
		return 0;
	retval = e2cb_restore_entry_xattrs(rs, e, &xl);
	/* a new inode's fixed fields take 32 bytes past 128 */
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
int e2cb_restore_has_verity_tree(const struct e2cb_entry *e, uint64_t bs)
{
	return LINUX_S_ISREG(e->rec.mode) &&
		(e->rec.iflags & EXT4_VERITY_FL) &&
		e->tar_size > (e->rec.size + bs - 1) / bs * bs;
}

/* What the target must hold: sizes, symlinks */
static int note_sizes(struct plan *p, const struct e2cb_entry *e)
{
	uint64_t bs = p->block_size, size = e->rec.size;

	if (e2cb_restore_has_verity_tree(e, bs))
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
	void *slot;
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
		if (e2cb_ino_map_add(&rs->plan.linked, l.ino, &slot))
			goto nomem;
		*(struct link_info *) slot = l;
	}
	return 0;
nomem:
	com_err(program_name, EXT2_ET_NO_MEMORY, "while checking %s",
		e->path);
	return E2CB_EXIT_ERROR;
}

/* The span of the archive's times, for warn_times() */
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
		com_err(program_name, 0, "entry %llu (%s): %s device %u:%u",
			(unsigned long long) e->index, e->path,
			LINUX_S_ISCHR(e->rec.mode) ? "character" : "block",
			e->rec.rdev_major, e->rec.rdev_minor);
}

static int refuse_devices(struct restore *rs)
{
	char msg[120];

	if (!rs->plan.devices)
		return 0;
	if (rs->plan.devices > DEVICES_SHOWN)
		com_err(program_name, 0, "and %llu more device nodes",
			(unsigned long long)
			(rs->plan.devices - DEVICES_SHOWN));
	snprintf(msg, sizeof(msg), "the archive holds %llu device nodes "
		 "(--no-devices)", (unsigned long long) rs->plan.devices);
	return e2cb_restore_refuse("%s", msg);
}

/*
 * Room in the target for what the first pass counted so far.  Checked
 * after every entry too: the first pass's tables (some 80 bytes an
 * entry) then stay within what the target could take, whatever the
 * archive holds.
 */
int e2cb_restore_check_room(struct restore *rs)
{
	const struct plan *p = &rs->plan;
	ext2_filsys fs = rs->fs;
	uint64_t blocks_needed, free_blocks, free_inodes;
	uint64_t bs = e2cb_restore_target_bs(rs);
	char msg[120];

	/* a mounted target (restore --online): what statfs said */
	free_blocks = fs ? ext2fs_free_blocks_count(fs->super) :
		rs->online_free_blocks;
	free_inodes = fs ? fs->super->s_free_inodes_count :
		rs->online_free_inodes;
	/* a margin for extent tree blocks and directory slack */
	blocks_needed = p->blocks + p->name_bytes / (bs / 2) +
			p->blocks / 64 + 16;
	if (blocks_needed > free_blocks) {
		snprintf(msg, sizeof(msg), "about %llu free blocks are "
			 "needed, the target has %llu",
			 (unsigned long long) blocks_needed,
			 (unsigned long long) free_blocks);
		return e2cb_restore_refuse("%s", msg);
	}
	if (p->inodes > free_inodes) {
		snprintf(msg, sizeof(msg), "%llu inodes are needed, the "
			 "target has %llu free", (unsigned long long) p->inodes,
			 (unsigned long long) free_inodes);
		return e2cb_restore_refuse("%s", msg);
	}
	return 0;
}

/* The entry's digest, for the writing pass to match; -1 out of memory */
static int note_digest(struct plan *p, struct e2cb_source *src)
{
	if (e2cb_digests_add(&p->digests, e2cb_source_entry_digest(src)))
		return -1;
	p->entries++;
	return 0;
}

/*
 * Whether an encrypted file's ciphertext holds in another block size:
 * its IVs count data units, which are the block size's unless the v2
 * policy sets their size.  IV_INO_LBLK and verity files stay where
 * they were made.
 */
static void note_data_units(struct plan *p, const struct e2cb_entry *e)
{
	const struct fscrypt_context_v2 *c = (const void *) e->ctx;
	uint32_t du;

	p->has_encrypted_data = 1;
	if (e->ctx_len != FSCRYPT_CONTEXT_V2_SIZE ||
	    c->version != FSCRYPT_CONTEXT_V2 || !c->log2_data_unit_size ||
	    c->log2_data_unit_size > 16 ||
	    e2cb_restore_policy_ties_ino(e->ctx, e->ctx_len) ||
	    (e->rec.iflags & EXT4_VERITY_FL)) {
		p->data_bs_bound = 1;
		return;
	}
	du = 1U << c->log2_data_unit_size;
	if (du > p->max_data_unit)
		p->max_data_unit = du;
}

/* What @e asks of the target: inodes, blocks, features */
static void note_needs(struct plan *p, const struct e2cb_entry *e)
{
	if (!strcmp(e->path, ".")) {
		p->root_encrypted = !!e->ctx;
		if (e->ctx && e2cb_restore_policy_ties_ino(e->ctx, e->ctx_len))
			p->root_ino = e->rec.ino;
	} else if (!(e->rec.rflags & E2CB_IF_HARDLINK)) {
		p->inodes++;
	}
	if (e->ctx) {
		p->has_encrypted = 1;
		if (LINUX_S_ISREG(e->rec.mode))
			note_data_units(p, e);
		if (e2cb_restore_policy_ties_ino(e->ctx, e->ctx_len))
			p->has_lblk_policy = 1;
		if (e->ctx[0] == FSCRYPT_CONTEXT_V1)
			p->has_v1 = 1;
	}
	if (e->rec.iflags & EXT4_CASEFOLD_FL)
		p->has_casefold = 1;
	note_times(p, &e->rec);
	if (LINUX_S_ISDIR(e->rec.mode) ||
	    (LINUX_S_ISLNK(e->rec.mode) && e->rec.size >= 60))
		p->blocks++;
	if (e->xattrs_len > 64)
		p->blocks++;
	p->name_bytes += ext2fs_dir_rec_len(e->rec.rflags & E2CB_IF_NAME ?
			e->name.name_len :
			strlen(last_component(e->path)) & 0xff, 1);
}

/*
 * The inode numbers to keep, and the names that must be free at PATH
 * and in its lost+found; -1 out of memory
 */
static int note_names(struct restore *rs, const struct e2cb_entry *e)
{
	struct plan *p = &rs->plan;

	if (strcmp(e->path, ".") && !(e->rec.rflags & E2CB_IF_HARDLINK) &&
	    (rs->opts->keep_ino ||
	     (e->ctx && e2cb_restore_policy_ties_ino(e->ctx, e->ctx_len))) &&
	    map_add(&p->fixed, e->rec.ino, e->rec.ino))
		return -1;
	if (is_top_level(e->path) && !(e->rec.rflags & E2CB_IF_NAME) &&
	    !strcmp(e->path, "lost+found")) {
		p->lf_mode = e->rec.mode;
		p->lf_ino = e->rec.ino;
		p->lf_encrypted = !!e->ctx;
	}
	if (is_top_level(e->path)) {
		if (e2cb_grow((void **) &p->top, &p->top_size, p->ntop,
			       sizeof(*p->top)))
			return -1;
		e2cb_restore_entry_name(e, &p->top[p->ntop++]);
	}
	if (e->depth == 2 && !(e->rec.rflags & E2CB_IF_NAME) &&
	    !strncmp(e->path, "lost+found/", 11)) {
		if (e2cb_grow((void **) &p->lf, &p->lf_size, p->nlf,
			       sizeof(*p->lf)))
			return -1;
		e2cb_restore_entry_name(e, &p->lf[p->nlf++]);
	}
	return 0;
}

/*
 * One entry of pass one, checked and its needs noted: 0, an exit status
 * (said already), or -1 for damage the reader found in its data.
 */
static int plan_entry(void *priv, struct e2cb_source *src,
		      const struct e2cb_entry *e)
{
	struct restore *rs = priv;
	struct plan *p = &rs->plan;
	int ret;

	/* the pass ends; e2cb_restore_plan() sees why */
	if (e2cb_restore_stopped())
		return E2CB_EXIT_ERROR;
	if (note_digest(p, src))
		goto nomem;
	ret = strcmp(e->path, ".") ? 0 : check_root_entry(e);
	if (!ret)
		ret = check_entry(rs, e);
	note_device(rs, e);
	if (ret)
		return ret;
	note_needs(p, e);
	if (note_names(rs, e))
		goto nomem;
	if (e2cb_source_data(src, count_data, rs))
		return -1;
	return e2cb_restore_check_room(rs);
nomem:
	com_err(program_name, EXT2_ET_NO_MEMORY, "while reading %s",
		rs->shown);
	return E2CB_EXIT_ERROR;
}

/*
 * Pass one: read and check the whole archive, and total what the
 * restore will need.  Nothing is written.
 */
int e2cb_restore_plan(struct restore *rs)
{
	struct e2cb_sink sink = { .entry = plan_entry, .priv = rs };
	struct plan *p = &rs->plan;
	const uint8_t *d;
	errcode_t retval;
	int status;

	retval = e2cb_source_rewind(rs->src);
	if (retval)
		return retval == EXT2_ET_CRYPT_BAD_BLOB ? E2CB_EXIT_DAMAGED :
			E2CB_EXIT_ERROR;
	p->hdr = *e2cb_source_header(rs->src);
	d = e2cb_source_entry_digest(rs->src);
	if (d)
		memcpy(p->hdr_digest, d, sizeof(p->hdr_digest));
	p->block_size = p->hdr.block_size;
	p->time_min = INT64_MAX;
	p->time_max = INT64_MIN;
	status = e2cb_source_run(rs->src, &sink);
	close_plan_dirs(p, 0);
	if (e2cb_restore_stopped())
		return E2CB_EXIT_ERROR;
	if (status > 0)
		return status;
	if (status < 0) {
		com_err(program_name, 0, "%s: damaged, nothing restored: %s",
			rs->shown, e2cb_source_error(rs->src));
		return E2CB_EXIT_DAMAGED;
	}
	retval = e2cb_source_stream_digest(rs->src, p->stream);
	if (retval) {
		com_err(program_name, retval, "while reading %s", rs->shown);
		return E2CB_EXIT_ERROR;
	}
	return refuse_devices(rs);
}

void e2cb_restore_plan_free(struct plan *p)
{
	map_free(&p->fixed);
	free(p->top);
	free(p->lf);
	e2cb_digests_free(&p->digests);
	close_plan_dirs(p, 0);
	free(p->open_dirs);
	e2cb_ino_map_free(&p->linked);
	free(p->xattr_misfit);
}
