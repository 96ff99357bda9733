/*
 * policy.c --- encryption contexts and what their modes need
 *
 * A context is checked by libext2fs's ext2fs_validate_encryption_context(),
 * the kernel's fscrypt_supported_policy() rules, so that what the kernel
 * would refuse to decrypt is refused here too rather than decrypted into
 * garbage, and what backup takes extract takes.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "fscrypt_int.h"

/* the sizes of the kernel's fscrypt_modes[]; the names are libext2fs's */
static const struct {
	int key_size, iv_size;
} modes[FSCRYPT_MODE_MAX + 1] = {
	[FSCRYPT_MODE_AES_256_XTS]   = { 64, 16 },
	[FSCRYPT_MODE_AES_256_CTS]   = { 32, 16 },
	[FSCRYPT_MODE_AES_128_CBC]   = { 16, 16 },
	[FSCRYPT_MODE_AES_128_CTS]   = { 16, 16 },
	[FSCRYPT_MODE_SM4_XTS]       = { 32, 16 },
	[FSCRYPT_MODE_SM4_CTS]       = { 16, 16 },
	[FSCRYPT_MODE_ADIANTUM]      = { 32, 32 },
	[FSCRYPT_MODE_AES_256_HCTR2] = { 32, 32 },
};

const char *fscrypt_mode_name(int mode)
{
	return ext2fs_encryption_mode_name(mode);
}

int fscrypt_mode_key_size(int mode)
{
	if (mode < 0 || mode > FSCRYPT_MODE_MAX)
		return 0;
	return modes[mode].key_size;
}

int fscrypt_mode_iv_size(int mode)
{
	if (mode < 0 || mode > FSCRYPT_MODE_MAX)
		return 0;
	return modes[mode].iv_size;
}

/*
 * A context is judged by libext2fs's validator, the kernel's rules in
 * one place; here a refusal is only told apart as "not supported" when
 * the modes are at fault, "invalid" otherwise.
 */
errcode_t fscrypt_parse_context(const void *ctx, size_t len,
				struct fscrypt_policy *pol)
{
	const uint8_t *c = ctx;
	errcode_t retval;

	memset(pol, 0, sizeof(*pol));
	retval = ext2fs_validate_encryption_context(ctx, len);
	if (retval == EXT2_ET_CRYPT_BAD_CONTEXT &&
	    !ext2fs_encryption_modes_supported(c[0], c[1], c[2], c[3]))
		return FSCRYPT_ET_UNSUPPORTED;
	if (retval)
		return FSCRYPT_ET_BAD_CONTEXT;
	pol->version = c[0];
	pol->contents_mode = c[1];
	pol->filenames_mode = c[2];
	pol->flags = c[3];
	if (pol->version == FSCRYPT_CONTEXT_V1) {
		const struct fscrypt_context_v1 *v1 = ctx;

		memcpy(pol->key.id, v1->master_key_descriptor,
		       FSCRYPT_KEY_DESCRIPTOR_SIZE);
		memcpy(pol->nonce, v1->nonce, FSCRYPT_FILE_NONCE_SIZE);
	} else {
		const struct fscrypt_context_v2 *v2 = ctx;

		pol->log2_data_unit_size = v2->log2_data_unit_size;
		memcpy(pol->key.id, v2->master_key_identifier,
		       FSCRYPT_KEY_IDENTIFIER_SIZE);
		memcpy(pol->nonce, v2->nonce, FSCRYPT_FILE_NONCE_SIZE);
	}
	pol->key.version = pol->version;
	return 0;
}

/* min(round_up(max(len, 16), padding), 255), as fscrypt pads names */
size_t fscrypt_encrypted_name_len(const struct fscrypt_policy *pol,
				  size_t len)
{
	size_t pad = 4U << (pol->flags & FSCRYPT_POLICY_FLAGS_PAD_MASK);

	if (len < FSCRYPT_MIN_NAME_CT)
		len = FSCRYPT_MIN_NAME_CT;
	len = (len + pad - 1) & ~(pad - 1);
	return len > FSCRYPT_NAME_MAX ? FSCRYPT_NAME_MAX : len;
}
