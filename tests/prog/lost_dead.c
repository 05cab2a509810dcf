/* lost_dead.c - a block whose only pointer is left in a dead frame, for
 * tests/run-lost.sh: sink() recurses 40 frames deep (a kilobyte each), mallocs
 * 777 bytes, keeps the pointer in a volatile local and returns; main then
 * aborts from a shallow frame, so the slot stays below main's stack pointer in
 * the core. Prints "dead 0xBLOCK" and "slot 0xSLOT" (the local's address). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sink(int depth)
{
	char pad[1024];

	memset(pad, depth, sizeof(pad));
	if (depth > 0) {
		sink(depth - 1);
	} else {
		void *volatile held = malloc(777);

		printf("dead %p\nslot %p\n", held, (void *)&held);
	}
	__asm__ volatile("" : : "r"(pad) : "memory");
}

int main(void)
{
	sink(40);
	fflush(stdout);
	abort();
}
