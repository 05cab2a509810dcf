/* tab_recurse.c - recursion through two functions for the call graph's cycles:
 * main -> F -> G -> F -> G -> malloc(10). The program allocates nothing else
 * (its output goes through write(2), not stdio), so main is credited with
 * exactly 10 bytes. Aborts at the end for a kernel core. */
#include <stdlib.h>
#include <unistd.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

void *volatile kept;

__attribute__((noinline)) void F(int n);

__attribute__((noinline)) void G(int n)
{
	if (n == 0)
		kept = malloc(10);
	else
		F(n - 1);
	NO_TAIL();
}

__attribute__((noinline)) void F(int n)
{
	G(n);
	NO_TAIL();
}

int main(void)
{
	static const char msg[] = "bytes 10\n";

	F(1);
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 1;
	abort();
}
