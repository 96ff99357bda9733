/*
 * restore_target.c --- restore's checks of the target, and PATH
 *
 * What the target must offer for what the first pass found: features,
 * room, inode numbers, UUID and salt, free names at PATH.  Checked
 * before the first write; PATH is made only by that write.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <et/com_err.h>
#include "restore.h"

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
		if (e2cb_restore_stopped()) {
			retval = EXT2_ET_CANCEL_REQUESTED;
			break;
		}
		if (!inode->i_links_count ||
		    !(inode->i_flags & EXT4_ENCRYPT_FL))
			continue;
		if (!ext2fs_get_encryption_context(fs, ino, inode, ctx,
						   sizeof(ctx), &len) &&
		    e2cb_restore_policy_ties_ino(ctx, len)) {
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
		com_err(program_name, 0, "refusing to restore: the archive "
			"holds files whose encryption (IV_INO_LBLK_64/32) is "
			"tied to filesystem UUID %s and their inode numbers; "
			"the target's UUID is %s.  Use --set-uuid to give the "
			"target the archive's UUID.", want, have);
		return E2CB_EXIT_ERROR;
	}
	if (target_has_lblk_policies(fs, &tied) || tied) {
		if (e2cb_restore_stopped())
			return E2CB_EXIT_ERROR;
		return e2cb_restore_refuse("--set-uuid: the target already "
					   "holds files tied to its own UUID%s",
					   "");
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
int e2cb_restore_check_inodes_free(struct restore *rs)
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
	return why ? e2cb_restore_refuse("%s", msg) : 0;
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
	com_err(program_name, 0, "refusing to restore: e4crypt derives the "
		"passphrase keys of the archive's v1-encrypted files with salt "
		"%s, and %s has salt %s.  Use --keep-pw-salt to keep the "
		"target's salt; \"e4crypt add_key -S %s\" then derives the "
		"archive's keys.", want, rs->opts->device, cur, want);
	return E2CB_EXIT_ERROR;
}

/*
 * Sizes the target's block size bounds: a file (extents map 2^32
 * blocks), a symlink (one block), an entry's extended attributes (one
 * block, and what the inode holds: check_xattrs_fit, restore_plan.c).
 */
static int check_fit(struct restore *rs)
{
	ext2_filsys fs = rs->fs;
	struct plan *p = &rs->plan;
	uint64_t max_file = ((uint64_t) fs->blocksize << 32) - 1;

	if (p->max_size > max_file)
		return e2cb_restore_refuse("the archive holds a file larger "
					   "than %s's blocks can map",
					   rs->opts->device);
	if (p->max_symlink >= fs->blocksize)
		return e2cb_restore_refuse("the archive holds a symlink "
					   "longer than %s's block",
					   rs->opts->device);
	if (p->xattr_misfit)
		return e2cb_restore_refuse("%s", p->xattr_misfit);
	return 0;
}

/* Times the target's inodes cannot hold: said before the first write */
static void warn_times(struct restore *rs)
{
	int extra = EXT2_INODE_SIZE(rs->fs->super) > EXT2_GOOD_OLD_INODE_SIZE;
	int64_t max = extra ? TIME_MAX_EXTRA : TIME_MAX_SMALL;
	const struct plan *p = &rs->plan;

	if (p->time_min >= TIME_MIN && p->time_max <= max)
		return;
	com_err(program_name, 0, "the archive holds times from %lld to %lld "
		"seconds since 1970; the target's %u-byte inodes hold %lld to "
		"%lld: the others are clamped, as the kernel clamps them",
		(long long) p->time_min, (long long) p->time_max,
		EXT2_INODE_SIZE(rs->fs->super), (long long) TIME_MIN,
		(long long) max);
}

/* Everything the target must offer, checked before the first write. */
int e2cb_restore_preflight(struct restore *rs, const struct e2cb_header *h)
{
	ext2_filsys fs = rs->fs;
	struct plan *p = &rs->plan;
	int ret;
	char msg[200];

	if (!ext2fs_has_feature_extents(fs->super))
		return e2cb_restore_refuse("%s is not ext4 (no extents "
					   "feature)", rs->opts->device);
	if (!(fs->super->s_state & EXT2_VALID_FS) ||
	    (fs->super->s_state & EXT2_ERROR_FS) ||
	    ext2fs_has_feature_journal_needs_recovery(fs->super))
		return e2cb_restore_refuse("%s was not cleanly unmounted or "
					   "has errors; run e2fsck first",
					   rs->opts->device);
	if (p->has_encrypted && !ext2fs_has_feature_encrypt(fs->super)) {
		if (!rs->opts->add_encrypt)
			return e2cb_restore_refuse("%s lacks the encrypt "
						   "feature; pass "
						   "--enable-encrypt to turn "
						   "it on (as tune2fs -O "
						   "encrypt does)",
						   rs->opts->device);
	}
	if (p->has_encrypted_data && fs->blocksize != h->block_size &&
	    (p->data_bs_bound || p->max_data_unit > fs->blocksize)) {
		snprintf(msg, sizeof(msg), "the archive's encrypted files "
			 "were written in %u-byte %s, the target has "
			 "%u-byte blocks", p->data_bs_bound ? h->block_size :
			 p->max_data_unit, p->data_bs_bound ? "blocks" :
			 "data units", fs->blocksize);
		return e2cb_restore_refuse("%s", msg);
	}
	if (p->has_casefold && (!ext2fs_has_feature_casefold(fs->super) ||
				fs->super->s_encoding != h->encoding))
		return e2cb_restore_refuse("the archive holds casefolded "
					   "directories; %s lacks casefold "
					   "with the same encoding",
					   rs->opts->device);
	ret = e2cb_restore_check_room(rs);
	if (ret)
		return ret;
	if (check_fit(rs) || check_uuid(rs, h) || check_salt(rs, h))
		return E2CB_EXIT_ERROR;
	warn_times(rs);
	if (p->verity_untreed)
		com_err(program_name, 0, "%llu fs-verity files come "
			"without their Merkle tree (unencrypted, or backed up "
			"online by an older kernel), and are restored as plain "
			"files (fsverity enable makes them verity files again)",
			(unsigned long long) p->verity_untreed);
	return 0;
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

/*
 * Make a plain directory on the way to PATH (owned by root, 0755); PATH
 * itself, @last, gets the number of a root whose policy ties it.
 */
static errcode_t make_path_dir(struct restore *rs, ext2_ino_t parent,
			       const char *name, size_t len, int last,
			       ext2_ino_t *ino)
{
	struct e2cb_entry e;
	struct dir_frame frame;
	struct ext4_encrypted_name n;
	time_t now = time(NULL);
	errcode_t retval;

	memset(&e, 0, sizeof(e));
	e.path = "";
	e.rec.mode = LINUX_S_IFDIR | 0755;
	if (last)
		e.rec.ino = rs->plan.root_ino;
	e.rec.atime.sec = e.rec.mtime.sec = e.rec.ctime.sec = now;
	memset(&n, 0, sizeof(n));
	n.name_len = len;
	memcpy(n.name, name, len);
	e2cb_restore_frame_init(rs, &frame, parent, 0);
	/* the name on disk before the inode is ours, or taken back */
	frame.write_through = 1;
	retval = e2cb_restore_inode(rs, &frame, &e, &n);
	if (!retval)
		retval = e2cb_restore_frame_close(&frame);
	ext2fs_dir_append_free(&frame.app);
	if (retval)
		return retval;
	/* it was pushed as a new directory: take it back off */
	*ino = rs->stack[--rs->depth].ino;
	return 0;
}

/*
 * Find PATH; no component of it may be encrypted.  Missing directories
 * on the way are only noted (rs->target_new) unless @create, the first
 * write of the restore: checks never write.
 */
int e2cb_restore_prepare_path(struct restore *rs, int create)
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
				return e2cb_restore_refuse("%s is not a "
							   "directory",
							   rs->opts->path);
		}
		for (; *p == '/'; p++)
			;
		if (!*p)
			break;
		if (!missing && (inode.i_flags & EXT4_ENCRYPT_FL))
			return e2cb_restore_refuse("%s lies inside an "
						   "encrypted directory, "
						   "where names need its key",
						   rs->opts->path);
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if (end - p > EXT2_NAME_LEN)
			return e2cb_restore_refuse("a component of %s is too "
						   "long", rs->opts->path);
		retval = missing ? EXT2_ET_FILE_NOT_FOUND :
			 e2cb_lookup_raw(fs, ino, (const uint8_t *) p,
					 end - p, &next);
		if (retval == EXT2_ET_FILE_NOT_FOUND) {
			rs->target_new = 1;
			missing = !create;
			retval = create ? make_path_dir(rs, ino, p, end - p,
							!end[strspn(end, "/")],
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
		return e2cb_restore_refuse("%s is an encrypted directory; "
					   "names there need its key",
					   rs->opts->path);
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
		return e2cb_restore_refuse("the archive's lost+found is not a "
					   "directory; e2fsck wants "
					   "/lost+found a directory: give a "
					   "PATH%s", "");
	if (rs->plan.lf_encrypted)
		return e2cb_restore_refuse("the archive's lost+found is "
					   "encrypted; e2fsck wants "
					   "/lost+found unencrypted: give a "
					   "PATH%s", "");
	return 0;
}

static int refuse_name(const char *where,
		       const struct ext4_encrypted_name *n)
{
	char shown[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];

	shown[e2cb_b64url_encode(n->name, n->name_len, shown)] = 0;
	com_err(program_name, 0, "refusing to restore: %s already holds an "
		"entry named %.*s (base64url %s)", where, (int) n->name_len,
		(const char *) n->name, shown);
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
	uint64_t key = e2cb_restore_name_key(0, (const uint8_t *) de->name,
					     ext2fs_dirent_name_len(de));

	if (e2cb_restore_name_set_add(set, key) >= 0)
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
	return e2cb_restore_name_set_has(set,
					 e2cb_restore_name_key(0, n->name,
							       n->name_len)) &&
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

/*
 * An encrypted root whose policy ties its names to its inode number
 * (IV_INO_LBLK) goes into a PATH of that number: one restore makes, the
 * number free, or an empty one that has it.
 */
static int check_root_ino(struct restore *rs)
{
	ext2_ino_t ino = rs->plan.root_ino;
	ext2_filsys fs = rs->fs;
	char msg[160];

	if (!ino || (!rs->target_new && rs->target == ino))
		return 0;
	if (rs->target_new && ino >= EXT2_FIRST_INODE(fs->super) &&
	    ino <= fs->super->s_inodes_count &&
	    !ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		return 0;
	snprintf(msg, sizeof(msg), "the archive's root is encrypted with an "
		 "IV_INO_LBLK policy, which ties its names to its inode "
		 "number %u: %s must be new and inode %u free", ino,
		 rs->opts->path, ino);
	return e2cb_restore_refuse("%s", msg);
}

/* Names at PATH must be free, lost+found at the root excepted. */
int e2cb_restore_check_collisions(struct restore *rs)
{
	struct plan *p = &rs->plan;
	struct name_set set;
	size_t i;
	int ret = 0;

	if (check_lost_found(rs))
		return E2CB_EXIT_ERROR;
	if (p->root_encrypted) {
		if (rs->target == EXT2_ROOT_INO)
			return e2cb_restore_refuse("the archive's root is an "
						   "encrypted directory; give "
						   "a PATH for it%s",
						   "");
		if (!rs->target_new && !is_empty_dir(rs->fs, rs->target))
			return e2cb_restore_refuse("%s must be new or empty "
						   "to take the archive's "
						   "encrypted root",
						   rs->opts->path);
		return check_root_ino(rs);
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
