/*
 * extract.c --- e2cryptbak extract and list -k: decrypt with the key
 *
 * The owner's keys turn an archive, or an unmounted ext4 device or image
 * (the image source of source.h: backup's walk), back into the plaintext
 * tree.  Both sources hand the same per-entry code their objects in
 * pre-order.  The tree is
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
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "extract.h"
#include "source.h"

/* --- paths ---------------------------------------------------------------- */

/* The entry at the current plaintext path: what of it went wrong */
static void vreport(struct xt *x, errcode_t retval, const char *fmt,
		    va_list ap)
{
	fflush(stdout);
	e2cb_vreport_path(x->plain.s ? x->plain.s : "", x->plain.len, retval,
			  fmt, ap);
}

void e2cb_x_report(struct xt *x, errcode_t retval, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(x, retval, fmt, ap);
	va_end(ap);
}

/* What the destination refused: a full or failing one stops the run */
void e2cb_x_report_dest(struct xt *x, errcode_t retval, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(x, retval, fmt, ap);
	va_end(ap);
	e2cb_x_check_dest(x, retval);
}

/* The current name: the last component of the plaintext path */
const char *e2cb_x_cur_name(struct xt *x)
{
	const char *slash = strrchr(x->plain.s, '/');

	return slash ? slash + 1 : x->plain.s;
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
	e2cb_path_cut(&x->plain, f->plain_len);
	e2cb_path_cut(&x->cipher, f->cipher_len);
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

	if (e2cb_grow((void **) &x->st, &x->st_size, x->depth, sizeof(*f)))
		return NULL;
	f = &x->st[x->depth++];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->plain_len = plain_len;
	f->cipher_len = cipher_len;
	return f;
}

/*
 * list -k: the entry's line, as list prints it (lister.c), with the
 * plaintext path and the stored one.  A further name of an inode is a
 * link to the first one listed.
 */
static void list_entry(struct xt *x, const struct xentry *e,
		       const uint8_t *target, size_t target_len,
		       const char *note)
{
	struct e2cb_list_line l;
	const struct link *first = NULL;
	struct stat none;

	memset(&l, 0, sizeof(l));
	l.mode = e->mode;
	l.uid = e->uid;
	l.gid = e->gid;
	l.size = e->size;
	l.path = x->plain.s;
	l.path_len = x->plain.len;
	l.stored = x->cipher.s;
	l.stored_len = x->cipher.len;
	l.encrypted = x->depth && x->st[x->depth - 1].encrypted;
	l.target = (const char *) target;
	l.target_len = target_len;
	l.ctx = e->ctx;
	l.ctx_len = e->ctx_len;
	if (e->links > 1 && !e2cb_x_is_type(e, LINUX_S_IFDIR))
		first = e2cb_x_link_find(x, e->ino);
	if (first) {
		l.link_to = first->path;
		l.link_to_len = first->len;
		l.target = NULL;
	} else if (e->links > 1 && !e2cb_x_is_type(e, LINUX_S_IFDIR)) {
		memset(&none, 0, sizeof(none));
		e2cb_x_link_add(x, e->ino, x->plain.s, x->plain.len, &none);
	}
	if (e->hardlink && !first && !note)
		note = "hard link to an entry not listed";
	l.note = note;
	e2cb_list_line(&l, x->o->long_format, NULL);
}

/* What the driver works out about the entry at hand */
struct step {
	const struct xentry *e;
	struct frame *parent;		/* NULL: the root */
	size_t plain_len, cipher_len;	/* the paths before its name */
	int is_dir;
	int needs_key;			/* its name or itself is encrypted */
	int sel;
	int skip;			/* for its entries, if a directory */
	struct fscrypt_key_spec spec;	/* SKIP_MISSING: the key wanted */
	struct fscrypt_inode *fi;	/* its own key, or NULL */
	char comp[E2CB_B64_LEN(EXT2_NAME_LEN) + 1];	/* its archive name */
	size_t comp_len;
};

/* The frame of a directory whose entries come next: it takes s->fi */
static struct frame *push_dir(struct xt *x, struct step *s)
{
	struct frame *f = push_frame(x, s->plain_len, s->cipher_len);

	if (!f)
		return NULL;
	f->sel = s->sel;
	f->skip = s->skip;
	f->spec = s->spec;
	f->encrypted = !!s->e->ctx;
	f->names = s->fi;
	s->fi = NULL;
	return f;
}

/* Done with an entry that leaves no frame: its names go */
static int leave(struct xt *x, struct step *s)
{
	fscrypt_inode_close(s->fi);
	s->fi = NULL;
	e2cb_path_cut(&x->plain, s->plain_len);
	e2cb_path_cut(&x->cipher, s->cipher_len);
	return 0;
}

/*
 * An entry not extracted (s->skip says why): a directory still gets a
 * frame, for its entries to be counted, or staged, below it.
 */
static int skip_entry(struct xt *x, struct step *s)
{
	struct frame *f;

	fscrypt_inode_close(s->fi);
	s->fi = NULL;
	if (s->is_dir) {
		if (!s->skip)
			s->skip = SKIP_MISSING;
		f = push_dir(x, s);
		if (f)
			return f->skip != SKIP_SILENT;
	}
	return leave(x, s);
}

/* The name as the archive has it: base64url when encrypted */
static int push_cipher_name(struct xt *x, struct step *s)
{
	const struct xentry *e = s->e;

	if (s->parent->encrypted) {
		s->comp_len = e2cb_b64url_encode(e->name, e->name_len,
						 s->comp);
	} else {
		s->comp_len = e->name_len;
		memcpy(s->comp, e->name, s->comp_len);
	}
	return e2cb_path_push(&x->cipher, s->comp, s->comp_len) ? -1 : 0;
}

/*
 * The plaintext name, checked: 0 when pushed, 1 when refused (reported;
 * the ciphertext stands for it), -1 when out of memory.
 */
static int push_plain_name(struct xt *x, struct step *s)
{
	const struct xentry *e = s->e;
	uint8_t name[FSCRYPT_NAME_MAX + 1];
	size_t dec_len, name_len = 0;
	errcode_t retval = 0;

	if (s->parent->encrypted) {
		s->needs_key = 1;
		retval = fscrypt_decrypt_name(s->parent->names, e->name,
					   e->name_len, name, &dec_len);
	} else {
		dec_len = e->name_len;
		memcpy(name, e->name, dec_len);
	}
	if (!retval)
		retval = fscrypt_check_name(name, dec_len, &name_len);
	if (retval) {
		/* shown by its ciphertext: the name is unusable */
		e2cb_path_push(&x->plain, s->comp, s->comp_len);
		e2cb_x_report(x, retval, "name refused; not extracted");
		if (x->o->list_only)
			list_entry(x, s->e, NULL, 0, error_message(retval));
		x->refused++;
		s->skip = SKIP_FAILED;
		return 1;
	}
	return e2cb_path_push(&x->plain, name, name_len) ? -1 : 0;
}

/* An entry below a directory that is not extracted */
static int below_skipped(struct xt *x, struct step *s)
{
	int skip = s->parent->skip;

	e2cb_path_push(&x->plain, s->comp, s->comp_len);
	if (skip == SKIP_MISSING) {
		e2cb_x_note_missing(x, &s->parent->spec);
		if (x->o->list_only)
			list_entry(x, s->e, NULL, 0, "no key");
	} else if (skip == SKIP_FAILED) {
		x->failed++;
	} else {
		e2cb_x_stage_file(x, s->e);
	}
	if (!s->is_dir)
		return leave(x, s);
	s->skip = skip;
	s->spec = s->parent->spec;
	if (!push_dir(x, s))
		return leave(x, s);
	return skip != SKIP_SILENT;
}

/*
 * The entry's own key, if it has one.  0 to go on (a directory whose
 * key is missing is still made), 1 when the entry is not extracted.
 */
static int open_key(struct xt *x, struct step *s)
{
	const struct xentry *e = s->e;
	struct fscrypt_policy pol;
	errcode_t retval;

	if (e->ctx) {
		s->needs_key = 1;
		memset(&pol, 0, sizeof(pol));
		retval = fscrypt_parse_context(e->ctx, e->ctx_len, &pol);
		if (!retval)
			retval = e2cb_x_open_inode(x, e, &s->fi);
		s->spec = pol.key;
		if (retval == FSCRYPT_ET_NO_KEY && s->is_dir) {
			/* the directory is made; what is in it is not */
			s->skip = SKIP_MISSING;
		} else if (retval == FSCRYPT_ET_NO_KEY) {
			e2cb_x_note_missing(x, &pol.key);
			if (x->o->list_only)
				list_entry(x, e, NULL, 0, "no key");
			return 1;
		} else if (retval) {
			e2cb_x_report(x, retval, "cannot decrypt; not extracted");
			if (x->o->list_only)
				list_entry(x, e, NULL, 0, error_message(retval));
			x->failed++;
			s->skip = SKIP_FAILED;
			return 1;
		}
	}
	if (s->needs_key && !s->skip)
		x->enc_ok++;
	if (s->needs_key)
		x->enc_seen++;
	return 0;
}

/* list -k: the entry's line, its symlink target decrypted */
static int list_one(struct xt *x, struct step *s)
{
	const struct xentry *e = s->e;
	uint8_t *target = NULL;
	size_t tlen = 0;
	errcode_t retval = 0;

	if (e2cb_x_is_type(e, LINUX_S_IFLNK) && e->target && !e->hardlink) {
		target = malloc(e->target_len + 1);
		if (target && s->fi)
			retval = fscrypt_decrypt_symlink(s->fi, e->target,
						      e->target_len, target,
						      e->target_len, &tlen);
		else if (target)
			memcpy(target, e->target, tlen = e->target_len);
	}
	list_entry(x, e, target, tlen, s->skip == SKIP_MISSING ?
		   "no key for its entries" : retval ? error_message(retval) : NULL);
	free(target);
	x->entries++;
	if (!s->is_dir || !push_dir(x, s))
		return leave(x, s);
	return 1;
}

/* A further name whose first one, with the data, was not extracted */
static errcode_t lost_link(struct xt *x)
{
	e2cb_x_report(x, 0, "hard link to an entry that was not extracted");
	return ENOENT;
}

/* -O: only the data of regular files, once each, in order */
static errcode_t stream_one(struct xt *x, struct step *s)
{
	const struct xentry *e = s->e;
	errcode_t retval;

	if (!e2cb_x_is_type(e, LINUX_S_IFREG) || e2cb_x_link_find(x, e->ino))
		return 0;
	if (e->hardlink)
		return lost_link(x);
	retval = e2cb_x_stream_file(x, e, s->fi);
	x->files += !retval;
	return retval;
}

/*
 * The object itself, in its parent's directory.  A directory's
 * descriptor goes to *fd, and *apply says whether its metadata is to be
 * set when its entries are done.
 */
static errcode_t make_object(struct xt *x, struct step *s, int *fd,
			     int *apply)
{
	const struct xentry *e = s->e;
	const struct link *l;
	errcode_t retval;
	int dirfd;

	if (x->o->to_stdout)
		return stream_one(x, s);
	if (!s->parent) {
		*fd = dup(x->root_fd);
		*apply = x->created_root;
		return *fd < 0 ? errno : 0;
	}
	dirfd = s->parent->fd;
	if (s->is_dir) {
		*fd = e2cb_x_extract_dir(x, dirfd, apply);
		return *fd < 0 ? EEXIST : 0;
	}
	l = e2cb_x_link_find(x, e->ino);
	if (l)
		return e2cb_x_extract_link(x, dirfd, l);
	if (e->hardlink)
		return lost_link(x);
	if (e2cb_x_is_type(e, LINUX_S_IFREG)) {
		retval = e2cb_x_extract_file(x, dirfd, e2cb_x_cur_name(x), e,
					  s->fi);
		x->files += !retval;
		return retval;
	}
	if (e2cb_x_is_type(e, LINUX_S_IFLNK))
		return e2cb_x_extract_symlink(x, dirfd, e, s->fi);
	return e2cb_x_extract_special(x, dirfd, e);
}

/* The entry made: a directory's frame holds it until its end */
static int make_one(struct xt *x, struct step *s)
{
	const struct xentry *e = s->e;
	int fd = -1, apply = 0;
	struct frame *f;

	if (make_object(x, s, &fd, &apply)) {
		x->failed++;
		s->skip = SKIP_FAILED;
		return skip_entry(x, s);
	}
	x->entries++;
	if (!s->is_dir) {
		if (e->links > 1 && !e2cb_x_link_find(x, e->ino))
			e2cb_x_link_add(x, e->ino, x->plain.s, x->plain.len,
					&x->made);
		return leave(x, s);
	}
	f = push_dir(x, s);
	if (!f) {
		if (fd >= 0)
			close(fd);
		return leave(x, s);
	}
	f->fd = fd;
	f->apply_meta = apply;
	e2cb_x_meta_from(&f->meta, e);
	return 1;
}

/*
 * One entry at @depth (the root is at 0).  Returns 1 when the entry is
 * a directory whose entries the source should go on to give, 0 when not.
 */
int e2cb_x_process(struct xt *x, const struct xentry *e, size_t depth)
{
	struct step s;
	int ret;

	if (e2cb_x_stopped(x))
		return 0;
	pop_to(x, depth);
	if (depth && x->depth != depth)
		return 0;
	if (depth > MAX_DEPTH) {
		e2cb_x_report(x, 0, "nested deeper than %d levels; skipped",
			      MAX_DEPTH);
		x->failed++;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	s.e = e;
	s.parent = depth ? &x->st[depth - 1] : NULL;
	s.plain_len = x->plain.len;
	s.cipher_len = x->cipher.len;
	s.is_dir = e2cb_x_is_type(e, LINUX_S_IFDIR);
	if (s.parent) {
		if (push_cipher_name(x, &s))
			return 0;
		if (s.parent->skip)
			return below_skipped(x, &s);
		ret = push_plain_name(x, &s);
		if (ret)
			return ret < 0 ? leave(x, &s) : skip_entry(x, &s);
	}
	s.sel = e2cb_x_select(x, s.parent ? s.parent->sel :
			      x->nsel ? SEL_ANCESTOR : SEL_ALL);
	if (s.sel == SEL_NONE || (s.sel == SEL_ANCESTOR && !s.is_dir)) {
		e2cb_x_stage_file(x, e);
		s.skip = SKIP_SILENT;
		return skip_entry(x, &s);
	}
	if (open_key(x, &s))
		return skip_entry(x, &s);
	if (x->o->list_only)
		return list_one(x, &s);
	return make_one(x, &s);
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

/* The counts of the run: on standard output, unless -O's data is there */
static void print_summary(struct xt *x)
{
	if (x->o->list_only) {
		printf("%s: %llu entries listed, %llu without key, %llu "
		       "refused, %llu failed\n", x->o->source,
		       (unsigned long long) x->entries,
		       (unsigned long long) x->missing,
		       (unsigned long long) x->refused,
		       (unsigned long long) x->failed);
		return;
	}
	fprintf(x->o->to_stdout ? stderr : stdout,
		"%s: extracted %llu entries, %llu files, %llu bytes; "
		"%llu without key, %llu refused, %llu failed\n",
		x->o->source, (unsigned long long) x->entries,
		(unsigned long long) x->files,
		(unsigned long long) x->bytes,
		(unsigned long long) x->missing,
		(unsigned long long) x->refused,
		(unsigned long long) x->failed);
}

static int finish(struct xt *x)
{
	const struct e2cb_trailer *t;
	int notfound, incomplete = 0;

	notfound = e2cb_x_report_unselected(x);
	/* what the backup could not read is not here either */
	t = x->src && x->src->archive && !x->damaged ?
		e2cb_source_trailer(x->src) : NULL;
	if (t && (t->tflags & E2CB_TF_INCOMPLETE)) {
		com_err(program_name, 0, "%s: the backup is incomplete: %llu "
			"entries could not be read from the source",
			x->o->source, (unsigned long long) t->skipped);
		incomplete = 1;
	}
	e2cb_x_print_missing(x);
	e2cb_x_note_unused_keys(x);
	if (x->notroot)
		com_err(program_name, 0, "%llu device nodes not created (not "
			"root)", (unsigned long long) x->notroot);
	if (x->nodevices)
		com_err(program_name, 0, "%llu device nodes not created "
			"(--no-devices)", (unsigned long long) x->nodevices);
	if (x->xattr_warnings)
		com_err(program_name, 0, "%llu extended attributes not set "
			"(see above)", (unsigned long long) x->xattr_warnings);
	fflush(stderr);
	print_summary(x);
	if (x->stop_cut) {
		fflush(stdout);
		com_err(program_name, 0, "standard output: a file is cut short "
			"(%s): extraction stopped; the entries after it were "
			"not extracted", error_message(x->stop));
		return E2CB_EXIT_ERROR;
	}
	if (x->stop) {
		fflush(stdout);
		com_err(program_name, 0, "%s: %s: extraction stopped; the "
			"entries after it were not extracted",
			x->o->to_stdout ? "standard output" :
			x->o->dir ? x->o->dir : ".",
			error_message(x->stop));
		return E2CB_EXIT_ERROR;
	}
	if (x->o->list_only && ferror(stdout))
		return E2CB_EXIT_ERROR;		/* main() says why */
	if (x->damaged)
		return E2CB_EXIT_DAMAGED;
	if (x->enc_seen && !x->enc_ok) {
		com_err(program_name, 0, "none of the encrypted entries could "
			"be decrypted with the keys given");
		return E2CB_EXIT_ERROR;
	}
	if (x->missing || x->refused || x->failed || notfound || incomplete)
		return E2CB_EXIT_INCOMPLETE;
	return E2CB_EXIT_OK;
}

static void xt_free(struct xt *x)
{
	pop_to(x, 0);
	e2cb_x_unstage(x);
	free(x->st);
	e2cb_x_free_links(x);
	e2cb_x_free_missing(x);
	e2cb_x_free_selection(x);
	e2cb_path_free(&x->plain);
	e2cb_path_free(&x->cipher);
	free(x->shown);
	free(x->iobuf);
	e2cb_pipe_free(x->pipe);
	pthread_mutex_destroy(&x->crypt_lock);
	if (x->root_fd > 0)
		close(x->root_fd);
	fscrypt_keyring_free(x->kr);
	e2cb_source_close(x->src);
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
	e2cb_ino_map_init(&x.links, sizeof(struct link));
	x.o = opts;
	x.root_fd = -1;
	x.tmp_dirfd = -1;
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
	ret = e2cb_x_set_selection(&x);
	if (ret)
		goto out;
	image = e2cb_x_looks_like_image(opts->source);
	/* the workers read the data; list -k reads none */
	x.sink_flags = E2CB_SINK_READS_DATA | E2CB_SINK_ONE_PASS |
		       (opts->list_only ? E2CB_SINK_NO_DATA : 0);
	ret = e2cb_x_open_source(&x, image, salt);
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
	e2cb_x_walk(&x);
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
