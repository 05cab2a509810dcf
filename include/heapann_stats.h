/* heapann_stats.h - the statistics region: the second contract between annotate/
 * and coreparse/ (after heapann_block.h).
 *
 * libheapann keeps mprof's statistics in one anonymous mapping of its own, so that a
 * core (or a raw dump that includes it) carries the whole allocation history, freed
 * blocks included. The reader finds the region by its signature. Header-only and
 * pure, like heapann_block.h: compiled inside malloc and by the reader.
 *
 * Layout, in target words (W = 4 or 8) and target byte order, from the region
 * address R (page aligned). All offsets are in bytes from R.
 *
 *   +--------------------+ R
 *   | header, 16 words   |  MAGIC0 MAGIC1 VERSION HDR_WORDS CHECK TOTAL STACK_CAP
 *   |                    |  STACK_DEPTH OFF_COUNTERS OFF_BINS OFF_TIMELINE OFF_STACKS
 *   |                    |  TL_CAP NCOUNTERS NBINS ENTRY_WORDS
 *   +--------------------+ R + OFF_COUNTERS
 *   | counters           |  NCOUNTERS words, see enum heapann_stats_counter (16,
 *   |                    |  then the per-thread shards of the calls per entry point)
 *   +--------------------+ R + OFF_BINS
 *   | size bins          |  copies of NBINS x 4 words, as many as fit between
 *   |                    |  OFF_BINS and OFF_TIMELINE (1..64; a thread adds to the
 *   |                    |  copy of its shard, the reader sums the copies):
 *   |                    |  ALLOCS BYTES FREES BYTES_FREED; bin s
 *   |                    |  holds requests of s bytes (s <= 1024), bin 1025 the larger;
 *   |                    |  BYTES and BYTES_FREED are kept for bin 1025 only (for the
 *   |                    |  others they are ALLOCS * s and FREES * s)
 *   +--------------------+ R + OFF_TIMELINE
 *   | timeline           |  TL_CAP x 2 words: TIME LIVE (C_TL_COUNT of them are valid)
 *   +--------------------+ R + OFF_STACKS
 *   | stack table        |  STACK_CAP entries x ENTRY_WORDS words (open addressing):
 *   |                    |  HASH DEPTH ALLOCS TEMP (reserved) (reserved)
 *   |                    |  CLS_BYTES[4] (reserved)[4] FRAMES[STACK_DEPTH]; a slot's
 *   |                    |  bytes are the sum of its CLS_BYTES
 *   +--------------------+ R + TOTAL
 *
 *   MAGIC0/1  HEAPANN_STATS_MAGIC{0,1}_{64,32}: the signature the reader looks for.
 *   CHECK     heapann_check(R, TOTAL, STACK_DEPTH, STACK_CAP, VERSION | TL_CAP << 8):
 *             a copy of the header anywhere else fails validation.
 *   HASH      0: empty slot; otherwise the stack's hash (never 0; the writer's own
 *             function, which readers need not know).
 *   DEPTH     bits 0-8: frames stored (<= STACK_DEPTH); HEAPANN_STATS_READY once the
 *             frames are written. A slot with a HASH but without READY is being filled
 *             (or its writer died): the reader skips it. HEAPANN_STATS_CUT: the slot's
 *             chains went on past its frames (the block headers' HEAPANN_DEPTH_CUT); a
 *             cut chain and a whole one with the same frames have a slot each. Always
 *             0 from writers before block format 2, so no new version.
 *   FRAMES    return addresses, innermost first, as in the block header (the first
 *             STACK_DEPTH of them when the capture was deeper, with HEAPANN_STATS_CUT:
 *             all chains that share those frames count in one slot).
 *   TEMP      (version 3) temporary allocations: blocks of this slot freed by the
 *             thread that allocated them before it allocated anything else (a
 *             realloc frees the old block and allocates the new one, so growing
 *             the last block made is temporary too); heaptrack's "temporary
 *             allocations", per thread. 0 and not counted in version 2.
 *   CLS_*     bytes per mprof size class: 0-32, 33-256, 257-2048, larger.
 *   TIME      bytes allocated plus bytes freed so far (Massif's --time-unit=B).
 *
 * Few words are written per call, to keep the cost down: an allocation adds to
 * BYTES, its bin's ALLOCS and its slot's ALLOCS and CLS_BYTES (through its
 * thread's pending words while it stays on one slot, enum heapann_stats_pending:
 * a slot's counts are its words plus the pending words of every shard that names
 * it); a free adds to BYTES_FREED and its bin's FREES only (the size is all it
 * needs: it never reads the block's stack), and, when the block is its thread's
 * last allocation, to the TEMP word of the slot that allocation noted (or
 * UNREC_TEMP). Live bytes are BYTES - BYTES_FREED and
 * TIME is BYTES + BYTES_FREED (no counter words of their own); allocation and
 * free counts are the sums of the bins.
 *
 * libheapann.so records the libraries dlclose unloaded in a table of its own
 * (include/heapann_unload.h) and stores its address in counter UNLOAD_TABLE.
 *
 * Damage libheapann finds while the program runs (a broken guard at free or
 * realloc, a second free) is counted in GUARD_BREAKS and BAD_FREES: the block is
 * gone by the time a core is taken, so the core holds no other trace of it.
 * These words were reserved and always 0 in earlier version-2 writers, so a
 * reader needs no new version to read them.
 *
 * Per-stack frees are not counted in the process (version 2; version 1 kept FREES
 * and CLS_FREED per slot and UNREC_FREES, now 0; its counter word is LAST_GUARD_SEQ). A reader derives
 * them: every live block carries its full stack in its header, so a slot's frees
 * are its ALLOCS minus the live blocks of the image whose first STACK_DEPTH frames
 * are the slot's FRAMES, and its bytes freed per class are CLS_BYTES minus their
 * sizes; unrecorded frees are UNREC_ALLOCS minus the live blocks whose stack has
 * no slot. This assumes every live block is in the image: one missing (memory not
 * dumped, a header overwritten) counts as freed.
 *
 * Every counter is a target word updated with relaxed atomic adds (or plain stores
 * by the one thread whose shard it is in), so on a 32-bit target byte counts wrap
 * at 4 GiB. The region holds no heap pointers (only return addresses, counts and
 * slot numbers), so a reachability scan never takes it for a reference.
 */
#ifndef HEAPANN_STATS_H
#define HEAPANN_STATS_H

#include <stdint.h>

#include "heapann_block.h"

#define HEAPANN_STATS_VERSION 3u   /* 2: per-stack frees derived by the reader;
				    * 3: slots count temporary allocations (TEMP) */
#define HEAPANN_STATS_VERSION_MIN 2u  /* the oldest a reader takes */
#define HEAPANN_STATS_HDR_WORDS 16u
#define HEAPANN_STATS_CALL_SHARDS 64u      /* per-thread shards of the call counts */
#define HEAPANN_STATS_CALL_SHARD_WORDS 16u
#define HEAPANN_STATS_NCOUNTERS (16u + HEAPANN_STATS_CALL_SHARDS * HEAPANN_STATS_CALL_SHARD_WORDS)
#define HEAPANN_STATS_NBINS 1026u
#define HEAPANN_STATS_BIN_LARGE 1025u
#define HEAPANN_STATS_BIN_WORDS 4u
#define HEAPANN_STATS_BIN_SHARDS 16u       /* copies of the bins libheapann makes */
#define HEAPANN_STATS_MAX_BIN_SHARDS 64u   /* the most a reader accepts */
#define HEAPANN_STATS_NCLASSES 4u
#define HEAPANN_STATS_ENTRY_FIXED 14u      /* entry words before FRAMES */
#define HEAPANN_STATS_READY 0x10000u       /* in an entry's DEPTH word */
#define HEAPANN_STATS_DEPTH_MASK 0x1FFu
#define HEAPANN_STATS_CUT 0x20000u         /* in an entry's DEPTH word: cut chains */
#define HEAPANN_STATS_KEY_MASK (HEAPANN_STATS_DEPTH_MASK | HEAPANN_STATS_CUT)
#define HEAPANN_STATS_TL_MIN 1024u         /* the reader accepts TL_CAP >= this */
#define HEAPANN_STATS_MAX_STACKS (1u << 24)

#define HEAPANN_STATS_MAGIC0_64 0x57A75C0DE5A110C8ULL
#define HEAPANN_STATS_MAGIC1_64 0x1DE4B17A57A7B1E5ULL
#define HEAPANN_STATS_MAGIC0_32 0x57A75A11u
#define HEAPANN_STATS_MAGIC1_32 0xB17A57A7u

/* Header word indices. */
enum heapann_stats_hdr {
	HEAPANN_SH_MAGIC0 = 0,
	HEAPANN_SH_MAGIC1 = 1,
	HEAPANN_SH_VERSION = 2,
	HEAPANN_SH_HDR_WORDS = 3,
	HEAPANN_SH_CHECK = 4,
	HEAPANN_SH_TOTAL = 5,
	HEAPANN_SH_STACK_CAP = 6,
	HEAPANN_SH_STACK_DEPTH = 7,
	HEAPANN_SH_OFF_COUNTERS = 8,
	HEAPANN_SH_OFF_BINS = 9,
	HEAPANN_SH_OFF_TIMELINE = 10,
	HEAPANN_SH_OFF_STACKS = 11,
	HEAPANN_SH_TL_CAP = 12,
	HEAPANN_SH_NCOUNTERS = 13,
	HEAPANN_SH_NBINS = 14,
	HEAPANN_SH_ENTRY_WORDS = 15,
};

/* Counter word indices (from OFF_COUNTERS). */
enum heapann_stats_counter {
	HEAPANN_SC_UNLOAD_TABLE = 0,  /* address of the table of unloaded libraries
				       * (include/heapann_unload.h), 0: none; once
				       * ALLOCS, reserved and 0, so no new version */
	HEAPANN_SC_UNREC_TEMP = 1,    /* temporary allocations whose stack found no slot
				       * (version 3); once FREES, reserved and 0 */
	HEAPANN_SC_BYTES = 2,         /* bytes requested */
	HEAPANN_SC_BYTES_FREED = 3,   /* requested bytes of the blocks freed */
	HEAPANN_SC_GUARD_BREAKS = 4,  /* broken guards libheapann found at free or realloc
				       * (its block is gone); once 0 and reserved */
	HEAPANN_SC_PEAK = 5,          /* highest live bytes seen */
	HEAPANN_SC_PEAK_TIME = 6,     /* time when PEAK was reached */
	HEAPANN_SC_BAD_FREES = 7,     /* frees and reallocs of a freed block or of one
				       * whose header is damaged; once 0 and reserved */
	HEAPANN_SC_STACKS = 8,        /* stack table slots taken */
	HEAPANN_SC_UNREC_ALLOCS = 9,  /* allocations whose stack found no slot */
	HEAPANN_SC_UNREC_BYTES = 10,
	HEAPANN_SC_LAST_GUARD_SEQ = 11, /* sequence number of the last block counted in
				       * GUARD_BREAKS; once UNREC_FREES, 0 and reserved */
	HEAPANN_SC_TL_COUNT = 12,     /* valid timeline samples */
	HEAPANN_SC_TL_INTERVAL = 13,  /* TIME between samples (doubles when full) */
	HEAPANN_SC_TL_NEXT = 14,      /* TIME of the next sample */
	HEAPANN_SC_TL_LOCK = 15,      /* timeline try-lock (1 while a sample is taken) */
	/* Calls per entry point: CALL_SHARDS shards of CALL_SHARD_WORDS words from
	 * here; word i of a shard counts enum heapann_call i. A thread takes a shard
	 * of its own (written without atomics); threads beyond the last share the last
	 * one with atomic adds. The count is the sum over the shards. The size bins
	 * are sharded the same way (with N copies, thread shard n uses copy
	 * min(n, N), the last shared with atomic adds). */
	HEAPANN_SC_CALLS = 16,
};

/* Word indices inside a call shard, after the HEAPANN_NCALLS call counts: the
 * allocations the shard's thread made under one stack slot and has not added to
 * the slot yet (its own words, so no atomic add per allocation; they move to the
 * slot with atomic adds when the thread allocates under another slot). A reader
 * adds them to slot PEND_SLOT - 1 (PEND_SLOT 0: none). The shared last shard
 * keeps none: its threads add to the slots directly. */
enum heapann_stats_pending {
	HEAPANN_SP_SLOT = 10,         /* 1 + the slot's index in the table; 0: none */
	HEAPANN_SP_ALLOCS = 11,       /* allocations not yet in the slot's ALLOCS */
	HEAPANN_SP_CLS_BYTES = 12,    /* 4 words: bytes not yet in its CLS_BYTES */
};

/* Entry points counted at HEAPANN_SC_CALLS + i. */
enum heapann_call {
	HEAPANN_CALL_MALLOC = 0,
	HEAPANN_CALL_CALLOC = 1,
	HEAPANN_CALL_REALLOC = 2,
	HEAPANN_CALL_FREE = 3,
	HEAPANN_CALL_REALLOCARRAY = 4,
	HEAPANN_CALL_POSIX_MEMALIGN = 5,
	HEAPANN_CALL_ALIGNED_ALLOC = 6,
	HEAPANN_CALL_MEMALIGN = 7,
	HEAPANN_CALL_VALLOC = 8,
	HEAPANN_CALL_PVALLOC = 9,
	HEAPANN_NCALLS = 10,
};

/* Entry word indices. */
enum heapann_stats_entry {
	HEAPANN_SE_HASH = 0,
	HEAPANN_SE_DEPTH = 1,
	HEAPANN_SE_ALLOCS = 2,
	HEAPANN_SE_TEMP = 3,          /* temporary allocations (version 3; 0 before) */
	HEAPANN_SE_BYTES = 4,         /* reserved (0): the sum of CLS_BYTES */
	HEAPANN_SE_BYTES_FREED = 5,   /* reserved (0): derived by the reader */
	HEAPANN_SE_CLS_BYTES = 6,
	HEAPANN_SE_CLS_FREED = 10,    /* 4 words reserved (0): derived by the reader */
	HEAPANN_SE_FRAMES = 14,
};

static inline uint64_t heapann_stats_magic0(unsigned w)
{
	return w == 8 ? HEAPANN_STATS_MAGIC0_64 : HEAPANN_STATS_MAGIC0_32;
}

static inline uint64_t heapann_stats_magic1(unsigned w)
{
	return w == 8 ? HEAPANN_STATS_MAGIC1_64 : HEAPANN_STATS_MAGIC1_32;
}

/* Is VERSION a region version a reader takes? */
static inline int heapann_stats_version_ok(uint64_t version)
{
	return version >= HEAPANN_STATS_VERSION_MIN && version <= HEAPANN_STATS_VERSION;
}

/* The header's CHECK word for a region of that version at address r. */
static inline uint64_t heapann_stats_check(uint64_t r, uint64_t total, uint64_t stack_depth,
					   uint64_t stack_cap, uint64_t tl_cap, uint64_t version,
					   unsigned w)
{
	return heapann_check(r, total, stack_depth, stack_cap, version | (tl_cap << 8), w);
}

/* mprof's size class of a request (index into CLS_BYTES). */
static inline unsigned heapann_stats_class(uint64_t size)
{
	return size <= 32 ? 0 : size <= 256 ? 1 : size <= 2048 ? 2 : 3;
}

#endif /* HEAPANN_STATS_H */
