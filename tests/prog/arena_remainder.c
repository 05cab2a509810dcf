/* arena_remainder.c - glibc's main_arena keeps a stale pointer into a lost block
 * (run-arena.sh; run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0). A 4,000-byte
 * block is freed; a 200-byte request splits it, so main_arena's last_remainder
 * points at the rest; that block is freed again and coalesces, and the 2,980-byte
 * block then carved from the same chunk holds the old remainder's address inside
 * it. The program drops its only pointer to that block: memcheck says definitely
 * lost (2,980 bytes in 1 block). Prints "ready", waits for a line on stdin (the
 * test writes a core meanwhile), exits. */
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep, *volatile fence;

static __attribute__((noinline)) void leak(void)
{
	void *big = malloc(4000);
	void *small;

	fence = malloc(16); /* keeps the freed chunk from top; still reachable */
	free(big);
	small = malloc(200);
	free(small);
	keep = malloc(2980);
	keep = NULL;
}

int main(void)
{
	char line[8];

	leak();
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return 0;
}
