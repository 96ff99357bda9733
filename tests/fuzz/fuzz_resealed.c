/*
 * fuzz_resealed.c --- archives mutated in their records and resealed,
 * through verify and restore, checksums on
 *
 * The other archive harnesses are built so that every checksum passes;
 * this one is built with them, as e2cryptbak is.  Its mutator decodes
 * an (uncompressed) archive into entries -- pax records, tar header
 * fields, data -- changes one thing (a field of any record, a pax
 * keyword, a tar header field, the data, an entry dropped, doubled or
 * moved) and seals everything again as backup would: sequence numbers,
 * path_crc, the data sums carried by the next record, the trailer's
 * counts, every crc32c and crc16 (misc/archive.c, lib/ext2fs).  The
 * mutation then meets the checks behind the checksums, and the ones
 * that compare the records with each other.
 *
 * An input is verified, then restored into a fresh ext4 image (the
 * first pass checks it all before the writing pass); a restore that
 * completes must leave the image clean for "e2fsck -fn".
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "fuzz.h"
#include "archive.h"
#include "ext2fs/ext4_crypt.h"

#define MAX_ENTRIES	4096
#define MAX_RECS	32
#define REC_PREFIX	"SCHILY.xattr."
#define TARGET_SIZE	(16 * 1024 * 1024)

struct rec {
	char *key;
	uint8_t *val;
	size_t len;
};

struct entry {
	uint8_t hdr[512];		/* the ustar header */
	struct rec rec[MAX_RECS];	/* its pax records, in order */
	int nrec;
	int has_pax;
	uint8_t *data;
	size_t len;			/* of data, as the header's size */
};

struct tar {
	struct entry *e;
	int n;
};

static uint32_t rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint64_t octal(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (; n && (*p == ' ' || *p == 0); n--, p++)
		;
	for (; n && *p >= '0' && *p <= '7'; n--, p++)
		v = v * 8 + (*p - '0');
	return v;
}

static void free_tar(struct tar *t)
{
	int i, j;

	for (i = 0; i < t->n; i++) {
		for (j = 0; j < t->e[i].nrec; j++) {
			free(t->e[i].rec[j].key);
			free(t->e[i].rec[j].val);
		}
		free(t->e[i].data);
	}
	free(t->e);
	t->e = NULL;
	t->n = 0;
}

static int parse_pax(struct entry *e, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n, *sp, *eq;
	size_t len;
	struct rec *r;

	while (p < end) {
		sp = memchr(p, ' ', end - p);
		if (!sp)
			return -1;
		len = strtoul((const char *) p, NULL, 10);
		if (len < 4 || len > (size_t) (end - p) || p[len - 1] != '\n')
			return -1;
		eq = memchr(sp, '=', p + len - sp);
		if (!eq || e->nrec == MAX_RECS)
			return -1;
		r = &e->rec[e->nrec++];
		r->key = strndup((const char *) sp + 1, eq - sp - 1);
		r->len = p + len - 1 - (eq + 1);
		r->val = malloc(r->len + 1);
		if (!r->key || !r->val)
			abort();
		memcpy(r->val, eq + 1, r->len);
		r->val[r->len] = 0;
		p += len;
	}
	return 0;
}

/* Entries of an uncompressed pax archive as backup writes it */
static int parse_tar(const uint8_t *p, size_t n, struct tar *t)
{
	size_t off = 0, size;
	struct entry *e;

	t->e = calloc(MAX_ENTRIES, sizeof(*t->e));
	t->n = 0;
	if (!t->e)
		abort();
	while (off + 512 <= n && t->n < MAX_ENTRIES) {
		e = &t->e[t->n];
		if (!p[off])
			return 0;
		if (p[off + 156] == 'x') {
			size = octal(p + off + 124, 12);
			if (off + 512 + size > n ||
			    parse_pax(e, p + off + 512, size))
				return -1;
			e->has_pax = 1;
			off += 512 + ((size + 511) & ~511UL);
			if (off + 512 > n)
				return -1;
		}
		memcpy(e->hdr, p + off, 512);
		size = octal(p + off + 124, 12);
		off += 512;
		if (strchr("123456", e->hdr[156]))
			size = 0;
		if (off + size > n)
			return -1;
		e->len = size;
		e->data = malloc(size + 1);
		if (!e->data)
			abort();
		memcpy(e->data, p + off, size);
		off += (size + 511) & ~511UL;
		t->n++;
	}
	return t->n ? 0 : -1;
}

static struct rec *find(struct entry *e, const char *rec)
{
	char key[64];
	int i;

	snprintf(key, sizeof(key), REC_PREFIX "e2cryptbak.%s", rec);
	for (i = 0; i < e->nrec; i++)
		if (!strcmp(e->rec[i].key, key))
			return &e->rec[i];
	return NULL;
}

static const char *pax_value(struct entry *e, const char *key)
{
	int i;

	for (i = 0; i < e->nrec; i++)
		if (!strcmp(e->rec[i].key, key))
			return (const char *) e->rec[i].val;
	return NULL;
}

/* The archive path over which path_crc runs (section 9.2) */
static void entry_path(struct entry *e, char *out, size_t size)
{
	const char *p = pax_value(e, "GNU.sparse.name");
	size_t len;

	if (!p)
		p = pax_value(e, "path");
	if (p)
		snprintf(out, size, "%s", p);
	else
		snprintf(out, size, "%.100s", (const char *) e->hdr);
	len = strlen(out);
	while (len > 1 && out[len - 1] == '/')
		out[--len] = 0;
	if (!strcmp(out, "./") || !strcmp(out, "/"))
		strcpy(out, ".");
}

/* Where the data follows a 1.0 sparse map; each (offset, length) */
static size_t sparse_map(struct entry *e, uint64_t *off, uint64_t *len,
			 size_t max)
{
	char *p = (char *) e->data, *end = p + e->len, *q;
	uint64_t count;
	size_t n = 0;

	e->data[e->len] = 0;
	count = strtoull(p, &q, 10);
	for (p = q; count-- && p < end && n < max; n++) {
		off[n] = strtoull(p, &q, 10);
		len[n] = strtoull(q, &p, 10);
	}
	return n;
}

/* The data sum (9.3): the regions, from a 1.0 sparse map or whole */
static void data_sum(struct entry *e, struct e2cb_data_sum *s)
{
	static uint64_t off[65536], len[65536];
	size_t i, n, pos;
	const char *p;

	e2cb_sum_init(s);
	if (!pax_value(e, "GNU.sparse.major")) {
		e2cb_sum_add(s, 0, e->data, e->len);
		return;
	}
	n = sparse_map(e, off, len, 65536);
	/* the map's text ends at the last number's newline */
	p = memchr(e->data, 0, e->len);
	pos = p ? (size_t) (p - (const char *) e->data) : e->len;
	pos = (pos + 511) & ~(size_t) 511;
	for (i = 0; i < n; i++) {
		if (pos > e->len || len[i] > e->len - pos)
			break;
		e2cb_sum_add(s, off[i], e->data + pos, len[i]);
		pos += len[i];
	}
}

static void seal_blob(struct rec *r)
{
	uint16_t crc;

	if (!r || r->len < 4)
		return;
	r->val[2] = r->val[3] = 0;
	crc = ext2fs_crypt_crc16(0xFFFF, r->val, r->len);
	r->val[2] = crc;
	r->val[3] = crc >> 8;
}

static void seal_crc(struct rec *r)
{
	if (r && r->len >= 4)
		e2cb_seal(r->val, r->len - 4);
}

static void add_rec(struct entry *e, const char *key, const char *val);

/* @e's path set to @path: its pax "path", or the ustar name */
static void set_path(struct entry *e, const char *path)
{
	int i;

	for (i = 0; i < e->nrec; i++) {
		if (strcmp(e->rec[i].key, "path"))
			continue;
		free(e->rec[i].val);
		e->rec[i].val = (uint8_t *) strdup(path);
		if (!e->rec[i].val)
			abort();
		e->rec[i].len = strlen(path);
		return;
	}
	if (strlen(path) < 100) {
		memset(e->hdr, 0, 100);
		memcpy(e->hdr, path, strlen(path));
		memset(e->hdr + 345, 0, 155);
	} else {
		add_rec(e, "path", path);
	}
}

/*
 * A name record's raw name is what backup makes the last component
 * of the path, in base64url: keep the two together, as it does.
 */
static void name_to_path(struct entry *e)
{
	struct rec *r = find(e, "name");
	char path[8192], *slash, dir;
	const uint8_t *name;
	size_t len, plen;

	if (!r || r->len < 5 || r->val[0] != 'e' ||
	    (r->val[1] != 'f' && r->val[1] != 'd'))
		return;
	name = r->val + 4;
	len = r->len - 4;
	if (r->val[1] == 'd') {
		if (r->len < 10 || r->len < 10U + (r->val[8] | r->val[9] << 8))
			return;
		name = r->val + 10 + (r->val[8] | r->val[9] << 8);
		len = r->len - 10 - (r->val[8] | r->val[9] << 8);
	}
	if (!len || len > 255 || pax_value(e, "GNU.sparse.name"))
		return;
	entry_path(e, path, sizeof(path) - 400);
	if (!strcmp(path, "."))
		return;
	dir = e->hdr[156] == '5';
	slash = strrchr(path, '/');
	plen = slash ? (size_t) (slash + 1 - path) : 0;
	plen += e2cb_b64url_encode(name, len, path + plen);
	if (dir)
		path[plen++] = '/';
	path[plen] = 0;
	set_path(e, path);
}

/* Every seal, sequence number, path crc, data sum and count, anew */
static void reseal(struct tar *t)
{
	struct e2cb_data_sum sum;
	uint64_t entries = 0, inodes = 0, encrypted = 0, bytes = 0;
	uint32_t prev_crc = ~0U, seq = 1;
	uint64_t prev_bytes = 0;
	char path[8192];
	struct rec *r;
	int i;

	for (i = 0; i < t->n; i++) {
		struct entry *e = &t->e[i];

		seal_crc(find(e, "header"));
		r = find(e, "trailer");
		if (r && r->len == E2CB_TRAILER_REC_SIZE) {
			put32(r->val + 8, seq);
			put64(r->val + 16, prev_bytes);
			put32(r->val + 24, prev_crc);
			put64(r->val + 32, entries);
			put64(r->val + 40, inodes);
			put64(r->val + 48, encrypted);
			put64(r->val + 56, bytes);
			seal_crc(r);
		}
		name_to_path(e);
		r = find(e, "inode");
		if (r && r->len == E2CB_INODE_REC_SIZE) {
			entry_path(e, path, sizeof(path));
			put32(r->val + 8, seq++);
			put64(r->val + 120, prev_bytes);
			put32(r->val + 128, prev_crc);
			put32(r->val + 132, e2cb_crc32c(~0U, path,
							strlen(path)));
			seal_crc(r);
			entries++;
			if (!(get32(r->val + 108) & E2CB_IF_HARDLINK)) {
				inodes++;
				if (get32(r->val + 40) & EXT4_ENCRYPT_FL)
					encrypted++;
			}
		}
		seal_blob(find(e, "metadata"));
		seal_blob(find(e, "name"));
		seal_crc(find(e, "xattrs"));
		seal_crc(find(e, "symlink"));
		if (r) {
			data_sum(e, &sum);
			prev_crc = e2cb_sum_final(&sum);
			prev_bytes = sum.bytes;
			bytes += sum.bytes;
		}
	}
}

static size_t put_header(uint8_t *h)
{
	unsigned int sum = 0;
	int i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *) h + 148, 8, "%06o", sum);
	h[155] = ' ';
	return 512;
}

/* The length of a pax record "LEN KEY=VALUE\n", LEN counting itself */
static size_t pax_record_len(const struct rec *r)
{
	size_t n = strlen(r->key) + r->len + 3, digits;
	char num[24];

	for (digits = 1; ; digits++) {
		snprintf(num, sizeof(num), "%zu", n + digits);
		if (strlen(num) == digits)
			return n + digits;
	}
}

static size_t encode(const struct tar *t, uint8_t *out, size_t max)
{
	size_t off = 0, body, n, len;
	uint8_t h[512];
	int i, j;

	for (i = 0; i < t->n; i++) {
		const struct entry *e = &t->e[i];

		if (e->has_pax) {
			body = 0;
			for (j = 0; j < e->nrec; j++)
				body += pax_record_len(&e->rec[j]);
			if (off + 512 + body + 511 > max)
				return 0;
			memset(h, 0, 512);
			memcpy(h, "PaxHeaders/x", 12);
			memcpy(h + 100, "0000644", 7);
			snprintf((char *) h + 124, 12, "%011zo", body);
			h[156] = 'x';
			memcpy(h + 257, "ustar\0" "00", 8);
			put_header(h);
			memcpy(out + off, h, 512);
			off += 512;
			for (j = 0; j < e->nrec; j++) {
				len = snprintf((char *) out + off, 32, "%zu ",
					       pax_record_len(&e->rec[j]));
				off += len;
				len = strlen(e->rec[j].key);
				memcpy(out + off, e->rec[j].key, len);
				off += len;
				out[off++] = '=';
				memcpy(out + off, e->rec[j].val,
				       e->rec[j].len);
				off += e->rec[j].len;
				out[off++] = '\n';
			}
			n = (512 - off % 512) % 512;
			memset(out + off, 0, n);
			off += n;
		}
		if (off + 512 + e->len + 511 + 1024 > max)
			return 0;
		memcpy(h, e->hdr, 512);
		snprintf((char *) h + 124, 12, "%011zo", e->len);
		put_header(h);
		memcpy(out + off, h, 512);
		off += 512;
		memcpy(out + off, e->data, e->len);
		off += e->len;
		n = (512 - off % 512) % 512;
		memset(out + off, 0, n);
		off += n;
	}
	if (off + 1024 > max)
		return 0;
	memset(out + off, 0, 1024);
	return off + 1024;
}

/* Values that make decoders think: ends of ranges, flag bits */
static uint32_t interesting(unsigned int *seed)
{
	static const uint32_t v[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
		0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x800, 0x40000,
		0x10000000, 0x40000000, 040000, 0100000, 0120000, 020000,
		060000, 010000, 0140000, 4096, 1024, 65000, 65001
	};

	return v[rnd(seed) % (sizeof(v) / sizeof(v[0]))];
}

static void mutate_bytes(uint8_t **buf, size_t *len, size_t max,
			 unsigned int *seed)
{
	uint8_t *p = realloc(*buf, max + 1);
	size_t at;

	if (!p)
		abort();
	*buf = p;
	if (*len >= 4 && rnd(seed) % 2) {
		at = rnd(seed) % (*len - 3);
		put32(p + at, interesting(seed));
		p[*len] = 0;
		return;
	}
	*len = LLVMFuzzerMutate(p, *len, max);
	p[*len] = 0;			/* pax_value() reads a string */
}

static void add_rec(struct entry *e, const char *key, const char *val)
{
	struct rec *r;

	if (e->nrec == MAX_RECS)
		return;
	r = &e->rec[e->nrec++];
	r->key = strdup(key);
	r->val = (uint8_t *) strdup(val);
	r->len = strlen(val);
}

/* The inode record's fields (doc/archive-format.txt 7.3), seals aside */
static const int inode_fields[] = {
	12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 84,
	96, 104, 108, 112, 116
};

static void mutate(struct tar *t, unsigned int *seed)
{
	static const char *const keys[] = {
		"path", "linkpath", "size", "GNU.sparse.major",
		"GNU.sparse.minor", "GNU.sparse.name", "GNU.sparse.realsize",
		REC_PREFIX "e2cryptbak.name", REC_PREFIX "e2cryptbak.inode",
		REC_PREFIX "e2cryptbak.xattrs", "hdrcharset", "uid"
	};
	struct entry *e = &t->e[rnd(seed) % t->n], tmp;
	struct rec *r;
	int k, j = e->nrec ? rnd(seed) % e->nrec : 0;

	switch (rnd(seed) % 10) {
	case 0:					/* a field of the inode */
		r = find(e, "inode");
		if (r && r->len == E2CB_INODE_REC_SIZE) {
			k = inode_fields[rnd(seed) % (sizeof(inode_fields) /
						     sizeof(inode_fields[0]))];
			put32(r->val + k, rnd(seed) % 4 ? interesting(seed) :
			      get32(r->val + k) ^ (1U << (rnd(seed) % 32)));
			break;
		}
		/* fall through */
	case 1: case 2: case 3:			/* a record's value */
		if (!e->nrec)
			break;
		r = &e->rec[j];
		mutate_bytes(&r->val, &r->len, r->len + 64, seed);
		break;
	case 4:					/* a keyword */
		if (e->nrec && rnd(seed) % 2) {
			r = &e->rec[j];
			free(r->key);
			r->key = strdup(keys[rnd(seed) % (sizeof(keys) /
							  sizeof(keys[0]))]);
		} else {
			add_rec(e, keys[rnd(seed) % (sizeof(keys) /
						     sizeof(keys[0]))],
				rnd(seed) % 2 ? "1" : "a/b");
		}
		break;
	case 5:					/* a record dropped */
		if (!e->nrec)
			break;
		free(e->rec[j].key);
		free(e->rec[j].val);
		e->rec[j] = e->rec[--e->nrec];
		break;
	case 6:					/* the tar header */
		k = rnd(seed) % 512;
		if (k >= 124 && k < 136)
			k = 156;		/* the size is the data's */
		e->hdr[k] = rnd(seed) % 2 ? interesting(seed) :
			"0123456x/.\0"[rnd(seed) % 11];
		break;
	case 7:					/* the data */
		mutate_bytes(&e->data, &e->len, e->len + 1024, seed);
		break;
	case 8:					/* entries moved */
		k = rnd(seed) % t->n;
		tmp = *e;
		*e = t->e[k];
		t->e[k] = tmp;
		break;
	default:				/* an entry dropped */
		if (t->n < 3)
			break;
		free(e->data);
		for (k = 0; k < e->nrec; k++) {
			free(e->rec[k].key);
			free(e->rec[k].val);
		}
		memmove(e, e + 1, (t->e + t->n - e - 1) * sizeof(*e));
		t->n--;
	}
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
			       unsigned int seed)
{
	struct tar t;
	size_t n = 0;
	uint8_t *out;
	int i, rounds = 1 + rnd(&seed) % 3;

	if (parse_tar(data, size, &t)) {
		free_tar(&t);
		return LLVMFuzzerMutate(data, size, max);
	}
	for (i = 0; i < rounds; i++)
		mutate(&t, &seed);
	reseal(&t);
	out = malloc(max);
	if (!out)
		abort();
	n = encode(&t, out, max);
	if (n)
		memcpy(data, out, n);
	free(out);
	free_tar(&t);
	return n ? n : size;
}

/* Empty ext4 images of 1 KiB and 4 KiB blocks, made once */
static uint8_t *templates[2];

static uint8_t *make_template(unsigned int bs, const char *path)
{
	char cmd[1024];
	uint8_t *t = malloc(TARGET_SIZE);
	int fd;

	/* lazy_itable_init leaves what the file held in the inode tables */
	unlink(path);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -O encrypt -b %u "
		 "-N 1024 -E lazy_itable_init=1,nodiscard %s 16M", bs, path);
	if (!t || fuzz_run(cmd))
		abort();
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, t, TARGET_SIZE, 0) != TARGET_SIZE)
		abort();
	close(fd);
	return t;
}

/* A fresh target of the archive's block size: its non-zero pieces */
static void write_target(const char *archive, const char *path)
{
	static const uint8_t zero[4096];
	struct e2cb_reader *r = NULL;
	unsigned int bs = 4096;
	uint8_t *t;
	size_t off;
	int fd;

	if (!e2cb_reader_open(archive, 0, &r))
		bs = e2cb_reader_header(r)->block_size;
	e2cb_reader_close(r);
	bs = bs == 1024 ? 1024 : 4096;
	t = templates[bs == 4096];
	if (!t)
		t = templates[bs == 4096] = make_template(bs, path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, TARGET_SIZE))
		abort();
	for (off = 0; off < TARGET_SIZE; off += sizeof(zero))
		if (memcmp(t + off, zero, sizeof(zero)) &&
		    pwrite(fd, t + off, sizeof(zero), off) !=
		    (ssize_t) sizeof(zero))
			abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char archive[512], target[512];
	struct e2cb_restore_opts o;

	fuzz_init();
	snprintf(archive, sizeof(archive), "%s", fuzz_path("in.tar"));
	snprintf(target, sizeof(target), "%s", fuzz_path("target.img"));
	if (fuzz_write_file(archive, data, size))
		return 0;
	if (e2cb_verify(archive))
		return 0;
	write_target(archive, target);
	memset(&o, 0, sizeof(o));
	o.archive = archive;
	o.device = target;
	o.path = "/";
	o.set_uuid = 1;
	if (e2cb_restore(&o))
		return 0;
	fuzz_check_target("fuzz_resealed", target);
	return 0;
}
