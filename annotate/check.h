/* check.h - HEAPANN_CHECK_INTERVAL=N: verify every live block's header and guard
 * every N allocations (annotate/check.c). The hooks below sit on the allocation
 * and free paths (hook.h); while the option is unset each is one load of
 * ha_check_on and a branch not taken. Called inside malloc with the re-entrancy
 * guard held: nothing here allocates or takes a lock. */
#ifndef HA_CHECK_H
#define HA_CHECK_H

/* Non-zero when HEAPANN_CHECK_INTERVAL is set and the registry exists. */
extern int ha_check_on;

/* Slow paths of the hooks (check.c). */
void ha_check_register(const void *user);
void ha_check_unregister(const void *user);

#ifndef HEAPANN_NO_CHECK
/* A block was handed out: remember it, and every N-th time verify all remembered
 * blocks (reporting and, with HEAPANN_ABORT_ON_CORRUPTION=1, aborting). */
static inline void ha_check_alloc(const void *user)
{
	if (__builtin_expect(ha_check_on, 0))
		ha_check_register(user);
}

/* The block is about to go back to the real allocator (its header still intact):
 * forget it, waiting for a verification that is reading it right now. */
static inline void ha_check_free(const void *user)
{
	if (__builtin_expect(ha_check_on, 0))
		ha_check_unregister(user);
}
#else
/* -DHEAPANN_NO_CHECK (a firmware that wants neither the code nor mmap): no hooks. */
static inline void ha_check_alloc(const void *user) { (void)user; }
static inline void ha_check_free(const void *user) { (void)user; }
#endif

#endif /* HA_CHECK_H */
