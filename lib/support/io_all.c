/*
 * io_all.c --- all of a write or a read, through EINTR and short counts
 *
 * write(2) and pread(2) may do less than asked, or be interrupted by a
 * signal before doing anything; these go on until all is done or a
 * real error stops them.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <unistd.h>
#include <dirent.h>
#include "e2cb_support.h"

/*
 * All of @buf at @off, or at the file offset when @off is -1 (a pipe);
 * a write that makes no progress is EXT2_ET_SHORT_WRITE.
 */
errcode_t e2cb_write_all(int fd, const void *buf, size_t len, int64_t off)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EXT2_ET_SHORT_WRITE;
		p += n;
		len -= n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

/* All of @len bytes at @pos; the end of the file first is SHORT_READ */
errcode_t e2cb_pread_all(int fd, void *buf, size_t len, uint64_t pos)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = pread(fd, p, len, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EXT2_ET_SHORT_READ;
		p += n;
		len -= n;
		pos += n;
	}
	return 0;
}

/*
 * readdir(3) of the directory open as @dfd, from its start, @dfd left
 * open (a dup shares its offset, which an earlier reader may have left
 * at the end); NULL with errno set.
 */
DIR *e2cb_dir_stream(int dfd)
{
	int fd = dup(dfd), err;
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	rewinddir(d);
	return d;
}
