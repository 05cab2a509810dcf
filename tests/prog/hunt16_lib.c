/* hunt16_lib.c - a library replaced on disk while a program has it mapped, as
 * a package upgrade does (tests/run-hunt16-cores.sh). Built as the library
 * with -DH16_LIB (-DH16_V2 for the new version, whose build-id differs), else
 * as the program: it keeps 3 blocks of 333 bytes allocated in the library,
 * prints "ready", reads a line and aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef H16_LIB
#ifdef H16_V2
int h16_version = 2;
#endif
void *h16_alloc(int n)
{
	return malloc(n);
}
#else
void *h16_alloc(int n);
void *g_keep[3];

int main(void)
{
	char buf[8];

	for (int i = 0; i < 3; i++)
		g_keep[i] = h16_alloc(333);
	printf("ready\n");
	fflush(stdout);
	if (read(0, buf, sizeof buf) < 0)
		perror("read");
	abort();
}
#endif
