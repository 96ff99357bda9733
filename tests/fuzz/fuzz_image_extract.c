/*
 * fuzz_image_extract.c --- extract and list -k straight from an image
 *
 * The input is an image in the chunk format of fuzz.h; the fixtures'
 * keys are given, so names and contents are decrypted.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char image[512], out[512];
	int flags;

	fuzz_init();
	snprintf(image, sizeof(image), "%s", fuzz_path("in.img"));
	snprintf(out, sizeof(out), "%s", fuzz_path("out"));
	if (fuzz_write_image(image, data, size, &flags))
		return 0;
	if (!(flags & FUZZ_IMG_KEEP_CSUM))
		fuzz_clear_csum(image);
	fuzz_extract(image, out, flags & FUZZ_IMG_LIST_ONLY);
	fuzz_remove_tree(out);
	return 0;
}
