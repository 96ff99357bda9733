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

/* @len bytes of a path; the root's empty path is shown as "." */
void e2cb_put_path(FILE *f, const void *s, size_t len)
{
	const unsigned char *p = s;

	if (!len) {
		fputc('.', f);
		return;
	}
	for (; len; len--, p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}
