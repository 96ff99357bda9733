/*
 * crc32c.c --- the crc32c of archive records and data
 *
 * Every data byte of an archive passes through crc32c, so on x86-64 the
 * SSE4.2 instruction is used when the CPU has it, on three lanes at once
 * (many times faster than libext2fs' table-driven version); elsewhere
 * libext2fs' is used.
 * Both compute the same reflected crc32c without pre- or post-inversion.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "archive.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <pthread.h>
#include <nmmintrin.h>

#define CRC32C_POLY	0x82f63b78	/* reflected */

/*
 * The crc instruction takes 3 cycles and can start every cycle: three
 * independent crcs, over three lanes of a stretch, run nearly three
 * times as fast as one.  The lanes' crcs are then joined by appending
 * LANE zero bytes to a register (a linear map, applied by table) and
 * adding the next lane's crc.
 */
#define LANE		512

static uint32_t lane_zeros[4][256];
static pthread_once_t lane_zeros_once = PTHREAD_ONCE_INIT;

/* @mat (a 32x32 matrix over GF(2), by columns) times @vec */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

/* @res = @a times @b */
static void gf2_mul(uint32_t *res, const uint32_t *a, const uint32_t *b)
{
	uint32_t tmp[32];
	int n;

	for (n = 0; n < 32; n++)
		tmp[n] = gf2_times(a, b[n]);
	memcpy(res, tmp, sizeof(tmp));
}

/* The tables that append LANE zero bytes to a crc register */
static void make_lane_zeros(void)
{
	uint32_t op[32], res[32];
	size_t len;
	int n, k;

	/* one zero bit: shift right, the polynomial where bit 0 was */
	op[0] = CRC32C_POLY;
	for (n = 1; n < 32; n++)
		op[n] = 1U << (n - 1);
	for (n = 0; n < 3; n++)		/* one zero byte */
		gf2_mul(op, op, op);
	for (n = 0; n < 32; n++)	/* identity */
		res[n] = 1U << n;
	for (len = LANE; len; len >>= 1) {
		if (len & 1)
			gf2_mul(res, op, res);
		gf2_mul(op, op, op);
	}
	for (k = 0; k < 4; k++)
		for (n = 0; n < 256; n++)
			lane_zeros[k][n] = gf2_times(res, (uint32_t) n << (8 * k));
}

static uint32_t append_lane_zeros(uint32_t crc)
{
	return lane_zeros[0][crc & 0xff] ^ lane_zeros[1][(crc >> 8) & 0xff] ^
	       lane_zeros[2][(crc >> 16) & 0xff] ^ lane_zeros[3][crc >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = crc, c1, c2, v, v1, v2;
	size_t i;

	for (; len && ((uintptr_t) p & 7); len--)
		c = _mm_crc32_u8(c, *p++);
	for (; len >= 3 * LANE; len -= 3 * LANE, p += 3 * LANE) {
		c1 = c2 = 0;
		for (i = 0; i < LANE; i += 8) {
			memcpy(&v, p + i, 8);
			memcpy(&v1, p + LANE + i, 8);
			memcpy(&v2, p + 2 * LANE + i, 8);
			c = _mm_crc32_u64(c, v);
			c1 = _mm_crc32_u64(c1, v1);
			c2 = _mm_crc32_u64(c2, v2);
		}
		c = append_lane_zeros(c) ^ c1;
		c = append_lane_zeros(c) ^ c2;
	}
	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
	}
	for (; len; len--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}

uint32_t e2cb_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static int have_sse42 = -1;

	if (have_sse42 < 0)
		have_sse42 = __builtin_cpu_supports("sse4.2");
	if (have_sse42) {
		pthread_once(&lane_zeros_once, make_lane_zeros);
		return crc32c_sse42(crc, buf, len);
	}
	return ext2fs_crc32c_le(crc, buf, len);
}
#else
uint32_t e2cb_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ext2fs_crc32c_le(crc, buf, len);
}
#endif
