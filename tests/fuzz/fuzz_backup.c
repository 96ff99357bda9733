/*
 * fuzz_backup.c --- the filesystem reader, as backup uses it
 *
 * The input is an image in the chunk format of fuzz.h (the seeds are
 * the metadata of the kernel-made fixtures); metadata_csum is cleared
 * unless the flags byte keeps it, so that mutations reach the readers
 * instead of stopping at libext2fs' checksums.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct e2cb_backup_opts o;
	char image[512], archive[512];
	int flags;

	fuzz_init();
	snprintf(image, sizeof(image), "%s", fuzz_path("in.img"));
	snprintf(archive, sizeof(archive), "%s", fuzz_path("out.tar"));
	if (fuzz_write_image(image, data, size, &flags))
		return 0;
	if (!(flags & FUZZ_IMG_KEEP_CSUM))
		fuzz_clear_csum(image);
	memset(&o, 0, sizeof(o));
	o.device = image;
	o.output = archive;
	o.path = "/";
	e2cb_backup(&o);
	remove(archive);
	return 0;
}
