/*
 * eio_preload.c --- reads of chosen byte ranges of one file fail with
 *                   EIO, as they do on a disk with bad sectors
 *
 * Usage: LD_PRELOAD=eio_preload.so EIO_FILE=IMAGE \
 *        EIO_RANGES=OFFSET+LENGTH[,OFFSET+LENGTH...] COMMAND
 *
 * A read (read, pread, pread64, readv, preadv, preadv64) from a
 * descriptor open on IMAGE -- the same device and inode -- that touches
 * one of the byte ranges fails with EIO and reads nothing; every other
 * read goes through.  What the device-mapper "error" target does to a
 * live device (tests/b_badblocks), without device-mapper or root.
 * Writes are not touched.  With an AddressSanitizer build, run with
 * ASAN_OPTIONS=verify_asan_link_order=0.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define MAX_RANGES	64

static struct { uint64_t start, end; } ranges[MAX_RANGES];
static int nranges = -1;		/* -1: not set up yet */
static dev_t target_dev;
static ino_t target_ino;

static void setup(void)
{
	const char *file = getenv("EIO_FILE");
	const char *spec = getenv("EIO_RANGES");
	unsigned long long off, len;
	struct stat st;
	int n;

	nranges = 0;
	if (!file || !spec || stat(file, &st) < 0)
		return;
	target_dev = st.st_dev;
	target_ino = st.st_ino;
	while (*spec && nranges < MAX_RANGES) {
		if (sscanf(spec, "%llu+%llu%n", &off, &len, &n) != 2)
			break;
		ranges[nranges].start = off;
		ranges[nranges].end = off + len;
		nranges++;
		spec += n;
		if (*spec == ',')
			spec++;
	}
}

/* Whether [off, off + len) of @fd touches a bad range */
static int bad(int fd, int64_t off, size_t len)
{
	struct stat st;
	int i, saved = errno;

	if (nranges < 0)
		setup();
	if (!nranges || len == 0 || off < 0 || fstat(fd, &st) < 0 ||
	    st.st_dev != target_dev || st.st_ino != target_ino) {
		errno = saved;
		return 0;
	}
	errno = saved;
	for (i = 0; i < nranges; i++)
		if ((uint64_t) off < ranges[i].end &&
		    (uint64_t) off + len > ranges[i].start)
			return 1;
	return 0;
}

/* The file offset of @fd, errno kept (-1 when it has none) */
static int64_t cur_off(int fd)
{
	int saved = errno;
	off_t off = lseek(fd, 0, SEEK_CUR);

	errno = saved;
	return off;
}

static size_t iov_len(const struct iovec *iov, int n)
{
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

typedef ssize_t (*pread_fn)(int, void *, size_t, off64_t);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off64_t);

/* The next definition of @name: libc's, or a sanitizer's */
static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

ssize_t pread64(int fd, void *buf, size_t count, off64_t off)
{
	static pread_fn real;

	if (!real)
		real = (pread_fn) next("pread64");
	if (bad(fd, off, count)) {
		errno = EIO;
		return -1;
	}
	return real(fd, buf, count, off);
}

ssize_t pread(int fd, void *buf, size_t count, off_t off)
{
	static pread_fn real;

	if (!real)
		real = (pread_fn) next("pread");
	if (bad(fd, off, count)) {
		errno = EIO;
		return -1;
	}
	return real(fd, buf, count, off);
}

ssize_t read(int fd, void *buf, size_t count)
{
	static read_fn real;

	if (!real)
		real = (read_fn) next("read");
	if (bad(fd, cur_off(fd), count)) {
		errno = EIO;
		return -1;
	}
	return real(fd, buf, count);
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
	static readv_fn real;

	if (!real)
		real = (readv_fn) next("readv");
	if (bad(fd, cur_off(fd), iov_len(iov, n))) {
		errno = EIO;
		return -1;
	}
	return real(fd, iov, n);
}

ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
	static preadv_fn real;

	if (!real)
		real = (preadv_fn) next("preadv");
	if (bad(fd, off, iov_len(iov, n))) {
		errno = EIO;
		return -1;
	}
	return real(fd, iov, n, off);
}

ssize_t preadv64(int fd, const struct iovec *iov, int n, off64_t off)
{
	static preadv_fn real;

	if (!real)
		real = (preadv_fn) next("preadv64");
	if (bad(fd, off, iov_len(iov, n))) {
		errno = EIO;
		return -1;
	}
	return real(fd, iov, n, off);
}
