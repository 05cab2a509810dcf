/* dlmod_lib.c - the library tests/prog/dlmod.c dlopens and then dlcloses
 * (linked with tests/prog/dlmod_dep.c, which goes with it). Every block it
 * allocates has its stack in it; dm_lines tells the lines of its calls.
 * Built with -DDM_VARIANT: another build of it (another build-id). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dm_dep_alloc(size_t n);
extern int dm_dep_line;

static int line_fill, line_lost, line_kept, line_dep;

/* Allocate n bytes, filled with 1. */
__attribute__((noinline)) static void *dm_fill(size_t n)
{
	void *p = malloc(n); line_fill = __LINE__;

	if (p)
		memset(p, 1, n);
	return p;
}

/* Leak a block of n + 1000 bytes and one of 555 bytes (from the dependency);
 * return another of n bytes (the caller's). */
void *dm_make(size_t n)
{
	void *lost = dm_fill(n + 1000); line_lost = __LINE__;
	void *dep = dm_dep_alloc(555); line_dep = __LINE__;
	void *kept = dm_fill(n); line_kept = __LINE__;

	(void)lost;
	(void)dep;
	return kept;
}

/* Print the lines of the calls ("lines FILL LOST KEPT DEP DEPMALLOC"). */
void dm_lines(void)
{
	printf("lines %d %d %d %d %d\n", line_fill, line_lost, line_kept, line_dep, dm_dep_line);
}

#ifdef DM_VARIANT
/* Only in the other build. */
int dm_variant(int x)
{
	return x * 7;
}
#endif
