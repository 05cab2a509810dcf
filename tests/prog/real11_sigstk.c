/* real11_sigstk.c - print sysconf(_SC_SIGSTKSZ): glibc derives it from the
 * kernel's AT_MINSIGSTKSZ (the CPU's signal frame), which valgrind's auxv
 * does not give, so it differs under valgrind (8,192) from a native run
 * (47,808 on a CPU with AMX). vim sizes its signal stack's block by it. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("%ld\n", sysconf(_SC_SIGSTKSZ));
	return 0;
}
