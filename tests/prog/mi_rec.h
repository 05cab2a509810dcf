/* mi_rec.h - for the gdb/MI test programs (tests/prog/mi_*): record the return
 * address of a call together with the function and line the program knows it
 * comes from, and print them as "RA 0xADDR LINE FUNCTION" for tests/run-mi.sh.
 * Each program (and the shared library) includes its own static copy.
 */
#ifndef MI_REC_H
#define MI_REC_H

#include <stdio.h>

struct mi_rec_entry {
	void *ra;
	const char *fn;
	int line;
};

static struct mi_rec_entry mi_rec_tab[64];
static int mi_rec_n;

/* Record our caller's return address: the call site is (fn, line). Returns a
 * value the caller uses, so that the call is never a tail call. */
__attribute__((noinline)) static int mi_rec(const char *fn, int line)
{
	if (mi_rec_n < 64) {
		mi_rec_tab[mi_rec_n].ra = __builtin_return_address(0);
		mi_rec_tab[mi_rec_n].fn = fn;
		mi_rec_tab[mi_rec_n].line = line;
		mi_rec_n++;
	}
	__asm__ volatile("" ::: "memory");
	return line;
}

static void mi_rec_print(void)
{
	int i;

	for (i = 0; i < mi_rec_n; i++)
		printf("RA %p %d %s\n", mi_rec_tab[i].ra, mi_rec_tab[i].line, mi_rec_tab[i].fn);
}

#endif
