/*
 * restore_digests.c --- what the first pass read, entry by entry
 *
 * The writing pass acts on an entry only if its digest is the one the
 * first pass checked (doc/design.txt, "Restore's two passes").  Kept
 * in memory that is 16 bytes an entry, 16 MiB for a million: past the
 * first DIGESTS_IN_MEMORY they go to an unlinked file of our own in
 * $TMPDIR, written and read back in order, so that restore's memory
 * does not grow with the number of entries.  Without such a file they
 * stay in memory, as before.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "restore.h"

#define DIGESTS_IN_MEMORY	65536	/* 1 MiB */

/* An unlinked file only we can reach; NULL when there is none */
static FILE *spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd = -1;

#ifdef O_TMPFILE
	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
#endif
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w+");
	if (!f)
		close(fd);
	return f;
}

/* Digest @d (NULL: none) of the next entry; -1 out of memory */
int e2cb_digests_add(struct digest_list *l, const uint8_t *d)
{
	uint8_t zero[E2CB_ENTRY_DIGEST_LEN];

	if (!d) {
		memset(zero, 0, sizeof(zero));
		d = zero;
	}
	if (l->in_mem == DIGESTS_IN_MEMORY && !l->spill && !l->no_spill) {
		l->spill = spill_open();
		l->no_spill = !l->spill;
	}
	if (l->spill) {
		if (fwrite(d, E2CB_ENTRY_DIGEST_LEN, 1, l->spill) != 1)
			return -1;
		l->count++;
		return 0;
	}
	if (e2cb_grow((void **) &l->mem, &l->mem_size, l->in_mem,
		       sizeof(*l->mem)))
		return -1;
	memcpy(l->mem[l->in_mem++], d, E2CB_ENTRY_DIGEST_LEN);
	l->count++;
	return 0;
}

/* Digest @i as the first pass noted it; -1 when it cannot be read */
static int digest_get(struct digest_list *l, uint64_t i, uint8_t *d)
{
	uint64_t at;

	if (i < l->in_mem) {
		memcpy(d, l->mem[i], E2CB_ENTRY_DIGEST_LEN);
		return 0;
	}
	at = i - l->in_mem;
	/* read in order; a seek only to start, or after a rewind */
	if (!l->reading || l->at != at) {
		if (fflush(l->spill) ||
		    fseeko(l->spill, (off_t) at * E2CB_ENTRY_DIGEST_LEN,
			   SEEK_SET))
			return -1;
		l->reading = 1;
		l->at = at;
	}
	if (fread(d, E2CB_ENTRY_DIGEST_LEN, 1, l->spill) != 1)
		return -1;
	l->at++;
	return 0;
}

/* Whether entry @i's digest is @d (NULL: the source has none) */
int e2cb_digests_same(struct digest_list *l, uint64_t i, const uint8_t *d)
{
	uint8_t noted[E2CB_ENTRY_DIGEST_LEN];

	if (i >= l->count)
		return 0;
	if (!d)
		return 1;
	return !digest_get(l, i, noted) && !memcmp(noted, d, sizeof(noted));
}

void e2cb_digests_free(struct digest_list *l)
{
	free(l->mem);
	if (l->spill)
		fclose(l->spill);
	memset(l, 0, sizeof(*l));
}
