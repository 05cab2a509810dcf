/* hunt2_cycles.c - the call graph's cycles where recursion goes through three
 * functions entered from two places, next to plain self-recursion:
 *   main -> A(3): A B A B(1) malloc(100), then B(1) -> C(0) malloc(1000)
 *   main -> E -> C(2): C B A B(1) malloc(100), then B(1) -> C(0) malloc(1000)
 *   main -> D(2) -> D -> D malloc(7); main -> D(0) malloc(7)
 * A, B and C form one cycle (2,200 bytes, entered from main and from E); D
 * calls itself only, which is no cycle (gprof counts it as recursive calls).
 * Nothing else allocates (no stdio); aborts at the end for a kernel core. */
#include <stdlib.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

void *volatile keep[8];
int nk;

__attribute__((noinline)) void B(int k);
__attribute__((noinline)) void C(int k);

__attribute__((noinline)) void A(int k)
{
	if (k == 0)
		keep[nk++] = malloc(10);
	else
		B(k - 1);
	NO_TAIL();
}

__attribute__((noinline)) void B(int k)
{
	if (k == 1)
		keep[nk++] = malloc(100);
	if (k % 2)
		C(k - 1);
	else
		A(k);
	NO_TAIL();
}

__attribute__((noinline)) void C(int k)
{
	if (k == 0)
		keep[nk++] = malloc(1000);
	else
		B(k);
	NO_TAIL();
}

__attribute__((noinline)) void D(int k)
{
	if (k == 0)
		keep[nk++] = malloc(7);
	else
		D(k - 1);
	NO_TAIL();
}

__attribute__((noinline)) void E(void)
{
	C(2);
	NO_TAIL();
}

int main(void)
{
	A(3);
	E();
	D(2);
	D(0);
	abort();
}
