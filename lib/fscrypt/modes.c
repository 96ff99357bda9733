/*
 * modes.c --- the fscrypt encryption modes over their block ciphers
 *
 * AES-256-XTS and AES-128-CBC come from OpenSSL's EVP interface, which
 * uses AES-NI where there is one; AES-CTS uses OpenSSL's CBC-CTS in the
 * CS3 variant that the kernel's cts(cbc(aes)) implements.  SM4-XTS and
 * SM4-CTS are the same constructions written here over any block
 * cipher, and ESSIV wraps AES-128-CBC as the kernel's essiv template.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include "fscrypt_int.h"

#define BLK	16

/* --- block ciphers ----------------------------------------------------- */

static const EVP_CIPHER *aes_ecb(size_t key_len)
{
	switch (key_len) {
	case 16: return EVP_aes_128_ecb();
	case 24: return EVP_aes_192_ecb();
	case 32: return EVP_aes_256_ecb();
	}
	return NULL;
}

errcode_t fscrypt_bc_init(struct blkcipher *bc, int alg, const uint8_t *key,
			  size_t key_len)
{
	const EVP_CIPHER *c;

	memset(bc, 0, sizeof(*bc));
	bc->alg = alg;
	if (alg == FSCRYPT_BC_SM4) {
		if (key_len != 16)
			return FSCRYPT_ET_UNSUPPORTED;
		bc->rk = fscrypt_secure_alloc(SM4_RK_SIZE);
		if (!bc->rk)
			return FSCRYPT_ET_NO_MEMORY;
		fscrypt_sm4_expand_key(key, bc->rk);
		return 0;
	}
	c = aes_ecb(key_len);
	if (!c)
		return FSCRYPT_ET_UNSUPPORTED;
	bc->enc = EVP_CIPHER_CTX_new();
	bc->dec = EVP_CIPHER_CTX_new();
	if (!bc->enc || !bc->dec ||
	    !EVP_EncryptInit_ex(bc->enc, c, NULL, key, NULL) ||
	    !EVP_DecryptInit_ex(bc->dec, c, NULL, key, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(bc->enc, 0) ||
	    !EVP_CIPHER_CTX_set_padding(bc->dec, 0)) {
		fscrypt_bc_free(bc);
		return FSCRYPT_ET_CRYPTO;
	}
	return 0;
}

static errcode_t bc_crypt(struct blkcipher *bc, const uint8_t *in,
			  uint8_t *out, size_t nblocks, int enc)
{
	int outl;
	size_t i;

	if (bc->alg == FSCRYPT_BC_SM4) {
		for (i = 0; i < nblocks; i++)
			fscrypt_sm4_crypt_block(bc->rk, in + i * BLK,
						out + i * BLK, enc);
		return 0;
	}
	while (nblocks) {
		/* EVP counts in int */
		size_t n = nblocks > (1U << 20) ? (1U << 20) : nblocks;

		if (!EVP_CipherUpdate(enc ? bc->enc : bc->dec, out, &outl, in,
				      n * BLK) || (size_t) outl != n * BLK)
			return FSCRYPT_ET_CRYPTO;
		in += n * BLK;
		out += n * BLK;
		nblocks -= n;
	}
	return 0;
}

errcode_t fscrypt_bc_encrypt(struct blkcipher *bc, const uint8_t *in,
			     uint8_t *out, size_t nblocks)
{
	return bc_crypt(bc, in, out, nblocks, 1);
}

errcode_t fscrypt_bc_decrypt(struct blkcipher *bc, const uint8_t *in,
			     uint8_t *out, size_t nblocks)
{
	return bc_crypt(bc, in, out, nblocks, 0);
}

void fscrypt_bc_free(struct blkcipher *bc)
{
	EVP_CIPHER_CTX_free(bc->enc);
	EVP_CIPHER_CTX_free(bc->dec);
	fscrypt_secure_free(bc->rk, SM4_RK_SIZE);
	memset(bc, 0, sizeof(*bc));
}

/* --- XTS (IEEE 1619) over any block cipher ----------------------------- */

/* Multiply the tweak by x in GF(2^128), little-endian bit order */
static void gf128_mul_x_xts(uint8_t t[BLK])
{
	uint8_t carry = t[15] >> 7;
	int i;

	for (i = 15; i > 0; i--)
		t[i] = (t[i] << 1) | (t[i - 1] >> 7);
	t[0] = (t[0] << 1) ^ (carry ? 0x87 : 0);
}

/*
 * Whole blocks only: fscrypt data units are multiples of 16 bytes, so
 * ciphertext stealing never happens.
 */
static errcode_t xts_crypt(struct blkcipher *data, struct blkcipher *tweak,
			   const uint8_t iv[BLK], const uint8_t *in,
			   uint8_t *out, size_t len, int enc)
{
	uint8_t t[BLK], tw[64 * BLK];
	size_t i, n;
	errcode_t retval;

	if (len % BLK)
		return FSCRYPT_ET_BAD_LENGTH;
	retval = fscrypt_bc_encrypt(tweak, iv, t, 1);
	while (!retval && len) {
		n = len / BLK > 64 ? 64 : len / BLK;
		for (i = 0; i < n; i++) {
			memcpy(tw + i * BLK, t, BLK);
			gf128_mul_x_xts(t);
		}
		xor_bytes(out, in, tw, n * BLK);
		retval = enc ? fscrypt_bc_encrypt(data, out, out, n) :
			       fscrypt_bc_decrypt(data, out, out, n);
		xor_bytes(out, out, tw, n * BLK);
		in += n * BLK;
		out += n * BLK;
		len -= n * BLK;
	}
	fscrypt_wipe(t, sizeof(t));
	fscrypt_wipe(tw, sizeof(tw));
	return retval;
}

errcode_t fscrypt_xts_crypt(int alg, const uint8_t *key, size_t key_len,
			    const uint8_t iv[16], const uint8_t *in,
			    uint8_t *out, size_t len, int enc)
{
	struct blkcipher data, tweak;
	errcode_t retval;

	retval = fscrypt_bc_init(&data, alg, key, key_len / 2);
	if (retval)
		return retval;
	retval = fscrypt_bc_init(&tweak, alg, key + key_len / 2, key_len / 2);
	if (!retval)
		retval = xts_crypt(&data, &tweak, iv, in, out, len, enc);
	fscrypt_bc_free(&data);
	fscrypt_bc_free(&tweak);
	return retval;
}

/* --- CBC with ciphertext stealing, CS3, over any block cipher ---------- */

static errcode_t cbc_encrypt(struct blkcipher *bc, uint8_t chain[BLK],
			     const uint8_t *in, uint8_t *out, size_t nblocks)
{
	errcode_t retval;

	while (nblocks--) {
		xor_bytes(out, in, chain, BLK);
		retval = fscrypt_bc_encrypt(bc, out, out, 1);
		if (retval)
			return retval;
		memcpy(chain, out, BLK);
		in += BLK;
		out += BLK;
	}
	return 0;
}

static errcode_t cbc_decrypt(struct blkcipher *bc, uint8_t chain[BLK],
			     const uint8_t *in, uint8_t *out, size_t nblocks)
{
	uint8_t c[BLK];
	errcode_t retval;

	while (nblocks--) {
		memcpy(c, in, BLK);
		retval = fscrypt_bc_decrypt(bc, c, out, 1);
		if (retval)
			return retval;
		xor_bytes(out, out, chain, BLK);
		memcpy(chain, c, BLK);
		in += BLK;
		out += BLK;
	}
	return 0;
}

/*
 * CS3 (the Kerberos variant): CBC, then the last two blocks swapped and
 * the final one cut to length -- even when the length is a multiple of
 * the block size; a single block is plain CBC.
 */
static errcode_t cts_crypt(struct blkcipher *bc, const uint8_t iv[BLK],
			   const uint8_t *in, uint8_t *out, size_t len,
			   int enc)
{
	uint8_t chain[BLK], x[BLK], y[BLK];
	size_t nfull, d;
	errcode_t retval;

	if (len < BLK)
		return FSCRYPT_ET_BAD_LENGTH;
	memcpy(chain, iv, BLK);
	if (len == BLK)
		return enc ? cbc_encrypt(bc, chain, in, out, 1) :
			     cbc_decrypt(bc, chain, in, out, 1);
	/* blocks before the last two, and the length of the last one */
	d = len % BLK ? len % BLK : BLK;
	nfull = (len - d) / BLK - 1;
	if (enc) {
		retval = cbc_encrypt(bc, chain, in, out, nfull);
		if (!retval)
			retval = cbc_encrypt(bc, chain, in + nfull * BLK, x,
					     1);
		memset(y, 0, BLK);
		memcpy(y, in + (nfull + 1) * BLK, d);
		if (!retval)
			retval = cbc_encrypt(bc, chain, y, y, 1);
		memcpy(out + nfull * BLK, y, BLK);
		memcpy(out + (nfull + 1) * BLK, x, d);
	} else {
		retval = cbc_decrypt(bc, chain, in, out, nfull);
		/* chain is now C[n-2]; y = D(C[n-1]) = pad(P[n]) ^ X */
		if (!retval)
			retval = fscrypt_bc_decrypt(bc, in + nfull * BLK, y, 1);
		memcpy(x, in + (nfull + 1) * BLK, d);
		memcpy(x + d, y + d, BLK - d);
		xor_bytes(y, y, x, d);
		if (!retval)
			retval = fscrypt_bc_decrypt(bc, x, x, 1);
		xor_bytes(out + nfull * BLK, x, chain, BLK);
		memcpy(out + (nfull + 1) * BLK, y, d);
	}
	fscrypt_wipe(x, sizeof(x));
	fscrypt_wipe(y, sizeof(y));
	fscrypt_wipe(chain, sizeof(chain));
	return retval;
}

errcode_t fscrypt_cts_crypt(int alg, const uint8_t *key, size_t key_len,
			    const uint8_t iv[16], const uint8_t *in,
			    uint8_t *out, size_t len, int enc)
{
	struct blkcipher bc;
	errcode_t retval;

	retval = fscrypt_bc_init(&bc, alg, key, key_len);
	if (retval)
		return retval;
	retval = cts_crypt(&bc, iv, in, out, len, enc);
	fscrypt_bc_free(&bc);
	return retval;
}

/* OpenSSL's AES-CBC-CTS, told to use CS3 */
static errcode_t openssl_cts(EVP_CIPHER *c, const uint8_t *key,
			     const uint8_t iv[BLK], const uint8_t *in,
			     uint8_t *out, size_t len, int enc)
{
	OSSL_PARAM params[2];
	EVP_CIPHER_CTX *ctx;
	int outl = 0, ok;

	if (len < BLK)
		return FSCRYPT_ET_BAD_LENGTH;
	ctx = EVP_CIPHER_CTX_new();
	params[0] = OSSL_PARAM_construct_utf8_string(
			OSSL_CIPHER_PARAM_CTS_MODE, "CS3", 0);
	params[1] = OSSL_PARAM_construct_end();
	ok = ctx && EVP_CipherInit_ex2(ctx, c, key, iv, enc, params) &&
	     EVP_CipherUpdate(ctx, out, &outl, in, len) &&
	     (size_t) outl == len;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

/* --- ESSIV: IV' = AES-256(SHA-256(key), IV), then AES-128-CBC ---------- */

static errcode_t essiv_init(struct mode_key *mk, const uint8_t key[16])
{
	uint8_t salt[32];
	unsigned int n = 0;
	int ok;

	mk->essiv = EVP_CIPHER_CTX_new();
	ok = mk->essiv &&
	     EVP_Digest(key, 16, salt, &n, EVP_sha256(), NULL) &&
	     EVP_EncryptInit_ex(mk->essiv, EVP_aes_256_ecb(), NULL, salt,
				NULL) &&
	     EVP_CIPHER_CTX_set_padding(mk->essiv, 0);
	fscrypt_wipe(salt, sizeof(salt));
	return ok ? 0 : FSCRYPT_ET_CRYPTO;
}

errcode_t fscrypt_essiv_crypt(const uint8_t key[16], const uint8_t iv[16],
			      const uint8_t *in, uint8_t *out, size_t len,
			      int enc)
{
	struct mode_key mk;
	errcode_t retval;

	retval = fscrypt_mode_key_init(&mk, FSCRYPT_MODE_AES_128_CBC, key);
	if (!retval)
		retval = fscrypt_mode_key_crypt(&mk, iv, in, out, len, enc);
	fscrypt_mode_key_free(&mk);
	return retval;
}

/* --- a key of one fscrypt mode ------------------------------------------ */

errcode_t fscrypt_mode_key_init(struct mode_key *mk, int mode,
				const uint8_t *raw)
{
	errcode_t retval = 0;

	memset(mk, 0, sizeof(*mk));
	mk->mode = mode;
	switch (mode) {
	case FSCRYPT_MODE_AES_256_XTS:
		/* one context per direction, keyed once, re-IVed per unit */
		mk->evp = EVP_CIPHER_CTX_new();
		mk->evp_dec = EVP_CIPHER_CTX_new();
		if (!mk->evp || !mk->evp_dec ||
		    !EVP_EncryptInit_ex(mk->evp, EVP_aes_256_xts(), NULL, raw,
					NULL) ||
		    !EVP_DecryptInit_ex(mk->evp_dec, EVP_aes_256_xts(), NULL,
					raw, NULL))
			retval = FSCRYPT_ET_CRYPTO;
		break;
	case FSCRYPT_MODE_AES_128_CBC:
		mk->evp = EVP_CIPHER_CTX_new();
		mk->evp_dec = EVP_CIPHER_CTX_new();
		if (!mk->evp || !mk->evp_dec ||
		    !EVP_EncryptInit_ex(mk->evp, EVP_aes_128_cbc(), NULL, raw,
					NULL) ||
		    !EVP_DecryptInit_ex(mk->evp_dec, EVP_aes_128_cbc(), NULL,
					raw, NULL) ||
		    !EVP_CIPHER_CTX_set_padding(mk->evp, 0) ||
		    !EVP_CIPHER_CTX_set_padding(mk->evp_dec, 0))
			retval = FSCRYPT_ET_CRYPTO;
		if (!retval)
			retval = essiv_init(mk, raw);
		break;
	case FSCRYPT_MODE_AES_256_CTS:
	case FSCRYPT_MODE_AES_128_CTS:
		/* names are short: the key is kept and set per name */
		memcpy(mk->raw, raw,
		       mode == FSCRYPT_MODE_AES_256_CTS ? 32 : 16);
		mk->cts = EVP_CIPHER_fetch(NULL,
					   mode == FSCRYPT_MODE_AES_256_CTS ?
					   "AES-256-CBC-CTS" :
					   "AES-128-CBC-CTS", NULL);
		if (!mk->cts)
			retval = FSCRYPT_ET_CRYPTO;
		break;
	case FSCRYPT_MODE_SM4_XTS:
		retval = fscrypt_bc_init(&mk->bc, FSCRYPT_BC_SM4, raw, 16);
		if (!retval)
			retval = fscrypt_bc_init(&mk->bc2, FSCRYPT_BC_SM4,
						 raw + 16, 16);
		break;
	case FSCRYPT_MODE_SM4_CTS:
		retval = fscrypt_bc_init(&mk->bc, FSCRYPT_BC_SM4, raw, 16);
		break;
	case FSCRYPT_MODE_ADIANTUM:
		mk->adiantum = fscrypt_secure_alloc(sizeof(*mk->adiantum));
		retval = mk->adiantum ?
			 fscrypt_adiantum_setkey(mk->adiantum, raw) :
			 FSCRYPT_ET_NO_MEMORY;
		break;
	case FSCRYPT_MODE_AES_256_HCTR2:
		mk->hctr2 = fscrypt_secure_alloc(sizeof(*mk->hctr2));
		retval = mk->hctr2 ? fscrypt_hctr2_setkey(mk->hctr2, raw) :
			 FSCRYPT_ET_NO_MEMORY;
		break;
	default:
		retval = FSCRYPT_ET_UNSUPPORTED;
	}
	if (retval)
		fscrypt_mode_key_free(mk);
	return retval;
}

static EVP_CIPHER_CTX *evp_dup(EVP_CIPHER_CTX *src)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	if (c && !EVP_CIPHER_CTX_copy(c, src)) {
		EVP_CIPHER_CTX_free(c);
		c = NULL;
	}
	return c;
}

/*
 * A copy of @src with cipher contexts of its own, for another thread:
 * for AES-256-XTS, the contents mode of nearly every policy; other
 * modes are FSCRYPT_ET_UNSUPPORTED.
 */
errcode_t fscrypt_mode_key_dup(struct mode_key *dst, const struct mode_key *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->mode != FSCRYPT_MODE_AES_256_XTS)
		return FSCRYPT_ET_UNSUPPORTED;
	dst->mode = src->mode;
	dst->evp = evp_dup(src->evp);
	dst->evp_dec = evp_dup(src->evp_dec);
	if (!dst->evp || !dst->evp_dec) {
		fscrypt_mode_key_free(dst);
		return FSCRYPT_ET_CRYPTO;
	}
	return 0;
}

static errcode_t evp_unit(EVP_CIPHER_CTX *ctx, const uint8_t *iv,
			  const uint8_t *in, uint8_t *out, size_t len)
{
	int outl = 0;

	if (len > (1U << 30))
		return FSCRYPT_ET_BAD_LENGTH;
	if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1) ||
	    !EVP_CipherUpdate(ctx, out, &outl, in, len) ||
	    (size_t) outl != len)
		return FSCRYPT_ET_CRYPTO;
	return 0;
}

/* One data unit, or one name, with its IV */
errcode_t fscrypt_mode_key_crypt(struct mode_key *mk, const uint8_t *iv,
				 const uint8_t *in, uint8_t *out, size_t len,
				 int enc)
{
	uint8_t essiv[BLK];
	int outl = 0;
	errcode_t retval;

	switch (mk->mode) {
	case FSCRYPT_MODE_AES_256_XTS:
		if (len % BLK || !len)
			return FSCRYPT_ET_BAD_LENGTH;
		return evp_unit(enc ? mk->evp : mk->evp_dec, iv, in, out, len);
	case FSCRYPT_MODE_AES_128_CBC:
		if (len % BLK || !len)
			return FSCRYPT_ET_BAD_LENGTH;
		if (!EVP_EncryptUpdate(mk->essiv, essiv, &outl, iv, BLK) ||
		    outl != BLK)
			return FSCRYPT_ET_CRYPTO;
		retval = evp_unit(enc ? mk->evp : mk->evp_dec, essiv, in, out,
				  len);
		fscrypt_wipe(essiv, sizeof(essiv));
		return retval;
	case FSCRYPT_MODE_AES_256_CTS:
	case FSCRYPT_MODE_AES_128_CTS:
		return openssl_cts(mk->cts, mk->raw, iv, in, out, len, enc);
	case FSCRYPT_MODE_SM4_XTS:
		return xts_crypt(&mk->bc, &mk->bc2, iv, in, out, len, enc);
	case FSCRYPT_MODE_SM4_CTS:
		return cts_crypt(&mk->bc, iv, in, out, len, enc);
	case FSCRYPT_MODE_ADIANTUM:
		return fscrypt_adiantum_key_crypt(mk->adiantum, iv, in, out,
						  len, enc);
	case FSCRYPT_MODE_AES_256_HCTR2:
		return fscrypt_hctr2_key_crypt(mk->hctr2, iv, in, out, len,
					       enc);
	}
	return FSCRYPT_ET_UNSUPPORTED;
}

void fscrypt_mode_key_free(struct mode_key *mk)
{
	EVP_CIPHER_free(mk->cts);
	EVP_CIPHER_CTX_free(mk->evp);
	EVP_CIPHER_CTX_free(mk->evp_dec);
	EVP_CIPHER_CTX_free(mk->essiv);
	fscrypt_bc_free(&mk->bc);
	fscrypt_bc_free(&mk->bc2);
	if (mk->adiantum) {
		fscrypt_adiantum_free(mk->adiantum);
		fscrypt_secure_free(mk->adiantum, sizeof(*mk->adiantum));
	}
	if (mk->hctr2) {
		fscrypt_hctr2_free(mk->hctr2);
		fscrypt_secure_free(mk->hctr2, sizeof(*mk->hctr2));
	}
	fscrypt_wipe(mk, sizeof(*mk));
}
