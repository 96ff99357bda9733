/*
 * crypt_context.c --- read and validate an inode's fscrypt context
 *
 * The context is the xattr with name index 9 and name "c"; it is found
 * with ext2fs_xattrs_raw_iterate(), which keeps the index that the
 * generic xattr handle drops.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

/*
 * The one check of a context, for libext2fs and libfscrypt alike: the
 * kernel's fscrypt_policy_from_context() and fscrypt_supported_policy()
 * (fs/crypto/policy.c, Linux 6.12), rule for rule, as far as the
 * context alone decides.  What depends on the inode or the filesystem
 * is left to whoever knows them: a data unit no larger than the block
 * (and equal to it with IV_INO_LBLK_32), which libfscrypt checks when
 * it opens the inode; and the stable_inodes feature, the maximum file
 * size and a casefolded directory, which describe where a context is
 * used rather than how to decrypt with it, and which the kernel checks
 * again when it meets the inode.
 */

/* fscrypt_valid_enc_modes_v1() and _v2(): v1 is frozen at three pairs */
static int enc_modes_ok(int version, int contents, int names)
{
	if ((contents == FSCRYPT_MODE_AES_256_XTS &&
	     names == FSCRYPT_MODE_AES_256_CTS) ||
	    (contents == FSCRYPT_MODE_AES_128_CBC &&
	     names == FSCRYPT_MODE_AES_128_CTS) ||
	    (contents == FSCRYPT_MODE_ADIANTUM &&
	     names == FSCRYPT_MODE_ADIANTUM))
		return 1;
	return version == FSCRYPT_CONTEXT_V2 &&
	       ((contents == FSCRYPT_MODE_AES_256_XTS &&
		 names == FSCRYPT_MODE_AES_256_HCTR2) ||
		(contents == FSCRYPT_MODE_SM4_XTS &&
		 names == FSCRYPT_MODE_SM4_CTS));
}

/*
 * supported_direct_key_modes(): one mode for both, whose IV has room
 * for the 16-byte nonce after the 8-byte index (the 32-byte IVs of
 * Adiantum and HCTR2; HCTR2 is no contents mode, so Adiantum it is).
 */
static int direct_key_modes_ok(int contents, int names)
{
	return contents == names &&
	       (contents == FSCRYPT_MODE_ADIANTUM ||
		contents == FSCRYPT_MODE_AES_256_HCTR2);
}

/*
 * Whether the kernel supports these modes for a context of @version
 * with @flags: the pair itself, and what DIRECT_KEY and IV_INO_LBLK_*
 * demand of the modes (supported_iv_ino_lblk_policy(): AES-256-XTS
 * contents only).  A context can be well formed and still fail this.
 */
int ext2fs_encryption_modes_supported(int version, int contents, int names,
				      int flags)
{
	if (!enc_modes_ok(version, contents, names))
		return 0;
	if ((flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) &&
	    !direct_key_modes_ok(contents, names))
		return 0;
	if ((flags & FSCRYPT_POLICY_FLAGS_IV_INO_LBLK) &&
	    contents != FSCRYPT_MODE_AES_256_XTS)
		return 0;
	return 1;
}

/* The kernel's friendly name of a contents or filenames mode */
const char *ext2fs_encryption_mode_name(int mode)
{
	switch (mode) {
	case FSCRYPT_MODE_AES_256_XTS:
		return "AES-256-XTS";
	case FSCRYPT_MODE_AES_256_CTS:
		return "AES-256-CTS";
	case FSCRYPT_MODE_AES_128_CBC:
		return "AES-128-CBC-ESSIV";
	case FSCRYPT_MODE_AES_128_CTS:
		return "AES-128-CTS";
	case FSCRYPT_MODE_SM4_XTS:
		return "SM4-XTS";
	case FSCRYPT_MODE_SM4_CTS:
		return "SM4-CTS";
	case FSCRYPT_MODE_ADIANTUM:
		return "Adiantum";
	case FSCRYPT_MODE_AES_256_HCTR2:
		return "AES-256-HCTR2";
	}
	return "unknown";
}

/* fscrypt_supported_v1_policy(): no IV_INO_LBLK_* for v1 */
static int v1_flags_ok(__u8 flags)
{
	return !(flags & ~(FSCRYPT_POLICY_FLAGS_PAD_MASK |
			   FSCRYPT_POLICY_FLAG_DIRECT_KEY));
}

/* fscrypt_supported_v2_policy(), less the inode's block size */
static int v2_fields_ok(const struct fscrypt_context_v2 *v2)
{
	__u8 flags = v2->flags;
	int count = 0;

	if (flags & ~FSCRYPT_POLICY_FLAGS_VALID)
		return 0;
	count += !!(flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY);
	count += !!(flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64);
	count += !!(flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32);
	if (count > 1)
		return 0;
	/* 512 bytes (SECTOR_SHIFT) up to the largest ext4 block */
	if (v2->log2_data_unit_size &&
	    (v2->log2_data_unit_size < 9 ||
	     v2->log2_data_unit_size > EXT2_MAX_BLOCK_LOG_SIZE))
		return 0;
	return !v2->__reserved[0] && !v2->__reserved[1] &&
	       !v2->__reserved[2];
}

errcode_t ext2fs_validate_encryption_context(const void *ctx, size_t len)
{
	const __u8 *c = ctx;

	if (len < 1)
		return EXT2_ET_CRYPT_BAD_CONTEXT_SIZE;
	if (c[0] != FSCRYPT_CONTEXT_V1 && c[0] != FSCRYPT_CONTEXT_V2)
		return EXT2_ET_CRYPT_UNKNOWN_CONTEXT_VERSION;
	if ((c[0] == FSCRYPT_CONTEXT_V1 && len != FSCRYPT_CONTEXT_V1_SIZE) ||
	    (c[0] == FSCRYPT_CONTEXT_V2 && len != FSCRYPT_CONTEXT_V2_SIZE))
		return EXT2_ET_CRYPT_BAD_CONTEXT_SIZE;
	if (c[0] == FSCRYPT_CONTEXT_V1 ? !v1_flags_ok(c[3]) :
	    !v2_fields_ok(ctx))
		return EXT2_ET_CRYPT_BAD_CONTEXT;
	if (!ext2fs_encryption_modes_supported(c[0], c[1], c[2], c[3]))
		return EXT2_ET_CRYPT_BAD_CONTEXT;
	return 0;
}

struct find_ctx {
	void *buf;
	size_t bufsize;
	size_t *ctx_len;
	errcode_t retval;
};

static int find_ctx_proc(int index, const char *name, size_t name_len,
			 const void *value, size_t value_len, void *priv)
{
	struct find_ctx *fc = priv;

	if (index != EXT4_XATTR_INDEX_ENCRYPTION || name_len != 1 ||
	    name[0] != EXT4_XATTR_NAME_ENCRYPTION_CONTEXT[0])
		return 0;
	*fc->ctx_len = value_len;
	if (value_len > fc->bufsize) {
		fc->retval = EXT2_ET_CRYPT_BLOB_TOO_BIG;
		return XATTR_ABORT;
	}
	memcpy(fc->buf, value, value_len);
	fc->retval = ext2fs_validate_encryption_context(fc->buf, value_len);
	return XATTR_ABORT;
}

/*
 * Copy the raw context of @ino into @buf.  @inode may be NULL, or the
 * full on-disk inode (EXT2_INODE_SIZE bytes) when the caller has it.
 */
errcode_t ext2fs_get_encryption_context(ext2_filsys fs, ext2_ino_t ino,
					struct ext2_inode_large *inode,
					void *buf, size_t bufsize,
					size_t *ctx_len)
{
	struct ext2_inode_large *ibuf = NULL;
	struct find_ctx fc;
	errcode_t retval;

	if (!inode) {
		retval = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super),
					    &ibuf);
		if (retval)
			return retval;
		retval = ext2fs_read_inode_full(fs, ino,
						(struct ext2_inode *) ibuf,
						EXT2_INODE_SIZE(fs->super));
		if (retval)
			goto errout;
		inode = ibuf;
	}
	retval = EXT2_ET_CRYPT_NOT_ENCRYPTED;
	if (!(inode->i_flags & EXT4_ENCRYPT_FL))
		goto errout;
	memset(&fc, 0, sizeof(fc));
	fc.buf = buf;
	fc.bufsize = bufsize;
	fc.ctx_len = ctx_len;
	fc.retval = EXT2_ET_CRYPT_NO_CONTEXT;
	retval = ext2fs_xattrs_raw_iterate(fs, ino, inode, find_ctx_proc,
					   &fc);
	if (!retval)
		retval = fc.retval;
errout:
	ext2fs_free_mem(&ibuf);
	return retval;
}

/*
 * The offline EXT4_IOC_GET_ENCRYPTION_METADATA of the series' v3: the
 * bare context, its length in md->len.
 */
errcode_t ext2fs_get_encryption_metadata(ext2_filsys fs, ext2_ino_t ino,
					 struct ext4_encrypted_metadata *md)
{
	size_t len = 0;
	errcode_t retval;

	retval = ext2fs_get_encryption_context(fs, ino, NULL, md->metadata,
					       sizeof(md->metadata), &len);
	md->len = retval ? 0 : len;
	return retval;
}

struct keep_xattrs {
	struct ext2fs_raw_xattr *list;
	size_t count;
	errcode_t retval;
};

/* Copy every attribute but the context, which is being replaced. */
static int keep_proc(int index, const char *name, size_t name_len,
		     const void *value, size_t value_len, void *priv)
{
	struct keep_xattrs *k = priv;

	if (index == EXT4_XATTR_INDEX_ENCRYPTION && name_len == 1 &&
	    name[0] == EXT4_XATTR_NAME_ENCRYPTION_CONTEXT[0])
		return 0;
	k->retval = ext2fs_raw_xattr_copy_add(&k->list, &k->count, index,
					      name, name_len, value,
					      value_len);
	return k->retval ? XATTR_ABORT : 0;
}

/*
 * The offline EXT4_IOC_SET_ENCRYPTION_METADATA: validate @ctx, store it
 * as xattr index 9 "c" (a bare "c" through the generic xattr code would
 * land in index 0, where the kernel never looks) and set EXT4_ENCRYPT_FL.
 * Other attributes are kept.  Inline-data inodes are refused: the kernel
 * never encrypts inline data.
 */
errcode_t ext2fs_set_encryption_context(ext2_filsys fs, ext2_ino_t ino,
					const void *ctx, size_t len)
{
	struct ext2_inode_large *inode = NULL;
	struct keep_xattrs k = { NULL, 0, 0 };
	size_t isize = EXT2_INODE_SIZE(fs->super);
	errcode_t retval;

	if (!(fs->flags & EXT2_FLAG_RW))
		return EXT2_ET_RO_FILSYS;
	retval = ext2fs_validate_encryption_context(ctx, len);
	if (retval)
		return retval;
	retval = ext2fs_get_memzero(isize, &inode);
	if (retval)
		return retval;
	retval = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *) inode,
					isize);
	if (retval)
		goto errout;
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		retval = EXT2_ET_INLINE_DATA_CANT_ITERATE;
		goto errout;
	}
	/* the context first, so that it lands in the inode when it fits */
	retval = ext2fs_get_array(1, sizeof(*k.list), &k.list);
	if (retval)
		goto errout;
	k.list[0].index = EXT4_XATTR_INDEX_ENCRYPTION;
	k.list[0].name = EXT4_XATTR_NAME_ENCRYPTION_CONTEXT;
	k.list[0].name_len = 1;
	k.list[0].value = ctx;
	k.list[0].value_len = len;
	k.count = 1;
	retval = ext2fs_xattrs_raw_iterate(fs, ino, inode, keep_proc, &k);
	if (!retval)
		retval = k.retval;
	if (retval)
		goto errout;
	inode->i_flags |= EXT4_ENCRYPT_FL;
	retval = ext2fs_xattrs_raw_replace(fs, ino, inode, k.list, k.count);
errout:
	/* the first, the context, is the caller's */
	ext2fs_raw_xattrs_free(k.list, 1, k.count);
	ext2fs_free_mem(&inode);
	return retval;
}
