/* e2e_lib.c - a shared library that allocates for its caller (run-e2e.sh). */
#include <stdlib.h>

void *lib_alloc(size_t n)
{
	void *p = malloc(n); /* MARK:lib */
	__asm__ volatile("" ::: "memory");
	return p;
}
