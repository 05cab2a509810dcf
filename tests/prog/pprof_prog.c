/* pprof_prog.c - allocations with known numbers for tests/run-pprof.sh:
 *   build_list: 25 nodes of 48 bytes through two always_inline helpers
 *               (node_alloc inlined into node_new inlined into build_list), kept;
 *   churn:      100 blocks of 64 bytes, 70 of them freed again, 30 kept;
 *   victims:    5 blocks of 200 bytes, kept.
 * Usage: pprof_prog wait [damage]: print "ready" and wait for a line on stdin
 * (time for gcore). With "damage", the 8 bytes just before the last victim's
 * data (the END word of its header) are overwritten first: a damaged header.
 * No stdio: its buffers would be live blocks too. MARK comments give the test
 * its line numbers. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")

static void *keep[256];
static int nkeep;

static inline __attribute__((always_inline)) void *node_alloc(size_t n)
{
	return malloc(n); /* MARK:node_alloc */
}

static inline __attribute__((always_inline)) void *node_new(void)
{
	char *p = node_alloc(48); /* MARK:node_new */

	p[0] = 1;
	return p;
}

__attribute__((noinline)) static void build_list(int n)
{
	for (int i = 0; i < n; i++)
		keep[nkeep++] = node_new(); /* MARK:build_list */
	BARRIER();
}

__attribute__((noinline)) static void churn(int n, int kept)
{
	void *tmp[128];

	for (int i = 0; i < n; i++)
		tmp[i] = malloc(64); /* MARK:churn */
	BARRIER();
	for (int i = kept; i < n; i++)
		free(tmp[i]);
	for (int i = 0; i < kept; i++)
		keep[nkeep++] = tmp[i];
	BARRIER();
}

__attribute__((noinline)) static void victims(int n)
{
	for (int i = 0; i < n; i++)
		keep[nkeep++] = malloc(200); /* MARK:victims */
	BARRIER();
}

int main(int argc, char **argv)
{
	char c;

	build_list(25); /* MARK:main-build */
	churn(100, 30); /* MARK:main-churn */
	victims(5); /* MARK:main-victims */
	BARRIER();
	if (argc > 2 && !strcmp(argv[2], "damage")) {
		volatile unsigned char *v = keep[nkeep - 1];

		for (int i = 1; i <= 8; i++)
			v[-i] = 0x41;
	}
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		if (write(1, "ready\n", 6) != 6)
			return 1;
		while (read(0, &c, 1) == 1 && c != '\n')
			;
	}
	/* the blocks stay allocated: a damaged header must not meet free() */
	_exit(0);
}
