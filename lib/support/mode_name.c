/*
 * mode_name.c --- the names of the fscrypt encryption modes
 *
 * As the kernel's documentation spells them; the one table that list,
 * extract and debugfs print policies with.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include "ext2fs/ext4_crypt.h"
#include "e2cb_support.h"

const char *e2cb_mode_name(int mode)
{
	switch (mode) {
	case FSCRYPT_MODE_AES_256_XTS: return "AES-256-XTS";
	case FSCRYPT_MODE_AES_256_CTS: return "AES-256-CTS";
	case FSCRYPT_MODE_AES_128_CBC: return "AES-128-CBC-ESSIV";
	case FSCRYPT_MODE_AES_128_CTS: return "AES-128-CTS";
	case FSCRYPT_MODE_SM4_XTS: return "SM4-XTS";
	case FSCRYPT_MODE_SM4_CTS: return "SM4-CTS";
	case FSCRYPT_MODE_ADIANTUM: return "Adiantum";
	case FSCRYPT_MODE_AES_256_HCTR2: return "AES-256-HCTR2";
	}
	return "unknown";
}
