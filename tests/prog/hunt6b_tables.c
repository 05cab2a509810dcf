/* hunt6b_tables.c - known blocks for tests/run-hunt6b-tables.sh, the Massif tree
 * and mprof's leak table:
 *   big() 3 x 1,000 bytes from main (MARK:main-big) and 1 x 1,000 from another
 *   line of main (MARK:main-big2), small() 2 x 500 bytes from main
 *   (MARK:main-small);
 *   pair() calls keep() twice on one source line (MARK:pair-line): 4 x 100 bytes
 *   through one call and 4 x 200 through the other, from main (MARK:main-pair).
 * Nothing else allocates (no stdio); aborts at the end for a kernel core. Built
 * as C++ with libstdc++ linked in, the library's own pool is a block without
 * frames (it is allocated before libheapann's unwinder is ready). */
#include <stdlib.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

void *volatile keep_v[32];
int nkeep;

__attribute__((noinline)) void keep(int n)
{
	keep_v[nkeep++] = malloc(n); /* MARK:keep */
	NO_TAIL();
}

__attribute__((noinline)) void pair(int n)
{
	keep(n); keep(2 * n); /* MARK:pair-line */
	NO_TAIL();
}

__attribute__((noinline)) void big(void)
{
	keep_v[nkeep++] = malloc(1000); /* MARK:big */
	NO_TAIL();
}

__attribute__((noinline)) void small(void)
{
	keep_v[nkeep++] = malloc(500); /* MARK:small */
	NO_TAIL();
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		big(); /* MARK:main-big */
	for (int i = 0; i < 2; i++)
		small(); /* MARK:main-small */
	for (int i = 0; i < 4; i++)
		pair(100); /* MARK:main-pair */
	big(); /* MARK:main-big2 */
	abort();
}
