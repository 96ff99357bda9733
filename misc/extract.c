/*
 * extract.c --- e2cryptbak extract and list -k: decrypt with the key
 *
 * The owner's keys turn an archive, or an unmounted ext4 device or image
 * read through libext2fs, back into the plaintext tree.  Both sources
 * hand the same per-entry code their objects in pre-order.  The tree is
 * written under DIR with openat() and friends relative to descriptors of
 * directories this run opened without following symlinks, and every
 * decrypted name is checked first, so that no name -- a decrypted name
 * can hold any byte -- reaches outside DIR.  Owners, modes, xattrs and
 * times go through a descriptor of the object made, never its name: in
 * a directory another user can write, the name may be a symlink by then.
 *
 * This file holds the command and the per-entry driver; the sources, the
 * objects written and what keeps them safe are in the extract_*.c files
 * (see extract.h).
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <et/com_err.h>
#include "ext2fs/journal_replay.h"
#include "extract.h"

/* --- paths ---------------------------------------------------------------- */

static int pbuf_push(struct pbuf *p, const void *comp, size_t len)
{
	size_t need = p->len + 1 + len + 1;
	char *s;

	if (need > p->size) {
		s = realloc(p->s, need * 2);
		if (!s)
			return -1;
		p->s = s;
		p->size = need * 2;
	}
	if (p->len)
		p->s[p->len++] = '/';
	memcpy(p->s + p->len, comp, len);
	p->len += len;
	p->s[p->len] = 0;
	return 0;
}

static void pbuf_cut(struct pbuf *p, size_t len)
{
	p->len = len;
	if (p->s)
		p->s[len] = 0;
}

/* Names hold any byte but '/' and NUL: show the unprintable ones escaped */
void e2cb_x_put_path(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;

	if (!len) {
		fputc('.', f);
		return;
	}
	for (; len; len--, p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static void vreport(const char *path, size_t len, errcode_t err,
		    const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", program_name);
	e2cb_x_put_path(stderr, path, len);
	fputs(": ", stderr);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", error_message(err));
	fputc('\n', stderr);
}

/* A message about the entry at the current plaintext path */
void e2cb_x_report(struct xt *x, errcode_t err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(x->plain.s ? x->plain.s : "", x->plain.len, err, fmt, ap);
	va_end(ap);
}

/* The current name: the last component of the plaintext path */
const char *e2cb_x_cur_name(struct xt *x)
{
	const char *slash = strrchr(x->plain.s, '/');

	return slash ? slash + 1 : x->plain.s;
}

/* --- the selection of PATHs ----------------------------------------------- */

static int select_path(struct xt *x, int parent_sel)
{
	const char *p = x->plain.s ? x->plain.s : "";
	size_t len = x->plain.len, i;
	int sel = SEL_NONE;

	if (parent_sel == SEL_ALL)
		return SEL_ALL;
	for (i = 0; i < x->nsel; i++) {
		struct sel_path *s = &x->sel[i];

		if (s->len == len && !memcmp(s->s, p, len)) {
			s->found = 1;
			return SEL_ALL;
		}
		if (len < s->len && (!len || s->s[len] == '/') &&
		    !memcmp(s->s, p, len))
			sel = SEL_ANCESTOR;
	}
	return sel;
}

/* "/home//alice/" -> "home/alice"; NULL for ".." or an unusable path */
static char *normalize_sel(const char *in)
{
	char *out = malloc(strlen(in) + 1), *o = out;
	const char *p = in, *end;
	size_t len;

	if (!out)
		return NULL;
	while (*p) {
		for (; *p == '/'; p++)
			;
		end = strchr(p, '/');
		len = end ? (size_t) (end - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			free(out);
			return NULL;
		}
		if (len && !(len == 1 && p[0] == '.')) {
			if (o != out)
				*o++ = '/';
			memcpy(o, p, len);
			o += len;
		}
		p += len;
	}
	*o = 0;
	return out;
}

/* --- the tree walk shared by both sources --------------------------------- */

static void pop_frame(struct xt *x)
{
	struct frame *f = &x->st[--x->depth];

	if (f->fd >= 0) {
		if (f->apply_meta && !x->o->list_only)
			e2cb_x_apply_meta(x, f->fd, 0, &f->meta, LINUX_S_IFDIR);
		close(f->fd);
	}
	fscrypt_inode_close(f->names);
	free(f->meta.xattrs);
	pbuf_cut(&x->plain, f->plain_len);
	pbuf_cut(&x->cipher, f->cipher_len);
}

static void pop_to(struct xt *x, size_t depth)
{
	while (x->depth > depth)
		pop_frame(x);
}

static struct frame *push_frame(struct xt *x, size_t plain_len,
				size_t cipher_len)
{
	struct frame *f;

	if (x->depth == x->st_size) {
		f = realloc(x->st, (x->st_size * 2 + 16) * sizeof(*f));
		if (!f)
			return NULL;
		x->st = f;
		x->st_size = x->st_size * 2 + 16;
	}
	f = &x->st[x->depth++];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->plain_len = plain_len;
	f->cipher_len = cipher_len;
	return f;
}

static void list_entry(struct xt *x, const struct xentry *e,
		       const uint8_t *target, size_t target_len,
		       const char *note)
{
	e2cb_x_put_path(stdout, x->cipher.s, x->cipher.len);
	/* the root's path is empty: memcmp must not see its NULL */
	if (x->cipher.len != x->plain.len ||
	    (x->plain.len && memcmp(x->cipher.s, x->plain.s, x->plain.len))) {
		fputs("  =  ", stdout);
		e2cb_x_put_path(stdout, x->plain.s, x->plain.len);
	}
	if (target) {
		fputs("  ->  ", stdout);
		e2cb_x_put_path(stdout, (const char *) target, target_len);
	}
	if (note)
		printf("  [%s]", note);
	if (e && e->hardlink)
		fputs("  [hard link]", stdout);
	putchar('\n');
}

/*
 * One entry at @depth (the root is at 0).  Returns 1 when the entry is
 * a directory whose entries the source should go on to give, 0 when not.
 */
int e2cb_x_process(struct xt *x, const struct xentry *e, size_t depth)
{
	struct fscrypt_inode *fi = NULL;
	struct fscrypt_policy pol;
	struct frame *parent, *f = NULL;
	uint8_t name[FSCRYPT_NAME_MAX + 1];
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];
	size_t name_len = 0, comp_len = 0, plain_len, cipher_len;
	int is_dir = e2cb_x_is_type(e, LINUX_S_IFDIR), sel, needs_key = 0;
	int apply = 0, fd = -1, skip = SKIP_NONE, descend;
	const struct link *l;
	errcode_t err = 0;

	if (e2cb_x_stopped(x))
		return 0;
	memset(&pol, 0, sizeof(pol));
	pop_to(x, depth);
	parent = depth ? &x->st[depth - 1] : NULL;
	plain_len = x->plain.len;
	cipher_len = x->cipher.len;
	if (depth && x->depth != depth)
		return 0;
	if (depth > MAX_DEPTH) {
		e2cb_x_report(x, 0, "nested deeper than %d levels; skipped",
			      MAX_DEPTH);
		x->failed++;
		return 0;
	}

	/* the names: archive form (base64url when encrypted), plaintext */
	if (parent) {
		if (parent->encrypted) {
			comp_len = e2cb_b64url_encode(e->name, e->name_len,
						      comp);
		} else {
			comp_len = e->name_len;
			memcpy(comp, e->name, comp_len);
		}
		if (pbuf_push(&x->cipher, comp, comp_len))
			return 0;
	}
	if (parent && parent->skip) {
		/* below a directory that is not extracted */
		pbuf_push(&x->plain, comp, comp_len);
		if (parent->skip == SKIP_MISSING) {
			e2cb_x_note_missing(x, &parent->spec);
			if (x->o->list_only)
				list_entry(x, NULL, NULL, 0, "no key");
		} else if (parent->skip == SKIP_FAILED) {
			x->failed++;
		} else {
			e2cb_x_stage_file(x, e);
		}
		descend = 0;
		if (is_dir) {
			f = push_frame(x, plain_len, cipher_len);
			if (f) {
				f->skip = parent->skip;
				f->spec = parent->spec;
				f->encrypted = !!e->ctx;
				descend = parent->skip != SKIP_SILENT;
			}
		}
		if (!descend && (!is_dir || !f)) {
			pbuf_cut(&x->plain, plain_len);
			pbuf_cut(&x->cipher, cipher_len);
		}
		return descend;
	}
	if (parent) {
		size_t dec_len;

		if (parent->encrypted) {
			needs_key = 1;
			err = fscrypt_decrypt_name(parent->names, e->name,
						   e->name_len, name,
						   &dec_len);
		} else {
			dec_len = e->name_len;
			memcpy(name, e->name, dec_len);
		}
		if (!err)
			err = fscrypt_check_name(name, dec_len, &name_len);
		if (err) {
			/* shown by its ciphertext: the name is unusable */
			pbuf_push(&x->plain, comp, comp_len);
			e2cb_x_report(x, err, "name refused; not extracted");
			if (x->o->list_only)
				list_entry(x, NULL, NULL, 0, error_message(err));
			x->refused++;
			skip = SKIP_FAILED;
			goto skip_entry;
		}
		if (pbuf_push(&x->plain, name, name_len))
			return 0;
	}

	sel = select_path(x, parent ? parent->sel :
			  x->nsel ? SEL_ANCESTOR : SEL_ALL);
	if (sel == SEL_NONE || (sel == SEL_ANCESTOR && !is_dir)) {
		e2cb_x_stage_file(x, e);
		skip = SKIP_SILENT;
		goto skip_entry;
	}
	if (e->err) {
		e2cb_x_report(x, e->err, "%s; not extracted",
			      e->err_what ? e->err_what : "cannot be read");
		if (x->o->list_only)
			list_entry(x, e, NULL, 0, error_message(e->err));
		x->failed++;
		goto done;
	}

	/* the inode's own key: contents, or names and symlink targets */
	if (e->ctx) {
		needs_key = 1;
		err = fscrypt_parse_context(e->ctx, e->ctx_len, &pol);
		if (!err)
			err = e2cb_x_open_inode(x, e, &fi);
		if (err == FSCRYPT_ET_NO_KEY && is_dir) {
			/* the directory is made; what is in it is not */
			skip = SKIP_MISSING;
			err = 0;
		} else if (err == FSCRYPT_ET_NO_KEY) {
			e2cb_x_note_missing(x, &pol.key);
			if (x->o->list_only)
				list_entry(x, e, NULL, 0, "no key");
			goto skip_entry;
		} else if (err) {
			e2cb_x_report(x, err, "cannot decrypt; not extracted");
			if (x->o->list_only)
				list_entry(x, e, NULL, 0, error_message(err));
			x->failed++;
			skip = SKIP_FAILED;
			goto skip_entry;
		}
	}
	if (needs_key && !skip)
		x->enc_ok++;
	if (needs_key)
		x->enc_seen++;

	if (x->o->list_only) {
		uint8_t *target = NULL;
		size_t tlen = 0;

		if (e2cb_x_is_type(e, LINUX_S_IFLNK) && e->target && !e->hardlink) {
			target = malloc(e->target_len + 1);
			if (target && fi)
				err = fscrypt_decrypt_symlink(fi, e->target,
						e->target_len, target,
						e->target_len, &tlen);
			else if (target)
				memcpy(target, e->target,
				       tlen = e->target_len);
		}
		list_entry(x, e, target, tlen, skip == SKIP_MISSING ?
			   "no key for its entries" : err ?
			   error_message(err) : NULL);
		free(target);
		x->entries++;
		err = 0;
		if (!is_dir)
			goto done;
		f = push_frame(x, plain_len, cipher_len);
		if (!f)
			goto done;
		f->sel = sel;
		f->skip = skip;
		f->spec = pol.key;
		f->encrypted = !!e->ctx;
		f->names = fi;
		return 1;
	}

	/* the object itself */
	if (x->o->to_stdout) {
		/* only the data of regular files, once each, in order */
		if (!e2cb_x_is_type(e, LINUX_S_IFREG) || e2cb_x_link_find(x, e->ino)) {
			err = 0;
		} else if (e->hardlink) {
			e2cb_x_report(x, 0, "hard link to an entry that was not "
				      "extracted");
			err = ENOENT;
		} else {
			err = e2cb_x_stream_file(x, e, fi);
			x->files += !err;
		}
	} else if (!parent) {
		fd = dup(x->root_fd);
		apply = x->created_root;
		if (fd < 0)
			err = errno;
	} else if (is_dir) {
		fd = e2cb_x_extract_dir(x, parent->fd, &apply);
		if (fd < 0)
			err = EEXIST;
	} else if ((l = e2cb_x_link_find(x, e->ino)) != NULL) {
		err = e2cb_x_extract_link(x, parent->fd, l);
	} else if (e->hardlink) {
		e2cb_x_report(x, 0, "hard link to an entry that was not extracted");
		err = ENOENT;
	} else if (e2cb_x_is_type(e, LINUX_S_IFREG)) {
		err = e2cb_x_extract_file(x, parent->fd, e2cb_x_cur_name(x), e, fi);
		x->files += !err;
	} else if (e2cb_x_is_type(e, LINUX_S_IFLNK)) {
		err = e2cb_x_extract_symlink(x, parent->fd, e, fi);
	} else {
		err = e2cb_x_extract_special(x, parent->fd, e);
	}
	if (err) {
		x->failed++;
		skip = SKIP_FAILED;
		goto skip_entry;
	}
	x->entries++;
	if (!is_dir) {
		if (e->links > 1 && !e2cb_x_link_find(x, e->ino))
			e2cb_x_link_add(x, e->ino, x->plain.s, x->plain.len,
					&x->made);
		goto done;
	}
	f = push_frame(x, plain_len, cipher_len);
	if (!f) {
		close(fd);
		goto done;
	}
	f->fd = fd;
	f->sel = sel;
	f->skip = skip;
	f->spec = pol.key;
	f->encrypted = !!e->ctx;
	f->names = fi;
	f->apply_meta = apply;
	e2cb_x_meta_from(&f->meta, e);
	return 1;

skip_entry:
	fscrypt_inode_close(fi);
	fi = NULL;
	if (is_dir) {
		f = push_frame(x, plain_len, cipher_len);
		if (f) {
			f->skip = skip ? skip : SKIP_MISSING;
			f->spec = pol.key;
			f->encrypted = !!e->ctx;
			return f->skip != SKIP_SILENT;
		}
	}
done:
	fscrypt_inode_close(fi);
	pbuf_cut(&x->plain, plain_len);
	pbuf_cut(&x->cipher, cipher_len);
	return 0;
}

/* --- the command -------------------------------------------------------- */

static int open_output(struct xt *x)
{
	const char *dir = x->o->dir ? x->o->dir : ".";

	if (mkdir(dir, 0700) == 0)
		x->created_root = 1;
	else if (errno != EEXIST) {
		com_err(program_name, errno, "while creating %s", dir);
		return E2CB_EXIT_ERROR;
	}
	x->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->root_fd < 0) {
		com_err(program_name, errno, "while opening %s", dir);
		return E2CB_EXIT_ERROR;
	}
	return 0;
}

static int set_selection(struct xt *x)
{
	int i;

	if (!x->o->npaths)
		return 0;
	x->sel = calloc(x->o->npaths, sizeof(*x->sel));
	if (!x->sel)
		return E2CB_EXIT_ERROR;
	for (i = 0; i < x->o->npaths; i++) {
		x->sel[i].s = normalize_sel(x->o->paths[i]);
		if (!x->sel[i].s) {
			fprintf(stderr, "%s: %s: a PATH may not contain "
				"'..'\n", program_name, x->o->paths[i]);
			return E2CB_EXIT_USAGE;
		}
		x->sel[i].len = strlen(x->sel[i].s);
		x->nsel++;
	}
	return 0;
}

static int finish(struct xt *x)
{
	const struct e2cb_trailer *t;
	size_t i;
	int notfound = 0, incomplete = 0;

	for (i = 0; i < x->nsel; i++) {
		if (x->sel[i].found)
			continue;
		fprintf(stderr, "%s: %s: not found in %s\n", program_name,
			x->o->paths[i], x->o->source);
		notfound++;
	}
	/* what the backup could not read is not here either */
	t = x->r && !x->damaged ? e2cb_reader_trailer(x->r) : NULL;
	if (t && (t->tflags & E2CB_TF_INCOMPLETE)) {
		fprintf(stderr, "%s: %s: the backup is incomplete: %llu "
			"entries could not be read from the source\n",
			program_name, x->o->source,
			(unsigned long long) t->skipped);
		incomplete = 1;
	}
	e2cb_x_print_missing(x);
	e2cb_x_note_unused_keys(x);
	if (x->notroot)
		fprintf(stderr, "%s: %llu device nodes not created (not "
			"root)\n", program_name,
			(unsigned long long) x->notroot);
	if (x->nodevices)
		fprintf(stderr, "%s: %llu device nodes not created "
			"(--no-devices)\n", program_name,
			(unsigned long long) x->nodevices);
	if (x->xattr_warnings)
		fprintf(stderr, "%s: %llu extended attributes not set "
			"(see above)\n", program_name,
			(unsigned long long) x->xattr_warnings);
	fflush(stderr);
	if (x->o->list_only)
		printf("%s: %llu entries listed, %llu without key, %llu "
		       "refused, %llu failed\n", x->o->source,
		       (unsigned long long) x->entries,
		       (unsigned long long) x->missing,
		       (unsigned long long) x->refused,
		       (unsigned long long) x->failed);
	else
		/* with -O, standard output carries the data */
		fprintf(x->o->to_stdout ? stderr : stdout,
		       "%s: extracted %llu entries, %llu files, %llu bytes; "
		       "%llu without key, %llu refused, %llu failed\n",
		       x->o->source, (unsigned long long) x->entries,
		       (unsigned long long) x->files,
		       (unsigned long long) x->bytes,
		       (unsigned long long) x->missing,
		       (unsigned long long) x->refused,
		       (unsigned long long) x->failed);
	if (x->stop_cut) {
		fflush(stdout);
		fprintf(stderr, "%s: standard output: a file is cut short "
			"(%s): extraction stopped; the entries after it were "
			"not extracted\n", program_name,
			error_message(x->stop));
		return E2CB_EXIT_ERROR;
	}
	if (x->stop) {
		fflush(stdout);
		fprintf(stderr, "%s: %s: %s: extraction stopped; the entries "
			"after it were not extracted\n", program_name,
			x->o->to_stdout ? "standard output" :
			x->o->dir ? x->o->dir : ".", error_message(x->stop));
		return E2CB_EXIT_ERROR;
	}
	if (x->o->list_only && ferror(stdout))
		return E2CB_EXIT_ERROR;		/* main() says why */
	if (x->damaged)
		return E2CB_EXIT_DAMAGED;
	if (x->enc_seen && !x->enc_ok) {
		fprintf(stderr, "%s: none of the encrypted entries could be "
			"decrypted with the keys given\n", program_name);
		return E2CB_EXIT_ERROR;
	}
	if (x->missing || x->refused || x->failed || notfound || incomplete)
		return E2CB_EXIT_INCOMPLETE;
	return E2CB_EXIT_OK;
}

static void xt_free(struct xt *x)
{
	size_t i;

	pop_to(x, 0);
	e2cb_x_unstage(x);
	free(x->st);
	e2cb_x_free_links(x);
	e2cb_x_free_missing(x);
	for (i = 0; i < x->nsel; i++)
		free(x->sel[i].s);
	free(x->sel);
	free(x->plain.s);
	free(x->cipher.s);
	free(x->iobuf);
	e2cb_pipe_free(x->pipe);
	pthread_mutex_destroy(&x->crypt_lock);
	if (x->root_fd > 0)
		close(x->root_fd);
	if (x->img_fd >= 0)
		close(x->img_fd);
	fscrypt_keyring_free(x->kr);
	e2cb_reader_close(x->r);
	if (x->dirs_seen)
		ext2fs_free_inode_bitmap(x->dirs_seen);
	if (x->fs)
		ext2fs_close_free(&x->fs);
}

/*
 * A worker a CPU: the thread that walks the source waits mostly for
 * the kernel (its copies, or from an image only its metadata reads)
 */
static unsigned int pipe_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n <= 1)
		return 0;
	return n > E2CB_PIPE_MAX_WORKERS ? E2CB_PIPE_MAX_WORKERS : n;
}

int e2cb_extract(const struct e2cb_extract_opts *opts)
{
	struct xt x;
	uint8_t salt[16];
	int image, ret;

	/* nothing of this process, keys included, goes into a core file */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	memset(&x, 0, sizeof(x));
	x.o = opts;
	x.root_fd = -1;
	x.tmp_dirfd = -1;
	x.img_fd = -1;
	x.euid = geteuid();
	x.is_root = x.euid == 0;
	/* as tar: a user's files get the umask unless asked otherwise */
	x.policy = opts->policy;
	if (!x.is_root && !(x.policy & E2CB_SAME_PERMS))
		x.policy |= E2CB_NO_SAME_PERMS;
	x.umask = e2cb_get_umask();
	x.iobuf = malloc(IOBUF_SIZE);
	pthread_mutex_init(&x.crypt_lock, NULL);
	/* the other cores read, decrypt and write while this one walks */
	if (!x.iobuf || e2cb_pipe_new(PIPE_BUF_SIZE, PIPE_BUFS, pipe_workers(),
				      &x.pipe)) {
		ret = E2CB_EXIT_ERROR;
		goto out;
	}
	ret = set_selection(&x);
	if (ret)
		goto out;
	image = e2cb_x_looks_like_image(opts->source);
	ret = image ? e2cb_x_open_image(&x, salt) :
		      e2cb_x_open_archive(&x, salt);
	if (!ret)
		ret = e2cb_x_load_keys(&x, salt);
	if (!ret && !opts->list_only && !opts->to_stdout)
		ret = open_output(&x);
	if (ret)
		goto out;
	if (!opts->list_only && !opts->to_stdout) {
		/*
		 * O_TMPFILE files are named through /proc; without it, or
		 * for the tests of the other way, temporary names.
		 */
		const char *no_tmpfile = getenv("E2CRYPTBAK_NO_TMPFILE");

		x.anon_files = (!no_tmpfile || !*no_tmpfile) &&
			       access("/proc/self/fd", X_OK) == 0;
		e2cb_x_guard_output(&x);
	}
	if (image)
		e2cb_x_walk_image(&x);
	else
		e2cb_x_walk_archive(&x);
	pop_to(&x, 0);
	e2cb_x_unstage(&x);
	e2cb_x_unguard_output();
	ret = finish(&x);
out:
	e2cb_x_unguard_output();
	fscrypt_wipe(salt, sizeof(salt));
	xt_free(&x);
	return ret;
}
