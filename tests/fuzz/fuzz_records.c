/*
 * fuzz_records.c --- the decoders of single records and blobs: the
 * 'e5', 'ef' and 'ed' blobs, encryption contexts, the archive's
 * header, inode and trailer records, xattr records and base64url
 *
 * The first byte chooses the decoder, the rest is its input.  What
 * decodes is encoded again and decoded once more: the two must agree.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "archive.h"
#include "ext2fs/ext4_crypt.h"

static void metadata_blob(const uint8_t *p, size_t n)
{
	const __u8 *ctx;
	size_t ctx_len, len;
	__u64 i_size, i_size2;
	uint8_t buf[512];

	if (ext2fs_decode_metadata_blob(p, n, &i_size, &ctx, &ctx_len))
		return;
	if (ext2fs_encode_metadata_blob(i_size, ctx, ctx_len, buf,
					sizeof(buf), &len))
		abort();
	if (ext2fs_decode_metadata_blob(buf, len, &i_size2, &ctx, &ctx_len) ||
	    i_size2 != i_size)
		abort();
}

static void filename_blob(const uint8_t *p, size_t n)
{
	struct ext4_encrypted_name name;
	const __u8 *ctx;
	size_t ctx_len;
	int is_dir;
	__u32 mode;

	if (ext2fs_decode_filename_blob(p, n, &name, &is_dir, &mode, &ctx,
					&ctx_len))
		return;
	if (ctx)
		ext2fs_validate_encryption_context(ctx, ctx_len);
}

static int xattr_one(int index, const char *name, size_t name_len,
		     const void *value, size_t value_len, void *priv)
{
	(void) index; (void) name; (void) name_len; (void) value;
	*(size_t *) priv += value_len;
	return 0;
}

static void archive_records(int kind, const uint8_t *p, size_t n)
{
	struct e2cb_header h;
	struct e2cb_inode_rec r;
	struct e2cb_trailer t;
	size_t total = 0;

	if (e2cb_check_sealed(p, n))
		return;
	switch (kind) {
	case 0:
		e2cb_decode_header(p, n, &h);
		break;
	case 1:
		e2cb_decode_inode(p, n, &r);
		break;
	case 2:
		e2cb_decode_trailer(p, n, &t);
		break;
	default:
		e2cb_xattr_rec_iterate(p, n, xattr_one, &total);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[4096];
	size_t len;

	if (size < 1)
		return 0;
	switch (data[0] % 8) {
	case 0:
		metadata_blob(data + 1, size - 1);
		break;
	case 1:
		filename_blob(data + 1, size - 1);
		break;
	case 2:
		ext2fs_validate_encryption_context(data + 1, size - 1);
		break;
	case 3:
		e2cb_b64url_decode((const char *) data + 1, size - 1, out,
				   sizeof(out), &len);
		break;
	default:
		archive_records(data[0] % 8 - 4, data + 1, size - 1);
	}
	return 0;
}
