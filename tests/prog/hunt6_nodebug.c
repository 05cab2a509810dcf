/* hunt6_nodebug.c - built without -g and linked after tests/prog/hunt6_lines.c
 * (built with -g): its functions follow that unit's code, and have no line. */
#include <stdlib.h>

void *volatile nodebug_keep[2];

__attribute__((noinline)) void nodebug_alloc(void)
{
	nodebug_keep[0] = malloc(6006);
	__asm__ volatile("");
}
