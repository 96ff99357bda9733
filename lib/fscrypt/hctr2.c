/*
 * hctr2.c --- HCTR2 (AES-256, XCTR, POLYVAL) for filenames
 *
 * HCTR2 (Crowley, Huckleberry and Biggers, ToSC 2021) is not in OpenSSL,
 * nor are its XCTR mode and its POLYVAL hash (RFC 8452), so they are
 * here; AES itself comes from OpenSSL.  fscrypt uses HCTR2 for names
 * only, which are at most 255 bytes: the plain bit-serial field
 * multiplication is fast enough.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "fscrypt_int.h"

#define BLK	16

/* --- POLYVAL ------------------------------------------------------------- */

/*
 * GF(2^128) modulo x^128 + x^127 + x^126 + x^121 + 1, elements as two
 * little-endian 64-bit halves (bit i is the coefficient of x^i).
 */
struct gf128 {
	uint64_t lo, hi;
};

static void gf_load(struct gf128 *a, const uint8_t b[BLK])
{
	a->lo = get_le64(b);
	a->hi = get_le64(b + 8);
}

static void gf_store(uint8_t b[BLK], const struct gf128 *a)
{
	put_le64(b, a->lo);
	put_le64(b + 8, a->hi);
}

static void gf_mul_x(struct gf128 *a)
{
	uint64_t carry = a->hi >> 63;

	a->hi = (a->hi << 1) | (a->lo >> 63);
	a->lo <<= 1;
	if (carry) {
		a->hi ^= 0xc200000000000000ULL;	/* x^127 + x^126 + x^121 */
		a->lo ^= 1;
	}
}

/* r = a * b */
static void gf_mul(struct gf128 *r, const struct gf128 *a,
		   const struct gf128 *b)
{
	struct gf128 x = *a, p = { 0, 0 };
	int i;

	for (i = 0; i < 128; i++) {
		if ((i < 64 ? b->lo >> i : b->hi >> (i - 64)) & 1) {
			p.lo ^= x.lo;
			p.hi ^= x.hi;
		}
		gf_mul_x(&x);
	}
	*r = p;
}

/*
 * POLYVAL's product is a * b * x^-128; x^-128 is x^127 + x^124 + x^121 +
 * x^114 + 1, so multiplying the key by it once turns POLYVAL into plain
 * Horner evaluation.
 */
struct polyval {
	struct gf128 h, acc;
};

static void polyval_init(struct polyval *pv, const uint8_t key[BLK])
{
	static const struct gf128 x_inv128 = { 1, 0x9204000000000000ULL };
	struct gf128 k;

	gf_load(&k, key);
	gf_mul(&pv->h, &k, &x_inv128);
	pv->acc.lo = pv->acc.hi = 0;
}

static void polyval_blocks(struct polyval *pv, const uint8_t *m,
			   size_t nblocks)
{
	struct gf128 x;

	for (; nblocks; nblocks--, m += BLK) {
		gf_load(&x, m);
		pv->acc.lo ^= x.lo;
		pv->acc.hi ^= x.hi;
		gf_mul(&pv->acc, &pv->acc, &pv->h);
	}
}

void fscrypt_polyval(const uint8_t key[16], const uint8_t *msg, size_t len,
		     uint8_t out[16])
{
	struct polyval pv;

	polyval_init(&pv, key);
	polyval_blocks(&pv, msg, len / BLK);
	gf_store(out, &pv.acc);
	fscrypt_wipe(&pv, sizeof(pv));
}

/* --- XCTR: CTR with the block index XORed into the IV ------------------- */

static errcode_t xctr(struct blkcipher *aes, const uint8_t iv[BLK],
		      const uint8_t *in, uint8_t *out, size_t len)
{
	uint8_t ks[BLK];
	uint64_t i;
	size_t n;
	errcode_t retval;

	for (i = 1; len; i++) {
		memcpy(ks, iv, BLK);
		put_le64(ks, get_le64(iv) ^ i);
		retval = fscrypt_bc_encrypt(aes, ks, ks, 1);
		if (retval)
			return retval;
		n = len < BLK ? len : BLK;
		xor_bytes(out, in, ks, n);
		in += n;
		out += n;
		len -= n;
	}
	fscrypt_wipe(ks, sizeof(ks));
	return 0;
}

errcode_t fscrypt_xctr_crypt(const uint8_t key[32], const uint8_t iv[16],
			     const uint8_t *in, uint8_t *out, size_t len)
{
	struct blkcipher aes;
	errcode_t retval;

	retval = fscrypt_bc_init(&aes, FSCRYPT_BC_AES, key, 32);
	if (!retval)
		retval = xctr(&aes, iv, in, out, len);
	fscrypt_bc_free(&aes);
	return retval;
}

/* --- HCTR2 --------------------------------------------------------------- */

errcode_t fscrypt_hctr2_setkey(struct hctr2_key *hk, const uint8_t key[32])
{
	errcode_t retval;

	retval = fscrypt_bc_init(&hk->aes, FSCRYPT_BC_AES, key, 32);
	if (retval)
		return retval;
	/* hbar = E(0), L = E(1) */
	memset(hk->hbar, 0, BLK);
	memset(hk->l, 0, BLK);
	hk->l[0] = 1;
	retval = fscrypt_bc_encrypt(&hk->aes, hk->hbar, hk->hbar, 1);
	if (!retval)
		retval = fscrypt_bc_encrypt(&hk->aes, hk->l, hk->l, 1);
	return retval;
}

void fscrypt_hctr2_free(struct hctr2_key *hk)
{
	fscrypt_bc_free(&hk->aes);
	fscrypt_wipe(hk, sizeof(*hk));
}

/*
 * H(T, M) = POLYVAL(hbar, le128(2 * 8 * |T| + 2 + [|M| % 16 != 0]) || T ||
 *                          M padded with 1 then zeros when partial)
 */
static void hctr2_hash(const struct hctr2_key *hk, const uint8_t iv[32],
		       const uint8_t *m, size_t len, uint8_t out[BLK])
{
	struct polyval pv;
	uint8_t blk[BLK];
	size_t rem = len % BLK;

	polyval_init(&pv, hk->hbar);
	memset(blk, 0, BLK);
	put_le64(blk, 32 * 8 * 2 + 2 + (rem != 0));
	polyval_blocks(&pv, blk, 1);
	polyval_blocks(&pv, iv, 2);
	polyval_blocks(&pv, m, len / BLK);
	if (rem) {
		memset(blk, 0, BLK);
		memcpy(blk, m + len - rem, rem);
		blk[rem] = 1;
		polyval_blocks(&pv, blk, 1);
	}
	gf_store(out, &pv.acc);
	fscrypt_wipe(&pv, sizeof(pv));
	fscrypt_wipe(blk, sizeof(blk));
}

/*
 * The same steps both ways: the first block goes through AES (forward or
 * backward) between two hashes, the rest through XCTR.
 */
errcode_t fscrypt_hctr2_key_crypt(struct hctr2_key *hk, const uint8_t iv[32],
				  const uint8_t *in, uint8_t *out, size_t len,
				  int enc)
{
	uint8_t h[BLK], mm[BLK], uu[BLK], s[BLK];
	size_t bulk;
	errcode_t retval;

	if (len < BLK)
		return FSCRYPT_ET_BAD_LENGTH;
	bulk = len - BLK;
	hctr2_hash(hk, iv, in + BLK, bulk, h);
	xor_bytes(mm, in, h, BLK);
	retval = enc ? fscrypt_bc_encrypt(&hk->aes, mm, uu, 1) :
		       fscrypt_bc_decrypt(&hk->aes, mm, uu, 1);
	if (retval)
		return retval;
	xor_bytes(s, mm, uu, BLK);
	xor_bytes(s, s, hk->l, BLK);
	retval = xctr(&hk->aes, s, in + BLK, out + BLK, bulk);
	if (retval)
		return retval;
	hctr2_hash(hk, iv, out + BLK, bulk, h);
	xor_bytes(out, uu, h, BLK);
	fscrypt_wipe(mm, sizeof(mm));
	fscrypt_wipe(uu, sizeof(uu));
	fscrypt_wipe(s, sizeof(s));
	return 0;
}

errcode_t fscrypt_hctr2_crypt(const uint8_t key[32], const uint8_t iv[32],
			      const uint8_t *in, uint8_t *out, size_t len,
			      int enc)
{
	struct hctr2_key *hk;
	errcode_t retval;

	hk = fscrypt_secure_alloc(sizeof(*hk));
	if (!hk)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_hctr2_setkey(hk, key);
	if (!retval)
		retval = fscrypt_hctr2_key_crypt(hk, iv, in, out, len, enc);
	fscrypt_hctr2_free(hk);
	fscrypt_secure_free(hk, sizeof(*hk));
	return retval;
}
