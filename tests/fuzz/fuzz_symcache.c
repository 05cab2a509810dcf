/* fuzz_symcache.c - libFuzzer target: the libdw symbolizer's cache file reader
 * (sym/dw_cache.c) on a mutated file whose size and checksum are made right, so
 * that every offset and index check is reached; lookups on what it accepts.
 * Built by make fuzz; seeds in tests/fuzz/corpus/symcache. */
#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];

	(void)fz_symcache_run(data, size, why, sizeof(why));
	return 0;
}
