/* sym_libpart.c - the shared library of the symbolizer test (tests/run-symdw.sh):
 * lib_entry() calls lib_record(), which keeps its return address. Built twice
 * with different SYM_VARIANT values to give two files with different build-ids
 * and different code layouts.
 */
#ifndef SYM_VARIANT
#define SYM_VARIANT 1
#endif

static void *lib_seen;
volatile int lib_variant = SYM_VARIANT;

#if SYM_VARIANT == 2
/* Variant 2 puts code in front of lib_entry, so the old offsets now fall into
 * another function: a symbolizer that skipped the build-id check would name it. */
int lib_moved_in(int x)
{
	volatile int acc = x;
	for (int i = 0; i < 64; i++)
		acc = acc * 31 + i;
	return acc;
}
#endif

__attribute__((noinline)) static void lib_record(void)
{
	lib_seen = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

void *lib_entry(void)
{
	lib_record(); /* MARK_LIB */
	__asm__ volatile("" ::: "memory");
	return lib_seen;
}
