/*
 * backup.c --- e2cryptbak backup: write an archive of an unmounted ext4
 * filesystem without the key
 *
 * Each inode becomes one pax tar entry carrying, as records, what the
 * 2015 ext4 backup ioctls would have returned: the context with the true
 * i_size ('e5' blob), the raw name ('ef'/'ed' blob) and the stored
 * blocks, ciphertext as it lies on disk, holes kept as holes.  Here the
 * tree is walked; backup_inode.c reads what each inode holds, and the
 * writer (writer.c) makes the archive of it.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <et/com_err.h>
#include "backup.h"

#define READAHEAD_FILES	1024
#define READAHEAD_BYTES	(16 << 20)
#define MAX_DEPTH	4096

/*
 * A name of the directory being listed, its bytes in the list's pool:
 * a directory of a million names is held in some 60 bytes a name, not
 * in a struct child (272 bytes) each.
 */
struct child_ref {
	ext2_ino_t ino;
	uint32_t off;			/* of the name in the pool */
	uint32_t hash, minor_hash;
	uint8_t name_len, has_hash, file_type;
};

struct child_list {
	struct child_ref *c;
	size_t count, size;
	uint8_t *names;			/* the pool */
	size_t names_len, names_size;
	struct ext2_inode dir;
	ext2_ino_t dir_ino;
	struct backup *b;
	errcode_t retval;
};

static void fill_inode_rec(struct backup *b, ext2_ino_t ino,
			   struct ext2_inode_large *inode,
			   struct e2cb_inode_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->ino = ino;
	r->mode = inode->i_mode;
	r->uid = inode_uid(*inode);
	r->gid = inode_gid(*inode);
	r->links_count = inode->i_links_count;
	r->size = EXT2_I_SIZE(inode);
	r->iflags = inode->i_flags;
	r->generation = inode->i_generation;
	e2cb_inode_times(inode, EXT2_INODE_SIZE(b->fs->super), r);
	if (LINUX_S_ISCHR(inode->i_mode) || LINUX_S_ISBLK(inode->i_mode))
		e2cb_inode_rdev((struct ext2_inode *) inode, &r->rdev_major,
				&r->rdev_minor);
}

static errcode_t backup_dir(struct backup *b, ext2_ino_t dir,
			    struct ext2_inode_large *dir_inode, int depth);

/*
 * Skipped entries are reported and counted; the trailer says so.  A
 * directory goes with what is in it.
 */
static void skip_entry(struct backup *b, ext2_ino_t ino,
		       const struct ext2_inode_large *inode, errcode_t retval,
		       const char *what)
{
	com_err(program_name, retval, "while %s inode %u (%s); skipped%s", what,
		ino, shown_path(b), inode && LINUX_S_ISDIR(inode->i_mode) ?
		", with all that is in the directory" : "");
	b->wk.skipped++;
}

/* Data of a regular file fits in its blocks, or in its inode if inline */
static uint64_t data_need(struct backup *b,
			  const struct ext2_inode_large *inode)
{
	uint64_t need = 0;

	if (LINUX_S_ISREG(inode->i_mode))
		need = ext2fs_get_stat_i_blocks(b->fs,
				(struct ext2_inode *) inode) * 512;
	if (need < EXT2_INODE_SIZE(b->fs->super))
		need = EXT2_INODE_SIZE(b->fs->super);	/* inline data */
	return need;
}

/* What the first name of an inode carries; an error skips the entry */
static errcode_t read_entry(struct backup *b, ext2_ino_t ino,
			    struct ext2_inode_large *inode,
			    const struct child *c, int parent_enc,
			    struct region_list *rl, char **inline_buf,
			    size_t *inline_len)
{
	errcode_t retval;

	retval = e2cb_backup_crypt_records(b, ino, inode, c, parent_enc);
	if (!retval)
		retval = e2cb_backup_xattrs(b, ino, inode);
	if (!retval && LINUX_S_ISLNK(inode->i_mode))
		retval = e2cb_backup_symlink(b, ino, inode);
	if (!retval)
		retval = e2cb_backup_prepare_data(b, ino, inode, rl,
						  inline_buf, inline_len);
	return retval;
}

static errcode_t walk_data(void *priv, uint64_t off, const void *buf,
			   size_t len)
{
	struct backup *b = priv;

	return b->wk.ops->data(&b->wk, off, buf, len);
}

/*
 * Hand the entry to the writer, and the data it could not keep after
 * it.  An error of the writer was reported there.
 */
static errcode_t send_entry(struct backup *b, ext2_ino_t ino,
			    const struct ext2_inode_large *inode,
			    const struct region_list *rl, int is_data)
{
	int inlined = is_data && (inode->i_flags & EXT4_INLINE_DATA_FL);
	int has_data = is_data && !inlined;
	errcode_t fatal;
	size_t i;

	if (inlined)
		b->wk.data_bytes += EXT2_I_SIZE(inode);
	for (i = 0; i < rl->count; i++)
		b->wk.data_bytes += rl->r[i].len;
	b->sending = rl;
	fatal = b->wk.ops->send(&b->wk);
	if (!fatal && has_data && !b->wk.preread && b->wk.ops->data)
		fatal = e2cb_backup_read_data(b, rl, walk_data, b);
	b->sending = NULL;
	if (fatal && fatal != EXT2_ET_SHORT_WRITE &&
	    fatal != EXT2_ET_CANCEL_REQUESTED)
		com_err(program_name, fatal,
			"while reading the data of inode %u (%s)",
			ino, shown_path(b));
	if (!fatal)
		b->wk.entries++;
	return fatal;
}

/*
 * The entry of @inode.  Returns an error only for failures that end
 * the backup; *@sent says whether the entry went out.
 */
static errcode_t write_inode(struct backup *b, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     const struct child *c, int parent_enc, int *sent)
{
	struct e2cb_inode_rec r;
	struct region_list rl;
	const char *first = NULL;
	char *inline_buf = NULL;
	size_t inline_len = 0;
	int multi = !LINUX_S_ISDIR(inode->i_mode) &&
		    inode->i_links_count > 1 && !b->wk.every_name;
	errcode_t retval, fatal;

	memset(&rl, 0, sizeof(rl));
	fill_inode_rec(b, ino, inode, &r);
	fatal = b->wk.ops->begin(&b->wk, entry_path(b), &r,
				 data_need(b, inode));
	if (fatal)
		return fatal;
	if (multi)
		first = e2cb_ino_map_path(&b->links, ino);
	if (first) {
		/* a further name: tar hard link, data stays at the first */
		b->wk.ops->hardlink(&b->wk, first);
		retval = e2cb_backup_crypt_records(b, ino, inode, c,
						   parent_enc);
		if (retval) {
			skip_entry(b, ino, inode, retval,
				   "reading the name of");
			return 0;
		}
		goto send;
	}
	retval = read_entry(b, ino, inode, c, parent_enc, &rl, &inline_buf,
			    &inline_len);
	if (retval) {
		skip_entry(b, ino, inode, retval,
			   b->why[0] ? b->why : "reading");
		b->why[0] = 0;
		goto out;
	}
	if (multi) {
		fatal = e2cb_ino_map_add_path(&b->links, ino, entry_path(b),
					      strlen(entry_path(b)));
		if (fatal)
			goto out;
	}
	b->wk.inodes++;
	if (inode->i_flags & EXT4_ENCRYPT_FL)
		b->wk.encrypted++;
send:
	/* a regular file's first name carries its data */
	fatal = send_entry(b, ino, inode, &rl,
			   LINUX_S_ISREG(inode->i_mode) && !first);
	*sent = !fatal;
out:
	free(rl.r);
	ext2fs_free_mem(&inline_buf);
	return fatal;
}

/*
 * Write one entry, and what it holds if it is a directory.  Returns an
 * error only for failures that end the backup (the archive cannot be
 * written); damage in the source is reported and skipped.
 */
static errcode_t backup_one(struct backup *b, ext2_ino_t ino,
			    const struct child *c, int parent_enc, int depth)
{
	struct ext2_inode_large *inode;
	size_t isize = EXT2_INODE_SIZE(b->fs->super);
	errcode_t retval, fatal = 0;
	int sent = 0;

	retval = ext2fs_get_memzero(isize, &inode);
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(b->fs, ino,
					(struct ext2_inode *) inode, isize);
	if (retval) {
		skip_entry(b, ino, NULL, retval, "reading");
		goto out;
	}
	retval = ext2fs_check_linked_inode(b->fs, ino,
					   (struct ext2_inode *) inode);
	if (retval) {
		skip_entry(b, ino, inode, retval, "reading");
		goto out;
	}
	fatal = write_inode(b, ino, inode, c, parent_enc, &sent);
	if (fatal || !sent)
		goto out;
	e2cb_walk_progress(&b->wk, 0);
	if (LINUX_S_ISDIR(inode->i_mode))
		fatal = backup_dir(b, ino, inode, depth + 1);
out:
	ext2fs_free_mem(&inode);
	return fatal;
}

/* Keep @n of inode @ino in the list: 0, or DIRENT_ABORT without memory */
static int keep_child(struct child_list *cl, ext2_ino_t ino,
		      const struct ext4_encrypted_name *n)
{
	struct child_ref *r;

	if (e2cb_grow((void **) &cl->c, &cl->size, cl->count,
		      sizeof(*cl->c)) ||
	    e2cb_grow_to((void **) &cl->names, &cl->names_size,
			 cl->names_len + n->name_len, 1) ||
	    cl->names_len + n->name_len > UINT32_MAX) {
		cl->retval = EXT2_ET_NO_MEMORY;
		return DIRENT_ABORT;
	}
	r = &cl->c[cl->count++];
	r->ino = ino;
	r->off = cl->names_len;
	r->name_len = n->name_len;
	r->has_hash = n->has_hash;
	r->file_type = n->file_type;
	r->hash = n->hash;
	r->minor_hash = n->minor_hash;
	memcpy(cl->names + cl->names_len, n->name, n->name_len);
	cl->names_len += n->name_len;
	return 0;
}

static int collect_proc(ext2_filsys fs, struct ext2_dir_entry *de,
			unsigned int rec_space, void *priv)
{
	struct child_list *cl = priv;
	int len = ext2fs_dirent_name_len(de);
	struct ext4_encrypted_name n;
	errcode_t retval;

	if (de->name[0] == '.' && (len == 1 || (len == 2 &&
						de->name[1] == '.')))
		return 0;
	retval = ext2fs_dirent_encrypted_name(fs, &cl->dir, de, rec_space,
					      &n);
	if (retval) {
		com_err(program_name, retval, "in directory inode %u (%s), "
			"in the entry of inode %u; skipped", cl->dir_ino,
			shown_path(cl->b), de->inode);
		cl->b->wk.skipped++;
		return 0;
	}
	return keep_child(cl, de->inode, &n);
}

/* The @i-th name of the list, whole, for the walk of its entry */
static void get_child(const struct child_list *cl, size_t i,
		      struct child *c)
{
	const struct child_ref *r = &cl->c[i];

	memset(&c->name, 0, sizeof(c->name));
	c->ino = r->ino;
	c->name.name_len = r->name_len;
	c->name.has_hash = r->has_hash;
	c->name.file_type = r->file_type;
	c->name.hash = r->hash;
	c->name.minor_hash = r->minor_hash;
	memcpy(c->name.name, cl->names + r->off, r->name_len);
}

/* By inode; the names of one inode by their bytes (e2cb_name_cmp) */
static int cmp_child_ino(const void *a, const void *b, void *pool)
{
	const struct child_ref *x = a, *y = b;
	const uint8_t *names = pool;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return e2cb_name_cmp(names + x->off, x->name_len,
			     names + y->off, y->name_len);
}

/*
 * What ext2fs_dir_walk() found damaged is counted, entries lost or kept
 * unverified (a checksum that fails): the archive is not a clean copy.
 */
static void dir_damage_proc(ext2_filsys fs EXT2FS_ATTR((unused)),
			    const struct ext2fs_dir_damage *d, void *priv)
{
	struct child_list *cl = priv;
	char where[128];

	e2cb_dir_damage_where(d, where, sizeof(where));
	com_err(program_name, d->err, "in directory inode %u (%s), %s; %s",
		cl->dir_ino, shown_path(cl->b), where,
		ext2fs_dir_lost_string(d->lost));
	cl->b->wk.skipped++;
}

/*
 * From a cold cache each small file's data is a read of its own, made
 * when its turn comes.  Ask the kernel for the data of the children
 * from @from on, up to a budget, so that it reads them in large
 * requests while the walk writes.  Advice only: what it skips or
 * gets wrong is read as before.  Returns where the advice stopped.
 */
static size_t readahead_children(struct backup *b,
				 const struct child_list *cl, size_t from)
{
	struct e2cb_ra_files ra;
	size_t i;

	e2cb_readahead_files_begin(&ra, b->fs, READAHEAD_BYTES);
	for (i = from; i < cl->count && i - from < READAHEAD_FILES &&
	     ra.budget; i++)
		e2cb_readahead_file(&ra, cl->c[i].ino);
	e2cb_readahead_files_end(&ra);
	return i;
}

/* Path component: raw bytes, or base64url inside an encrypted dir */
static errcode_t push_child_path(struct backup *b, const struct child *c,
				 int parent_enc)
{
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];
	size_t len;

	if (parent_enc) {
		len = e2cb_b64url_encode(c->name.name, c->name.name_len, comp);
		return e2cb_path_push(&b->path, comp, len);
	}
	if (memchr(c->name.name, '/', c->name.name_len) ||
	    memchr(c->name.name, 0, c->name.name_len))
		return EXT2_ET_DIR_CORRUPTED;
	return e2cb_path_push(&b->path, c->name.name, c->name.name_len);
}

/* Whether @c is the one name a backup of a non-directory archives */
static int only_child(struct backup *b, const struct child *c)
{
	const struct ext4_encrypted_name *n = &b->only_name;

	if (b->only_done || c->ino != b->only_ino)
		return 0;
	if (n->name_len && (c->name.name_len != n->name_len ||
			    memcmp(c->name.name, n->name, n->name_len)))
		return 0;
	b->only_done = 1;
	return 1;
}

static errcode_t backup_dir(struct backup *b, ext2_ino_t dir,
			    struct ext2_inode_large *dir_inode, int depth)
{
	struct child_list cl;
	struct child *c = NULL;		/* the one walked, whole */
	int parent_enc = !!(dir_inode->i_flags & EXT4_ENCRYPT_FL);
	size_t i, old_len = b->path.len, ra_next = 0, ra_from = 0;
	errcode_t retval = 0;

	if (ext2fs_fast_test_inode_bitmap2(b->dirs_seen, dir)) {
		com_err(program_name, 0, "directory inode %u (%s) is reached "
			"twice (a loop in the directory tree); skipped", dir,
			shown_path(b));
		b->wk.skipped++;
		return 0;
	}
	ext2fs_fast_mark_inode_bitmap2(b->dirs_seen, dir);
	if (depth > MAX_DEPTH) {
		com_err(program_name, 0, "%s is nested deeper than %d levels; "
			"skipped", shown_path(b), MAX_DEPTH);
		b->wk.skipped++;
		return 0;
	}
	memset(&cl, 0, sizeof(cl));
	cl.b = b;
	cl.dir_ino = dir;
	memcpy(&cl.dir, dir_inode, sizeof(cl.dir));
	/* what can be read is backed up; the damage is reported */
	retval = ext2fs_dir_walk(b->fs, dir, &cl.dir, collect_proc,
				 dir_damage_proc, &cl);
	if (!retval)
		retval = cl.retval;
	if (!retval && !(c = malloc(sizeof(*c))))
		retval = EXT2_ET_NO_MEMORY;
	if (retval)
		goto out;
	/* inode order reads the inode tables, and mostly the data, in order */
	if (cl.count > 1)
		qsort_r(cl.c, cl.count, sizeof(*cl.c), cmp_child_ino,
			cl.names);
	for (i = 0; i < cl.count && !retval; i++) {
		/*
		 * Without the whole filesystem read ahead, advise again
		 * once half of what was advised is done.  Not for a sink
		 * that reads each file as its entry goes out: the advice
		 * reads every inode a second time, all cost when warm.
		 */
		if (!b->ra && !b->wk.sink_reads &&
		    i >= ra_from + (ra_next - ra_from) / 2 &&
		    ra_next < cl.count) {
			ra_from = ra_next;
			ra_next = readahead_children(b, &cl, ra_next);
		}
		get_child(&cl, i, c);
		if (!c->ino || c->ino > b->fs->super->s_inodes_count) {
			com_err(program_name, 0, "in directory inode %u (%s): "
				"entry with bad inode number %u; skipped", dir,
				shown_path(b), c->ino);
			b->wk.skipped++;
			continue;
		}
		if (depth == 1 && b->only_ino && !only_child(b, c))
			continue;
		if (push_child_path(b, c, parent_enc)) {
			com_err(program_name, 0, "in directory inode %u (%s): "
				"entry with '/' or NUL in its name; skipped",
				dir, shown_path(b));
			b->wk.skipped++;
			continue;
		}
		retval = backup_one(b, c->ino, c, parent_enc, depth);
		e2cb_path_cut(&b->path, old_len);
	}
out:
	free(c);
	free(cl.c);
	free(cl.names);
	return retval;
}

static void set_journal_state(struct e2cb_header *h,
			      const struct ext2fs_replay_stats *st)
{
	if (st->state == EXT2FS_REPLAY_SKIPPED) {
		h->journal_state = E2CB_JOURNAL_STALE;
	} else if (st->state == EXT2FS_REPLAY_DONE) {
		h->journal_state = E2CB_JOURNAL_REPLAYED;
		h->replay_transactions = st->transactions;
		h->replay_blocks = st->blocks;
		h->replay_fast_commits = st->fc_commits;
		h->replay_orphans = st->orphans;
	}
}

static void fill_header(struct backup *b, const char *src_path,
			ext2_ino_t root, struct e2cb_header *hp)
{
	struct ext2_super_block *sb = b->fs->super;
	struct e2cb_header h;

	memset(&h, 0, sizeof(h));
	h.block_size = b->fs->blocksize;
	memcpy(h.uuid, sb->s_uuid, 16);
	h.feature_compat = sb->s_feature_compat;
	h.feature_incompat = sb->s_feature_incompat;
	h.feature_ro_compat = sb->s_feature_ro_compat;
	memcpy(h.hash_seed, sb->s_hash_seed, 16);
	h.def_hash_version = sb->s_def_hash_version;
	memcpy(h.encrypt_pw_salt, sb->s_encrypt_pw_salt, 16);
	h.encoding = sb->s_encoding;
	h.encoding_flags = sb->s_encoding_flags;
	h.inode_size = EXT2_INODE_SIZE(sb);
	h.root_ino = root;
	set_journal_state(&h, &b->replay);
	/* a PATH longer than the record holds is named as debugfs would */
	if (strlen(src_path) >= sizeof(h.source_path))
		h.source_path_len = snprintf(h.source_path,
					     sizeof(h.source_path), "<%u>",
					     root);
	else
		h.source_path_len = strlen(src_path);
	if (h.source_path_len == strlen(src_path))
		memcpy(h.source_path, src_path, h.source_path_len);
	*hp = h;
}

/*
 * The inodes a whole-filesystem walk meets, for -p: those in use, less
 * the reserved ones but the root.  The group descriptors' counts, not the
 * superblock's, which the kernel updates only now and then.
 */
static uint64_t inodes_in_tree(ext2_filsys fs)
{
	uint64_t used = 0;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++)
		used += fs->super->s_inodes_per_group -
			ext2fs_bg_free_inodes_count(fs, g);
	if (used < EXT2_FIRST_INODE(fs->super))
		return 0;
	return used - (EXT2_FIRST_INODE(fs->super) - 1) + 1;
}

static int holds_ino_proc(ext2_ino_t dir EXT2FS_ATTR((unused)), int entry,
			  struct ext2_dir_entry *de,
			  int offset EXT2FS_ATTR((unused)),
			  int blocksize EXT2FS_ATTR((unused)),
			  char *buf EXT2FS_ATTR((unused)), void *priv)
{
	ext2_ino_t *want = priv;

	if (entry == DIRENT_DOT_FILE || entry == DIRENT_DOT_DOT_FILE ||
	    de->inode != *want)
		return 0;
	*want = 0;
	return DIRENT_ABORT;
}

/*
 * "<N>" alone names no directory entry: the first directory, in inode
 * order, that holds a name of inode N holds it in the archive too.
 */
static errcode_t find_dir_of(ext2_filsys fs, ext2_ino_t ino, ext2_ino_t *dir)
{
	ext2_inode_scan scan;
	struct ext2_inode inode;
	ext2_ino_t d, want;
	errcode_t retval;

	retval = ext2fs_open_inode_scan(fs, 0, &scan);
	if (retval)
		return retval;
	while (!(retval = ext2fs_get_next_inode(scan, &d, &inode)) && d) {
		if (!LINUX_S_ISDIR(inode.i_mode) || !inode.i_links_count ||
		    (d < EXT2_FIRST_INODE(fs->super) && d != EXT2_ROOT_INO))
			continue;
		want = ino;
		if (ext2fs_dir_iterate2(fs, d, 0, NULL, holds_ino_proc,
					&want) || want)
			continue;
		*dir = d;
		break;
	}
	ext2fs_close_inode_scan(scan);
	if (!retval && !d)
		retval = EXT2_ET_FILE_NOT_FOUND;
	return retval;
}

/*
 * The backup root: the directory PATH names, or the directory that holds
 * the non-directory PATH names, archived with that one name (which keeps
 * the raw name, and the context that encrypts it, in the archive).
 */
static errcode_t find_root(struct backup *b, const char *src_path,
			   ext2_ino_t *root)
{
	ext2_ino_t ino, dir;
	errcode_t retval;

	retval = e2cb_resolve_name(b->fs, src_path, &ino, &dir,
				   &b->only_name);
	if (retval)
		return retval;
	retval = ext2fs_check_directory(b->fs, ino);
	if (retval != EXT2_ET_NO_DIRECTORY) {
		*root = ino;
		return retval;
	}
	b->only_ino = ino;
	retval = 0;
	if (!dir) {
		memset(&b->only_name, 0, sizeof(b->only_name));
		retval = find_dir_of(b->fs, ino, &dir);
	}
	*root = dir;
	return retval;
}


/* One walk from the root; a pass after the first sees the same */
static errcode_t image_pass(struct e2cb_walk *wk)
{
	struct backup *b = (struct backup *) wk;

	ext2fs_clear_inode_bitmap(b->dirs_seen);
	e2cb_ino_map_free(&b->links);
	e2cb_ino_map_init_paths(&b->links);
	e2cb_path_cut(&b->path, 0);
	b->only_done = 0;
	return backup_one(b, b->root, NULL, 0, 0);
}

static errcode_t image_read_data(struct e2cb_walk *wk,
				 e2cb_walk_data_func func, void *priv)
{
	struct backup *b = (struct backup *) wk;

	if (!b->sending)
		return 0;
	return e2cb_backup_read_data(b, b->sending, func, priv);
}

/*
 * Where the stored blocks of the entry being sent are on the device,
 * for the end's threads to read: the walk has read them all
 * (preread_data()), so none is unreadable a moment ago, or the end
 * reads them first and says what it cannot (sink_reads).  Blocks the
 * journal's replay changed are in memory only: those go through
 * read_data().
 */
static errcode_t image_data_map(struct e2cb_walk *wk,
				const struct e2cb_stretch **map,
				size_t *count, int *fd)
{
	struct backup *b = (struct backup *) wk;
	unsigned int bs = b->fs->blocksize;
	const struct e2cb_stretch *r;
	size_t i;

	if (b->fd < 0 || !b->sending)
		return EXT2_ET_UNIMPLEMENTED;
	for (i = 0; i < b->sending->count; i++) {
		r = &b->sending->r[i];
		if (ext2fs_replay_io_changed(b->fs->io, r->pos / bs,
					     (r->len + bs - 1) / bs))
			return EXT2_ET_UNIMPLEMENTED;
	}
	*map = b->sending->r;
	*count = b->sending->count;
	*fd = b->fd;
	return 0;
}

/* For image_data_map(); without it, the data goes through read_data() */
void e2cb_image_walk_map_data(struct e2cb_walk *wk, const char *device)
{
	struct backup *b = (struct backup *) wk;

	if (b->fd < 0)
		b->fd = open(device, O_RDONLY | O_CLOEXEC);
}

ext2_filsys e2cb_image_walk_fs(struct e2cb_walk *wk)
{
	return ((struct backup *) wk)->fs;
}

static void image_close(struct e2cb_walk *wk)
{
	struct backup *b = (struct backup *) wk;

	if (b->fd >= 0)
		close(b->fd);

	e2cb_readahead_stop(b->ra);
	if (b->dirs_seen)
		ext2fs_free_inode_bitmap(b->dirs_seen);
	e2cb_ino_map_free(&b->links);
	e2cb_path_free(&b->path);
	if (b->fs)
		ext2fs_close_free(&b->fs);
	free(b);
}

static const struct e2cb_walk_kind image_walk = {
	.pass = image_pass,
	.read_data = image_read_data,
	.data_map = image_data_map,
	.close = image_close,
};

/*
 * The unmounted filesystem on @device, from @path on; its journal is
 * replayed in memory unless @stale, and with @readahead the whole of
 * it is read ahead.  Every pass walks from the root found here, and
 * the header is made of it.  Says why on failure.
 */
errcode_t e2cb_image_walk_open(const char *device, const char *path,
			       int stale, int readahead,
			       struct e2cb_walk **ret)
{
	struct backup *b;
	errcode_t retval;

	*ret = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return EXT2_ET_NO_MEMORY;
	b->wk.kind = &image_walk;
	b->fd = -1;
	e2cb_ino_map_init_paths(&b->links);
	retval = e2cb_open_source(device, stale, &b->replay, &b->fs);
	if (retval)
		goto errout;
	b->wk.block_size = b->fs->blocksize;
	if (readahead)
		e2cb_readahead_start(b->fs, device, &b->ra);
	e2cb_readahead_inode_tables(b->fs);
	retval = find_root(b, path, &b->root);
	if (retval) {
		com_err(program_name, retval, "while looking up %s", path);
		goto errout;
	}
	retval = ext2fs_allocate_inode_bitmap(b->fs, "directories seen",
					      &b->dirs_seen);
	if (retval)
		goto errout;
	if (b->root == EXT2_ROOT_INO && !b->only_ino)
		b->wk.inodes_total = inodes_in_tree(b->fs);
	fill_header(b, path, b->root, &b->wk.hdr);
	*ret = &b->wk;
	return 0;
errout:
	image_close(&b->wk);
	return retval;
}

/* -p: the inodes so far, once a second, and at the end */
void e2cb_walk_progress(struct e2cb_walk *wk, int done)
{
	time_t now;

	if (!wk->progress)
		return;
	now = time(NULL);
	if (!done && now == wk->last_progress)
		return;
	wk->last_progress = now;
	/* a subtree's share of the inodes is not known beforehand */
	if (wk->inodes_total && !done)
		fprintf(stderr, "\r%s: %llu/%llu inodes, %llu MiB",
			program_name, (unsigned long long) wk->inodes,
			(unsigned long long) wk->inodes_total,
			(unsigned long long) (wk->data_bytes >> 20));
	else
		fprintf(stderr, "\r%s: %llu inodes, %llu MiB%s",
			program_name, (unsigned long long) wk->inodes,
			(unsigned long long) (wk->data_bytes >> 20),
			done ? "\n" : "");
}

/* What a pass counted, as the trailer says it */
void e2cb_walk_counts(const struct e2cb_walk *wk, struct e2cb_trailer *t)
{
	memset(t, 0, sizeof(*t));
	t->entries = wk->entries;
	t->inodes = wk->inodes;
	t->encrypted = wk->encrypted;
	t->data_bytes = wk->data_bytes;
	t->skipped = wk->skipped;
}
