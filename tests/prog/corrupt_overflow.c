/* corrupt_overflow.c - heap corruption on purpose, for tests/run-corruption.sh.
 * Neighbouring blocks come from distinct functions so that the report can name
 * each by its allocation site; the program prints every address it knows as
 * "name=0x..." lines, then waits for a gcore (mode wait) or crashes (mode crash).
 *
 *   corrupt_overflow overflow SIZE OVERRUN wait|crash
 *       prev, culprit (SIZE bytes), next (512 bytes), after; writes OVERRUN bytes
 *       past the culprit's end. crash: then follows a pointer kept at the start of
 *       next's data, which an overrun that reaches it has overwritten.
 *   corrupt_overflow underrun      writes the 8 bytes just before victim's data
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

static int overflow(size_t size, size_t overrun, const char *how)
{
	char *prev = alloc_prev();
	char *culprit = alloc_culprit(size);
	struct next_data *next = alloc_next();
	char *after = alloc_after();

	next->counter = &counter_value;
	scribble(culprit, 'c', size);
	scribble(culprit + size, 'X', overrun);
	printf("prev=%p\nculprit=%p\nnext=%p\nafter=%p\nsize=%zu\noverrun=%zu\n",
	       (void *)prev, (void *)culprit, (void *)next, (void *)after, size, overrun);
	/* the neighbours are where the test expects them: next after the culprit */
	printf("adjacent=%d\n", (char *)next > culprit && (size_t)((char *)next - culprit) < size + 4096);
	printf("reaches_next_data=%d\n", culprit + size + overrun > (char *)next);
	if (!strcmp(how, "crash")) {
		fflush(stdout);
		printf("counter=%ld\n", *next->counter);   /* SIGSEGV once overwritten */
	}
	finish(how);
	return 0;
}

static int underrun(void)
{
	char *prev = alloc_prev();
	char *victim = alloc_victim();
	char *after = alloc_after();

	scribble(victim - 8, 'U', 8);
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
	free(freed);
	scribble(freed + 16, 'F', 8);   /* a write into freed memory */
	printf("past=%p\nfreed=%p\nglobal=%p\nstack=%p\n", (void *)past, (void *)freed,
	       (void *)global_table, (void *)&on_stack);
	finish("wait");
	return (int)on_stack - 7;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "overflow"))
		return overflow(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 2 && !strcmp(argv[1], "underrun"))
		return underrun();
	if (argc == 2 && !strcmp(argv[1], "addr"))
		return addr();
	fprintf(stderr, "usage: corrupt_overflow overflow SIZE OVERRUN wait|crash | underrun | addr\n");
	return 2;
}
