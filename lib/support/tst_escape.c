/*
 * tst_escape.c --- tests of e2cb_put_path (escape.c)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include "e2cb_support.h"
#include "tst_check.h"

/* What e2cb_put_path() writes for @len bytes of @in, compared */
static int shows_as(const void *in, size_t len, const char *want)
{
	char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (!f)
		return 0;
	e2cb_put_path(f, in, len);
	if (fclose(f))
		return 0;
	return !strcmp(buf, want);
}

/* What e2cb_escape() makes of @len bytes of @in, compared */
static int escapes_to(const void *in, size_t len, const char *want)
{
	char buf[E2CB_ESCAPED_MAX(16)];
	size_t n;

	n = e2cb_escape(buf, in, len);
	return n == strlen(want) && !strcmp(buf, want);
}

int main(void)
{
	CHECK(shows_as("", 0, "."));
	CHECK(shows_as("a/b c", 5, "a/b c"));
	CHECK(shows_as("\x1b[2J", 4, "\\x1b[2J"));	/* a terminal's ESC */
	CHECK(shows_as("a\\x41", 5, "a\\x5cx41"));	/* reads back */
	CHECK(shows_as("\x7f\x01", 2, "\\x7f\\x01"));
	CHECK(shows_as("\xc3\xa9", 2, "\xc3\xa9"));	/* UTF-8 kept */
	CHECK(shows_as("ab\0cd", 5, "ab\\x00cd"));	/* @len, not NUL */
	CHECK(escapes_to("a\x01\\", 3, "a\\x01\\x5c"));
	CHECK(escapes_to("", 0, ""));			/* no "." here */
	return tst_done("tst_escape");
}
