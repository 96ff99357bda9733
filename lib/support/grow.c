/*
 * grow.c --- growable arrays
 *
 * Lists that grow an element at a time double their room when it runs
 * out: one place that does the doubling, and refuses a size that would
 * overflow, instead of a hand-written realloc() at each list.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include "e2cb_support.h"

/*
 * Make room in *@arr (of *@size elements of @elem bytes) for @need
 * elements, doubling; 0, or -1 with *@arr and *@size as they were.
 */
int e2cb_grow_to(void **arr, size_t *size, size_t need, size_t elem)
{
	void *p;
	size_t n;

	if (need <= *size)
		return 0;
	n = *size ? *size : 16;
	while (n < need && n <= SIZE_MAX / 2)
		n *= 2;
	if (n < need || !elem || n > SIZE_MAX / elem)
		return -1;
	p = realloc(*arr, n * elem);
	if (!p)
		return -1;
	*arr = p;
	*size = n;
	return 0;
}

/* Room for element @count, the next of a list that grows one by one */
int e2cb_grow(void **arr, size_t *size, size_t count, size_t elem)
{
	if (count == SIZE_MAX)
		return -1;
	return e2cb_grow_to(arr, size, count + 1, elem);
}
