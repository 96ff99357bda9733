/*
 * fscrypt.h --- userspace fscrypt: keys, key derivation and the ciphers
 *
 * Everything the kernel's fs/crypto does to turn a master key and an
 * inode's encryption context into plaintext, done in userspace: v1 and
 * v2 key derivation, every IV variant and data unit size, and all the
 * contents and filenames modes.  OpenSSL's libcrypto provides AES, SHA-2,
 * HMAC and SipHash; what it lacks (SM4-XTS and -CTS, Adiantum with
 * XChaCha12, NH and Poly1305, HCTR2 with XCTR and POLYVAL) is here.
 *
 * Key material lives in locked, non-dumpable memory and is wiped when
 * freed; no function here prints or returns a key in an error.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#ifndef FSCRYPT_H
#define FSCRYPT_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>
#include "fscrypt_err.h"
/* the on-disk context: its sizes, modes and flags */
#include "ext2fs/ext4_crypt.h"

#define FSCRYPT_MIN_KEY_SIZE		16
#define FSCRYPT_MAX_KEY_SIZE		64
#define FSCRYPT_UUID_SIZE		16
#define FSCRYPT_MAX_IV_SIZE		32
#define FSCRYPT_NAME_MAX		255
#define FSCRYPT_MIN_NAME_CT		16	/* shortest ciphertext name */

/* what a master key is known by: a v1 descriptor or a v2 identifier */
struct fscrypt_key_spec {
	int version;			/* 1 or 2 */
	uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE];	/* v1: first 8 bytes */
};

/* a parsed encryption context */
struct fscrypt_policy {
	int version;			/* 1 or 2 */
	uint8_t contents_mode;
	uint8_t filenames_mode;
	uint8_t flags;
	uint8_t log2_data_unit_size;	/* v2; 0: the block size */
	struct fscrypt_key_spec key;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE];
};

/* what fscrypt_inode_open() needs to know of the inode besides its context */
struct fscrypt_inode_params {
	uint64_t ino;
	unsigned int block_size;	/* of the filesystem */
	uint8_t uuid[FSCRYPT_UUID_SIZE];	/* s_uuid, for IV_INO_LBLK_* */
	int names;	/* directory or symlink: use the filenames mode */
};

struct fscrypt_keyring;
struct fscrypt_inode;

/* keyring.c */
extern errcode_t fscrypt_keyring_new(struct fscrypt_keyring **ret);
extern void fscrypt_keyring_free(struct fscrypt_keyring *kr);
extern errcode_t fscrypt_keyring_add_raw(struct fscrypt_keyring *kr,
					 const uint8_t *raw, size_t len);
extern errcode_t fscrypt_keyring_add_file(struct fscrypt_keyring *kr,
					  const char *path);
extern errcode_t fscrypt_keyring_add_hex(struct fscrypt_keyring *kr,
					 const char *hex);
extern errcode_t fscrypt_keyring_add_passphrase(struct fscrypt_keyring *kr,
					const uint8_t *pass, size_t len,
					const uint8_t salt[16]);
extern errcode_t fscrypt_keyring_add_passphrase_file(
					struct fscrypt_keyring *kr,
					const char *path,
					const uint8_t salt[16]);
extern size_t fscrypt_keyring_count(const struct fscrypt_keyring *kr);
extern int fscrypt_keyring_has(const struct fscrypt_keyring *kr,
			       const struct fscrypt_key_spec *spec);
extern int fscrypt_keyring_used(const struct fscrypt_keyring *kr,
				size_t i, struct fscrypt_key_spec *v1,
				struct fscrypt_key_spec *v2);

/* kdf.c */
extern errcode_t fscrypt_key_identifier(const uint8_t *raw, size_t len,
				uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE]);
extern errcode_t fscrypt_key_descriptor(const uint8_t *raw, size_t len,
				uint8_t desc[FSCRYPT_KEY_DESCRIPTOR_SIZE]);
extern errcode_t fscrypt_e4crypt_passphrase_key(const uint8_t *pass,
				size_t len, const uint8_t salt[16],
				uint8_t key[FSCRYPT_MAX_KEY_SIZE]);
extern errcode_t fscrypt_hkdf_sha512(const uint8_t *ikm, size_t ikm_len,
				     uint8_t context, const uint8_t *info,
				     size_t info_len, uint8_t *out,
				     size_t out_len);
extern errcode_t fscrypt_siphash_u64(const uint8_t key[16], uint64_t v,
				     uint64_t *out);
extern void fscrypt_spec_string(const struct fscrypt_key_spec *spec,
				char *buf, size_t size);

/* policy.c */
extern errcode_t fscrypt_parse_context(const void *ctx, size_t len,
				       struct fscrypt_policy *pol);
extern const char *fscrypt_mode_name(int mode);
extern int fscrypt_mode_key_size(int mode);
extern int fscrypt_mode_iv_size(int mode);
extern size_t fscrypt_encrypted_name_len(const struct fscrypt_policy *pol,
					 size_t len);

/* inode.c: an inode's key, ready to use */
extern errcode_t fscrypt_inode_open(struct fscrypt_keyring *kr,
				    const void *ctx, size_t ctx_len,
				    const struct fscrypt_inode_params *p,
				    struct fscrypt_inode **ret);
extern errcode_t fscrypt_inode_dup(const struct fscrypt_inode *fi,
				   struct fscrypt_inode **ret);
extern void fscrypt_inode_close(struct fscrypt_inode *fi);
extern const struct fscrypt_policy *
fscrypt_inode_policy(const struct fscrypt_inode *fi);
extern unsigned int fscrypt_inode_data_unit(const struct fscrypt_inode *fi);
extern errcode_t fscrypt_inode_dirhash_key(const struct fscrypt_inode *fi,
					   uint8_t key[16]);

/*
 * Contents: @len bytes at byte offset @pos of the file, both multiples of
 * the data unit size, in place.
 */
extern errcode_t fscrypt_decrypt_data(struct fscrypt_inode *fi, uint64_t pos,
				      uint8_t *buf, size_t len);
extern errcode_t fscrypt_encrypt_data(struct fscrypt_inode *fi, uint64_t pos,
				      uint8_t *buf, size_t len);

/*
 * Names, with the directory's key.  Decryption gives the padded
 * plaintext (@out must hold 255 bytes); fscrypt_check_name() then finds
 * the name in it, or says why it is not one.
 */
extern errcode_t fscrypt_decrypt_name(struct fscrypt_inode *dir,
				      const uint8_t *ct, size_t ct_len,
				      uint8_t *out, size_t *out_len);
extern errcode_t fscrypt_encrypt_name(struct fscrypt_inode *dir,
				      const uint8_t *name, size_t len,
				      uint8_t *out, size_t *out_len);
extern errcode_t fscrypt_check_name(const uint8_t *buf, size_t len,
				    size_t *name_len);

/* Symlink targets as stored (le16 length || ciphertext), own key */
extern errcode_t fscrypt_decrypt_symlink(struct fscrypt_inode *lnk,
					 const uint8_t *disk, size_t disk_len,
					 uint8_t *out, size_t out_size,
					 size_t *out_len);
extern errcode_t fscrypt_encrypt_symlink(struct fscrypt_inode *lnk,
					 const uint8_t *target, size_t len,
					 uint8_t *out, size_t out_size,
					 size_t *out_len);

/*
 * protector.c: google/fscrypt's protector and policy records
 * (metadata/metadata.proto), and the unwrapping of their keys.  The
 * byte fields point into the record passed to the parser.
 */
#define FSCRYPT_SOURCE_PAM_PASSPHRASE		1
#define FSCRYPT_SOURCE_CUSTOM_PASSPHRASE	2
#define FSCRYPT_SOURCE_RAW_KEY			3
#define FSCRYPT_PROTECTOR_KEY_SIZE	32
#define FSCRYPT_WRAP_IV_SIZE		16
#define FSCRYPT_WRAP_HMAC_SIZE		32
#define FSCRYPT_MAX_POLICY_PROTECTORS	64

struct fscrypt_wrapped_key {
	const uint8_t *iv, *key, *hmac;
	size_t iv_len, key_len, hmac_len;
};

struct fscrypt_protector {
	char descriptor[2 * FSCRYPT_KEY_DESCRIPTOR_SIZE + 1];
	int source;			/* FSCRYPT_SOURCE_* */
	char name[256];
	int64_t time, memory, parallelism;	/* Argon2id; memory in KiB */
	int truncation_fixed;
	const uint8_t *salt;
	size_t salt_len;
	int64_t uid;			/* pam_passphrase: whose login */
	struct fscrypt_wrapped_key wrapped;
};

struct fscrypt_policy_key {
	char protector[2 * FSCRYPT_KEY_DESCRIPTOR_SIZE + 1];
	struct fscrypt_wrapped_key wrapped;
};

struct fscrypt_policy_data {
	char descriptor[2 * FSCRYPT_KEY_IDENTIFIER_SIZE + 1];
	int64_t policy_version;
	int contents_mode, filenames_mode;
	size_t nkeys;
	struct fscrypt_policy_key keys[FSCRYPT_MAX_POLICY_PROTECTORS];
};

extern errcode_t fscrypt_parse_protector(const void *buf, size_t len,
					 struct fscrypt_protector *pr);
extern errcode_t fscrypt_parse_policy_data(const void *buf, size_t len,
					   struct fscrypt_policy_data *pd);
extern errcode_t fscrypt_protector_unlock(const struct fscrypt_protector *pr,
				const uint8_t *secret, size_t len,
				uint8_t key[FSCRYPT_PROTECTOR_KEY_SIZE]);
extern errcode_t fscrypt_policy_unlock(const struct fscrypt_policy_data *pd,
				const char *protector,
				const uint8_t pkey[FSCRYPT_PROTECTOR_KEY_SIZE],
				uint8_t key[FSCRYPT_MAX_KEY_SIZE], int *found);
extern const char *fscrypt_source_name(int source);

/* secmem.c: locked, non-dumpable memory for key material */
extern void *fscrypt_secure_alloc(size_t size);
extern void fscrypt_secure_free(void *p, size_t size);
extern int fscrypt_secure_unlocked(void);
extern void fscrypt_wipe(void *p, size_t size);

/*
 * The primitives, exposed for the test vectors.  Lengths are in bytes;
 * all work in place when @in == @out.
 */
enum fscrypt_bc_alg { FSCRYPT_BC_AES, FSCRYPT_BC_SM4 };
extern errcode_t fscrypt_xts_crypt(int alg, const uint8_t *key,
				   size_t key_len, const uint8_t iv[16],
				   const uint8_t *in, uint8_t *out,
				   size_t len, int enc);
extern errcode_t fscrypt_cts_crypt(int alg, const uint8_t *key,
				   size_t key_len, const uint8_t iv[16],
				   const uint8_t *in, uint8_t *out,
				   size_t len, int enc);
extern errcode_t fscrypt_essiv_crypt(const uint8_t key[16],
				     const uint8_t iv[16], const uint8_t *in,
				     uint8_t *out, size_t len, int enc);
extern errcode_t fscrypt_adiantum_crypt(const uint8_t key[32],
					const uint8_t iv[32],
					const uint8_t *in, uint8_t *out,
					size_t len, int enc);
extern errcode_t fscrypt_hctr2_crypt(const uint8_t key[32],
				     const uint8_t iv[32], const uint8_t *in,
				     uint8_t *out, size_t len, int enc);
extern void fscrypt_sm4_encrypt_block(const uint8_t key[16],
				      const uint8_t in[16], uint8_t out[16]);
extern void fscrypt_xchacha12(const uint8_t key[32], const uint8_t nonce[24],
			      const uint8_t *in, uint8_t *out, size_t len);
extern void fscrypt_polyval(const uint8_t key[16], const uint8_t *msg,
			    size_t len, uint8_t out[16]);
extern errcode_t fscrypt_xctr_crypt(const uint8_t key[32],
				    const uint8_t iv[16], const uint8_t *in,
				    uint8_t *out, size_t len);
extern void fscrypt_nhpoly1305(const uint8_t key[1088], const uint8_t *msg,
			       size_t len, uint8_t out[16]);

#endif /* FSCRYPT_H */
