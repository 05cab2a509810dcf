/* tab_threads.c - statistics under threads: NTHREADS workers each allocate
 * NALLOCS blocks of sizes 1..300 from worker_alloc and free two of every three,
 * all at once. Prints the blocks and bytes it keeps, then aborts for a kernel core,
 * where the statistics must agree with the live blocks the scan finds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 4
#define NALLOCS 20000

#define NO_TAIL() __asm__ volatile("" ::: "memory")

static void **kept[NTHREADS];
static size_t kept_n[NTHREADS], kept_bytes[NTHREADS];
static pthread_barrier_t start;

__attribute__((noinline)) static void *worker_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	NO_TAIL();
	return p;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	void **keep = kept[id];

	pthread_barrier_wait(&start);
	for (int i = 0; i < NALLOCS; i++) {
		size_t size = (size_t)(i * 7 + id) % 300 + 1;
		void *p = worker_alloc(size);

		if (i % 3 == 0) {
			keep[kept_n[id]++] = p;
			kept_bytes[id] += size;
		} else {
			free(p);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	size_t blocks = 0, bytes = 0;

	for (int i = 0; i < NTHREADS; i++)
		kept[i] = malloc(NALLOCS * sizeof(void *));   /* from main: counted too */
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i))
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREADS; i++) {
		blocks += kept_n[i];
		bytes += kept_bytes[i];
	}
	printf("threads %d allocs %d kept_blocks %zu kept_bytes %zu\n", NTHREADS,
	       NTHREADS * NALLOCS, blocks, bytes);
	fflush(stdout);
	abort();
}
