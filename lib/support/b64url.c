/*
 * b64url.c --- base64url (RFC 4648 section 5) without padding
 *
 * How an archive names an entry whose name is ciphertext: the raw
 * bytes, encoded.  Decoding is strict, so that each name has exactly
 * one spelling and a path compares as bytes.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include "e2cb_support.h"

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t e2cb_b64url_encode(const uint8_t *in, size_t len, char *out)
{
	size_t i, o = 0;
	uint32_t v;

	for (i = 0; i + 2 < len; i += 3) {
		v = (in[i] << 16) | (in[i + 1] << 8) | in[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
		out[o++] = b64url[v & 63];
	}
	if (len - i == 1) {
		v = in[i] << 16;
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
	} else if (len - i == 2) {
		v = (in[i] << 16) | (in[i + 1] << 8);
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
	}
	return o;
}

static int b64url_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/* Strict: rejects padding, stray characters and non-canonical tails. */
int e2cb_b64url_decode(const char *in, size_t len, uint8_t *out,
		       size_t outsize, size_t *outlen)
{
	uint32_t acc = 0;
	size_t i, o = 0;
	int bits = 0, v;

	if (len % 4 == 1)
		return -1;
	for (i = 0; i < len; i++) {
		v = b64url_value(in[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6) | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= outsize)
				return -1;
			out[o++] = acc >> bits;
		}
	}
	if (acc & ((1U << bits) - 1))
		return -1;
	*outlen = o;
	return 0;
}
