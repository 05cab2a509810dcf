/* stats.c - mprof's statistics kept in the process's own memory (the region of
 * include/heapann_stats.h): counters, size bins, a table of distinct stacks and a
 * timeline of live bytes, so that a core carries the whole allocation history.
 *
 * Runs inside malloc with the re-entrancy guard held: no stdio, no locks, nothing
 * that allocates. The region is one anonymous mapping made at the first
 * allocation. Every update is a relaxed atomic add on a shared word (no global
 * lock); a stack slot is claimed with a CAS on its hash word and published with a
 * release store of its DEPTH word; the timeline is sampled under a try-lock that
 * a contended thread simply skips (the next allocation samples instead).
 * A free never looks at the block's stack: the reader derives per-stack frees
 * from the live blocks, so a free costs one atomic add and a bin update.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "hdr.h"
#include "heapann_stats.h"
#include "hook.h"
#include "snapshot.h"
#include "internal.h"
#if !HA_BARE
#include <sys/mman.h>
#endif

#define ST_LIKELY(x) __builtin_expect(!!(x), 1)
#define ST_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define ST_DEFAULT_STACKS 16384u
#define ST_MAX_STACKS (1u << 22)
#define ST_TL_CAP 2048u          /* halves to 1024 when full: never below 1000 */
#define ST_MAX_PROBE 256u        /* slots tried before a stack counts as unrecorded */
#define ST_SPIN 100000000u       /* waiting for another thread to publish a slot */

/* 0: not made; 1: being made; 2: ready; 3: failed (no statistics). */
static int st_state;
static uintptr_t *st_counters, *st_bins, *st_tl, *st_stacks;
static uintptr_t st_mask;          /* stack slots - 1 */
static unsigned st_depth;          /* frames per slot */
static unsigned st_entry;          /* words per slot */
static unsigned st_bin_shards;     /* copies of the bins */

#define ADD(w, v) __atomic_add_fetch(&(w), (uintptr_t)(v), __ATOMIC_RELAXED)
#define SUB(w, v) __atomic_sub_fetch(&(w), (uintptr_t)(v), __ATOMIC_RELAXED)
#define LOAD(w) __atomic_load_n(&(w), __ATOMIC_RELAXED)

extern char **environ;

/* The number in environment variable NAME (given with its '='), read from
 * environ without allocating; DEF when unset or not a number. */
static unsigned long st_env(const char *name, size_t len, unsigned long def)
{
	unsigned long v = 0;

	for (char **e = environ; e && *e; e++) {
		const char *s = *e;

		if (strncmp(s, name, len) != 0)
			continue;
		s += len;
		if (*s < '0' || *s > '9')
			return def;
		while (*s >= '0' && *s <= '9' && v <= ST_MAX_STACKS)
			v = v * 10 + (unsigned long)(*s++ - '0');
		return v;
	}
	return def;
}

/* HEAPANN_STATS_STACKS: stack slots (16 .. 4M, default 16384). */
static unsigned st_env_stacks(void)
{
	static const char name[] = "HEAPANN_STATS_STACKS=";
	unsigned long v = st_env(name, sizeof(name) - 1, ST_DEFAULT_STACKS);

	if (v < 16)
		v = 16;
	return v > ST_MAX_STACKS ? ST_MAX_STACKS : (unsigned)v;
}

static uintptr_t round_up(uintptr_t v, uintptr_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Firmware may define this to keep the region in memory of its own, e.g. a
 * static buffer in the RAM it dumps (an mmap'd region is not in a dump of RAM):
 * return a buffer aligned to a word, of at least 40 KiB on a 32-bit target and
 * 80 KiB on a 64-bit one (at HEAPANN_DEPTH=32: st_buffer_refused says what a
 * smaller one lacks), and its size in *len; NULL: use mmap. Called once, at
 * the first call into the allocator, inside it. */
#ifdef HEAPANN_STATIC
void *heapann_stats_buffer(size_t *len) __attribute__((weak, visibility("default")));
#else
void *heapann_stats_buffer(size_t *len) __attribute__((weak, visibility("hidden")));
#endif

#if defined(HEAPANN_STATIC) && !HA_BARE
/* A static program whose libc has no mmap: then only heapann_stats_buffer() works. */
#pragma weak mmap
#endif

/* The region's offsets of the counters, bins, timeline and stack slots (in
 * bytes), with SHARDS copies of the bins and the slots aligned to ALIGN. */
static void st_layout(unsigned shards, uintptr_t align, uintptr_t *off_c, uintptr_t *off_b,
		      uintptr_t *off_t, uintptr_t *off_s)
{
	const uintptr_t w = HA_W;

	*off_c = round_up(HEAPANN_STATS_HDR_WORDS * w, 64);
	*off_b = round_up(*off_c + HEAPANN_STATS_NCOUNTERS * w, 64);
	*off_t = round_up(*off_b + shards * HEAPANN_STATS_NBINS * HEAPANN_STATS_BIN_WORDS * w, 64);
	*off_s = round_up(*off_t + ST_TL_CAP * 2 * w, align);
}

/* One line on stderr: heapann_stats_buffer's buffer cannot hold the region
 * (MISALIGNED, or LEN bytes where NEED are needed), so the region goes to an
 * mmap (a RAM dump does not hold it), or nowhere on bare metal. The firmware's
 * author learns it here, not from a dump without statistics. */
static __attribute__((noinline, cold)) void st_buffer_refused(int misaligned, size_t len,
							      uintptr_t need)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: heapann_stats_buffer() gave ");
	if (misaligned) {
		ha_line_str(&l, "a buffer not aligned to a word");
	} else {
		ha_line_num(&l, len, 10);
		ha_line_str(&l, " bytes; the statistics region needs ");
		ha_line_num(&l, need, 10);
		ha_line_str(&l, " (at HEAPANN_DEPTH=");
		ha_line_num(&l, st_depth, 10);
		ha_line_str(&l, ")");
	}
#if HA_BARE
	ha_line_str(&l, ": no statistics region");
#else
	ha_line_str(&l, ": the region is mmap'd instead, out of the RAM a dump of it holds");
#endif
	ha_line_send(&l);
}

/* Make and fill the region; sets st_state to 2, or 3 when there is no memory. */
static void st_make(void)
{
	const uintptr_t w = HA_W;
	unsigned want = st_env_stacks(), cap = 16;
	uintptr_t off_c, off_b, off_t, off_s, total, buf_len = 0;
	uintptr_t *r = NULL;

	static const char off[] = "HEAPANN_STATS=";

	if (st_env(off, sizeof(off) - 1, 1) == 0) {   /* HEAPANN_STATS=0: none */
		__atomic_store_n(&st_state, 3, __ATOMIC_RELEASE);
		return;
	}
	while (cap < want)
		cap <<= 1;
	/* HEAPANN_DEPTH read here as core.c reads it (not from ha_opt), so that the
	 * region can be made at the very first call, before the options are loaded */
	{
		static const char dname[] = "HEAPANN_DEPTH=";
		unsigned long dv = st_env(dname, sizeof(dname) - 1, 32);

		st_depth = dv < 1 ? 1 : dv > HEAPANN_MAX_DEPTH ? HEAPANN_MAX_DEPTH : (unsigned)dv;
	}
	st_entry = HEAPANN_STATS_ENTRY_FIXED + st_depth;
	/* one copy of the bins in a buffer (memory is dear there), else a copy per
	 * thread up to BIN_SHARDS */
	st_layout(1, 64, &off_c, &off_b, &off_t, &off_s);
	if (heapann_stats_buffer) {
		size_t len = 0;
		void *b = heapann_stats_buffer(&len);
		uintptr_t need = off_s + 16 * (uintptr_t)st_entry * w;   /* 16 stack slots */

		if (b && ((uintptr_t)b % w || len < need))
			st_buffer_refused((uintptr_t)b % w != 0, len, need);
		else if (b) {
			r = b;
			buf_len = len;
		}
	}
	if (!r)
		st_layout(HEAPANN_STATS_BIN_SHARDS, 4096, &off_c, &off_b, &off_t, &off_s);
	st_bin_shards = r ? 1 : HEAPANN_STATS_BIN_SHARDS;
	if (r) {
		/* as many slots as the buffer holds, a power of two */
		while (cap > 16 && off_s + (uintptr_t)cap * st_entry * w > buf_len)
			cap >>= 1;
		total = off_s + (uintptr_t)cap * st_entry * w;
		memset(r, 0, total);
	} else {
		total = round_up(off_s + (uintptr_t)cap * st_entry * w, 4096);
#if HA_BARE
		/* bare metal (newlib): no mmap; only heapann_stats_buffer() works */
		__atomic_store_n(&st_state, 3, __ATOMIC_RELEASE);
		return;
#else
#ifdef HEAPANN_STATIC
		if (!mmap) {
			__atomic_store_n(&st_state, 3, __ATOMIC_RELEASE);
			return;
		}
#endif
		r = mmap(NULL, total, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED) {
			__atomic_store_n(&st_state, 3, __ATOMIC_RELEASE);
			return;
		}
#endif
	}
	st_counters = (uintptr_t *)((char *)r + off_c);
	st_bins = (uintptr_t *)((char *)r + off_b);
	st_tl = (uintptr_t *)((char *)r + off_t);
	st_stacks = (uintptr_t *)((char *)r + off_s);
	st_mask = cap - 1;
	st_counters[HEAPANN_SC_TL_INTERVAL] = 1;
	r[HEAPANN_SH_VERSION] = HEAPANN_STATS_VERSION;
	r[HEAPANN_SH_HDR_WORDS] = HEAPANN_STATS_HDR_WORDS;
	r[HEAPANN_SH_TOTAL] = total;
	r[HEAPANN_SH_STACK_CAP] = cap;
	r[HEAPANN_SH_STACK_DEPTH] = st_depth;
	r[HEAPANN_SH_OFF_COUNTERS] = off_c;
	r[HEAPANN_SH_OFF_BINS] = off_b;
	r[HEAPANN_SH_OFF_TIMELINE] = off_t;
	r[HEAPANN_SH_OFF_STACKS] = off_s;
	r[HEAPANN_SH_TL_CAP] = ST_TL_CAP;
	r[HEAPANN_SH_NCOUNTERS] = HEAPANN_STATS_NCOUNTERS;
	r[HEAPANN_SH_NBINS] = HEAPANN_STATS_NBINS;
	r[HEAPANN_SH_ENTRY_WORDS] = st_entry;
	r[HEAPANN_SH_CHECK] = (uintptr_t)heapann_stats_check((uintptr_t)r, total, st_depth, cap,
							     ST_TL_CAP, HEAPANN_STATS_VERSION, HA_W);
	/* the signature last: a reader never sees a region half made */
	r[HEAPANN_SH_MAGIC1] = (uintptr_t)heapann_stats_magic1(HA_W);
	__atomic_store_n(&r[HEAPANN_SH_MAGIC0], (uintptr_t)heapann_stats_magic0(HA_W),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&st_state, 2, __ATOMIC_RELEASE);
}

/* st_ready()'s slow path: make the region (the first allocation), or wait for
 * the thread making it. 1 when it is ready. */
static __attribute__((noinline, cold)) int st_ready_slow(void)
{
	int s = __atomic_load_n(&st_state, __ATOMIC_ACQUIRE);
	unsigned spin = 0;

	if (s == 0) {
		int expect = 0;

		if (__atomic_compare_exchange_n(&st_state, &expect, 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			/* a failed mmap: free counts on errno kept (run-known10) */
			int saved = errno;

			st_make();
			errno = saved;
		}
	}
	/* another thread is making it: an mmap away */
	while ((s = __atomic_load_n(&st_state, __ATOMIC_ACQUIRE)) == 1 && ++spin < ST_SPIN)
		;
	return s == 2;
}

/* 1 when the region is ready (made now if this is the first allocation).
 * Inline: every entry point, malloc and free asks. With HEAPANN_STATS=0 (or no
 * memory for the region) the answer is 0 without the call. */
static inline int st_ready(void)
{
	int s = __atomic_load_n(&st_state, __ATOMIC_ACQUIRE);

	if (ST_LIKELY(s == 2))
		return 1;
	if (s == 3)
		return 0;
	return st_ready_slow();
}

/* The hash of a chain of return addresses (DK: its slot DEPTH word, the count
 * and HEAPANN_STATS_CUT), never 0. It runs once per
 * allocation whose stack differs from the thread's last one: four independent
 * lanes so that the multiplications overlap, walked with a pointer. */
static uint64_t st_hash(const uintptr_t *frames, unsigned depth, uintptr_t dk)
{
	uint64_t h0 = 0x6A09E667F3BCC909ULL ^ dk, h1 = 0xBB67AE8584CAA73BULL;
	uint64_t h2 = 0x3C6EF372FE94F82BULL, h3 = 0xA54FF53A5F1D36F1ULL, h;
	const uintptr_t *p = frames, *end4 = frames + (depth & ~3u), *end = frames + depth;

	for (; p < end4; p += 4) {
		h0 = (h0 ^ (uint64_t)p[0]) * 0x9E3779B97F4A7C15ULL;
		h1 = (h1 ^ (uint64_t)p[1]) * 0xC2B2AE3D27D4EB4FULL;
		h2 = (h2 ^ (uint64_t)p[2]) * 0x165667B19E3779F9ULL;
		h3 = (h3 ^ (uint64_t)p[3]) * 0x27D4EB2F165667C5ULL;
	}
	for (; p < end; p++)
		h0 = (h0 ^ (uint64_t)*p) * 0x9E3779B97F4A7C15ULL;
	h = h0 ^ (h1 >> 17 | h1 << 47) ^ (h2 >> 31 | h2 << 33) ^ (h3 >> 47 | h3 << 17);
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	return h ? h : 1;
}

/* memcmp: libc's vector version; it neither allocates nor locks. */
static int frames_equal(const uintptr_t *e, const uintptr_t *frames, unsigned d)
{
	return memcmp(e + HEAPANN_SE_FRAMES, frames, d * sizeof(uintptr_t)) == 0;
}

/* This thread's last slots found or made (complete, so safe to compare with),
 * each with a cheap key of its chain: a program allocates from a handful of
 * places in turn (an interpreter's few paths into malloc), and such a stack is
 * then found with a key compare and one frame compare, without hashing it.
 * Direct-mapped on the key, one entry to look at; 64 of them (1 KiB of
 * static TLS) because python's dict script has that many hot stacks: 8 or 16
 * entries hash its chains again and again (issue 15, README Performance). */
#define ST_RECENT 64
struct st_recent {
	uintptr_t key;      /* st_key() of the slot's chain; 0: empty */
	uintptr_t *slot;    /* the slot */
};

/* This thread's words that every allocation reads, in one TLS block: each
 * variable of its own cost a load of its offset from the GOT (the library's
 * initial-exec TLS) in every function that used it, five on an allocation
 * (issue 15, capture7). */
static HA_TLS struct st_thread {
	struct st_recent recent[ST_RECENT];   /* the recent slots, above */
	/* this thread's copy of the bins and its shard, worked out at its
	 * first allocation or free (NULL before): every allocation and free
	 * finds its bin from them without the shard arithmetic */
	uintptr_t *bins_mine;
	unsigned bins_sh;
	/* the slot this thread's pending words count for (heapann_stats.h) */
	uintptr_t *pend;
	/* the slot of this thread's last allocation that was not counted in
	 * the pending words: a slot becomes the pending one when it comes
	 * twice in a row */
	uintptr_t *last;
	/* this thread's last allocation while nothing else was allocated
	 * since: its sequence number (0: none) and slot; a free of it is a
	 * temporary allocation (TEMP), and TEMP_SEQ then the block whose
	 * free was so counted, for a realloc that takes its free back */
	uintptr_t tmp_seq, *tmp_slot, temp_seq;
} st_me;

/* A key of the chain frames[0..d): its slot DEPTH word DK (the count and the
 * cut flag) and three frames spread along it (the innermost ones are often a
 * wrapper's, alike for many stacks). Never 0. */
static inline uintptr_t st_key(const uintptr_t *frames, unsigned d, uintptr_t dk)
{
	uintptr_t k = dk;

	if (d) {
		k = (k << 21 | k >> (sizeof(k) * 8 - 21)) ^ frames[d > 1];
		k = (k << 21 | k >> (sizeof(k) * 8 - 21)) ^ frames[d / 2];
		k = (k << 21 | k >> (sizeof(k) * 8 - 21)) ^ frames[d - 1];
	}
	return k ? k : 1;
}

/* The recent entry of a chain whose st_key() is KEY. */
static inline struct st_recent *st_recent_of(uintptr_t key)
{
	return &st_me.recent[(uint64_t)key * 0x9E3779B97F4A7C15ULL >> 58];
}

/* Remember slot E (of a chain whose st_key() is KEY) among the recent ones. */
static void st_recent_put(uintptr_t key, uintptr_t *e)
{
	struct st_recent *r = st_recent_of(key);

	r->slot = e;
	r->key = key;
}

/* The slot of the chain frames[0..depth) (its first st_depth frames; CUT: the
 * stack went on past DEPTH), claimed when absent. A cut chain and a whole one
 * with the same frames have slots of their own. Returns NULL when the table
 * has no room for it. Only allocations look stacks up (frees are derived by
 * the reader). */
static uintptr_t *st_slot(const uintptr_t *frames, unsigned depth, int cut)
{
	unsigned d = depth < st_depth ? depth : st_depth;
	uintptr_t dk = d | (uintptr_t)(cut | (depth > d)) * HEAPANN_STATS_CUT;
	uint64_t h64;
	uintptr_t h, i, key = st_key(frames, d, dk);

	/* a thread allocates from a few places in turn: compare with its recent
	 * slot of this key first (a key, then a vector compare), before hashing
	 * the chain */
	{
		const struct st_recent *r = st_recent_of(key);
		uintptr_t *e = r->slot;

		if (r->key == key && (LOAD(e[HEAPANN_SE_DEPTH]) & HEAPANN_STATS_KEY_MASK) == dk &&
		    frames_equal(e, frames, d))
			return e;
	}
	h64 = st_hash(frames, d, dk);
	h = (uintptr_t)h64 ? (uintptr_t)h64 : 1;
	i = (uintptr_t)(h64 ^ (h64 >> 32)) & st_mask;

	for (unsigned probe = 0; probe < ST_MAX_PROBE && probe <= st_mask; probe++) {
		uintptr_t *e = st_stacks + i * st_entry;
		uintptr_t hw = __atomic_load_n(&e[HEAPANN_SE_HASH], __ATOMIC_ACQUIRE);

		if (hw == 0) {
			uintptr_t expect = 0;

			/* keep an eighth free so that probes stay short */
			if (LOAD(st_counters[HEAPANN_SC_STACKS]) >= st_mask + 1 - (st_mask + 1) / 8)
				return NULL;
			if (__atomic_compare_exchange_n(&e[HEAPANN_SE_HASH], &expect, h, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				for (unsigned k = 0; k < d; k++)
					e[HEAPANN_SE_FRAMES + k] = frames[k];
				__atomic_store_n(&e[HEAPANN_SE_DEPTH], dk | HEAPANN_STATS_READY,
						 __ATOMIC_RELEASE);
				ADD(st_counters[HEAPANN_SC_STACKS], 1);
				st_recent_put(key, e);
				return e;
			}
			hw = expect;   /* another thread took the slot first */
		}
		if (hw == h) {
			uintptr_t dw;
			unsigned spin = 0;

			while (!((dw = __atomic_load_n(&e[HEAPANN_SE_DEPTH], __ATOMIC_ACQUIRE)) &
				 HEAPANN_STATS_READY) && ++spin < ST_SPIN)
				;
			if ((dw & HEAPANN_STATS_READY) && (dw & HEAPANN_STATS_KEY_MASK) == dk &&
			    frames_equal(e, frames, d)) {
				st_recent_put(key, e);
				return e;
			}
		}
		i = (i + 1) & st_mask;
	}
	return NULL;
}

/* st_sample's way when TIME has reached the next sample (C is st_counters). */
static __attribute__((noinline)) void st_sample_take(uintptr_t *c, uintptr_t time,
						     uintptr_t live)
{
	uintptr_t n;

	if (__atomic_exchange_n(&c[HEAPANN_SC_TL_LOCK], 1, __ATOMIC_ACQUIRE))
		return;
	if (time >= c[HEAPANN_SC_TL_NEXT]) {
		n = c[HEAPANN_SC_TL_COUNT];
		if (n >= ST_TL_CAP) {
			for (uintptr_t k = 0; k < n / 2; k++) {
				st_tl[2 * k] = st_tl[2 * (2 * k)];
				st_tl[2 * k + 1] = st_tl[2 * (2 * k) + 1];
			}
			n /= 2;
			c[HEAPANN_SC_TL_INTERVAL] *= 2;
		}
		st_tl[2 * n] = time;
		st_tl[2 * n + 1] = live;
		__atomic_store_n(&c[HEAPANN_SC_TL_COUNT], n + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&c[HEAPANN_SC_TL_NEXT], time + c[HEAPANN_SC_TL_INTERVAL],
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&c[HEAPANN_SC_TL_LOCK], 0, __ATOMIC_RELEASE);
}

/* Take a timeline sample when TIME has reached the next one; a thread that finds
 * the try-lock taken skips it (the next event samples instead). When the samples
 * fill up, every other one is dropped and the interval doubles, as Massif does.
 * C is st_counters. The test inline: it is all that 98% of the calls do, where
 * a call cost python's allocations and frees a jump, a reload of st_counters
 * and a return each (issue 15, capture8). */
static inline void st_sample(uintptr_t *c, uintptr_t time, uintptr_t live)
{
	if (ST_UNLIKELY(time >= LOAD(c[HEAPANN_SC_TL_NEXT])))
		st_sample_take(c, time, live);
}

/* This thread's shard of the call counts, 1-based; 0 until its first call. */
static HA_TLS unsigned st_shard;
static unsigned st_shards_taken;

/* This thread's shard (1..CALL_SHARDS), taken at its first call. */
static unsigned st_my_shard(void)
{
	unsigned sh = st_shard;

	if (ST_UNLIKELY(!sh)) {
		sh = __atomic_add_fetch(&st_shards_taken, 1, __ATOMIC_RELAXED);
		if (sh > HEAPANN_STATS_CALL_SHARDS)
			sh = HEAPANN_STATS_CALL_SHARDS;
		st_shard = sh;
	}
	return sh;
}

/* Add V to a word of this thread's bin copy: without atomics when the copy is
 * its own, atomically in the last copy, which later threads share. */
static void st_bin_add(unsigned sh, uintptr_t *w, uintptr_t v)
{
	if (ST_LIKELY(sh < st_bin_shards))
		__atomic_store_n(w, LOAD(*w) + v, __ATOMIC_RELAXED);
	else
		ADD(*w, v);
}

/* This thread's copy of bin BIN; *SH gets its shard. */
static inline uintptr_t *st_bin(unsigned *sh, unsigned bin)
{
	uintptr_t *b = st_me.bins_mine;

	if (ST_UNLIKELY(!b)) {
		unsigned s = st_my_shard();
		unsigned copy = s < st_bin_shards ? s - 1 : st_bin_shards - 1;

		b = st_bins + (uintptr_t)copy * HEAPANN_STATS_NBINS * HEAPANN_STATS_BIN_WORDS;
		st_me.bins_sh = s;
		st_me.bins_mine = b;
	}
	*sh = st_me.bins_sh;
	return b + (uintptr_t)bin * HEAPANN_STATS_BIN_WORDS;
}

HA_TLS uintptr_t *ha_stats_calls_mine;

/* A thread's call counts when there is no region, for good (HEAPANN_STATS=0,
 * or no memory for it): counted here and never read, so that the entry
 * points' inline add (hook.h) takes the place of a call to ha_stats_call,
 * which found nothing to do on every malloc and free (issue 15, capture8). */
static HA_TLS uintptr_t st_calls_void[HEAPANN_NCALLS];

void ha_stats_call(unsigned entry)
{
	unsigned sh;
	uintptr_t *w;

#if HA_HAVE_SNAPSHOT
	ha_snap_thread_first();
#endif

	if (ST_UNLIKELY(!st_ready())) {
		if (__atomic_load_n(&st_state, __ATOMIC_ACQUIRE) == 3)
			ha_stats_calls_mine = st_calls_void;
		return;
	}
	if (entry >= HEAPANN_NCALLS)
		return;
	sh = st_my_shard();
	w = st_counters + HEAPANN_SC_CALLS + (sh - 1) * HEAPANN_STATS_CALL_SHARD_WORDS;
	if (ST_LIKELY(sh < HEAPANN_STATS_CALL_SHARDS)) {
		/* this thread's own: plain adds, inline from now on (hook.h) */
		__atomic_store_n(&w[entry], LOAD(w[entry]) + 1, __ATOMIC_RELAXED);
		ha_stats_calls_mine = w;
	} else {
		ADD(w[entry], 1);
	}
}

/* Raise PEAK to LIVE (reached at TIME) when it is higher. */
static void st_peak(uintptr_t *c, uintptr_t live, uintptr_t time)
{
	uintptr_t peak = LOAD(c[HEAPANN_SC_PEAK]);

	while (ST_UNLIKELY(live > peak)) {
		if (__atomic_compare_exchange_n(&c[HEAPANN_SC_PEAK], &peak, live, 1,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_store_n(&c[HEAPANN_SC_PEAK_TIME], time, __ATOMIC_RELAXED);
			break;
		}
	}
}

_Static_assert((unsigned)HEAPANN_NCALLS <= (unsigned)HEAPANN_SP_SLOT &&
	       HEAPANN_SP_CLS_BYTES + HEAPANN_STATS_NCLASSES <= HEAPANN_STATS_CALL_SHARD_WORDS,
	       "pending words fit in a call shard after the call counts");

/* Move this thread's pending counts (shard words P) to their slot and make E the
 * pending slot. The slot word is cleared first: a core taken half-way loses the
 * moved counts rather than counting them twice. */
static void st_pend_switch(uintptr_t *p, uintptr_t *e)
{
	uintptr_t *old = st_me.pend;

	__atomic_store_n(&p[HEAPANN_SP_SLOT], 0, __ATOMIC_RELAXED);
	if (old) {
		ADD(old[HEAPANN_SE_ALLOCS], p[HEAPANN_SP_ALLOCS]);
		for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
			if (p[HEAPANN_SP_CLS_BYTES + k])
				ADD(old[HEAPANN_SE_CLS_BYTES + k], p[HEAPANN_SP_CLS_BYTES + k]);
	}
	p[HEAPANN_SP_ALLOCS] = 0;
	for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
		p[HEAPANN_SP_CLS_BYTES + k] = 0;
	st_me.pend = e;
	__atomic_store_n(&p[HEAPANN_SP_SLOT], (uintptr_t)(e - st_stacks) / st_entry + 1,
			 __ATOMIC_RELAXED);
}

/* Words written per allocation: BYTES (one atomic add), the bin's ALLOCS (and
 * BYTES for the large bin) in this thread's copy, and the slot's ALLOCS and class
 * bytes: in this thread's pending words while it stays on one slot, atomic adds
 * to the slot otherwise. Everything else is derived by the reader
 * (heapann_stats.h). A slot becomes the pending one only when two allocations in
 * a row are on it: moving the pending counts costs the same two atomic adds as
 * counting in the slot directly, plus some 40 instructions, so a program whose
 * stacks change at every call (python) no longer pays for a move each time. */
void ha_stats_alloc(const void *user, size_t size, uintptr_t seq, unsigned depth, int cut,
		    const uintptr_t *frames)
{
	uintptr_t *c, *e, *b, a, f;
	unsigned cls = heapann_stats_class(size), sh;
	unsigned bin = size <= 1024 ? (unsigned)size : HEAPANN_STATS_BIN_LARGE;

	(void)user;
	if (ST_UNLIKELY(!st_ready()))
		return;
	c = st_counters;
	e = st_slot(frames, depth, cut);
	st_me.tmp_seq = seq;
	st_me.tmp_slot = e;
	a = ADD(c[HEAPANN_SC_BYTES], size);
	f = LOAD(c[HEAPANN_SC_BYTES_FREED]);
	st_peak(c, a - f, a + f);
	b = st_bin(&sh, bin);
	st_bin_add(sh, &b[0], 1);
	if (bin == HEAPANN_STATS_BIN_LARGE)
		st_bin_add(sh, &b[1], size);
	if (ST_LIKELY(e != NULL && sh < HEAPANN_STATS_CALL_SHARDS)) {
		uintptr_t *p = c + HEAPANN_SC_CALLS + (sh - 1) * HEAPANN_STATS_CALL_SHARD_WORDS;

		if (e != st_me.pend) {
			if (e != st_me.last) {
				/* a slot not seen just before: counted in place */
				st_me.last = e;
				ADD(e[HEAPANN_SE_ALLOCS], 1);
				ADD(e[HEAPANN_SE_CLS_BYTES + cls], size);
				goto counted;
			}
			st_pend_switch(p, e);
		}
		/* this thread's own words: plain adds, no atomics */
		__atomic_store_n(&p[HEAPANN_SP_ALLOCS], p[HEAPANN_SP_ALLOCS] + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&p[HEAPANN_SP_CLS_BYTES + cls], p[HEAPANN_SP_CLS_BYTES + cls] + size,
				 __ATOMIC_RELAXED);
	} else if (e != NULL) {
		ADD(e[HEAPANN_SE_ALLOCS], 1);
		ADD(e[HEAPANN_SE_CLS_BYTES + cls], size);
	} else {
		ADD(c[HEAPANN_SC_UNREC_ALLOCS], 1);
		ADD(c[HEAPANN_SC_UNREC_BYTES], size);
	}
counted:
	st_sample(c, a + f, a - f);
}

/* Count a free (sign 1) or take one back (sign -1: a realloc that failed after
 * its free was counted). Only what the size tells: the global BYTES_FREED (one
 * atomic add), this thread's copy of the bin and the timeline. The block's stack
 * is not looked up: per-stack frees are derived by the reader from the live
 * blocks of the image (heapann_stats.h), so the header is never read here.
 * Inline in its two callers: each is the function free calls, with SIGN a
 * constant (a call of its own cost every free a register save and the sign's
 * test, issue 15, capture8). */
static inline __attribute__((always_inline)) void st_free(size_t size, int sign)
{
	uintptr_t *c, *b, a, f;
	unsigned sh, bin = size <= 1024 ? (unsigned)size : HEAPANN_STATS_BIN_LARGE;

	if (ST_UNLIKELY(!st_ready()))
		return;
	c = st_counters;
	b = st_bin(&sh, bin);
	if (sign < 0) {
		SUB(c[HEAPANN_SC_BYTES_FREED], size);
		st_bin_add(sh, &b[2], (uintptr_t)-1);
		if (bin == HEAPANN_STATS_BIN_LARGE)
			st_bin_add(sh, &b[3], -(uintptr_t)size);
		return;
	}
	f = ADD(c[HEAPANN_SC_BYTES_FREED], size);
	a = LOAD(c[HEAPANN_SC_BYTES]);
	st_bin_add(sh, &b[2], 1);
	if (bin == HEAPANN_STATS_BIN_LARGE)
		st_bin_add(sh, &b[3], size);
	st_sample(c, a + f, a - f);
}

/* The word that counts the temporary allocations of this thread's last
 * allocation: its slot's TEMP, or UNREC_TEMP when its stack found no slot
 * (a full table: those were lost before). */
static uintptr_t *st_temp_word(void)
{
	return st_me.tmp_slot ? &st_me.tmp_slot[HEAPANN_SE_TEMP] :
				&st_counters[HEAPANN_SC_UNREC_TEMP];
}

/* The free of this thread's last allocation, nothing allocated since: a
 * temporary allocation of its slot, then the free's counts. Out of line, and
 * called last, so that ha_stats_free's common way keeps its registers. */
static __attribute__((noinline)) void st_temp_free(size_t size)
{
	ADD(*st_temp_word(), 1);
	st_me.temp_seq = st_me.tmp_seq;
	st_me.tmp_seq = 0;
	st_free(size, 1);
}

void ha_stats_free(const void *user, size_t size, uintptr_t seq)
{
	(void)user;
	/* seq is never 0, tmp_seq is before the thread's first allocation */
	if (ST_UNLIKELY(seq == st_me.tmp_seq)) {
		st_temp_free(size);
		return;
	}
	st_free(size, 1);
}

void ha_stats_free_undo(const void *user, size_t size, uintptr_t seq)
{
	(void)user;
	/* a realloc that failed after its free was counted temporary: the
	 * block lives on, still the thread's last allocation */
	if (ST_UNLIKELY(seq == st_me.temp_seq) && seq) {
		SUB(*st_temp_word(), 1);
		st_me.tmp_seq = seq;
		st_me.temp_seq = 0;
	}
	st_free(size, -1);
}

void ha_stats_damage(int guard, uintptr_t seq)
{
	if (ST_UNLIKELY(!st_ready()))
		return;
	if (guard) {
		ADD(st_counters[HEAPANN_SC_GUARD_BREAKS], 1);
		__atomic_store_n(&st_counters[HEAPANN_SC_LAST_GUARD_SEQ], seq, __ATOMIC_RELAXED);
	} else {
		ADD(st_counters[HEAPANN_SC_BAD_FREES], 1);
	}
}

void ha_stats_unload_table(uintptr_t table)
{
	if (st_ready())
		__atomic_store_n(&st_counters[HEAPANN_SC_UNLOAD_TABLE], table, __ATOMIC_RELEASE);
}
