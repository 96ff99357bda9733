/*
 * crc32c_check.c --- every way e2cryptbak computes crc32c, checked
 *
 * Each way this CPU offers (misc/crc32c.c) must give what libext2fs'
 * table-driven ext2fs_crc32c_le() gives, on every length up to a few
 * of the fastest way's strides at every alignment, and on long buffers;
 * e2cb_crc32c_combine() must join two crcs into the crc of both.
 * Prints each way it checked ("ok: NAME"), so that a test can see the
 * one it expects was not left out.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive.h"

#define BIG	(3 << 20)

static unsigned int failures;

/* A fixed pseudo-random sequence: the same bytes on every run */
static uint32_t next_rand(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

static void check(const char *name, uint32_t got, uint32_t want,
		  size_t len, size_t align)
{
	if (got == want)
		return;
	if (failures++ < 10)
		printf("FAIL: %s: length %zu at alignment %zu: %08x, want "
		       "%08x\n", name, len, align, got, want);
}

static void check_way(const struct e2cb_crc32c_way *way, const uint8_t *buf,
		      uint32_t *rnd)
{
	unsigned int before = failures;
	size_t len, align;
	uint32_t init;

	for (len = 0; len <= 4200; len++) {
		for (align = 0; align < 64; align += len < 1100 ? 1 : 7) {
			init = next_rand(rnd);
			check(way->name, way->fn(init, buf + align, len),
			      ext2fs_crc32c_le(init, buf + align, len),
			      len, align);
		}
	}
	for (len = BIG - 1000; len <= BIG; len += 97) {
		init = next_rand(rnd);
		check(way->name, way->fn(init, buf + 5, len),
		      ext2fs_crc32c_le(init, buf + 5, len), len, 5);
	}
	/* the catalogue's check value: "123456789", inverted */
	check(way->name, ~way->fn(~0U, "123456789", 9), 0xe3069283, 9, 0);
	if (failures == before)
		printf("ok: %s\n", way->name);
}

static void check_combine(const uint8_t *buf, uint32_t *rnd)
{
	unsigned int before = failures, i;
	size_t len, cut;
	uint32_t init, a, b;

	for (i = 0; i < 2000; i++) {
		len = next_rand(rnd) % (i < 1000 ? 5000 : BIG);
		cut = len ? next_rand(rnd) % (len + 1) : 0;
		init = next_rand(rnd);
		a = ext2fs_crc32c_le(init, buf, cut);
		b = ext2fs_crc32c_le(0, buf + cut, len - cut);
		check("combine", e2cb_crc32c_combine(a, b, len - cut),
		      ext2fs_crc32c_le(init, buf, len), len, cut);
	}
	if (failures == before)
		printf("ok: combine\n");
}

int main(void)
{
	const struct e2cb_crc32c_way *ways;
	uint32_t rnd = 2463534242U;
	uint8_t *buf;
	int n, i;

	buf = malloc(BIG + 64);
	if (!buf) {
		perror("crc32c_check");
		return 2;
	}
	for (i = 0; i < BIG + 64; i++)
		buf[i] = next_rand(&rnd);
	n = e2cb_crc32c_ways(&ways);
	for (i = 0; i < n; i++)
		check_way(&ways[i], buf, &rnd);
	check_combine(buf, &rnd);
	printf("%d ways; e2cb_crc32c() takes %s; %u failures\n", n,
	       ways[n - 1].name, failures);
	free(buf);
	return failures ? 1 : 0;
}
