/*
 * source_online_fs.c --- backup --online: the data of regular files
 * (ciphertext by FS_IOC_READ_RAW_DATA, plaintext by pread() with
 * SEEK_DATA and SEEK_HOLE), the mounted filesystem (its root, its
 * superblock for the header, whether the kernel has the ioctls), and
 * the walk (walk.h) that backup and the mounted source drive
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <et/com_err.h>
#include "source_online.h"
#include "support/e2cb_le.h"


/* The next piece: ciphertext by whole blocks, plaintext to i_size */
static errcode_t next_piece(struct online *o, struct data_reader *dr,
			    struct piece *p)
{
	off_t d, h;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	p->off = dr->pos;
	if (dr->enc) {
		e2cb_online_entry_name(&dr->da.entry, dr->c);
		dr->da.lblk = dr->pos / o->bs;
		dr->da.buf = (uintptr_t) o->buf;
		dr->da.buf_size = E2CB_WRITER_BUF;
		if (ioctl(dr->fd, FS_IOC_READ_RAW_DATA, &dr->da) < 0)
			return errno;
		if (dr->da.i_size != dr->i_size ||
		    dr->da.block_size != o->bs)
			return E2CB_CHANGED;
		p->len = (uint64_t) dr->da.nr_blocks * o->bs;
		p->hole = !!(dr->da.flags & FSCRYPT_READ_RAW_DATA_HOLE);
		p->data = o->buf;
		dr->pos += p->len;
		return 0;
	}
	if (dr->pos >= dr->i_size)
		return 0;
	d = lseek(dr->fd, dr->pos, SEEK_DATA);
	if (d < 0 && errno != ENXIO)
		return errno;
	if (d < 0 || (uint64_t) d >= dr->i_size)
		d = dr->i_size;
	if ((uint64_t) d > dr->pos) {
		p->len = d - dr->pos;
		p->hole = 1;
		dr->pos = d;
		return 0;
	}
	h = lseek(dr->fd, dr->pos, SEEK_HOLE);
	if (h < 0)
		return errno;
	if ((uint64_t) h > dr->i_size)
		h = dr->i_size;
	p->len = h - dr->pos;
	if (p->len > E2CB_WRITER_BUF)
		p->len = E2CB_WRITER_BUF;
	n = pread(dr->fd, o->buf, p->len, dr->pos);
	if (n < 0)
		return errno;
	if ((uint64_t) n != p->len)
		return E2CB_CHANGED;	/* shrunk */
	p->data = o->buf;
	dr->pos += p->len;
	return 0;
}

/* Add the data piece @p to the stretches, joining those that abut */
static errcode_t add_stretch(struct online *o, const struct piece *p)
{
	struct e2cb_stretch *last = o->count ? &o->st[o->count - 1] : NULL;

	if (last && last->off + last->len == p->off &&
	    last->len % o->bs == 0) {
		last->len += p->len;
		return 0;
	}
	if (o->count >= E2CB_MAX_STRETCHES - 1)
		return EXT2_ET_FILE_TOO_BIG;
	if (e2cb_grow((void **) &o->st, &o->size, o->count, sizeof(*o->st)))
		return EXT2_ET_NO_MEMORY;
	o->st[o->count].off = p->off;
	o->st[o->count].len = p->len;
	o->st[o->count].pos = 0;
	o->count++;
	return 0;
}

/*
 * Map the data and read it, keeping it in @keep (the writer's buffer)
 * while it fits; with @again, feed it to @again and check that the
 * map is what the first read found.
 */
errcode_t e2cb_online_read_data(struct online *o, struct data_reader *dr,
				char *keep, e2cb_walk_data_func again,
				void *priv)
{
	struct e2cb_stretch *first = NULL;
	size_t first_count = 0;
	uint64_t kept = 0, rounded;
	struct piece p;
	errcode_t retval;

	if (again) {
		first = o->st;
		first_count = o->count;
		o->st = NULL;
		o->count = o->size = 0;
	}
	dr->pos = 0;
	for (;;) {
		retval = next_piece(o, dr, &p);
		if (retval || !p.len)
			break;
		if (p.hole)
			continue;
		retval = add_stretch(o, &p);
		if (retval)
			break;
		rounded = (p.len + o->bs - 1) / o->bs * o->bs;
		if (again)
			retval = again(priv, p.off, p.data, p.len);
		else if (keep && kept + rounded <= E2CB_WRITER_BUF)
			memcpy(keep + kept, p.data, p.len);
		if (retval)
			break;
		kept += rounded;
	}
	if (!retval && again && (o->count != first_count ||
	    memcmp(o->st, first, first_count * sizeof(*first))))
		retval = E2CB_CHANGED;
	free(first);
	return retval;
}

/*
 * A file whose data is in its inode (EXT4_INLINE_DATA_FL, which
 * FS_IOC_GETFLAGS shows) goes out as backup sends it: one region from
 * 0, read whole into o->keep, as inline data (archive-format.txt 8.4).
 * Returns 0 if it is not one region from 0 that was kept.
 */
static int send_inline(struct online *o, uint64_t i_size)
{
	if (o->count > 1 || i_size > E2CB_WRITER_BUF ||
	    (o->count && (o->st[0].off || o->st[0].len != i_size)))
		return 0;
	o->wk.preread = 1;
	o->wk.ops->set_inline(&o->wk, (const char *) o->keep,
			      o->count ? o->st[0].len : 0);
	return 1;
}

/*
 * The data of a regular file, read before its header goes out; what
 * does not fit in the end's buffer is read again after it (wk.preread
 * 0), by e2cb_online_read_data().  @inlined: the file says its data is
 * in its inode.
 */
errcode_t e2cb_online_prepare_data(struct online *o, struct online_entry *oe,
				   int dfd, const struct online_child *c,
				   struct data_reader *dr, int inlined)
{
	uint64_t total = 0, tar_size;
	char *keep;
	size_t i;
	errcode_t retval;

	memset(dr, 0, sizeof(*dr));
	dr->enc = oe->enc;
	dr->c = c;
	dr->fd = dfd;
	dr->i_size = oe->enc ? oe->i_size : oe->stx.stx_size;
	if (!oe->enc) {
		dr->fd = e2cb_online_reopen(oe->fd, O_RDONLY | O_NONBLOCK);
		if (dr->fd < 0)
			return errno;
	}
	o->count = 0;
	retval = e2cb_online_read_data(o, dr, (char *) o->keep, NULL, NULL);
	if (retval)
		return retval;
	if (inlined && !oe->enc && send_inline(o, dr->i_size))
		return 0;
	for (i = 0; i < o->count; i++)
		total += (o->st[i].len + o->bs - 1) / o->bs * o->bs;
	keep = o->wk.ops->data_buf(&o->wk, total);
	o->wk.preread = total <= E2CB_WRITER_BUF;
	if (o->wk.preread)
		memcpy(keep, o->keep, total);
	tar_size = dr->i_size;
	if (o->count && o->st[o->count - 1].off + o->st[o->count - 1].len >
	    tar_size)
		tar_size = o->st[o->count - 1].off + o->st[o->count - 1].len;
	o->wk.ops->set_stretches(&o->wk, tar_size, o->st, o->count);
	return 0;
}

#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
	__u8 len;
	__u8 uuid[16];
};
#define FS_IOC_GETFSUUID	_IOR(0x15, 0, struct fsuuid2)
#endif

/* The device of mount @mnt_id, as /proc/self/mountinfo names it */
static int mount_source(uint64_t mnt_id, char *dev, size_t size)
{
	char line[4096], *p;
	unsigned long long id;
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu", &id) != 1 || id != mnt_id)
			continue;
		p = strstr(line, " - ");
		if (p && sscanf(p, " - %*s %4095s", dev) == 1 &&
		    strlen(dev) < size && dev[0] == '/')
			found = 1;
	}
	fclose(f);
	return found;
}

/*
 * The superblock's fields of the header, read from the mounted device
 * (offline backup's header has them), if it is the device of the mount
 * and holds the filesystem of @uuid.  Returns 0 when it cannot be read.
 */
static int read_super(struct online *o, const uint8_t *uuid,
		      struct e2cb_header *h)
{
	struct ext2_super_block sb;
	char dev[4096];
	struct stat st;
	int fd, ok = 0;

	if (!mount_source(o->mnt_id, dev, sizeof(dev)))
		return 0;
	fd = open(dev, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st) && S_ISBLK(st.st_mode) && st.st_rdev == o->dev &&
	    pread(fd, &sb, sizeof(sb), SUPERBLOCK_OFFSET) == sizeof(sb) &&
	    ext2fs_le16_to_cpu(sb.s_magic) == EXT2_SUPER_MAGIC &&
	    !memcmp(sb.s_uuid, uuid, 16))
		ok = 1;
	close(fd);
	if (!ok)
		return 0;
	h->feature_compat = ext2fs_le32_to_cpu(sb.s_feature_compat);
	/*
	 * A mounted filesystem's superblock says it needs recovery and may
	 * have orphans; what the walk reads is the kernel's consistent
	 * view, as an offline backup's header says after its replay.
	 */
	h->feature_incompat = ext2fs_le32_to_cpu(sb.s_feature_incompat) &
			      ~EXT3_FEATURE_INCOMPAT_RECOVER;
	h->feature_ro_compat = ext2fs_le32_to_cpu(sb.s_feature_ro_compat) &
			       ~EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT;
	memcpy(h->hash_seed, sb.s_hash_seed, 16);
	h->def_hash_version = sb.s_def_hash_version;
	memcpy(h->encrypt_pw_salt, sb.s_encrypt_pw_salt, 16);
	h->encoding = ext2fs_le16_to_cpu(sb.s_encoding);
	h->encoding_flags = ext2fs_le16_to_cpu(sb.s_encoding_flags);
	h->inode_size = ext2fs_le16_to_cpu(sb.s_inode_size);
	if (ext2fs_le32_to_cpu(sb.s_rev_level) > EXT2_GOOD_OLD_REV)
		o->first_ino = ext2fs_le32_to_cpu(sb.s_first_ino);
	return 1;
}

/*
 * The header: the block size (statfs), the UUID (FS_IOC_GETFSUUID) and
 * the superblock's fields, read from the device when it can be: else
 * they are zero, and restore of a casefolded directory will refuse.
 */
static void fill_header(struct online *o, int fd, const char *dir,
			struct e2cb_header *h)
{
	struct fsuuid2 u;
	size_t len = strlen(dir);

	memset(h, 0, sizeof(*h));
	h->block_size = o->bs;
	memset(&u, 0, sizeof(u));
	if (!ioctl(fd, FS_IOC_GETFSUUID, &u) && u.len == 16)
		memcpy(h->uuid, u.uuid, 16);
	if (!read_super(o, h->uuid, h))
		com_err(program_name, 0, "%s: the superblock cannot be read "
			"from the mounted device: the archive's header lacks "
			"its features, hash seed and encoding", dir);
	h->root_ino = o->root_ino;
	h->journal_state = E2CB_JOURNAL_CLEAN;
	if (len >= sizeof(h->source_path))
		len = snprintf(h->source_path, sizeof(h->source_path), "<%u>",
			       o->root_ino);
	else
		memcpy(h->source_path, dir, len);
	h->source_path_len = len;
}

/*
 * Whether this kernel has the ioctls, and lets us use them: asked on
 * the root, which need not be encrypted (ENODATA then).
 */
static errcode_t probe(int dfd, const char *dir)
{
	struct fscrypt_read_raw_dir_arg ra;

	memset(&ra, 0, sizeof(ra));
	ra.buf = (uintptr_t) &ra;	/* no room: nothing is filled */
	if (!ioctl(dfd, FS_IOC_READ_RAW_DIR, &ra) || errno == ENODATA ||
	    errno == EINVAL)
		return 0;
	if (errno == ENOTTY || errno == EOPNOTSUPP)
		com_err(program_name, 0, "%s: this kernel cannot read "
			"encrypted files without the key (FS_IOC_READ_RAW_DIR: "
			"%s); backup --online needs the ioctls of the patch "
			"series in contrib/kernel", dir, strerror(errno));
	else if (errno == EPERM || errno == EACCES)
		com_err(program_name, 0, "%s: backup --online needs "
			"CAP_DAC_READ_SEARCH (FS_IOC_READ_RAW_DIR: %s)", dir,
			strerror(errno));
	else
		com_err(program_name, errno, "while asking %s for "
			"FS_IOC_READ_RAW_DIR", dir);
	return errno;
}

/* Open the root of the walk: a directory of a mounted filesystem */
static errcode_t open_root(struct online *o, const char *dir,
			   struct online_entry *oe)
{
	struct statfs sfs;
	int dfd;
	errcode_t retval;

	oe->fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (oe->fd < 0) {
		com_err(program_name, errno, "while opening %s", dir);
		return errno;
	}
	if (statx(oe->fd, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID,
		  &oe->stx) < 0 || !(oe->stx.stx_mask & STATX_MNT_ID)) {
		com_err(program_name, errno, "while asking for the mount of "
			"%s", dir);
		return errno ? errno : EOPNOTSUPP;
	}
	o->dev = makedev(oe->stx.stx_dev_major, oe->stx.stx_dev_minor);
	o->mnt_id = oe->stx.stx_mnt_id;
	o->root_ino = oe->stx.stx_ino;
	dfd = e2cb_online_reopen(oe->fd, O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		com_err(program_name, errno, "while opening %s (through "
			"/proc/self/fd)", dir);
		return errno;
	}
	retval = 0;
	if (fstatfs(dfd, &sfs) < 0)
		retval = errno;
	else if (sfs.f_type != EXT4_SUPER_MAGIC)
		retval = EXT2_ET_MAGIC_EXT2FS_FILSYS;
	if (retval)
		com_err(program_name, retval, "while checking that %s is "
			"on ext4", dir);
	else
		retval = probe(dfd, dir);
	o->bs = sfs.f_bsize;
	o->inodes_used = retval ? 0 : sfs.f_files - sfs.f_ffree;
	close(dfd);
	return retval;
}

/* One walk from the root; a pass after the first may see changes */
static errcode_t online_pass(struct e2cb_walk *wk)
{
	struct online *o = (struct online *) wk;
	struct online_entry *root = o->root;
	int fd = root->fd;

	e2cb_ino_map_free(&o->links);
	e2cb_ino_map_init_paths(&o->links);
	e2cb_path_cut(&o->path, 0);
	memset(root, 0, sizeof(*root));
	root->fd = fd;
	return e2cb_online_one(o, -1, 0, NULL, root, 0);
}

static errcode_t online_read_data(struct e2cb_walk *wk,
				  e2cb_walk_data_func func, void *priv)
{
	struct online *o = (struct online *) wk;
	errcode_t retval;

	if (!o->send_dr)
		return 0;
	retval = e2cb_online_read_data(o, o->send_dr, NULL, func, priv);
	if (!retval)
		retval = e2cb_online_unchanged(o->send_oe);
	return retval;
}

errcode_t e2cb_online_walk_freeze(struct e2cb_walk *wk, const int *out,
				  size_t nr_out)
{
	struct online *o = (struct online *) wk;
	errcode_t retval;
	int fd;

	fd = e2cb_online_reopen(o->root->fd, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		retval = errno;
		com_err(program_name, retval, "while opening %s to freeze it",
			o->dir);
		return retval;
	}
	retval = e2cb_freeze(fd, o->dev, o->dir, out, nr_out);
	close(fd);
	return retval;
}

static void online_close(struct e2cb_walk *wk)
{
	struct online *o = (struct online *) wk;

	e2cb_thaw();

	if (o->root && o->root->fd >= 0)
		close(o->root->fd);
	free(o->root);
	free(o->buf);
	free(o->keep);
	free(o->st);
	e2cb_ino_map_free(&o->links);
	e2cb_path_free(&o->path);
	free(o);
}

static const struct e2cb_walk_kind online_walk = {
	.pass = online_pass,
	.read_data = online_read_data,
	.close = online_close,
};

/*
 * The mounted filesystem's directory @dir, if its kernel has the ioctls
 * of contrib/kernel and lets us use them.  Says why on failure.
 */
errcode_t e2cb_online_walk_open(const char *dir, struct e2cb_walk **ret)
{
	struct online *o;
	errcode_t retval;
	int fd;

	*ret = NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return EXT2_ET_NO_MEMORY;
	o->wk.kind = &online_walk;
	o->dir = dir;
	o->first_ino = EXT2_GOOD_OLD_FIRST_INO;
	e2cb_ino_map_init_paths(&o->links);
	o->root = calloc(1, sizeof(*o->root));
	o->buf = malloc(E2CB_WRITER_BUF);
	o->keep = malloc(E2CB_WRITER_BUF);
	if (!o->root || !o->buf || !o->keep) {
		retval = EXT2_ET_NO_MEMORY;
		com_err(program_name, retval, "while starting");
		goto errout;
	}
	o->root->fd = -1;
	retval = open_root(o, dir, o->root);
	if (retval)
		goto errout;
	o->wk.block_size = o->bs;
	fd = e2cb_online_reopen(o->root->fd, O_RDONLY | O_DIRECTORY);
	fill_header(o, fd, dir, &o->wk.hdr);
	if (fd >= 0)
		close(fd);
	/*
	 * -p: the inodes in use, as an offline backup of the whole counts
	 * them (the reserved ones but the root are not walked); a
	 * filesystem in use may make or free some meanwhile.
	 */
	if (o->root_ino == EXT2_ROOT_INO && o->inodes_used >= o->first_ino)
		o->wk.inodes_total = o->inodes_used - (o->first_ino - 1) + 1;
	*ret = &o->wk;
	return 0;
errout:
	online_close(&o->wk);
	return retval;
}
