/*
 * fscrypt_int.h --- what the parts of libfscrypt share among themselves
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#ifndef FSCRYPT_INT_H
#define FSCRYPT_INT_H

#include <openssl/evp.h>
#include "fscrypt.h"

/* HKDF contexts (fs/crypto/fscrypt_private.h) */
#define HKDF_CONTEXT_KEY_IDENTIFIER	1
#define HKDF_CONTEXT_PER_FILE_ENC_KEY	2
#define HKDF_CONTEXT_DIRECT_KEY		3
#define HKDF_CONTEXT_IV_INO_LBLK_64_KEY	4
#define HKDF_CONTEXT_DIRHASH_KEY	5
#define HKDF_CONTEXT_IV_INO_LBLK_32_KEY	6
#define HKDF_CONTEXT_INODE_HASH_KEY	7

/* the highest mode number; the modes are in ext2fs/ext4_crypt.h */
#define FSCRYPT_MODE_MAX		FSCRYPT_MODE_AES_256_HCTR2

#define ADIANTUM_HASH_KEY_SIZE	(16 + 16 + 1072)

/* One block cipher key, both directions: AES through OpenSSL, or SM4 */
struct blkcipher {
	int alg;
	EVP_CIPHER_CTX *enc, *dec;
	uint32_t *rk;			/* SM4 round keys, in locked memory */
};

extern errcode_t fscrypt_bc_init(struct blkcipher *bc, int alg,
				 const uint8_t *key, size_t key_len);
extern errcode_t fscrypt_bc_encrypt(struct blkcipher *bc, const uint8_t *in,
				    uint8_t *out, size_t nblocks);
extern errcode_t fscrypt_bc_decrypt(struct blkcipher *bc, const uint8_t *in,
				    uint8_t *out, size_t nblocks);
extern void fscrypt_bc_free(struct blkcipher *bc);

/* sm4.c */
#define SM4_RK_SIZE	(32 * sizeof(uint32_t))
extern void fscrypt_sm4_expand_key(const uint8_t key[16], uint32_t rk[32]);
extern void fscrypt_sm4_crypt_block(const uint32_t rk[32],
				    const uint8_t in[16], uint8_t out[16],
				    int enc);

/* adiantum.c: subkeys derived once per key, kept in locked memory */
struct adiantum_key {
	struct blkcipher aes;
	uint8_t stream_key[32];
	uint8_t hash_key[ADIANTUM_HASH_KEY_SIZE];
};
extern errcode_t fscrypt_adiantum_setkey(struct adiantum_key *ak,
					 const uint8_t key[32]);
extern errcode_t fscrypt_adiantum_key_crypt(struct adiantum_key *ak,
					    const uint8_t iv[32],
					    const uint8_t *in, uint8_t *out,
					    size_t len, int enc);
extern void fscrypt_adiantum_free(struct adiantum_key *ak);

/* hctr2.c */
struct hctr2_key {
	struct blkcipher aes;
	uint8_t hbar[16];
	uint8_t l[16];
};
extern errcode_t fscrypt_hctr2_setkey(struct hctr2_key *hk,
				      const uint8_t key[32]);
extern errcode_t fscrypt_hctr2_key_crypt(struct hctr2_key *hk,
					 const uint8_t iv[32],
					 const uint8_t *in, uint8_t *out,
					 size_t len, int enc);
extern void fscrypt_hctr2_free(struct hctr2_key *hk);

/* modes.c: a prepared key of one fscrypt mode */
struct mode_key {
	int mode;
	uint8_t raw[32];		/* AES-CTS: set per name */
	EVP_CIPHER *cts;		/* AES-CTS, fetched once */
	EVP_CIPHER_CTX *evp, *evp_dec;	/* AES-256-XTS, AES-128-CBC */
	EVP_CIPHER_CTX *essiv;		/* ESSIV: AES-256 of the IV */
	struct blkcipher bc, bc2;	/* SM4-XTS: data, tweak; CTS */
	struct adiantum_key *adiantum;
	struct hctr2_key *hctr2;
};
extern errcode_t fscrypt_mode_key_init(struct mode_key *mk, int mode,
				       const uint8_t *raw);
extern errcode_t fscrypt_mode_key_crypt(struct mode_key *mk,
					const uint8_t *iv, const uint8_t *in,
					uint8_t *out, size_t len, int enc);
extern errcode_t fscrypt_mode_key_dup(struct mode_key *dst,
				      const struct mode_key *src);
extern void fscrypt_mode_key_free(struct mode_key *mk);

/* kdf.c */
extern errcode_t fscrypt_hkdf_extract(const uint8_t *ikm, size_t ikm_len,
				      uint8_t prk[64]);
extern errcode_t fscrypt_hkdf_expand(const uint8_t prk[64], uint8_t context,
				     const uint8_t *info, size_t info_len,
				     uint8_t *out, size_t out_len);
extern errcode_t fscrypt_v1_derive_key(const uint8_t *master,
				       const uint8_t nonce[16],
				       uint8_t *out, size_t len);

/* keyring.c: one master key and what is derived from it once */
struct master_key {
	uint8_t raw[FSCRYPT_MAX_KEY_SIZE];
	size_t size;
	uint8_t prk[64];			/* HKDF-Extract(raw) */
	uint8_t identifier[FSCRYPT_KEY_IDENTIFIER_SIZE];
	uint8_t descriptor[FSCRYPT_KEY_DESCRIPTOR_SIZE];
	uint8_t ino_hash_key[16];
	int have_ino_hash_key;
	int used_v1, used_v2;
};
extern struct master_key *fscrypt_keyring_find(struct fscrypt_keyring *kr,
				       const struct fscrypt_key_spec *spec);
extern struct mode_key *fscrypt_keyring_mode_key(struct fscrypt_keyring *kr,
					 struct master_key *mk, int kind,
					 int mode, const uint8_t *uuid,
					 errcode_t *err);

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t) p[3] << 24);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | ((uint64_t) get_le32(p + 4) << 32);
}

static inline void xor_bytes(uint8_t *dst, const uint8_t *a,
			     const uint8_t *b, size_t n)
{
	while (n--)
		*dst++ = *a++ ^ *b++;
}

#endif /* FSCRYPT_INT_H */
