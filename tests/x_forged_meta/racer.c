/*
 * racer.c --- the local user of x_forged_meta: swap a symlink in for
 * each fifo extract makes in a directory the user can write
 *
 *   racer DIR PREFIX COUNT TARGET SECONDS [NAME]
 *
 * As soon as it can write in DIR, renames a file of its own over
 * DIR/NAME, when given.  Then waits for DIR/PREFIX000 ..
 * DIR/PREFIX<COUNT-1> (three digits) to appear, in that order, and
 * renames a symlink to TARGET over each as soon as it is a fifo; gives
 * up after SECONDS.  Prints how many fifos it swapped.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	char name[4096], next[4096], tmp[4096];
	struct stat st;
	time_t end;
	int i = 0, count, swapped = 0, fd;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: racer DIR PREFIX COUNT TARGET "
			"SECONDS [NAME]\n");
		return 2;
	}
	count = atoi(argv[3]);
	end = time(NULL) + atoi(argv[5]);
	snprintf(tmp, sizeof(tmp), "%s/.racer", argv[1]);
	while (symlink(argv[4], tmp) < 0 && time(NULL) < end)
		;
	if (argc == 7) {
		snprintf(next, sizeof(next), "%s/.mine", argv[1]);
		snprintf(name, sizeof(name), "%s/%s", argv[1], argv[6]);
		fd = open(next, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0 && write(fd, "mine\n", 5) == 5 &&
		    !close(fd) && rename(next, name) < 0)
			perror(name);
	}
	while (i < count && time(NULL) < end) {
		snprintf(name, sizeof(name), "%s/%s%03d", argv[1], argv[2], i);
		snprintf(next, sizeof(next), "%s/%s%03d", argv[1], argv[2],
			 i + 1);
		if (symlink(argv[4], tmp) < 0 && lstat(tmp, &st) < 0)
			continue;	/* DIR is gone */
		for (;;) {
			if (lstat(name, &st) == 0 && S_ISFIFO(st.st_mode)) {
				swapped += rename(tmp, name) == 0;
				break;
			}
			/* missed: it is made already, or it failed */
			if (lstat(next, &st) == 0 || time(NULL) >= end)
				break;
		}
		i++;
	}
	unlink(tmp);
	printf("%d\n", swapped);
	return 0;
}
