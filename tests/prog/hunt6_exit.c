/* hunt6_exit.c - what is live at exit, as memcheck sees it: a library's
 * destructor frees its block (tests/prog/hunt6_finilib.c), an atexit handler
 * allocates 333 bytes kept in a global (still reachable) and loses 123
 * (definitely lost), main loses 77. Built by tests/run-hunt6-exit.sh. */
#include <stdlib.h>

int finilib_ready(void);
void *volatile exit_keep;

__attribute__((noinline)) static void at_exit_fn(void)
{
	exit_keep = malloc(333);                /* MARK:atexit 333 */
	void *volatile lost = malloc(123);      /* MARK:atexit-lost 123 */
	lost = NULL;
}

int main(void)
{
	void *volatile p = malloc(77);          /* MARK:main 77 */

	p = NULL;
	atexit(at_exit_fn);
	return !finilib_ready();
}
