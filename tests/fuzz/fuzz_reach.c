/* fuzz_reach.c - libFuzzer target: the lost report's roots (stacks, TLS, data, the statistics
 * region excluded) and its reference walk (mark with parents, refs, links).
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)fz_image_run(data, size, FZ_OPEN | FZ_SCAN | FZ_LOST, NULL);
	return 0;
}
