/* mkcore.c - make a big heap for the core-reading benchmark: N live blocks of mixed
 * sizes from a few dozen distinct call stacks (36 paths: 6 outer x 6 inner functions;
 * the compiler may duplicate main's call site), plus some freed ones, then stop so a
 * core can be taken. Run it under libheapann (bench/core.sh).
 * Usage: mkcore N [--stop]
 *   default: abort() (a kernel core lands in the cwd with ulimit -c unlimited);
 *   --stop:  print "mkcore: ready PID" and wait for a signal (for gcore).
 * It prints the live block count and user bytes so the report can be checked.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapann_block.h"

#define NOINLINE __attribute__((noinline, noclone))
#define NSTACK 6

/* Size mix: 15 in 16 between 16 and 128 bytes, 1 in 16 between 129 and 1024. */
static size_t mk_size_pick(uint64_t r)
{
	if ((r & 15) != 0)
		return 16 + (size_t)((r >> 8) % (128 - 16 + 1));
	return 129 + (size_t)((r >> 8) % (1024 - 129 + 1));
}

static uint64_t mk_rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Inner functions: each calls malloc from its own call site. The empty asm after
 * the call keeps it from being a tail call. */
#define MK_INNER(n)                                                   \
	static NOINLINE void *mk_inner_##n(size_t size)               \
	{                                                             \
		void *p = malloc(size);                               \
		__asm__ volatile("" : : "r"(p) : "memory");           \
		return p;                                             \
	}
MK_INNER(0) MK_INNER(1) MK_INNER(2) MK_INNER(3) MK_INNER(4) MK_INNER(5)

static void *(*const mk_inner[NSTACK])(size_t) = {
	mk_inner_0, mk_inner_1, mk_inner_2, mk_inner_3, mk_inner_4, mk_inner_5,
};

/* Outer functions: each calls one of the inner ones through its own call site. */
#define MK_OUTER(n)                                                   \
	static NOINLINE void *mk_outer_##n(int inner, size_t size)    \
	{                                                             \
		void *p = mk_inner[inner](size);                      \
		__asm__ volatile("" : : "r"(p) : "memory");           \
		return p;                                             \
	}
MK_OUTER(0) MK_OUTER(1) MK_OUTER(2) MK_OUTER(3) MK_OUTER(4) MK_OUTER(5)

static void *(*const mk_outer[NSTACK])(int, size_t) = {
	mk_outer_0, mk_outer_1, mk_outer_2, mk_outer_3, mk_outer_4, mk_outer_5,
};

int main(int argc, char **argv)
{
	if (argc < 2 || (argc == 3 && strcmp(argv[2], "--stop") != 0) || argc > 3) {
		fprintf(stderr, "usage: mkcore N [--stop]\n");
		return 2;
	}
	char *end;
	long n = strtol(argv[1], &end, 0);
	if (*argv[1] == '\0' || *end != '\0' || n < 1 || n > 100000000) {
		fprintf(stderr, "mkcore: bad block count '%s'\n", argv[1]);
		return 2;
	}
	int stop = argc == 3;

	/* The table of live pointers comes from mmap, so it is not a block itself. */
	size_t tsize = (size_t)n * sizeof(void *);
	void **live = mmap(NULL, tsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (live == MAP_FAILED) {
		fprintf(stderr, "mkcore: cannot map a table for %ld pointers\n", n);
		return 1;
	}
	uint64_t rng = 0x853C49E6748FEA9BULL;
	uint64_t bytes = 0;
	long freed = 0;
	for (long i = 0; i < n; i++) {
		uint64_t r = mk_rng_next(&rng);
		int stack = (int)((r >> 32) % (NSTACK * NSTACK));
		size_t size = mk_size_pick(r);
		/* Every eighth allocation gets a short-lived sibling that is freed again,
		 * so the core holds freed headers among the live ones. */
		void *tmp = NULL;
		if ((i & 7) == 7)
			tmp = mk_outer[stack % NSTACK](stack / NSTACK, size + 8);
		unsigned char *p = mk_outer[stack % NSTACK](stack / NSTACK, size);
		if (tmp != NULL) {
			free(tmp);
			freed++;
		}
		if (p == NULL) {
			fprintf(stderr, "mkcore: out of memory after %ld blocks\n", i);
			return 1;
		}
		memset(p, (int)(r >> 56), size);
		live[i] = p;
		bytes += size;
	}
	/* Did libheapann annotate them? The END word right before the user data says. */
	uint64_t endw;
	memcpy(&endw, (unsigned char *)live[n - 1] - sizeof endw, sizeof endw);
	int annotated = (endw & ~(uint64_t)HEAPANN_END_DEPTH_MASK) == HEAPANN_END_LIVE64;
	/* snprintf into the stack and write(): stdio would malloc its buffer and add a
	 * block to the count. */
	char msg[256];
	int len = snprintf(msg, sizeof msg,
			   "mkcore: %ld live blocks, %llu bytes, %d call paths, %ld freed, annotated=%s depth=%d\n",
			   n, (unsigned long long)bytes, NSTACK * NSTACK, freed, annotated ? "yes" : "no",
			   annotated ? (int)(endw & HEAPANN_END_DEPTH_MASK) : -1);
	if (write(1, msg, (size_t)len) != len)
		return 1;
	if (stop) {
		len = snprintf(msg, sizeof msg, "mkcore: ready %ld\n", (long)getpid());
		if (write(1, msg, (size_t)len) != len)
			return 1;
		for (;;)
			pause();
	}
	abort();
}
