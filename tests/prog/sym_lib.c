/* sym_lib.c - test program for the symbolizer's shared-library case
 * (tests/run-symdw.sh): prints the return address recorded inside
 * libsym_libpart.so (see sym_libpart.c) and the address of a point inside
 * libc's puts, then waits to be gcore'd.
 */
#include <stdio.h>
#include <unistd.h>

void *lib_entry(void);

int main(void)
{
	void *in_lib = lib_entry();
	printf("lib_entry %p\n", in_lib);
	printf("puts %p\n", (void *)((char *)(void *)puts + 4));
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
