/*
 * ino_map.c --- inode number -> path or value, for inodes seen again
 *
 * Hard links are found by inode number: backup keeps the path an inode
 * was first archived at, the reader a digest of it, extract the file it
 * made.  An open-addressing table of 2^n slots, kept at most half full;
 * it grows as needed, and says so when memory runs out instead of
 * losing an entry.  The callers enter only inodes with several names.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "e2cb_support.h"

void e2cb_ino_map_init(struct e2cb_ino_map *m, size_t val_size)
{
	memset(m, 0, sizeof(*m));
	m->val_size = val_size;
}

/* Values are paths, copied in by e2cb_ino_map_add_path() */
void e2cb_ino_map_init_paths(struct e2cb_ino_map *m)
{
	e2cb_ino_map_init(m, sizeof(char *));
	m->paths = 1;
}

/* The slot of @key, or the free slot where it would go; @size is 2^n */
static size_t slot_of(const uint32_t *ino, size_t size, uint32_t key)
{
	size_t i;

	for (i = e2cb_mix64(key) & (size - 1); ino[i] && ino[i] != key;
	     i = (i + 1) & (size - 1))
		;
	return i;
}

void *e2cb_ino_map_find(const struct e2cb_ino_map *m, uint32_t ino)
{
	size_t i;

	if (!m->size || !ino)
		return NULL;
	i = slot_of(m->ino, m->size, ino);
	return m->ino[i] ? m->val + i * m->val_size : NULL;
}

static errcode_t rehash(struct e2cb_ino_map *m)
{
	size_t size = m->size ? m->size * 2 : 64, i, j;
	uint32_t *ino;
	uint8_t *val;

	if (size > SIZE_MAX / (m->val_size ? m->val_size : 1))
		return EXT2_ET_NO_MEMORY;
	ino = calloc(size, sizeof(*ino));
	val = calloc(size, m->val_size ? m->val_size : 1);
	if (!ino || !val) {
		free(ino);
		free(val);
		return EXT2_ET_NO_MEMORY;
	}
	for (j = 0; j < m->size; j++) {
		if (!m->ino[j])
			continue;
		i = slot_of(ino, size, m->ino[j]);
		ino[i] = m->ino[j];
		memcpy(val + i * m->val_size, m->val + j * m->val_size,
		       m->val_size);
	}
	free(m->ino);
	free(m->val);
	m->ino = ino;
	m->val = val;
	m->size = size;
	return 0;
}

/*
 * The value of @ino in *@ret: a new one, zeroed, or the one @ino has
 * already, for the caller to keep or overwrite (e2cb_ino_map_find()
 * first tells which).
 */
errcode_t e2cb_ino_map_add(struct e2cb_ino_map *m, uint32_t ino, void **ret)
{
	errcode_t retval;
	size_t i;

	if (!ino)
		return EXT2_ET_INVALID_ARGUMENT;
	*ret = e2cb_ino_map_find(m, ino);
	if (*ret)
		return 0;
	if ((m->count + 1) * 2 > m->size) {
		retval = rehash(m);
		if (retval)
			return retval;
	}
	i = slot_of(m->ino, m->size, ino);
	m->ino[i] = ino;
	m->count++;
	*ret = m->val + i * m->val_size;
	return 0;
}

/* @len bytes of @path (which need not be NUL terminated), copied */
errcode_t e2cb_ino_map_add_path(struct e2cb_ino_map *m, uint32_t ino,
				const char *path, size_t len)
{
	char *copy, **slot;
	errcode_t retval;

	if (!m->paths)
		return EXT2_ET_INVALID_ARGUMENT;
	copy = malloc(len + 1);
	if (!copy)
		return EXT2_ET_NO_MEMORY;
	if (len)	/* an empty path may be NULL */
		memcpy(copy, path, len);
	copy[len] = 0;
	retval = e2cb_ino_map_add(m, ino, (void **) &slot);
	if (retval || *slot) {
		free(copy);
		return retval;
	}
	*slot = copy;
	return 0;
}

const char *e2cb_ino_map_path(const struct e2cb_ino_map *m, uint32_t ino)
{
	char **slot = e2cb_ino_map_find(m, ino);

	return slot ? *slot : NULL;
}

/* Each value in turn, from *@pos = 0 on; NULL after the last */
void *e2cb_ino_map_next(const struct e2cb_ino_map *m, size_t *pos,
			uint32_t *ino)
{
	for (; *pos < m->size; (*pos)++) {
		if (!m->ino[*pos])
			continue;
		if (ino)
			*ino = m->ino[*pos];
		return m->val + (*pos)++ * m->val_size;
	}
	return NULL;
}

void e2cb_ino_map_free(struct e2cb_ino_map *m)
{
	size_t pos = 0;
	int paths = m->paths;
	char **slot;

	if (paths)
		while ((slot = e2cb_ino_map_next(m, &pos, NULL)))
			free(*slot);
	free(m->ino);
	free(m->val);
	/* empty, and ready for use again */
	e2cb_ino_map_init(m, m->val_size);
	m->paths = paths;
}
