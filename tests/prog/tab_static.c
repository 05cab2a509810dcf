/* tab_static.c - the static kit keeping its statistics in a buffer of the
 * program's own (heapann_stats_buffer), as firmware does so that a dump of its
 * RAM holds them. Allocates NALLOC blocks of 48 bytes from make_item, frees
 * NFREE of them, prints the buffer's address and its counts, then aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NALLOC 300
#define NFREE 120
#define NO_TAIL() __asm__ volatile("" ::: "memory")

static uintptr_t stats_area[(256 * 1024) / sizeof(uintptr_t)];

void *heapann_stats_buffer(size_t *len)
{
	*len = sizeof(stats_area);
	return stats_area;
}

__attribute__((noinline)) static void *make_item(void)
{
	void *p = malloc(48);

	NO_TAIL();
	return p;
}

int main(void)
{
	static void *items[NALLOC];

	for (int i = 0; i < NALLOC; i++)
		items[i] = make_item();
	for (int i = 0; i < NFREE; i++)
		free(items[i]);
	printf("buffer %p allocs %d frees %d size 48\n", (void *)stats_area, NALLOC, NFREE);
	fflush(stdout);
	abort();
}
