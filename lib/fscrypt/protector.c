/*
 * protector.c --- google/fscrypt's protectors: records and key unwrapping
 *
 * The fscrypt tool (github.com/google/fscrypt) never stores a master
 * key: each policy key is wrapped by one or more protectors, and each
 * protector's own key is wrapped by what its owner holds -- a login or
 * custom passphrase hashed with Argon2id, or a 32-byte raw key.  Both
 * are protobuf records in MOUNTPOINT/.fscrypt/{protectors,policies}
 * (metadata/metadata.proto).
 *
 * The records are decoded here by a small, strict decoder rather than
 * protobuf-c: five short messages, of which only a handful of fields
 * are read, do not warrant a generated parser, a copy of the .proto
 * file and a compiler at build time.  Every length is checked against
 * what is left of the record; unknown fields are skipped as protobuf
 * does, groups and malformed varints are refused.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/crypto.h>
#include <argon2.h>
#include "fscrypt_int.h"

/* --- protobuf ----------------------------------------------------------- */

struct pb {
	const uint8_t *p, *end;
};

static errcode_t pb_varint(struct pb *b, uint64_t *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return FSCRYPT_ET_BAD_RECORD;
		*v |= (uint64_t) (*b->p & 0x7f) << shift;
		if (!(*b->p++ & 0x80))
			return 0;
	}
	return FSCRYPT_ET_BAD_RECORD;
}

/*
 * The next field: its number, and either its varint value or its bytes
 * (length-delimited).  Fixed-size fields are skipped; groups refused.
 */
static errcode_t pb_field(struct pb *b, unsigned int *num, uint64_t *v,
			  struct pb *sub)
{
	uint64_t key, len;
	errcode_t retval;

	retval = pb_varint(b, &key);
	if (retval)
		return retval;
	*num = key >> 3;
	if (!*num || key >> 32)
		return FSCRYPT_ET_BAD_RECORD;
	sub->p = sub->end = NULL;
	switch (key & 7) {
	case 0:
		return pb_varint(b, v);
	case 1:
	case 5:
		len = (key & 7) == 1 ? 8 : 4;
		break;
	case 2:
		retval = pb_varint(b, &len);
		if (retval)
			return retval;
		sub->p = b->p;
		sub->end = b->p + (len <= (uint64_t) (b->end - b->p) ? len : 0);
		break;
	default:
		return FSCRYPT_ET_BAD_RECORD;
	}
	if (len > (uint64_t) (b->end - b->p))
		return FSCRYPT_ET_BAD_RECORD;
	b->p += len;
	*v = len;
	return 0;
}

/* A string field into a NUL-terminated buffer, without NULs in it */
static errcode_t pb_string(const struct pb *sub, char *out, size_t size)
{
	size_t len = sub->end - sub->p;

	if (!sub->p || len >= size || memchr(sub->p, 0, len))
		return FSCRYPT_ET_BAD_RECORD;
	memcpy(out, sub->p, len);
	out[len] = 0;
	return 0;
}

static errcode_t parse_wrapped(struct pb b, struct fscrypt_wrapped_key *wk)
{
	struct pb sub;
	unsigned int num;
	uint64_t v;
	errcode_t retval;

	memset(wk, 0, sizeof(*wk));
	while (b.p < b.end) {
		retval = pb_field(&b, &num, &v, &sub);
		if (retval)
			return retval;
		if (num >= 1 && num <= 3 && !sub.p)
			return FSCRYPT_ET_BAD_RECORD;
		if (num == 1) {
			wk->iv = sub.p;
			wk->iv_len = v;
		} else if (num == 2) {
			wk->key = sub.p;
			wk->key_len = v;
		} else if (num == 3) {
			wk->hmac = sub.p;
			wk->hmac_len = v;
		}
	}
	/* metadata/checks.go: WrappedKeyData.CheckValidity */
	if (wk->iv_len != FSCRYPT_WRAP_IV_SIZE ||
	    wk->hmac_len != FSCRYPT_WRAP_HMAC_SIZE ||
	    !wk->key_len || wk->key_len > FSCRYPT_MAX_KEY_SIZE)
		return FSCRYPT_ET_BAD_RECORD;
	return 0;
}

static errcode_t parse_costs(struct pb b, struct fscrypt_protector *pr)
{
	struct pb sub;
	unsigned int num;
	uint64_t v;
	errcode_t retval;

	while (b.p < b.end) {
		retval = pb_field(&b, &num, &v, &sub);
		if (retval)
			return retval;
		if (num >= 2 && num <= 5 && sub.p)
			return FSCRYPT_ET_BAD_RECORD;
		if (num == 2)
			pr->time = v;
		else if (num == 3)
			pr->memory = v;
		else if (num == 4)
			pr->parallelism = v;
		else if (num == 5)
			pr->truncation_fixed = !!v;
	}
	return 0;
}

/* A descriptor: lowercase hex of the length fscrypt gives it */
static int is_descriptor(const char *s, size_t len)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == len;
}

/* Argon2 costs as metadata/checks.go: HashingCosts.CheckValidity allows */
static errcode_t check_costs(struct fscrypt_protector *pr)
{
	int64_t p = pr->parallelism;

	/* before truncation_fixed, fscrypt cast the parallelism to a u8 */
	if ((p < 1 || p > 255) && !pr->truncation_fixed)
		p = (uint8_t) p;
	if (p < 1 || p > 255 || pr->time < 1 || pr->time > UINT32_MAX ||
	    pr->memory < 8 * p || pr->memory > UINT32_MAX)
		return FSCRYPT_ET_BAD_COSTS;
	pr->parallelism = p;
	return 0;
}

errcode_t fscrypt_parse_protector(const void *buf, size_t len,
				  struct fscrypt_protector *pr)
{
	struct pb b = { buf, (const uint8_t *) buf + len }, sub;
	unsigned int num;
	uint64_t v;
	int have_key = 0;
	errcode_t retval;

	memset(pr, 0, sizeof(*pr));
	while (b.p < b.end) {
		retval = pb_field(&b, &num, &v, &sub);
		if (retval)
			return retval;
		switch (num) {
		case 1:
			retval = pb_string(&sub, pr->descriptor,
					sizeof(pr->descriptor));
			break;
		case 2:
			retval = sub.p ? FSCRYPT_ET_BAD_RECORD : 0;
			pr->source = v;
			break;
		case 3:
			retval = pb_string(&sub, pr->name, sizeof(pr->name));
			break;
		case 4:
			retval = sub.p ? parse_costs(sub, pr) :
				      FSCRYPT_ET_BAD_RECORD;
			break;
		case 5:
			retval = sub.p ? 0 : FSCRYPT_ET_BAD_RECORD;
			pr->salt = sub.p;
			pr->salt_len = v;
			break;
		case 6:
			retval = sub.p ? FSCRYPT_ET_BAD_RECORD : 0;
			pr->uid = v;
			break;
		case 7:
			retval = sub.p ? parse_wrapped(sub, &pr->wrapped) :
				      FSCRYPT_ET_BAD_RECORD;
			have_key = 1;
			break;
		}
		if (retval)
			return retval;
	}
	if (!have_key || pr->wrapped.key_len != FSCRYPT_PROTECTOR_KEY_SIZE ||
	    !is_descriptor(pr->descriptor, 2 * FSCRYPT_KEY_DESCRIPTOR_SIZE))
		return FSCRYPT_ET_BAD_RECORD;
	switch (pr->source) {
	case FSCRYPT_SOURCE_PAM_PASSPHRASE:
	case FSCRYPT_SOURCE_CUSTOM_PASSPHRASE:
		if (!pr->salt_len)
			return FSCRYPT_ET_BAD_RECORD;
		return check_costs(pr);
	case FSCRYPT_SOURCE_RAW_KEY:
		return 0;
	}
	return FSCRYPT_ET_BAD_RECORD;
}

static errcode_t parse_options(struct pb b, struct fscrypt_policy_data *pd)
{
	struct pb sub;
	unsigned int num;
	uint64_t v;
	errcode_t retval;

	while (b.p < b.end) {
		retval = pb_field(&b, &num, &v, &sub);
		if (retval)
			return retval;
		if (num >= 1 && num <= 4 && sub.p)
			return FSCRYPT_ET_BAD_RECORD;
		if (num == 2)
			pd->contents_mode = v;
		else if (num == 3)
			pd->filenames_mode = v;
		else if (num == 4)
			pd->policy_version = v;
	}
	return 0;
}

static errcode_t parse_policy_key(struct pb b, struct fscrypt_policy_data *pd)
{
	struct fscrypt_policy_key *pk;
	struct pb sub;
	unsigned int num;
	uint64_t v;
	int have_key = 0;
	errcode_t retval;

	if (pd->nkeys >= FSCRYPT_MAX_POLICY_PROTECTORS)
		return FSCRYPT_ET_BAD_RECORD;
	pk = &pd->keys[pd->nkeys];
	memset(pk, 0, sizeof(*pk));
	while (b.p < b.end) {
		retval = pb_field(&b, &num, &v, &sub);
		if (retval)
			return retval;
		if (num == 1)
			retval = pb_string(&sub, pk->protector,
					sizeof(pk->protector));
		else if (num == 2) {
			retval = sub.p ? parse_wrapped(sub, &pk->wrapped) :
				      FSCRYPT_ET_BAD_RECORD;
			have_key = 1;
		}
		if (retval)
			return retval;
	}
	if (!have_key || pk->wrapped.key_len != FSCRYPT_MAX_KEY_SIZE ||
	    !is_descriptor(pk->protector, 2 * FSCRYPT_KEY_DESCRIPTOR_SIZE))
		return FSCRYPT_ET_BAD_RECORD;
	pd->nkeys++;
	return 0;
}

errcode_t fscrypt_parse_policy_data(const void *buf, size_t len,
				    struct fscrypt_policy_data *pd)
{
	struct pb b = { buf, (const uint8_t *) buf + len }, sub;
	unsigned int num;
	uint64_t v;
	errcode_t retval;
	size_t want;

	memset(pd, 0, sizeof(*pd));
	while (b.p < b.end) {
		retval = pb_field(&b, &num, &v, &sub);
		if (retval)
			return retval;
		if (num >= 1 && num <= 3 && !sub.p)
			return FSCRYPT_ET_BAD_RECORD;
		if (num == 1)
			retval = pb_string(&sub, pd->descriptor,
					sizeof(pd->descriptor));
		else if (num == 2)
			retval = parse_options(sub, pd);
		else if (num == 3)
			retval = parse_policy_key(sub, pd);
		if (retval)
			return retval;
	}
	/* a v1 descriptor is 8 bytes, a v2 identifier 16 */
	want = pd->policy_version == 2 ? FSCRYPT_KEY_IDENTIFIER_SIZE :
	       pd->policy_version == 1 ? FSCRYPT_KEY_DESCRIPTOR_SIZE : 0;
	if (!want || !is_descriptor(pd->descriptor, 2 * want))
		return FSCRYPT_ET_BAD_RECORD;
	return 0;
}

/* --- unwrapping --------------------------------------------------------- */

/*
 * /proc/meminfo's MemAvailable in KiB, or 0 if unknown: Argon2id's
 * memory is allocated and touched at once, and a cost larger than what
 * is free would have the OOM killer end us rather than an error.
 */
static uint64_t mem_available_kib(void)
{
	unsigned long long kib = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * Argon2's memory holds what the passphrase becomes: kept out of core
 * dumps and children, and wiped by libargon2 before it is freed.  Too
 * large to lock, as fscrypt does not lock it either.
 */
static int argon2_alloc(uint8_t **mem, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
#ifdef MADV_DONTDUMP
	madvise(p, size, MADV_DONTDUMP);
#endif
#ifdef MADV_WIPEONFORK
	madvise(p, size, MADV_WIPEONFORK);
#endif
	*mem = p;
	return 0;
}

static void argon2_free(uint8_t *mem, size_t size)
{
	OPENSSL_cleanse(mem, size);
	munmap(mem, size);
}

/*
 * crypto/crypto.go: PassphraseHash: Argon2id (version 0x13) of the
 * passphrase with the protector's salt and costs, 32 bytes out, as
 * golang.org/x/crypto/argon2.IDKey with as many lanes as threads.
 */
static errcode_t passphrase_hash(const struct fscrypt_protector *pr,
				 const uint8_t *pass, size_t len,
				 uint8_t out[FSCRYPT_PROTECTOR_KEY_SIZE])
{
	uint64_t avail = mem_available_kib();
	argon2_context ctx;

	if (avail && (uint64_t) pr->memory > avail)
		return FSCRYPT_ET_HASH_MEMORY;
	memset(&ctx, 0, sizeof(ctx));
	ctx.out = out;
	ctx.outlen = FSCRYPT_PROTECTOR_KEY_SIZE;
	ctx.pwd = (uint8_t *) pass;
	ctx.pwdlen = len;
	ctx.salt = (uint8_t *) pr->salt;
	ctx.saltlen = pr->salt_len;
	ctx.t_cost = pr->time;
	ctx.m_cost = pr->memory;
	ctx.lanes = ctx.threads = pr->parallelism;
	ctx.version = ARGON2_VERSION_13;
	ctx.allocate_cbk = argon2_alloc;
	ctx.free_cbk = argon2_free;
	ctx.flags = ARGON2_DEFAULT_FLAGS;
	switch (argon2_ctx(&ctx, Argon2_id)) {
	case ARGON2_OK:
		return 0;
	case ARGON2_MEMORY_ALLOCATION_ERROR:
		return FSCRYPT_ET_HASH_MEMORY;
	default:
		return FSCRYPT_ET_ARGON2;
	}
}

/* crypto/crypto.go: stretchKey: HKDF-SHA256, no salt, no info, 64 bytes */
static errcode_t stretch_key(const uint8_t wrapping[32], uint8_t out[64])
{
	OSSL_PARAM params[3];
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	int ok;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						     "SHA256", 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						      (void *) wrapping, 32);
	params[2] = OSSL_PARAM_construct_end();
	ok = ctx && EVP_KDF_derive(ctx, out, 64, params) > 0;
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

/* crypto/crypto.go: getHMAC: HMAC-SHA256 of IV || encrypted key */
static errcode_t wrap_hmac(const uint8_t key[32],
			   const struct fscrypt_wrapped_key *wk,
			   uint8_t mac[FSCRYPT_WRAP_HMAC_SIZE])
{
	OSSL_PARAM params[2];
	EVP_MAC *alg = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = alg ? EVP_MAC_CTX_new(alg) : NULL;
	size_t outl = 0;
	int ok;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						     "SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	ok = ctx && EVP_MAC_init(ctx, key, 32, params) &&
	     EVP_MAC_update(ctx, wk->iv, wk->iv_len) &&
	     EVP_MAC_update(ctx, wk->key, wk->key_len) &&
	     EVP_MAC_final(ctx, mac, &outl, FSCRYPT_WRAP_HMAC_SIZE) &&
	     outl == FSCRYPT_WRAP_HMAC_SIZE;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(alg);
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

/*
 * crypto/crypto.go: Unwrap: the wrapping key is stretched into an
 * encryption key and then an authentication key; the HMAC under the
 * latter must match before the key is decrypted with AES-256-CTR under
 * the former (crypto.go: aesCTR), the IV as the initial counter.
 */
static errcode_t unwrap(const uint8_t wrapping[FSCRYPT_PROTECTOR_KEY_SIZE],
			const struct fscrypt_wrapped_key *wk, uint8_t *out)
{
	uint8_t *k = fscrypt_secure_alloc(64 + FSCRYPT_WRAP_HMAC_SIZE);
	uint8_t *mac = k + 64;
	EVP_CIPHER_CTX *c = NULL;
	int outl = 0, ok;
	errcode_t retval;

	if (!k)
		return FSCRYPT_ET_NO_MEMORY;
	retval = stretch_key(wrapping, k);
	if (!retval)
		retval = wrap_hmac(k + 32, wk, mac);
	if (retval)
		goto errout;
	if (CRYPTO_memcmp(mac, wk->hmac, FSCRYPT_WRAP_HMAC_SIZE)) {
		retval = FSCRYPT_ET_BAD_HMAC;
		goto errout;
	}
	c = EVP_CIPHER_CTX_new();
	ok = c && EVP_DecryptInit_ex(c, EVP_aes_256_ctr(), NULL, k, wk->iv) &&
	     EVP_DecryptUpdate(c, out, &outl, wk->key, wk->key_len) &&
	     (size_t) outl == wk->key_len;
	retval = ok ? 0 : FSCRYPT_ET_CRYPTO;
errout:
	EVP_CIPHER_CTX_free(c);
	fscrypt_secure_free(k, 64 + FSCRYPT_WRAP_HMAC_SIZE);
	return retval;
}

static void to_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = 0;
}

/*
 * actions/callback.go: getWrappingKey and unwrapProtectorKey: a raw_key
 * protector's key wraps its protector key as it is; a passphrase
 * (login -- pam_passphrase, whose uid only says whose it is -- or
 * custom) is hashed first.  The result must then have the descriptor of
 * the record (crypto.ComputeKeyDescriptor, v1), as fscrypt made it.
 */
errcode_t fscrypt_protector_unlock(const struct fscrypt_protector *pr,
				   const uint8_t *secret, size_t len,
				   uint8_t key[FSCRYPT_PROTECTOR_KEY_SIZE])
{
	uint8_t *wrapping = fscrypt_secure_alloc(FSCRYPT_PROTECTOR_KEY_SIZE);
	uint8_t desc[FSCRYPT_KEY_DESCRIPTOR_SIZE];
	char hex[2 * FSCRYPT_KEY_DESCRIPTOR_SIZE + 1];
	errcode_t retval;

	if (!wrapping)
		return FSCRYPT_ET_NO_MEMORY;
	if (pr->source == FSCRYPT_SOURCE_RAW_KEY) {
		retval = len == FSCRYPT_PROTECTOR_KEY_SIZE ? 0 :
			 FSCRYPT_ET_RAW_KEY_SIZE;
		if (!retval)
			memcpy(wrapping, secret, len);
	} else {
		retval = len ? passphrase_hash(pr, secret, len, wrapping) :
			 FSCRYPT_ET_BAD_PASSPHRASE;
	}
	if (!retval)
		retval = unwrap(wrapping, &pr->wrapped, key);
	if (!retval)
		retval = fscrypt_key_descriptor(key, FSCRYPT_PROTECTOR_KEY_SIZE,
						desc);
	if (!retval) {
		to_hex(desc, sizeof(desc), hex);
		if (strcmp(hex, pr->descriptor))
			retval = FSCRYPT_ET_WRONG_DESCRIPTOR;
	}
	if (retval)
		fscrypt_wipe(key, FSCRYPT_PROTECTOR_KEY_SIZE);
	fscrypt_secure_free(wrapping, FSCRYPT_PROTECTOR_KEY_SIZE);
	return retval;
}

/*
 * actions/policy.go: Policy.Unlock: the policy key wrapped for this
 * protector, unwrapped with the protector key; it must be the key of
 * the policy's descriptor (crypto.ComputeKeyDescriptor, v1 or v2).
 * *found is 0 when the policy has no key for this protector.
 */
errcode_t fscrypt_policy_unlock(const struct fscrypt_policy_data *pd,
				const char *protector,
				const uint8_t pkey[FSCRYPT_PROTECTOR_KEY_SIZE],
				uint8_t key[FSCRYPT_MAX_KEY_SIZE], int *found)
{
	uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE];
	char hex[2 * FSCRYPT_KEY_IDENTIFIER_SIZE + 1];
	size_t i, n;
	errcode_t retval;

	*found = 0;
	for (i = 0; i < pd->nkeys; i++)
		if (!strcmp(pd->keys[i].protector, protector))
			break;
	if (i == pd->nkeys)
		return 0;
	*found = 1;
	retval = unwrap(pkey, &pd->keys[i].wrapped, key);
	if (retval)
		return retval;
	if (pd->policy_version == 2) {
		n = FSCRYPT_KEY_IDENTIFIER_SIZE;
		retval = fscrypt_key_identifier(key, FSCRYPT_MAX_KEY_SIZE, id);
	} else {
		n = FSCRYPT_KEY_DESCRIPTOR_SIZE;
		retval = fscrypt_key_descriptor(key, FSCRYPT_MAX_KEY_SIZE, id);
	}
	if (!retval) {
		to_hex(id, n, hex);
		if (strcmp(hex, pd->descriptor))
			retval = FSCRYPT_ET_WRONG_DESCRIPTOR;
	}
	if (retval)
		fscrypt_wipe(key, FSCRYPT_MAX_KEY_SIZE);
	return retval;
}

const char *fscrypt_source_name(int source)
{
	switch (source) {
	case FSCRYPT_SOURCE_PAM_PASSPHRASE:
		return "pam_passphrase";
	case FSCRYPT_SOURCE_CUSTOM_PASSPHRASE:
		return "custom_passphrase";
	case FSCRYPT_SOURCE_RAW_KEY:
		return "raw_key";
	}
	return "unknown";
}
