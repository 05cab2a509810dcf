/* ms_prog.c - allocation patterns for tests/run-massif-out.sh (--format massif).
 *
 *   ms_prog peak abort|wait    5000 B from alloc_big, 3000 B from alloc_mid, frees
 *                              the 5000, then 1000 B from alloc_small (all three
 *                              through alloc_n): the peak
 *                              (8000 B at time 8000) lies before the core, whose
 *                              moment is time 14000 with 4000 B live
 *   ms_prog inline abort|wait  3000 B through two always-inlined functions
 *                              (make_node inlined into make_list inlined into
 *                              build), 700 B from build directly
 *   ms_prog many abort|wait    4000 blocks of 10 B (the peak: 40000 B at time
 *                              40000), frees every other one, then 7 B: more
 *                              events than the timeline keeps samples of, so
 *                              the peak need not be one of them
 * abort: stop with abort() (a kernel core); wait: print "ready" and wait for a
 * line on stdin (time for gcore). No stdio: its buffers would be live blocks. The
 * MARK comments let the test find the line numbers. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[8];
static void *many[4000];

/* The empty asm after the call keeps it from being a tail call at -O2, so the
 * function stays on the stack. */
__attribute__((noinline)) static void *alloc_n(size_t n)
{
	void *p = malloc(n); /* MARK:alloc_n */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *alloc_big(void)
{
	void *p = alloc_n(5000); /* MARK:big */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *alloc_mid(void)
{
	void *p = alloc_n(3000); /* MARK:mid */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *alloc_small(void)
{
	void *p = alloc_n(1000); /* MARK:small */

	__asm__ volatile("" ::: "memory");
	return p;
}

static inline __attribute__((always_inline)) void *make_node(size_t n)
{
	return malloc(n); /* MARK:make_node */
}

static inline __attribute__((always_inline)) void *make_list(void)
{
	return make_node(3000); /* MARK:make_list */
}

__attribute__((noinline)) static void build(void)
{
	keep[0] = make_list(); /* MARK:build-list */
	keep[1] = malloc(700); /* MARK:build-direct */
	__asm__ volatile("" ::: "memory"); /* no tail call: build stays on the stack */
}

static void stop(const char *how)
{
	char c;

	if (!strcmp(how, "abort"))
		abort();
	if (write(1, "ready\n", 6) != 6)
		exit(1);
	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "peak")) {
		void *big = alloc_big(); /* MARK:main-big */

		keep[0] = alloc_mid(); /* MARK:main-mid */
		free(big);
		keep[1] = alloc_small(); /* MARK:main-small */
	} else if (!strcmp(argv[1], "many")) {
		for (int i = 0; i < 4000; i++)
			many[i] = malloc(10);
		for (int i = 0; i < 4000; i += 2)
			free(many[i]);
		keep[0] = malloc(7);
	} else if (!strcmp(argv[1], "inline")) {
		build(); /* MARK:main-build */
	} else {
		return 2;
	}
	stop(argv[2]);
	free(keep[0]);
	free(keep[1]);
	return 0;
}
