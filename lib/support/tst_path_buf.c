/*
 * tst_path_buf.c --- tests of the path buffer (path_buf.c)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "e2cb_support.h"
#include "tst_check.h"

int main(void)
{
	struct e2cb_path_buf p = { 0 };
	static const char raw[3] = { 'a', 0, 'b' };	/* a NUL inside */
	size_t mark, i;
	int ok = 1;

	e2cb_path_cut(&p, 0);		/* empty, not yet allocated */
	CHECK(p.s == NULL && p.len == 0);
	CHECK(e2cb_path_push(&p, "dir", 3) == 0);
	CHECK(strcmp(p.s, "dir") == 0 && p.len == 3);
	mark = p.len;
	CHECK(e2cb_path_push(&p, "sub", 3) == 0);
	CHECK(e2cb_path_push(&p, "file.txt", 4) == 0);
	CHECK(strcmp(p.s, "dir/sub/file") == 0 && p.len == 12);
	e2cb_path_cut(&p, mark);
	CHECK(strcmp(p.s, "dir") == 0 && p.len == 3);
	CHECK(e2cb_path_push(&p, raw, 3) == 0);
	CHECK(p.len == 7 && memcmp(p.s, "dir/a\0b", 8) == 0);
	e2cb_path_cut(&p, 0);
	CHECK(p.len == 0 && p.s[0] == 0);
	/* deep: every push keeps what was there */
	for (i = 0; i < 5000 && ok; i++)
		if (e2cb_path_push(&p, "0123456789", 10) ||
		    p.len != i * 11 + 10)
			ok = 0;
	CHECK(ok);
	CHECK(p.s[p.len] == 0 && p.s[10] == '/' && p.s[p.len - 11] == '/');
	CHECK(e2cb_path_set(&p, "x/y", 3) == 0);
	CHECK(strcmp(p.s, "x/y") == 0 && p.len == 3);
	CHECK(e2cb_path_set(&p, "", 0) == 0 && p.len == 0 && !p.s[0]);
	CHECK(e2cb_path_push(&p, "z", 1) == 0 && strcmp(p.s, "z") == 0);
	CHECK(e2cb_path_push(&p, "z", SIZE_MAX - 2) == EXT2_ET_NO_MEMORY);
	CHECK(strcmp(p.s, "z") == 0 && p.len == 1);
	e2cb_path_free(&p);
	CHECK(p.s == NULL && p.len == 0 && p.size == 0);
	return tst_done("tst_path_buf");
}
