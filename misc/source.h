/*
 * source.h --- e2cryptbak's stream of entries: sources, and the sinks
 * that consume them (issue 20)
 *
 * A source yields entries (struct e2cb_entry) in archive order: each
 * directory before what it holds, a hard link's first name first.  It
 * is push-style: e2cb_source_run() walks the source from its start and
 * hands each entry to the sink, whose entry() may take the entry's data
 * with e2cb_source_data() before it returns.  Running it again is the
 * rewind: a second pass sees the same entries.  Push-style because the
 * image walk recurses (backup.c); a pull interface would need the walk
 * turned inside out, for no gain to the sinks we have.
 *
 * Who checks what:
 *  - the archive source (source_archive.c) is the reader: every check
 *    of reader*.c applies, and it says the data matches its sums;
 *  - the image and mounted sources (source_walk.c) are backup's walks
 *    (walk.h): what the filesystem holds that cannot be archived is
 *    reported and skipped there, as backup does, and counted in the
 *    trailer;
 *  - the sink checks what it needs of the entries against itself:
 *    restore's first pass checks the whole stream against the target
 *    before its second pass writes.
 * Nothing here assumes libext2fs: a mounted filesystem's source yields
 * the same entries as an image's.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_SOURCE_H
#define E2CB_SOURCE_H

#include <string.h>
#include "archive.h"

struct e2cb_source;

/* e2cb_source_run(): the source failed; its error() says why */
#define E2CB_SOURCE_FAILED	(-1)

/*
 * e2cb_sink.flags: the sink reads the data of each regular file itself,
 * through e2cb_source_data_map(), and says what it cannot read: the
 * source need not read it first to find out.  Where the source gives no
 * map, its data() reads the data and fails, naming the block, on what
 * it cannot read.
 */
#define E2CB_SINK_READS_DATA	0x01
/*
 * The sink makes one pass and asks for no digest: the source need not
 * make them (entry_digest() gives NULL, stream_digest() an error).
 */
#define E2CB_SINK_ONE_PASS	0x02
/*
 * The sink takes no file data: the source need not read it, nor check
 * it (list -k, which makes every check but the data's, as list does).
 */
#define E2CB_SINK_NO_DATA	0x04

struct e2cb_sink {
	/*
	 * Each entry, valid until it returns.  0 goes on; anything else
	 * (positive: an exit status) ends the pass, returned by run.
	 */
	int (*entry)(void *priv, struct e2cb_source *src,
		     const struct e2cb_entry *e);
	void *priv;
	unsigned int flags;
	/*
	 * Optional: the sink's name for the entry at @path (the source's
	 * path, as an archive has it) in what the source reports: a sink
	 * that decrypts names shows the ones it can.  Valid until the
	 * next call.  NULL: @path.
	 */
	const char *(*shown)(void *priv, const char *path);
};

struct e2cb_source_ops {
	/* Start a pass from the beginning; the header is there after */
	errcode_t (*rewind)(struct e2cb_source *s);
	/* The entries of the pass, to the end; see E2CB_SOURCE_FAILED */
	int (*run)(struct e2cb_source *s, const struct e2cb_sink *k);
	/* The data of the entry being handed out, stretch by stretch */
	errcode_t (*data)(struct e2cb_source *s, e2cb_data_func func,
			  void *priv);
	/*
	 * Optional: where the data of the entry being handed out lies, as
	 * stretches of (offset in the entry's data, length, position in
	 * *fd), for a sink whose threads pread() it themselves: the image
	 * (its walk read every block before the entry went out, unless
	 * the sink said E2CB_SINK_READS_DATA), an archive that is a plain
	 * file (what is read must match its sums: data_sum below);
	 * EXT2_ET_UNIMPLEMENTED: take the data through data(); damage
	 * (EXT2_ET_CRYPT_BAD_BLOB): error() says what.  Valid while the
	 * sink holds the entry.
	 */
	errcode_t (*data_map)(struct e2cb_source *s,
			      const struct e2cb_stretch **map, size_t *count,
			      int *fd);
	/*
	 * Optional: a source that checks the data a sink read through
	 * data_map takes back what it read, as it went: the crc32c (from
	 * 0) of the @len bytes at @off of the entry's data, piece after
	 * piece, in order.  What the sink did not hand back the source
	 * reads itself before the next entry, so every check is still
	 * made there, once.  Called from whichever thread writes the
	 * data, one call at a time, while the sink holds the entry.
	 */
	void (*data_sum)(struct e2cb_source *s, uint64_t off, size_t len,
			 uint32_t crc);
	const struct e2cb_header *(*header)(struct e2cb_source *s);
	/* After a pass: what it counted (NULL: none) */
	const struct e2cb_trailer *(*trailer)(struct e2cb_source *s);
	/*
	 * What ties a second pass to the first: a digest of the entry
	 * handed out (of the header before the first entry), and of the
	 * whole stream after the pass.  NULL, or an error: none to give.
	 */
	const uint8_t *(*entry_digest)(struct e2cb_source *s);
	errcode_t (*stream_digest)(struct e2cb_source *s,
				   uint8_t out[E2CB_STREAM_DIGEST_LEN]);
	const char *(*error)(struct e2cb_source *s);
	void (*close)(struct e2cb_source *s);
};

struct e2cb_source {
	const struct e2cb_source_ops *ops;
	const char *shown;		/* for messages */
	int archive;			/* holds what an archive may say */
};

static inline errcode_t e2cb_source_rewind(struct e2cb_source *s)
{
	return s->ops->rewind(s);
}

static inline int e2cb_source_run(struct e2cb_source *s,
				  const struct e2cb_sink *k)
{
	return s->ops->run(s, k);
}

static inline errcode_t e2cb_source_data(struct e2cb_source *s,
					 e2cb_data_func func, void *priv)
{
	return s->ops->data(s, func, priv);
}

static inline errcode_t e2cb_source_data_map(struct e2cb_source *s,
					     const struct e2cb_stretch **map,
					     size_t *count, int *fd)
{
	if (!s->ops->data_map)
		return EXT2_ET_UNIMPLEMENTED;
	return s->ops->data_map(s, map, count, fd);
}

/* Whether what a sink reads through data_map goes back to data_sum */
static inline int e2cb_source_sums_data(struct e2cb_source *s)
{
	return s->ops->data_sum != NULL;
}

static inline void e2cb_source_data_sum(struct e2cb_source *s, uint64_t off,
					size_t len, uint32_t crc)
{
	s->ops->data_sum(s, off, len, crc);
}

static inline const struct e2cb_header *
e2cb_source_header(struct e2cb_source *s)
{
	return s->ops->header(s);
}

static inline const struct e2cb_trailer *
e2cb_source_trailer(struct e2cb_source *s)
{
	return s->ops->trailer(s);
}

static inline const uint8_t *e2cb_source_entry_digest(struct e2cb_source *s)
{
	return s->ops->entry_digest ? s->ops->entry_digest(s) : NULL;
}

static inline errcode_t
e2cb_source_stream_digest(struct e2cb_source *s,
			  uint8_t out[E2CB_STREAM_DIGEST_LEN])
{
	if (s->ops->stream_digest)
		return s->ops->stream_digest(s, out);
	memset(out, 0, E2CB_STREAM_DIGEST_LEN);
	return 0;
}

static inline const char *e2cb_source_error(struct e2cb_source *s)
{
	return s->ops->error(s);
}

static inline void e2cb_source_close(struct e2cb_source *s)
{
	if (s)
		s->ops->close(s);
}

/*
 * source_archive.c: an archive file, or "-" (standard input, spooled
 * to be read twice), for a sink of @flags (E2CB_SINK_*: one pass reads
 * it as it comes, the header read already)
 */
extern errcode_t e2cb_archive_source_open(const char *name,
					  unsigned int flags,
					  struct e2cb_source **ret);

/* source_walk.c: an unmounted ext4 device or image, the subtree PATH */
extern errcode_t e2cb_image_source_open(const char *device, const char *path,
					int stale, struct e2cb_source **ret);
/* Each name of a file whole, with its data: no hard link entries */
extern void e2cb_image_source_every_name(struct e2cb_source *s);
/* The filesystem the image source reads, for what only it holds */
extern ext2_filsys e2cb_image_source_fs(struct e2cb_source *s);

/*
 * source_walk.c: a mounted ext4 filesystem, the directory @dir, through
 * the keyless ioctls of contrib/kernel (issue 22)
 */
extern errcode_t e2cb_online_source_open(const char *dir,
					 struct e2cb_source **ret);

#endif /* E2CB_SOURCE_H */
