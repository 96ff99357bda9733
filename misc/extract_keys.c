/*
 * extract_keys.c --- e2cryptbak extract: the keys, given and missing
 *
 * Loading the keys the owner gives (key files, hex, a passphrase,
 * google/fscrypt protectors), and the account of the entries no key
 * opened and of the keys that opened nothing.  Apart to keep what
 * touches the secrets small enough to audit at once.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "extract.h"

/* A key not given, and the entries it would have opened */
struct missing {
	struct fscrypt_key_spec spec;
	uint64_t count;
	char **paths;
	size_t npaths, size;
};

void e2cb_x_note_missing(struct xt *x, const struct fscrypt_key_spec *spec)
{
	struct missing *m = NULL;
	char **p;
	size_t i;

	x->missing++;
	for (i = 0; i < x->nmiss; i++)
		if (x->miss[i].spec.version == spec->version &&
		    !memcmp(x->miss[i].spec.id, spec->id, sizeof(spec->id)))
			m = &x->miss[i];
	if (!m) {
		m = realloc(x->miss, (x->nmiss + 1) * sizeof(*m));
		if (!m)
			return;
		x->miss = m;
		m = &x->miss[x->nmiss++];
		memset(m, 0, sizeof(*m));
		m->spec = *spec;
	}
	m->count++;
	if (e2cb_grow((void **) &m->paths, &m->size, m->npaths, sizeof(*p)))
		return;
	m->paths[m->npaths] = strdup(x->plain.len ? x->plain.s : ".");
	if (m->paths[m->npaths])
		m->npaths++;
}

void e2cb_x_print_missing(struct xt *x)
{
	char spec[80];
	size_t i, j;

	for (i = 0; i < x->nmiss; i++) {
		fscrypt_spec_string(&x->miss[i].spec, spec, sizeof(spec));
		fflush(stdout);
		com_err(program_name, 0, "no key given for %s: %llu entr%s not "
			"extracted:", spec,
			(unsigned long long) x->miss[i].count,
			x->miss[i].count == 1 ? "y" : "ies");
		for (j = 0; j < x->miss[i].npaths; j++) {
			fputs("  ", stderr);
			e2cb_put_path(stderr, x->miss[i].paths[j],
				      strlen(x->miss[i].paths[j]));
			fputc('\n', stderr);
		}
	}
}


void e2cb_x_free_missing(struct xt *x)
{
	size_t i, j;

	for (i = 0; i < x->nmiss; i++) {
		for (j = 0; j < x->miss[i].npaths; j++)
			free(x->miss[i].paths[j]);
		free(x->miss[i].paths);
	}
	free(x->miss);
	x->miss = NULL;
	x->nmiss = 0;
}

/*
 * The inode's own key: for a regular file's data, else for the names
 * of its entries or its symlink target.
 */
errcode_t e2cb_x_open_inode(struct xt *x, const struct xentry *e,
			    struct fscrypt_inode **ret)
{
	struct fscrypt_inode_params params;

	memset(&params, 0, sizeof(params));
	params.ino = e->ino;
	params.block_size = x->block_size;
	memcpy(params.uuid, x->uuid, 16);
	params.names = !e2cb_x_is_type(e, LINUX_S_IFREG);
	return fscrypt_inode_open(x->kr, e->ctx, e->ctx_len, &params, ret);
}

/* As ssh does for its private keys: a secret others can read is not */
static void warn_if_readable(const char *what, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & (S_IRWXG | S_IRWXO)))
		com_err(program_name, 0, "warning: %s %s is accessible by "
			"others (mode %04o); chmod 600 it", what, path,
			(unsigned int) (st.st_mode & 07777));
}

/*
 * google/fscrypt's records: those of the source first, then those of
 * --fscrypt-dir; the protectors named open the policy keys they wrap.
 */
static int load_protector(struct xt *x)
{
	struct e2cb_fsmeta *m;
	const char *p;
	int i, ret = 0;

	if (e2cb_fsmeta_new(&m))
		return E2CB_EXIT_ERROR;
	if (x->fs)
		e2cb_fsmeta_add_image(m, x->fs);
	else
		ret = e2cb_fsmeta_add_archive(m, x->o->source, 0);
	for (i = 0; !ret && i < x->o->nfscrypt_dirs; i++)
		ret = e2cb_fsmeta_add_dir(m, x->o->fscrypt_dirs[i]);
	for (i = 0; i < 2; i++) {
		p = i ? x->o->protector_key : x->o->passphrase_file;
		if (p && strcmp(p, "-"))
			warn_if_readable(i ? "key file" : "passphrase file", p);
	}
	if (!ret)
		ret = e2cb_fsmeta_unlock(m, x->o, x->kr);
	e2cb_fsmeta_free(m);
	return ret;
}

int e2cb_x_load_keys(struct xt *x, const uint8_t salt[16])
{
	static const uint8_t zero[16];
	errcode_t retval;
	int i;

	retval = fscrypt_keyring_new(&x->kr);
	for (i = 0; !retval && i < x->o->nkey_files; i++) {
		warn_if_readable("key file", x->o->key_files[i]);
		retval = fscrypt_keyring_add_file(x->kr, x->o->key_files[i]);
		if (retval)
			com_err(program_name, retval, "while reading the key "
				"file %s", x->o->key_files[i]);
	}
	for (i = 0; !retval && i < x->o->nkey_hex; i++) {
		retval = fscrypt_keyring_add_hex(x->kr, x->o->key_hex[i]);
		if (retval)
			com_err(program_name, retval, "in --key-hex number %d",
				i + 1);
	}
	/* out of argv, and so of /proc/PID/cmdline, once read */
	for (i = 0; i < x->o->nkey_hex; i++)
		fscrypt_wipe(x->o->key_hex[i], strlen(x->o->key_hex[i]));
	if (!retval && x->o->passphrase_file && !x->o->nprotectors) {
		warn_if_readable("passphrase file", x->o->passphrase_file);
		if (!memcmp(salt, zero, 16))
			com_err(program_name, 0, "warning: the filesystem has "
				"no passphrase salt; the key is derived with a "
				"zero salt");
		retval = fscrypt_keyring_add_passphrase_file(x->kr,
						x->o->passphrase_file, salt);
		if (retval)
			com_err(program_name, retval, "while reading the "
				"passphrase file %s", x->o->passphrase_file);
	}
	if (!retval && x->o->nprotectors) {
		int ret = load_protector(x);

		if (ret)
			return ret;
	}
	if (!retval && fscrypt_secure_unlocked())
		com_err(program_name, 0, "warning: key memory could not be "
			"locked (RLIMIT_MEMLOCK); it is still kept out of core "
			"dumps");
	return retval ? E2CB_EXIT_ERROR : 0;
}

/* Keys that opened nothing are worth a word: a typo, or the wrong file */
void e2cb_x_note_unused_keys(struct xt *x)
{
	struct fscrypt_key_spec v1, v2;
	char s1[80], s2[80];
	size_t i;
	int used;

	for (i = 0; (used = fscrypt_keyring_used(x->kr, i, &v1, &v2)) >= 0;
	     i++) {
		if (used)
			continue;
		fscrypt_spec_string(&v2, s2, sizeof(s2));
		fscrypt_spec_string(&v1, s1, sizeof(s1));
		com_err(program_name, 0, "note: key %zu (%s, %s) opened "
			"nothing", i + 1, s2, s1);
	}
}
