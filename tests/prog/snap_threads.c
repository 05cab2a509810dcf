/* snap_threads.c - 8 threads allocating and freeing as fast as they can, for
 * tests/run-snapshot.sh: snapshots by signal land while threads are inside malloc,
 * the unwinder or free, and must neither deadlock the process nor the writer.
 *
 * Each thread keeps a ring of up to 64 blocks on its own stack and replaces them
 * (worker_alloc, sizes 16..1039) until "stop" arrives on stdin. Then each frees its
 * ring and settles: thread T allocates exactly 10 + T blocks of 32 * (T + 1) bytes
 * (settle_alloc), still held on its stack, and waits. main prints
 *   settled blocks=N bytes=M
 * and waits for a second line (the test takes a snapshot of the quiet process then:
 * every settled block must be found, held by the threads' stacks), then lets the
 * threads go, joins them and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define THREADS 8
#define RING 64

static volatile int g_stop;
static pthread_barrier_t g_settled, g_go;

static NOINLINE void *worker_alloc(size_t n)
{
	char *p = malloc(n);

	p[0] = p[n - 1] = 1;
	return p;
}

static NOINLINE void *settle_alloc(size_t n)
{
	char *p = malloc(n);

	memset(p, 0x5a, n);
	return p;
}

static void *worker(void *arg)
{
	unsigned t = (unsigned)(size_t)arg, seed = t * 2654435761u + 1;
	void *ring[RING] = { 0 };
	unsigned long rounds = 0;

	while (!g_stop) {
		unsigned i;

		seed = seed * 1103515245u + 12345u;
		i = (seed >> 8) % RING;
		free(ring[i]);
		ring[i] = worker_alloc(16 + (seed >> 16) % 1024);
		rounds++;
	}
	for (unsigned i = 0; i < RING; i++) {
		free(ring[i]);
		ring[i] = NULL;
	}
	for (unsigned i = 0; i < 10 + t; i++)
		ring[i] = settle_alloc(32 * (t + 1));
	ESCAPE(ring);
	pthread_barrier_wait(&g_settled);
	pthread_barrier_wait(&g_go);
	for (unsigned i = 0; i < RING; i++)
		free(ring[i]);
	return (void *)rounds;
}

int main(void)
{
	pthread_t th[THREADS];
	char line[16];
	unsigned long blocks = 0, bytes = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_barrier_init(&g_settled, NULL, THREADS + 1);
	pthread_barrier_init(&g_go, NULL, THREADS + 1);
	for (unsigned t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(size_t)t) != 0) {
			fputs("snap_threads: cannot start a thread\n", stderr);
			return 2;
		}
	printf("running\n");
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	g_stop = 1;
	pthread_barrier_wait(&g_settled);
	for (unsigned t = 0; t < THREADS; t++) {
		blocks += 10 + t;
		bytes += (10 + t) * 32 * (t + 1);
	}
	printf("settled blocks=%lu bytes=%lu\n", blocks, bytes);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&g_go);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	printf("done\n");
	return 0;
}
