/* core.c - the annotating allocator: every block the program gets carries the
 * header of include/heapann_block.h in front of it (see annotate/hdr.h).
 * Runs inside malloc: no stdio, no locks, nothing allocates through the public
 * malloc. Per-thread state lives in initial-exec TLS (the re-entrancy guard
 * here, the fork hand-shake flag in stack.c); the shared writes on the fast path
 * are atomic adds (the sequence counter, stack.c's count of threads unwinding).
 * Anything that calls malloc while we are inside malloc (the unwinder, dlopen,
 * a signal handler) is served by the real allocator unannotated, and free()
 * recognizes such blocks as not ours. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdr.h"
#include "hook.h"
#include "internal.h"

#define HA_LIKELY(x) __builtin_expect(!!(x), 1)
#define HA_UNLIKELY(x) __builtin_expect(!!(x), 0)

struct ha_options ha_opt = {
	.depth = 32, .walk = 33, .unwind = HA_HAVE_CFI ? HA_UNWIND_CFI : HA_UNWIND_LIBUNWIND,
	.guard = 8, .abort_on_corruption = 0,
};

/* 0: nothing read yet; 1: options read; 2: unwinder loaded (ha_init done). */
int ha_state;
/* Set by the one call of ha_init that does the work (the constructor's, or
 * that of the first allocation after libc's initializer, which may come from
 * threads a library's constructor started). */
static int ha_init_claimed;
/* Non-zero while this thread is inside one of our entry points. */
HA_TLS volatile int ha_busy;
/* Last sequence number handed out; the first block gets 1. Written by every
 * allocation, so on a cache line of its own, away from the read-mostly state. */
static struct {
	uintptr_t last;                 /* the counter */
	char pad[64 - sizeof(uintptr_t)]; /* the rest of the line */
} ha_seq_line __attribute__((aligned(64)));
#define ha_seq (ha_seq_line.last)

uintptr_t ha_seq_last(void)
{
	return __atomic_load_n(&ha_seq, __ATOMIC_RELAXED);
}

extern char **environ;

/* Value of environment variable NAME, or NULL. Walks environ itself: getenv
 * does not allocate either, but this also works before libc is initialized. */
static const char *ha_env(const char *name)
{
	char **e = environ;
	size_t n = strlen(name);

	if (!e)
		return 0;
	for (; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return 0;
}

/* Decimal value of environment variable NAME clamped to MAX, or DEF when it is
 * unset or not a number. */
static unsigned ha_env_uint(const char *name, unsigned def, unsigned max)
{
	const char *s = ha_env(name);
	unsigned long v = 0;

	if (!s || *s < '0' || *s > '9')
		return def;
	for (; *s >= '0' && *s <= '9'; s++)
		if (v <= max)
			v = v * 10 + (unsigned)(*s - '0');
	return v > max ? max : (unsigned)v;
}

/* Read the HEAPANN_* options. Idempotent; threads racing here write the same
 * values. */
static void ha_options_load(void)
{
	const char *u = ha_env("HEAPANN_UNWIND");

	ha_opt.depth = ha_env_uint("HEAPANN_DEPTH", 32, HEAPANN_MAX_DEPTH);
	ha_opt.walk = ha_opt.depth ? ha_opt.depth + 1 : 0;
	ha_opt.guard = ha_env_uint("HEAPANN_GUARD", 8, HEAPANN_MAX_GUARD);
	ha_opt.abort_on_corruption = ha_env_uint("HEAPANN_ABORT_ON_CORRUPTION", 0, 1);
#ifdef HEAPANN_STATIC
	ha_opt.unwind = HA_UNWIND_GCC;
#else
	ha_opt.unwind = HA_HAVE_CFI ? HA_UNWIND_CFI : HA_UNWIND_LIBUNWIND;
#endif
	if (u && strcmp(u, "libunwind") == 0)
		ha_opt.unwind = HA_UNWIND_LIBUNWIND;
	else if (u && strcmp(u, "cfi-verify") == 0 && HA_HAVE_CFI)
		ha_opt.unwind = HA_UNWIND_CFI_VERIFY;
	else if (u && strcmp(u, "fp") == 0)
		ha_opt.unwind = HA_UNWIND_FP;
	else if (u && strcmp(u, "gcc") == 0)
		ha_opt.unwind = HA_UNWIND_GCC;
	else if (u && strcmp(u, "none") == 0)
		ha_opt.unwind = HA_UNWIND_NONE;
	__atomic_store_n(&ha_state, 1, __ATOMIC_RELEASE);
}

/* One line per HEAPANN_* option whose value libheapann cannot take as written
 * (each reader falls back to its default, or clamps, without a word): a typo such
 * as HEAPANN_DEPTH=6o or HEAPANN_UNWIND=libunwnid cost a whole run otherwise.
 * Once, from the constructor; write(2) only. */
static void ha_options_warn(void)
{
	static const struct { const char *name; unsigned long min, max; const char *def; } num[] = {
		{ "HEAPANN_DEPTH", 0, HEAPANN_MAX_DEPTH, "32" },
		{ "HEAPANN_GUARD", 0, HEAPANN_MAX_GUARD, "8" },
		{ "HEAPANN_ABORT_ON_CORRUPTION", 0, 1, "0" },
		{ "HEAPANN_STATS", 0, 1, "1" },
		{ "HEAPANN_STATS_STACKS", 16, 1ul << 22, "16384" },
		{ "HEAPANN_CHECK_INTERVAL", 0, (~0ul - 9) / 10, "0 (off)" },   /* as check.c reads it */
	};
	static const char *const unwinders[] = { "cfi", "libunwind", "gcc", "fp", "none", "cfi-verify" };
	const char *u = ha_env("HEAPANN_UNWIND");

	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++) {
		const char *s = ha_env(num[i].name), *p;
		unsigned long v = 0;
		struct ha_line l = { .len = 0 };

		if (!s)
			continue;
		for (p = s; *p >= '0' && *p <= '9'; p++)
			if (v <= num[i].max)
				v = v * 10 + (unsigned long)(*p - '0');
		if (p != s && !*p && v >= num[i].min && v <= num[i].max)
			continue;
		ha_line_str(&l, "heapann: ");
		ha_line_str(&l, num[i].name);
		ha_line_str(&l, "=");
		ha_line_str(&l, s);
		ha_line_str(&l, p == s || *p ? " is not a number" : " is out of range");
		if (num[i].max <= 0xffffffffu) {   /* no range to tell for a count */
			ha_line_str(&l, " ");
			ha_line_num(&l, num[i].min, 10);
			ha_line_str(&l, "..");
			ha_line_num(&l, num[i].max, 10);
		}
		if (p == s) {
			ha_line_str(&l, ": the default ");
			ha_line_str(&l, num[i].def);
			ha_line_str(&l, " applies");
		} else {
			ha_line_str(&l, ": read as ");
			ha_line_num(&l, v < num[i].min ? num[i].min : v > num[i].max ? num[i].max : v, 10);
		}
		ha_line_send(&l);
	}
	if (u) {
		size_t i;

		for (i = 0; i < sizeof(unwinders) / sizeof(unwinders[0]); i++)
			if (strcmp(u, unwinders[i]) == 0)
				break;
		if (i == sizeof(unwinders) / sizeof(unwinders[0])) {
			struct ha_line l = { .len = 0 };

			ha_line_str(&l, "heapann: HEAPANN_UNWIND=");
			ha_line_str(&l, u);
			ha_line_str(&l, " is not cfi, libunwind, gcc, fp, none or cfi-verify: the default applies");
			ha_line_send(&l);
		}
	}
}

/* Runs as a constructor, before main, unless the first allocation after libc's
 * initializer did its work already (ha_early). Loading the unwinder waits for
 * one of them: the first malloc calls come earlier (from the dynamic loader, or
 * from libc's own start-up in a static binary, before the unwind tables are
 * registered), and those only read the options and get blocks without frames.
 * Done once, by whichever call claims it first. */
HA_CONSTRUCTOR(HA_PRIO_INIT)
void ha_init(void)
{
	if (__atomic_load_n(&ha_state, __ATOMIC_ACQUIRE) == 2 ||
	    __atomic_exchange_n(&ha_init_claimed, 1, __ATOMIC_ACQ_REL))
		return;
	ha_busy = 1;
	/* Again: an early read may have come before environ was set. Blocks made
	 * meanwhile carry their own guard length and depth. */
	ha_options_load();
	ha_options_warn();
	ha_real_init();
	ha_stack_init();
	__atomic_store_n(&ha_state, 2, __ATOMIC_RELEASE);
	ha_busy = 0;
}

/* Before the constructor: read the options once; once libc's own initializer
 * has run, do what the constructor does. ld.so runs the initializers of the
 * libraries the program needs before the preload's (only a library's own
 * dependencies are ordered before it), so without this every block a shared
 * library's constructor allocates (a C++ global of the library, libstdc++'s
 * exception pool) had no frames. By then every object is relocated and libc
 * is ready for dlopen; libc's initializer is the one that sets
 * program_invocation_name (empty until then). The thread doing it is the one
 * ld.so runs the initializers on: a thread a constructor starts is never the
 * first, pthread_create allocating the new thread's dtv on the creating thread
 * (seen in gdb with HEAPANN_UNWIND=gcc: ha_init from allocate_dtv in
 * hunt6_lib_init; run-hunt6-init runs gcc and libunwind 20 times each), so the
 * unwinder's dlopen never runs beside ld.so's initializers. Not in the static
 * kit: there libc initializes itself before the unwind tables are registered. */
static __attribute__((noinline, cold)) void ha_early(void)
{
	/* the caller's errno: loading the unwinder (dlopen) and reading the
	 * options change it, and a malloc that succeeds must keep it */
	int saved = errno;

	if (__atomic_load_n(&ha_state, __ATOMIC_ACQUIRE) == 0)
		ha_options_load();
#ifndef HEAPANN_STATIC
	if (program_invocation_name && program_invocation_name[0])
		ha_init();
#endif
	errno = saved;
}

/* Abort when HEAPANN_ABORT_ON_CORRUPTION=1, so the core shows the moment. */
static void ha_corruption_seen(void)
{
	if (ha_opt.abort_on_corruption)
		abort();
}

/* 1 when the real free never changes errno, so that free need not save it:
 * glibc's keeps it since 2.33; the static kit's real allocator may be any. */
#if !defined(HEAPANN_STATIC) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#define HA_FREE_KEEPS_ERRNO 1
#else
#define HA_FREE_KEEPS_ERRNO 0
#endif

/* Report a broken guard (BAD of GUARD bytes) of the live block USER of SIZE
 * bytes, sequence number SEQ. Takes values, not the view: a view whose
 * address reaches a call is built in memory by every free (issue 15,
 * capture7). */
static __attribute__((noinline, cold)) void ha_guard_broken(const void *user, size_t size,
							   unsigned guard, uintptr_t seq,
							   unsigned bad)
{
	int saved = errno;   /* the free's fast way counts on it being kept */

	ha_report_guard(user, size, bad, guard);
	ha_stats_damage(1, seq);
	ha_corruption_seen();
	errno = saved;
}

/* Check the guard of a live block and report it once when broken. Inline:
 * every free checks (the report is out of line). */
static inline void ha_guard_check(const void *user, const struct ha_hdr_view *v)
{
	unsigned bad;

	if (!v->guard)
		return;
	bad = ha_hdr_guard_damage(user, v);
	if (HA_UNLIKELY(bad))
		ha_guard_broken(user, v->size, v->guard, v->seq, bad);
}

/* A block of the real allocator: SIZE bytes aligned to ALIGN (a power of two),
 * zeroed when ZERO (only asked with HA_MIN_ALIGN: calloc has no aligned form). */
static inline void *ha_real_get(size_t align, size_t size, int zero)
{
	if (align > HA_MIN_ALIGN)
		return ha_real_memalign(align, size);
	return zero ? ha_real_calloc(1, size) : ha_real_malloc(size);
}

/* The stack of a new block: up to ha_opt.depth return addresses (*FRAMES, as
 * ha_stack_capture sets it, BUF HA_FRAMES_ROOM(ha_opt.walk) words), and *CUT = 1
 * when the stack went on past them. The walk asks for one frame more than it
 * keeps (ha_opt.walk): a stack of exactly ha_opt.depth frames is whole, not cut.
 * Returns the number kept. */
static inline unsigned ha_block_stack(uintptr_t *buf, uintptr_t caller,
				      const uintptr_t **frames, int *cut)
{
	unsigned max = ha_opt.depth;
	unsigned n = ha_stack_capture(buf, ha_opt.walk, caller, frames);

	*cut = n > max;
	return n > max ? max : n;
}

/* Annotate a new block of SIZE bytes whose user pointer is aligned to ALIGN (a
 * power of two; HA_MIN_ALIGN for the plain family). ZERO asks for zeroed
 * memory. Called with the guard held. Returns NULL with errno set on failure. */
void *ha_alloc(size_t align, size_t size, int zero, uintptr_t caller)
{
	uintptr_t buf[HA_FRAMES_ROOM(ha_opt.walk)];
	const uintptr_t *frames;
	int cut;
	unsigned depth = ha_block_stack(buf, caller, &frames, &cut);
	unsigned guard = ha_opt.guard;
	size_t off = ha_hdr_offset(depth, align);
	size_t total;
	char *raw;
	uintptr_t seq;

	/* A 0-byte block asks for off + MAX(guard, sizeof(size_t)) + 1: glibc's
	 * next chunk starts (its prev_size word) sizeof(size_t) bytes before the
	 * end of this chunk's usable size, so with less it can start at the user
	 * pointer (64-bit: whenever total <= off + 8; guard 0..7 included), and a
	 * free next chunk is pointed at from main_arena's bins and its
	 * neighbours, which the lost report took for a start pointer to the
	 * 0-byte block (a leaked malloc(0) read still reachable). Same on 32-bit
	 * glibc (4-byte size field). */
	size_t pad = guard;

	if (HA_UNLIKELY(!size))
		pad = (guard > sizeof(size_t) ? guard : sizeof(size_t)) + 1;
	if (HA_UNLIKELY(__builtin_add_overflow(size, off + pad, &total))) {
		errno = ENOMEM;
		return 0;
	}
	raw = ha_real_get(align, total, zero);
	if (HA_UNLIKELY(!raw))
		return 0;
	seq = __atomic_add_fetch(&ha_seq, 1, __ATOMIC_RELAXED);
	ha_hdr_write(raw + off, off, size, depth, cut, frames, seq, guard);
	ha_hook_alloc(raw + off, size, seq, depth, cut, frames);
	return raw + off;
}

/* What every allocating entry point does once its arguments are checked: the
 * real allocator, unannotated, when this thread is already inside one of ours
 * (the unwinder's own allocations, a signal handler's); otherwise an annotated
 * block, with the guard held. */
static inline void *ha_enter(size_t align, size_t size, int zero, uintptr_t caller)
{
	void *p;

	if (HA_UNLIKELY(ha_busy))
		return ha_real_get(align, size, zero);
	if (HA_UNLIKELY(ha_state != 2))
		ha_early();
	ha_busy = 1;
	p = ha_alloc(align, size, zero, caller);
	ha_busy = 0;
	return p;
}

/* ha_malloc's way when it is re-entered or the library is not set up yet. */
void *ha_malloc_slow(size_t size, uintptr_t caller)
{
	return ha_enter(HA_MIN_ALIGN, size, 0, caller);
}

void *ha_calloc(size_t n, size_t size, uintptr_t caller)
{
	size_t total;

	if (HA_UNLIKELY(__builtin_mul_overflow(n, size, &total))) {
		errno = ENOMEM;
		return 0;
	}
	ha_code_note(ha_caller_ra(caller), total);   /* ld.so making a new link_map? */
	return ha_enter(HA_MIN_ALIGN, total, 1, caller);
}

/* Aligned allocation with glibc's memalign rules: alignments up to the
 * malloc alignment give a plain block, others are rounded up to a power of
 * two, absurd ones fail with EINVAL. */
void *ha_memalign(size_t align, size_t size, uintptr_t caller)
{
	if (align <= HA_MIN_ALIGN)
		return ha_malloc(size, caller);
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return 0;
	}
	if (align & (align - 1)) {
		size_t a = HA_MIN_ALIGN;
		while (a < align)
			a <<= 1;
		align = a;
	}
	return ha_enter(align, size, 0, caller);
}

int ha_posix_memalign(void **out, size_t align, size_t size, uintptr_t caller)
{
	int saved = errno;
	void *p;

	if (align == 0 || align % sizeof(void *) != 0 ||
	    ((align / sizeof(void *)) & (align / sizeof(void *) - 1)) != 0)
		return EINVAL;
	p = ha_memalign(align, size, caller);
	if (!p) {
		errno = saved;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

void *ha_aligned_alloc(size_t align, size_t size, uintptr_t caller)
{
	/* glibc 2.36: aligned_alloc is memalign. */
	return ha_memalign(align, size, caller);
}

/* The page size; bare-metal newlib has no sysconf (and no pages): 4096. */
static size_t ha_page_size(void)
{
#if HA_BARE
	return 4096;
#else
	return (size_t)sysconf(_SC_PAGESIZE);
#endif
}

void *ha_valloc(size_t size, uintptr_t caller)
{
	return ha_memalign(ha_page_size(), size, caller);
}

void *ha_pvalloc(size_t size, uintptr_t caller)
{
	size_t page = ha_page_size();

	if (size > SIZE_MAX - 2 * page - 64) {
		errno = ENOMEM;
		return 0;
	}
	return ha_memalign(page, (size + page - 1) & ~(page - 1), caller);
}

/* A pointer that carries our END magic but no valid live header: a second
 * free, or a header overwritten from below. Reported; the block is leaked
 * rather than handed to the real allocator at a wrong address. */
static void ha_bad_pointer(const char *fn, int state, void *p)
{
	ha_report_bad_free(state == HA_HDR_FREED ?
			   (fn[0] == 'f' ? "free of an already freed block" :
			    "realloc of an already freed block") :
			   "damaged header, block leaked:", p);
	ha_stats_damage(0, 0);
	ha_corruption_seen();
}

/* The depth of the last block this thread freed. A block's header starts at a
 * distance from the user pointer that its END word gives (the depth): reading
 * END and then the header are two dependent cache misses on a block allocated
 * long ago. Most blocks of a program have the depth of the one before, so the
 * header's first line is prefetched at that guess while END loads. */
static HA_TLS unsigned ha_free_depth_hint;

/* free's body for a pointer that is not NULL (ha_free, internal.h, tests NULL):
 * checks p's header and guard, reports damage, marks the header freed and
 * hands the raw block back to the real allocator; errno is kept. */
void ha_free_nonnull(void *p)
{
	struct ha_hdr_view v;
	int saved, st;

	/* a prefetch never faults, even at a wrong guess */
	__builtin_prefetch((const char *)p - heapann_header_bytes(ha_free_depth_hint, HA_W));
	st = ha_hdr_find(p, &v);
	if (HA_FREE_KEEPS_ERRNO && HA_LIKELY(st == HA_HDR_LIVE && !ha_check_on)) {
		/* nothing on this way changes errno: glibc's free keeps it
		 * (2.33 and later), a broken guard's report and the statistics'
		 * first mmap keep it themselves; no save (issue 15: the call to
		 * __errno_location and the store, on every free) */
		ha_free_depth_hint = v.depth;
		ha_guard_check(p, &v);
		/* ha_hook_free without its registry test: ha_check_on was
		 * tested above, and only ck_init, a constructor before any of
		 * ours, sets it */
		ha_stats_free(p, v.size, v.seq);
		ha_hdr_mark_freed(p, &v);
		ha_real_free(v.raw);
		return;
	}
	saved = errno;
	if (HA_LIKELY(st == HA_HDR_LIVE)) {
		ha_free_depth_hint = v.depth;
		ha_guard_check(p, &v);
		ha_hook_free(p, v.size, v.seq);
		ha_hdr_mark_freed(p, &v);
		ha_real_free(v.raw);
	} else if (st == HA_HDR_FOREIGN) {
		ha_real_free(p);
	} else {
		ha_bad_pointer("free", st, p);
	}
	errno = saved;
}

/* Undo ha_hdr_mark_freed() on a block whose reallocation failed. END first, START
 * last, as ha_hdr_write() does: a core taken in between sees a freed block. */
static void ha_hdr_mark_live(void *user, const struct ha_hdr_view *v)
{
	((uintptr_t *)user)[-1] = (uintptr_t)heapann_end_live(HA_W) | v->depth;
	__atomic_store_n(&v->hdr[HEAPANN_W_START], (uintptr_t)heapann_start_live(HA_W), __ATOMIC_RELEASE);
}

/* Zero what is left of the old header of a block reallocated within one raw
 * block (RAW: in place, or as the real realloc copied it): the bytes from the old
 * header start to the old user pointer that the kept data [OFF, OFF + KEEP) does
 * not cover. Called before the new header is written over part of them. A header
 * of another length (the realloc's stack is deeper or shallower than the
 * allocation's) starts elsewhere in the block: without this, the old START word
 * stays in the pad, and a core reader takes it for a header, a damaged one when it
 * still says live. */
static __attribute__((noinline)) void ha_realloc_clear_rest(char *raw, const struct ha_hdr_view *v,
							   size_t off, size_t keep)
{
	size_t ou = v->offset;
	size_t oh = ou - (size_t)heapann_header_bytes(v->depth, HA_W);
	size_t ke = off + keep;

	if (oh < off)
		memset(raw + oh, 0, (ou < off ? ou : off) - oh);
	if (ou > ke) {
		size_t from = oh > ke ? oh : ke;

		memset(raw + from, 0, ou - from);
	}
}

/* ha_realloc_clear_rest, unless the new header (DEPTH frames, user data at
 * OFF) lies word for word where the old one was: same depth, same offset, the
 * common realloc (python: 75,590 of 75,711). ha_hdr_write then rewrites every
 * word of it, START first (zeroed), and until then the old header is the
 * freed one ha_hdr_mark_freed left (both callers mark it so first, before
 * the real realloc or memalign): no stale START can stay behind. The clear zeroed the whole header only for it to be written
 * again (a call to memset of some 300 bytes on every such realloc, issue 15,
 * capture8). */
static inline void ha_realloc_clear_old(char *raw, const struct ha_hdr_view *v, size_t off,
					size_t keep, unsigned depth)
{
	if (off == v->offset && depth == v->depth)
		return;
	ha_realloc_clear_rest(raw, v, off, keep);
}

/* Realloc of a block from the aligned family (its pad is larger than the
 * plain rounding gives): keep its alignment, which the real realloc would not.
 * Stays in place when the header and the new size fit, else allocates, copies
 * and frees. */
static void *ha_realloc_aligned(void *p, const struct ha_hdr_view *v, size_t size,
				unsigned depth, int cut, const uintptr_t *frames)
{
	size_t align = v->offset & -v->offset;  /* lowest set bit: >= the asked alignment */
	size_t off = ha_hdr_offset(depth, align);
	size_t keep = v->size < size ? v->size : size;
	unsigned guard = ha_opt.guard;
	size_t total;
	char *raw;
	uintptr_t seq;

	if (__builtin_add_overflow(size, off + guard, &total)) {
		errno = ENOMEM;
		return 0;
	}
	ha_hook_free(p, v->size, v->seq);   /* while the old header is intact */
	/* marked freed at once, as ha_realloc_ours does before the real realloc:
	 * a core taken from here on holds no live block whose free the statistics
	 * have counted (the moved way's window held the memalign and the copy) */
	ha_hdr_mark_freed(p, v);
	if (off == v->offset && ha_real_usable_size(v->raw) >= total) {
		raw = v->raw;
		ha_realloc_clear_old(raw, v, off, keep, depth);
	} else {
		raw = ha_real_memalign(align, total);
		if (!raw) {
			ha_hdr_mark_live(p, v);
			ha_hook_free_undo(p, v->size, v->seq);
			return 0;
		}
		memcpy(raw + off, p, keep);
		ha_real_free(v->raw);
	}
	seq = __atomic_add_fetch(&ha_seq, 1, __ATOMIC_RELAXED);
	ha_hdr_write(raw + off, off, size, depth, cut, frames, seq, guard);
	ha_hook_alloc(raw + off, size, seq, depth, cut, frames);
	return raw + off;
}

/* Realloc of one of our blocks, guard held. The real realloc works on the raw
 * block, so glibc grows it in place when it can. The header is rewritten for
 * the new address, size, stack and sequence number; when the new stack needs
 * a longer header the data moves up after the real realloc (never before it, so
 * a failure leaves the old block as it was). */
static void *ha_realloc_ours(void *p, const struct ha_hdr_view *v, size_t size, uintptr_t caller)
{
	uintptr_t buf[HA_FRAMES_ROOM(ha_opt.walk)];
	const uintptr_t *frames;
	int cut;
	unsigned depth = ha_block_stack(buf, caller, &frames, &cut);
	unsigned guard = ha_opt.guard;
	size_t hbytes = (size_t)heapann_header_bytes(v->depth, HA_W);
	size_t keep = v->size < size ? v->size : size;
	size_t off, total;
	char *raw;
	uintptr_t seq;

	if (v->offset - hbytes >= HA_MIN_ALIGN)
		return ha_realloc_aligned(p, v, size, depth, cut, frames);
	off = ha_hdr_offset(depth, HA_MIN_ALIGN);
	if (__builtin_add_overflow(size, off + guard, &total)) {
		errno = ENOMEM;
		return 0;
	}
	/* The old data must survive the real realloc at its old offset. */
	if (total < v->offset + keep)
		total = v->offset + keep;
	/* Until the new header is written the old one must not look live: if the
	 * real realloc moves the block, the copy it leaves behind is freed memory. */
	ha_hook_free(p, v->size, v->seq);   /* while the old header is intact */
	ha_hdr_mark_freed(p, v);
	raw = ha_real_realloc(v->raw, total);
	if (!raw) {
		ha_hdr_mark_live(p, v);
		ha_hook_free_undo(p, v->size, v->seq);
		return 0;
	}
	if (off != v->offset)
		memmove(raw + off, raw + v->offset, keep);
	ha_realloc_clear_old(raw, v, off, keep, depth);
	seq = __atomic_add_fetch(&ha_seq, 1, __ATOMIC_RELAXED);
	ha_hdr_write(raw + off, off, size, depth, cut, frames, seq, guard);
	ha_hook_alloc(raw + off, size, seq, depth, cut, frames);
	return raw + off;
}

void *ha_realloc(void *p, size_t size, uintptr_t caller)
{
	struct ha_hdr_view v;
	void *q;
	int st;

	if (!p)
		return ha_malloc(size, caller);
	st = ha_hdr_find(p, &v);
	if (st == HA_HDR_FOREIGN)
		return ha_real_realloc(p, size);
	if (st != HA_HDR_LIVE) {
		ha_bad_pointer("realloc", st, p);
		errno = EINVAL;
		return 0;
	}
	if (size == 0) {
		/* glibc: realloc(p, 0) frees p and returns NULL. */
		ha_free(p);
		return 0;
	}
	ha_guard_check(p, &v);
	if (HA_UNLIKELY(ha_busy)) {
		/* Re-entered (an unwinder reallocating one of our blocks): give it a
		 * plain real block and retire ours. */
		q = ha_real_malloc(size);
		if (q) {
			memcpy(q, p, v.size < size ? v.size : size);
			ha_free(p);
		}
		return q;
	}
	if (HA_UNLIKELY(ha_state != 2))
		ha_early();
	ha_busy = 1;
	q = ha_realloc_ours(p, &v, size, caller);
	ha_busy = 0;
	return q;
}

void *ha_reallocarray(void *p, size_t n, size_t size, uintptr_t caller)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return 0;
	}
	return ha_realloc(p, total, caller);
}

size_t ha_usable_size(void *p)
{
	struct ha_hdr_view v;
	size_t real;
	int st;

	if (!p)
		return 0;
	st = ha_hdr_find(p, &v);
	if (st == HA_HDR_FOREIGN)
		return ha_real_usable_size(p);
	if (st != HA_HDR_LIVE)
		return 0;
	/* With a guard the user may use exactly what was asked for: the guard
	 * follows. Without one, whatever the real block has past the user pointer. */
	if (v.guard)
		return v.size;
	real = ha_real_usable_size(v.raw);
	return real >= v.offset + v.size ? real - v.offset : v.size;
}
