/*
 * freeze.c --- backup --online --freeze: the mounted filesystem frozen
 * (FIFREEZE) while it is read, thawed on every way out
 *
 * A frozen filesystem makes every writer wait, us included: whatever we
 * write while it is frozen must go elsewhere, and a process that ends
 * with it frozen leaves it so, its users' programs hanging.  So the
 * archive and standard error are checked to be on another filesystem
 * first, and every signal that would end us thaws it before it takes
 * effect.  SIGKILL cannot be caught: fsfreeze -u thaws it then.
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <et/com_err.h>
#include "e2cryptbak.h"

static const int thaw_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1,
	SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
	SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, SIGSYS,
};
#define NR_THAW_SIGNALS	(sizeof(thaw_signals) / sizeof(thaw_signals[0]))

static struct sigaction saved[NR_THAW_SIGNALS];
static volatile sig_atomic_t frozen_fd = -1;
static const char *frozen_name;

static void release_signals(void)
{
	size_t i;

	for (i = 0; i < NR_THAW_SIGNALS; i++)
		sigaction(thaw_signals[i], &saved[i], NULL);
}

/*
 * Thaw, put back what the signal did before (outfile.c's removal of
 * the temporary archive, or the default) and let it do that: raised
 * here, it is held off until we return.
 */
static void thaw_and_raise(int sig)
{
	int fd = frozen_fd;

	if (fd >= 0) {
		ioctl(fd, FITHAW, 0);
		frozen_fd = -1;
	}
	release_signals();
	raise(sig);
}

static void catch_signals(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = thaw_and_raise;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < NR_THAW_SIGNALS; i++) {
		sigaction(thaw_signals[i], NULL, &saved[i]);
		if (saved[i].sa_handler != SIG_IGN)
			sigaction(thaw_signals[i], &sa, NULL);
	}
}

/* Is what is written to @fd written to the filesystem @dev? */
static int writes_to(int fd, dev_t dev)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	return (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
		st.st_dev == dev;
}

/*
 * Freeze the filesystem @dev that @fd (open, not O_PATH) is on, @shown
 * in messages, unless one of @out (@nr_out descriptors we will write
 * while it is frozen) is a file on it.  Says why on failure.
 */
errcode_t e2cb_freeze(int fd, dev_t dev, const char *shown,
		      const int *out, size_t nr_out)
{
	errcode_t retval;
	size_t i;

	for (i = 0; i < nr_out; i++) {
		if (!writes_to(out[i], dev))
			continue;
		com_err(program_name, 0, "%s: --freeze: %s is a file on the "
			"filesystem to be frozen, and writing it would wait "
			"for the thaw forever", shown,
			out[i] == 2 ? "standard error" : "the archive");
		return EXT2_ET_OP_NOT_SUPPORTED;
	}
	fd = dup(fd);
	if (fd < 0) {
		retval = errno;
		goto errout;
	}
	catch_signals();
	frozen_fd = fd;
	if (ioctl(fd, FIFREEZE, 0) == 0) {
		frozen_name = shown;
		atexit(e2cb_thaw);
		return 0;
	}
	retval = errno;
	frozen_fd = -1;
	release_signals();
	close(fd);
errout:
	if (retval == EBUSY)
		com_err(program_name, 0, "%s: --freeze: the filesystem is "
			"frozen already (fsfreeze -u thaws it)", shown);
	else
		com_err(program_name, retval, "while freezing %s (FIFREEZE "
			"needs CAP_SYS_ADMIN)", shown);
	return retval;
}

/* Thaw what e2cb_freeze() froze, if anything; says if that fails */
void e2cb_thaw(void)
{
	int fd = frozen_fd;

	if (fd < 0)
		return;
	if (ioctl(fd, FITHAW, 0) < 0)
		com_err(program_name, errno, "while thawing %s; fsfreeze -u "
			"%s thaws it", frozen_name, frozen_name);
	frozen_fd = -1;
	release_signals();
	close(fd);
}
