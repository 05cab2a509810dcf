/* sym_basic.c - test program for the libdw symbolizer (tests/run-symdw.sh):
 * records the return addresses of known call sites with
 * __builtin_return_address(0), prints "NAME 0xADDR" for each, then waits to be
 * gcore'd (or, with an argument "exit", exits). Lines marked "MARK_x" are the
 * call sites the test expects; it finds their numbers with grep -n.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *seen[4];

#define BARRIER() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) static void record(int i)
{
	seen[i] = __builtin_return_address(0);
	BARRIER();
}

__attribute__((noinline)) void first_caller(void)
{
	record(0); /* MARK_A */
	BARRIER();
}

__attribute__((noinline)) static int second_caller(int x)
{
	if (x > 1)
		record(1); /* MARK_B */
	BARRIER();
	return x + 1;
}

int main(int argc, char **argv)
{
	first_caller();
	second_caller(argc + 1);
	printf("first_caller %p\n", seen[0]);
	printf("second_caller %p\n", seen[1]);
	printf("ready\n");
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "exit") == 0)
		return 0;
	for (;;)
		pause();
}
