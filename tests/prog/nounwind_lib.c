/* nounwind_lib.c - built with unwind tables and linked into tests/prog/nounwind.c,
 * whose code has none: a frame with an FDE between two without. */
#define NOINL __attribute__((noinline))

NOINL void nu_via_lib(void (*cb)(void))
{
	cb();                                            /* MARK:lib */
	__asm__ volatile("");
}
