/* snap_sparse.c - a large heap that is almost all zero, for tests/run-snapshot.sh:
 * its exit snapshot must be a sparse file (never-touched and all-zero pages are
 * holes) that still reads back with every block.
 *
 *   sparse_calloc: 1 x 256 MiB by calloc, one byte in the middle set
 *   sparse_zeroed: 1 x 64 MiB by malloc, every page written with zeros
 *   sparse_small:  100 x 1000 B filled with 'x'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))
/* after the call: no tail call, so each function keeps its frame */
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

void *g_keep[102];

static NOINLINE void *sparse_calloc(size_t n) { void *p = calloc(1, n); ESCAPE(p); return p; }
static NOINLINE void *sparse_zeroed(size_t n) { void *p = malloc(n); ESCAPE(p); return p; }
static NOINLINE void *sparse_small(size_t n)
{
	void *p = malloc(n);

	memset(p, 'x', n);
	return p;
}

int main(void)
{
	char *big = sparse_calloc(256u << 20);
	char *zeroed = sparse_zeroed(64u << 20);

	if (!big || !zeroed)
		return 1;
	big[128u << 20] = 1;
	memset(zeroed, 0, 64u << 20);
	g_keep[0] = big;
	g_keep[1] = zeroed;
	for (int i = 0; i < 100; i++) {
		g_keep[2 + i] = sparse_small(1000);
	}
	printf("blocks=102 bytes=%lu\n", (256ul << 20) + (64ul << 20) + 100 * 1000ul);
	return 0;
}
