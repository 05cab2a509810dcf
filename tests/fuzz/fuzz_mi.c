/* fuzz_mi.c - libFuzzer target: gdb MI output lines (mi/parse.c) and the walk of
 * their value trees; seeds are the recorded transcripts of fixtures/mi.
 * Built by make fuzz. */
#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_mi_run(data, size);
	return 0;
}
