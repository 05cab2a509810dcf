/* arena_zero.c - a leaked malloc(0) followed by a block that is freed (run-arena.sh;
 * run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0 and HEAPANN_GUARD 0 to 16).
 * The freed chunk goes to main_arena's unsorted bin, which points at its start:
 * libheapann must leave glibc's next chunk after the 0-byte block's user pointer,
 * else that pointer is a start pointer to the 0-byte block. Prints the 0-byte
 * block's address, waits for a line on stdin (the test writes a core), exits. */
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep, *volatile fence;

static __attribute__((noinline)) void *leak(void)
{
	void *z = malloc(0);
	void *next = malloc(1000);

	fence = malloc(16); /* keeps the freed chunk from top; still reachable */
	free(next);
	keep = z;
	keep = NULL;
	return z;
}

int main(void)
{
	char line[8];
	unsigned long z = (unsigned long)leak() ^ 0x5a5a5a5aUL; /* no copy of it */

	printf("%#lx\n", z ^ 0x5a5a5a5aUL);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return 0;
}
