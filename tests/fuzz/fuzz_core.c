/* fuzz_core.c - libFuzzer target: the ELF core reader: program headers, notes (NT_PRSTATUS, NT_FILE,
 * NT_AUXV, NT_PRPSINFO), the main module, build-ids and the check against a program.
 * Input format: tests/fuzz/fz.h. Built by make fuzz; run by make fuzz-smoke. */
#include <stdlib.h>

#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz_image_run(data, size, FZ_OPEN, NULL) < 0)
		abort();   /* no memfd: out of descriptors */
	return 0;
}
