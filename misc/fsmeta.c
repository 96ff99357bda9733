/*
 * fsmeta.c --- open google/fscrypt's protectors for extract and list
 *
 * Owners who use the fscrypt tool hold a passphrase or a raw key file,
 * never a master key: the policy keys are wrapped by protectors whose
 * records are in MOUNTPOINT/.fscrypt (and /.fscrypt of the root
 * filesystem for login protectors).  Here the records are gathered from
 * the source itself -- an image, or an archive of it where they are
 * ordinary files -- and from --fscrypt-dir directories, the protector
 * the user names is opened with its secret, and every policy key it
 * wraps goes into the keyring.
 *
 * Copyright (C) 2026 The e2cryptbak authors
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#include <termios.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "e2cryptbak.h"
#include "fscrypt/fscrypt.h"

#define RECORD_MAX	65536		/* fscrypt's are a few hundred */
#define SECRET_MAX	(1024 + 2)

/* A record left out, and why; its path is the filesystem's: escaped */
static void ignored(const char *where, errcode_t retval)
{
	e2cb_report_path(where, strlen(where), 0, "%s; it is ignored",
			 error_message(retval));
}

/* A protector's name, escaped as paths are, for a message */
#define SHOWN_NAME	255
#define SHOWN_MAX	E2CB_ESCAPED_MAX(SHOWN_NAME)

static const char *shown(const struct fscrypt_protector *pr,
			 char buf[SHOWN_MAX])
{
	size_t len = strnlen(pr->name, SHOWN_NAME);

	e2cb_escape(buf, pr->name, len);
	return buf;
}

struct prot_rec {
	uint8_t *buf;
	struct fscrypt_protector pr;
};

struct pol_rec {
	uint8_t *buf;
	struct fscrypt_policy_data pd;
};

struct e2cb_fsmeta {
	struct prot_rec *prot;
	size_t nprot, prot_size;
	struct pol_rec *pol;
	size_t npol, pol_size;
	int links;			/* protectors on another filesystem */
};

errcode_t e2cb_fsmeta_new(struct e2cb_fsmeta **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : EXT2_ET_NO_MEMORY;
}

void e2cb_fsmeta_free(struct e2cb_fsmeta *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nprot; i++)
		free(m->prot[i].buf);
	for (i = 0; i < m->npol; i++)
		free(m->pol[i].buf);
	free(m->prot);
	free(m->pol);
	free(m);
}

static int have_protector(const struct e2cb_fsmeta *m, const char *desc)
{
	size_t i;

	for (i = 0; i < m->nprot; i++)
		if (!strcmp(m->prot[i].pr.descriptor, desc))
			return 1;
	return 0;
}

static int have_policy(const struct e2cb_fsmeta *m, const char *desc)
{
	size_t i;

	for (i = 0; i < m->npol; i++)
		if (!strcmp(m->pol[i].pd.descriptor, desc))
			return 1;
	return 0;
}

/*
 * A record, its buffer taken over: @kind is 'p' for protectors/, 'o'
 * for policies/.  One that does not parse is named and left out; the
 * first copy of a descriptor seen wins.
 */
static void add_record(struct e2cb_fsmeta *m, int kind, uint8_t *buf,
		       size_t len, const char *where)
{
	struct prot_rec *pr;
	struct pol_rec *po;
	errcode_t retval;

	if (kind == 'p' && e2cb_grow((void **) &m->prot, &m->prot_size,
				     m->nprot + 1, sizeof(*m->prot)) == 0) {
		pr = &m->prot[m->nprot];
		retval = fscrypt_parse_protector(buf, len, &pr->pr);
		if (!retval && !have_protector(m, pr->pr.descriptor)) {
			pr->buf = buf;
			m->nprot++;
			return;
		}
	} else if (kind == 'o' && e2cb_grow((void **) &m->pol, &m->pol_size,
					    m->npol + 1,
					    sizeof(*m->pol)) == 0) {
		po = &m->pol[m->npol];
		retval = fscrypt_parse_policy_data(buf, len, &po->pd);
		if (!retval && !have_policy(m, po->pd.descriptor)) {
			po->buf = buf;
			m->npol++;
			return;
		}
	} else {
		retval = EXT2_ET_NO_MEMORY;
	}
	if (retval)
		ignored(where, retval);
	free(buf);
}

/* What a directory entry of .fscrypt/{protectors,policies} names */
static int record_name(const char *name)
{
	size_t len = strlen(name);

	if (name[0] == '.')
		return 0;
	return len < 5 || strcmp(name + len - 5, ".link");
}

/* --- a .fscrypt directory of the host ---------------------------------- */

static void read_host_record(struct e2cb_fsmeta *m, int kind, int dfd,
			     const char *name, const char *where)
{
	struct stat st;
	uint8_t *buf;
	errcode_t retval;
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > RECORD_MAX) {
		if (fd >= 0)
			close(fd);
		return;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	n = buf ? read(fd, buf, st.st_size) : -1;
	retval = n == st.st_size ? 0 : !buf ? ENOMEM :
	      n < 0 ? errno : EXT2_ET_SHORT_READ;
	close(fd);
	if (retval) {
		ignored(where, retval);
		free(buf);
		return;
	}
	add_record(m, kind, buf, n, where);
}

static void read_host_dir(struct e2cb_fsmeta *m, int kind, const char *top,
			  const char *sub)
{
	char path[4096], where[4096 + 300];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", top, sub);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!record_name(de->d_name)) {
			m->links += de->d_name[0] != '.';
			continue;
		}
		snprintf(where, sizeof(where), "%s/%s", path, de->d_name);
		read_host_record(m, kind, dirfd(d), de->d_name, where);
	}
	closedir(d);
}

int e2cb_fsmeta_add_dir(struct e2cb_fsmeta *m, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		com_err(program_name, errno ? errno : ENOTDIR,
			"while opening the fscrypt directory %s", dir);
		return E2CB_EXIT_ERROR;
	}
	read_host_dir(m, 'p', dir, "protectors");
	read_host_dir(m, 'o', dir, "policies");
	return 0;
}

/* --- /.fscrypt of an image --------------------------------------------- */

struct img_dir {
	struct e2cb_fsmeta *m;
	ext2_filsys fs;
	int kind;
	const char *sub;
};

static void read_img_record(struct img_dir *d, ext2_ino_t ino,
			    const char *name)
{
	struct ext2_inode inode;
	ext2_file_t f = NULL;
	char where[300];
	unsigned int got = 0;
	uint64_t size;
	uint8_t *buf = NULL;
	errcode_t retval;

	snprintf(where, sizeof(where), "/.fscrypt/%s/%s", d->sub, name);
	retval = ext2fs_read_inode(d->fs, ino, &inode);
	if (retval || !LINUX_S_ISREG(inode.i_mode) ||
	    (inode.i_flags & EXT4_ENCRYPT_FL))
		goto out;
	size = EXT2_I_SIZE(&inode);
	retval = size > RECORD_MAX ? EXT2_ET_FILE_TOO_BIG : 0;
	if (!retval)
		buf = malloc(size ? size : 1);
	if (!retval && !buf)
		retval = EXT2_ET_NO_MEMORY;
	if (!retval)
		retval = ext2fs_file_open(d->fs, ino, 0, &f);
	if (!retval)
		retval = ext2fs_file_read(f, buf, size, &got);
	if (!retval && got != size)
		retval = EXT2_ET_SHORT_READ;
	if (!retval) {
		add_record(d->m, d->kind, buf, size, where);
		buf = NULL;
	}
out:
	if (f)
		ext2fs_file_close(f);
	free(buf);
	if (retval)
		ignored(where, retval);
}

static int img_dir_entry(ext2_ino_t dir EXT2FS_ATTR((unused)),
			 int entry EXT2FS_ATTR((unused)),
			 struct ext2_dir_entry *dirent,
			 int offset EXT2FS_ATTR((unused)),
			 int blocksize EXT2FS_ATTR((unused)),
			 char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct img_dir *d = priv;
	char name[EXT2_NAME_LEN + 1];
	int len = ext2fs_dirent_name_len(dirent);

	memcpy(name, dirent->name, len);
	name[len] = 0;
	if (!record_name(name)) {
		d->m->links += name[0] != '.';
		return 0;
	}
	if (!memchr(name, '/', len))
		read_img_record(d, dirent->inode, name);
	return 0;
}

static void read_img_dir(struct e2cb_fsmeta *m, ext2_filsys fs, int kind,
			 const char *sub)
{
	struct img_dir d = { m, fs, kind, sub };
	struct ext2_inode inode;
	char path[64];
	ext2_ino_t ino;

	snprintf(path, sizeof(path), "/.fscrypt/%s", sub);
	if (e2cb_resolve_path(fs, path, &ino) ||
	    ext2fs_read_inode(fs, ino, &inode) ||
	    !LINUX_S_ISDIR(inode.i_mode) ||
	    (inode.i_flags & EXT4_ENCRYPT_FL))
		return;
	ext2fs_dir_iterate2(fs, ino, 0, NULL, img_dir_entry, &d);
}

void e2cb_fsmeta_add_image(struct e2cb_fsmeta *m, ext2_filsys fs)
{
	read_img_dir(m, fs, 'p', "protectors");
	read_img_dir(m, fs, 'o', "policies");
}

/* --- .fscrypt of an archive: a first pass, up to its end ----------------- */

struct arc_rec {
	uint8_t *buf;
	size_t len;
};

static errcode_t arc_data(const struct e2cb_entry *e EXT2FS_ATTR((unused)),
			  uint64_t offset, const void *buf, size_t len,
			  void *priv)
{
	struct arc_rec *r = priv;

	if (offset + len > r->len)
		return EXT2_ET_FILE_TOO_BIG;
	memcpy(r->buf + offset, buf, len);
	return 0;
}

static void read_arc_record(struct e2cb_fsmeta *m, struct e2cb_reader *rd,
			    const struct e2cb_entry *e, int kind)
{
	struct arc_rec r;
	errcode_t retval;

	if (!LINUX_S_ISREG(e->rec.mode) || e->ctx_len || e->linkname ||
	    e->rec.size > RECORD_MAX)
		return;
	r.len = e->rec.size;
	r.buf = calloc(1, r.len ? r.len : 1);
	retval = r.buf ? e2cb_reader_data(rd, arc_data, &r) : EXT2_ET_NO_MEMORY;
	if (retval) {
		ignored(e->path, retval);
		free(r.buf);
		return;
	}
	add_record(m, kind, r.buf, r.len, e->path);
}

/*
 * The pass stops after /.fscrypt and does not sum the data: the walk
 * that follows reads it all.  Quiet: the caller then says what is wrong.
 */
int e2cb_fsmeta_add_archive(struct e2cb_fsmeta *m, const char *name,
			    int quiet)
{
	static const char prot[] = ".fscrypt/protectors/";
	static const char pol[] = ".fscrypt/policies/";
	struct e2cb_reader *rd = NULL;
	struct e2cb_entry *e;
	const char *base;
	errcode_t retval;
	int ret, kind, meta, seen = 0;

	if (!strcmp(name, "-"))
		return 0;	/* read once only: --fscrypt-dir says */
	/* the records' own HMACs vouch for them: no need to sum it all */
	retval = e2cb_reader_open(name, 0, &rd);
	if (retval) {
		if (!quiet)
			com_err(program_name, 0, "%s: %s", name,
				e2cb_reader_error(rd));
		e2cb_reader_close(rd);
		return quiet ? 0 : E2CB_EXIT_ERROR;
	}
	while ((ret = e2cb_reader_next(rd, &e)) == 0) {
		/* /.fscrypt comes whole, depth first: nothing after it */
		meta = !strncmp(e->path, ".fscrypt", 8) &&
		       (!e->path[8] || e->path[8] == '/');
		if (!meta && seen)
			break;
		seen |= meta;
		if (e->depth != 3)
			continue;
		if (!strncmp(e->path, prot, sizeof(prot) - 1)) {
			base = e->path + sizeof(prot) - 1;
			kind = 'p';
		} else if (!strncmp(e->path, pol, sizeof(pol) - 1)) {
			base = e->path + sizeof(pol) - 1;
			kind = 'o';
		} else {
			continue;
		}
		if (!record_name(base)) {
			m->links++;
			continue;
		}
		read_arc_record(m, rd, e, kind);
	}
	/* the walk that follows reports the damage */
	e2cb_reader_close(rd);
	return 0;
}

size_t e2cb_fsmeta_count(const struct e2cb_fsmeta *m)
{
	return m->nprot + m->npol;
}

/* --- the secret -------------------------------------------------------- */

/*
 * A line, as fscrypt reads a passphrase (cmd/fscrypt/keys.go:
 * passphraseReader): up to the first newline or carriage return.
 */
static errcode_t read_line(int fd, uint8_t *buf, size_t max, size_t *len)
{
	ssize_t n;

	*len = 0;
	while (*len < max) {
		n = read(fd, buf + *len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0 || buf[*len] == '\n' || buf[*len] == '\r')
			return 0;
		(*len)++;
	}
	return FSCRYPT_ET_BAD_PASSPHRASE;
}

/* The passphrase typed at the terminal, not echoed */
static errcode_t prompt_secret(const struct fscrypt_protector *pr,
			       uint8_t *buf, size_t max, size_t *len)
{
	struct termios old, quiet;
	char name[SHOWN_MAX];
	errcode_t retval;
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (tcgetattr(fd, &old)) {
		retval = errno;
		close(fd);
		return retval;
	}
	quiet = old;
	quiet.c_lflag &= ~(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	dprintf(fd, "Enter the passphrase of protector \"%s\" (%s): ",
		shown(pr, name), pr->descriptor);
	tcsetattr(fd, TCSAFLUSH, &quiet);
	retval = read_line(fd, buf, max, len);
	tcsetattr(fd, TCSAFLUSH, &old);
	dprintf(fd, "\n");
	close(fd);
	return retval;
}

static errcode_t read_secret_path(const char *path, int raw, uint8_t *buf,
				  size_t max, size_t *len)
{
	errcode_t retval;
	ssize_t n;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_NOCTTY |
					  O_CLOEXEC) : 0;

	if (fd < 0)
		return errno;
	if (!raw) {
		retval = read_line(fd, buf, max, len);
	} else {
		/* crypto.NewFixedLengthKeyFromReader: 32 bytes, no more */
		retval = 0;
		for (*len = 0; *len < max; *len += n) {
			n = read(fd, buf + *len, max - *len);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0) {
				retval = n < 0 ? errno : 0;
				break;
			}
		}
	}
	if (fd)
		close(fd);
	return retval;
}

static errcode_t get_secret(const struct e2cb_extract_opts *o,
			    const struct fscrypt_protector *pr, uint8_t *buf,
			    size_t *len)
{
	int raw = pr->source == FSCRYPT_SOURCE_RAW_KEY;
	const char *path = raw ? o->protector_key : o->passphrase_file;
	char name[SHOWN_MAX];

	if (path && strcmp(path, "-"))
		return read_secret_path(path, raw, buf, SECRET_MAX, len);
	if (!path && raw) {
		com_err(program_name, 0, "protector \"%s\" (%s) is a raw_key "
			"one: give its key file with --protector-key FILE",
			shown(pr, name), pr->descriptor);
		return EINVAL;
	}
	if (!strcmp(o->source, "-")) {
		com_err(program_name, 0, "the archive is read from standard "
			"input: the %s cannot be too",
			raw ? "key" : "passphrase");
		return EINVAL;
	}
	if (!path && isatty(0))
		return prompt_secret(pr, buf, SECRET_MAX, len);
	return read_secret_path("-", raw, buf, SECRET_MAX, len);
}

/* --- opening ----------------------------------------------------------- */

static const struct fscrypt_protector *
find_protector(const struct e2cb_fsmeta *m, const char *sel)
{
	const struct fscrypt_protector *found = NULL;
	size_t i, n = 0;

	for (i = 0; i < m->nprot; i++)
		if (!strcmp(m->prot[i].pr.descriptor, sel))
			return &m->prot[i].pr;
	for (i = 0; i < m->nprot; i++) {
		if (strcmp(m->prot[i].pr.name, sel))
			continue;
		found = &m->prot[i].pr;
		n++;
	}
	if (n == 1)
		return found;
	if (n > 1) {
		com_err(program_name, 0, "%d protectors are named \"%s\"; "
			"give the ID of one:", (int) n, sel);
		for (i = 0; i < m->nprot; i++)
			if (!strcmp(m->prot[i].pr.name, sel))
				fprintf(stderr, "  %s\n",
					m->prot[i].pr.descriptor);
		return NULL;
	}
	com_err(program_name, 0, "no protector \"%s\" among the %zu fscrypt "
		"protector records found%s", sel, m->nprot,
		m->links ? " (some are linked from another filesystem: "
		"give its .fscrypt with --fscrypt-dir)" :
		m->nprot ? "" : " (give a .fscrypt directory with "
		"--fscrypt-dir)");
	return NULL;
}

/* Every policy key @pkey unwraps goes into @kr; how many in *n */
static int open_policies(const struct e2cb_fsmeta *m,
			 const struct fscrypt_protector *pr,
			 const uint8_t *pkey, struct fscrypt_keyring *kr,
			 int *n)
{
	uint8_t *key = fscrypt_secure_alloc(FSCRYPT_MAX_KEY_SIZE);
	errcode_t retval = key ? 0 : FSCRYPT_ET_NO_MEMORY;
	size_t i;
	int found;

	*n = 0;
	for (i = 0; !retval && i < m->npol; i++) {
		retval = fscrypt_policy_unlock(&m->pol[i].pd, pr->descriptor,
					    pkey, key, &found);
		if (retval)
			com_err(program_name, retval, "while unwrapping the key "
				"of policy %s with protector %s",
				m->pol[i].pd.descriptor, pr->descriptor);
		else if (found)
			retval = fscrypt_keyring_add_raw(kr, key,
						      FSCRYPT_MAX_KEY_SIZE);
		if (!retval && found)
			(*n)++;
	}
	fscrypt_secure_free(key, FSCRYPT_MAX_KEY_SIZE);
	return retval ? E2CB_EXIT_ERROR : 0;
}

static int unlock_one(const struct e2cb_fsmeta *m,
		      const struct e2cb_extract_opts *o,
		      const struct fscrypt_protector *pr,
		      struct fscrypt_keyring *kr)
{
	uint8_t *secret = NULL, *pkey = NULL;
	char name[SHOWN_MAX];
	size_t len = 0;
	errcode_t retval;
	int ret = E2CB_EXIT_ERROR, n;

	secret = fscrypt_secure_alloc(SECRET_MAX);
	pkey = fscrypt_secure_alloc(FSCRYPT_PROTECTOR_KEY_SIZE);
	if (!secret || !pkey)
		goto out;
	retval = get_secret(o, pr, secret, &len);
	if (retval == EINVAL)
		goto out;
	if (retval) {
		com_err(program_name, retval, "while reading the %s of "
			"protector %s", pr->source == FSCRYPT_SOURCE_RAW_KEY ?
			"key" : "passphrase", pr->descriptor);
		goto out;
	}
	if (pr->source != FSCRYPT_SOURCE_RAW_KEY)
		com_err(program_name, 0, "protector \"%s\" (%s, %s): Argon2id, "
			"%lld passes over %lld KiB, %lld lanes",
			shown(pr, name), pr->descriptor,
			fscrypt_source_name(pr->source), (long long) pr->time,
			(long long) pr->memory, (long long) pr->parallelism);
	retval = fscrypt_protector_unlock(pr, secret, len, pkey);
	if (retval) {
		com_err(program_name, retval, "while opening protector \"%s\" "
			"(%s)", shown(pr, name), pr->descriptor);
		if (retval == FSCRYPT_ET_HASH_MEMORY)
			com_err(program_name, 0, "it needs %lld KiB",
				(long long) pr->memory);
		goto out;
	}
	ret = open_policies(m, pr, pkey, kr, &n);
	if (!ret && !n) {
		com_err(program_name, 0, "protector \"%s\" (%s) protects none "
			"of the %zu fscrypt policies found", shown(pr, name),
			pr->descriptor, m->npol);
		ret = E2CB_EXIT_ERROR;
	}
out:
	fscrypt_secure_free(secret, SECRET_MAX);
	fscrypt_secure_free(pkey, FSCRYPT_PROTECTOR_KEY_SIZE);
	return ret;
}

/*
 * Where several protectors' secrets come from: each passphrase is a
 * line of standard input or is typed at its prompt; a passphrase file
 * or a raw key serves one protector only.
 */
static int check_sources(const struct e2cb_extract_opts *o,
			 const struct fscrypt_protector **prs, int n)
{
	int i, npass = 0, nraw = 0, raw_stdin, pass_stdin;

	for (i = 0; i < n; i++) {
		if (prs[i]->source == FSCRYPT_SOURCE_RAW_KEY)
			nraw++;
		else
			npass++;
	}
	if (nraw > 1) {
		com_err(program_name, 0, "one raw_key protector at a time: "
			"--protector-key gives one key");
		return E2CB_EXIT_USAGE;
	}
	if (npass > 1 && o->passphrase_file &&
	    strcmp(o->passphrase_file, "-")) {
		com_err(program_name, 0, "--passphrase-file gives one "
			"passphrase: for %d protectors, give each a line of "
			"standard input (--passphrase-file -) or type them at "
			"the prompts", npass);
		return E2CB_EXIT_USAGE;
	}
	raw_stdin = o->protector_key && !strcmp(o->protector_key, "-");
	pass_stdin = o->passphrase_file ? !strcmp(o->passphrase_file, "-") :
		     !isatty(0);
	if (nraw && npass && raw_stdin && pass_stdin) {
		com_err(program_name, 0, "standard input cannot give both the "
			"raw key and the passphrases");
		return E2CB_EXIT_USAGE;
	}
	return 0;
}

int e2cb_fsmeta_unlock(const struct e2cb_fsmeta *m,
		       const struct e2cb_extract_opts *o,
		       struct fscrypt_keyring *kr)
{
	const struct fscrypt_protector **prs;
	int i, j, n = 0, ret = 0;

	prs = calloc(o->nprotectors, sizeof(*prs));
	if (!prs)
		return E2CB_EXIT_ERROR;
	for (i = 0; !ret && i < o->nprotectors; i++) {
		prs[n] = find_protector(m, o->protectors[i]);
		if (!prs[n])
			ret = E2CB_EXIT_ERROR;
		for (j = 0; !ret && j < n && prs[j] != prs[n]; j++)
			;
		if (!ret && j == n)
			n++;		/* named twice: opened once */
	}
	if (!ret)
		ret = check_sources(o, prs, n);
	for (i = 0; !ret && i < n; i++)
		ret = unlock_one(m, o, prs[i], kr);
	free(prs);
	return ret;
}

/* --- list -l ----------------------------------------------------------- */

static void print_protector(const struct e2cb_fsmeta *m, const char *id)
{
	const struct fscrypt_protector *pr = NULL;
	char name[SHOWN_MAX];
	size_t i;

	for (i = 0; i < m->nprot && !pr; i++)
		if (!strcmp(m->prot[i].pr.descriptor, id))
			pr = &m->prot[i].pr;
	if (!pr)
		printf("%s (no record here)", id);
	else if (pr->source == FSCRYPT_SOURCE_PAM_PASSPHRASE)
		printf("%s (login of uid %lld)", id, (long long) pr->uid);
	else
		printf("%s (%s \"%s\")", id, fscrypt_source_name(pr->source),
		       shown(pr, name));
}

/*
 * After an encrypted directory of list -l: the fscrypt protectors that
 * open its policy, from the records, without any secret.
 */
void e2cb_fsmeta_print_openers(const struct e2cb_fsmeta *m,
			       const uint8_t *ctx, size_t ctx_len)
{
	struct fscrypt_policy pol;
	char hex[2 * FSCRYPT_KEY_IDENTIFIER_SIZE + 1];
	size_t i, n;

	if (!m || !m->npol || fscrypt_parse_context(ctx, ctx_len, &pol))
		return;
	n = pol.version == 1 ? FSCRYPT_KEY_DESCRIPTOR_SIZE :
	    FSCRYPT_KEY_IDENTIFIER_SIZE;
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", pol.key.id[i]);
	for (i = 0; i < m->npol; i++)
		if (!strcmp(m->pol[i].pd.descriptor, hex))
			break;
	if (i == m->npol)
		return;
	fputs(" [fscrypt protectors:", stdout);
	for (n = 0; n < m->pol[i].pd.nkeys; n++) {
		putchar(' ');
		print_protector(m, m->pol[i].pd.keys[n].protector);
	}
	putchar(']');
}
