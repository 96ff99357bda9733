/*
 * list.c --- e2cryptbak list and verify
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <et/com_err.h>
#include "e2cryptbak.h"

/* The entry as stored: its path, and a link's, are the archive's */
static void print_entry(const struct e2cb_entry *e, int long_format,
			const struct e2cb_fsmeta *m)
{
	struct e2cb_list_line l;

	memset(&l, 0, sizeof(l));
	l.mode = e->rec.mode;
	l.uid = e->rec.uid;
	l.gid = e->rec.gid;
	l.size = e->rec.size;
	l.path = e->path;
	l.path_len = strlen(e->path);
	l.encrypted = !!(e->rec.rflags & E2CB_IF_NAME);
	if ((e->rec.rflags & E2CB_IF_HARDLINK) && e->linkname) {
		l.link_to = e->linkname;
		l.link_to_len = strlen(e->linkname);
	} else if (LINUX_S_ISLNK(e->rec.mode) && e->linkname) {
		l.target = e->linkname;
		l.target_len = strlen(e->linkname);
	}
	l.ctx = e->ctx;
	l.ctx_len = e->ctx_len;
	e2cb_list_line(&l, long_format, m);
}

static void print_journal_state(struct e2cb_reader *r)
{
	char journal[160];

	e2cb_journal_state(e2cb_reader_header(r), journal, sizeof(journal));
	printf("source journal: %s\n", journal);
}

static int open_reader(const char *name, int flags, struct e2cb_reader **r)
{
	errcode_t retval = e2cb_reader_open(name, flags, r);

	if (!retval)
		return 0;
	if (retval == EXT2_ET_CRYPT_BAD_BLOB) {
		com_err(program_name, 0, "%s: %s", name, e2cb_reader_error(*r));
		return E2CB_EXIT_DAMAGED;
	}
	com_err(program_name, 0, "%s", e2cb_reader_error(*r));
	return E2CB_EXIT_ERROR;
}

/* list -l: the fscrypt records of the archive and of @dirs */
static int load_fsmeta(const char *name, const char *const *dirs, int n,
		       struct e2cb_fsmeta **m)
{
	int i, ret;

	if (e2cb_fsmeta_new(m))
		return E2CB_EXIT_ERROR;
	ret = e2cb_fsmeta_add_archive(*m, name, 1);
	for (i = 0; !ret && i < n; i++)
		ret = e2cb_fsmeta_add_dir(*m, dirs[i]);
	return ret;
}

int e2cb_list(const char *name, int long_format, const char *const *dirs,
	      int ndirs)
{
	struct e2cb_fsmeta *m = NULL;
	struct e2cb_reader *r = NULL;
	struct e2cb_entry *e;
	char salt[E2CB_SALT_STRLEN];
	int ret = 0;

	if (long_format)
		ret = load_fsmeta(name, dirs, ndirs, &m);
	if (!ret)
		ret = open_reader(name, 0, &r);
	if (ret)
		goto out;
	if (long_format)
		print_journal_state(r);
	if (long_format &&
	    e2cb_salt_string(e2cb_reader_header(r)->encrypt_pw_salt, salt))
		printf("passphrase salt: %s\n", salt);
	/* output that fails ends the listing; main() reports it */
	while (!ferror(stdout) && (ret = e2cb_reader_next(r, &e)) == 0)
		print_entry(e, long_format, m);
	if (ferror(stdout)) {
		/* the failed write's errno: the stream may not fail again */
		e2cb_stdout_errno = errno;
		ret = E2CB_EXIT_ERROR;
		goto out;
	}
	if (ret < 0) {
		fflush(stdout);
		com_err(program_name, 0, "%s: %s", name, e2cb_reader_error(r));
		ret = E2CB_EXIT_DAMAGED;
		goto out;
	}
	ret = E2CB_EXIT_OK;
out:
	e2cb_fsmeta_free(m);
	e2cb_reader_close(r);
	return ret;
}

static void print_verified(const char *name, struct e2cb_reader *r)
{
	const struct e2cb_header *h = e2cb_reader_header(r);
	const struct e2cb_trailer *t = e2cb_reader_trailer(r);
	char uuid[37], when[64], journal[160], salt[E2CB_SALT_STRLEN];
	time_t created = h->created;
	struct tm tm;

	e2cb_uuid_string(h->uuid, uuid);
	/* a forged header may say a time no calendar holds */
	if (gmtime_r(&created, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	else
		snprintf(when, sizeof(when), "at %lld seconds past the epoch",
			 (long long) h->created);
	printf("%s: intact: %llu entries, %llu inodes (%llu encrypted), "
	       "%llu data bytes\n", name, (unsigned long long) t->entries,
	       (unsigned long long) t->inodes,
	       (unsigned long long) t->encrypted,
	       (unsigned long long) t->data_bytes);
	printf("%s: made %s by %s from filesystem %s, path %.*s, "
	       "block size %u\n", name, when, h->tool_version, uuid,
	       (int) h->source_path_len, h->source_path, h->block_size);
	e2cb_journal_state(h, journal, sizeof(journal));
	printf("%s: source journal: %s\n", name, journal);
	if (e2cb_salt_string(h->encrypt_pw_salt, salt))
		printf("%s: passphrase salt: %s (e4crypt add_key -S)\n",
		       name, salt);
}

int e2cb_verify(const char *name)
{
	struct e2cb_reader *r = NULL;
	struct e2cb_entry *e;
	int ret;

	ret = open_reader(name, E2CB_READ_DATA, &r);
	if (ret)
		goto out;
	while ((ret = e2cb_reader_next(r, &e)) == 0)
		;
	if (ret < 0) {
		com_err(program_name, 0, "%s: damaged: %s", name,
			e2cb_reader_error(r));
		ret = E2CB_EXIT_DAMAGED;
		goto out;
	}
	print_verified(name, r);
	ret = E2CB_EXIT_OK;
	if (e2cb_reader_trailer(r)->tflags & E2CB_TF_INCOMPLETE) {
		com_err(program_name, 0, "%s: the backup is incomplete: %llu "
			"entries could not be read from the source", name,
			(unsigned long long)
			e2cb_reader_trailer(r)->skipped);
		ret = E2CB_EXIT_INCOMPLETE;
	}
out:
	e2cb_reader_close(r);
	return ret;
}
