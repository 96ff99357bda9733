/*
 * fuzz_restore.c --- the archive reader as restore uses it, and the
 * promise restore makes about its target
 *
 * The input is an archive (the seeds of fuzz_archive).  It is restored
 * into a fresh, empty ext4 image of the archive's block size; whatever
 * restore makes of it -- refused, stopped half way, or done -- the
 * target must then pass "e2fsck -fn".  An unclean target is a finding:
 * the harness aborts.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fuzz.h"

#define TARGET_SIZE	(32 * 1024 * 1024)

/* An empty ext4 image, kept as its non-zero blocks */
struct template {
	unsigned int block_size;
	uint8_t *data;			/* TARGET_SIZE bytes */
};

static struct template templates[2] = { { 1024, NULL }, { 4096, NULL } };

static void make_template(struct template *t)
{
	char cmd[1024];
	const char *img = fuzz_path("template.img");
	int fd;

	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -O encrypt "
		 "-b %u -N 2048 -E lazy_itable_init=1,nodiscard %s 32M",
		 t->block_size, img);
	if (fuzz_run(cmd)) {
		fprintf(stderr, "fuzz_restore: mke2fs failed\n");
		abort();
	}
	t->data = malloc(TARGET_SIZE);
	fd = open(img, O_RDONLY);
	if (!t->data || fd < 0 ||
	    pread(fd, t->data, TARGET_SIZE, 0) != TARGET_SIZE)
		abort();
	close(fd);
	unlink(img);
}

/* A fresh target from @t: its non-zero 4 KiB pieces over a hole */
static void write_target(const struct template *t, const char *path)
{
	static const uint8_t zero[4096];
	size_t off;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, TARGET_SIZE))
		abort();
	for (off = 0; off < TARGET_SIZE; off += sizeof(zero)) {
		if (!memcmp(t->data + off, zero, sizeof(zero)))
			continue;
		if (pwrite(fd, t->data + off, sizeof(zero), off) !=
		    (ssize_t) sizeof(zero))
			abort();
	}
	close(fd);
}

/* The template for the archive's block size; 4 KiB if it has none */
static struct template *pick_template(const char *archive)
{
	struct e2cb_reader *r = NULL;
	unsigned int bs = 4096;

	if (!e2cb_reader_open(archive, 0, &r))
		bs = e2cb_reader_header(r)->block_size;
	e2cb_reader_close(r);
	return bs == 1024 ? &templates[0] : &templates[1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char archive[512], target[512];
	struct e2cb_restore_opts o;
	struct template *t;

	fuzz_init();
	snprintf(archive, sizeof(archive), "%s", fuzz_path("in.tar"));
	snprintf(target, sizeof(target), "%s", fuzz_path("target.img"));
	if (fuzz_write_file(archive, data, size))
		return 0;
	t = pick_template(archive);
	if (!t->data)
		make_template(t);
	write_target(t, target);

	memset(&o, 0, sizeof(o));
	o.archive = archive;
	o.device = target;
	o.path = "/";
	o.set_uuid = 1;
	e2cb_restore(&o);

	fuzz_check_target("fuzz_restore", target);
	return 0;
}
