/*
 * tst_check.h --- what the lib/support tst_ programs share
 *
 * Each check that fails is named on standard error; the program's exit
 * status is the number that failed (capped), and its last line says how
 * many ran, for tests/l_support to see that they did.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef TST_CHECK_H
#define TST_CHECK_H

#include <stdio.h>

static int tst_run, tst_failed;

#define CHECK(cond) do {						\
	tst_run++;							\
	if (!(cond)) {							\
		tst_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__,		\
			__LINE__, #cond);				\
	}								\
} while (0)

static inline int tst_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, tst_run, tst_failed);
	return tst_failed > 100 ? 100 : tst_failed;
}

#endif /* TST_CHECK_H */
