/*
 * tst_ino_map.c --- tests of the inode map (ino_map.c)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "e2cb_support.h"
#include "tst_check.h"

#define N	20000

/* values: every inode of a table grown many times is found again */
static void test_values(void)
{
	struct e2cb_ino_map m;
	uint64_t *v, sum = 0;
	uint32_t ino, i;
	size_t pos = 0, seen = 0;
	int ok = 1;

	e2cb_ino_map_init(&m, sizeof(uint64_t));
	CHECK(e2cb_ino_map_find(&m, 1) == NULL);
	for (i = 1; i <= N; i++) {
		/* multiples of a power of two collide in a power of two */
		if (e2cb_ino_map_add(&m, i * 64, (void **) &v) || *v) {
			ok = 0;
			break;
		}
		*v = (uint64_t) i * 3;
	}
	CHECK(ok);
	CHECK(m.count == N);
	for (i = 1, ok = 1; i <= N; i++) {
		v = e2cb_ino_map_find(&m, i * 64);
		if (!v || *v != (uint64_t) i * 3)
			ok = 0;
		if (e2cb_ino_map_find(&m, i * 64 + 1))
			ok = 0;
	}
	CHECK(ok);
	/* the first value stays; adding again hands it back */
	CHECK(e2cb_ino_map_add(&m, 64, (void **) &v) == 0 && *v == 3);
	CHECK(m.count == N);
	CHECK(e2cb_ino_map_add(&m, 0, (void **) &v) ==
	      EXT2_ET_INVALID_ARGUMENT);
	CHECK(e2cb_ino_map_find(&m, 0) == NULL);
	while ((v = e2cb_ino_map_next(&m, &pos, &ino))) {
		seen++;
		sum += *v;
		if (*v != (uint64_t) ino / 64 * 3)
			ok = 0;
	}
	CHECK(ok);
	CHECK(seen == N);
	CHECK(sum == (uint64_t) 3 * N * (N + 1) / 2);
	e2cb_ino_map_free(&m);
	CHECK(m.count == 0 && e2cb_ino_map_find(&m, 64) == NULL);
	/* usable again after free */
	CHECK(e2cb_ino_map_add(&m, 7, (void **) &v) == 0 && !*v);
	e2cb_ino_map_free(&m);
}

/* paths: copied, the first kept, freed with the map */
static void test_paths(void)
{
	struct e2cb_ino_map m;
	char path[32];
	uint32_t i;
	int ok = 1;

	e2cb_ino_map_init_paths(&m);
	for (i = 1; i <= 1000; i++) {
		snprintf(path, sizeof(path), "d/f%u", i);
		if (e2cb_ino_map_add_path(&m, i, path, strlen(path)))
			ok = 0;
	}
	CHECK(ok);
	CHECK(e2cb_ino_map_add_path(&m, 5, "other", 5) == 0);
	CHECK(strcmp(e2cb_ino_map_path(&m, 5), "d/f5") == 0);
	CHECK(e2cb_ino_map_add_path(&m, 1001, "abcdef", 3) == 0);
	CHECK(strcmp(e2cb_ino_map_path(&m, 1001), "abc") == 0);
	CHECK(e2cb_ino_map_add_path(&m, 1002, NULL, 0) == 0);
	CHECK(strcmp(e2cb_ino_map_path(&m, 1002), "") == 0);
	CHECK(e2cb_ino_map_path(&m, 2000) == NULL);
	e2cb_ino_map_free(&m);
	CHECK(e2cb_ino_map_path(&m, 5) == NULL);
	CHECK(e2cb_ino_map_add_path(&m, 5, "again", 5) == 0);
	e2cb_ino_map_free(&m);
}

/* no room: an error, and the map as it was; never a silent drop */
static void test_no_memory(void)
{
	struct e2cb_ino_map m;
	void *v;

	e2cb_ino_map_init(&m, SIZE_MAX / 16);
	CHECK(e2cb_ino_map_add(&m, 9, &v) == EXT2_ET_NO_MEMORY);
	CHECK(m.count == 0 && e2cb_ino_map_find(&m, 9) == NULL);
	e2cb_ino_map_free(&m);
	/* a path map refuses values that are not paths */
	e2cb_ino_map_init(&m, 8);
	CHECK(e2cb_ino_map_add_path(&m, 9, "x", 1) ==
	      EXT2_ET_INVALID_ARGUMENT);
	e2cb_ino_map_free(&m);
}

int main(void)
{
	test_values();
	test_paths();
	test_no_memory();
	return tst_done("tst_ino_map");
}
