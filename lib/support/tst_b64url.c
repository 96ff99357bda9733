/*
 * tst_b64url.c --- tests of base64url (b64url.c), RFC 4648's vectors
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "e2cb_support.h"
#include "tst_check.h"

static const struct {
	const char *in, *out;
} vec[] = {
	{ "", "" }, { "f", "Zg" }, { "fo", "Zm8" }, { "foo", "Zm9v" },
	{ "foob", "Zm9vYg" }, { "fooba", "Zm9vYmE" },
	{ "foobar", "Zm9vYmFy" },
	{ "\xfb\xff", "-_8" },			/* the url alphabet */
};

static int decodes_to(const char *in, const void *want, size_t want_len)
{
	uint8_t out[64];
	size_t len;

	if (e2cb_b64url_decode(in, strlen(in), out, sizeof(out), &len))
		return 0;
	return len == want_len && !memcmp(out, want, len);
}

static int refused(const char *in, size_t outsize)
{
	uint8_t out[64];
	size_t len;

	return e2cb_b64url_decode(in, strlen(in), out, outsize, &len) == -1;
}

int main(void)
{
	uint8_t raw[256], back[256];
	char enc[E2CB_B64_LEN(256) + 1];
	size_t i, n, len;
	int ok = 1;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		n = e2cb_b64url_encode((const uint8_t *) vec[i].in,
				       strlen(vec[i].in), enc);
		CHECK(n == strlen(vec[i].out) &&
		      !memcmp(enc, vec[i].out, n));
		CHECK(decodes_to(vec[i].out, vec[i].in, strlen(vec[i].in)));
	}
	/* every length, every byte value (NUL too), both ways */
	for (i = 0; i < sizeof(raw); i++)
		raw[i] = 255 - i;
	for (n = 0; n <= sizeof(raw) && ok; n++) {
		len = e2cb_b64url_encode(raw, n, enc);
		if (len != E2CB_B64_LEN(n) ||
		    e2cb_b64url_decode(enc, len, back, sizeof(back), &len) ||
		    len != n || memcmp(raw, back, n))
			ok = 0;
	}
	CHECK(ok);
	/* strict: padding, other alphabets, stray bits, no room */
	CHECK(refused("Zg==", 64));
	CHECK(refused("+/8", 64));
	CHECK(refused("Z", 64));
	CHECK(refused("Zh", 64));		/* 'h' leaves a bit set */
	CHECK(refused("Zm9v", 2));
	CHECK(refused("Zm 9", 64));
	return tst_done("tst_b64url");
}
