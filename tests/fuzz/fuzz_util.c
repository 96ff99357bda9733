/*
 * fuzz_util.c --- what the e2cryptbak fuzz harnesses share
 *
 * Every process works in a private directory of its own under TMPDIR,
 * removed at exit, so parallel fuzzing jobs never meet.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#define _GNU_SOURCE
#include "config.h"
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "fuzz.h"

const char *program_name = "e2cryptbak-fuzz";
const char *fuzz_keys[FUZZ_MAX_KEYS];
int fuzz_nkeys;

static char fuzz_dir[256];
static char path_buf[512];

static int remove_one(const char *path, const struct stat *st, int type,
		      struct FTW *ftw)
{
	(void) st; (void) type; (void) ftw;
	chmod(path, 0700);
	return remove(path);
}

void fuzz_remove_tree(const char *path)
{
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_dir(void)
{
	fuzz_remove_tree(fuzz_dir);
}

/* "v2 IDENTIFIER HEXKEY" lines; the hex keys are what extract takes */
static void load_keys(const char *fixtures)
{
	char name[512], line[512], *hex, *end;
	struct dirent *d;
	DIR *dir;
	FILE *f;

	dir = opendir(fixtures);
	if (!dir)
		return;
	while ((d = readdir(dir)) && fuzz_nkeys < FUZZ_MAX_KEYS) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s/%s/keys", fixtures,
			 d->d_name);
		f = fopen(name, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f) &&
		       fuzz_nkeys < FUZZ_MAX_KEYS) {
			hex = strrchr(line, ' ');
			if (!hex)
				continue;
			end = hex + strcspn(hex, "\n");
			*end = 0;
			fuzz_keys[fuzz_nkeys++] = strdup(hex + 1);
		}
		fclose(f);
	}
	closedir(dir);
}

void fuzz_init(void)
{
	static int done;
	const char *tmp = getenv("TMPDIR");

	if (done)
		return;
	done = 1;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/e2cb-fuzz.XXXXXX",
		 tmp ? tmp : "/tmp");
	if (!mkdtemp(fuzz_dir)) {
		perror("mkdtemp");
		abort();
	}
	chmod(fuzz_dir, 0755);
	atexit(remove_dir);
	load_keys(FUZZ_FIXTURES);
	/* the images of filesystems in use (seeds j-*) */
	load_keys(FUZZ_FIXTURES "/journal");
}

const char *fuzz_path(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", fuzz_dir, name);
	return path_buf;
}

static int write_at(int fd, const uint8_t *data, size_t size, off_t off)
{
	ssize_t n;

	while (size) {
		n = pwrite(fd, data, size, off);
		if (n <= 0)
			return -1;
		data += n;
		size -= n;
		off += n;
	}
	return 0;
}

int fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ret;

	if (fd < 0)
		abort();
	ret = write_at(fd, data, size, 0);
	close(fd);
	return ret;
}

/* The chunk format of fuzz.h, into a sparse FUZZ_IMAGE_SIZE file */
int fuzz_write_image(const char *path, const uint8_t *data, size_t size,
		     int *flags)
{
	uint32_t chunk;
	int fd, ret = 0;

	if (size < 1)
		return -1;
	*flags = data[0];
	data++;
	size--;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, FUZZ_IMAGE_SIZE))
		abort();
	for (; size >= 4 + FUZZ_CHUNK && !ret;
	     data += 4 + FUZZ_CHUNK, size -= 4 + FUZZ_CHUNK) {
		chunk = data[0] | data[1] << 8 | data[2] << 16 |
			(uint32_t) data[3] << 24;
		chunk %= FUZZ_IMAGE_SIZE / FUZZ_CHUNK;
		ret = write_at(fd, data + 4, FUZZ_CHUNK,
			       (off_t) chunk * FUZZ_CHUNK);
	}
	close(fd);
	return ret;
}

int fuzz_extract(const char *source, const char *dir, int list_only)
{
	struct e2cb_extract_opts o;
	char *keys[FUZZ_MAX_KEYS];
	int i, ret;

	/* extract wipes the keys it is given, as it wipes argv */
	for (i = 0; i < fuzz_nkeys; i++) {
		keys[i] = strdup(fuzz_keys[i]);
		if (!keys[i])
			abort();
	}
	memset(&o, 0, sizeof(o));
	o.source = source;
	o.dir = dir;
	o.key_hex = keys;
	o.nkey_hex = fuzz_nkeys;
	o.list_only = list_only;
	ret = e2cb_extract(&o);
	for (i = 0; i < fuzz_nkeys; i++)
		free(keys[i]);
	return ret;
}

/*
 * Clear metadata_csum and uninit_bg in the superblock: libext2fs would
 * stop most mutations at a checksum, never reaching our readers.
 */
void fuzz_clear_csum(const char *path)
{
	uint8_t ro[4];
	uint32_t v;
	int fd = open(path, O_RDWR);

	if (fd < 0)
		abort();
	if (pread(fd, ro, 4, 1024 + 0x64) == 4) {
		v = ro[0] | ro[1] << 8 | ro[2] << 16 | (uint32_t) ro[3] << 24;
		v &= ~(0x0400U | 0x0010U);
		ro[0] = v;
		ro[1] = v >> 8;
		ro[2] = v >> 16;
		ro[3] = v >> 24;
		if (pwrite(fd, ro, 4, 1024 + 0x64) != 4)
			abort();
	}
	close(fd);
}

/* A shell command's exit status; -1 when it did not exit */
int fuzz_run(const char *cmd)
{
	int status = system(cmd);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A restore must leave its target clean for "e2fsck -fn", whatever the
 * archive: anything else is a finding, shown and aborted on.
 */
void fuzz_check_target(const char *who, const char *target)
{
	char cmd[1200];
	int rc;

	snprintf(cmd, sizeof(cmd), "e2fsck -fn %s >%s 2>&1", target,
		 fuzz_path("e2fsck.log"));
	rc = fuzz_run(cmd);
	if (!rc)
		return;
	snprintf(cmd, sizeof(cmd), "cat %s >&2", fuzz_path("e2fsck.log"));
	fuzz_run(cmd);
	fprintf(stderr, "%s: e2fsck -fn exit %d: the restore left the "
		"target inconsistent\n", who, rc);
	abort();
}
