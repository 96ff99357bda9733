/*
 * inode.c --- one inode's key, and its contents, names and symlink
 *
 * Follows fs/crypto/keysetup.c and crypto.c: the mode is the contents
 * mode for regular files and the filenames mode for directories and
 * symlinks; the key is per file (v1 AES-128-ECB KDF, v2 HKDF context 2),
 * or per mode (DIRECT_KEY, IV_INO_LBLK_64, IV_INO_LBLK_32); the IV is
 * the data unit index, widened with the nonce (DIRECT_KEY), combined
 * with the inode number (IV_INO_LBLK_64) or added to its SipHash
 * (IV_INO_LBLK_32).  Names and symlink targets use index 0.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "fscrypt_int.h"

struct fscrypt_inode {
	struct fscrypt_policy pol;
	struct master_key *mk;
	struct mode_key *key;
	struct mode_key own;		/* the per-file key, when it is one */
	int mode;
	unsigned int du_bits, block_size;
	unsigned int iv_size;
	uint64_t ino;
	uint32_t hashed_ino;
};

static int log2_exact(unsigned int v)
{
	int n = 0;

	if (!v || (v & (v - 1)))
		return -1;
	while (v >>= 1)
		n++;
	return n;
}

static errcode_t setup_v1(struct fscrypt_keyring *kr, struct fscrypt_inode *fi)
{
	uint8_t *raw;
	int size = fscrypt_mode_key_size(fi->mode);
	errcode_t retval;

	if (fi->pol.flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) {
		fi->key = fscrypt_keyring_mode_key(kr, fi->mk, 0, fi->mode,
						   NULL, &retval);
		return fi->key ? 0 : retval;
	}
	raw = fscrypt_secure_alloc(FSCRYPT_MAX_KEY_SIZE);
	if (!raw)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_v1_derive_key(fi->mk->raw, fi->pol.nonce, raw, size);
	if (!retval)
		retval = fscrypt_mode_key_init(&fi->own, fi->mode, raw);
	fscrypt_secure_free(raw, FSCRYPT_MAX_KEY_SIZE);
	if (!retval)
		fi->key = &fi->own;
	return retval;
}

static errcode_t setup_v2(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
			  const uint8_t *uuid)
{
	struct master_key *mk = fi->mk;
	uint8_t *raw;
	uint64_t h;
	int kind = 0;
	errcode_t retval;

	if (fi->pol.flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY)
		kind = HKDF_CONTEXT_DIRECT_KEY;
	else if (fi->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64)
		kind = HKDF_CONTEXT_IV_INO_LBLK_64_KEY;
	else if (fi->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32)
		kind = HKDF_CONTEXT_IV_INO_LBLK_32_KEY;
	if (kind) {
		fi->key = fscrypt_keyring_mode_key(kr, mk, kind, fi->mode, uuid,
						   &retval);
		if (!fi->key)
			return retval;
		if (kind != HKDF_CONTEXT_IV_INO_LBLK_32_KEY)
			return 0;
		if (!mk->have_ino_hash_key) {
			retval = fscrypt_hkdf_expand(mk->prk,
					HKDF_CONTEXT_INODE_HASH_KEY, NULL, 0,
					mk->ino_hash_key, 16);
			if (retval)
				return retval;
			mk->have_ino_hash_key = 1;
		}
		retval = fscrypt_siphash_u64(mk->ino_hash_key, fi->ino, &h);
		fi->hashed_ino = (uint32_t) h;
		return retval;
	}
	raw = fscrypt_secure_alloc(FSCRYPT_MAX_KEY_SIZE);
	if (!raw)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_hkdf_expand(mk->prk, HKDF_CONTEXT_PER_FILE_ENC_KEY,
				     fi->pol.nonce, FSCRYPT_FILE_NONCE_SIZE,
				     raw, fscrypt_mode_key_size(fi->mode));
	if (!retval)
		retval = fscrypt_mode_key_init(&fi->own, fi->mode, raw);
	fscrypt_secure_free(raw, FSCRYPT_MAX_KEY_SIZE);
	if (!retval)
		fi->key = &fi->own;
	return retval;
}

errcode_t fscrypt_inode_open(struct fscrypt_keyring *kr, const void *ctx,
			     size_t ctx_len,
			     const struct fscrypt_inode_params *p,
			     struct fscrypt_inode **ret)
{
	struct fscrypt_inode *fi;
	int block_bits = log2_exact(p->block_size);
	errcode_t retval;

	*ret = NULL;
	fi = fscrypt_secure_alloc(sizeof(*fi));
	if (!fi)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_parse_context(ctx, ctx_len, &fi->pol);
	if (retval)
		goto errout;
	fi->mode = p->names ? fi->pol.filenames_mode : fi->pol.contents_mode;
	fi->iv_size = fscrypt_mode_iv_size(fi->mode);
	fi->ino = p->ino;
	fi->block_size = p->block_size;
	retval = FSCRYPT_ET_UNSUPPORTED;
	if (block_bits < 9)
		goto errout;
	fi->du_bits = fi->pol.log2_data_unit_size ?
		      fi->pol.log2_data_unit_size : block_bits;
	/* the kernel's limits on sub-block data units */
	if ((int) fi->du_bits > block_bits ||
	    ((fi->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32) &&
	     (int) fi->du_bits != block_bits))
		goto errout;
	if ((fi->pol.flags & FSCRYPT_POLICY_FLAGS_IV_INO_LBLK) &&
	    (p->ino == 0 || p->ino > 0xffffffffULL)) {
		retval = FSCRYPT_ET_NEED_INO;
		goto errout;
	}
	fi->mk = fscrypt_keyring_find(kr, &fi->pol.key);
	if (!fi->mk) {
		retval = FSCRYPT_ET_NO_KEY;
		goto errout;
	}
	if (fi->mk->size < (size_t) fscrypt_mode_key_size(fi->mode)) {
		retval = FSCRYPT_ET_KEY_TOO_SHORT;
		goto errout;
	}
	retval = fi->pol.version == 1 ? setup_v1(kr, fi) :
		 setup_v2(kr, fi, p->uuid);
	if (retval)
		goto errout;
	*ret = fi;
	return 0;
errout:
	fscrypt_inode_close(fi);
	return retval;
}

/*
 * Another handle on the inode @fi, with cipher contexts of its own, so
 * that two threads can decrypt its data at once (AES-256-XTS only).
 */
errcode_t fscrypt_inode_dup(const struct fscrypt_inode *fi,
			    struct fscrypt_inode **ret)
{
	struct fscrypt_inode *dup;
	errcode_t retval;

	*ret = NULL;
	dup = fscrypt_secure_alloc(sizeof(*dup));
	if (!dup)
		return FSCRYPT_ET_NO_MEMORY;
	*dup = *fi;
	retval = fscrypt_mode_key_dup(&dup->own, fi->key);
	if (retval) {
		memset(&dup->own, 0, sizeof(dup->own));
		dup->key = NULL;
		fscrypt_inode_close(dup);
		return retval;
	}
	dup->key = &dup->own;
	*ret = dup;
	return 0;
}

void fscrypt_inode_close(struct fscrypt_inode *fi)
{
	if (!fi)
		return;
	if (fi->key == &fi->own)
		fscrypt_mode_key_free(&fi->own);
	fscrypt_secure_free(fi, sizeof(*fi));
}

const struct fscrypt_policy *fscrypt_inode_policy(const struct fscrypt_inode *fi)
{
	return &fi->pol;
}

unsigned int fscrypt_inode_data_unit(const struct fscrypt_inode *fi)
{
	return 1U << fi->du_bits;
}

/* The key for the SipHash of names in casefolded directories (v2) */
errcode_t fscrypt_inode_dirhash_key(const struct fscrypt_inode *fi,
				    uint8_t key[16])
{
	if (fi->pol.version != 2)
		return FSCRYPT_ET_UNSUPPORTED;
	return fscrypt_hkdf_expand(fi->mk->prk, HKDF_CONTEXT_DIRHASH_KEY,
				   fi->pol.nonce, FSCRYPT_FILE_NONCE_SIZE, key,
				   16);
}

static errcode_t make_iv(const struct fscrypt_inode *fi, uint64_t index,
			 uint8_t iv[FSCRYPT_MAX_IV_SIZE])
{
	memset(iv, 0, FSCRYPT_MAX_IV_SIZE);
	if (fi->pol.flags & FSCRYPT_POLICY_FLAGS_IV_INO_LBLK) {
		if (index > 0xffffffffULL)
			return FSCRYPT_ET_NEED_INO;
		if (fi->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) {
			put_le32(iv, index);
			put_le32(iv + 4, fi->ino);
		} else {
			put_le32(iv, (uint32_t) (fi->hashed_ino + index));
		}
		return 0;
	}
	put_le64(iv, index);
	if (fi->pol.flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY)
		memcpy(iv + 8, fi->pol.nonce, FSCRYPT_FILE_NONCE_SIZE);
	return 0;
}

static errcode_t crypt_data(struct fscrypt_inode *fi, uint64_t pos,
			    uint8_t *buf, size_t len, int enc)
{
	uint8_t iv[FSCRYPT_MAX_IV_SIZE];
	size_t du = (size_t) 1 << fi->du_bits;
	uint64_t index = pos >> fi->du_bits;
	errcode_t retval;

	if ((pos | len) & (du - 1))
		return FSCRYPT_ET_BAD_LENGTH;
	for (; len; len -= du, buf += du, index++) {
		retval = make_iv(fi, index, iv);
		if (!retval)
			retval = fscrypt_mode_key_crypt(fi->key, iv, buf,
							buf, du, enc);
		if (retval)
			return retval;
	}
	return 0;
}

errcode_t fscrypt_decrypt_data(struct fscrypt_inode *fi, uint64_t pos,
			       uint8_t *buf, size_t len)
{
	return crypt_data(fi, pos, buf, len, 0);
}

errcode_t fscrypt_encrypt_data(struct fscrypt_inode *fi, uint64_t pos,
			       uint8_t *buf, size_t len)
{
	return crypt_data(fi, pos, buf, len, 1);
}

/* The padded plaintext of a name: cut it with fscrypt_check_name() */
errcode_t fscrypt_decrypt_name(struct fscrypt_inode *dir, const uint8_t *ct,
			       size_t ct_len, uint8_t *out, size_t *out_len)
{
	uint8_t iv[FSCRYPT_MAX_IV_SIZE];
	errcode_t retval;

	if (ct_len < FSCRYPT_MIN_NAME_CT || ct_len > FSCRYPT_NAME_MAX)
		return FSCRYPT_ET_BAD_NAME;
	retval = make_iv(dir, 0, iv);
	if (!retval)
		retval = fscrypt_mode_key_crypt(dir->key, iv, ct, out, ct_len,
						0);
	*out_len = retval ? 0 : ct_len;
	return retval;
}

/* Pad with NULs as the policy says and encrypt; any bytes are taken */
static errcode_t encrypt_padded(struct fscrypt_inode *fi, const uint8_t *pt,
				size_t len, size_t max, uint8_t *out,
				size_t out_size, size_t *out_len)
{
	uint8_t iv[FSCRYPT_MAX_IV_SIZE];
	size_t pad = 4U << (fi->pol.flags & FSCRYPT_POLICY_FLAGS_PAD_MASK), n;
	errcode_t retval;

	n = len < FSCRYPT_MIN_NAME_CT ? FSCRYPT_MIN_NAME_CT : len;
	n = (n + pad - 1) & ~(pad - 1);
	if (n > max)
		n = max;
	if (!len || len > n || n > out_size)
		return FSCRYPT_ET_NAME_TOO_LONG;
	memmove(out, pt, len);
	memset(out + len, 0, n - len);
	retval = make_iv(fi, 0, iv);
	if (!retval)
		retval = fscrypt_mode_key_crypt(fi->key, iv, out, out, n, 1);
	*out_len = retval ? 0 : n;
	return retval;
}

errcode_t fscrypt_encrypt_name(struct fscrypt_inode *dir, const uint8_t *name,
			       size_t len, uint8_t *out, size_t *out_len)
{
	return encrypt_padded(dir, name, len, FSCRYPT_NAME_MAX, out,
			      FSCRYPT_NAME_MAX, out_len);
}

/*
 * The name is what comes before the first NUL.  The kernel shows just
 * that; we also refuse what no kernel would have written, and what
 * would escape the directory it is created in.
 */
errcode_t fscrypt_check_name(const uint8_t *buf, size_t len,
			     size_t *name_len)
{
	const uint8_t *nul = memchr(buf, 0, len);
	size_t n = nul ? (size_t) (nul - buf) : len, i;

	*name_len = n;
	if (n == 0)
		return FSCRYPT_ET_NAME_EMPTY;
	for (i = n; i < len; i++)
		if (buf[i])
			return FSCRYPT_ET_NAME_NUL;
	if (memchr(buf, '/', n))
		return FSCRYPT_ET_NAME_SLASH;
	if ((n == 1 && buf[0] == '.') ||
	    (n == 2 && buf[0] == '.' && buf[1] == '.'))
		return FSCRYPT_ET_NAME_DOT;
	return 0;
}

/*
 * On disk: le16 ciphertext length, the ciphertext (and usually a NUL,
 * which i_size leaves out).  The target is what precedes its first NUL.
 */
errcode_t fscrypt_decrypt_symlink(struct fscrypt_inode *lnk,
				  const uint8_t *disk, size_t disk_len,
				  uint8_t *out, size_t out_size,
				  size_t *out_len)
{
	uint8_t iv[FSCRYPT_MAX_IV_SIZE];
	const uint8_t *nul;
	size_t ct_len;
	errcode_t retval;

	*out_len = 0;
	if (disk_len < 2)
		return FSCRYPT_ET_BAD_SYMLINK;
	ct_len = disk[0] | (disk[1] << 8);
	if (ct_len < FSCRYPT_MIN_NAME_CT || ct_len > disk_len - 2 ||
	    ct_len > out_size)
		return FSCRYPT_ET_BAD_SYMLINK;
	retval = make_iv(lnk, 0, iv);
	if (!retval)
		retval = fscrypt_mode_key_crypt(lnk->key, iv, disk + 2, out,
						ct_len, 0);
	if (retval)
		return retval;
	nul = memchr(out, 0, ct_len);
	*out_len = nul ? (size_t) (nul - out) : ct_len;
	return *out_len ? 0 : FSCRYPT_ET_BAD_SYMLINK;
}

/* The disk form of @target; the longest is a block less 3 bytes */
errcode_t fscrypt_encrypt_symlink(struct fscrypt_inode *lnk,
				  const uint8_t *target, size_t len,
				  uint8_t *out, size_t out_size,
				  size_t *out_len)
{
	size_t ct_len;
	errcode_t retval;

	if (out_size < 3)
		return FSCRYPT_ET_NAME_TOO_LONG;
	retval = encrypt_padded(lnk, target, len, lnk->block_size - 3,
				out + 2, out_size - 2, &ct_len);
	if (retval)
		return retval;
	out[0] = ct_len;
	out[1] = ct_len >> 8;
	*out_len = ct_len + 2;
	return 0;
}
