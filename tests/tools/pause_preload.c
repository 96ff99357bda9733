/*
 * pause_preload.c --- stop a program at a chosen read of one file, for
 *                     a test to change the world under it
 *
 * Usage: LD_PRELOAD=pause_preload.so PAUSE_FILE=FILE \
 *        PAUSE_AT=PASS:OFFSET COMMAND
 *
 * A read() from a descriptor open on FILE (its device and inode when
 * the program first reads) at file offset 0 begins a pass over it.  In
 * pass PASS (1 is the first), the first read that would return byte
 * OFFSET or a later one stops the process with SIGSTOP before it reads:
 * the test sees state T in /proc/PID/stat, does what it wants (rewrites
 * FILE, renames another file over it, sends a signal) and sends SIGCONT.
 * Once only.  Reads of other files, and pread(), go through untouched.
 * With an AddressSanitizer build, run with
 * ASAN_OPTIONS=verify_asan_link_order=0.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef ssize_t (*read_fn)(int, void *, size_t);

static int set_up, fired, pass, want_pass;
static unsigned long long want_off;
static dev_t target_dev;
static ino_t target_ino;

static void setup(void)
{
	const char *file = getenv("PAUSE_FILE");
	const char *at = getenv("PAUSE_AT");
	struct stat st;

	set_up = 1;
	fired = 1;
	if (!file || !at || stat(file, &st) < 0 ||
	    sscanf(at, "%d:%llu", &want_pass, &want_off) != 2)
		return;
	target_dev = st.st_dev;
	target_ino = st.st_ino;
	fired = 0;
}

/* Whether this read of @fd, at its offset, is the one to stop at */
static int due(int fd, size_t count)
{
	struct stat st;
	off_t off;
	int saved = errno, ret = 0;

	if (!set_up)
		setup();
	if (fired || fstat(fd, &st) < 0 || st.st_dev != target_dev ||
	    st.st_ino != target_ino)
		goto out;
	off = lseek(fd, 0, SEEK_CUR);
	if (off == 0)
		pass++;
	if (off >= 0 && pass == want_pass &&
	    (unsigned long long) off + count > want_off)
		ret = fired = 1;
out:
	errno = saved;
	return ret;
}

ssize_t read(int fd, void *buf, size_t count)
{
	static read_fn real;

	if (!real)
		real = (read_fn) dlsym(RTLD_NEXT, "read");
	if (due(fd, count))
		raise(SIGSTOP);
	return real(fd, buf, count);
}
