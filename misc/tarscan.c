/*
 * tarscan.c --- check the tar stream before libarchive parses it
 *
 * libarchive allocates as a tar header says: a GNU sparse map of 50
 * million entries, 200 MB of "0\n" that compress into 19 KB, took
 * 2.35 GB before the reader saw the entry.  Every byte handed to
 * libarchive goes through here first.  Headers are followed as
 * libarchive follows them; what e2cryptbak never writes and what
 * would cost memory beyond the documented limits is refused while it
 * is still on its way.  The reader checks before each header that
 * libarchive starts it where we did (e2cb_tarscan_expect), so the two
 * never read the stream differently.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <ctype.h>
#include "archive.h"

enum { S_HEADER, S_PAX, S_MAP, S_DATA, S_END };

static int scan_fail(struct e2cb_tarscan *s, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(s->err, sizeof(s->err), "at byte %llu of the tar stream: %s",
		 (unsigned long long) s->pos, msg);
	s->failed = 1;
	s->fail_at = s->entry_start;
	return -1;
}

static void reset_entry(struct e2cb_tarscan *s)
{
	s->in_pax = 0;
	s->size = -1;
	s->sparse_major = s->sparse_minor = -1;
	s->name_slash = s->path_slash = -1;
}

static int push_start(struct e2cb_tarscan *s)
{
	if (s->qlen == E2CB_SCAN_QUEUE)
		return scan_fail(s, "too many entries read ahead");
	s->queue[(s->qhead + s->qlen++) % E2CB_SCAN_QUEUE] = s->pos;
	s->entry_start = s->pos;
	s->state = S_HEADER;
	s->have = 0;
	return 0;
}

void e2cb_tarscan_init(struct e2cb_tarscan *s)
{
	memset(s, 0, sizeof(*s));
	reset_entry(s);
	push_start(s);
}

void e2cb_tarscan_free(struct e2cb_tarscan *s)
{
	free(s->pax);
	s->pax = NULL;
}

/* libarchive's tar_atol(): octal, or base-256 when the top bit is set */
static int64_t tar_number(const uint8_t *p, size_t n)
{
	uint64_t v;
	uint8_t c = p[0];

	if (c & 0x80) {
		if (c & 0x40)		/* negative */
			return -1;
		c &= 0x7f;
		for (; n > 8; n--) {
			if (c)
				return INT64_MAX;
			c = *++p;
		}
		if (c & 0x80)
			return INT64_MAX;
		for (v = c; --n; )
			v = (v << 8) | *++p;
		return (int64_t) v;
	}
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (n && *p == '-')
		return -1;
	for (v = 0; n && *p >= '0' && *p <= '7'; n--, p++) {
		if (v > (uint64_t) INT64_MAX >> 3)
			return INT64_MAX;
		v = v * 8 + (*p - '0');
	}
	return (int64_t) v;
}

/*
 * Either of libarchive's two sums: unsigned, or signed bytes.  Every
 * header of both of restore's passes comes here: eight bytes at a
 * time (-O2 does not vectorize the byte loop), the signed sum derived
 * from the count of bytes >= 0x80.  16-bit lanes: 64 words of at most
 * 2 * 255 each.
 */
static int checksum_ok(const uint8_t *h)
{
	const uint64_t lo = 0x00ff00ff00ff00ffULL;
	int64_t want = tar_number(h + 148, 8);
	uint64_t w, sums = 0, highs = 0;
	long usum = 0, high = 0, ssum;
	int i;

	for (i = 0; i < 512; i += 8) {
		memcpy(&w, h + i, 8);
		sums += (w & lo) + ((w >> 8) & lo);
		highs += (w >> 7) & 0x0101010101010101ULL;
	}
	highs = (highs & lo) + ((highs >> 8) & lo);
	for (i = 0; i < 64; i += 16) {
		usum += (sums >> i) & 0xffff;
		high += (highs >> i) & 0xffff;
	}
	/* the sum's own field counts as spaces */
	for (i = 148; i < 156; i++) {
		usum += ' ' - h[i];
		high -= h[i] >> 7;
	}
	ssum = usum - 256 * high;
	return want == usum || want == ssum;
}

/* A decimal value, all digits; -1 if it is not one */
static int64_t decimal(const char *p, size_t len)
{
	uint64_t v = 0;

	if (!len || len > 18)
		return -1;
	for (; len; len--, p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int64_t) v;
}

/* libarchive keeps a path up to its first NUL */
static int ends_in_slash(const char *v, size_t len)
{
	len = strnlen(v, len);
	return len && v[len - 1] == '/';
}

static int pax_keyword(struct e2cb_tarscan *s, const char *key,
		       const char *v, size_t vlen)
{
	static const char *const refused[] = {
		"GNU.sparse.numblocks", "GNU.sparse.offset",
		"GNU.sparse.numbytes", "GNU.sparse.map", "GNU.sparse.size",
		"SUN.holesdata", NULL
	};
	int64_t n;
	int i;

	for (i = 0; refused[i]; i++)
		if (!strcmp(key, refused[i]))
			return scan_fail(s, "a sparse map of a format "
					 "e2cryptbak does not write (%s)",
					 key);
	if (!strncmp(key, "SCHILY.acl.", 11))
		return scan_fail(s, "a tar ACL (%s): e2cryptbak carries "
				 "ACLs in its xattr record", key);
	if (!strcmp(key, "size")) {
		s->size = decimal(v, vlen);
		if (s->size < 0)
			return scan_fail(s, "a pax size that is not a "
					 "number");
	} else if (!strcmp(key, "GNU.sparse.major") ||
		   !strcmp(key, "GNU.sparse.minor")) {
		n = decimal(v, vlen);
		if (n < 0 || n > 9)
			return scan_fail(s, "a bad %s", key);
		if (key[11] == 'm' && key[12] == 'a')
			s->sparse_major = n;
		else
			s->sparse_minor = n;
	} else if (!strcmp(key, "GNU.sparse.name")) {
		s->name_slash = ends_in_slash(v, vlen);
	} else if (!strcmp(key, "path")) {
		s->path_slash = ends_in_slash(v, vlen);
	}
	return 0;
}

/* The records "LEN KEY=VALUE\n", parsed as libarchive's pax_header() */
static int parse_pax(struct e2cb_tarscan *s)
{
	char *p = s->pax, *end = s->pax + s->pax_len, *key, *eq;
	size_t len;

	while (p < end) {
		len = 0;
		key = p;
		while (key < end && *key >= '0' && *key <= '9' &&
		       len <= 999999)
			len = len * 10 + (*key++ - '0');
		/* libarchive ignores the rest of the header past such */
		if (len > 999999)
			return scan_fail(s, "a pax record of more than "
					 "999999 bytes");
		if (key == p || key == end || *key != ' ' || len < 1 ||
		    len > (size_t) (end - p) || p[len - 1] != '\n')
			return scan_fail(s, "a malformed pax header");
		key++;
		p[len - 1] = 0;
		eq = memchr(key, '=', p + len - 1 - key);
		if (!eq || eq == key || memchr(key, 0, eq - key))
			return scan_fail(s, "a malformed pax header");
		*eq = 0;
		if (pax_keyword(s, key, eq + 1, p + len - 1 - (eq + 1)))
			return -1;
		p += len;
	}
	return 0;
}

static uint64_t round512(uint64_t n)
{
	return (n + 511) & ~(uint64_t) 511;
}

/* The entry's header is whole: what comes next, and how long */
static int ustar_header(struct e2cb_tarscan *s)
{
	const uint8_t *h = s->block;
	const char *name = (const char *) h;
	int type = h[156], slash;
	int64_t size;

	if (!strchr("0123456", type) || !type) {
		if (type == 'x')
			return scan_fail(s, "two pax headers for one entry");
		return scan_fail(s, isprint(type) ? "a tar entry of type "
				 "'%c', which e2cryptbak does not write" :
				 "a tar entry of type 0x%02x, which "
				 "e2cryptbak does not write", type);
	}
	if (memcmp(h + 257, "ustar", 6))
		return scan_fail(s, "a tar header that is not POSIX ustar");
	size = tar_number(h + 124, 12);
	if (size < 0 || size == INT64_MAX)
		return scan_fail(s, "a tar header with a bad size");
	if (s->size >= 0)
		size = s->size;
	else if (type >= '2')
		size = 0;
	if (type == '1' && size && !s->pax_seen)
		return scan_fail(s, "a hard link with data outside pax");
	/* libarchive takes a regular file named "x/" as a directory */
	slash = s->name_slash >= 0 ? s->name_slash :
		s->path_slash >= 0 ? s->path_slash :
		ends_in_slash(name, 100) ||
		(!strnlen(name, 100) && h[345]);
	if (type == '0' && slash)
		size = 0;
	s->end = s->pos + round512(size);
	s->have = 0;
	s->header_done = 1;
	if (s->sparse_major >= 0 || s->sparse_minor >= 0) {
		if (s->sparse_major != 1 || s->sparse_minor != 0 ||
		    type != '0')
			return scan_fail(s, "a sparse map of a format "
					 "e2cryptbak does not write");
		s->state = S_MAP;
	} else {
		s->state = S_DATA;
	}
	reset_entry(s);
	if (s->state == S_DATA && s->pos == s->end)
		return push_start(s);
	return 0;
}

static int header_block(struct e2cb_tarscan *s)
{
	const uint8_t *h = s->block;
	int64_t size;
	size_t i;
	int sum_ok;

	for (i = 0; i < 512 && !h[i]; i++)
		;
	if (i == 512 && !s->in_pax) {
		/* the end-of-archive marker: libarchive reads no further */
		s->state = S_END;
		return 0;
	}
	sum_ok = checksum_ok(h);
	if (!sum_ok && s->pos == 512) {
		/* not tar at all: libarchive will not take it either */
		s->state = S_END;
		return 0;
	}
	if (!sum_ok)
		return scan_fail(s, "a tar header whose checksum is wrong");
	if (h[156] != 'x' || s->in_pax)
		return ustar_header(s);
	size = tar_number(h + 124, 12);
	if (size < 0 || (uint64_t) size > E2CB_MAX_PAX_HEADER)
		return scan_fail(s, "a pax header of %lld bytes, over the "
				 "limit of %u", (long long) size,
				 E2CB_MAX_PAX_HEADER);
	if (!s->pax) {
		s->pax = malloc(E2CB_MAX_PAX_HEADER);
		if (!s->pax)
			return scan_fail(s, "out of memory");
	}
	s->pax_len = size;
	s->pax_have = 0;
	s->end = s->pos + round512(size);
	s->state = S_PAX;
	s->pax_seen = 1;
	return 0;
}

/* One line of the sparse map is whole in s->line */
static int map_line(struct e2cb_tarscan *s)
{
	int64_t n;

	if (s->line[0] == '#')
		return 0;
	n = decimal(s->line, s->have - 1);
	if (n < 0)
		return scan_fail(s, "a sparse map that does not begin with "
				 "its length");
	if (n > E2CB_MAX_STRETCHES)
		return scan_fail(s, "a sparse map of %lld data stretches, "
				 "over the limit of %u per entry",
				 (long long) n, E2CB_MAX_STRETCHES);
	s->state = S_DATA;
	return 0;
}

/*
 * Check @len bytes more of the stream.  -1 when they hold what is
 * refused; the entries before it may still be read: s->fail_at is
 * where the refused one starts.
 */
int e2cb_tarscan_feed(struct e2cb_tarscan *s, const void *buf, size_t len)
{
	const uint8_t *p = buf, *run = NULL;
	size_t n;
	int data;

	if (s->failed)
		return -1;
	while (len) {
		/* what is not an entry's data goes to s->seen, in runs */
		data = s->state == S_DATA;
		if (s->seen && data && run) {
			s->seen(s->seen_priv, run, p - run);
			run = NULL;
		} else if (s->seen && !data && !run) {
			run = p;
		}
		switch (s->state) {
		case S_END:
			s->pos += len;
			p += len;
			len = 0;
			continue;
		case S_HEADER:
			n = 512 - s->have;
			n = n < len ? n : len;
			memcpy(s->block + s->have, p, n);
			s->have += n;
			s->pos += n;
			if (s->have == 512 && header_block(s))
				return -1;
			break;
		case S_PAX:
			n = s->end - s->pos < len ? s->end - s->pos : len;
			if (s->pax_have < s->pax_len) {
				n = s->pax_len - s->pax_have < n ?
					s->pax_len - s->pax_have : n;
				memcpy(s->pax + s->pax_have, p, n);
				s->pax_have += n;
			}
			s->pos += n;
			if (s->pos == s->end) {
				if (parse_pax(s))
					return -1;
				s->state = S_HEADER;
				s->have = 0;
				s->in_pax = 1;
			}
			break;
		case S_MAP:
			if (s->pos == s->end)
				return scan_fail(s, "a sparse map that ends "
						 "before its length");
			n = 1;
			s->line[s->have++] = *p;
			s->pos++;
			if (*p == '\n') {
				if (map_line(s))
					return -1;
				s->have = 0;
			} else if (s->have == 100) {
				return scan_fail(s, "a sparse map with a "
						 "line too long");
			}
			if (s->state == S_DATA && s->pos == s->end &&
			    push_start(s))
				return -1;
			break;
		default:
			n = s->end - s->pos < len ? s->end - s->pos : len;
			s->pos += n;
			if (s->pos == s->end && push_start(s))
				return -1;
			break;
		}
		p += n;
		len -= n;
		/* the pieces of each entry's header go out before its end */
		if (s->header_done) {
			s->header_done = 0;
			if (run)
				s->seen(s->seen_priv, run, p - run);
			run = NULL;
			if (s->header_end)
				s->header_end(s->seen_priv);
		}
	}
	if (run)
		s->seen(s->seen_priv, run, p - run);
	return 0;
}

/* Bytes that may be skipped unseen: the data of the entry */
uint64_t e2cb_tarscan_skippable(const struct e2cb_tarscan *s)
{
	return s->state == S_DATA && !s->failed ? s->end - s->pos : 0;
}

void e2cb_tarscan_skip(struct e2cb_tarscan *s, uint64_t len)
{
	s->pos += len;
	if (s->state == S_DATA && s->pos == s->end)
		push_start(s);
}

/*
 * libarchive is about to read a header at @pos: it must be the next
 * entry start we found, or the two of us read different streams.
 */
int e2cb_tarscan_expect(struct e2cb_tarscan *s, uint64_t pos)
{
	if (s->failed && pos >= s->fail_at)
		return -1;
	if (s->state == S_END && !s->qlen)
		return 0;
	if (!s->qlen || s->queue[s->qhead] != pos)
		return scan_fail(s, "the tar stream is not laid out as its "
				 "headers say (an entry at byte %llu)",
				 (unsigned long long) pos);
	s->qhead = (s->qhead + 1) % E2CB_SCAN_QUEUE;
	s->qlen--;
	return 0;
}
