/* known9_depth.c - stacks cut at HEAPANN_DEPTH (tests/run-known9.sh). Under
 * HEAPANN_DEPTH=8: three blocks of 1000 bytes allocated 13 calls of deep() down,
 * from two callers (via_a, via_b) whose stacks differ only below the cut, so
 * their 8 frames are all deep(); two blocks of 2000 bytes 3 calls down (a whole
 * stack of 7 frames with glibc 2.34+: deep x3, main, __libc_start_call_main,
 * __libc_start_main, _start); one of 2500 bytes 4 calls down (8 frames: the
 * walk reached _start, so it is whole, not cut). With "freed", the deep blocks are freed again
 * before "ready" (only the statistics region keeps their cut stack), and one
 * block of 3000 bytes is allocated 2 calls down. Prints "ready", waits for a
 * line on stdin, exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *keep[8];

__attribute__((noinline)) void *deep(int n, size_t size)
{
	void *p = n ? deep(n - 1, size) : malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");   /* no tail call */
	return p;
}

__attribute__((noinline)) void *via_a(void)
{
	void *p = deep(12, 1000);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *via_b(void)
{
	void *p = deep(12, 1000);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	char line[16];
	int freed = argc > 1 && !strcmp(argv[1], "freed");

	keep[0] = via_a();
	keep[1] = via_a();
	keep[2] = via_b();
	keep[3] = deep(2, 2000);
	keep[4] = deep(2, 2000);
	keep[6] = deep(3, 2500);   /* 8 frames exactly: whole, not cut */
	if (freed) {
		for (int i = 0; i < 3; i++) {
			free(keep[i]);
			keep[i] = 0;
		}
		keep[5] = deep(1, 3000);
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return 0;
}
