/* hunt_exitlost.c - leaks as memcheck sees them at exit, for heapann
 * --report=lost (tests/run-hunt-exitlost.sh). A binary tree of depth 4 (15 nodes
 * of 24 bytes) built by recursion and dropped: its root definitely lost, the 14
 * other nodes indirectly lost; 700 bytes kept in a global: still reachable. No
 * stack scrubbing here, unlike lost_prog.c: the recursion leaves copies of the
 * node pointers in dead stack, as real programs do, and memcheck, which scans
 * the stack above the stack pointer at exit only, does not see them. */
#include <stdlib.h>

struct tree {
	struct tree *l, *r;
	long v;
};

void *g_keep;

__attribute__((noinline)) static struct tree *mk(int d)
{
	struct tree *t;

	if (!d)
		return NULL;
	t = malloc(sizeof(*t));
	if (!t)
		abort();
	t->l = mk(d - 1);
	t->r = mk(d - 1);
	t->v = d;
	return t;
}

int main(void)
{
	struct tree *volatile lost;

	g_keep = malloc(700);
	lost = mk(4);
	lost = NULL;
	(void)lost;
	return 0;
}
