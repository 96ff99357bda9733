/*
 * online_ioctl.c --- drive the keyless backup ioctls of contrib/kernel
 *
 * FS_IOC_READ_RAW_DIR, FS_IOC_GET_RAW_ENTRY and FS_IOC_READ_RAW_DATA are
 * the read side of the 2015 ext4 backup ioctls, brought to fscrypt by the
 * patch series in contrib/kernel; no released kernel has them, so their
 * uapi is repeated here.  Used by the k_online_* tests in the kernel lab.
 *
 * Usage:
 *   online_ioctl walk DIR [OUTDIR]
 *	For DIR (an encrypted directory) and every directory below it,
 *	print one line per entry as stored on disk, one per inode with its
 *	'e5' blob and symlink target, and one per regular file with the
 *	runs of its ciphertext (written, holes as zeros, to OUTDIR/INO):
 *	  N DIR_INO HEXNAME INO DTYPE HASH|-
 *	  M INO MODE E5HEX TARGETHEX|-
 *	  R INO BLOCKSIZE I_SIZE RUNS	(RUNS: D:LBLK+N,H:LBLK+N,...)
 *	Subdirectories are opened through the names readdir(3) shows for
 *	their inode numbers (with or without the key).
 *   online_ioctl probe DIR
 *	Issue each ioctl once on DIR; print the errno names, "ok" if none
 *	failed (used to check that unprivileged callers get EPERM).
 *   online_ioctl plain DIR NAME
 *	Ask the unencrypted DIR for its entry NAME (a plain name) with
 *	FS_IOC_GET_RAW_ENTRY and FS_IOC_READ_RAW_DATA (block 0): print
 *	"GET_RAW_ENTRY ok|ERRNO" and "READ_RAW_DATA ok|ERRNO" (the kernel
 *	answers for encrypted inodes only: ENODATA for the rest).
 *   online_ioctl copy SRC DSTPARENT NAME
 *	The write side: create in the unencrypted directory DSTPARENT an
 *	encrypted directory NAME with the context (and casefolding) of the
 *	encrypted directory SRC (FS_IOC_CREATE_RAW), then every entry below SRC
 *	under its raw name, with its 'e5' blob, stored symlink target,
 *	stored hash, owner and device number, hard links as links, and
 *	the ciphertext of regular files (FS_IOC_WRITE_RAW_DATA), all read
 *	from SRC with the read side.  Prints one summary line.  With
 *	ONLINE_COPY_SKIP_EXISTING set, entries that exist are left alone.
 *   online_ioctl refuse DIR [OTHERDIR]
 *	Try FS_IOC_CREATE_RAW and FS_IOC_WRITE_RAW_DATA in the (empty,
 *	encrypted) DIR with bad arguments, a context of OTHERDIR's policy,
 *	and once well; print "CASE ERRNO" lines ("CASE ok" on success).
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/types.h>
#include <linux/fs.h>
#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL	0x40000000
#endif

static const char *prog = "online_ioctl";

#include "../../misc/online_uapi.h"

#define DATA_BUF_SIZE	(1024 * 1024)

struct raw_ent {
	uint64_t ino, pos;
	unsigned int dtype, name_len;
	int has_hash;
	uint32_t hash, minor_hash;
	unsigned char name[256];
};

static int failed;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

static void print_hex(FILE *f, const unsigned char *p, size_t n)
{
	size_t i;

	if (n == 0)
		fputc('-', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* All the entries of the directory open as @fd, by FS_IOC_READ_RAW_DIR */
static struct raw_ent *read_raw_dir(int fd, size_t *count)
{
	struct fscrypt_read_raw_dir_arg ra;
	struct raw_ent *ents = NULL;
	size_t n = 0, cap = 0;
	/* small on purpose: many calls, each resuming at its cookie */
	static unsigned char buf[2 * FSCRYPT_RAW_DIRENT_MAX_SIZE];

	memset(&ra, 0, sizeof(ra));
	for (;;) {
		unsigned int off = 0;

		ra.buf = (uintptr_t)buf;
		ra.buf_size = sizeof(buf);
		if (ioctl(fd, FS_IOC_READ_RAW_DIR, &ra) < 0)
			die("FS_IOC_READ_RAW_DIR");
		while (off < ra.filled) {
			struct fscrypt_raw_dirent *de =
				(struct fscrypt_raw_dirent *)(buf + off);
			struct raw_ent *e;

			if (de->rec_len < sizeof(*de) + de->name_len ||
			    de->rec_len % 8 || off + de->rec_len > ra.filled) {
				fprintf(stderr, "%s: bad record at %u\n",
					prog, off);
				exit(1);
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				ents = realloc(ents, cap * sizeof(*ents));
				if (!ents)
					die("realloc");
			}
			e = &ents[n++];
			e->ino = de->ino;
			e->pos = de->pos;
			e->dtype = de->file_type;
			e->name_len = de->name_len;
			e->has_hash = !!(de->flags & FSCRYPT_RAW_DIRENT_HASH);
			e->hash = de->hash;
			e->minor_hash = de->minor_hash;
			memcpy(e->name, de->name, de->name_len);
			off += de->rec_len;
		}
		if (ra.flags & FSCRYPT_READ_RAW_DIR_EOF)
			break;
		if (ra.filled == 0) {
			fprintf(stderr, "%s: no progress at %llu\n", prog,
				(unsigned long long)ra.pos);
			exit(1);
		}
	}
	*count = n;
	return ents;
}

static void set_name(struct fscrypt_entry_name *en, const struct raw_ent *e)
{
	en->pos = e->pos;
	en->name_len = e->name_len;
	memcpy(en->name, e->name, e->name_len);
}

static void print_meta(int fd, const struct raw_ent *e, mode_t *mode)
{
	struct fscrypt_get_raw_entry_arg ga;
	unsigned char target[4096];

	memset(&ga, 0, sizeof(ga));
	set_name(&ga.entry, e);
	ga.target = (uintptr_t)target;
	ga.target_size = sizeof(target);
	if (ioctl(fd, FS_IOC_GET_RAW_ENTRY, &ga) < 0)
		die("FS_IOC_GET_RAW_ENTRY");
	if (ga.ino != e->ino) {
		fprintf(stderr, "%s: entry ino %llu, inode %llu\n", prog,
			(unsigned long long)e->ino,
			(unsigned long long)ga.ino);
		failed = 1;
	}
	printf("M %llu %o ", (unsigned long long)ga.ino, ga.mode);
	print_hex(stdout, ga.metadata, ga.metadata_size);
	putchar(' ');
	print_hex(stdout, target, ga.target_size);
	putchar('\n');
	*mode = ga.mode;
}

static void read_data(int fd, const struct raw_ent *e, const char *outdir)
{
	struct fscrypt_read_raw_data_arg da;
	static unsigned char *buf;
	int out = -1;
	char path[4096];
	uint64_t lblk = 0;
	const char *sep = "";

	if (!buf) {
		buf = malloc(DATA_BUF_SIZE);
		if (!buf)
			die("malloc");
	}
	if (outdir) {
		snprintf(path, sizeof(path), "%s/%llu", outdir,
			 (unsigned long long)e->ino);
		out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0)
			die(path);
	}
	memset(&da, 0, sizeof(da));
	set_name(&da.entry, e);
	for (;;) {
		da.lblk = lblk;
		da.buf = (uintptr_t)buf;
		da.buf_size = DATA_BUF_SIZE;
		if (ioctl(fd, FS_IOC_READ_RAW_DATA, &da) < 0)
			die("FS_IOC_READ_RAW_DATA");
		if (lblk == 0)
			printf("R %llu %u %llu ", (unsigned long long)e->ino,
			       da.block_size, (unsigned long long)da.i_size);
		if (da.nr_blocks == 0)
			break;
		printf("%s%c:%llu+%u", sep,
		       (da.flags & FSCRYPT_READ_RAW_DATA_HOLE) ? 'H' : 'D',
		       (unsigned long long)lblk, da.nr_blocks);
		sep = ",";
		if (out >= 0 && !(da.flags & FSCRYPT_READ_RAW_DATA_HOLE)) {
			size_t n = (size_t)da.nr_blocks * da.block_size;

			if (pwrite(out, buf, n, lblk * da.block_size) !=
			    (ssize_t)n)
				die("pwrite");
		}
		lblk += da.nr_blocks;
	}
	if (!*sep)
		putchar('-');
	putchar('\n');
	if (out >= 0) {
		if (ftruncate(out, lblk * da.block_size) < 0)
			die("ftruncate");
		close(out);
	}
}

/*
 * The name readdir(3) shows in @fd for inode @ino (a no-key name
 * without the key), into @name (NAME_MAX + 1 bytes); 0 if none.
 */
static int name_of_ino(int fd, uint64_t ino, char *name)
{
	int dfd = dup(fd), found = 0;
	DIR *d;
	struct dirent *de;

	if (dfd < 0)
		die("dup");
	d = fdopendir(dfd);
	if (!d)
		die("fdopendir");
	rewinddir(d);
	while (!found && (de = readdir(d))) {
		found = de->d_ino == ino && strcmp(de->d_name, ".") &&
			strcmp(de->d_name, "..");
		if (found)
			snprintf(name, NAME_MAX + 1, "%s", de->d_name);
	}
	closedir(d);
	return found;
}

/* The directory inode @ino in @fd, opened; -1 if it has no name */
static int open_subdir(int fd, uint64_t ino)
{
	char name[NAME_MAX + 1];
	int ret;

	if (!name_of_ino(fd, ino, name))
		return -1;
	ret = openat(fd, name, O_RDONLY | O_DIRECTORY);
	if (ret < 0)
		die(name);
	return ret;
}

static void walk(int fd, uint64_t dir_ino, const char *outdir)
{
	struct raw_ent *ents;
	size_t n, i;

	ents = read_raw_dir(fd, &n);
	for (i = 0; i < n; i++) {
		struct raw_ent *e = &ents[i];
		mode_t mode;

		if ((e->name_len == 1 && e->name[0] == '.') ||
		    (e->name_len == 2 && !memcmp(e->name, "..", 2)))
			continue;
		printf("N %llu ", (unsigned long long)dir_ino);
		print_hex(stdout, e->name, e->name_len);
		printf(" %llu %u ", (unsigned long long)e->ino, e->dtype);
		if (e->has_hash)
			printf("%08x/%08x\n", e->hash, e->minor_hash);
		else
			printf("-\n");
		print_meta(fd, e, &mode);
		if (S_ISREG(mode))
			read_data(fd, e, outdir);
		if (S_ISDIR(mode)) {
			int sub = open_subdir(fd, e->ino);

			if (sub < 0) {
				fprintf(stderr, "%s: no name for dir %llu\n",
					prog, (unsigned long long)e->ino);
				failed = 1;
				continue;
			}
			walk(sub, e->ino, outdir);
			close(sub);
		}
	}
	free(ents);
}

static const char *errname(int err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ENOTTY: return "ENOTTY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODATA: return "ENODATA";
	case ENOKEY: return "ENOKEY";
	case EXDEV: return "EXDEV";
	case EEXIST: return "EEXIST";
	case EFBIG: return "EFBIG";
	case ENOTDIR: return "ENOTDIR";
	default: return "other";
	}
}

static int probe(int fd)
{
	struct fscrypt_read_raw_dir_arg ra;
	struct fscrypt_get_raw_entry_arg ga;
	struct fscrypt_read_raw_data_arg da;
	static unsigned char buf[65536];
	int bad = 0;

	memset(&ra, 0, sizeof(ra));
	ra.buf = (uintptr_t)buf;
	ra.buf_size = sizeof(buf);
	if (ioctl(fd, FS_IOC_READ_RAW_DIR, &ra) < 0) {
		printf("READ_RAW_DIR %s\n", errname(errno));
		bad = 1;
	}
	memset(&ga, 0, sizeof(ga));
	ga.entry.name_len = 1;
	ga.entry.name[0] = '.';
	if (ioctl(fd, FS_IOC_GET_RAW_ENTRY, &ga) < 0) {
		printf("GET_RAW_ENTRY %s\n", errname(errno));
		bad = 1;
	}
	memset(&da, 0, sizeof(da));
	da.entry.name_len = 1;
	da.entry.name[0] = '.';
	da.buf = (uintptr_t)buf;
	da.buf_size = sizeof(buf);
	/* "." is a directory: EINVAL for the privileged */
	if (ioctl(fd, FS_IOC_READ_RAW_DATA, &da) < 0) {
		printf("READ_RAW_DATA %s\n", errname(errno));
		if (errno != EINVAL)
			bad = 1;
	}
	if (!bad)
		printf("ok\n");
	return 0;
}

/* The 'e5' blob and mode of the entry @name of @fd, by FS_IOC_GET_RAW_ENTRY */
static void get_entry(int fd, const struct raw_ent *e,
		      struct fscrypt_get_raw_entry_arg *ga,
		      unsigned char *target, size_t target_size)
{
	memset(ga, 0, sizeof(*ga));
	set_name(&ga->entry, e);
	ga->target = (uintptr_t)target;
	ga->target_size = target_size;
	if (ioctl(fd, FS_IOC_GET_RAW_ENTRY, ga) < 0)
		die("FS_IOC_GET_RAW_ENTRY");
}

/* lstat() of the inode @ino of @fd, through the name readdir(3) shows */
static void stat_ino(int fd, uint64_t ino, struct stat *st)
{
	char name[NAME_MAX + 1];

	if (!name_of_ino(fd, ino, name)) {
		fprintf(stderr, "%s: no name for inode %llu\n", prog,
			(unsigned long long)ino);
		exit(1);
	}
	if (fstatat(fd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		die(name);
}

struct link_rec {
	uint64_t src_ino;
	int dst_dirfd;
	struct fscrypt_entry_name name;
};

static struct link_rec *links;
static size_t nr_links, cap_links;
static unsigned long nr_created, nr_linked, nr_blocks_written;
static int skip_existing;

static void copy_data(int sfd, int dfd, const struct raw_ent *e)
{
	struct fscrypt_read_raw_data_arg da;
	struct fscrypt_write_raw_data_arg wa;
	static unsigned char *buf;
	uint64_t lblk = 0;

	if (!buf) {
		buf = malloc(DATA_BUF_SIZE);
		if (!buf)
			die("malloc");
	}
	memset(&da, 0, sizeof(da));
	set_name(&da.entry, e);
	for (;;) {
		da.lblk = lblk;
		da.buf = (uintptr_t)buf;
		da.buf_size = DATA_BUF_SIZE;
		if (ioctl(sfd, FS_IOC_READ_RAW_DATA, &da) < 0)
			die("FS_IOC_READ_RAW_DATA");
		if (da.nr_blocks == 0)
			break;
		if (!(da.flags & FSCRYPT_READ_RAW_DATA_HOLE)) {
			memset(&wa, 0, sizeof(wa));
			wa.entry.name_len = e->name_len;
			memcpy(wa.entry.name, e->name, e->name_len);
			wa.lblk = lblk;
			wa.buf = (uintptr_t)buf;
			wa.nr_blocks = da.nr_blocks;
			if (ioctl(dfd, FS_IOC_WRITE_RAW_DATA, &wa) < 0)
				die("FS_IOC_WRITE_RAW_DATA");
			nr_blocks_written += da.nr_blocks;
		}
		lblk += da.nr_blocks;
	}
}

static void copy_tree(int sfd, int dfd)
{
	struct raw_ent *ents;
	size_t n, i, j;

	ents = read_raw_dir(sfd, &n);
	for (i = 0; i < n; i++) {
		struct raw_ent *e = &ents[i];
		struct fscrypt_get_raw_entry_arg ga;
		struct fscrypt_create_raw_arg ca;
		static unsigned char target[4096];
		struct stat st;

		if ((e->name_len == 1 && e->name[0] == '.') ||
		    (e->name_len == 2 && !memcmp(e->name, "..", 2)))
			continue;
		get_entry(sfd, e, &ga, target, sizeof(target));
		stat_ino(sfd, e->ino, &st);
		memset(&ca, 0, sizeof(ca));
		ca.entry.name_len = e->name_len;
		memcpy(ca.entry.name, e->name, e->name_len);
		if (e->has_hash) {
			ca.flags |= FSCRYPT_CREATE_RAW_HASH;
			ca.hash = e->hash;
			ca.minor_hash = e->minor_hash;
		}
		for (j = 0; !S_ISDIR(st.st_mode) && st.st_nlink > 1 &&
			    j < nr_links; j++)
			if (links[j].src_ino == e->ino)
				break;
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && j < nr_links) {
			ca.flags |= FSCRYPT_CREATE_RAW_LINK;
			ca.link_dirfd = links[j].dst_dirfd;
			ca.link = links[j].name;
			if (ioctl(dfd, FS_IOC_CREATE_RAW, &ca) < 0)
				die("FS_IOC_CREATE_RAW (link)");
			nr_linked++;
			continue;
		}
		ca.mode = st.st_mode;
		ca.uid = st.st_uid;
		ca.gid = st.st_gid;
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			ca.rdev_major = major(st.st_rdev);
			ca.rdev_minor = minor(st.st_rdev);
		}
		ca.metadata_size = ga.metadata_size;
		memcpy(ca.metadata, ga.metadata, ga.metadata_size);
		if (S_ISLNK(st.st_mode)) {
			ca.target = (uintptr_t)target;
			ca.target_size = ga.target_size;
		}
		if (ioctl(dfd, FS_IOC_CREATE_RAW, &ca) < 0) {
			struct fscrypt_get_raw_entry_arg dga;
			struct raw_ent de = *e;

			if (errno != EEXIST || !skip_existing)
				die("FS_IOC_CREATE_RAW");
			if (!S_ISDIR(st.st_mode))
				continue;
			de.pos = 0;
			get_entry(dfd, &de, &dga, NULL, 0);
			ca.ino = dga.ino;
		} else {
			nr_created++;
		}
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && ca.ino) {
			if (nr_links == cap_links) {
				cap_links = cap_links ? 2 * cap_links : 16;
				links = realloc(links,
						cap_links * sizeof(*links));
				if (!links)
					die("realloc");
			}
			links[nr_links].src_ino = e->ino;
			links[nr_links].dst_dirfd = dup(dfd);
			memset(&links[nr_links].name, 0,
			       sizeof(links[nr_links].name));
			links[nr_links].name.name_len = e->name_len;
			memcpy(links[nr_links].name.name, e->name, e->name_len);
			if (links[nr_links].dst_dirfd < 0)
				die("dup");
			nr_links++;
		}
		if (S_ISREG(st.st_mode) && ca.ino)
			copy_data(sfd, dfd, e);
		if (S_ISDIR(st.st_mode)) {
			int ssub = open_subdir(sfd, e->ino);
			int dsub = open_subdir(dfd, ca.ino);

			if (ssub < 0 || dsub < 0) {
				fprintf(stderr, "%s: cannot open dir %llu\n",
					prog, (unsigned long long)e->ino);
				exit(1);
			}
			copy_tree(ssub, dsub);
			close(ssub);
			close(dsub);
		}
	}
	free(ents);
}

static int copy(const char *src, const char *dstparent, const char *name)
{
	struct fscrypt_get_raw_entry_arg ga;
	struct fscrypt_create_raw_arg ca;
	struct raw_ent dot;
	struct stat st;
	int sfd, pfd, dfd, flags;

	sfd = open(src, O_RDONLY | O_DIRECTORY);
	if (sfd < 0)
		die(src);
	pfd = open(dstparent, O_RDONLY | O_DIRECTORY);
	if (pfd < 0)
		die(dstparent);
	if (fstat(sfd, &st) < 0)
		die("fstat");
	memset(&dot, 0, sizeof(dot));
	dot.name_len = 1;
	dot.name[0] = '.';
	get_entry(sfd, &dot, &ga, NULL, 0);
	memset(&ca, 0, sizeof(ca));
	ca.entry.name_len = strlen(name);
	memcpy(ca.entry.name, name, ca.entry.name_len);
	ca.mode = st.st_mode;
	ca.uid = st.st_uid;
	ca.gid = st.st_gid;
	ca.metadata_size = ga.metadata_size;
	memcpy(ca.metadata, ga.metadata, ga.metadata_size);
	/* casefolding is a flag of the root, inherited below it */
	if (ioctl(sfd, FS_IOC_GETFLAGS, &flags) == 0 &&
	    (flags & FS_CASEFOLD_FL))
		ca.flags |= FSCRYPT_CREATE_RAW_CASEFOLD;
	skip_existing = !!getenv("ONLINE_COPY_SKIP_EXISTING");
	if (ioctl(pfd, FS_IOC_CREATE_RAW, &ca) < 0 &&
	    (errno != EEXIST || !skip_existing))
		die("FS_IOC_CREATE_RAW (the policy root)");
	dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die(name);
	copy_tree(sfd, dfd);
	printf("created %lu, linked %lu, blocks %lu\n", nr_created,
	       nr_linked, nr_blocks_written);
	return 0;
}

static void try_create(int fd, const char *what,
		       struct fscrypt_create_raw_arg *ca)
{
	if (ioctl(fd, FS_IOC_CREATE_RAW, ca) < 0)
		printf("%s %s\n", what, errname(errno));
	else
		printf("%s ok\n", what);
}

/* A fresh raw name of @len bytes, each call another */
static void fresh_name(struct fscrypt_entry_name *en, unsigned int len)
{
	static unsigned int seq;

	memset(en, 0, sizeof(*en));
	en->name_len = len;
	memset(en->name, 0xa0 + (seq % 64), len);
	memcpy(en->name, &seq, sizeof(seq));
	seq++;
}

static void set_crc(unsigned char *blob, unsigned int size)
{
	/* crc16 (0x8005 reflected, init 0xffff) as the kernel's crc16() */
	unsigned int crc = 0xffff, i, b;

	blob[2] = blob[3] = 0;
	for (i = 0; i < size; i++) {
		crc ^= blob[i];
		for (b = 0; b < 8; b++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xa001 : crc >> 1;
	}
	blob[2] = crc & 0xff;
	blob[3] = crc >> 8;
}

static int refuse(const char *dir, const char *other)
{
	struct fscrypt_get_raw_entry_arg ga, oga;
	struct fscrypt_create_raw_arg ca, good;
	struct fscrypt_write_raw_data_arg wa;
	static unsigned char block[65536];
	unsigned char target[64];
	struct raw_ent dot;
	int fd, ofd;

	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die(dir);
	memset(&dot, 0, sizeof(dot));
	dot.name_len = 1;
	dot.name[0] = '.';
	get_entry(fd, &dot, &ga, NULL, 0);

	/* a FIFO: encrypted name, no blob */
	memset(&good, 0, sizeof(good));
	fresh_name(&good.entry, 32);
	good.mode = S_IFIFO | 0644;
	/* a regular file of one block, with the directory's policy */
	memset(&ca, 0, sizeof(ca));
	fresh_name(&ca.entry, 32);
	ca.mode = S_IFREG | 0644;
	ca.metadata_size = ga.metadata_size;
	memcpy(ca.metadata, ga.metadata, ga.metadata_size);
	memset(ca.metadata + 4, 0, 8);
	ca.metadata[5] = 0x10;		/* i_size 4096 */
	set_crc(ca.metadata, ca.metadata_size);
	good = ca;
	try_create(fd, "file", &ca);
	try_create(fd, "exists", &ca);

	memset(&wa, 0, sizeof(wa));
	wa.entry = good.entry;
	wa.buf = (uintptr_t)block;
	wa.nr_blocks = 2;
	printf("write-past-eof %s\n",
	       ioctl(fd, FS_IOC_WRITE_RAW_DATA, &wa) < 0 ?
	       errname(errno) : "ok");
	wa.nr_blocks = 1;
	printf("write %s\n", ioctl(fd, FS_IOC_WRITE_RAW_DATA, &wa) < 0 ?
	       errname(errno) : "ok");

	ca = good;
	fresh_name(&ca.entry, 15);
	try_create(fd, "name-15", &ca);
	ca = good;
	fresh_name(&ca.entry, 17);
	try_create(fd, "name-17", &ca);
	ca = good;
	fresh_name(&ca.entry, 32);
	ca.metadata[12] ^= 0xff;	/* the context version */
	try_create(fd, "bad-crc", &ca);
	set_crc(ca.metadata, ca.metadata_size);
	try_create(fd, "bad-context", &ca);
	ca = good;
	fresh_name(&ca.entry, 32);
	ca.metadata[0] = 'x';
	set_crc(ca.metadata, ca.metadata_size);
	try_create(fd, "bad-magic", &ca);
	ca = good;
	fresh_name(&ca.entry, 32);
	ca.metadata_size -= 1;
	ca.metadata[ca.metadata_size] = 0;
	set_crc(ca.metadata, ca.metadata_size);
	try_create(fd, "short-context", &ca);
	ca = good;
	fresh_name(&ca.entry, 32);
	ca.flags = FSCRYPT_CREATE_RAW_HASH;
	try_create(fd, "hash", &ca);
	ca = good;
	fresh_name(&ca.entry, 32);
	ca.mode = S_IFIFO | 0644;
	try_create(fd, "fifo-with-blob", &ca);
	ca = good;
	fresh_name(&ca.entry, 32);
	ca.mode = S_IFLNK | 0777;
	memset(target, 0x55, sizeof(target));
	target[0] = 17;			/* not a ciphertext length */
	target[1] = 0;
	ca.target = (uintptr_t)target;
	ca.target_size = 19;
	memset(ca.metadata + 4, 0, 8);
	ca.metadata[4] = 19;		/* the blob's i_size: the target's */
	set_crc(ca.metadata, ca.metadata_size);
	try_create(fd, "symlink-17", &ca);
	ca = good;
	ca.mode = S_IFLNK | 0777;
	ca.target = (uintptr_t)target;
	target[0] = 32;
	ca.target_size = 34;
	fresh_name(&ca.entry, 32);
	try_create(fd, "symlink-size", &ca);	/* the blob's i_size: 4096 */
	fresh_name(&ca.entry, 32);
	memset(ca.metadata + 4, 0, 8);
	ca.metadata[4] = 34;
	set_crc(ca.metadata, ca.metadata_size);
	try_create(fd, "symlink", &ca);
	if (other) {
		ofd = open(other, O_RDONLY | O_DIRECTORY);
		if (ofd < 0)
			die(other);
		get_entry(ofd, &dot, &oga, NULL, 0);
		ca = good;
		fresh_name(&ca.entry, 32);
		ca.metadata_size = oga.metadata_size;
		memset(ca.metadata, 0, sizeof(ca.metadata));
		memcpy(ca.metadata, oga.metadata, oga.metadata_size);
		try_create(fd, "other-policy", &ca);
		close(ofd);
	}
	return 0;
}

/* The entry @name of the unencrypted @dir, by its plain name */
static int plain(const char *dir, const char *name)
{
	struct fscrypt_get_raw_entry_arg ga;
	struct fscrypt_read_raw_data_arg da;
	static unsigned char buf[65536], target[4096];
	size_t len = strlen(name);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		die(dir);
	if (len == 0 || len > NAME_MAX) {
		fprintf(stderr, "%s: bad name\n", prog);
		return 2;
	}
	memset(&ga, 0, sizeof(ga));
	ga.entry.name_len = len;
	memcpy(ga.entry.name, name, len);
	ga.target = (uintptr_t)target;
	ga.target_size = sizeof(target);
	if (ioctl(fd, FS_IOC_GET_RAW_ENTRY, &ga) < 0)
		printf("GET_RAW_ENTRY %s\n", errname(errno));
	else
		printf("GET_RAW_ENTRY ok\n");
	memset(&da, 0, sizeof(da));
	da.entry = ga.entry;
	da.buf = (uintptr_t)buf;
	da.buf_size = sizeof(buf);
	if (ioctl(fd, FS_IOC_READ_RAW_DATA, &da) < 0)
		printf("READ_RAW_DATA %s\n", errname(errno));
	else
		printf("READ_RAW_DATA ok\n");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct raw_ent dot;
	mode_t mode;
	struct stat st;
	int fd;

	if (argc == 5 && !strcmp(argv[1], "copy"))
		return copy(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "plain"))
		return plain(argv[2], argv[3]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "refuse"))
		return refuse(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc < 3 || (strcmp(argv[1], "walk") && strcmp(argv[1], "probe"))) {
		fprintf(stderr, "Usage: %s walk DIR [OUTDIR] | probe DIR | plain DIR NAME | copy SRC DSTPARENT NAME | refuse DIR [OTHERDIR]\n",
			prog);
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die(argv[2]);
	if (!strcmp(argv[1], "probe"))
		return probe(fd);
	if (fstat(fd, &st) < 0)
		die("fstat");
	memset(&dot, 0, sizeof(dot));
	dot.ino = st.st_ino;
	dot.name_len = 1;
	dot.name[0] = '.';
	print_meta(fd, &dot, &mode);
	walk(fd, st.st_ino, argc > 3 ? argv[3] : NULL);
	if (fflush(stdout))
		die("stdout");
	return failed;
}
