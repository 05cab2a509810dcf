/* tab_reuse.c - stacks that share their outer frames and differ inside, in a
 * mixed order, from two threads: the statistics must put every allocation
 * under its own stack. Written for a lookup that reuses the walker's outer
 * frames, dropped (doc/performance.md, sixth round); it holds for any lookup.
 * Each thread makes ROUNDS blocks from main/worker -> walk(n) (n = 0..7 levels
 * of recursion) -> leaf_a or leaf_b -> malloc, the choice from a fixed
 * pseudo-random sequence. Nothing is freed, so every stack's allocations are
 * its kept blocks. Prints "blocks N bytes B", then aborts for a kernel core. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 3000
#define NO_TAIL() __asm__ volatile("" ::: "memory")

void *volatile sink;

__attribute__((noinline)) void leaf_a(size_t size)
{
	void **p = malloc(size);

	if (!p)
		abort();
	*p = (void *)sink;   /* a chain, so nothing is unreachable */
	sink = p;
	NO_TAIL();
}

__attribute__((noinline)) void leaf_b(size_t size)
{
	leaf_a(size + 8);   /* one more frame */
	NO_TAIL();
}

__attribute__((noinline)) void walk(unsigned n, unsigned leaf, size_t size)
{
	if (n)
		walk(n - 1, leaf, size);
	else if (leaf)
		leaf_b(size);
	else
		leaf_a(size);
	NO_TAIL();
}

static size_t made[2];

static void *worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg, x = 12345 + t;
	size_t bytes = 0;

	for (unsigned i = 0; i < ROUNDS; i++) {
		/* runs of the same stack now and then, changes the rest of the time */
		if (i % 7)
			x = x * 1103515245u + 12345u;
		unsigned n = (x >> 16) & 7, leaf = (x >> 20) & 1;

		walk(n, leaf, 16 + 16 * n);
		bytes += 16 + 16 * n + 8 * leaf;
	}
	made[t] = bytes;
	return 0;
}

int main(void)
{
	pthread_t th;

	if (pthread_create(&th, 0, worker, (void *)(uintptr_t)1))
		return 1;
	worker(0);
	pthread_join(th, 0);
	printf("blocks %u bytes %zu\n", 2 * ROUNDS, made[0] + made[1]);
	fflush(stdout);
	abort();
}
