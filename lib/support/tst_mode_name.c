/*
 * tst_mode_name.c --- tests of the fscrypt mode names (mode_name.c)
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "ext2fs/ext4_crypt.h"
#include "e2cb_support.h"
#include "tst_check.h"

#define NAMED(m, s)	CHECK(strcmp(e2cb_mode_name(m), s) == 0)

int main(void)
{
	NAMED(FSCRYPT_MODE_AES_256_XTS, "AES-256-XTS");
	NAMED(FSCRYPT_MODE_AES_256_CTS, "AES-256-CTS");
	NAMED(FSCRYPT_MODE_AES_128_CBC, "AES-128-CBC-ESSIV");
	NAMED(FSCRYPT_MODE_AES_128_CTS, "AES-128-CTS");
	NAMED(FSCRYPT_MODE_SM4_XTS, "SM4-XTS");
	NAMED(FSCRYPT_MODE_SM4_CTS, "SM4-CTS");
	NAMED(FSCRYPT_MODE_ADIANTUM, "Adiantum");
	NAMED(FSCRYPT_MODE_AES_256_HCTR2, "AES-256-HCTR2");
	/* the kernel's numbers, which archives and images carry */
	NAMED(1, "AES-256-XTS");
	NAMED(9, "Adiantum");
	NAMED(0, "unknown");
	NAMED(255, "unknown");
	NAMED(-1, "unknown");
	return tst_done("tst_mode_name");
}
