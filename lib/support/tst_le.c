/*
 * tst_le.c --- tests of the little-endian helpers (e2cb_le.h)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "e2cb_le.h"
#include "tst_check.h"

int main(void)
{
	static const uint8_t want[8] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x81
	};
	uint8_t buf[9];

	memset(buf, 0xee, sizeof(buf));
	e2cb_put_le64(buf + 1, 0x8102030405060708ULL);	/* unaligned */
	CHECK(!memcmp(buf + 1, want, 8) && buf[0] == 0xee);
	CHECK(e2cb_get_le64(buf + 1) == 0x8102030405060708ULL);
	CHECK(e2cb_get_le32(buf + 1) == 0x05060708);
	CHECK(e2cb_get_le32(buf + 5) == 0x81020304);
	CHECK(e2cb_get_le16(buf + 7) == 0x8102);
	memset(buf, 0, sizeof(buf));
	e2cb_put_le32(buf, 0xfffefdfc);
	CHECK(buf[0] == 0xfc && buf[3] == 0xff && buf[4] == 0);
	CHECK(e2cb_get_le32(buf) == 0xfffefdfc);
	e2cb_put_le16(buf + 5, 0xa55a);
	CHECK(buf[5] == 0x5a && buf[6] == 0xa5 && buf[7] == 0);
	CHECK(e2cb_get_le16(buf + 5) == 0xa55a);
	/* the high bit does not sign-extend */
	memset(buf, 0xff, sizeof(buf));
	CHECK(e2cb_get_le16(buf) == 0xffff);
	CHECK(e2cb_get_le32(buf) == 0xffffffffU);
	CHECK(e2cb_get_le64(buf) == ~0ULL);
	return tst_done("tst_le");
}
