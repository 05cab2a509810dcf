/* real11_dlib.c - the library tests/prog/real11_dl.c dlopens and then
 * dlcloses: every block it allocates has its stack in this library. */
#include <stdlib.h>
#include <string.h>

/* Allocate n bytes, filled with 1. */
__attribute__((noinline)) static void *r11_fill(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}

/* Leak a block of n + 1000 bytes; return another of n bytes (the caller's). */
void *r11_make(size_t n)
{
	void *lost = r11_fill(n + 1000);

	(void)lost;
	return r11_fill(n);
}
