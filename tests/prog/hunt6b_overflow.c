/* hunt6b_overflow.c - a block that overflows into its neighbour, for
 * tests/run-hunt6b-addr.sh: culprit's 40 bytes are overwritten up to the first
 * 8 bytes of the next block (victim's 64), erasing victim's whole header; a
 * second victim block after it, and a quiet block whose guard stays intact
 * before the culprit. Prints the four addresses, then aborts for a kernel core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *quiet(size_t n) { return malloc(n); }
__attribute__((noinline)) void *culprit(size_t n) { return malloc(n); }
__attribute__((noinline)) void *victim(size_t n) { return malloc(n); }

int main(void)
{
	char *q = quiet(24);
	char *a = culprit(40);
	char *b = victim(64);
	char *c = victim(64);

	printf("quiet %p\nculprit %p\nvictim %p\nvictim2 %p\n", (void *)q, (void *)a, (void *)b, (void *)c);
	fflush(stdout);
	if (b < a || b - a > 4096)
		return 1;   /* not laid out one after the other: nothing to test */
	memset(a, 'A', (size_t)(b - a) + 8);
	abort();
}
