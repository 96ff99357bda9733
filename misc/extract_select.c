/*
 * extract_select.c --- e2cryptbak extract: the PATHs asked for
 *
 * Which entries the PATH operands select: those at or below a PATH,
 * and the directories on the way to one, for it to have a place.
 * Plaintext paths are compared, relative to the root, with no "." or
 * empty components.  Apart from the driver because it is the one part
 * that knows of the operands.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "extract.h"

/* A PATH operand, and whether it was found */
struct sel_path {
	char *s;
	size_t len;
	int found;
};

/*
 * Where the entry at the current plaintext path stands, below a
 * directory that stands at @parent_sel; a PATH met is found.
 */
int e2cb_x_select(struct xt *x, int parent_sel)
{
	const char *p = x->plain.s ? x->plain.s : "";
	size_t len = x->plain.len, i;
	int sel = SEL_NONE;

	if (parent_sel == SEL_ALL)
		return SEL_ALL;
	for (i = 0; i < x->nsel; i++) {
		struct sel_path *s = &x->sel[i];

		if (s->len == len && !memcmp(s->s, p, len)) {
			s->found = 1;
			return SEL_ALL;
		}
		if (len < s->len && (!len || s->s[len] == '/') &&
		    !memcmp(s->s, p, len))
			sel = SEL_ANCESTOR;
	}
	return sel;
}

/* "/home//alice/" -> "home/alice"; NULL for ".." or an unusable path */
static char *normalize_sel(const char *in)
{
	char *out = malloc(strlen(in) + 1), *o = out;
	const char *p = in, *end;
	size_t len;

	if (!out)
		return NULL;
	while (*p) {
		for (; *p == '/'; p++)
			;
		end = strchr(p, '/');
		len = end ? (size_t) (end - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			free(out);
			return NULL;
		}
		if (len && !(len == 1 && p[0] == '.')) {
			if (o != out)
				*o++ = '/';
			memcpy(o, p, len);
			o += len;
		}
		p += len;
	}
	*o = 0;
	return out;
}

/* The PATH operands, normalized: 0, or the exit status */
int e2cb_x_set_selection(struct xt *x)
{
	int i;

	if (!x->o->npaths)
		return 0;
	x->sel = calloc(x->o->npaths, sizeof(*x->sel));
	if (!x->sel)
		return E2CB_EXIT_ERROR;
	for (i = 0; i < x->o->npaths; i++) {
		x->sel[i].s = normalize_sel(x->o->paths[i]);
		if (!x->sel[i].s) {
			com_err(program_name, 0, "%s: a PATH may not contain "
				"'..'", x->o->paths[i]);
			return E2CB_EXIT_USAGE;
		}
		x->sel[i].len = strlen(x->sel[i].s);
		x->nsel++;
	}
	return 0;
}

/* The PATHs no entry matched, each said; how many */
int e2cb_x_report_unselected(struct xt *x)
{
	int notfound = 0;
	size_t i;

	for (i = 0; i < x->nsel; i++) {
		if (x->sel[i].found)
			continue;
		com_err(program_name, 0, "%s: not found in %s", x->o->paths[i],
			x->o->source);
		notfound++;
	}
	return notfound;
}

void e2cb_x_free_selection(struct xt *x)
{
	size_t i;

	for (i = 0; i < x->nsel; i++)
		free(x->sel[i].s);
	free(x->sel);
	x->sel = NULL;
	x->nsel = 0;
}
