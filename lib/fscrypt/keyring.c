/*
 * keyring.c --- the master keys given by the user
 *
 * Each raw key is known both by its v2 key identifier and by the v1
 * descriptor convention, so that files find their keys by their
 * contexts alone and a wrong key is simply no key.  Keys are read into
 * locked memory straight from their files and never pass through a
 * string function; hex keys are decoded by hand.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "fscrypt_int.h"

/* A key shared by all inodes of one master key and mode */
struct cached_key {
	struct master_key *mk;
	int kind;			/* HKDF context, or 0: v1 DIRECT_KEY */
	int mode;
	uint8_t uuid[FSCRYPT_UUID_SIZE];
	struct mode_key *key;
};

struct fscrypt_keyring {
	struct master_key **keys;
	size_t count, size;
	struct cached_key *cache;
	size_t ncache, cache_size;
};

errcode_t fscrypt_keyring_new(struct fscrypt_keyring **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : FSCRYPT_ET_NO_MEMORY;
}

void fscrypt_keyring_free(struct fscrypt_keyring *kr)
{
	size_t i;

	if (!kr)
		return;
	for (i = 0; i < kr->ncache; i++) {
		fscrypt_mode_key_free(kr->cache[i].key);
		fscrypt_secure_free(kr->cache[i].key, sizeof(struct mode_key));
	}
	for (i = 0; i < kr->count; i++)
		fscrypt_secure_free(kr->keys[i], sizeof(struct master_key));
	free(kr->cache);
	free(kr->keys);
	free(kr);
}

errcode_t fscrypt_keyring_add_raw(struct fscrypt_keyring *kr,
				  const uint8_t *raw, size_t len)
{
	struct master_key *mk, **k;
	errcode_t retval;
	size_t i;

	if (len < FSCRYPT_MIN_KEY_SIZE || len > FSCRYPT_MAX_KEY_SIZE)
		return FSCRYPT_ET_BAD_KEY_SIZE;
	mk = fscrypt_secure_alloc(sizeof(*mk));
	if (!mk)
		return FSCRYPT_ET_NO_MEMORY;
	memcpy(mk->raw, raw, len);
	mk->size = len;
	retval = fscrypt_hkdf_extract(raw, len, mk->prk);
	if (!retval)
		retval = fscrypt_hkdf_expand(mk->prk,
					     HKDF_CONTEXT_KEY_IDENTIFIER,
					     NULL, 0, mk->identifier,
					     FSCRYPT_KEY_IDENTIFIER_SIZE);
	if (!retval)
		retval = fscrypt_key_descriptor(raw, len, mk->descriptor);
	if (retval)
		goto errout;
	/* the same key twice is harmless: keep one */
	for (i = 0; i < kr->count; i++) {
		if (kr->keys[i]->size == len &&
		    !CRYPTO_memcmp(kr->keys[i]->raw, raw, len)) {
			fscrypt_secure_free(mk, sizeof(*mk));
			return 0;
		}
	}
	if (kr->count == kr->size) {
		k = realloc(kr->keys, (kr->size * 2 + 4) * sizeof(*k));
		if (!k) {
			retval = FSCRYPT_ET_NO_MEMORY;
			goto errout;
		}
		kr->keys = k;
		kr->size = kr->size * 2 + 4;
	}
	kr->keys[kr->count++] = mk;
	return 0;
errout:
	fscrypt_secure_free(mk, sizeof(*mk));
	return retval;
}

/* Read at most @max bytes of @path into @buf; *len says how many */
static errcode_t read_secret_file(const char *path, uint8_t *buf, size_t max,
				  size_t *len)
{
	ssize_t n;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno;
	while (*len < max) {
		n = read(fd, buf + *len, max - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errcode_t retval = errno;

			close(fd);
			return retval;
		}
		if (n == 0)
			break;
		*len += n;
	}
	close(fd);
	return 0;
}

/* A raw key file: 16 to 64 bytes, nothing else */
errcode_t fscrypt_keyring_add_file(struct fscrypt_keyring *kr,
				   const char *path)
{
	size_t len, max = FSCRYPT_MAX_KEY_SIZE + 1;
	uint8_t *buf = fscrypt_secure_alloc(max);
	errcode_t retval;

	if (!buf)
		return FSCRYPT_ET_NO_MEMORY;
	retval = read_secret_file(path, buf, max, &len);
	if (!retval)
		retval = fscrypt_keyring_add_raw(kr, buf, len);
	fscrypt_secure_free(buf, max);
	return retval;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

errcode_t fscrypt_keyring_add_hex(struct fscrypt_keyring *kr,
				  const char *hex)
{
	uint8_t *buf = fscrypt_secure_alloc(FSCRYPT_MAX_KEY_SIZE);
	size_t len = 0;
	int hi, lo;
	errcode_t retval = 0;

	if (!buf)
		return FSCRYPT_ET_NO_MEMORY;
	for (; hex[0]; hex += 2) {
		hi = hexval(hex[0]);
		lo = hex[1] ? hexval(hex[1]) : -1;
		if (hi < 0 || lo < 0) {
			retval = FSCRYPT_ET_BAD_KEY_HEX;
			break;
		}
		if (len == FSCRYPT_MAX_KEY_SIZE) {
			retval = FSCRYPT_ET_BAD_KEY_SIZE;
			break;
		}
		buf[len++] = hi << 4 | lo;
	}
	if (!retval)
		retval = fscrypt_keyring_add_raw(kr, buf, len);
	fscrypt_secure_free(buf, FSCRYPT_MAX_KEY_SIZE);
	return retval;
}

errcode_t fscrypt_keyring_add_passphrase(struct fscrypt_keyring *kr,
					 const uint8_t *pass, size_t len,
					 const uint8_t salt[16])
{
	uint8_t *key = fscrypt_secure_alloc(FSCRYPT_MAX_KEY_SIZE);
	errcode_t retval;

	if (!key)
		return FSCRYPT_ET_NO_MEMORY;
	retval = fscrypt_e4crypt_passphrase_key(pass, len, salt, key);
	if (!retval)
		retval = fscrypt_keyring_add_raw(kr, key,
						 FSCRYPT_MAX_KEY_SIZE);
	fscrypt_secure_free(key, FSCRYPT_MAX_KEY_SIZE);
	return retval;
}

/* The first line of @path, without its newline, is the passphrase */
errcode_t fscrypt_keyring_add_passphrase_file(struct fscrypt_keyring *kr,
					      const char *path,
					      const uint8_t salt[16])
{
	size_t len, max = 1024 + 2;
	uint8_t *buf = fscrypt_secure_alloc(max), *nl;
	errcode_t retval;

	if (!buf)
		return FSCRYPT_ET_NO_MEMORY;
	retval = read_secret_file(path, buf, max, &len);
	if (!retval) {
		nl = memchr(buf, '\n', len);
		if (nl)
			len = nl - buf;
		retval = fscrypt_keyring_add_passphrase(kr, buf, len, salt);
	}
	fscrypt_secure_free(buf, max);
	return retval;
}

size_t fscrypt_keyring_count(const struct fscrypt_keyring *kr)
{
	return kr->count;
}

struct master_key *fscrypt_keyring_find(struct fscrypt_keyring *kr,
					const struct fscrypt_key_spec *spec)
{
	struct master_key *mk;
	size_t i;

	for (i = 0; i < kr->count; i++) {
		mk = kr->keys[i];
		if (spec->version == 1 &&
		    !memcmp(mk->descriptor, spec->id,
			    FSCRYPT_KEY_DESCRIPTOR_SIZE)) {
			mk->used_v1 = 1;
			return mk;
		}
		if (spec->version == 2 &&
		    !memcmp(mk->identifier, spec->id,
			    FSCRYPT_KEY_IDENTIFIER_SIZE)) {
			mk->used_v2 = 1;
			return mk;
		}
	}
	return NULL;
}

int fscrypt_keyring_has(const struct fscrypt_keyring *kr,
			const struct fscrypt_key_spec *spec)
{
	size_t i;

	for (i = 0; i < kr->count; i++)
		if (!memcmp(spec->version == 1 ? kr->keys[i]->descriptor :
			    kr->keys[i]->identifier, spec->id,
			    spec->version == 1 ? FSCRYPT_KEY_DESCRIPTOR_SIZE :
			    FSCRYPT_KEY_IDENTIFIER_SIZE))
			return 1;
	return 0;
}

/*
 * The names of key @i, and whether anything used it: bit 0 as a v1 key,
 * bit 1 as a v2 key; -1 past the last key.
 */
int fscrypt_keyring_used(const struct fscrypt_keyring *kr, size_t i,
			 struct fscrypt_key_spec *v1,
			 struct fscrypt_key_spec *v2)
{
	const struct master_key *mk;

	if (i >= kr->count)
		return -1;
	mk = kr->keys[i];
	memset(v1, 0, sizeof(*v1));
	memset(v2, 0, sizeof(*v2));
	v1->version = 1;
	memcpy(v1->id, mk->descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE);
	v2->version = 2;
	memcpy(v2->id, mk->identifier, FSCRYPT_KEY_IDENTIFIER_SIZE);
	return mk->used_v1 | (mk->used_v2 << 1);
}

/*
 * Keys that do not depend on the file: v1 DIRECT_KEY uses the master
 * key itself; v2 DIRECT_KEY and IV_INO_LBLK_* derive one key per mode
 * (and filesystem UUID), made once and kept.
 */
struct mode_key *fscrypt_keyring_mode_key(struct fscrypt_keyring *kr,
					  struct master_key *mk, int kind,
					  int mode, const uint8_t *uuid,
					  errcode_t *err)
{
	struct cached_key *c;
	struct mode_key *key;
	uint8_t *raw, info[1 + FSCRYPT_UUID_SIZE];
	size_t info_len = 1, i;
	int key_size = fscrypt_mode_key_size(mode);
	int with_uuid = kind == HKDF_CONTEXT_IV_INO_LBLK_64_KEY ||
			kind == HKDF_CONTEXT_IV_INO_LBLK_32_KEY;

	for (i = 0; i < kr->ncache; i++) {
		c = &kr->cache[i];
		if (c->mk == mk && c->kind == kind && c->mode == mode &&
		    (!with_uuid || !memcmp(c->uuid, uuid, FSCRYPT_UUID_SIZE)))
			return c->key;
	}
	if (kr->ncache == kr->cache_size) {
		c = realloc(kr->cache, (kr->cache_size * 2 + 4) * sizeof(*c));
		if (!c) {
			*err = FSCRYPT_ET_NO_MEMORY;
			return NULL;
		}
		kr->cache = c;
		kr->cache_size = kr->cache_size * 2 + 4;
	}
	raw = fscrypt_secure_alloc(FSCRYPT_MAX_KEY_SIZE);
	key = fscrypt_secure_alloc(sizeof(*key));
	if (!raw || !key) {
		*err = FSCRYPT_ET_NO_MEMORY;
		goto errout;
	}
	if (kind == 0) {
		memcpy(raw, mk->raw, key_size);
		*err = 0;
	} else {
		info[0] = mode;
		if (with_uuid) {
			memcpy(info + 1, uuid, FSCRYPT_UUID_SIZE);
			info_len += FSCRYPT_UUID_SIZE;
		}
		*err = fscrypt_hkdf_expand(mk->prk, kind, info, info_len, raw,
					   key_size);
	}
	if (!*err)
		*err = fscrypt_mode_key_init(key, mode, raw);
	if (*err)
		goto errout;
	fscrypt_secure_free(raw, FSCRYPT_MAX_KEY_SIZE);
	c = &kr->cache[kr->ncache++];
	c->mk = mk;
	c->kind = kind;
	c->mode = mode;
	memset(c->uuid, 0, FSCRYPT_UUID_SIZE);
	if (with_uuid)
		memcpy(c->uuid, uuid, FSCRYPT_UUID_SIZE);
	c->key = key;
	return key;
errout:
	fscrypt_secure_free(raw, FSCRYPT_MAX_KEY_SIZE);
	fscrypt_secure_free(key, sizeof(*key));
	return NULL;
}
