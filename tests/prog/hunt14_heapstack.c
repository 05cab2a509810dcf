/* hunt14_heapstack.c - a thread run on a stack the program allocated from the
 * heap (pthread_attr_setstack), finished and joined, the block still held;
 * for tests/run-hunt14.sh. The thread left the only pointer to a block of 555
 * bytes in a returned frame: memcheck made that part of the stack block
 * inaccessible as the stack pointer rose (definitely lost); read as the
 * stack block's words it kept it still reachable.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *g_stack;   /* the stack block, held to the end */

static __attribute__((noinline)) void *mk(size_t n)
{
	void *p = malloc(n);

	memset(p, 1, n);
	return p;
}

static __attribute__((noinline)) void scribble(void *p)
{
	void *volatile slot[64];

	for (int i = 0; i < 64; i++)
		slot[i] = p;
	__asm__ volatile("" ::"r"(slot) : "memory");
}

static void *fin(void *arg)
{
	scribble(mk(555));   /* MARK:dead */
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_attr_t at;
	size_t sz = 256 * 1024;

	if (posix_memalign(&g_stack, 4096, sz) != 0)
		return 2;
	memset(g_stack, 0, sz);
	pthread_attr_init(&at);
	pthread_attr_setstack(&at, g_stack, sz);
	if (pthread_create(&t, &at, fin, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	printf("dead 555\n");
	exit(0);
}
