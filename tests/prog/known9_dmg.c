/* known9_dmg.c - damaged headers of a cut and of a whole stack (run-known9).
 * Under HEAPANN_DEPTH=4: blocks 2 (1,100 bytes, 12 calls deep: cut) and 3 (888
 * bytes, whole) get one bit of their INFO word's pad flipped, the version byte
 * kept, so SIZE, SEQ and CHECK survive: the check word still proves the size and
 * seq, for the cut stack only with its DEPTH word's HEAPANN_DEPTH_CUT.
 * Prints each damaged block's address, then "ready", and waits for a line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void *keep[8];

__attribute__((noinline)) void *deep(int n, size_t size)
{
	void *p = n ? deep(n - 1, size) : malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	char line[16];

	keep[0] = deep(12, 1000);
	keep[1] = malloc(777);
	keep[2] = deep(12, 1100);
	keep[3] = malloc(888);
	keep[4] = deep(12, 1200);
	for (int i = 2; i <= 3; i++) {
		uint64_t *u = keep[i], dep = u[-1] & 0xFFFF;
		uint64_t *h = (uint64_t *)(void *)((char *)u - (7 + dep) * 8);

		printf("block %p\n", keep[i]);
		h[1] ^= 1ULL << 40;
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 1;
	return 0;
}
