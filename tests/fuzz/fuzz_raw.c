/* fuzz_raw.c - libFuzzer target: the raw-dump reader and the scan of a raw dump.
 * Input: byte 0: word size in the low nibble (4, else 8), bit 7 big-endian; bytes
 * 1..8: the base address, little-endian; the dump follows (tests/fuzz/fz.h with
 * the raw selector byte left out). Built by make fuzz. */
#include <stdlib.h>
#include <string.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + 1);

	if (!buf)
		return 0;
	buf[0] = 3;   /* the raw selector of fz.h */
	memcpy(buf + 1, data, size);
	if (fz_image_run(buf, size + 1, FZ_OPEN | FZ_SCAN | FZ_CORRUPT, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	free(buf);
	return 0;
}
