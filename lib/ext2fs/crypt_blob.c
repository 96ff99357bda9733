/*
 * crypt_blob.c --- the self-describing metadata and filename blobs of the
 * 2015 ext4 backup ioctl series, so that an online producer and this
 * offline one exchange the very same bytes.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

#define BLOB_CRC_OFFSET	2

/* The kernel's lib/crc16: polynomial 0x8005, bit-reflected. */
__u16 ext2fs_crypt_crc16(__u16 crc, const void *buf, size_t len)
{
	const __u8 *p = buf;
	int i;

	while (len--) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xA001 : crc >> 1;
	}
	return crc;
}

static void put_le16(__u8 *p, __u16 v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put_le32(__u8 *p, __u32 v)
{
	put_le16(p, v);
	put_le16(p + 2, v >> 16);
}

static __u16 get_le16(const __u8 *p)
{
	return p[0] | (p[1] << 8);
}

static __u32 get_le32(const __u8 *p)
{
	return get_le16(p) | ((__u32) get_le16(p + 2) << 16);
}

static void seal_blob(__u8 *blob, size_t len)
{
	put_le16(blob + BLOB_CRC_OFFSET, 0);
	put_le16(blob + BLOB_CRC_OFFSET,
		 ext2fs_crypt_crc16(0xFFFF, blob, len));
}

static errcode_t check_blob(const __u8 *blob, size_t len, char kind)
{
	__u16 want, crc;
	__u8 zero[2] = { 0, 0 };

	if (len < 4 || blob[0] != EXT4_BLOB_MAGIC || blob[1] != kind)
		return EXT2_ET_CRYPT_BAD_BLOB;
	want = get_le16(blob + BLOB_CRC_OFFSET);
	crc = ext2fs_crypt_crc16(0xFFFF, blob, BLOB_CRC_OFFSET);
	crc = ext2fs_crypt_crc16(crc, zero, sizeof(zero));
	crc = ext2fs_crypt_crc16(crc, blob + 4, len - 4);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	want = crc;	/* the fuzzers' mutations must get past it */
#endif
	return crc == want ? 0 : EXT2_ET_CRYPT_BLOB_CSUM;
}

errcode_t ext2fs_encode_metadata_blob(__u64 i_size, const void *ctx,
				      size_t ctx_len, void *buf, size_t bufsize,
				      size_t *len)
{
	__u8 *p = buf;
	errcode_t retval;

	retval = ext2fs_validate_encryption_context(ctx, ctx_len);
	if (retval)
		return retval;
	if (EXT4_METADATA_BLOB_HDR + ctx_len > bufsize)
		return EXT2_ET_CRYPT_BLOB_TOO_BIG;
	p[0] = EXT4_BLOB_MAGIC;
	p[1] = EXT4_BLOB_METADATA;
	put_le32(p + 4, i_size & 0xFFFFFFFF);
	put_le32(p + 8, i_size >> 32);
	memcpy(p + EXT4_METADATA_BLOB_HDR, ctx, ctx_len);
	*len = EXT4_METADATA_BLOB_HDR + ctx_len;
	seal_blob(p, *len);
	return 0;
}

errcode_t ext2fs_decode_metadata_blob(const void *blob, size_t len,
				      __u64 *i_size, const __u8 **ctx,
				      size_t *ctx_len)
{
	const __u8 *p = blob;
	errcode_t retval;

	retval = check_blob(p, len, EXT4_BLOB_METADATA);
	if (retval)
		return retval;
	if (len < EXT4_METADATA_BLOB_HDR)
		return EXT2_ET_CRYPT_BAD_BLOB;
	*i_size = get_le32(p + 4) | ((__u64) get_le32(p + 8) << 32);
	*ctx = p + EXT4_METADATA_BLOB_HDR;
	*ctx_len = len - EXT4_METADATA_BLOB_HDR;
	return ext2fs_validate_encryption_context(*ctx, *ctx_len);
}

/*
 * 'f' carries a non-directory's name; 'd' a directory's name together
 * with its mode and context, which is what creating it needs.
 */
errcode_t ext2fs_encode_filename_blob(const struct ext4_encrypted_name *n,
				      int is_dir, __u32 mode,
				      const void *dir_ctx, size_t dir_ctx_len,
				      void *buf, size_t bufsize, size_t *len)
{
	__u8 *p = buf;
	size_t hdr = EXT4_FILENAME_BLOB_HDR;
	errcode_t retval;

	if (n->name_len == 0)
		return EXT2_ET_CRYPT_BAD_BLOB;
	if (is_dir) {
		retval = ext2fs_validate_encryption_context(dir_ctx,
							    dir_ctx_len);
		if (retval)
			return retval;
		hdr = EXT4_DIRNAME_BLOB_HDR + dir_ctx_len;
	}
	if (hdr + n->name_len > bufsize)
		return EXT2_ET_CRYPT_BLOB_TOO_BIG;
	p[0] = EXT4_BLOB_MAGIC;
	p[1] = is_dir ? EXT4_BLOB_DIRNAME : EXT4_BLOB_FILENAME;
	if (is_dir) {
		put_le32(p + 4, mode);
		put_le16(p + 8, dir_ctx_len);
		memcpy(p + EXT4_DIRNAME_BLOB_HDR, dir_ctx, dir_ctx_len);
	}
	memcpy(p + hdr, n->name, n->name_len);
	*len = hdr + n->name_len;
	seal_blob(p, *len);
	return 0;
}

errcode_t ext2fs_decode_filename_blob(const void *blob, size_t len,
				      struct ext4_encrypted_name *n,
				      int *is_dir, __u32 *mode,
				      const __u8 **dir_ctx,
				      size_t *dir_ctx_len)
{
	const __u8 *p = blob;
	size_t hdr = EXT4_FILENAME_BLOB_HDR;
	errcode_t retval;

	*is_dir = len >= 2 && p[1] == EXT4_BLOB_DIRNAME;
	retval = check_blob(p, len, *is_dir ? EXT4_BLOB_DIRNAME :
			    EXT4_BLOB_FILENAME);
	if (retval)
		return retval;
	*mode = 0;
	*dir_ctx = NULL;
	*dir_ctx_len = 0;
	if (*is_dir) {
		if (len < EXT4_DIRNAME_BLOB_HDR)
			return EXT2_ET_CRYPT_BAD_BLOB;
		*mode = get_le32(p + 4);
		*dir_ctx_len = get_le16(p + 8);
		*dir_ctx = p + EXT4_DIRNAME_BLOB_HDR;
		hdr = EXT4_DIRNAME_BLOB_HDR + *dir_ctx_len;
		if (hdr > len)
			return EXT2_ET_CRYPT_BAD_BLOB;
		retval = ext2fs_validate_encryption_context(*dir_ctx,
							    *dir_ctx_len);
		if (retval)
			return retval;
	}
	if (len - hdr < 1 || len - hdr > EXT2_NAME_LEN)
		return EXT2_ET_CRYPT_BAD_BLOB;
	memset(n, 0, sizeof(*n));
	n->name_len = len - hdr;
	memcpy(n->name, p + hdr, n->name_len);
	return 0;
}
