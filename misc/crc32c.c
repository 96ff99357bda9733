/*
 * crc32c.c --- the crc32c of archive records and data
 *
 * Every data byte of an archive passes through crc32c, so on x86-64 the
 * SSE4.2 instruction is used when the CPU has it (several times faster
 * than libext2fs' table-driven version); elsewhere libext2fs' is used.
 * Both compute the same reflected crc32c without pre- or post-inversion.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "archive.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = crc, v;

	for (; len && ((uintptr_t) p & 7); len--)
		c = _mm_crc32_u8(c, *p++);
	for (; len >= 32; len -= 32, p += 32) {
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		memcpy(&v, p + 8, 8);
		c = _mm_crc32_u64(c, v);
		memcpy(&v, p + 16, 8);
		c = _mm_crc32_u64(c, v);
		memcpy(&v, p + 24, 8);
		c = _mm_crc32_u64(c, v);
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
	if (have_sse42)
		return crc32c_sse42(crc, buf, len);
	return ext2fs_crc32c_le(crc, buf, len);
}
#else
uint32_t e2cb_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ext2fs_crc32c_le(crc, buf, len);
}
#endif
