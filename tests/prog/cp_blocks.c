/* cp_blocks.c - the program behind tests/run-coreparse.sh: under libheapann it
 * allocates blocks it knows, reads their headers back (heapann_block.h), breaks two
 * of them on purpose, frees a few, starts a second thread, prints every fact the
 * test compares with cpdump, then waits for gcore ("stop") or aborts ("abort").
 * Output lines: "live PTR SIZE SEQ DEPTH GUARD" ("tlive" for the second thread's
 * blocks, in its own arena), "freed PTR SIZE", "overrun PTR N",
 * "dmg-start PTR", "dmg-end PTR SIZE SEQ", "tid N", "ready".
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapann_block.h"

#define W ((unsigned)sizeof(uintptr_t))
#define NOINLINE __attribute__((noinline))

/* The header of the block at user, read back in place. */
static uintptr_t *hdr_of(void *user)
{
	uintptr_t end = ((uintptr_t *)user)[-1];
	unsigned depth = (unsigned)(end & HEAPANN_END_DEPTH_MASK);

	return (uintptr_t *)((char *)user - heapann_header_bytes(depth, W));
}

static void print_block(const char *what, void *p)
{
	uintptr_t *h = hdr_of(p);

	printf("%s %p %zu %zu %zu %u\n", what, p, (size_t)h[HEAPANN_W_SIZE], (size_t)h[HEAPANN_W_SEQ],
	       (size_t)heapann_depth_frames(h[HEAPANN_W_DEPTH]), heapann_info_guard(h[HEAPANN_W_INFO]));
}

static void print_live(void *p)
{
	print_block("live", p);
}

NOINLINE static void *alloc_a(size_t n) { return malloc(n); }
NOINLINE static void *alloc_b(size_t n) { return calloc(1, n); }
NOINLINE static void *alloc_c(size_t n)
{
	void *p = NULL;

	return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

/* The second thread: its blocks come from its own arena (a separate mapping, not
 * [heap]), printed as "tlive". */
static void *idle_thread(void *arg)
{
	int i;

	printf("tid %ld\n", (long)syscall(SYS_gettid));
	for (i = 0; i < 5; i++)
		print_block("tlive", alloc_a(7000 + (size_t)i));
	fflush(stdout);
	pthread_barrier_wait(arg);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	void *keep[64], *gone[8], *p;
	pthread_t t;
	pthread_barrier_t bar;
	int i, n = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, idle_thread, &bar);
	pthread_barrier_wait(&bar);
	for (i = 0; i < 20; i++)
		keep[n++] = alloc_a(1000 + (size_t)i);
	for (i = 0; i < 7; i++)
		keep[n++] = alloc_b(2000 + (size_t)i * 3);
	for (i = 0; i < 3; i++)
		keep[n++] = alloc_c(3000 + (size_t)i);
	keep[n++] = realloc(alloc_a(4000), 4100);
	/* freed ones, each kept off the top chunk by the block after it */
	for (i = 0; i < 4; i++) {
		gone[i] = alloc_a(40 + (size_t)i * 16);
		keep[n++] = alloc_a(5000 + (size_t)i);
	}
	for (i = 0; i < n; i++)
		print_live(keep[i]);
	for (i = 0; i < 4; i++) {
		printf("freed %p %zu\n", gone[i], (size_t)(40 + i * 16));
		free(gone[i]);
	}
	/* an overrun of 5 bytes into the guard of a 24-byte block */
	p = alloc_a(24);
	print_live(p);
	memset(p, 'a', 24 + 5);
	printf("overrun %p 5\n", p);
	/* a header whose START was overwritten, one whose END was */
	p = alloc_a(6000);
	hdr_of(p)[HEAPANN_W_START] = 0x4141414141414141ull & UINTPTR_MAX;
	printf("dmg-start %p\n", p);
	p = alloc_a(6001);
	{
		uintptr_t *h = hdr_of(p);

		printf("dmg-end %p %zu %zu\n", p, (size_t)h[HEAPANN_W_SIZE], (size_t)h[HEAPANN_W_SEQ]);
		((uintptr_t *)p)[-1] = 0x4242424242424242ull & UINTPTR_MAX;
	}
	printf("ready\n");
	if (argc > 1 && strcmp(argv[1], "abort") == 0)
		abort();
	for (;;)
		pause();
}
