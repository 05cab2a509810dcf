/* hunt6_finilib.c - a shared library that allocates in its constructor and
 * frees in its destructor (both __attribute__), as a C library's set-up and
 * tear-down do. ld.so runs the destructor after libheapann's own (it
 * finalizes the preload before the libraries it initialized after it): the
 * exit snapshot must still come after it, and not see the block. Built by
 * tests/run-hunt6-exit.sh. */
#include <stdlib.h>

static void *volatile fini_block;

__attribute__((constructor)) static void finilib_init(void)
{
	fini_block = malloc(3333);
}

__attribute__((destructor)) static void finilib_fini(void)
{
	free(fini_block);
	fini_block = NULL;
}

/* Whether the constructor's block is there (so that the program needs us). */
int finilib_ready(void)
{
	return fini_block != NULL;
}
