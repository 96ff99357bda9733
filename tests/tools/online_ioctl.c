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
#include <linux/types.h>

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

/* The name readdir(3) shows for the directory inode @ino in @fd */
static int open_subdir(int fd, uint64_t ino)
{
	int dfd = dup(fd);
	DIR *d;
	struct dirent *de;
	int ret = -1;

	if (dfd < 0)
		die("dup");
	d = fdopendir(dfd);
	if (!d)
		die("fdopendir");
	rewinddir(d);
	while ((de = readdir(d))) {
		if (de->d_ino == ino && strcmp(de->d_name, ".") &&
		    strcmp(de->d_name, "..")) {
			ret = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY);
			if (ret < 0)
				die(de->d_name);
			break;
		}
	}
	closedir(d);
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

int main(int argc, char **argv)
{
	struct raw_ent dot;
	mode_t mode;
	struct stat st;
	int fd;

	if (argc < 3 || (strcmp(argv[1], "walk") && strcmp(argv[1], "probe"))) {
		fprintf(stderr, "Usage: %s walk DIR [OUTDIR] | probe DIR\n",
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
