/* fuzz_symdw.c - libFuzzer target: the libdw symbolizer's index over a mutated
 * program ELF (symbol tables, DWARF lines and scopes), resolving addresses from
 * its entry point and its last bytes. Built by make fuzz. */
#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_symdw_run(data, size);
	return 0;
}
