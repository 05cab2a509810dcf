/* internal.h - what the parts of libheapann share: the real allocator below us,
 * the stack capture, the options, and the core entry points the exported
 * functions call. Everything here runs inside malloc: nothing may allocate
 * through the public malloc, take a lock, or touch stdio. Nothing is exported
 * from the shared library (hidden visibility, annotate/exports.map). */
#ifndef HA_INTERNAL_H
#define HA_INTERNAL_H

#include <stddef.h>
#include <limits.h>
#include <stdint.h>

/* ---- bare-metal firmware (the static kit built for a target without Linux:
 * arm-none-eabi with newlib) ----
 * No threads, no mmap, no fork, no dlopen, no environment: HA_TLS variables are
 * plain globals (one thread of control: with newlib, export_wrap.c runs each
 * call whole under newlib's recursive __malloc_lock, which an RTOS defines),
 * and the parts that need the OS (HEAPANN_CHECK_INTERVAL's table, the fork
 * handlers) are left out. */
#if defined(HEAPANN_STATIC) && !defined(__linux__)
#define HA_BARE 1
#define HA_TLS
#else
#define HA_BARE 0
#define HA_TLS __thread
#endif
#ifndef PATH_MAX
#define PATH_MAX 256   /* newlib defines none */
#endif

/* ---- the library's constructors, in a fixed order ----
 * libheapann.so's three constructors run in the order of these priorities:
 * ck_init (HEAPANN_CHECK_INTERVAL's table; the unwinder's own allocations
 * in ha_init are the real allocator's, made under ha_busy, not blocks, so
 * this order is a convention no behaviour shows), ha_init (the options and the
 * unwinder: done before snap_init, so that no malloc of a later constructor
 * is the first, which would run it from inside that call, and so that a
 * crash or signal from there on finds the unwinder loaded), snap_init (reads
 * its own options and installs handlers, allocates nothing). Without
 * priorities the order is the link's: alphabetical (check.c, core.c,
 * snapshot.c) in a plain build, but the -flto build merged them into one
 * function in the reverse order. Priorities 101-103 run before the
 * constructors of no priority in the same object only: in the .so, those are
 * none of ours (crtbeginS's frame_dummy registers no unwind tables on glibc).
 * The static kit keeps plain constructors: there a priority would run them
 * before the program's own frame_dummy, which registers the unwind tables.
 * A function declared before its definition takes the attribute on the
 * declaration (ha_init, below). tests/run-known11.sh checks the order in
 * .init_array of libheapann.so. */
#ifdef HEAPANN_STATIC
#define HA_CONSTRUCTOR(prio) __attribute__((constructor))
#else
#define HA_CONSTRUCTOR(prio) __attribute__((constructor(prio)))
#endif
#define HA_PRIO_CHECK 101
#define HA_PRIO_INIT 102
#define HA_PRIO_SNAPSHOT 103
#include "hdr.h"   /* HA_MIN_ALIGN */

/* ---- the real allocator (real_libc.c for the .so, real_wrap.c for the kit) ----
 * Same contracts as the glibc functions of the same names. The static kit
 * defines them as weak functions over __real_malloc & co. (ld --wrap); firmware
 * with another allocator defines all seven itself (see real_wrap.c). */
#if !defined(HEAPANN_STATIC) && !defined(HA_CFI_STANDALONE)
/* libheapann.so: glibc's own entry points (exported by glibc 2.36), called
 * directly, not through a function of real_libc.c that jumped to their PLT
 * entries (issue 15, capture7: two jumps on every real call; the library is
 * also built with -fno-plt, so a call is one indirect call through the GOT). */
void *__libc_malloc(size_t size);
void __libc_free(void *p);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
static inline void *ha_real_malloc(size_t size) { return __libc_malloc(size); }
static inline void ha_real_free(void *p) { __libc_free(p); }
static inline void *ha_real_calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
static inline void *ha_real_realloc(void *p, size_t size) { return __libc_realloc(p, size); }
/* ALIGN is a power of two >= HA_MIN_ALIGN. */
static inline void *ha_real_memalign(size_t align, size_t size)
{
	return __libc_memalign(align, size);
}
#else
void *ha_real_malloc(size_t size);
void ha_real_free(void *p);
void *ha_real_calloc(size_t n, size_t size);
void *ha_real_realloc(void *p, size_t size);
/* ALIGN is a power of two >= HA_MIN_ALIGN. */
void *ha_real_memalign(size_t align, size_t size);
#endif
/* Usable bytes of a block the real allocator made; 0 when unknown (then the
 * caller falls back to what it asked for). */
size_t ha_real_usable_size(void *p);
/* Called once from ha_init(), with the re-entrancy guard held: resolve anything
 * that needs resolving (may allocate through the real allocator). */
void ha_real_init(void);

/* ---- options (HEAPANN_* environment variables, read without allocating) ---- */
enum ha_unwind {
	HA_UNWIND_CFI,          /* our own CFI walker (cfi.c), libunwind behind it (default, x86-64) */
	HA_UNWIND_CFI_VERIFY,   /* the walker, each stack checked against libgcc's (a self-test) */
	HA_UNWIND_LIBUNWIND,    /* libunwind unw_backtrace, per-thread cache (default elsewhere) */
	HA_UNWIND_FP,           /* frame-pointer walk (opt-in; skips frames without FP) */
	HA_UNWIND_GCC,          /* libgcc _Unwind_Backtrace */
	HA_UNWIND_NONE,         /* record no frames */
};

struct ha_options {
	unsigned depth;         /* HEAPANN_DEPTH: max frames kept, 0..256 (default 32) */
	unsigned walk;          /* frames a capture asks for: depth + 1 (0 when depth is 0),
				 * the one more telling a cut stack from a whole one */
	enum ha_unwind unwind;  /* HEAPANN_UNWIND */
	unsigned guard;         /* HEAPANN_GUARD: guard bytes, 0..255 (default 8) */
	int abort_on_corruption; /* HEAPANN_ABORT_ON_CORRUPTION=1 */
};

extern struct ha_options ha_opt;

/* ---- stack capture (stack.c) ---- */
/* Load the unwinder chosen in ha_opt (may fall back and update ha_opt.unwind)
 * and prime it once. Called from ha_init() with the re-entrancy guard held. */
void ha_stack_init(void);
/* Frames the unwinder reports before the caller of malloc (the capture, the
 * core, the exported entry point, the unwinder's own frame), with room to
 * spare so inlining changes cannot hide the caller. */
#define HA_SKIP_MAX 8u
/* Words a capture buffer for MAX frames needs (the wrapper frames land there
 * first): small, so malloc stays light on the caller's stack. */
#define HA_FRAMES_ROOM(max) ((max) + HA_SKIP_MAX)

/* ha_stack_capture (below, after HA_CALLER): up to MAX (ha_opt.walk) return addresses,
 * innermost first, starting at the caller of the exported entry point (CALLER,
 * from HA_CALLER(); 0: from wherever the unwinder starts), so no wrapper frame
 * is kept. BUF (HA_FRAMES_ROOM(MAX) words) is the room the unwinders use;
 * *FRAMES is set to where the frames are: in BUF, or in the CFI walker's
 * per-thread record, valid until this thread's next capture. Returns how many.
 * Never allocates through the public malloc (the guard is held by the caller).
 * ha_stack_capture_slow is its out-of-line part (frames at BUF[*FIRST], wrapper
 * frames an unwinder walked before them left in place): every unwinder but the
 * CFI walk from the caller's frame, and (CFI_FAILED) the fallback after that
 * walk failed. */
unsigned ha_stack_capture_slow(uintptr_t *buf, unsigned max, uintptr_t caller, unsigned *first,
			       int cfi_failed);
/* 1 once the chosen unwinder is loaded (stack.c); no frames are taken before. */
extern int ha_stack_ready;
/* 1 once ha_stack_init is done with the CFI walker as the unwinder and
 * HEAPANN_DEPTH not 0 (stack.c): ha_stack_capture's inline way, one load and
 * test where the three it stands for were three loads and tests on every
 * capture (issue 15, capture8). Neither changes after ha_stack_init. */
extern int ha_cfi_ready;

/* Fork safety (stack.c): code that may take a lock of an unwinder's (libgcc's
 * object mutex, dl_iterate_phdr's lock, the CFI walker's table reads) runs
 * between ha_unwind_enter() and ha_unwind_leave(), and fork() waits until no
 * thread is there. ha_unwind_inside() is 1 while this thread is (enter does not
 * nest). */
void ha_unwind_enter(void);
void ha_unwind_leave(void);
int ha_unwind_inside(void);

/* ---- code loaded at an address where other code was (stack.c) ----
 * Unwind caches are keyed by code address; a library unloaded with dlclose and
 * another loaded at the same address would inherit the first one's entries.
 * Every new library gets its link_map from ld.so by calloc (a block of 1 KiB
 * or more, before its segments are mapped), and ld.so's calloc is ours: such a
 * call bumps ha_code_gen, which retires the CFI walker's rules and records.
 * Other ld.so allocations (a thread's DTV, about 256 bytes) do not. */
extern unsigned ha_code_gen;
extern uintptr_t ha_ldso_lo, ha_ldso_len;   /* ld.so's mapping (0, 0 until known) */
#define HA_LINK_MAP_MIN 512u
static inline void ha_code_note(uintptr_t ra, size_t bytes)
{
	if (__builtin_expect(ra - ha_ldso_lo < ha_ldso_len, 0) && bytes >= HA_LINK_MAP_MIN)
		__atomic_add_fetch(&ha_code_gen, 1, __ATOMIC_RELEASE);
}

#ifdef __x86_64__
/* The calling thread's thread pointer: the TCB's self pointer at %fs:0 (the
 * snapshots' thread registry, the CFI walker's frame-pointer steps). */
static inline uintptr_t ha_thread_pointer(void)
{
	uintptr_t tp;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}
#endif

/* ---- the x86-64 CFI walker (cfi.c; not in the static kit; glibc 2.35 or
 * later, for _dl_find_object) ---- */
#if defined(__x86_64__) && !defined(HEAPANN_STATIC) && defined(__GLIBC__) && \
	(__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
#define HA_HAVE_CFI 1
/* Set up the per-thread records (a pthread key). Called from ha_stack_init. */
void ha_cfi_init(void);
/* Store up to MAX return addresses in OUT, innermost first, starting with the
 * one into this function's caller. Returns how many, or -1 when a frame's
 * unwind rule is beyond the walker (then the caller uses another unwinder).
 * Allocates only through ha_real_malloc (a per-thread record, once). */
int ha_cfi_backtrace(uintptr_t *out, unsigned max);
/* The same walk started at a given frame: IP its return address, SP its stack
 * pointer (the CFA of the frame below), BP the value rbp holds there. That
 * frame must stay live during the call (it is one of the caller's). FRAMES
 * NULL: the frames are stored in OUT. Else OUT is only scratch room (MAX words)
 * and *FRAMES is set to the frames, in the thread's record (saving their copy),
 * valid until the thread's next walk. */
int ha_cfi_backtrace_from(uintptr_t *out, unsigned max, uintptr_t ip, uintptr_t sp,
			  uintptr_t bp, const uintptr_t **frames);
#else
#define HA_HAVE_CFI 0
#endif

/* ---- diagnostics (report.c): write(2) only ---- */
/* A line being built in a fixed buffer (text past the end is dropped) and written
 * to stderr whole: no stdio, no allocation, async-signal-safe. Start one with
 * { .len = 0 }; buf is not NUL-terminated (add one at buf[len] to use it as a
 * string: room is kept for it and for the newline). */
struct ha_line {
	char buf[PATH_MAX + 160];  /* the line: room for a path and its message */
	size_t len;                /* bytes used */
};
void ha_line_str(struct ha_line *l, const char *s);
/* V in BASE 10 or 16 (16 with a "0x" prefix). */
void ha_line_num(struct ha_line *l, uintptr_t v, unsigned base);
/* Append a newline and write the line to fd 2, retrying short writes and EINTR. */
void ha_line_send(struct ha_line *l);

/* Write "heapann: MSG" with up to two hex/decimal numbers substituted, see
 * report.c. Never allocates. */
void ha_report_guard(const void *user, size_t size, unsigned bad, unsigned guard);
void ha_report_bad_free(const char *what, const void *user);
/* HEAPANN_UNWIND=cfi-verify: the walker's stack differs from libgcc's at frame
 * K (0 = the caller of malloc): A is the walker's return address there, B
 * libgcc's (0 past a stack's end); NA and NB the two depths. */
void ha_report_unwind_mismatch(unsigned k, uintptr_t a, uintptr_t b, unsigned na, unsigned nb);

/* ---- the core (core.c): the exported functions call these, CALLER from
 * HA_CALLER() and the call wrapped in HA_KEEP(). CALLER is not a return
 * address with the CFI walker but the entry point's frame address (see
 * HA_CALLER); only ha_caller_ra() turns it into the return address into the
 * program ---- */
/* The constructor (core.c), also called by the first allocation once libc is
 * ready. Its priority is on this declaration too: gcc 12 puts a constructor
 * declared before without one in the plain .init_array, priority ignored. */
HA_CONSTRUCTOR(HA_PRIO_INIT) void ha_init(void);
/* The last allocation sequence number handed out (0 before the first). */
uintptr_t ha_seq_last(void);
/* ha_malloc and ha_free are inline (below, after HA_CALLER): the exported
 * malloc and free reach the annotating code in one call, not two (issue 15). */
void *ha_malloc_slow(size_t size, uintptr_t caller);
void ha_free_nonnull(void *p);
void *ha_calloc(size_t n, size_t size, uintptr_t caller);
void *ha_realloc(void *p, size_t size, uintptr_t caller);
void *ha_reallocarray(void *p, size_t n, size_t size, uintptr_t caller);
int ha_posix_memalign(void **out, size_t align, size_t size, uintptr_t caller);
void *ha_aligned_alloc(size_t align, size_t size, uintptr_t caller);
void *ha_memalign(size_t align, size_t size, uintptr_t caller);
void *ha_valloc(size_t size, uintptr_t caller);
void *ha_pvalloc(size_t size, uintptr_t caller);
size_t ha_usable_size(void *p);

#define HA_RA() ((uintptr_t)__builtin_return_address(0))

/* How an exported entry point names its caller to the core (the CALLER
 * argument of ha_malloc & co.). With the CFI walker, the entry point's own
 * frame address: __builtin_frame_address(0) makes it keep a frame pointer, so
 * the saved rbp of its caller is at [0] and the return address at [1], and the
 * walk starts at the caller's frame instead of stepping libheapann's own four
 * (issue 15). Elsewhere the return address itself. */
#if HA_HAVE_CFI
#define HA_CALLER() ((uintptr_t)__builtin_frame_address(0))
static inline uintptr_t ha_caller_ra(uintptr_t caller)
{
	return caller ? ((const uintptr_t *)caller)[1] : 0;
}
/* The CFI walk from CALLER (HA_CALLER(), not 0): the caller's frame is the
 * return address at [1], the stack pointer past it and the saved rbp at [0].
 * Returns what ha_cfi_backtrace_from returns, FRAMES as there. */
static inline int ha_cfi_walk_caller(uintptr_t *buf, unsigned max, uintptr_t caller,
				     const uintptr_t **frames)
{
	const uintptr_t *fa = (const uintptr_t *)caller;

	return ha_cfi_backtrace_from(buf, max, fa[1], caller + 2 * sizeof(uintptr_t), fa[0],
				     frames);
}
#else
#define HA_CALLER() HA_RA()
static inline uintptr_t ha_caller_ra(uintptr_t caller)
{
	return caller;
}
#endif
/* ha_stack_capture: the default case, the CFI walk from the caller's frame, is
 * inline (a layer of call, its register saves and the unwinder switch cost some
 * 30 instructions a capture); everything else, and a walk that fails, is
 * ha_stack_capture_slow in stack.c. */
static inline unsigned ha_stack_capture(uintptr_t *buf, unsigned max, uintptr_t caller,
					const uintptr_t **frames)
{
	unsigned first, n;

#if HA_HAVE_CFI
	if (__builtin_expect(ha_cfi_ready && caller, 1)) {   /* max is ha_opt.walk: not 0 */
		int got = ha_cfi_walk_caller(buf, max, caller, frames);

		if (__builtin_expect(got >= 0, 1))
			return (unsigned)got;
		/* a frame beyond the walker: another unwinder, without walking again */
		n = ha_stack_capture_slow(buf, max, caller, &first, 1);
		*frames = buf + first;
		return n;
	}
#endif
	n = ha_stack_capture_slow(buf, max, caller, &first, 0);
	*frames = buf + first;
	return n;
}

/* The re-entrancy guard (core.c): non-zero while this thread is inside one
 * of our entry points. */
extern HA_TLS volatile int ha_busy;
/* 2 once ha_init has done its work (core.c). */
extern int ha_state;
/* A new annotated block, ALIGN and SIZE as the caller checked them, zeroed
 * when ZERO, with the guard held by the caller (core.c). NULL with errno set
 * on failure. */
void *ha_alloc(size_t align, size_t size, int zero, uintptr_t caller);

/* malloc's core: the annotated block when this thread is not inside one of
 * our entry points and the library is set up, else ha_malloc_slow (the real
 * allocator for a re-entered call; the set-up first for an early one). */
static inline void *ha_malloc(size_t size, uintptr_t caller)
{
	if (__builtin_expect(!ha_busy && ha_state == 2, 1)) {
		void *p;

		ha_busy = 1;
		p = ha_alloc(HA_MIN_ALIGN, size, 0, caller);
		ha_busy = 0;
		return p;
	}
	return ha_malloc_slow(size, caller);
}

/* free's core: nothing for NULL, else ha_free_nonnull (core.c). */
static inline void ha_free(void *p)
{
	if (p)
		ha_free_nonnull(p);
}

/* The result of a call given HA_CALLER(), kept from being a tail call: the
 * entry point's frame, which CALLER points into, must outlive the call (gcc
 * would otherwise pop it and jump). */
#define HA_KEEP(v) __extension__({ __typeof__(v) ha_keep_ = (v); \
	__asm__ __volatile__("" : "+r"(ha_keep_)); ha_keep_; })

#endif /* HA_INTERNAL_H */
