/* unwind.c - what one stack capture costs, per method, side by side in one run:
 * libheapann's CFI walker reusing the previous stack (the common case: the next
 * malloc from the same chain), the same walker stepping every frame (its rules
 * cached, nothing reused), libunwind's unw_backtrace (per-thread cache, as
 * libheapann loads it) and glibc's backtrace(). Each at the bottom of a chain of
 * DEPTH real frames, built like ordinary -O2 code (no frame pointers). Includes
 * the walker's source (white-box, like tests/unit/t_cfi.c) so it runs without
 * the preload. Not a test: bench/run.sh runs it (section "unwind").
 * Usage: unwind [DEPTH [CAPTURES]]  (defaults 40, 200000) */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define HA_CFI_STANDALONE 1   /* the walker without the rest of the library */
#include "../annotate/cfi.c"

#define NOINLINE __attribute__((noinline, noclone))
#define MAXF 300

enum { M_REUSE, M_STEP, M_LIBUNWIND, M_GLIBC, M_COUNT };
static const char *const mname[M_COUNT] = {
	"cfi, previous stack reused", "cfi, every frame stepped", "libunwind unw_backtrace",
	"glibc backtrace()",
};

static long captures;
static double ns[M_COUNT];
static int frames[M_COUNT];
static int (*unw_bt)(void **, int);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One method, CAPTURES times from here; keeps the best of 5 runs. */
static NOINLINE void measure(int m)
{
	uintptr_t buf[MAXF];
	double best = 0;

	for (int r = 0; r < 5; r++) {
		double t0 = now_ns();
		int n = 0;

		for (long i = 0; i < captures; i++) {
			switch (m) {
			case M_REUSE:
				n = ha_cfi_backtrace(buf, MAXF);
				break;
			case M_STEP:
				ha_prev_mine->s = ha_prev_mine->cap;   /* forget the previous stack */
				n = ha_cfi_backtrace(buf, MAXF);
				break;
			case M_LIBUNWIND:
				n = unw_bt((void **)buf, MAXF);
				break;
			default:
				n = backtrace((void **)buf, MAXF);
				break;
			}
			__asm__ volatile("" : : "r"(buf) : "memory");
		}
		double t = (now_ns() - t0) / (double)captures;
		if (r == 0 || t < best)
			best = t;
		frames[m] = n;
	}
	ns[m] = best;
}

static NOINLINE void chain(int n)
{
	if (n > 0) {
		chain(n - 1);
		__asm__ volatile("");
		return;
	}
	for (int m = 0; m < M_COUNT; m++)
		if (m != M_LIBUNWIND || unw_bt)
			measure(m);
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 40;
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	uintptr_t warm[MAXF];

	captures = argc > 2 ? atol(argv[2]) : 200000;
	if (h) {
		int (*policy)(void *, int) = (int (*)(void *, int))dlsym(h, "_ULx86_64_set_caching_policy");
		void **as = dlsym(h, "_ULx86_64_local_addr_space");

		*(void **)&unw_bt = dlsym(h, "unw_backtrace");
		if (policy && as)
			policy(*as, 2);   /* UNW_CACHE_PER_THREAD */
	}
	ha_cfi_init();
	backtrace((void **)warm, 4);   /* loads libgcc_s */
	if (ha_cfi_backtrace(warm, MAXF) < 0) {
		fprintf(stderr, "unwind: the walker cannot walk this stack\n");
		return 1;
	}
	chain(depth);
	printf("== one stack capture at the bottom of %d frames (best of 5 x %ld)\n", depth, captures);
	printf("%-28s | %-6s | %-10s | %-9s | %s\n", "method", "frames", "ns/capture", "ns/frame",
	       "vs libunwind");
	printf("-----------------------------+--------+------------+-----------+-------------\n");
	for (int m = 0; m < M_COUNT; m++) {
		if (m == M_LIBUNWIND && !unw_bt)
			continue;
		printf("%-28s | %-6d | %-10.1f | %-9.2f | ", mname[m], frames[m], ns[m],
		       ns[m] / (frames[m] ? frames[m] : 1));
		if (unw_bt)
			printf("%.2fx\n", ns[m] / ns[M_LIBUNWIND]);
		else
			printf("-\n");
	}
	return 0;
}
