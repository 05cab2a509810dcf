/* mi_prog.c - the test program of tests/run-mi.sh: records call sites in the
 * program and in libmi_lib.so (mi_rec.h) and prints them as "RA ADDR LINE FN",
 * allocates known blocks (printed as "blocks N bytes B"), prints "ready" and
 * waits to be gcore'd or snapshotted; "abort" instead dumps a kernel core.
 * Built also with -static (mi_lib.c linked in) for the raw-dump case.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mi_rec.h"

int mi_lib_outer(int x);
void *mi_lib_alloc(size_t n);
void mi_lib_print(void);

static void *keep[16];

__attribute__((noinline)) static int prog_leaf(int x)
{
	int r = mi_rec("prog_leaf", __LINE__);
	return r + x;
}

__attribute__((noinline)) int prog_middle(int x)
{
	int r = mi_rec("prog_middle", __LINE__);
	r += prog_leaf(x);
	return r + mi_lib_outer(x);
}

/* Allocate sizes 100, 200, ... from here and from the library. */
__attribute__((noinline)) static size_t prog_alloc(int n)
{
	size_t total = 0;
	int i;

	for (i = 0; i < n; i++) {
		size_t sz = 100 * (size_t)(i + 1);
		keep[i] = (i & 1) ? mi_lib_alloc(sz) : malloc(sz);
		memset(keep[i], 0x5a, sz);
		total += sz;
	}
	return total;
}

int main(int argc, char **argv)
{
	static char outbuf[8192];
	int r = mi_rec("main", __LINE__);
	size_t bytes;

	/* stdio would malloc its buffer: keep the program's blocks the only ones */
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	r += prog_middle(r);
	bytes = prog_alloc(7);
	mi_rec_print();
	mi_lib_print();
	printf("blocks 7 bytes %zu\n", bytes);
	printf("ready %d\n", r > 0);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "abort") == 0)
		abort();
	for (;;)
		pause();
}
