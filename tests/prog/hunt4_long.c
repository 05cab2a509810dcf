/* hunt4_long.c - long runs for tests/run-hunt4-long.sh; every number the
 * statistics region must hold is printed by the program itself (stdio is not
 * used: its buffers would add blocks). MODE (argv[1]):
 *   churn N   N allocations at MARK:churn, sizes 1 + (7 i mod 200), each
 *             freeing the block 1000 allocations older: a live set of 1000
 *             blocks, and more than 4 GiB allocated for N above 43 million
 *   grow      one block reallocated from 1 byte to 1 MiB, 1 byte at a time
 *             (MARK:grow), every byte checked
 *   phases    100 x 10,000 allocated and freed, then 50 x 30,000 allocated
 *             and 25 of them freed: the peak is 1,500,000 bytes, reached when
 *             3,500,000 bytes had been allocated or freed
 *   calls N   free(NULL) N times: the cheapest call libheapann counts
 * Then "ready KEY=VALUE..." and it waits for a line on stdin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING 1000
static void *ring[RING];
static size_t ring_size[RING];
void *keep;

__attribute__((noinline)) static void *churn_site(size_t n)
{
	void *p = malloc(n);   /* MARK:churn */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *grow_site(void *p, size_t n)
{
	void *q = realloc(p, n);   /* MARK:grow */

	__asm__ volatile("" ::: "memory");
	return q;
}

static void ready(const char *msg)
{
	char c;

	if (write(1, msg, strlen(msg)) < 0 || read(0, &c, 1) < 0)
		exit(1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned long long n = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
	char msg[256];

	if (strcmp(mode, "churn") == 0) {
		unsigned long long allocs = 0, frees = 0, bytes = 0, freed = 0;

		for (unsigned long long i = 0; i < n; i++) {
			unsigned k = (unsigned)(i % RING);

			if (ring[k]) {
				free(ring[k]);
				frees++;
				freed += ring_size[k];
			}
			ring_size[k] = 1 + (size_t)((i * 7) % 200);
			ring[k] = churn_site(ring_size[k]);
			if (!ring[k])
				return 1;
			allocs++;
			bytes += ring_size[k];
		}
		snprintf(msg, sizeof msg, "ready allocs=%llu frees=%llu bytes=%llu freed=%llu\n",
			 allocs, frees, bytes, freed);
	} else if (strcmp(mode, "grow") == 0) {
		char *p = NULL;

		for (size_t k = 1; k <= 1048576; k++) {
			p = grow_site(p, k);
			if (!p)
				return 1;
			p[k - 1] = (char)k;
		}
		for (size_t k = 1; k <= 1048576; k++)
			if (p[k - 1] != (char)k)
				return 1;
		keep = p;
		snprintf(msg, sizeof msg, "ready size=%d\n", 1048576);
	} else if (strcmp(mode, "phases") == 0) {
		static void *a[100], *b[50];

		for (int i = 0; i < 100; i++)
			a[i] = malloc(10000);
		for (int i = 0; i < 100; i++)
			free(a[i]);
		for (int i = 0; i < 50; i++)
			b[i] = malloc(30000);
		for (int i = 0; i < 25; i++)
			free(b[i]);
		keep = b;
		snprintf(msg, sizeof msg, "ready peak=1500000 peak_time=3500000 live=750000\n");
	} else if (strcmp(mode, "calls") == 0) {
		void *volatile z = NULL;

		for (unsigned long long i = 0; i < n; i++)
			free(z);
		snprintf(msg, sizeof msg, "ready calls=%llu\n", n);
	} else {
		return 2;
	}
	ready(msg);
	return 0;
}
