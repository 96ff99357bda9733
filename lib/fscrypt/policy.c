/*
 * policy.c --- encryption contexts and what their modes need
 *
 * A context is checked the way the kernel's fscrypt_supported_policy()
 * checks a policy, so that what the kernel would refuse to decrypt is
 * refused here too rather than decrypted into garbage.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "fscrypt_int.h"

static const struct {
	const char *name;
	int key_size, iv_size;
	int contents, names;		/* usable for */
} modes[FSCRYPT_MODE_MAX + 1] = {
	[FSCRYPT_MODE_AES_256_XTS]   = { "AES-256-XTS", 64, 16, 1, 0 },
	[FSCRYPT_MODE_AES_256_CTS]   = { "AES-256-CTS", 32, 16, 0, 1 },
	[FSCRYPT_MODE_AES_128_CBC]   = { "AES-128-CBC-ESSIV", 16, 16, 1, 0 },
	[FSCRYPT_MODE_AES_128_CTS]   = { "AES-128-CTS", 16, 16, 0, 1 },
	[FSCRYPT_MODE_SM4_XTS]       = { "SM4-XTS", 32, 16, 1, 0 },
	[FSCRYPT_MODE_SM4_CTS]       = { "SM4-CTS", 16, 16, 0, 1 },
	[FSCRYPT_MODE_ADIANTUM]      = { "Adiantum", 32, 32, 1, 1 },
	[FSCRYPT_MODE_AES_256_HCTR2] = { "AES-256-HCTR2", 32, 32, 0, 1 },
};

const char *fscrypt_mode_name(int mode)
{
	if (mode < 0 || mode > FSCRYPT_MODE_MAX || !modes[mode].name)
		return "unknown";
	return modes[mode].name;
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

static int pair_ok(int version, int c, int n)
{
	if ((c == FSCRYPT_MODE_AES_256_XTS && n == FSCRYPT_MODE_AES_256_CTS) ||
	    (c == FSCRYPT_MODE_AES_128_CBC && n == FSCRYPT_MODE_AES_128_CTS) ||
	    (c == FSCRYPT_MODE_ADIANTUM && n == FSCRYPT_MODE_ADIANTUM))
		return 1;
	return version == 2 &&
	       ((c == FSCRYPT_MODE_AES_256_XTS &&
		 n == FSCRYPT_MODE_AES_256_HCTR2) ||
		(c == FSCRYPT_MODE_SM4_XTS && n == FSCRYPT_MODE_SM4_CTS));
}

errcode_t fscrypt_parse_context(const void *ctx, size_t len,
				struct fscrypt_policy *pol)
{
	const uint8_t *c = ctx;
	int nflags;

	memset(pol, 0, sizeof(*pol));
	if (len == 28 && c[0] == 1) {
		pol->version = 1;
		memcpy(pol->key.id, c + 4, FSCRYPT_KEY_DESCRIPTOR_SIZE);
		memcpy(pol->nonce, c + 12, FSCRYPT_FILE_NONCE_SIZE);
	} else if (len == 40 && c[0] == 2) {
		pol->version = 2;
		pol->log2_data_unit_size = c[4];
		if (c[5] || c[6] || c[7])
			return FSCRYPT_ET_BAD_CONTEXT;
		memcpy(pol->key.id, c + 8, FSCRYPT_KEY_IDENTIFIER_SIZE);
		memcpy(pol->nonce, c + 24, FSCRYPT_FILE_NONCE_SIZE);
	} else {
		return FSCRYPT_ET_BAD_CONTEXT;
	}
	pol->key.version = pol->version;
	pol->contents_mode = c[1];
	pol->filenames_mode = c[2];
	pol->flags = c[3];
	if (!pair_ok(pol->version, c[1], c[2]))
		return FSCRYPT_ET_UNSUPPORTED;
	if (pol->flags & ~FSCRYPT_POLICY_FLAGS_VALID)
		return FSCRYPT_ET_BAD_CONTEXT;
	nflags = !!(pol->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) +
		 !!(pol->flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) +
		 !!(pol->flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32);
	if (nflags > 1)
		return FSCRYPT_ET_BAD_CONTEXT;
	if (pol->version == 1 &&
	    (pol->flags & FSCRYPT_POLICY_FLAGS_IV_INO_LBLK))
		return FSCRYPT_ET_BAD_CONTEXT;
	/* the nonce goes into the IV: only Adiantum's has room for it */
	if ((pol->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) &&
	    (pol->contents_mode != FSCRYPT_MODE_ADIANTUM ||
	     pol->filenames_mode != FSCRYPT_MODE_ADIANTUM))
		return FSCRYPT_ET_UNSUPPORTED;
	if (pol->log2_data_unit_size &&
	    (pol->log2_data_unit_size < 9 || pol->log2_data_unit_size > 16))
		return FSCRYPT_ET_BAD_CONTEXT;
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
