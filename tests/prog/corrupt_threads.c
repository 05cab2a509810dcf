/* corrupt_threads.c - stress for HEAPANN_CHECK_INTERVAL: four threads allocate and
 * free blocks of mixed sizes (some large enough that glibc mmaps them and unmaps
 * them on free) while verifications walk the registry. Nothing is corrupted: the
 * run must end normally with no report. Prints "done=N" with N frees in all. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 10000
#define SLOTS 64

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	char *slot[SLOTS] = { 0 };
	unsigned long frees = 0;

	for (int i = 0; i < ROUNDS; i++) {
		unsigned k = (seed = seed * 1103515245u + 12345u) >> 16;
		unsigned j = k % SLOTS;
		size_t size = (k & 0x300) == 0x300 ? 150000 + k % 1000 : 1 + k % 700;

		if (slot[j]) {
			free(slot[j]);
			frees++;
		}
		slot[j] = (k & 7) == 0 ? realloc(NULL, size) : malloc(size);
		if (slot[j])
			memset(slot[j], 'a', size);
		if ((k & 15) == 1 && slot[j]) {
			char *q = realloc(slot[j], size + 100);

			if (q) {
				memset(q, 'b', size + 100);
				slot[j] = q;
			}
		}
	}
	for (int j = 0; j < SLOTS; j++)
		if (slot[j]) {
			free(slot[j]);
			frees++;
		}
	return (void *)frees;
}

int main(void)
{
	pthread_t t[THREADS];
	unsigned long total = 0;

	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (unsigned long)(uintptr_t)r;
	}
	printf("done=%lu\n", total);
	return 0;
}
