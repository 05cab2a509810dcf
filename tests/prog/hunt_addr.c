/* hunt_addr.c - addresses whose nature the program knows, for --addr
 * (tests/run-hunt-addr.sh): a 100-byte block, a 4 MiB block above the mmap
 * threshold, a 64-byte block aligned to 4096, a global of its own, and the
 * address of libc's puts (code of a library: gcore writes no segment for it,
 * yet it is mapped). Prints them on one line, then waits for a line on stdin. */
#include <stdio.h>
#include <stdlib.h>

char *g_blk, *g_big, *g_al;
long g_table[16];

int main(void)
{
	char line[16];
	int (*volatile fn)(const char *) = puts;

	g_blk = malloc(100);
	g_big = malloc(4u << 20);
	g_al = aligned_alloc(4096, 64);
	if (!g_blk || !g_big || !g_al)
		return 1;
	printf("%p %p %p %p %p ready\n", (void *)g_blk, (void *)g_big, (void *)g_al,
	       (void *)&g_table[3], *(void **)&fn);
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	return 0;
}
