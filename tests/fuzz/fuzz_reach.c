/* fuzz_reach.c - libFuzzer target: the lost report's roots (stacks, TLS, data, the statistics
 * region excluded) and its reference walk (mark with parents, refs, links).
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include <stdlib.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_image_run(data, size, FZ_OPEN | FZ_SCAN | FZ_LOST, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	return 0;
}
