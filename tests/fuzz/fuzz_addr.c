/* fuzz_addr.c - libFuzzer target: the corruption analysis (guards, damaged headers and
 * their suspects) and --addr's classification of block edges and chosen addresses.
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include <stdlib.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_image_run(data, size, FZ_OPEN | FZ_SCAN | FZ_CORRUPT | FZ_ADDR, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	return 0;
}
