/* fuzz_scan.c - libFuzzer target: the block scan over a core or a raw dump (byte 0 bit 0x20: 4 KiB
 * chunks, so that headers straddle chunk boundaries).
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include <stdlib.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_image_run(data, size, FZ_OPEN | FZ_SCAN, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	return 0;
}
