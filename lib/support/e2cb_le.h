/*
 * e2cb_le.h --- little-endian fields, read and written byte by byte
 *
 * The archive's records and the ext4 structures we parse are
 * little-endian and not always aligned: these read and write them on
 * any host, without casts.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_LE_H
#define E2CB_LE_H

#include <stdint.h>

static inline void e2cb_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void e2cb_put_le32(uint8_t *p, uint32_t v)
{
	e2cb_put_le16(p, v);
	e2cb_put_le16(p + 2, v >> 16);
}

static inline void e2cb_put_le64(uint8_t *p, uint64_t v)
{
	e2cb_put_le32(p, v);
	e2cb_put_le32(p + 4, v >> 32);
}

static inline uint16_t e2cb_get_le16(const uint8_t *p)
{
	return p[0] | (p[1] << 8);
}

static inline uint32_t e2cb_get_le32(const uint8_t *p)
{
	return e2cb_get_le16(p) | ((uint32_t) e2cb_get_le16(p + 2) << 16);
}

static inline uint64_t e2cb_get_le64(const uint8_t *p)
{
	return e2cb_get_le32(p) | ((uint64_t) e2cb_get_le32(p + 4) << 32);
}

#endif /* E2CB_LE_H */
