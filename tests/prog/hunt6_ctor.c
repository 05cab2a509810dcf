/* hunt6_ctor.c - a program linked with tests/prog/hunt6_ctorlib.cc, whose
 * static initializers allocate before libheapann's constructor runs; its own
 * constructor and main allocate too. With an argument it aborts (a kernel core
 * with every block live); without, it returns (heapann's exit snapshot).
 * Built by tests/run-hunt6-init.sh. */
#include <stdio.h>
#include <stdlib.h>

void *hunt6_lib_block(unsigned i);
void *volatile keep[2];

__attribute__((constructor, noinline)) static void prog_init(void)
{
	keep[0] = malloc(2222);                               /* MARK:pctor 2222 */
}

int main(int argc, char **argv)
{
	keep[1] = malloc(5555);                               /* MARK:main 5555 */
	if (!hunt6_lib_block(0) || !hunt6_lib_block(1) || !keep[0] || !keep[1])
		return 1;
	if (argc > 1)
		abort();
	return 0;
}
