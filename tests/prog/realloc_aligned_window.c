/* realloc_aligned_window.c - a block of the aligned family reallocated to a
 * size its raw block cannot hold, so libheapann moves it: memalign, copy, free
 * (tests/run-realloc.sh stops it in glibc's memalign for the new block and
 * takes a core there). mark() tells gdb the realloc is next. */
#include <malloc.h>
#include <stdlib.h>

__attribute__((noinline)) void mark(void)
{
	__asm__ volatile("");
}

int main(void)
{
	void *p = memalign(64, 100);

	mark();
	p = realloc(p, 100000);
	free(p);
	return 0;
}
