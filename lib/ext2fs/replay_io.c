/*
 * replay_io.c --- a copy-on-write io layer over a device opened read-only
 *
 * An image of a filesystem in use must be read as the kernel would see it
 * once mounted, yet the image may be evidence, a snapshot or read-only:
 * it is never written.  This layer answers reads from three places, the
 * newest first: blocks written to it (kept in memory), blocks that the
 * journal replay mapped to their newest copy in the journal (read from
 * the device where the journal holds them), and the device itself.
 *
 * The map is in filesystem blocks (the "unit"); reads and writes may use
 * any block size libext2fs sets, down to the 1024 bytes of the superblock.
 * Writes happen only while the replay builds the layer; afterwards the
 * layer is only read, and may be read from several threads.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "journal_replay.h"
#include <ext2fs/crypt_err.h>

#define NO_SRC		(~0ULL)

struct cow_ent {
	blk64_t		blk;		/* filesystem block; NO_SRC: empty */
	blk64_t		src;		/* its copy on the device, or NO_SRC */
	unsigned char	*data;		/* or its contents, written here */
	int		escape;		/* the journal zeroed its magic */
};

struct replay_private {
	io_channel	real;		/* the device, read-only */
	unsigned int	unit;		/* filesystem block size; 0: no map */
	struct cow_ent	*tab;		/* open addressing, a power of two */
	size_t		size, used;
};

/* An adopted channel: what the next open() of this manager returns */
static io_channel adopted;

static struct struct_io_manager struct_replay_manager;
io_manager replay_io_manager = &struct_replay_manager;

static struct replay_private *priv_of(io_channel channel)
{
	return channel->private_data;
}

static size_t slot_of(const struct replay_private *p, blk64_t blk)
{
	return (size_t) ((blk * 0x9e3779b97f4a7c15ULL) >> 20) &
		(p->size - 1);
}

static struct cow_ent *find_ent(const struct replay_private *p, blk64_t blk)
{
	size_t i;

	if (!p->used)
		return NULL;
	for (i = slot_of(p, blk); p->tab[i].blk != NO_SRC;
	     i = (i + 1) & (p->size - 1))
		if (p->tab[i].blk == blk)
			return &p->tab[i];
	return NULL;
}

static errcode_t grow_tab(struct replay_private *p)
{
	struct cow_ent *old = p->tab;
	size_t i, j, old_size = p->size;
	errcode_t retval;

	retval = ext2fs_get_array(old_size ? old_size * 2 : 1024,
				  sizeof(*p->tab), &p->tab);
	if (retval) {
		p->tab = old;
		return retval;
	}
	p->size = old_size ? old_size * 2 : 1024;
	for (i = 0; i < p->size; i++)
		p->tab[i].blk = NO_SRC;
	for (i = 0; i < old_size; i++) {
		if (old[i].blk == NO_SRC)
			continue;
		for (j = slot_of(p, old[i].blk); p->tab[j].blk != NO_SRC;
		     j = (j + 1) & (p->size - 1))
			;
		p->tab[j] = old[i];
	}
	ext2fs_free_mem(&old);
	return 0;
}

/* The entry of @blk, made empty if there was none */
static errcode_t get_ent(struct replay_private *p, blk64_t blk,
			 struct cow_ent **ret)
{
	struct cow_ent *e = find_ent(p, blk);
	errcode_t retval;
	size_t i;

	if (!e) {
		if ((p->used + 1) * 2 > p->size) {
			retval = grow_tab(p);
			if (retval)
				return retval;
		}
		for (i = slot_of(p, blk); p->tab[i].blk != NO_SRC;
		     i = (i + 1) & (p->size - 1))
			;
		e = &p->tab[i];
		e->blk = blk;
		e->src = NO_SRC;
		e->data = NULL;
		e->escape = 0;
		p->used++;
	}
	*ret = e;
	return 0;
}

/* Read @len bytes at byte @off of the device, whatever its block size */
static errcode_t read_real(struct replay_private *p, unsigned long long off,
			   size_t len, void *buf)
{
	unsigned int bs = p->real->block_size;

	if (off % bs == 0 && len % bs == 0)
		return io_channel_read_blk64(p->real, off / bs,
					     (int) (len / bs), buf);
	return io_channel_read_blk64(p->real, off / bs, -(int) len, buf);
}

/* The unit @e stands for, as the replay left it */
static errcode_t read_unit(struct replay_private *p, const struct cow_ent *e,
			   unsigned char *buf)
{
	static const unsigned char magic[4] = { 0xc0, 0x3b, 0x39, 0x98 };
	errcode_t retval;

	if (e->data) {
		memcpy(buf, e->data, p->unit);
		return 0;
	}
	retval = read_real(p, e->src * p->unit, p->unit, buf);
	if (!retval && e->escape)
		memcpy(buf, magic, sizeof(magic));
	return retval;
}

static errcode_t replay_read(io_channel channel, unsigned long long block,
			     int count, void *data)
{
	struct replay_private *p = priv_of(channel);
	unsigned long long off = block * channel->block_size, u, end;
	size_t len = count < 0 ? (size_t) -count :
		(size_t) count * channel->block_size;
	unsigned char *unit_buf = NULL, *dst = data;
	const struct cow_ent *e;
	errcode_t retval;

	retval = read_real(p, off, len, data);
	if (retval || !p->used)
		return retval;
	end = off + len;
	for (u = off / p->unit; u * p->unit < end; u++) {
		unsigned long long from, to;

		e = find_ent(p, u);
		if (!e)
			continue;
		if (!unit_buf) {
			retval = ext2fs_get_mem(p->unit, &unit_buf);
			if (retval)
				return retval;
		}
		retval = read_unit(p, e, unit_buf);
		if (retval)
			break;
		from = u * p->unit > off ? u * p->unit : off;
		to = (u + 1) * p->unit < end ? (u + 1) * p->unit : end;
		memcpy(dst + (from - off), unit_buf + (from - u * p->unit),
		       to - from);
	}
	ext2fs_free_mem(&unit_buf);
	return retval;
}

static errcode_t replay_read32(io_channel channel, unsigned long block,
			       int count, void *data)
{
	return replay_read(channel, block, count, data);
}

/* Writes go into memory, a unit at a time: the device is never written */
static errcode_t write_bytes(io_channel channel, unsigned long long off,
			     size_t len, const void *data)
{
	struct replay_private *p = priv_of(channel);
	const unsigned char *src = data;
	unsigned long long u, end = off + len;
	struct cow_ent *e;
	errcode_t retval;

	if (!p->unit)
		return EXT2_ET_OP_NOT_SUPPORTED;
	for (u = off / p->unit; u * p->unit < end; u++) {
		unsigned long long from, to;

		retval = get_ent(p, u, &e);
		if (retval)
			return retval;
		if (!e->data) {
			retval = ext2fs_get_mem(p->unit, &e->data);
			if (retval)
				return retval;
			if (e->src != NO_SRC)
				retval = read_unit(p, e, e->data);
			else
				retval = read_real(p, u * p->unit, p->unit,
						   e->data);
			if (retval) {
				ext2fs_free_mem(&e->data);
				return retval;
			}
		}
		from = u * p->unit > off ? u * p->unit : off;
		to = (u + 1) * p->unit < end ? (u + 1) * p->unit : end;
		memcpy(e->data + (from - u * p->unit), src + (from - off),
		       to - from);
	}
	return 0;
}

static errcode_t replay_write(io_channel channel, unsigned long long block,
			      int count, const void *data)
{
	size_t len = count < 0 ? (size_t) -count :
		(size_t) count * channel->block_size;

	return write_bytes(channel, block * channel->block_size, len, data);
}

static errcode_t replay_write32(io_channel channel, unsigned long block,
				int count, const void *data)
{
	return replay_write(channel, block, count, data);
}

static errcode_t replay_write_byte(io_channel channel, unsigned long offset,
				   int size, const void *data)
{
	return write_bytes(channel, offset, size, data);
}

/*
 * Map filesystem block @blk to device block @src, where the journal keeps
 * its newest copy (@escape: the journal zeroed the copy's first four bytes,
 * which were the jbd2 magic).  A later map of the same block wins, as a
 * later transaction's copy does in the kernel's replay.
 */
errcode_t ext2fs_replay_io_map(io_channel channel, blk64_t blk, blk64_t src,
			       int escape)
{
	struct replay_private *p;
	struct cow_ent *e;
	errcode_t retval;

	EXT2_CHECK_MAGIC(channel, EXT2_ET_MAGIC_IO_CHANNEL);
	if (channel->manager != replay_io_manager)
		return EXT2_ET_OP_NOT_SUPPORTED;
	p = priv_of(channel);
	if (!p->unit)
		return EXT2_ET_INVALID_ARGUMENT;
	retval = get_ent(p, blk, &e);
	if (retval)
		return retval;
	ext2fs_free_mem(&e->data);
	e->src = src;
	e->escape = escape;
	return 0;
}

/* The map's unit: the filesystem's block size, before any map or write */
errcode_t ext2fs_replay_io_set_unit(io_channel channel, unsigned int unit)
{
	struct replay_private *p;

	EXT2_CHECK_MAGIC(channel, EXT2_ET_MAGIC_IO_CHANNEL);
	if (channel->manager != replay_io_manager)
		return EXT2_ET_OP_NOT_SUPPORTED;
	p = priv_of(channel);
	if (p->used && p->unit != unit)
		return EXT2_ET_INVALID_ARGUMENT;
	p->unit = unit;
	return 0;
}

/* Whether any of @count blocks at @blk (in units) differs from the device */
int ext2fs_replay_io_changed(io_channel channel, blk64_t blk, blk64_t count)
{
	struct replay_private *p;

	if (!channel || channel->manager != replay_io_manager)
		return 0;
	p = priv_of(channel);
	if (!p->used)
		return 0;
	for (; count; count--, blk++)
		if (find_ent(p, blk))
			return 1;
	return 0;
}

/* Blocks that differ from the device: for messages */
unsigned long long ext2fs_replay_io_count(io_channel channel)
{
	if (!channel || channel->manager != replay_io_manager)
		return 0;
	return priv_of(channel)->used;
}

/*
 * Make the next open() of replay_io_manager return @channel, already
 * filled, so that ext2fs_open2() reads the replayed superblock.  Returns
 * the channel that was waiting and was not opened, if any.
 */
io_channel ext2fs_replay_io_adopt(io_channel channel)
{
	io_channel left = adopted;

	adopted = channel;
	return left;
}

static errcode_t replay_open(const char *name, int flags,
			     io_channel *channel)
{
	struct replay_private *p = NULL;
	io_channel io = NULL;
	errcode_t retval;

	if (!name)
		return EXT2_ET_BAD_DEVICE_NAME;
	if (adopted) {
		if (strcmp(adopted->name, name))
			return EXT2_ET_BAD_DEVICE_NAME;
		*channel = adopted;
		adopted = NULL;
		return 0;
	}
	retval = ext2fs_get_memzero(sizeof(*io), &io);
	if (retval)
		goto errout;
	retval = ext2fs_get_memzero(sizeof(*p), &p);
	if (retval)
		goto errout;
	retval = ext2fs_get_mem(strlen(name) + 1, &io->name);
	if (retval)
		goto errout;
	strcpy(io->name, name);
	/* never opened for writing, whatever the caller asks */
	retval = unix_io_manager->open(name, flags & ~(IO_FLAG_RW |
						       IO_FLAG_EXCLUSIVE),
				       &p->real);
	if (retval)
		goto errout;
	io->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	io->manager = replay_io_manager;
	io->block_size = p->real->block_size;
	io->refcount = 1;
	io->flags = p->real->flags;
	io->private_data = p;
	*channel = io;
	return 0;

errout:
	if (io)
		ext2fs_free_mem(&io->name);
	ext2fs_free_mem(&p);
	ext2fs_free_mem(&io);
	return retval;
}

static errcode_t replay_close(io_channel channel)
{
	struct replay_private *p;
	size_t i;

	EXT2_CHECK_MAGIC(channel, EXT2_ET_MAGIC_IO_CHANNEL);
	if (--channel->refcount > 0)
		return 0;
	p = priv_of(channel);
	for (i = 0; i < p->size; i++)
		if (p->tab[i].blk != NO_SRC)
			ext2fs_free_mem(&p->tab[i].data);
	ext2fs_free_mem(&p->tab);
	io_channel_close(p->real);
	ext2fs_free_mem(&p);
	ext2fs_free_mem(&channel->name);
	ext2fs_free_mem(&channel);
	return 0;
}

static errcode_t replay_set_blksize(io_channel channel, int blksize)
{
	errcode_t retval;

	retval = io_channel_set_blksize(priv_of(channel)->real, blksize);
	if (!retval)
		channel->block_size = blksize;
	return retval;
}

static errcode_t replay_flush(io_channel channel)
{
	(void) channel;
	return 0;		/* nothing ever goes to the device */
}

static errcode_t replay_set_option(io_channel channel, const char *option,
				   const char *arg)
{
	io_channel real = priv_of(channel)->real;

	if (!real->manager->set_option)
		return EXT2_ET_INVALID_ARGUMENT;
	return real->manager->set_option(real, option, arg);
}

static errcode_t replay_get_stats(io_channel channel, io_stats *stats)
{
	io_channel real = priv_of(channel)->real;

	if (real->manager->get_stats)
		return real->manager->get_stats(real, stats);
	return EXT2_ET_OP_NOT_SUPPORTED;
}

static errcode_t replay_readahead(io_channel channel,
				  unsigned long long block,
				  unsigned long long count)
{
	return io_channel_cache_readahead(priv_of(channel)->real, block,
					  count);
}

static struct struct_io_manager struct_replay_manager = {
	.magic		= EXT2_ET_MAGIC_IO_MANAGER,
	.name		= "Journal replay I/O Manager",
	.open		= replay_open,
	.close		= replay_close,
	.set_blksize	= replay_set_blksize,
	.read_blk	= replay_read32,
	.write_blk	= replay_write32,
	.flush		= replay_flush,
	.write_byte	= replay_write_byte,
	.set_option	= replay_set_option,
	.get_stats	= replay_get_stats,
	.read_blk64	= replay_read,
	.write_blk64	= replay_write,
	.cache_readahead = replay_readahead,
};
