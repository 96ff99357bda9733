/*
 * tst_restore_digests.c --- restore_digests.c alone
 *
 * Notes 200,000 digests, as restore's first pass does, and checks
 * them as the writing pass does: each in order (the first ones from
 * memory, the rest from the file past DIGESTS_IN_MEMORY), once more
 * from the start (a rewind), a changed byte and an entry past the last
 * refused, and the same with $TMPDIR where no file can be made (all in
 * memory).  Exits 0 when every check holds, 1 otherwise.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <et/com_err.h>
#include "restore.h"

#define COUNT	200000

const char *program_name = "tst_restore_digests";

static void digest_of(uint64_t i, uint8_t *d)
{
	size_t k;

	for (k = 0; k < E2CB_ENTRY_DIGEST_LEN; k++)
		d[k] = (uint8_t) (e2cb_mix64(i * 31 + k) >> 17);
}

static int all_same(struct digest_list *l, const char *what)
{
	uint8_t d[E2CB_ENTRY_DIGEST_LEN];
	uint64_t i;

	for (i = 0; i < COUNT; i++) {
		digest_of(i, d);
		if (!e2cb_digests_same(l, i, d)) {
			com_err(program_name, 0, "%s: digest %llu differs",
				what, (unsigned long long) i);
			return 1;
		}
	}
	return 0;
}

static int run(const char *label, int spilled)
{
	struct digest_list l;
	uint8_t d[E2CB_ENTRY_DIGEST_LEN];
	uint64_t i;
	int bad = 0;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < COUNT; i++) {
		digest_of(i, d);
		if (e2cb_digests_add(&l, d)) {
			com_err(program_name, 0, "%s: cannot note %llu",
				label, (unsigned long long) i);
			return 1;
		}
	}
	if (!!l.spill != spilled) {
		com_err(program_name, 0, "%s: spilled %d, not %d", label,
			!!l.spill, spilled);
		bad = 1;
	}
	bad |= all_same(&l, label);
	bad |= all_same(&l, "again from the start");
	digest_of(COUNT - 7, d);
	d[3] ^= 1;
	if (e2cb_digests_same(&l, COUNT - 7, d)) {
		com_err(program_name, 0, "%s: a changed digest matched",
			label);
		bad = 1;
	}
	digest_of(COUNT, d);
	if (e2cb_digests_same(&l, COUNT, d)) {
		com_err(program_name, 0, "%s: an entry past the last matched",
			label);
		bad = 1;
	}
	/* the one after a mismatch is read where it is */
	digest_of(COUNT - 6, d);
	if (!e2cb_digests_same(&l, COUNT - 6, d)) {
		com_err(program_name, 0, "%s: digest %d differs after a miss",
			label, COUNT - 6);
		bad = 1;
	}
	e2cb_digests_free(&l);
	printf("%s: %d digests, %s\n", label, COUNT, bad ? "FAILED" : "ok");
	return bad;
}

int main(void)
{
	int bad;

	bad = run("spilled", 1);
	setenv("TMPDIR", "/nonexistent/tst_restore_digests", 1);
	bad |= run("in memory", 0);
	return bad;
}
