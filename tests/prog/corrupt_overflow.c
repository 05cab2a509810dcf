/* corrupt_overflow.c - heap corruption on purpose, for tests/run-corruption.sh.
 * Neighbouring blocks come from distinct functions so that the report can name
 * each by its allocation site; the program prints every address it knows as
 * "name=0x..." lines, then waits for a gcore (mode wait) or crashes (mode crash).
 *
 *   corrupt_overflow all           every SIZE of 1 24 100 4096 100000 with every
 *                                  OVERRUN of 1 8 40 200, names prefixed cSIZE_OVERRUN_,
 *                                  and 24 with 64 (prefix c24_64_)
 *   corrupt_overflow overflow SIZE OVERRUN wait|crash
 *       prev, culprit (SIZE bytes), next (512 bytes), after; writes OVERRUN bytes
 *       past the culprit's end. crash: then follows a pointer kept at the start of
 *       next's data, which an overrun that reaches it has overwritten.
 *   corrupt_overflow interval      overflow 8 bytes, then allocate 100 more blocks
 *   corrupt_overflow underrun [N]  writes the N (8) bytes just before victim's data
 *   corrupt_overflow addr          a guard address, a write into freed memory,
 *                                  a global and a stack variable
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct next_data {
	long *counter;          /* followed after the overflow in mode crash */
	char rest[504];
};

long global_table[8];       /* --addr &global_table[2] names it as global_table+16 */
static long counter_value = 42;

__attribute__((noinline)) static void *alloc_prev(void) { return malloc(48); }
__attribute__((noinline)) static void *alloc_culprit(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *alloc_next(void) { return malloc(sizeof(struct next_data)); }
__attribute__((noinline)) static void *alloc_after(void) { return malloc(64); }
__attribute__((noinline)) static void *alloc_victim(void) { return malloc(64); }
__attribute__((noinline)) static void *alloc_past(void) { return malloc(24); }
__attribute__((noinline)) static void *alloc_freed(void) { return malloc(100); }

/* Write n bytes of c from p on, byte by byte, through a volatile pointer: no
 * builtin memset that a fortified or optimizing build could check or drop. */
__attribute__((noinline)) static void scribble(void *p, int c, size_t n)
{
	volatile unsigned char *q = p;

	for (size_t i = 0; i < n; i++)
		q[i] = (unsigned char)c;
}

static void finish(const char *how)
{
	char line[16];

	printf("ready\n");
	fflush(stdout);
	if (!strcmp(how, "wait"))
		(void)!fgets(line, sizeof(line), stdin);
}

/* One culprit and its neighbours; addresses printed as PREFIXname=0x... */
static struct next_data *overflow(const char *prefix, size_t size, size_t overrun)
{
	char *prev = alloc_prev();
	char *culprit = alloc_culprit(size);
	struct next_data *next = alloc_next();
	char *after = alloc_after();

	next->counter = &counter_value;
	scribble(culprit, 'c', size);
	scribble(culprit + size, 'X', overrun);
	printf("%sprev=%p\n%sculprit=%p\n%snext=%p\n%safter=%p\n%ssize=%zu\n%soverrun=%zu\n",
	       prefix, (void *)prev, prefix, (void *)culprit, prefix, (void *)next, prefix,
	       (void *)after, prefix, size, prefix, overrun);
	/* the neighbours are where the test expects them: next after the culprit */
	printf("%slibc_fn=%p\n", prefix, (void *)(uintptr_t)&abort);   /* code: not in a kernel core */
	printf("%sadjacent=%d\n", prefix, (char *)next > culprit && (size_t)((char *)next - culprit) < size + 4096);
	printf("%sreaches_next_data=%d\n", prefix, culprit + size + overrun > (char *)next);
	return next;
}

/* Every size with every overrun, each with its own neighbours, in one process. */
static int overflow_all(void)
{
	static const size_t sizes[] = { 1, 24, 100, 4096, 100000 };
	static const size_t overruns[] = { 1, 8, 40, 200 };
	char prefix[64];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t k = 0; k < sizeof(overruns) / sizeof(overruns[0]); k++) {
			snprintf(prefix, sizeof(prefix), "c%zu_%zu_", sizes[i], overruns[k]);
			overflow(prefix, sizes[i], overruns[k]);
		}
	/* past the neighbour's DEPTH word, short of its END word */
	overflow("c24_64_", 24, 64);
	finish("wait");
	return 0;
}

/* Overflow a block by 8 bytes, then keep allocating: with HEAPANN_CHECK_INTERVAL=N
 * and HEAPANN_ABORT_ON_CORRUPTION=1 the process aborts within N allocations; without
 * it runs to the end ("survived"). Unbuffered output: the count survives abort(). */
static int interval(void)
{
	char *culprit;

	setvbuf(stdout, NULL, _IONBF, 0);
	culprit = alloc_culprit(40);
	printf("culprit=%p\n", (void *)culprit);
	scribble(culprit + 40, 'X', 8);
	for (int i = 1; i <= 100; i++) {
		printf("after=%d\n", i);
		(void)!alloc_after();
	}
	printf("survived=1\n");
	return 0;
}

static int underrun(size_t n)
{
	char *prev = alloc_prev();
	char *victim = alloc_victim();
	char *after = alloc_after();

	scribble(victim - n, 'U', n);
	printf("prev=%p\nvictim=%p\nafter=%p\n", (void *)prev, (void *)victim, (void *)after);
	printf("adjacent=%d\n", victim > prev && victim - prev < 4096);
	finish("wait");
	return 0;
}

static int addr(void)
{
	long on_stack = 7;
	char *past = alloc_past();
	char *freed = alloc_freed();

	scribble(past, 'p', 24);
	uintptr_t freed_at = (uintptr_t)freed;

	free(freed);
	scribble((char *)freed_at + 16, 'F', 8);   /* a write into freed memory */
	printf("past=%p\nfreed=%#lx\nglobal=%p\nstack=%p\n", (void *)past, (unsigned long)freed_at,
	       (void *)global_table, (void *)&on_stack);
	finish("wait");
	return (int)on_stack - 7;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "all"))
		return overflow_all();
	if (argc == 5 && !strcmp(argv[1], "overflow")) {
		struct next_data *next = overflow("", strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));

		if (!strcmp(argv[4], "crash")) {
			fflush(stdout);
			printf("counter=%ld\n", *next->counter);   /* SIGSEGV once overwritten */
		}
		finish(argv[4]);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "interval"))
		return interval();
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "underrun"))
		return underrun(argc == 3 ? strtoul(argv[2], NULL, 0) : 8);
	if (argc == 2 && !strcmp(argv[1], "addr"))
		return addr();
	fprintf(stderr, "usage: corrupt_overflow all | overflow SIZE OVERRUN wait|crash | interval | underrun [N] | addr\n");
	return 2;
}
