/*
 * tst_io_all.c --- tests of the full reads and writes (io_all.c)
 *
 * A pipe that a slow reader drains while a timer interrupts the writer
 * again and again: the write is cut short or fails with EINTR, and all
 * of it must still arrive, in order.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "e2cb_support.h"
#include "tst_check.h"

#define PIPE_BYTES	(4 << 20)

static volatile sig_atomic_t ticks;

static void tick(int sig)
{
	(void) sig;
	ticks++;
}

static uint8_t byte_at(size_t i)
{
	return (i * 7 + i / 251) & 0xff;
}

/* the child: read slowly, exit 0 if every byte is as written */
static int drain(int fd)
{
	uint8_t buf[4096];
	size_t got = 0, i;
	ssize_t n;

	usleep(100000);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < (size_t) n; i++)
			if (buf[i] != byte_at(got + i))
				return 1;
		got += n;
		if (got % (256 << 10) < (size_t) n)
			usleep(5000);
	}
	return got == PIPE_BYTES ? 0 : 2;
}

static void test_pipe(void)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct sigaction sa;
	uint8_t *buf = malloc(PIPE_BYTES);
	int fds[2], status = -1;
	size_t i;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tick;		/* no SA_RESTART: EINTR comes back */
	sigaction(SIGALRM, &sa, NULL);
	CHECK(buf && pipe(fds) == 0);
	if (!buf)
		return;
	for (i = 0; i < PIPE_BYTES; i++)
		buf[i] = byte_at(i);
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		_exit(drain(fds[0]));
	}
	close(fds[0]);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK(e2cb_write_all(fds[1], buf, PIPE_BYTES, -1) == 0);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	close(fds[1]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(ticks > 0);
	free(buf);
}

static void test_file(void)
{
	char name[] = "/tmp/tst_io_all.XXXXXX";
	uint8_t buf[100];
	int fd = mkstemp(name);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(name);
	CHECK(e2cb_write_all(fd, "0123456789", 10, 1000) == 0);
	CHECK(e2cb_write_all(fd, "ab", 2, 4) == 0);
	CHECK(e2cb_write_all(fd, "", 0, -1) == 0);
	CHECK(e2cb_pread_all(fd, buf, 10, 1000) == 0 &&
	      !memcmp(buf, "0123456789", 10));
	CHECK(e2cb_pread_all(fd, buf, 4, 2) == 0 &&
	      !memcmp(buf, "\0\0ab", 4));
	/* the end of the file before all was read */
	CHECK(e2cb_pread_all(fd, buf, 20, 1000) == EXT2_ET_SHORT_READ);
	close(fd);
	CHECK(e2cb_write_all(fd, "x", 1, -1) == EBADF);
	CHECK(e2cb_pread_all(fd, buf, 1, 0) == EBADF);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_file();
	test_pipe();
	return tst_done("tst_io_all");
}
