/*
 * secmem.c --- locked, non-dumpable memory for key material
 *
 * Keys and everything derived from them are kept in whole pages that are
 * locked in RAM (never swapped), left out of core dumps and wiped before
 * they are reused or unmapped.  A few pages are kept for reuse, so that
 * a key per file does not cost a system call per file.  When the lock
 * fails (RLIMIT_MEMLOCK) the memory is still used; the caller may ask
 * and warn.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <openssl/crypto.h>
#include "fscrypt_int.h"

#define POOL_MAX	64

static void *pool[POOL_MAX];
static size_t npool;
static size_t page_size;
static int unlocked;

static size_t secure_len(size_t size)
{
	if (!page_size) {
		long p = sysconf(_SC_PAGESIZE);

		page_size = p > 0 ? (size_t) p : 4096;
	}
	return (size + page_size - 1) & ~(page_size - 1);
}

void fscrypt_wipe(void *p, size_t size)
{
	if (p && size)
		OPENSSL_cleanse(p, size);
}

/* Zeroed memory of at least @size bytes, or NULL */
void *fscrypt_secure_alloc(size_t size)
{
	size_t len = secure_len(size ? size : 1);
	void *p;

	if (len == page_size && npool)
		return pool[--npool];
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mlock(p, len))
		unlocked = 1;
#ifdef MADV_DONTDUMP
	madvise(p, len, MADV_DONTDUMP);
#endif
#ifdef MADV_WIPEONFORK
	/* a child (a decompressor, say) must not inherit the keys */
	madvise(p, len, MADV_WIPEONFORK);
#endif
	return p;
}

void fscrypt_secure_free(void *p, size_t size)
{
	size_t len;

	if (!p)
		return;
	len = secure_len(size ? size : 1);
	OPENSSL_cleanse(p, len);
	if (len == page_size && npool < POOL_MAX) {
		pool[npool++] = p;
		return;
	}
	munlock(p, len);
	munmap(p, len);
}

/* Non-zero once memory for keys could not be locked */
int fscrypt_secure_unlocked(void)
{
	return unlocked;
}
