/*
 * adiantum.c --- Adiantum: XChaCha12, NH, Poly1305 and AES-256
 *
 * OpenSSL has neither Adiantum nor the pieces it is built of in the form
 * it needs them (ChaCha with 12 rounds and a 64-bit nonce, Poly1305 as a
 * bare hash without the final addition, NH), so they are written here
 * from the Adiantum paper (Crowley and Biggers, ToSC 2018) and checked
 * against the kernel's test vectors (crypto/testmgr.h).
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <stdlib.h>
#include "fscrypt_int.h"

#define NH_KEY_WORDS	268	/* 1072 bytes */
#define NH_CHUNK	1024	/* message bytes per NH hash */
#define NH_UNIT		16

/* --- XChaCha12 ----------------------------------------------------------- */

static inline uint32_t rol32(uint32_t v, int n)
{
	return (v << n) | (v >> (32 - n));
}

#define QR(a, b, c, d)						\
	do {							\
		a += b; d = rol32(d ^ a, 16);			\
		c += d; b = rol32(b ^ c, 12);			\
		a += b; d = rol32(d ^ a, 8);			\
		c += d; b = rol32(b ^ c, 7);			\
	} while (0)

static void chacha_rounds(uint32_t x[16], int rounds)
{
	for (; rounds > 0; rounds -= 2) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
}

static void chacha_setup(uint32_t s[16], const uint8_t key[32],
			 const uint8_t in16[16])
{
	static const uint8_t sigma[16] = "expand 32-byte k";
	int i;

	for (i = 0; i < 4; i++)
		s[i] = get_le32(sigma + 4 * i);
	for (i = 0; i < 8; i++)
		s[4 + i] = get_le32(key + 4 * i);
	for (i = 0; i < 4; i++)
		s[12 + i] = get_le32(in16 + 4 * i);
}

/*
 * HChaCha12 of the first 16 nonce bytes gives the key for ChaCha12 with
 * a 64-bit block counter and the last 8 nonce bytes.
 */
void fscrypt_xchacha12(const uint8_t key[32], const uint8_t nonce[24],
		       const uint8_t *in, uint8_t *out, size_t len)
{
	uint32_t s[16], x[16];
	uint8_t subkey[32], iv[16], ks[64];
	uint64_t ctr = 0;
	size_t i, n;

	chacha_setup(s, key, nonce);
	chacha_rounds(s, 12);
	for (i = 0; i < 4; i++) {
		put_le32(subkey + 4 * i, s[i]);
		put_le32(subkey + 16 + 4 * i, s[12 + i]);
	}
	memset(iv, 0, 8);
	memcpy(iv + 8, nonce + 16, 8);
	chacha_setup(s, subkey, iv);
	while (len) {
		s[12] = ctr;
		s[13] = ctr >> 32;
		memcpy(x, s, sizeof(x));
		chacha_rounds(x, 12);
		for (i = 0; i < 16; i++)
			put_le32(ks + 4 * i, x[i] + s[i]);
		n = len < 64 ? len : 64;
		xor_bytes(out, in, ks, n);
		in += n;
		out += n;
		len -= n;
		ctr++;
	}
	fscrypt_wipe(s, sizeof(s));
	fscrypt_wipe(x, sizeof(x));
	fscrypt_wipe(subkey, sizeof(subkey));
	fscrypt_wipe(ks, sizeof(ks));
}

/* --- Poly1305 as an almost-delta-universal hash ------------------------ */

/* 130-bit numbers in five 26-bit limbs */
struct poly1305 {
	uint32_t r[5];
	uint32_t h[5];
};

static void poly1305_init(struct poly1305 *p, const uint8_t key[16])
{
	/* r clamped as the Poly1305 specification says */
	p->r[0] = get_le32(key + 0) & 0x3ffffff;
	p->r[1] = (get_le32(key + 3) >> 2) & 0x3ffff03;
	p->r[2] = (get_le32(key + 6) >> 4) & 0x3ffc0ff;
	p->r[3] = (get_le32(key + 9) >> 6) & 0x3f03fff;
	p->r[4] = (get_le32(key + 12) >> 8) & 0x00fffff;
	memset(p->h, 0, sizeof(p->h));
}

static void poly1305_blocks(struct poly1305 *p, const uint8_t *m,
			    size_t nblocks)
{
	const uint64_t r0 = p->r[0], r1 = p->r[1], r2 = p->r[2],
		       r3 = p->r[3], r4 = p->r[4];
	const uint64_t s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5;
	uint64_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2], h3 = p->h[3],
		 h4 = p->h[4];
	uint64_t d0, d1, d2, d3, d4;

	while (nblocks--) {
		/* h += m, with the 2^128 bit of a full block */
		h0 += get_le32(m + 0) & 0x3ffffff;
		h1 += (get_le32(m + 3) >> 2) & 0x3ffffff;
		h2 += (get_le32(m + 6) >> 4) & 0x3ffffff;
		h3 += (get_le32(m + 9) >> 6) & 0x3ffffff;
		h4 += (get_le32(m + 12) >> 8) | (1U << 24);

		/* h *= r mod 2^130 - 5: 2^130 wraps around as 5 */
		d0 = h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1;
		d1 = h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2;
		d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3;
		d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4;
		d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0;

		d1 += d0 >> 26;
		h0 = d0 & 0x3ffffff;
		d2 += d1 >> 26;
		h1 = d1 & 0x3ffffff;
		d3 += d2 >> 26;
		h2 = d2 & 0x3ffffff;
		d4 += d3 >> 26;
		h3 = d3 & 0x3ffffff;
		h0 += (d4 >> 26) * 5;
		h4 = d4 & 0x3ffffff;
		h1 += h0 >> 26;
		h0 &= 0x3ffffff;
		m += 16;
	}
	p->h[0] = h0;
	p->h[1] = h1;
	p->h[2] = h2;
	p->h[3] = h3;
	p->h[4] = h4;
}

/* h mod 2^130 - 5, then mod 2^128; no "+ s": Adiantum adds its own */
static void poly1305_final(struct poly1305 *p, uint8_t out[16])
{
	uint32_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2], h3 = p->h[3],
		 h4 = p->h[4];
	uint32_t g0, g1, g2, g3, g4, mask;

	h2 += h1 >> 26;
	h1 &= 0x3ffffff;
	h3 += h2 >> 26;
	h2 &= 0x3ffffff;
	h4 += h3 >> 26;
	h3 &= 0x3ffffff;
	h0 += (h4 >> 26) * 5;
	h4 &= 0x3ffffff;
	h1 += h0 >> 26;
	h0 &= 0x3ffffff;

	/* g = h + 5 - 2^130: use it if it does not go negative */
	g0 = h0 + 5;
	g1 = h1 + (g0 >> 26);
	g0 &= 0x3ffffff;
	g2 = h2 + (g1 >> 26);
	g1 &= 0x3ffffff;
	g3 = h3 + (g2 >> 26);
	g2 &= 0x3ffffff;
	g4 = h4 + (g3 >> 26) - (1U << 26);
	g3 &= 0x3ffffff;
	mask = (g4 >> 31) - 1;		/* all ones when h >= p */
	h0 = (h0 & ~mask) | (g0 & mask);
	h1 = (h1 & ~mask) | (g1 & mask);
	h2 = (h2 & ~mask) | (g2 & mask);
	h3 = (h3 & ~mask) | (g3 & mask);
	h4 = (h4 & ~mask) | (g4 & mask);

	put_le64(out, (uint64_t) h0 | ((uint64_t) h1 << 26) |
		 ((uint64_t) h2 << 52));
	put_le64(out + 8, (h2 >> 12) | ((uint64_t) h3 << 14) |
		 ((uint64_t) h4 << 40));
}

/* --- NH ------------------------------------------------------------------ */

/* NH of up to 1024 bytes (a multiple of 16): four 64-bit sums */
static void nh(const uint32_t *key, const uint8_t *m, size_t len,
	       uint8_t out[32])
{
	uint64_t sum[4] = { 0, 0, 0, 0 };
	uint32_t m0, m1, m2, m3;
	int i;

	for (; len; len -= NH_UNIT, m += NH_UNIT, key += 4) {
		m0 = get_le32(m);
		m1 = get_le32(m + 4);
		m2 = get_le32(m + 8);
		m3 = get_le32(m + 12);
		for (i = 0; i < 4; i++)
			sum[i] += (uint64_t) (uint32_t) (m0 + key[4 * i]) *
				  (uint32_t) (m2 + key[4 * i + 2]) +
				  (uint64_t) (uint32_t) (m1 + key[4 * i + 1]) *
				  (uint32_t) (m3 + key[4 * i + 3]);
	}
	for (i = 0; i < 4; i++)
		put_le64(out + 8 * i, sum[i]);
}

/*
 * NHPoly1305: NH of each 1024-byte chunk of the message (zero-padded to
 * 16 bytes), the 32-byte results hashed with Poly1305.
 */
static void nhpoly1305(const uint8_t poly_key[16], const uint32_t *nh_key,
		       const uint8_t *m, size_t len, uint8_t out[16])
{
	struct poly1305 p;
	uint8_t pad[NH_CHUNK], hash[32];
	size_t n, full;

	poly1305_init(&p, poly_key);
	while (len) {
		n = len < NH_CHUNK ? len : NH_CHUNK;
		full = n & ~(size_t) (NH_UNIT - 1);
		if (full == n) {
			nh(nh_key, m, n, hash);
		} else {
			memcpy(pad, m, n);
			memset(pad + n, 0, NH_UNIT - (n - full));
			nh(nh_key, pad, full + NH_UNIT, hash);
		}
		poly1305_blocks(&p, hash, 2);
		m += n;
		len -= n;
	}
	poly1305_final(&p, out);
	fscrypt_wipe(&p, sizeof(p));
	fscrypt_wipe(pad, sizeof(pad));
}

void fscrypt_nhpoly1305(const uint8_t key[1088], const uint8_t *msg,
			size_t len, uint8_t out[16])
{
	uint32_t w[NH_KEY_WORDS];
	int i;

	for (i = 0; i < NH_KEY_WORDS; i++)
		w[i] = get_le32(key + 16 + 4 * i);
	nhpoly1305(key, w, msg, len, out);
	fscrypt_wipe(w, sizeof(w));
}

/* --- Adiantum ------------------------------------------------------------ */

static void le128_add(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
	uint64_t lo = get_le64(a) + get_le64(b);
	uint64_t hi = get_le64(a + 8) + get_le64(b + 8) +
		      (lo < get_le64(a));

	put_le64(r, lo);
	put_le64(r + 8, hi);
}

static void le128_sub(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
	uint64_t lo = get_le64(a) - get_le64(b);
	uint64_t hi = get_le64(a + 8) - get_le64(b + 8) -
		      (get_le64(a) < get_le64(b));

	put_le64(r, lo);
	put_le64(r + 8, hi);
}

/*
 * H(T, M) = Poly1305_KT(le128(8 * |M|) || T)
 *         + NHPoly1305_KM(M)  (mod 2^128)
 */
static void adiantum_hash(const struct adiantum_key *ak,
			  const uint8_t iv[32], const uint8_t *m, size_t len,
			  uint8_t out[16])
{
	uint32_t w[NH_KEY_WORDS];
	uint8_t header[48], h1[16], h2[16];
	struct poly1305 p;
	int i;

	put_le64(header, (uint64_t) len * 8);
	memset(header + 8, 0, 8);
	memcpy(header + 16, iv, 32);
	poly1305_init(&p, ak->hash_key);
	poly1305_blocks(&p, header, 3);
	poly1305_final(&p, h1);
	for (i = 0; i < NH_KEY_WORDS; i++)
		w[i] = get_le32(ak->hash_key + 32 + 4 * i);
	nhpoly1305(ak->hash_key + 16, w, m, len, h2);
	le128_add(out, h1, h2);
	fscrypt_wipe(w, sizeof(w));
	fscrypt_wipe(&p, sizeof(p));
}

errcode_t fscrypt_adiantum_setkey(struct adiantum_key *ak,
				  const uint8_t key[32])
{
	static const uint8_t nonce[24] = { 1 };
	uint8_t *stream;
	size_t len = 32 + ADIANTUM_HASH_KEY_SIZE;
	errcode_t retval;

	stream = fscrypt_secure_alloc(len);
	if (!stream)
		return FSCRYPT_ET_NO_MEMORY;
	memcpy(ak->stream_key, key, 32);
	/* the subkeys are the keystream for the nonce 1 */
	fscrypt_xchacha12(key, nonce, stream, stream, len);
	retval = fscrypt_bc_init(&ak->aes, FSCRYPT_BC_AES, stream, 32);
	memcpy(ak->hash_key, stream + 32, ADIANTUM_HASH_KEY_SIZE);
	fscrypt_secure_free(stream, len);
	return retval;
}

void fscrypt_adiantum_free(struct adiantum_key *ak)
{
	fscrypt_bc_free(&ak->aes);
	fscrypt_wipe(ak, sizeof(*ak));
}

errcode_t fscrypt_adiantum_key_crypt(struct adiantum_key *ak,
				     const uint8_t iv[32], const uint8_t *in,
				     uint8_t *out, size_t len, int enc)
{
	uint8_t nonce[24], h[16], rblk[16];
	size_t bulk;
	errcode_t retval;

	if (len < 16)
		return FSCRYPT_ET_BAD_LENGTH;
	bulk = len - 16;
	/* the right-hand block is whitened by the hash of the left part */
	adiantum_hash(ak, iv, in, bulk, h);
	le128_add(rblk, in + bulk, h);
	memset(nonce, 0, sizeof(nonce));
	memcpy(nonce, rblk, 16);
	if (enc) {
		retval = fscrypt_bc_encrypt(&ak->aes, rblk, nonce, 1);
		if (retval)
			return retval;
	}
	/* the left part goes through XChaCha12 under that block */
	nonce[16] = 1;
	fscrypt_xchacha12(ak->stream_key, nonce, in, out, bulk);
	if (!enc) {
		retval = fscrypt_bc_decrypt(&ak->aes, nonce, nonce, 1);
		if (retval)
			return retval;
	}
	adiantum_hash(ak, iv, out, bulk, h);
	le128_sub(out + bulk, nonce, h);
	fscrypt_wipe(nonce, sizeof(nonce));
	fscrypt_wipe(rblk, sizeof(rblk));
	return 0;
}

errcode_t fscrypt_adiantum_crypt(const uint8_t key[32], const uint8_t iv[32],
				 const uint8_t *in, uint8_t *out, size_t len,
				 int enc)
{
	struct adiantum_key *ak;
	errcode_t retval;

	ak = fscrypt_secure_alloc(sizeof(*ak));
	if (!ak)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_adiantum_setkey(ak, key);
	if (!retval)
		retval = fscrypt_adiantum_key_crypt(ak, iv, in, out, len, enc);
	fscrypt_adiantum_free(ak);
	fscrypt_secure_free(ak, sizeof(*ak));
	return retval;
}
