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

/*
 * The kernel's lib/crc16: polynomial 0x8005, bit-reflected, a byte at a
 * time through its table (a blob is checksummed for every inode backed
 * up, so the bitwise loop showed in profiles).
 */
static const __u16 crc16_table[256] = {
	0x0000, 0xc0c1, 0xc181, 0x0140, 0xc301, 0x03c0, 0x0280, 0xc241,
	0xc601, 0x06c0, 0x0780, 0xc741, 0x0500, 0xc5c1, 0xc481, 0x0440,
	0xcc01, 0x0cc0, 0x0d80, 0xcd41, 0x0f00, 0xcfc1, 0xce81, 0x0e40,
	0x0a00, 0xcac1, 0xcb81, 0x0b40, 0xc901, 0x09c0, 0x0880, 0xc841,
	0xd801, 0x18c0, 0x1980, 0xd941, 0x1b00, 0xdbc1, 0xda81, 0x1a40,
	0x1e00, 0xdec1, 0xdf81, 0x1f40, 0xdd01, 0x1dc0, 0x1c80, 0xdc41,
	0x1400, 0xd4c1, 0xd581, 0x1540, 0xd701, 0x17c0, 0x1680, 0xd641,
	0xd201, 0x12c0, 0x1380, 0xd341, 0x1100, 0xd1c1, 0xd081, 0x1040,
	0xf001, 0x30c0, 0x3180, 0xf141, 0x3300, 0xf3c1, 0xf281, 0x3240,
	0x3600, 0xf6c1, 0xf781, 0x3740, 0xf501, 0x35c0, 0x3480, 0xf441,
	0x3c00, 0xfcc1, 0xfd81, 0x3d40, 0xff01, 0x3fc0, 0x3e80, 0xfe41,
	0xfa01, 0x3ac0, 0x3b80, 0xfb41, 0x3900, 0xf9c1, 0xf881, 0x3840,
	0x2800, 0xe8c1, 0xe981, 0x2940, 0xeb01, 0x2bc0, 0x2a80, 0xea41,
	0xee01, 0x2ec0, 0x2f80, 0xef41, 0x2d00, 0xedc1, 0xec81, 0x2c40,
	0xe401, 0x24c0, 0x2580, 0xe541, 0x2700, 0xe7c1, 0xe681, 0x2640,
	0x2200, 0xe2c1, 0xe381, 0x2340, 0xe101, 0x21c0, 0x2080, 0xe041,
	0xa001, 0x60c0, 0x6180, 0xa141, 0x6300, 0xa3c1, 0xa281, 0x6240,
	0x6600, 0xa6c1, 0xa781, 0x6740, 0xa501, 0x65c0, 0x6480, 0xa441,
	0x6c00, 0xacc1, 0xad81, 0x6d40, 0xaf01, 0x6fc0, 0x6e80, 0xae41,
	0xaa01, 0x6ac0, 0x6b80, 0xab41, 0x6900, 0xa9c1, 0xa881, 0x6840,
	0x7800, 0xb8c1, 0xb981, 0x7940, 0xbb01, 0x7bc0, 0x7a80, 0xba41,
	0xbe01, 0x7ec0, 0x7f80, 0xbf41, 0x7d00, 0xbdc1, 0xbc81, 0x7c40,
	0xb401, 0x74c0, 0x7580, 0xb541, 0x7700, 0xb7c1, 0xb681, 0x7640,
	0x7200, 0xb2c1, 0xb381, 0x7340, 0xb101, 0x71c0, 0x7080, 0xb041,
	0x5000, 0x90c1, 0x9181, 0x5140, 0x9301, 0x53c0, 0x5280, 0x9241,
	0x9601, 0x56c0, 0x5780, 0x9741, 0x5500, 0x95c1, 0x9481, 0x5440,
	0x9c01, 0x5cc0, 0x5d80, 0x9d41, 0x5f00, 0x9fc1, 0x9e81, 0x5e40,
	0x5a00, 0x9ac1, 0x9b81, 0x5b40, 0x9901, 0x59c0, 0x5880, 0x9841,
	0x8801, 0x48c0, 0x4980, 0x8941, 0x4b00, 0x8bc1, 0x8a81, 0x4a40,
	0x4e00, 0x8ec1, 0x8f81, 0x4f40, 0x8d01, 0x4dc0, 0x4c80, 0x8c41,
	0x4400, 0x84c1, 0x8581, 0x4540, 0x8701, 0x47c0, 0x4680, 0x8641,
	0x8201, 0x42c0, 0x4380, 0x8341, 0x4100, 0x81c1, 0x8081, 0x4040,
};

__u16 ext2fs_crypt_crc16(__u16 crc, const void *buf, size_t len)
{
	const __u8 *p = buf;

	while (len--)
		crc = (crc >> 8) ^ crc16_table[(crc ^ *p++) & 0xff];
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
