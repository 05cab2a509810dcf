/* hook.h - the place where in-memory statistics (counters, size bins, stack
 * table, timeline; a later issue) attach. The core calls these once per
 * annotated allocation and once per annotated free, inside malloc with the
 * re-entrancy guard held: an implementation must not allocate or lock. They
 * feed the statistics region of annotate/stats.c. */
#ifndef HA_HOOK_H
#define HA_HOOK_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "internal.h" /* HA_TLS */   /* HEAPANN_CHECK_INTERVAL (annotate/check.c) */

/* The statistics region (annotate/stats.c, include/heapann_stats.h). The free
 * hooks count by size only (per-stack frees are derived by the reader), and a
 * temporary allocation by the block's SEQ against the thread's last one; they
 * still run before the header is marked freed, like every free hook. */
void ha_stats_alloc(const void *user, size_t size, uintptr_t seq, unsigned depth, int cut,
		    const uintptr_t *frames);
void ha_stats_free(const void *user, size_t size, uintptr_t seq);
void ha_stats_free_undo(const void *user, size_t size, uintptr_t seq);
/* Count damage found while the program runs (GUARD 1: a broken guard of the
 * block with sequence number SEQ, checked before it goes back; 0: a free or
 * realloc of a freed block or of one whose header is damaged, SEQ unused): the
 * block is gone by the time a core is taken, so only these counters tell. */
void ha_stats_damage(int guard, uintptr_t seq);
/* Store the address of the table of unloaded libraries (include/heapann_unload.h)
 * in the region's HEAPANN_SC_UNLOAD_TABLE word, making the region if it is not
 * made yet; nothing when there is none (HEAPANN_STATS=0). Called outside malloc
 * (export_dl.c, at a dlclose that unloaded something). */
void ha_stats_unload_table(uintptr_t table);
/* Count one call of entry point ENTRY (enum heapann_call); the exported
 * functions call it first (through ha_stats_call_fast). */
void ha_stats_call(unsigned entry);
/* This thread's own call counts in the region (HEAPANN_SC_CALLS words of its
 * shard), set by ha_stats_call once the thread has a shard of its own, or
 * words of its own that nothing reads once ha_stats_call has found no region
 * (the statistics off); NULL before, and for threads that share the last
 * shard. */
extern HA_TLS uintptr_t *ha_stats_calls_mine;
/* ha_stats_call inline: a plain add to the thread's own word, without the
 * call, the region test and the shard arithmetic (issue 15: some 25
 * instructions on every malloc and free). */
static inline void ha_stats_call_fast(unsigned entry)
{
	uintptr_t *w = ha_stats_calls_mine;

	if (__builtin_expect(w != 0, 1))
		__atomic_store_n(&w[entry], w[entry] + 1, __ATOMIC_RELAXED);
	else
		ha_stats_call(entry);
}
#define HA_CALL(e) ha_stats_call_fast(HEAPANN_CALL_##e)

/* A block was handed out: USER of SIZE bytes, sequence number SEQ, DEPTH return
 * addresses in FRAMES (innermost first; FRAMES lives only during the call), CUT 1
 * when the stack went on past them. A
 * realloc reports the free of the old block first, then an alloc. */
static inline void ha_hook_alloc(const void *user, size_t size, uintptr_t seq,
				 unsigned depth, int cut, const uintptr_t *frames)
{
	ha_stats_alloc(user, size, seq, depth, cut, frames);
	ha_check_alloc(user);
}

/* The block USER (SIZE bytes, sequence number SEQ) is about to go back. */
static inline void ha_hook_free(const void *user, size_t size, uintptr_t seq)
{
	ha_stats_free(user, size, seq);
	ha_check_free(user);
}

/* A realloc whose free was reported failed: the block USER lives on. */
static inline void ha_hook_free_undo(const void *user, size_t size, uintptr_t seq)
{
	ha_stats_free_undo(user, size, seq);
	ha_check_alloc(user);
}

#endif /* HA_HOOK_H */
