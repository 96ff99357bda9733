/*
 * escape.c --- paths and names shown to a user
 *
 * Names hold any byte but '/' and NUL, and a decrypted or forged one
 * may hold a terminal's control bytes: every command shows them the
 * same way, \xHH, with the backslash itself escaped so the output reads
 * back unambiguously.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include "e2cb_support.h"

static int needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '\\';
}

/* @len bytes of a path; the root's empty path is shown as "." */
void e2cb_put_path(FILE *f, const void *s, size_t len)
{
	const unsigned char *p = s;

	if (!len) {
		fputc('.', f);
		return;
	}
	for (; len; len--, p++) {
		if (needs_escape(*p))
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

/*
 * The same into @out, which holds E2CB_ESCAPED_MAX(@len) bytes, NUL
 * ended; nothing stands for an empty string.  Returns the length.
 */
size_t e2cb_escape(char *out, const void *s, size_t len)
{
	const unsigned char *p = s;
	size_t o = 0;

	for (; len; len--, p++) {
		if (needs_escape(*p))
			o += sprintf(out + o, "\\x%02x", *p);
		else
			out[o++] = *p;
	}
	out[o] = 0;
	return o;
}
