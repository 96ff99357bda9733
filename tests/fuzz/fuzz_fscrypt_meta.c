/*
 * fuzz_fscrypt_meta.c --- google/fscrypt's protector and policy records
 *
 * The first byte chooses the record (even: ProtectorData, odd:
 * PolicyData), the rest is the record.  What parses must point inside
 * the input only; a raw_key protector and every policy are then
 * unwrapped with a zero key, which must fail the HMAC and nothing else
 * (passphrase protectors are not hashed: their costs are the input's).
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "fscrypt/fscrypt.h"

static void inside(const uint8_t *p, size_t len, const uint8_t *buf,
		   size_t size)
{
	if (len && (p < buf || len > size ||
		    p - buf > (ptrdiff_t) (size - len)))
		abort();
}

static void check_wrapped(const struct fscrypt_wrapped_key *wk,
			  const uint8_t *buf, size_t size)
{
	inside(wk->iv, wk->iv_len, buf, size);
	inside(wk->key, wk->key_len, buf, size);
	inside(wk->hmac, wk->hmac_len, buf, size);
	if (wk->iv_len != FSCRYPT_WRAP_IV_SIZE ||
	    wk->hmac_len != FSCRYPT_WRAP_HMAC_SIZE)
		abort();
}

static void protector(const uint8_t *p, size_t n)
{
	static const uint8_t zero[FSCRYPT_PROTECTOR_KEY_SIZE];
	uint8_t key[FSCRYPT_PROTECTOR_KEY_SIZE];
	struct fscrypt_protector pr;
	errcode_t err;

	if (fscrypt_parse_protector(p, n, &pr))
		return;
	check_wrapped(&pr.wrapped, p, n);
	inside(pr.salt, pr.salt_len, p, n);
	if (strlen(pr.descriptor) != 16)
		abort();
	if (pr.source != FSCRYPT_SOURCE_RAW_KEY)
		return;
	err = fscrypt_protector_unlock(&pr, zero, sizeof(zero), key);
	if (err && err != FSCRYPT_ET_BAD_HMAC &&
	    err != FSCRYPT_ET_WRONG_DESCRIPTOR)
		abort();
}

static void policy(const uint8_t *p, size_t n)
{
	static const uint8_t zero[FSCRYPT_PROTECTOR_KEY_SIZE];
	uint8_t key[FSCRYPT_MAX_KEY_SIZE];
	struct fscrypt_policy_data *pd = malloc(sizeof(*pd));
	errcode_t err;
	size_t i;
	int found;

	if (!pd || fscrypt_parse_policy_data(p, n, pd))
		goto out;
	for (i = 0; i < pd->nkeys; i++) {
		check_wrapped(&pd->keys[i].wrapped, p, n);
		err = fscrypt_policy_unlock(pd, pd->keys[i].protector, zero,
					    key, &found);
		if (!found || (err && err != FSCRYPT_ET_BAD_HMAC &&
			       err != FSCRYPT_ET_WRONG_DESCRIPTOR))
			abort();
	}
out:
	free(pd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (size < 1)
		return 0;
	/* a copy of the exact length: reads past the record are caught */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		policy(copy, size - 1);
	else
		protector(copy, size - 1);
	free(copy);
	return 0;
}
