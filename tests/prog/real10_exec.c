/* real10_exec.c - run-real10: a leaking program built as DIR/sqlite3 (a name
 * also on PATH), exec'd by a script: 4,321 bytes lost under leaky_from_dir. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void *leaky_from_dir(void) { return malloc(4321); }
int main(void)
{
	void *volatile p = leaky_from_dir();
	p = 0;
	printf("leaked\n");
	return 0;
}
