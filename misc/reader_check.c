/*
 * reader_check.c --- the checks of each entry an archive holds
 *
 * What the records of an entry say, checked against each other, the tar
 * header and the entries before: the records' checksums and sequence
 * numbers, the path each was written for, the tree order, the hard
 * links, the sum of the data before and the trailer's counts.  With
 * reader.c, which reads the stream and the data, the one place where
 * an archive is checked; each check is made here once.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "reader_int.h"

/* Record @name in the pax header, or NULL; one given twice is damage. */
const void *e2cb_reader_has_rec(struct e2cb_reader *r, const char *name,
				size_t *len, int *dup)
{
	const char *n;
	const void *v, *found = NULL;
	size_t s;

	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK) {
		if (strcmp(n, name))
			continue;
		if (found)
			*dup = 1;
		found = v;
		*len = s;
	}
	return found;
}

/*
 * Every record carries the archive's version (doc/archive-format.txt,
 * 11): @what's, sealed at @rec, must be the header's.
 */
int e2cb_reader_same_version(struct e2cb_reader *r, const void *rec,
			     const char *what)
{
	if (e2cb_get_le16((const uint8_t *) rec + 4) == r->hdr.version)
		return 0;
	return e2cb_reader_damage(r, "%s's version differs from the "
				  "header's", what);
}

/* Record @name of the entry: in its group if it has one (version 2) */
static const void *find_rec(struct e2cb_reader *r, const char *name,
			    size_t *len, int *dup)
{
	if (r->grp)
		return e2cb_reader_group_rec(r, name, len);
	return e2cb_reader_has_rec(r, name, len, dup);
}

/* What is wrong with a record that find_rec() found, or did not */
static const char *rec_fault(const void *v, int dup)
{
	return dup ? "duplicated" : v ? "unexpected" : "missing";
}

/* Any record we do not know is a sign of damage or of a newer format. */
static int check_rec_names(struct e2cb_reader *r)
{
	static const char *const known[] = {
		E2CB_REC_HEADER, E2CB_REC_TRAILER, E2CB_REC_INODE,
		E2CB_REC_METADATA, E2CB_REC_NAME, E2CB_REC_XATTRS,
		E2CB_REC_SYMLINK, NULL
	};
	const char *n;
	const void *v;
	size_t s;
	int i;

	/* a group's kinds were checked as its records entry was read */
	if (r->grp)
		return 0;
	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK) {
		for (i = 0; known[i] && strcmp(n, known[i]); i++)
			;
		if (!known[i])
			return e2cb_reader_damage(r, "unknown record '%s'", n);
	}
	return 0;
}

/* The header and trailer entries are empty files carrying one record */
static int check_marker_entry(struct e2cb_reader *r, const char *rec)
{
	const char *n;
	const void *v;
	size_t s;

	if (archive_entry_size(r->ae) != 0 ||
	    archive_entry_filetype(r->ae) != AE_IFREG)
		return e2cb_reader_damage(r, "the %s entry is not an empty "
					  "file", rec);
	archive_entry_xattr_reset(r->ae);
	while (archive_entry_xattr_next(r->ae, &n, &v, &s) == ARCHIVE_OK)
		if (strcmp(n, rec))
			return e2cb_reader_damage(r, "the %s entry carries "
						  "'%s' too", rec, n);
	return 0;
}

/* The previous entry's data, as the sum in the record after it says */
static int check_prev_data(struct e2cb_reader *r, uint64_t bytes,
			   uint32_t crc)
{
	uint32_t got = e2cb_sum_final(&r->sum);

	if (!(r->flags & E2CB_READ_DATA))
		return 0;
	if (r->sum.bytes != bytes || (E2CB_CHECK_SUMS && got != crc))
		return e2cb_reader_damage_prev(r, "its data is damaged "
			"(%llu bytes read, crc32c %08x; %llu bytes, %08x "
			"recorded in the next entry)",
			(unsigned long long) r->sum.bytes, got,
			(unsigned long long) bytes, crc);
	return 0;
}

/* What the trailer counts must be what the archive held */
static int check_trailer(struct e2cb_reader *r, const void *v, size_t len)
{
	const struct e2cb_trailer *t = &r->trailer;
	errcode_t retval;

	retval = e2cb_decode_trailer(v, len, &r->trailer);
	if (!retval && (r->trailer.tflags & ~E2CB_TF_INCOMPLETE))
		retval = EXT2_ET_CRYPT_BAD_BLOB;
	if (retval)
		return e2cb_reader_damage(r, "the trailer is damaged (%s)",
					  error_message(retval));
	if (e2cb_reader_same_version(r, v, "the trailer"))
		return -1;
	if (t->seq != r->next_seq)
		return e2cb_reader_damage(r, "the trailer has sequence number "
					  "%u where %u was due: entries are "
					  "missing", t->seq, r->next_seq);
	if (check_prev_data(r, t->prev_data_bytes, t->prev_data_crc))
		return -1;
	if (t->entries != r->entries || t->inodes != r->inodes ||
	    t->encrypted != r->encrypted)
		return e2cb_reader_damage(r, "the trailer counts %llu "
					  "entries, %llu inodes, %llu "
					  "encrypted; the archive holds %llu, "
					  "%llu, %llu",
					  (unsigned long long) t->entries,
					  (unsigned long long) t->inodes,
					  (unsigned long long) t->encrypted,
					  (unsigned long long) r->entries,
					  (unsigned long long) r->inodes,
					  (unsigned long long) r->encrypted);
	if ((r->flags & E2CB_READ_DATA) && t->data_bytes != r->data_bytes)
		return e2cb_reader_damage(r, "the trailer counts %llu data "
					  "bytes; the archive holds %llu",
					  (unsigned long long) t->data_bytes,
					  (unsigned long long) r->data_bytes);
	return 0;
}

static int decode_crypt_records(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0;
	int dup = 0, is_dir = 0;
	uint32_t mode = 0;
	const uint8_t *dctx;
	size_t dctx_len;
	errcode_t retval;

	v = find_rec(r, E2CB_REC_METADATA, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_METADATA) || dup)
		return e2cb_reader_damage(r, "the metadata record is %s",
					  rec_fault(v, dup));
	if (v) {
		retval = ext2fs_decode_metadata_blob(v, len, &e->i_size, &e->ctx,
						  &e->ctx_len);
		if (retval)
			return e2cb_reader_damage(r, "the metadata record is "
						  "damaged (%s)",
						  error_message(retval));
		if (e->i_size != e->rec.size)
			return e2cb_reader_damage(r, "the metadata record's "
				"i_size %llu differs from the inode's %llu",
				(unsigned long long) e->i_size,
				(unsigned long long) e->rec.size);
	}
	v = find_rec(r, E2CB_REC_NAME, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_NAME) || dup)
		return e2cb_reader_damage(r, "the name record is %s",
					  rec_fault(v, dup));
	if (!v)
		return 0;
	retval = ext2fs_decode_filename_blob(v, len, &e->name, &is_dir, &mode,
					  &dctx, &dctx_len);
	if (retval)
		return e2cb_reader_damage(r, "the name record is damaged (%s)",
					  error_message(retval));
	if (is_dir != LINUX_S_ISDIR(e->rec.mode) ||
	    (is_dir && mode != e->rec.mode))
		return e2cb_reader_damage(r, "the name record disagrees with "
					  "the inode about the file type or "
					  "mode");
	return 0;
}

static int count_xattr(int index EXT2FS_ATTR((unused)),
		       const char *name EXT2FS_ATTR((unused)),
		       size_t name_len EXT2FS_ATTR((unused)),
		       const void *value EXT2FS_ATTR((unused)),
		       size_t value_len EXT2FS_ATTR((unused)), void *priv)
{
	(*(size_t *) priv)++;
	return 0;
}

static int decode_other_records(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0, n = 0;
	int dup = 0;

	v = find_rec(r, E2CB_REC_XATTRS, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_XATTRS) || dup)
		return e2cb_reader_damage(r, "the xattr record is %s",
					  rec_fault(v, dup));
	if (v && e2cb_xattr_rec_iterate(v, len, count_xattr, &n))
		return e2cb_reader_damage(r, "the xattr record is damaged");
	if (n > E2CB_MAX_XATTRS)
		return e2cb_reader_damage(r, "%zu extended attributes, over "
					  "the limit of %d", n,
					  E2CB_MAX_XATTRS);
	e->xattrs = v;
	e->xattrs_len = v ? len : 0;
	v = find_rec(r, E2CB_REC_SYMLINK, &len, &dup);
	if (!!v != !!(e->rec.rflags & E2CB_IF_SYMLINK) || dup)
		return e2cb_reader_damage(r, "the symlink record is %s",
					  rec_fault(v, dup));
	if (v && (e2cb_check_sealed(v, len) || len - 4 != e->rec.size))
		return e2cb_reader_damage(r, "the symlink record is damaged");
	/* the target as the kernel and e2fsck take it: its own length */
	if (v && ext2fs_check_encrypted_symlink(v, len - 4))
		return e2cb_reader_damage(r, "the encrypted symlink's target "
					  "gives another length than its "
					  "size");
	e->symlink = v;
	e->symlink_len = v ? len - 4 : 0;
	return 0;
}

/* The last component of an encrypted name must be its base64url. */
static int check_name_path(struct e2cb_reader *r, const struct e2cb_entry *e)
{
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];
	size_t plen = strlen(e->path), clen;

	if (!(e->rec.rflags & E2CB_IF_NAME)) {
		const char *slash = strrchr(e->path, '/');

		clen = slash ? plen - (slash + 1 - e->path) : plen;
		if (clen > EXT2_NAME_LEN)
			return e2cb_reader_damage(r, "the name is longer than "
						  "%d bytes", EXT2_NAME_LEN);
		return 0;
	}
	clen = e2cb_b64url_encode(e->name.name, e->name.name_len, comp);
	if (plen < clen || memcmp(e->path + plen - clen, comp, clen) ||
	    (plen > clen && e->path[plen - clen - 1] != '/'))
		return e2cb_reader_damage(r, "the path does not end in the "
					  "base64url of the raw name");
	return 0;
}

static int decode_entry(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0;
	int dup = 0;
	errcode_t retval;

	v = find_rec(r, E2CB_REC_INODE, &len, &dup);
	if (!v || dup)
		return e2cb_reader_damage(r, "the inode record is %s",
					  dup ? "duplicated" : "missing");
	retval = e2cb_decode_inode(v, len, &e->rec);
	if (retval)
		return e2cb_reader_damage(r, "the inode record is damaged (%s)",
					  error_message(retval));
	if (e2cb_reader_same_version(r, v, "the inode record"))
		return -1;
	if (e->rec.seq != r->next_seq)
		return e2cb_reader_damage(r, "sequence number %u where %u was "
					  "due: entries are missing or out of "
					  "order", e->rec.seq, r->next_seq);
	if (E2CB_CHECK_SUMS &&
	    e->rec.path_crc != e2cb_crc32c(~0U, e->path, strlen(e->path)))
		return e2cb_reader_damage(r, "the path was altered");
	if (check_prev_data(r, e->rec.prev_data_bytes, e->rec.prev_data_crc))
		return -1;
	if (find_rec(r, E2CB_REC_HEADER, &len, &dup))
		return e2cb_reader_damage(r, "a header record on an inode "
					  "entry");
	if (check_rec_names(r) || decode_crypt_records(r, e) ||
	    decode_other_records(r, e) || check_name_path(r, e))
		return -1;
	return 0;
}

/*
 * tar writers append '/' to directory names; the archive's own paths
 * (over which path_crc runs) have none, and the root is ".".
 */
int e2cb_reader_set_path(struct e2cb_reader *r, const char *path)
{
	struct e2cb_path_buf *p = &r->path;
	size_t len;

	/* an entry without a path has no name of its own: name the one
	 * before it */
	if (!path)
		return e2cb_reader_damage_prev(r, "the entry after this one "
					       "has no path");
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (e2cb_path_set(p, path, len))
		return e2cb_reader_damage(r, "out of memory");
	if (!strcmp(p->s, "./") || !strcmp(p->s, "/"))
		e2cb_path_set(p, ".", 1);
	return 0;
}

/* Paths are relative, made of real names: no "", ".", ".." or "/x" */
static int check_path_syntax(struct e2cb_reader *r, const char *path)
{
	const char *p = path, *end;
	size_t len;

	if (!strcmp(path, "."))
		return 0;
	for (;;) {
		end = strchr(p, '/');
		len = end ? (size_t) (end - p) : strlen(p);
		if (len == 0 || len > EXT2_NAME_LEN * 2 ||
		    (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return e2cb_reader_damage(r, "the path is not a "
						  "plain relative path");
		if (!end)
			return 0;
		p = end + 1;
	}
}

/*
 * Entries come in pre-order: each one's directory is an earlier entry
 * still open.  Pop what it closes; e->depth is its number of components.
 */
static int check_path_order(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const char *slash = strrchr(e->path, '/');
	size_t plen = slash ? (size_t) (slash - e->path) : 0;
	size_t top;

	if (!strcmp(e->path, ".")) {
		if (r->ndirs || e->index != 1)
			return e2cb_reader_damage(r, "the root entry is not "
						  "the first");
		e->depth = 0;
		return 0;
	}
	/* the root's length is 0, and only the root's */
	while (r->ndirs) {
		top = r->dir_len[r->ndirs - 1];
		if (top == plen && !memcmp(r->dir_path.s, e->path, plen))
			break;
		r->ndirs--;
	}
	if (!r->ndirs)
		return e2cb_reader_damage(r, "the entry's directory is not "
					  "an earlier entry");
	e->depth = r->ndirs;
	if (e->depth > E2CB_MAX_DEPTH)
		return e2cb_reader_damage(r, "nested %u levels deep, over the "
					  "limit of %d", e->depth,
					  E2CB_MAX_DEPTH);
	return 0;
}

/* @path is a child of the deepest open directory, or the root */
static int push_dir(struct e2cb_reader *r, const char *path)
{
	size_t len = strcmp(path, ".") ? strlen(path) : 0;

	if (e2cb_grow((void **) &r->dir_len, &r->dirs_size, r->ndirs,
		      sizeof(*r->dir_len)) ||
	    e2cb_path_set(&r->dir_path, path, len))
		return e2cb_reader_damage(r, "out of memory");
	r->dir_len[r->ndirs++] = len;
	return 0;
}

static int path_digest(const char *path, uint8_t md[E2CB_LINK_MD_LEN])
{
	uint8_t full[EVP_MAX_MD_SIZE];

	if (!EVP_Digest(path, strlen(path), full, NULL, EVP_sha256(), NULL))
		return -1;
	memcpy(md, full, E2CB_LINK_MD_LEN);
	return 0;
}

/* An inode with several names: the first holds its data */
static int linked_add(struct e2cb_reader *r, uint32_t ino, const char *path)
{
	uint8_t *md;

	/* inode 0 is no inode, and no hard link finds it */
	if (!ino || e2cb_ino_map_find(&r->linked, ino))
		return 0;
	if (e2cb_ino_map_add(&r->linked, ino, (void **) &md) ||
	    path_digest(path, md))
		return e2cb_reader_damage(r, "out of memory");
	return 0;
}

/*
 * A hard link names the inode's first entry: by inode number in its
 * record (what restore and extract follow), and by path in the tar
 * header (what tar follows).  A hostile or damaged archive could make
 * the two differ.
 */
static int check_hard_link(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const uint8_t *first = e2cb_ino_map_find(&r->linked, e->rec.ino);
	const char *target = archive_entry_hardlink(r->ae);
	uint8_t md[E2CB_LINK_MD_LEN];

	if (LINUX_S_ISDIR(e->rec.mode) || !first)
		return e2cb_reader_damage(r, "a hard link to inode %u, which "
					  "no earlier entry holds", e->rec.ino);
	if (path_digest(target, md))
		return e2cb_reader_damage(r, "out of memory");
	/* the path itself, by SHA-256: a crc is no match for a forger */
	if (memcmp(md, first, sizeof(md)))
		return e2cb_reader_damage(r, "the hard link's tar target is "
					  "not the entry that holds inode %u",
					  e->rec.ino);
	return 0;
}

static int expected_tar_type(uint32_t mode)
{
	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFDIR: return AE_IFDIR;
	case LINUX_S_IFLNK: return AE_IFLNK;
	case LINUX_S_IFCHR: return AE_IFCHR;
	case LINUX_S_IFBLK: return AE_IFBLK;
	case LINUX_S_IFIFO: return AE_IFIFO;
	case LINUX_S_IFREG:
	case LINUX_S_IFSOCK: return AE_IFREG;
	}
	return -1;
}

/* What the inode record says must agree with the tar header and itself */
static int check_consistency(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const struct e2cb_inode_rec *rec = &e->rec;
	int hard = !!(rec->rflags & E2CB_IF_HARDLINK);

	if (hard != !!archive_entry_hardlink(r->ae))
		return e2cb_reader_damage(r, "the hard link flag and the tar "
					  "header disagree");
	if (hard && check_hard_link(r, e))
		return -1;
	if (!hard && expected_tar_type(rec->mode) !=
	    (int) archive_entry_filetype(r->ae))
		return e2cb_reader_damage(r, "the tar type disagrees with the "
					  "inode's mode 0%o", rec->mode);
	if (!hard && !!(rec->rflags & E2CB_IF_METADATA) !=
	    !!(rec->iflags & EXT4_ENCRYPT_FL))
		return e2cb_reader_damage(r, "the inode's encrypt flag and "
					  "its metadata record disagree");
	if (!hard && LINUX_S_ISLNK(rec->mode) &&
	    rec->size > E2CB_MAX_SYMLINK)
		return e2cb_reader_damage(r, "a symlink target of %llu bytes, "
					  "over the limit of %d",
					  (unsigned long long) rec->size,
					  E2CB_MAX_SYMLINK);
	if ((rec->rflags & E2CB_IF_SYMLINK) &&
	    (!LINUX_S_ISLNK(rec->mode) || !(rec->iflags & EXT4_ENCRYPT_FL)))
		return e2cb_reader_damage(r, "a symlink record on an entry "
					  "that is not an encrypted symlink");
	if ((hard || !LINUX_S_ISREG(rec->mode)) && e->tar_size)
		return e2cb_reader_damage(r, "data on an entry that has none");
	if (((rec->rflags & E2CB_IF_DIRENT_HASH) &&
	     !(rec->rflags & E2CB_IF_NAME)) ||
	    ((rec->rflags & E2CB_IF_INLINE) && !LINUX_S_ISREG(rec->mode)))
		return e2cb_reader_damage(r, "the inode record's flags "
					  "contradict each other");
	return 0;
}

/* The header entry: an empty file carrying the header record only */
int e2cb_reader_check_header(struct e2cb_reader *r)
{
	const void *v;
	size_t len = 0;
	int dup = 0;
	errcode_t retval;

	v = find_rec(r, E2CB_REC_HEADER, &len, &dup);
	if (!v || dup)
		return e2cb_reader_damage(r, "not an e2cryptbak archive (the "
					  "first entry has no %s record)",
					  E2CB_REC_HEADER);
	if (check_marker_entry(r, E2CB_REC_HEADER))
		return -1;
	retval = e2cb_decode_header(v, len, &r->hdr);
	if (retval == EXT2_ET_CRYPT_UNKNOWN_CONTEXT_VERSION)
		return e2cb_reader_damage(r, "archive format version %u is "
					  "not supported (this is %u)",
					  e2cb_get_le16((const uint8_t *) v +
							4),
					  E2CB_FORMAT_VERSION);
	if (retval)
		return e2cb_reader_damage(r, "the archive header is damaged "
					  "(%s)", error_message(retval));
	r->next_seq = 1;
	return 0;
}

/* The trailer, when the entry is the trailer entry */
static int trailer_entry(struct e2cb_reader *r, const void *v, size_t len,
			 int dup)
{
	if (dup || check_marker_entry(r, E2CB_REC_TRAILER))
		return e2cb_reader_damage(r, "the trailer entry is malformed");
	if (check_trailer(r, v, len))
		return -1;
	return E2CB_READER_END;
}

/* One more entry of the archive, and one more inode unless a hard link */
static void count_entry(struct e2cb_reader *r, const struct e2cb_entry *e)
{
	r->next_seq++;
	r->entries++;
	if (!(e->rec.rflags & E2CB_IF_HARDLINK)) {
		r->inodes++;
		if (e->rec.iflags & EXT4_ENCRYPT_FL)
			r->encrypted++;
	}
}

/*
 * The entry whose tar header was just read, at r->path: 0 when all
 * it says holds, E2CB_READER_END for a sound trailer (what follows it
 * is the caller's to check), -1 for damage.
 */
int e2cb_reader_check_entry(struct e2cb_reader *r, struct e2cb_entry *e)
{
	const void *v;
	size_t len = 0;
	int dup = 0;

	v = find_rec(r, E2CB_REC_TRAILER, &len, &dup);
	if (v)
		return trailer_entry(r, v, len, dup);
	if (check_path_syntax(r, e->path) || decode_entry(r, e))
		return -1;
	e->linkname = archive_entry_hardlink(r->ae);
	if (!e->linkname)
		e->linkname = archive_entry_symlink(r->ae);
	e->tar_size = archive_entry_size(r->ae);
	if (check_consistency(r, e) || check_path_order(r, e))
		return -1;
	if (LINUX_S_ISDIR(e->rec.mode) && push_dir(r, e->path))
		return -1;
	if (!(e->rec.rflags & E2CB_IF_HARDLINK) && e->rec.links_count > 1 &&
	    !LINUX_S_ISDIR(e->rec.mode) &&
	    linked_add(r, e->rec.ino, e->path))
		return -1;
	count_entry(r, e);
	return 0;
}

void e2cb_reader_checks_init(struct e2cb_reader *r)
{
	e2cb_ino_map_init(&r->linked, E2CB_LINK_MD_LEN);
}

void e2cb_reader_checks_free(struct e2cb_reader *r)
{
	e2cb_path_free(&r->path);
	e2cb_path_free(&r->dir_path);
	free(r->dir_len);
	e2cb_ino_map_free(&r->linked);
}
