/*
 * restore_fault.c --- restore's failing io manager, for the test suite
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <et/com_err.h>
#include "restore.h"

/*
 * For the test suite only (tests/r_takeback): E2CRYPTBAK_TEST_IO_FAIL=E:N
 * fails, with EIO and once, the Nth block read or write of the target
 * made while the writing pass handles its Eth entry (0 the archive's
 * root; E the number of entries: the last directories closed), so that
 * every failure point of every kind of entry can be reached and its
 * take-back checked.  Only the environment sets it, never an archive;
 * restore says so when it fires.  The channel's own manager is kept,
 * with its reads and writes counted first.
 */
static struct {
	uint64_t entry, nth;		/* where to fail */
	uint64_t at, count;		/* the entry now, its requests */
	int set, armed, fired;
	io_manager real;
	struct struct_io_manager shim;
} fault;

static errcode_t fault_hit(void)
{
	if (!fault.armed || fault.fired || ++fault.count != fault.nth)
		return 0;
	fault.fired = 1;
	com_err(program_name, 0, "test: I/O request %llu of entry %llu fails",
		(unsigned long long) fault.nth,
		(unsigned long long) fault.entry);
	return EIO;
}

static errcode_t fault_read_blk(io_channel ch, unsigned long blk, int count,
				void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval : fault.real->read_blk(ch, blk, count, buf);
}

static errcode_t fault_write_blk(io_channel ch, unsigned long blk, int count,
				 const void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval : fault.real->write_blk(ch, blk, count, buf);
}

static errcode_t fault_read_blk64(io_channel ch, unsigned long long blk,
				  int count, void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval :
		fault.real->read_blk64(ch, blk, count, buf);
}

static errcode_t fault_write_blk64(io_channel ch, unsigned long long blk,
				   int count, const void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval :
		fault.real->write_blk64(ch, blk, count, buf);
}

static errcode_t fault_write_byte(io_channel ch, unsigned long off, int size,
				  const void *buf)
{
	errcode_t retval = fault_hit();

	return retval ? retval : fault.real->write_byte(ch, off, size, buf);
}

void e2cb_restore_fault_install(ext2_filsys fs)
{
	const char *spec = getenv("E2CRYPTBAK_TEST_IO_FAIL");
	unsigned long long entry, nth;
	struct struct_io_manager *m = &fault.shim;

	if (!spec || sscanf(spec, "%llu:%llu", &entry, &nth) != 2 || !nth)
		return;
	fault.entry = entry;
	fault.nth = nth;
	fault.set = 1;
	fault.at = -1;
	fault.real = fs->io->manager;
	*m = *fault.real;
	m->read_blk = m->read_blk ? fault_read_blk : NULL;
	m->write_blk = m->write_blk ? fault_write_blk : NULL;
	m->read_blk64 = m->read_blk64 ? fault_read_blk64 : NULL;
	m->write_blk64 = m->write_blk64 ? fault_write_blk64 : NULL;
	m->write_byte = m->write_byte ? fault_write_byte : NULL;
	fs->io->manager = m;
}

/* The writing pass is at entry @entry now (-1: between entries) */
void e2cb_restore_fault_arm(uint64_t entry)
{
	if (!fault.set || entry == fault.at)
		return;
	fault.at = entry;
	fault.armed = entry == fault.entry;
	fault.count = 0;
}
