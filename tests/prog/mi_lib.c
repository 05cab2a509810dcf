/* mi_lib.c - the shared library of the gdb/MI tests (libmi_lib.so): functions
 * that record their call sites (mi_rec.h) and allocate known blocks. Built again
 * with -DMI_VARIANT to get a library with another build-id and other addresses
 * (the rebuilt-library test of tests/run-mi.sh).
 */
#include <stdlib.h>

#include "mi_rec.h"

#ifdef MI_VARIANT
/* Shifts every function after it, so a wrong file names the wrong code. */
__attribute__((noinline)) int mi_lib_padding(int x)
{
	volatile int v = x;
	v = v * 3 + 1; v = v * 5 + 2; v = v * 7 + 3; v = v * 11 + 4;
	return v;
}
#endif

__attribute__((noinline)) static int lib_inner(int x)
{
	int r = mi_rec("lib_inner", __LINE__);
	return r + x;
}

__attribute__((noinline)) int mi_lib_outer(int x)
{
	int r = mi_rec("mi_lib_outer", __LINE__);
	return r + lib_inner(x);
}

/* Allocate one block of n bytes from inside the library. */
__attribute__((noinline)) void *mi_lib_alloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

void mi_lib_print(void)
{
	mi_rec_print();
}
