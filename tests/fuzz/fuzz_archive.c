/*
 * fuzz_archive.c --- the archive reader, as verify, list, list -k and
 * extract use it
 *
 * The input is an archive (compressed or not).  Built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION the checksums pass, so a
 * mutation gets past them to the decoders they guard.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char archive[512], out[512];

	fuzz_init();
	snprintf(archive, sizeof(archive), "%s", fuzz_path("in.tar"));
	snprintf(out, sizeof(out), "%s", fuzz_path("out"));
	if (fuzz_write_file(archive, data, size))
		return 0;
	e2cb_verify(archive);
	e2cb_list(archive, 1, NULL, 0);
	fuzz_extract(archive, out, 1);
	fuzz_extract(archive, out, 0);
	fuzz_remove_tree(out);
	return 0;
}
