/* hunt4_rebuilt.c - a program (and its library, built from this file with
 * -DHUNT4_LIB) without a build-id, for tests/run-hunt4-rebuilt.sh: the test
 * gcores it, then rebuilds it with HUNT4_SHIFT set, which moves every call site
 * (a padding function in front), and asks both symbolizers for names. Without a
 * build-id nothing in the core tells the new file from the old one but its
 * modification time: the frames must not be named from the new file silently.
 * main allocates 3 blocks of 40 bytes at MARK:main_site, the library 2 of 24 at
 * MARK:lib_site. Prints "ready", waits for a line on stdin.
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef HUNT4_SHIFT
/* only there to move the code after it */
__attribute__((noinline, used)) int hunt4_pad(int x)
{
	volatile int v = x;

	for (int i = 0; i < 50; i++)
		v = v * 31 + i;
	return v;
}
#endif

#ifdef HUNT4_LIB
__attribute__((noinline)) void *lib_site(size_t n)
{
	return malloc(n);   /* MARK:lib_site */
}
#else
void *lib_site(size_t n);

__attribute__((noinline)) static void *main_site(size_t n)
{
	return malloc(n);   /* MARK:main_site */
}

static void *keep[5];

int main(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = main_site(40);
	for (int i = 3; i < 5; i++)
		keep[i] = lib_site(24);
	printf("ready\n");
	fflush(stdout);
	getchar();
	return 0;
}
#endif
