/*
 * kdf.c --- fscrypt key derivation
 *
 * v2: HKDF-SHA512 (RFC 5869) with no salt; every derived key's info is
 * "fscrypt\0" || context byte || context data, as in the kernel's
 * fs/crypto/hkdf.c.  v1: each file's key is the master key encrypted
 * with AES-128-ECB under the file's nonce.  Also the names a master key
 * goes by (the v2 identifier and the conventional v1 descriptor), the
 * e4crypt passphrase hash and SipHash-2-4 for IV_INO_LBLK_32.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include "fscrypt_int.h"

#define HKDF_INFO_PREFIX	"fscrypt\0"
#define HKDF_INFO_PREFIX_LEN	8
#define MAX_INFO		(HKDF_INFO_PREFIX_LEN + 1 + 1 + 16)

static EVP_KDF *hkdf_alg;

static errcode_t hkdf_run(int mode, const uint8_t *key, size_t key_len,
			  const uint8_t *info, size_t info_len, uint8_t *out,
			  size_t out_len)
{
	OSSL_PARAM params[5], *p = params;
	EVP_KDF_CTX *ctx;
	int ok;

	if (!hkdf_alg)
		hkdf_alg = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (!hkdf_alg)
		return FSCRYPT_ET_CRYPTO;
	ctx = EVP_KDF_CTX_new(hkdf_alg);
	if (!ctx)
		return FSCRYPT_ET_CRYPTO;
	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						"SHA512", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						 (void *) key, key_len);
	if (info)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
							 (void *) info,
							 info_len);
	*p = OSSL_PARAM_construct_end();
	ok = EVP_KDF_derive(ctx, out, out_len, params) > 0;
	EVP_KDF_CTX_free(ctx);
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

/* No salt: HMAC pads the empty key with zeros, as the kernel's does */
errcode_t fscrypt_hkdf_extract(const uint8_t *ikm, size_t ikm_len,
			       uint8_t prk[64])
{
	return hkdf_run(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, ikm, ikm_len, NULL, 0,
			prk, 64);
}

errcode_t fscrypt_hkdf_expand(const uint8_t prk[64], uint8_t context,
			      const uint8_t *info, size_t info_len,
			      uint8_t *out, size_t out_len)
{
	uint8_t full[MAX_INFO];

	if (info_len > MAX_INFO - HKDF_INFO_PREFIX_LEN - 1)
		return FSCRYPT_ET_UNSUPPORTED;
	memcpy(full, HKDF_INFO_PREFIX, HKDF_INFO_PREFIX_LEN);
	full[HKDF_INFO_PREFIX_LEN] = context;
	if (info_len)
		memcpy(full + HKDF_INFO_PREFIX_LEN + 1, info, info_len);
	return hkdf_run(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, 64, full,
			HKDF_INFO_PREFIX_LEN + 1 + info_len, out, out_len);
}

errcode_t fscrypt_hkdf_sha512(const uint8_t *ikm, size_t ikm_len,
			      uint8_t context, const uint8_t *info,
			      size_t info_len, uint8_t *out, size_t out_len)
{
	uint8_t *prk = fscrypt_secure_alloc(64);
	errcode_t retval;

	if (!prk)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_hkdf_extract(ikm, ikm_len, prk);
	if (!retval)
		retval = fscrypt_hkdf_expand(prk, context, info, info_len, out,
					     out_len);
	fscrypt_secure_free(prk, 64);
	return retval;
}

errcode_t fscrypt_key_identifier(const uint8_t *raw, size_t len,
				 uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE])
{
	return fscrypt_hkdf_sha512(raw, len, HKDF_CONTEXT_KEY_IDENTIFIER,
				   NULL, 0, id, FSCRYPT_KEY_IDENTIFIER_SIZE);
}

/*
 * v1 keys carry no name of their own; e4crypt and the fscrypt tool
 * call them by SHA-512(SHA-512(key))[0:8], and so do we.
 */
errcode_t fscrypt_key_descriptor(const uint8_t *raw, size_t len,
				 uint8_t desc[FSCRYPT_KEY_DESCRIPTOR_SIZE])
{
	uint8_t h[64];
	unsigned int n;
	int ok;

	ok = EVP_Digest(raw, len, h, &n, EVP_sha512(), NULL) &&
	     EVP_Digest(h, 64, h, &n, EVP_sha512(), NULL);
	memcpy(desc, h, FSCRYPT_KEY_DESCRIPTOR_SIZE);
	fscrypt_wipe(h, sizeof(h));
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

/* v1: the per-file key is AES-128-ECB(key = nonce, master key) */
errcode_t fscrypt_v1_derive_key(const uint8_t *master, const uint8_t nonce[16],
				uint8_t *out, size_t len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl = 0, ok;

	ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, nonce,
				       NULL) &&
	     EVP_CIPHER_CTX_set_padding(ctx, 0) &&
	     EVP_EncryptUpdate(ctx, out, &outl, master, len) &&
	     (size_t) outl == len;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

/*
 * e4crypt's passphrase hash (misc/e4crypt.c; not PBKDF2 despite its
 * name there): T1 = SHA-512(salt padded to 256 bytes || pass),
 * Ti = SHA-512(Ti-1 || pass), key = T1 ^ ... ^ T65535.
 */
#define E4CRYPT_SALT_MAX	256
#define E4CRYPT_PASS_MAX	1024
#define E4CRYPT_ITERATIONS	0xffff

errcode_t fscrypt_e4crypt_passphrase_key(const uint8_t *pass, size_t len,
					 const uint8_t salt[16],
					 uint8_t key[FSCRYPT_MAX_KEY_SIZE])
{
	size_t bufsize = E4CRYPT_SALT_MAX + E4CRYPT_PASS_MAX;
	uint8_t *buf, t[64];
	unsigned int n, i, j;
	EVP_MD_CTX *md;
	errcode_t retval = 0;

	if (!len || len > E4CRYPT_PASS_MAX)
		return FSCRYPT_ET_BAD_PASSPHRASE;
	buf = fscrypt_secure_alloc(bufsize);
	md = EVP_MD_CTX_new();
	if (!buf || !md) {
		retval = FSCRYPT_ET_NO_MEMORY;
		goto out;
	}
	memset(key, 0, FSCRYPT_MAX_KEY_SIZE);
	memcpy(buf, salt, 16);
	memcpy(buf + E4CRYPT_SALT_MAX, pass, len);
	if (!EVP_Digest(buf, E4CRYPT_SALT_MAX + len, t, &n, EVP_sha512(),
			NULL)) {
		retval = FSCRYPT_ET_CRYPTO;
		goto out;
	}
	for (i = 0; ; i++) {
		for (j = 0; j < 64; j++)
			key[j] ^= t[j];
		if (i + 1 == E4CRYPT_ITERATIONS)
			break;
		if (!EVP_DigestInit_ex(md, EVP_sha512(), NULL) ||
		    !EVP_DigestUpdate(md, t, 64) ||
		    !EVP_DigestUpdate(md, pass, len) ||
		    !EVP_DigestFinal_ex(md, t, &n)) {
			retval = FSCRYPT_ET_CRYPTO;
			break;
		}
	}
out:
	fscrypt_wipe(t, sizeof(t));
	EVP_MD_CTX_free(md);
	fscrypt_secure_free(buf, bufsize);
	if (retval)
		fscrypt_wipe(key, FSCRYPT_MAX_KEY_SIZE);
	return retval;
}

/* SipHash-2-4 of le64(v): what the kernel's siphash_1u64() computes */
errcode_t fscrypt_siphash_u64(const uint8_t key[16], uint64_t v,
			      uint64_t *out)
{
	OSSL_PARAM params[2];
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx = NULL;
	uint8_t msg[8], res[8];
	unsigned int size = 8;
	size_t outl = 0;
	int ok;

	put_le64(msg, v);
	mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	if (mac)
		ctx = EVP_MAC_CTX_new(mac);
	params[0] = OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_SIZE, &size);
	params[1] = OSSL_PARAM_construct_end();
	ok = ctx && EVP_MAC_CTX_set_params(ctx, params) &&
	     EVP_MAC_init(ctx, key, 16, params) &&
	     EVP_MAC_update(ctx, msg, 8) &&
	     EVP_MAC_final(ctx, res, &outl, sizeof(res)) && outl == 8;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	if (!ok)
		return FSCRYPT_ET_CRYPTO;
	*out = get_le64(res);
	return 0;
}

void fscrypt_spec_string(const struct fscrypt_key_spec *spec, char *buf,
			 size_t size)
{
	size_t n = spec->version == 1 ? FSCRYPT_KEY_DESCRIPTOR_SIZE :
		   FSCRYPT_KEY_IDENTIFIER_SIZE;
	size_t i, off;

	off = snprintf(buf, size, "%s ", spec->version == 1 ?
		       "v1 descriptor" : "v2 identifier");
	for (i = 0; i < n && off + 3 <= size; i++, off += 2)
		snprintf(buf + off, size - off, "%02x", spec->id[i]);
}
