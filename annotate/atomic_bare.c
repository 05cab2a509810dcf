/* atomic_bare.c - the 4-byte atomic operations of the static kit on a Cortex-M
 * without LDREX/STREX (ARMv6-M: Cortex-M0, M0+, M1). GCC turns every __atomic
 * read-modify-write there into a call to libatomic, which bare-metal toolchains
 * do not ship, so the kit did not link. One core: an operation with interrupts
 * masked (PRIMASK) is atomic, in privileged mode only: cpsid i is ignored in
 * unprivileged thread mode. Weak: a strong definition linked as an object wins,
 * one in an archive searched later is not pulled in for them. Empty everywhere
 * else. */
#include "internal.h"

#if HA_BARE && defined(__thumb__) && !defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_4) && \
	defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#include <stdbool.h>

/* Mask interrupts; returns the previous PRIMASK for ha_irq_restore. */
static inline unsigned ha_irq_save(void)
{
	unsigned m;

	__asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(m) : : "memory");
	return m;
}

static inline void ha_irq_restore(unsigned m)
{
	__asm__ volatile("msr primask, %0" : : "r"(m) : "memory");
}

/* libatomic's entry points, declared under names of their own (GCC knows the
 * __atomic_* names as builtins). The memory orders need nothing more: one core,
 * and the masked section is a compiler barrier. */
unsigned ha_bare_fetch_add_4(volatile void *p, unsigned v, int mo) __asm__("__atomic_fetch_add_4");
unsigned ha_bare_fetch_sub_4(volatile void *p, unsigned v, int mo) __asm__("__atomic_fetch_sub_4");
unsigned ha_bare_exchange_4(volatile void *p, unsigned v, int mo) __asm__("__atomic_exchange_4");
/* libatomic's __atomic_compare_exchange_4 takes (p, expected, desired,
 * success order, failure order): no weak flag, unlike the builtin */
bool ha_bare_cas_4(volatile void *p, void *expected, unsigned desired, int mo_ok,
		   int mo_fail) __asm__("__atomic_compare_exchange_4");

__attribute__((weak)) unsigned ha_bare_fetch_add_4(volatile void *p, unsigned v, int mo)
{
	unsigned m = ha_irq_save(), old = *(volatile unsigned *)p;

	(void)mo;
	*(volatile unsigned *)p = old + v;
	ha_irq_restore(m);
	return old;
}

__attribute__((weak)) unsigned ha_bare_fetch_sub_4(volatile void *p, unsigned v, int mo)
{
	unsigned m = ha_irq_save(), old = *(volatile unsigned *)p;

	(void)mo;
	*(volatile unsigned *)p = old - v;
	ha_irq_restore(m);
	return old;
}

__attribute__((weak)) unsigned ha_bare_exchange_4(volatile void *p, unsigned v, int mo)
{
	unsigned m = ha_irq_save(), old = *(volatile unsigned *)p;

	(void)mo;
	*(volatile unsigned *)p = v;
	ha_irq_restore(m);
	return old;
}

__attribute__((weak)) bool ha_bare_cas_4(volatile void *p, void *expected, unsigned desired,
					 int mo_ok, int mo_fail)
{
	unsigned m = ha_irq_save(), cur = *(volatile unsigned *)p;
	bool ok = cur == *(unsigned *)expected;

	(void)mo_ok;
	(void)mo_fail;
	if (ok)
		*(volatile unsigned *)p = desired;
	else
		*(unsigned *)expected = cur;
	ha_irq_restore(m);
	return ok;
}
#else
/* ISO C wants a translation unit to declare something */
typedef int ha_atomic_bare_unused;
#endif
