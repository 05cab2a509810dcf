/* sym_alloc.c - test program for the symbolizer on real annotated blocks
 * (tests/run-symdw.sh, run under LD_PRELOAD=build/libheapann.so): allocates
 * from a known line (MARK_M) in a function the compiler may not inline, keeps
 * the blocks, prints "ready" and waits to be gcore'd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile kept[8]; /* volatile: the stores (and mallocs) must stay */

__attribute__((noinline)) void alloc_site(int i)
{
	kept[i] = malloc(100 + (size_t)i); /* MARK_M */
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	for (int i = 0; i < 8; i++)
		alloc_site(i);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
