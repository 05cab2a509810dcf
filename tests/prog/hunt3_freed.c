/* hunt3_freed.c - heap damage that libheapann sees at run time but that leaves
 * no live evidence in a later core (tests/run-hunt3-runtime.sh): a block
 * overflowed and then freed (free checks its guard, then the block is gone), a
 * block overflowed and then reallocated, a double free, a realloc of a freed
 * block. Mode "guard": the two overflows; "double": the double free and the
 * realloc of a freed block; "both"; "clean": none of them. It prints
 * name=value lines (the culprits' addresses), then "ready", and waits for a
 * line on stdin so that a gcore can be taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *alloc_culprit(size_t n)
{
	return malloc(n);
}

__attribute__((noinline)) static char *alloc_twice(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	int guard = !strcmp(mode, "guard") || !strcmp(mode, "both");
	int twice = !strcmp(mode, "double") || !strcmp(mode, "both");
	char *keep = malloc(100);
	char *a = alloc_culprit(40), *b = alloc_culprit(24), *d = alloc_twice(56);
	void *volatile dv;

	if (!keep || !a || !b || !d)
		return 1;
	memset(keep, 1, 100);
	printf("culprit=%lu\n", (unsigned long)(size_t)a);
	printf("twice=%lu\n", (unsigned long)(size_t)d);
	if (guard) {
		memset(a, 'x', 41);   /* one byte past its end */
		memset(b, 'y', 32);   /* the whole guard */
	}
	b = realloc(b, 2000);         /* the guard is checked here */
	free(a);                      /* and here: a is the last one */
	dv = d;                       /* volatile: the compiler does not see the double free */
	free(d);
	if (twice) {
		free(dv);
		dv = realloc(dv, 80);
		if (dv)
			return 1;     /* a realloc of a freed block fails with NULL */
	}
	printf("ready\n");
	fflush(stdout);
	getchar();
	free(b);
	free(keep);
	return 0;
}
