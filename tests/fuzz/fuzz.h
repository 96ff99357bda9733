/*
 * fuzz.h --- what the e2cryptbak fuzz harnesses share
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_FUZZ_H
#define E2CB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include "e2cryptbak.h"

/*
 * A filesystem image input: one flags byte, then records of a le32
 * 1 KiB chunk number and the chunk's 1024 bytes; chunks not given are
 * zero.  The seeds are the metadata of the kernel-made fixtures.
 */
#define FUZZ_CHUNK		1024
#define FUZZ_IMAGE_SIZE		(32 * 1024 * 1024)
#define FUZZ_IMG_KEEP_CSUM	0x01	/* else metadata_csum is cleared */
#define FUZZ_IMG_LIST_ONLY	0x02	/* extract harness: list -k only */

/* the fixtures' test-only keys (tests/fixtures/NAME/keys) */
#define FUZZ_MAX_KEYS		32
extern const char *fuzz_keys[FUZZ_MAX_KEYS];
extern int fuzz_nkeys;

/* libFuzzer calls it */
extern int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* fuzz_resealed: its own mutator, and libFuzzer's that it calls */
extern size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
				      size_t max, unsigned int seed);
extern size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

extern void fuzz_init(void);
extern const char *fuzz_path(const char *name);
extern int fuzz_write_file(const char *path, const uint8_t *data,
			   size_t size);
extern int fuzz_write_image(const char *path, const uint8_t *data,
			    size_t size, int *flags);
extern void fuzz_remove_tree(const char *path);
extern void fuzz_clear_csum(const char *path);
extern int fuzz_extract(const char *source, const char *dir, int list_only);
extern int fuzz_run(const char *cmd);
extern void fuzz_check_target(const char *who, const char *target);

#endif /* E2CB_FUZZ_H */
