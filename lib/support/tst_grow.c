/*
 * tst_grow.c --- tests of the growable array helper (grow.c)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include "e2cb_support.h"
#include "tst_check.h"

int main(void)
{
	size_t size = 0, i;
	int *a = NULL, *before;
	int ok = 1;

	for (i = 0; i < 100000 && ok; i++) {
		if (e2cb_grow((void **) &a, &size, i, sizeof(*a)) ||
		    size <= i)
			ok = 0;
		else
			a[i] = i;
	}
	CHECK(ok);
	for (i = 0, ok = 1; i < 100000; i++)
		if (a[i] != (int) i)
			ok = 0;
	CHECK(ok);
	/* doubling: 16, 32, ... */
	CHECK(size == 131072);
	/* room already there: nothing moves */
	before = a;
	CHECK(e2cb_grow((void **) &a, &size, 5, sizeof(*a)) == 0);
	CHECK(a == before && size == 131072);
	/* too big to count: refused, the array as it was */
	CHECK(e2cb_grow((void **) &a, &size, size, SIZE_MAX / 4) == -1);
	CHECK(a == before && size == 131072);
	CHECK(e2cb_grow((void **) &a, &size, SIZE_MAX, 1) == -1);
	free(a);
	/* room for many at once: doubled until they fit */
	a = NULL;
	size = 0;
	CHECK(e2cb_grow_to((void **) &a, &size, 0, sizeof(*a)) == 0 &&
	      !a && !size);
	CHECK(e2cb_grow_to((void **) &a, &size, 3, sizeof(*a)) == 0 &&
	      size == 16);
	CHECK(e2cb_grow_to((void **) &a, &size, 100, sizeof(*a)) == 0 &&
	      size == 128);
	a[99] = 1;
	CHECK(e2cb_grow_to((void **) &a, &size, SIZE_MAX, 1) == -1 &&
	      size == 128 && a[99] == 1);
	free(a);
	return tst_done("tst_grow");
}
