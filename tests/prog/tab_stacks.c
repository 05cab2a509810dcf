/* tab_stacks.c - more distinct stacks than a small stack table holds: level(k)
 * recurses k times before it allocates, so NSTACKS calls make NSTACKS distinct
 * chains, each allocating k + 1 blocks of 8 bytes. Run with a tiny
 * HEAPANN_STATS_STACKS, the stacks that find no slot are counted as unrecorded
 * and nothing else changes. Prints its totals, then aborts for a kernel core. */
#include <stdio.h>
#include <stdlib.h>

#define NSTACKS 40
#define NO_TAIL() __asm__ volatile("" ::: "memory")

void *volatile sink;

__attribute__((noinline)) static void level(int k, int n)
{
	if (k == 0) {
		for (int i = 0; i < n; i++)
			sink = malloc(8);
	} else {
		level(k - 1, n);
	}
	NO_TAIL();
}

int main(void)
{
	long blocks = 0;

	for (int k = 0; k < NSTACKS; k++) {
		level(k, k + 1);
		blocks += k + 1;
	}
	printf("stacks %d blocks %ld bytes %ld\n", NSTACKS, blocks, blocks * 8);
	fflush(stdout);
	abort();
}
