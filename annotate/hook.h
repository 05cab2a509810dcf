/* hook.h - the place where in-memory statistics (counters, size bins, stack
 * table, timeline; a later issue) attach. The core calls these once per
 * annotated allocation and once per annotated free, inside malloc with the
 * re-entrancy guard held: an implementation must not allocate or lock. Today
 * they do nothing and compile away. */
#ifndef HA_HOOK_H
#define HA_HOOK_H

#include <stddef.h>
#include <stdint.h>

/* A block was handed out: USER of SIZE bytes, sequence number SEQ, DEPTH return
 * addresses in FRAMES (innermost first; FRAMES lives only during the call). A
 * realloc reports the free of the old block first, then an alloc. */
static inline void ha_hook_alloc(const void *user, size_t size, uintptr_t seq,
				 unsigned depth, const uintptr_t *frames)
{
	(void)user; (void)size; (void)seq; (void)depth; (void)frames;
}

/* The block USER (SIZE bytes, sequence number SEQ) is about to go back. */
static inline void ha_hook_free(const void *user, size_t size, uintptr_t seq)
{
	(void)user; (void)size; (void)seq;
}

#endif /* HA_HOOK_H */
