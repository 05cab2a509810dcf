/* hunt4_gdbsym.c - a program and its own shared library (this file with
 * -DHUNT4_LIB) whose own frames hold no inlined code, for
 * tests/run-hunt4-gdbsym.sh: the gdb symbolizer and libdw must name every one
 * of them alike in every report. main -> mid -> leaf allocates 5 x 40 bytes
 * (MARK:leaf), main -> lib_alloc 3 x 33 (MARK:lib), main 1 x 63 by calloc
 * (MARK:main). keep is a global, for --addr. Writes "ready", waits for a line
 * (with read and write: stdio would add blocks under its inlined getchar).
 */
#include <stdlib.h>
#include <unistd.h>

#ifdef HUNT4_LIB
__attribute__((noinline)) void *lib_alloc(size_t n)
{
	void *p = malloc(n);   /* MARK:lib */

	__asm__ volatile("" ::: "memory");   /* not a tail call */
	return p;
}
#else
void *lib_alloc(size_t n);

__attribute__((noinline)) void *leaf(size_t n)
{
	void *p = malloc(n);   /* MARK:leaf */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *mid(size_t n)
{
	void *p = leaf(n);   /* MARK:mid */

	__asm__ volatile("" ::: "memory");
	return p;
}

void *keep[16];

int main(void)
{
	int k = 0;

	for (int i = 0; i < 5; i++)
		keep[k++] = mid(40);   /* MARK:main_mid */
	for (int i = 0; i < 3; i++)
		keep[k++] = lib_alloc(33);   /* MARK:main_lib */
	keep[k++] = calloc(7, 9);   /* MARK:main */
	char c;

	if (write(1, "ready\n", 6) != 6 || read(0, &c, 1) < 0)
		return 1;
	return 0;
}
#endif
