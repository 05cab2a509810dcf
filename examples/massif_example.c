/* massif_example.c - the allocation pattern of the example in Valgrind Massif's
 * manual: ten 1000-byte blocks from main, 2000 bytes from f, and 4000 bytes from
 * g, which is called once from f and once from main.
 *
 * Usage: massif_example abort   stop with abort() before freeing (a kernel core)
 *        massif_example wait    print "ready" and wait for a line on stdin before
 *                               freeing (time for gcore)
 * No stdio: its buffers would be live blocks too. The MARK comments let the tests
 * find the line numbers. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[16];
static int nkeep;

__attribute__((noinline)) static void g(void)
{
	keep[nkeep++] = malloc(4000); /* MARK:g */
}

__attribute__((noinline)) static void f(void)
{
	keep[nkeep++] = malloc(2000); /* MARK:f */
	g(); /* MARK:f-calls-g */
	__asm__ volatile("" ::: "memory"); /* no tail call at -O2: f stays on the stack */
}

int main(int argc, char **argv)
{
	void *a[10];
	char c;

	for (int i = 0; i < 10; i++)
		a[i] = malloc(1000); /* MARK:main */
	f(); /* MARK:main-calls-f */
	g(); /* MARK:main-calls-g */

	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		if (write(1, "ready\n", 6) != 6)
			return 1;
		while (read(0, &c, 1) == 1 && c != '\n')
			;
	}
	for (int i = 0; i < 10; i++)
		free(a[i]);
	for (int i = 0; i < nkeep; i++)
		free(keep[i]);
	return 0;
}
