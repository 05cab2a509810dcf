/* alloc.c - the allocation benchmark: every allocation is made at the bottom of a
 * chain of DEPTH real frames, with a window of live blocks and a fixed seed, so the
 * plain run and every profiler see exactly the same work. Not a test: bench/run.sh
 * runs it side by side under each profiler and compares CPU time and peak RSS.
 * Built with -O2 -fno-optimize-sibling-calls so the chain stays a chain.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "heapann_block.h"

#define NOINLINE __attribute__((noinline, noclone))

/* The knobs, from the command line (see usage()). */
struct bench_opts {
	long ops;        /* total operations, split evenly among the threads */
	int threads;     /* worker threads (1 = the main thread does the work) */
	int depth;       /* frames in the chain above each malloc call */
	long window;     /* live blocks kept per thread */
	uint64_t seed;   /* fixed seed: the same sizes and slots on every run */
	long touch;      /* bytes of each new block written (0 = all of it) */
	long batch;      /* operations per descent of the chain */
	int spread;      /* sizes: 0 = the mix below, 1 = spread evenly over 16 B..64 KiB on a log scale */
};

/* One worker's state: the window of live blocks and its random stream. */
struct bench_worker {
	const struct bench_opts *opts;
	void **slots;       /* window of live blocks (NULL = empty slot) */
	long ops;           /* operations for this worker */
	uint64_t rng;       /* xorshift64* state */
	uint64_t sum;       /* keeps the writes observable */
	void *probe;        /* one block made at the bottom of the chain, kept for the check */
	uintptr_t ra_chain; /* return address of the recursive call inside bench_chain */
	uintptr_t ra_top;   /* where bench_worker_run returns to: the thread's entry */
};

static uint64_t bench_rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Size mix: 15 in 16 between 16 and 512 bytes, 1 in 16 between 513 bytes and 64 KiB. */
static size_t bench_size_pick(uint64_t r)
{
	if ((r & 15) != 0)
		return 16 + (size_t)((r >> 8) % (512 - 16 + 1));
	return 513 + (size_t)((r >> 8) % (65536 - 513 + 1));
}

/* Sizes spread from 16 B to 64 KiB on a log scale: a power of two from 2^4 to
 * 2^15 picked evenly, then a size evenly between it and twice it. */
static size_t bench_size_spread(uint64_t r)
{
	unsigned e = 4 + (unsigned)((r >> 8) % 12);
	return ((size_t)1 << e) + (size_t)((r >> 16) % ((uint64_t)1 << e));
}

/* One operation at the bottom of the chain: replace a random slot of the window. */
static NOINLINE void bench_op(struct bench_worker *w)
{
	uint64_t r = bench_rng_next(&w->rng);
	long slot = (long)((r >> 40) % (uint64_t)w->opts->window);
	size_t size = w->opts->spread ? bench_size_spread(r) : bench_size_pick(r);
	free(w->slots[slot]);
	unsigned char *p = malloc(size);
	if (p == NULL) {
		w->slots[slot] = NULL;
		return;
	}
	size_t n = w->opts->touch > 0 && (size_t)w->opts->touch < size ? (size_t)w->opts->touch : size;
	memset(p, (int)(r & 0xFF), n);
	p[size - 1] = (unsigned char)r;
	w->sum += p[0];
	w->slots[slot] = p;
}

/* The chain: LEVEL real frames, each calling the next and doing work after the call
 * (so neither tail-call optimization nor the compiler can fold it into a loop). */
static NOINLINE long bench_chain(struct bench_worker *w, int level, long ops)
{
	long done;
	if (level > 1) {
		done = bench_chain(w, level - 1, ops);
		__asm__ volatile("" : : "r"(done) : "memory"); /* work after the call */
		return done;
	}
	/* Bottom of the chain: the caller is the recursive call site (when there is
	 * one), which a complete stack holds depth-1 times. */
	if (w->opts->depth > 1)
		w->ra_chain = (uintptr_t)__builtin_return_address(0);
	if (w->probe == NULL) {
		w->probe = malloc(48);
		__asm__ volatile("" : : "r"(w->probe) : "memory");
	}
	for (done = 0; done < ops; done++)
		bench_op(w);
	return done;
}

/* Runs the worker's operations, opts->batch at a time at the bottom of the chain. */
static NOINLINE void *bench_worker_run(void *arg)
{
	struct bench_worker *w = arg;
	w->ra_top = (uintptr_t)__builtin_return_address(0);
	long left = w->ops;
	while (left > 0) {
		long n = left < w->opts->batch ? left : w->opts->batch;
		left -= bench_chain(w, w->opts->depth, n);
	}
	__asm__ volatile("" : : : "memory");
	return NULL;
}

/* What the header in front of the probe block says, if there is one: the captured
 * depth, or -1 when the block carries no valid libheapann header (plain run or
 * another profiler). *complete is set when every chain frame and the thread's entry
 * are among the return addresses. */
static int bench_probe_depth(const struct bench_worker *w, int *complete, long *overhead)
{
	*complete = 0;
	*overhead = -1;
	if (w->probe == NULL)
		return -1;
	const uint64_t *user = w->probe;
	uint64_t end = user[-1];
	if ((end & ~(uint64_t)HEAPANN_END_DEPTH_MASK) != HEAPANN_END_LIVE64)
		return -1;
	uint64_t depth = end & HEAPANN_END_DEPTH_MASK;
	if (depth > HEAPANN_MAX_DEPTH)
		return -1;
	const uint64_t *h = user - heapann_header_bytes(depth, 8) / 8;
	if (h[HEAPANN_W_START] != HEAPANN_START_LIVE64 || heapann_depth_frames(h[HEAPANN_W_DEPTH]) != depth ||
	    h[HEAPANN_W_CHECK] != heapann_check((uint64_t)(uintptr_t)h, h[HEAPANN_W_SIZE],
						h[HEAPANN_W_DEPTH], h[HEAPANN_W_SEQ], h[HEAPANN_W_INFO], 8))
		return -1;
	long chain = 0;
	int top = 0;
	for (uint64_t i = 0; i < depth; i++) {
		uint64_t ra = h[HEAPANN_W_FRAMES + i];
		if (ra == w->ra_chain)
			chain++;
		if (ra == w->ra_top)
			top = 1;
	}
	*complete = chain == w->opts->depth - 1 && top;
	/* Bytes the block costs beyond the user's: alignment pad, header, guard. */
	uint64_t info = h[HEAPANN_W_INFO];
	*overhead = (long)(heapann_info_pad(info) * 8 + heapann_header_bytes(depth, 8) +
			   heapann_info_guard(info));
	return (int)depth;
}

static void usage(void)
{
	fprintf(stderr, "usage: alloc [--ops N] [--threads T] [--depth D] [--window W] [--seed S] [--touch B] [--batch K]\n"
			"             [--sizes mix|spread]\n");
	exit(2);
}

static long arg_long(const char *name, const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 0);
	if (*s == '\0' || *end != '\0' || v < min) {
		fprintf(stderr, "alloc: bad value for %s: '%s'\n", name, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .ops = 2000000, .threads = 1, .depth = 10, .window = 4096,
				.seed = 42, .touch = 0, .batch = 1 };
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *k = argv[i], *v = argv[++i];
		if (strcmp(k, "--ops") == 0)
			o.ops = arg_long(k, v, 1);
		else if (strcmp(k, "--threads") == 0)
			o.threads = (int)arg_long(k, v, 1);
		else if (strcmp(k, "--depth") == 0)
			o.depth = (int)arg_long(k, v, 1);
		else if (strcmp(k, "--window") == 0)
			o.window = arg_long(k, v, 1);
		else if (strcmp(k, "--seed") == 0)
			o.seed = (uint64_t)arg_long(k, v, 0);
		else if (strcmp(k, "--touch") == 0)
			o.touch = arg_long(k, v, 0);
		else if (strcmp(k, "--batch") == 0)
			o.batch = arg_long(k, v, 1);
		else if (strcmp(k, "--sizes") == 0 && (strcmp(v, "mix") == 0 || strcmp(v, "spread") == 0))
			o.spread = strcmp(v, "spread") == 0;
		else
			usage();
	}
	if (o.threads > 64 || o.depth > 10000)
		usage();

	struct bench_worker w[64];
	memset(w, 0, sizeof w);
	for (int t = 0; t < o.threads; t++) {
		w[t].opts = &o;
		w[t].ops = o.ops / o.threads + (t < o.ops % o.threads);
		w[t].rng = (o.seed + 1) * 0x9E3779B97F4A7C15ULL + (uint64_t)t * 0xD1B54A32D192ED03ULL;
		if (w[t].rng == 0)
			w[t].rng = 1;
		w[t].slots = calloc((size_t)o.window, sizeof *w[t].slots);
		if (w[t].slots == NULL) {
			fprintf(stderr, "alloc: out of memory for the window\n");
			return 1;
		}
	}
	if (o.threads == 1) {
		bench_worker_run(&w[0]);
	} else {
		pthread_t tid[64];
		for (int t = 0; t < o.threads; t++)
			if (pthread_create(&tid[t], NULL, bench_worker_run, &w[t]) != 0) {
				fprintf(stderr, "alloc: cannot create thread %d\n", t);
				return 1;
			}
		for (int t = 0; t < o.threads; t++)
			pthread_join(tid[t], NULL);
	}

	/* Report on the last worker's probe (the one a 2-thread run makes in a thread). */
	int complete = 0;
	long overhead = -1;
	int depth = bench_probe_depth(&w[o.threads - 1], &complete, &overhead);
	uint64_t sum = 0;
	for (int t = 0; t < o.threads; t++) {
		sum += w[t].sum;
		for (long i = 0; i < o.window; i++)
			free(w[t].slots[i]);
		free(w[t].slots);
		free(w[t].probe);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("alloc: ops=%ld threads=%d depth=%d window=%ld sizes=%s seed=%llu captured=%d complete=%s "
	       "overhead_bytes=%ld maxrss_kb=%ld cpu_s=%.3f sum=%llu\n",
	       o.ops, o.threads, o.depth, o.window, o.spread ? "spread" : "mix", (unsigned long long)o.seed, depth,
	       depth < 0 ? "-" : complete ? "yes" : "no", overhead, ru.ru_maxrss,
	       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       (unsigned long long)sum);
	return 0;
}
