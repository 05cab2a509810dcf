/* dlmod_dep.c - a dependency of tests/prog/dlmod_lib.c: loaded with it and
 * unloaded with it, by the dlclose of tests/prog/dlmod.c. */
#include <stdlib.h>
#include <string.h>

int dm_dep_line;   /* the line of the malloc call below */

/* Allocate n bytes filled with 2. */
void *dm_dep_alloc(size_t n)
{
	void *p = malloc(n); dm_dep_line = __LINE__;

	if (p)
		memset(p, 2, n);
	return p;
}
