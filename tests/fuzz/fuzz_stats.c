/* fuzz_stats.c - libFuzzer target: the statistics-region reader, then the tables (usage, leaks,
 * direct, graph, tree) built from the region and from the scan.
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include <stdlib.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_image_run(data, size, FZ_OPEN | FZ_SCAN | FZ_STATS, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	return 0;
}
