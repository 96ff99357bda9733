/*
 * path_buf.c --- a path built a component at a time, and cut back
 *
 * A tree walk pushes each name on the way down and cuts the path back
 * to the length it had on the way up; the buffer grows to the deepest
 * path and is reused.  Components are bytes with lengths, never C
 * strings: a raw name may be ciphertext.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "e2cb_support.h"

static errcode_t path_room(struct e2cb_path_buf *p, size_t need)
{
	char *s;

	if (need <= p->size)
		return 0;
	if (need > SIZE_MAX / 2)
		return EXT2_ET_NO_MEMORY;
	s = realloc(p->s, need * 2);
	if (!s)
		return EXT2_ET_NO_MEMORY;
	p->s = s;
	p->size = need * 2;
	return 0;
}

/* @comp after a '/' (none before the first component) */
errcode_t e2cb_path_push(struct e2cb_path_buf *p, const void *comp,
			 size_t len)
{
	errcode_t retval;

	if (len > SIZE_MAX / 4 - p->len)
		return EXT2_ET_NO_MEMORY;
	retval = path_room(p, p->len + 1 + len + 1);
	if (retval)
		return retval;
	if (p->len)
		p->s[p->len++] = '/';
	memcpy(p->s + p->len, comp, len);
	p->len += len;
	p->s[p->len] = 0;
	return 0;
}

/* Back to @len, a length the path had before */
void e2cb_path_cut(struct e2cb_path_buf *p, size_t len)
{
	p->len = len;
	if (p->s)
		p->s[len] = 0;
}

/* The whole path, @len bytes of @s */
errcode_t e2cb_path_set(struct e2cb_path_buf *p, const void *s, size_t len)
{
	errcode_t retval;

	if (len > SIZE_MAX / 4)
		return EXT2_ET_NO_MEMORY;
	retval = path_room(p, len + 1);
	if (retval)
		return retval;
	memcpy(p->s, s, len);
	p->s[len] = 0;
	p->len = len;
	return 0;
}

void e2cb_path_free(struct e2cb_path_buf *p)
{
	free(p->s);
	memset(p, 0, sizeof(*p));
}
