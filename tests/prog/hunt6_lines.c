/* hunt6_lines.c - a program whose frames must read their own lines and no
 * other's. Under gcc -O2 main goes to .text.startup, before _start, with a
 * cold part (the abort) and a line-table row left at the very end of its hot
 * part; a function of tests/prog/hunt6_nodebug.c, built without -g and linked
 * after this unit, allocates too. Neither _start nor nodebug_alloc has debug
 * info: the report must give them no file:line (libdw gives the row that ends
 * the code before them). With an argument starting with 'x' it allocates in
 * lines_alloc; with more than one argument it aborts (a kernel core). Built by
 * tests/run-hunt6-sym.sh. */
#include <stdlib.h>

void nodebug_alloc(void);
void *volatile keep[4];

__attribute__((noinline)) void lines_alloc(int i)
{
	keep[i] = malloc(7007);                 /* MARK:lines 7007 */
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (argv[i][0] == 'x')
			lines_alloc(i);         /* MARK:main-lines */
	nodebug_alloc();                        /* MARK:main-nodebug */
	keep[1] = malloc(8008);                 /* MARK:main 8008 */
	if (argc > 1)
		abort();
	return 0;
}
