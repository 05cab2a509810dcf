/* cap_sites.c - allocations from 12 call sites in turn, more than the 8 recent
 * stack slots a thread of libheapann keeps (annotate/stats.c), then three
 * sites in a tight rotation that the recent slots serve: run-capture.sh checks
 * that every site's allocation count in the statistics is exact either way.
 * Site i allocates 20 + i blocks of 100 + i bytes in the rotation, sites 0-2
 * another 1000 each in the tight one; each keeps its last block. Prints
 * "site I allocs A bytes S" per site, then aborts (a kernel core).
 */
#include <stdio.h>
#include <stdlib.h>

#define NSITES 12
#define NOINLINE __attribute__((noinline))

static void *keep[NSITES];
static long allocs[NSITES];

/* Each site is its own function, so each has its own stack. */
#define SITE(i) static NOINLINE void *site##i(void) { void *p = malloc(100 + i); __asm__ volatile("" : : "r"(p) : "memory"); return p; }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7) SITE(8) SITE(9) SITE(10) SITE(11)
static void *(*const sites[NSITES])(void) = { site0, site1, site2, site3, site4, site5,
					       site6, site7, site8, site9, site10, site11 };

/* Allocate once from site I; the previous block of the site is freed. */
static NOINLINE void one(int i)
{
	void *p = sites[i]();
	if (p == NULL)
		exit(1);
	free(keep[i]);
	keep[i] = p;
	allocs[i]++;
}

int main(void)
{
	for (int r = 0; r < 20 + NSITES; r++)
		for (int i = 0; i < NSITES; i++)
			if (r < 20 + i)
				one(i);
	for (int r = 0; r < 1000; r++)
		for (int i = 0; i < 3; i++)
			one(i);
	for (int i = 0; i < NSITES; i++)
		printf("site %d allocs %ld bytes %d\n", i, allocs[i], 100 + i);
	fflush(stdout);
	abort();
}
