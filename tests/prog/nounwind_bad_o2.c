/* nounwind_bad_o2.c - the parts of tests/prog/nounwind_bad.c built at -O2:
 * return addresses of functions with unwind tables (one with a 4 MiB frame),
 * and (built without unwind tables, -DNU_HANDLER) a SIGUSR1 handler that
 * leaves rbp as the interrupted code had it. */
#include <stdint.h>
#include <stdlib.h>

#ifdef NU_HANDLER
void *volatile nu_kept;
void nu_on_usr1(int sig) { nu_kept = malloc(100 + sig); }
#else
__attribute__((noinline)) static uintptr_t ra(void)
{
	uintptr_t r = (uintptr_t)__builtin_return_address(0);

	__asm__ volatile("" : "+r"(r));
	return r;
}

/* a return address in a function whose frame is 4 MiB: the rule of the frame
 * above it reads 4 MiB higher */
__attribute__((noinline)) uintptr_t nu_big_frame_ra(void)
{
	volatile char buf[4 << 20];

	buf[0] = 1;
	return ra() + buf[0] - 1;
}

/* a return address in a function with a small frame */
__attribute__((noinline)) uintptr_t nu_small_frame_ra(void)
{
	volatile char buf[256];

	buf[0] = 1;
	return ra() + buf[0] - 1;
}
#endif
