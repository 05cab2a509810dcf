/* fuzz_all.c - libFuzzer target: every image part at once, as tests/tools/fzrun runs the regression
 * inputs (tests/fuzz/regress/): for replaying them under clang's sanitizers.
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include <stdlib.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_image_run(data, size, FZ_ALL, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	return 0;
}
