/* nounwind_bad_lib.c - a library with unwind tables for tests/prog/nounwind_bad.c
 * (dlclose): nu_lib_alloc's call of helper leaves a return address whose rule
 * the walker caches when helper mallocs; the library is then unloaded. */
#include <stdint.h>
#include <stdlib.h>

uintptr_t nu_last_ra;

__attribute__((noinline)) void *helper(size_t n)
{
	nu_last_ra = (uintptr_t)__builtin_return_address(0);
	return malloc(n);
}

void *nu_lib_alloc(size_t n)
{
	void *p = helper(n);

	__asm__ volatile("" ::: "memory");
	return p;
}
