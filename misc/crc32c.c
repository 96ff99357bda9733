/*
 * crc32c.c --- the crc32c of archive records and data
 *
 * Every data byte of an archive passes through crc32c, twice on the way
 * from image to plaintext, so the fastest way the CPU offers is taken:
 * on x86-64 with VPCLMULQDQ, carry-less multiplication folds 256 bytes
 * at a time; with SSE4.2, the crc instruction runs on three lanes at
 * once; elsewhere libext2fs' table-driven version is used.
 * All compute the same reflected crc32c without pre- or post-inversion.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "archive.h"

#define CRC32C_POLY	0x82f63b78	/* reflected: bit 31 - n for x^n */
#define CRC32C_POLY_X32	0x11edc6f41ULL	/* x^32 + ..., bit n for x^n */

static uint32_t crc32c_table(uint32_t crc, const void *buf, size_t len)
{
	return ext2fs_crc32c_le(crc, buf, len);
}

/* @a times @b modulo the polynomial, both reflected */
static uint32_t mul_mod(uint32_t a, uint32_t b)
{
	uint32_t prod = 0;
	int n;

	for (n = 31; n >= 0; n--) {		/* x^0 first */
		if (a & (1U << n))
			prod ^= b;
		b = (b >> 1) ^ (b & 1 ? CRC32C_POLY : 0);	/* b * x */
	}
	return prod;
}

/*
 * The crc of A followed by B, from the crc of A and the crc of B
 * started from 0: the first, moved on by B's length, plus the second
 * (the crc is linear).  Moving on by @len_b bytes multiplies by
 * x^(8 len_b), built from the powers x^(8 2^k) by squaring.
 */
uint32_t e2cb_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
	uint32_t pow = 1U << 23;		/* x^8: one byte */

	for (; len_b; len_b >>= 1) {
		if (len_b & 1)
			crc_a = mul_mod(crc_a, pow);
		pow = mul_mod(pow, pow);
	}
	return crc_a ^ crc_b;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <pthread.h>
#include <immintrin.h>

/*
 * The crc instruction takes 3 cycles and can start every cycle: three
 * independent crcs, over three lanes of a stretch, run nearly three
 * times as fast as one.  The lanes' crcs are then joined by appending
 * LANE zero bytes to a register (a linear map, applied by table) and
 * adding the next lane's crc.
 */
#define LANE		512

static uint32_t lane_zeros[4][256];

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

/*
 * Folding.  Bytes are polynomials with the first bit the highest power,
 * so 16 bytes loaded into a register hold, in their low half L, the
 * powers 127..64 and in their high half H 63..0.  Moving such a block
 * @dist bits further on multiplies it by x^dist, and modulo the crc's
 * polynomial L * x^(64 + dist) + H * x^dist is one carry-less multiply
 * of each half by a 32-bit constant: the result, at most 96 bits, is
 * added to the block that far on.  What is left at the end is reduced
 * by the crc instruction itself.
 */
#define FOLD_MIN	1024	/* below this, three crc lanes are as fast */

struct fold_key {
	uint64_t lo, hi;	/* for L and for H; reflected, times x */
};

static struct fold_key fold_by_256, fold_by_64, fold_by_48, fold_by_32,
	fold_by_16;

/* x^n modulo the polynomial, bit d for x^d */
static uint32_t xpow_mod(unsigned int n)
{
	uint64_t v = 1;

	while (n--) {
		v <<= 1;
		if (v & (1ULL << 32))
			v ^= CRC32C_POLY_X32;
	}
	return v;
}

/*
 * Bit d of @v to bit 63 - d: the reflected order of the loaded data,
 * one place further, as the product of two reflected halves needs.
 */
static uint64_t reflect_key(uint32_t v)
{
	uint64_t r = 0;
	int d;

	for (d = 0; d < 32; d++)
		if (v & (1U << d))
			r |= 1ULL << (63 - d);
	return r;
}

static struct fold_key make_fold_key(unsigned int bytes)
{
	struct fold_key k;

	k.lo = reflect_key(xpow_mod(8 * bytes + 63));
	k.hi = reflect_key(xpow_mod(8 * bytes - 1));
	return k;
}

static void make_fold_keys(void)
{
	fold_by_256 = make_fold_key(256);
	fold_by_64 = make_fold_key(64);
	fold_by_48 = make_fold_key(48);
	fold_by_32 = make_fold_key(32);
	fold_by_16 = make_fold_key(16);
}

#define FOLD_TARGET "avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2"

__attribute__((target(FOLD_TARGET)))
static inline __m512i fold512(__m512i x, __m512i key, __m512i next)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, key, 0x00),
					 _mm512_clmulepi64_epi128(x, key, 0x11),
					 next, 0x96);
}

__attribute__((target(FOLD_TARGET)))
static inline __m128i fold128(__m128i x, struct fold_key key, __m128i next)
{
	__m128i k = _mm_set_epi64x(key.hi, key.lo);

	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     next);
}

__attribute__((target(FOLD_TARGET)))
static inline __m512i broadcast_key(struct fold_key key)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x(key.hi, key.lo));
}

/* The four 16-byte blocks of @x, folded into the last */
__attribute__((target(FOLD_TARGET)))
static inline __m128i fold_lanes(__m512i x)
{
	__m128i r;

	r = fold128(_mm512_extracti32x4_epi32(x, 2), fold_by_16,
		    _mm512_extracti32x4_epi32(x, 3));
	r = fold128(_mm512_extracti32x4_epi32(x, 1), fold_by_32, r);
	return fold128(_mm512_extracti32x4_epi32(x, 0), fold_by_48, r);
}

__attribute__((target(FOLD_TARGET)))
static uint32_t crc32c_fold(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	__m512i x0, x1, x2, x3, key;
	__m128i r;
	uint64_t c;

	if (len < FOLD_MIN)
		return crc32c_sse42(crc, buf, len);
	/* the register's bits go to the message's first 32 */
	x0 = _mm512_xor_si512(_mm512_loadu_si512(p),
			      _mm512_maskz_set1_epi32(1, crc));
	x1 = _mm512_loadu_si512(p + 64);
	x2 = _mm512_loadu_si512(p + 128);
	x3 = _mm512_loadu_si512(p + 192);
	p += 256;
	len -= 256;
	key = broadcast_key(fold_by_256);
	for (; len >= 256; len -= 256, p += 256) {
		x0 = fold512(x0, key, _mm512_loadu_si512(p));
		x1 = fold512(x1, key, _mm512_loadu_si512(p + 64));
		x2 = fold512(x2, key, _mm512_loadu_si512(p + 128));
		x3 = fold512(x3, key, _mm512_loadu_si512(p + 192));
	}
	key = broadcast_key(fold_by_64);
	x0 = fold512(x0, key, x1);
	x0 = fold512(x0, key, x2);
	x0 = fold512(x0, key, x3);
	for (; len >= 64; len -= 64, p += 64)
		x0 = fold512(x0, key, _mm512_loadu_si512(p));
	r = fold_lanes(x0);
	for (; len >= 16; len -= 16, p += 16)
		r = fold128(r, fold_by_16, _mm_loadu_si128((const void *) p));
	c = _mm_crc32_u64(0, _mm_cvtsi128_si64(r));
	c = _mm_crc32_u64(c, _mm_extract_epi64(r, 1));
	/*
	 * The zmm registers' upper halves dirty would slow down every
	 * legacy SSE instruction after us (OpenSSL's AES-NI code among
	 * them); GCC does not clear them before a tail call.
	 */
	_mm256_zeroupper();
	return crc32c_sse42(c, p, len);
}

static uint32_t (*crc32c_best)(uint32_t crc, const void *buf, size_t len);
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

static int cpu_can_fold(void)
{
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("pclmul") &&
	       __builtin_cpu_supports("sse4.2");
}

static void crc32c_choose(void)
{
	crc32c_best = crc32c_table;
	if (!__builtin_cpu_supports("sse4.2"))
		return;
	make_lane_zeros();
	crc32c_best = crc32c_sse42;
	if (!cpu_can_fold())
		return;
	make_fold_keys();
	crc32c_best = crc32c_fold;
}

uint32_t e2cb_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc32c_once, crc32c_choose);
	return crc32c_best(crc, buf, len);
}

int e2cb_crc32c_ways(const struct e2cb_crc32c_way **ret)
{
	static struct e2cb_crc32c_way ways[3];
	int n = 0;

	pthread_once(&crc32c_once, crc32c_choose);
	ways[n].name = "table";
	ways[n++].fn = crc32c_table;
	if (crc32c_best != crc32c_table) {
		ways[n].name = "sse4.2";
		ways[n++].fn = crc32c_sse42;
	}
	if (crc32c_best == crc32c_fold) {
		ways[n].name = "vpclmulqdq";
		ways[n++].fn = crc32c_fold;
	}
	*ret = ways;
	return n;
}
#else
uint32_t e2cb_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return crc32c_table(crc, buf, len);
}

int e2cb_crc32c_ways(const struct e2cb_crc32c_way **ret)
{
	static const struct e2cb_crc32c_way ways[] = {
		{ "table", crc32c_table },
	};

	*ret = ways;
	return 1;
}
#endif
