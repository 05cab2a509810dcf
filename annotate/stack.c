/* stack.c - capture the return addresses of the code that called malloc.
 * Runs inside malloc with the re-entrancy guard held, so anything the unwinder
 * allocates goes straight to the real allocator unannotated. Methods: our own
 * CFI walker (cfi.c, x86-64, the default there) with libunwind behind it for
 * the stacks it cannot walk, libunwind alone (dlopen'ed RTLD_LOCAL so its
 * symbols, e.g. its weak backtrace(), never interpose on the program), libgcc's
 * _Unwind_Backtrace, a frame-pointer walk, or nothing. The static kit cannot
 * dlopen: it links libgcc's unwinder. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unwind.h>
#ifndef HEAPANN_STATIC
#include <dlfcn.h>
#include <link.h>
#endif

#include "hdr.h"
#include "internal.h"

typedef int (*ha_unw_backtrace_fn)(void **buffer, int size);
typedef _Unwind_Reason_Code (*ha_gcc_backtrace_fn)(_Unwind_Trace_Fn fn, void *arg);
typedef _Unwind_Ptr (*ha_gcc_getip_fn)(struct _Unwind_Context *ctx);

/* The code generation and ld.so's mapping (internal.h, ha_code_note). */
unsigned ha_code_gen;
uintptr_t ha_ldso_lo, ha_ldso_len;

#ifndef HEAPANN_STATIC
static ha_unw_backtrace_fn ha_unw_bt;
#endif
static ha_gcc_backtrace_fn ha_gcc_bt;
static ha_gcc_getip_fn ha_gcc_getip;
/* Set once the chosen unwinder is loaded; before that no frames are taken. */
int ha_stack_ready;
/* The CFI walk's inline way may be taken (internal.h). */
int ha_cfi_ready;

/* libunwind's per-architecture names (unw_set_caching_policy and
 * unw_local_addr_space are macros over these). */
#if defined(__x86_64__)
#define HA_UNW_ARCH "x86_64"
#elif defined(__aarch64__)
#define HA_UNW_ARCH "aarch64"
#elif defined(__i386__)
#define HA_UNW_ARCH "x86"
#elif defined(__arm__)
#define HA_UNW_ARCH "arm"
#else
#define HA_UNW_ARCH "unknown"
#endif
#if defined(__arm__)
#define HA_THUMB_BIT 1u   /* bit 0 of a code address: Thumb state, not part of it */
#else
#define HA_THUMB_BIT 0u
#endif
#define HA_UNW_CACHE_PER_THREAD 2 /* UNW_CACHE_PER_THREAD in libunwind-common.h */

#ifndef HEAPANN_STATIC
/* Load libunwind.so.8 (the nongnu libunwind; libunwind.so.1 is LLVM's, whose
 * unw_backtrace is not the one measured) and switch the local address space to
 * per-thread caching so unwinding takes no lock. Returns 0 on success. */
static int ha_stack_load_libunwind(void)
{
	typedef int (*set_policy_fn)(void *as, int policy);
	void *h = dlopen("libunwind.so.8", RTLD_LOCAL | RTLD_NOW);
	set_policy_fn set_policy;
	void **as;

	if (!h)
		return -1;
	ha_unw_bt = (ha_unw_backtrace_fn)dlsym(h, "unw_backtrace");
	set_policy = (set_policy_fn)dlsym(h, "_UL" HA_UNW_ARCH "_set_caching_policy");
	as = (void **)dlsym(h, "_UL" HA_UNW_ARCH "_local_addr_space");
	if (!ha_unw_bt || !set_policy || !as || set_policy(*as, HA_UNW_CACHE_PER_THREAD) != 0) {
		ha_unw_bt = 0;
		return -1;
	}
	return 0;
}

/* libunwind's backtrace. Its per-thread trace cache is keyed by code address
 * and survives unw_flush_cache (measured): after a dlclose and another library
 * at the same address it can walk the new code with the old rules (README,
 * "Known limits"). The CFI walker does not. */
static unsigned ha_unw_backtrace(uintptr_t *buf, unsigned n)
{
	return (unsigned)ha_unw_bt((void **)buf, (int)n);
}

/* Note where ld.so is mapped (see ha_code_note). */
static void ha_ldso_find(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
	struct dl_find_object fo;

	if (_dl_find_object(&_r_debug, &fo) == 0) {
		ha_ldso_lo = (uintptr_t)fo.dlfo_map_start;
		ha_ldso_len = (uintptr_t)fo.dlfo_map_end - ha_ldso_lo;
	}
#endif
}

/* Load libgcc_s's unwinder. Returns 0 on success. */
static int ha_stack_load_gcc(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_LOCAL | RTLD_NOW);

	if (!h)
		return -1;
	ha_gcc_bt = (ha_gcc_backtrace_fn)dlsym(h, "_Unwind_Backtrace");
	ha_gcc_getip = (ha_gcc_getip_fn)dlsym(h, "_Unwind_GetIP");
	if (!ha_gcc_bt || !ha_gcc_getip) {
		ha_gcc_bt = 0;
		return -1;
	}
	return 0;
}
#else
/* Static kit: libgcc's unwinder is linked in (libgcc_eh). On ARM EHABI
 * _Unwind_GetIP is a macro, hence the small wrapper. */
static _Unwind_Ptr ha_gcc_getip_static(struct _Unwind_Context *ctx)
{
	return _Unwind_GetIP(ctx);
}

static int ha_stack_load_gcc(void)
{
	ha_gcc_bt = _Unwind_Backtrace;
	ha_gcc_getip = ha_gcc_getip_static;
	return 0;
}

static int ha_stack_load_libunwind(void)
{
	return -1;
}

static unsigned ha_unw_backtrace(uintptr_t *buf, unsigned n)
{
	(void)buf;
	(void)n;
	return 0;
}

static void ha_ldso_find(void)
{
}
#endif

/* fork() against unwinder locks. The unwinders take locks of their own on
 * some paths (libgcc's object mutex, always taken in a static binary;
 * dl_iterate_phdr's lock on a libunwind cache miss). A child forked while
 * another thread held one would hang in its first malloc. So the fork prepare
 * handler waits until no thread is inside an unwinder, and new entries wait
 * until the fork is done; threads never wait on each other except across a fork.
 *
 * Each thread says it is inside in a word of its own (a slot below, no atomic
 * read-modify-write and no shared line per capture): a plain store, then a load
 * of fork_pending. The store-load order that this needs is paid by the forking
 * thread instead: membarrier(PRIVATE_EXPEDITED) after it sets fork_pending runs
 * a full barrier on every running thread, so either a thread sees fork_pending
 * or the fork sees its slot (the asymmetric fence of userspace RCU). Without
 * membarrier (old kernels, qemu-user, the static kit), or for threads beyond the
 * slots, the shared counter with sequentially consistent atomics does it. */
/* On a cache line of their own: written by every capture, they must not
 * share one with the read-mostly function pointers above. */
static struct {
	int unwinding;                  /* threads inside an unwinder now (counter path) */
	int fork_pending;               /* a fork() is between prepare and parent/child */
	char pad[64 - 2 * sizeof(int)]; /* the rest of the line */
} ha_fork_sync __attribute__((aligned(64)));
#define ha_unwinding (ha_fork_sync.unwinding)
#define ha_fork_pending (ha_fork_sync.fork_pending)
static HA_TLS int ha_unwinding_self;  /* this thread is inside an unwinder */

int ha_unwind_inside(void)
{
	return ha_unwinding_self;
}

#if !defined(HEAPANN_STATIC) && defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HA_SYNC_SLOTS 256
/* Per-thread "inside an unwinder" words, one cache line each. */
static struct {
	int inside;
	char pad[64 - sizeof(int)];
} ha_sync_slot[HA_SYNC_SLOTS] __attribute__((aligned(64)));
static int ha_sync_taken;           /* slots handed out (never given back) */
static int ha_sync_fence;           /* 1: membarrier registered, slots in use */
static HA_TLS int ha_sync_mine;   /* 1 + this thread's slot; 0: none yet; -1: counter */

/* Register for expedited private membarrier (Linux 4.14); 1 when it works. */
static int ha_sync_fence_init(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return 0;
	return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
}

/* A full memory barrier on every running thread of the process. */
static void ha_sync_fence_all(void)
{
	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
}

/* This thread's slot index, or -1 for the shared counter. */
static int ha_sync_slot_get(void)
{
	int m = ha_sync_mine;

	if (__builtin_expect(m == 0, 0)) {
		int i = __atomic_fetch_add(&ha_sync_taken, 1, __ATOMIC_RELAXED);

		m = ha_sync_fence && i < HA_SYNC_SLOTS ? i + 1 : -1;
		ha_sync_mine = m;
	}
	return m - 1;
}
#else
/* The static kit (firmware) keeps the shared counter only: no slots, so no
 * 16 KiB of RAM and no syscall. */
#define HA_SYNC_SLOTS 0
#endif

void ha_unwind_enter(void)
{
#if HA_SYNC_SLOTS
	int slot = ha_sync_fence ? ha_sync_slot_get() : -1;
#else
	const int slot = -1;
#endif

	for (;;) {
#if HA_SYNC_SLOTS
		if (slot >= 0) {
			__atomic_store_n(&ha_sync_slot[slot].inside, 1, __ATOMIC_RELAXED);
			/* the compiler keeps the order; the fork's membarrier the CPU's */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			if (!__atomic_load_n(&ha_fork_pending, __ATOMIC_RELAXED))
				break;
			__atomic_store_n(&ha_sync_slot[slot].inside, 0, __ATOMIC_RELEASE);
		} else
#endif
		{
			(void)slot;
			__atomic_add_fetch(&ha_unwinding, 1, __ATOMIC_SEQ_CST);
			if (!__atomic_load_n(&ha_fork_pending, __ATOMIC_SEQ_CST))
				break;
			__atomic_sub_fetch(&ha_unwinding, 1, __ATOMIC_SEQ_CST);
		}
		while (__atomic_load_n(&ha_fork_pending, __ATOMIC_ACQUIRE))
#if HA_BARE
			;   /* never: no fork on bare metal (and newlib has no sched_yield) */
#else
			sched_yield();
#endif
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ha_unwinding_self = 1;
}

void ha_unwind_leave(void)
{
	ha_unwinding_self = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#if HA_SYNC_SLOTS
	if (ha_sync_mine > 0) {   /* a slot: only taken when the fence works */
		__atomic_store_n(&ha_sync_slot[ha_sync_mine - 1].inside, 0, __ATOMIC_RELEASE);
		return;
	}
#endif
	__atomic_sub_fetch(&ha_unwinding, 1, __ATOMIC_SEQ_CST);
}

#if !HA_BARE
static void ha_fork_prepare(void)
{
	int self_counted = ha_unwinding_self;

	__atomic_store_n(&ha_fork_pending, 1, __ATOMIC_SEQ_CST);
#if HA_SYNC_SLOTS
	if (ha_sync_mine > 0)
		self_counted = 0;   /* a signal handler inside our unwind: its slot, not the counter */
	if (ha_sync_fence) {
		int n;

		ha_sync_fence_all();
		n = __atomic_load_n(&ha_sync_taken, __ATOMIC_ACQUIRE);
		for (int i = 0; i < n && i < HA_SYNC_SLOTS; i++)
			while (i != ha_sync_mine - 1 &&
			       __atomic_load_n(&ha_sync_slot[i].inside, __ATOMIC_ACQUIRE))
				sched_yield();
	}
#endif
	/* A signal handler forking from inside our own unwind counts itself. */
	while (__atomic_load_n(&ha_unwinding, __ATOMIC_SEQ_CST) > self_counted)
		sched_yield();
}

static void ha_fork_parent(void)
{
	__atomic_store_n(&ha_fork_pending, 0, __ATOMIC_RELEASE);
}

static void ha_fork_child(void)
{
	int self_counted = ha_unwinding_self;

#if HA_SYNC_SLOTS
	/* Only this thread exists now: slots of the others that were backing off
	 * when the fork came are cleared. */
	for (int i = 0; i < HA_SYNC_SLOTS; i++)
		if (i != ha_sync_mine - 1)
			__atomic_store_n(&ha_sync_slot[i].inside, 0, __ATOMIC_RELAXED);
	if (ha_sync_mine > 0)
		self_counted = 0;
#endif
	__atomic_store_n(&ha_unwinding, self_counted, __ATOMIC_RELAXED);
	__atomic_store_n(&ha_fork_pending, 0, __ATOMIC_RELEASE);
}
#endif /* !HA_BARE: no fork on bare metal */

/* State of one _Unwind_Backtrace walk. */
struct ha_gcc_walk {
	uintptr_t *buf;         /* where frames go */
	unsigned n;             /* frames stored so far */
	unsigned max;           /* room in buf */
	uintptr_t cfa;          /* the last frame's CFA (static kit) */
};

#ifdef HEAPANN_STATIC
/* Where a frame of libgcc's walk is on the stack: sp itself on ARM, whose
 * _Unwind_GetCFA does not tell the frames of a recursion apart; the CFA
 * elsewhere. */
static inline uintptr_t ha_gcc_frame_sp(struct _Unwind_Context *ctx)
{
#if defined(__arm__)
	return (uintptr_t)_Unwind_GetGR(ctx, 13);
#else
	return (uintptr_t)_Unwind_GetCFA(ctx);
#endif
}
#endif

static _Unwind_Reason_Code ha_gcc_step(struct _Unwind_Context *ctx, void *arg)
{
	struct ha_gcc_walk *w = arg;
	uintptr_t ip = (uintptr_t)ha_gcc_getip(ctx);

	if (w->n >= w->max || ip == 0)
		return _URC_END_OF_STACK;
#ifdef HEAPANN_STATIC
	{
		/* The same return address at the same CFA again: the unwinder made
		 * no progress and would repeat the frame up to the depth limit. On
		 * ARM an RTOS task whose initial LR is its exit function does that:
		 * libgcc looks up the function placed before that one, whose rule
		 * leaves pc and sp as they are. */
		uintptr_t cfa = ha_gcc_frame_sp(ctx);

		if (w->n && ip == w->buf[w->n - 1] && cfa == w->cfa)
			return _URC_END_OF_STACK;
		w->cfa = cfa;
	}
#endif
	w->buf[w->n++] = ip;
	return _URC_NO_REASON;
}

/* Up to MAX return addresses into BUF by libgcc's _Unwind_Backtrace. Returns
 * how many. */
static unsigned ha_gcc_backtrace(uintptr_t *buf, unsigned max)
{
	struct ha_gcc_walk w = { buf, 0, max, 0 };

	ha_gcc_bt(ha_gcc_step, &w);
	return w.n;
}

/* Frame-pointer walk from this function's frame. Assumes the ABI frame layout
 * (saved FP, then the return address) and stops at the first frame pointer
 * that does not move up the stack by a sane amount: code built without frame
 * pointers is skipped over or ends the walk, it is never followed far. */
static unsigned ha_fp_walk(uintptr_t *buf, unsigned max)
{
	uintptr_t *fp = __builtin_frame_address(0);
	unsigned n = 0;

	while (n < max && fp) {
		uintptr_t *next = (uintptr_t *)fp[0];
		uintptr_t ra = fp[1];

		if (ra < 4096)
			break;
		buf[n++] = ra;
		if (next <= fp || (uintptr_t)next - (uintptr_t)fp > (64u << 20) ||
		    ((uintptr_t)next & (sizeof(uintptr_t) - 1)))
			break;
		fp = next;
	}
	return n;
}

/* Where CALLER_RA is among the N frames of BUF, looking only as far as the
 * wrapper frames go (HA_SKIP_MAX); N when it is not there. ARM's _Unwind_GetIP
 * clears the Thumb bit that a return address carries. */
static unsigned ha_caller_index(const uintptr_t *buf, unsigned n, uintptr_t caller_ra)
{
	for (unsigned i = 0; i < n && i < HA_SKIP_MAX; i++)
		if ((buf[i] | HA_THUMB_BIT) == (caller_ra | HA_THUMB_BIT))
			return i;
	return n;
}

#if HA_HAVE_CFI
/* The CFI walk from the caller of the exported entry point (CALLER, see
 * HA_CALLER: its frame, whose rbp and return address the entry point saved),
 * so that libheapann's own frames are not stepped; from this function's frame
 * when CALLER is 0 (then the wrapper frames come first). */
static inline int ha_cfi_walk(uintptr_t *buf, unsigned max, uintptr_t caller)
{
	if (!caller)
		return ha_cfi_backtrace(buf, max + HA_SKIP_MAX);
	return ha_cfi_walk_caller(buf, max, caller, 0);
}
#endif

/* HEAPANN_UNWIND=cfi-verify: walk with the CFI walker and with libgcc's
 * unwinder, report the first frame where they differ (up to 20 reports), keep
 * the walker's. A stack the walker gives up on (a signal frame) is libgcc's. */
static unsigned ha_cfi_verify(uintptr_t *buf, unsigned max, uintptr_t caller)
{
#if HA_HAVE_CFI
	static unsigned reports;
	uintptr_t ref[HA_FRAMES_ROOM(max)];
	uintptr_t caller_ra = ha_caller_ra(caller);
	int got = ha_cfi_walk(buf, max, caller);
	unsigned nref = ha_gcc_backtrace(ref, max + HA_SKIP_MAX), i, j, na, nb, k;

	if (got < 0) {
		memcpy(buf, ref, nref * sizeof(*ref));
		return nref;
	}
	i = ha_caller_index(buf, (unsigned)got, caller_ra);
	j = ha_caller_index(ref, nref, caller_ra);
	na = (unsigned)got - i;
	nb = nref - j;
	na = na > max ? max : na;
	nb = nb > max ? max : nb;
	for (k = 0; k < na && k < nb && buf[i + k] == ref[j + k]; k++)
		;
	if ((k < na || k < nb) && __atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED) < 20)
		ha_report_unwind_mismatch(k, k < na ? buf[i + k] : 0, k < nb ? ref[j + k] : 0, na, nb);
	return (unsigned)got;
#else
	(void)buf;
	(void)max;
	(void)caller;
	return 0;
#endif
}

/* ha_stack_capture_slow's walk, once there is one to do (MAX not 0, the
 * unwinder loaded, one chosen): out of line, so that the way without one
 * (HEAPANN_DEPTH=0, HEAPANN_UNWIND=none, the first allocations) returns before
 * its register saves (issue 15, capture8: 26 instructions a call). */
static __attribute__((noinline)) unsigned ha_stack_unwind(uintptr_t *buf, unsigned max,
							  uintptr_t caller, unsigned *first,
							  int cfi_failed)
{
	uintptr_t caller_ra = ha_caller_ra(caller);
	unsigned n = 0, start;

	switch (ha_opt.unwind) {
	case HA_UNWIND_CFI:
#if HA_HAVE_CFI
		{
			/* the walk takes no lock but where it reads the unwind
			 * tables (cfi.c, ha_rc_miss, which enters itself) */
			int got = cfi_failed ? -1 : ha_cfi_walk(buf, max, caller);

			if (got >= 0 && caller)
				return (unsigned)got;   /* from the caller's frame: nothing to skip */
			if (got >= 0) {
				n = (unsigned)got;
			} else {
				/* a frame beyond the walker: another unwinder takes the
				 * whole stack */
				ha_unwind_enter();
				if (ha_unw_bt)
					n = ha_unw_backtrace(buf, max + HA_SKIP_MAX);
				else
					n = ha_gcc_backtrace(buf, max + HA_SKIP_MAX);
				ha_unwind_leave();
			}
		}
#endif
		break;
	case HA_UNWIND_CFI_VERIFY:
		ha_unwind_enter();
		n = ha_cfi_verify(buf, max, caller);
		ha_unwind_leave();
		break;
	case HA_UNWIND_LIBUNWIND:
		ha_unwind_enter();
		n = ha_unw_backtrace(buf, max + HA_SKIP_MAX);
		ha_unwind_leave();
		break;
	case HA_UNWIND_GCC:
		ha_unwind_enter();
		n = ha_gcc_backtrace(buf, max + HA_SKIP_MAX);
		ha_unwind_leave();
		break;
	case HA_UNWIND_FP:
		n = ha_fp_walk(buf, max + HA_SKIP_MAX);
		break;
	case HA_UNWIND_NONE:
		return 0;
	}
	/* Our frames end where the caller's return address appears. */
	start = ha_caller_index(buf, n, caller_ra);
	if (start == n) {
		/* The unwinder lost the chain inside our frames: keep what is sure. */
		buf[0] = caller_ra;
		return 1;
	}
	n -= start;
	*first = start;
	return n > max ? max : n;
}

/* noinline as before: the -flto build would put it in ha_alloc, whose
 * registers and spills then cost the default way more than the call saves */
__attribute__((noinline))
unsigned ha_stack_capture_slow(uintptr_t *buf, unsigned max, uintptr_t caller, unsigned *first,
			       int cfi_failed)
{
	*first = 0;
	if (max == 0 || !ha_stack_ready || ha_opt.unwind == HA_UNWIND_NONE)
		return 0;
	return ha_stack_unwind(buf, max, caller, first, cfi_failed);
}

void ha_stack_init(void)
{
	uintptr_t prime[HA_FRAMES_ROOM(4)];
	unsigned first;

	switch (ha_opt.unwind) {
	case HA_UNWIND_CFI_VERIFY:
#if HA_HAVE_CFI
		if (ha_stack_load_gcc() == 0) {
			ha_cfi_init();
			break;
		}
#endif
		ha_opt.unwind = HA_UNWIND_FP;
		break;
	case HA_UNWIND_CFI:
#if HA_HAVE_CFI
		/* libunwind backs the walker up, or libgcc's unwinder without it */
		if (ha_stack_load_libunwind() == 0 || ha_stack_load_gcc() == 0) {
			ha_cfi_init();
			break;
		}
#endif
		ha_opt.unwind = HA_UNWIND_GCC;
		if (ha_stack_load_gcc() == 0)
			break;
		ha_opt.unwind = HA_UNWIND_FP;
		break;
	case HA_UNWIND_LIBUNWIND:
		if (ha_stack_load_libunwind() == 0)
			break;
		ha_opt.unwind = HA_UNWIND_GCC;
		/* fall through */
	case HA_UNWIND_GCC:
		if (ha_stack_load_gcc() == 0)
			break;
		ha_opt.unwind = HA_UNWIND_FP;
		break;
	case HA_UNWIND_FP:
	case HA_UNWIND_NONE:
		break;
	}
#if HA_SYNC_SLOTS
	ha_sync_fence = ha_sync_fence_init();
#endif
	ha_ldso_find();
#if !HA_BARE
	pthread_atfork(ha_fork_prepare, ha_fork_parent, ha_fork_child);
#endif
	ha_stack_ready = 1;
#if HA_HAVE_CFI
	ha_cfi_ready = ha_opt.unwind == HA_UNWIND_CFI && ha_opt.walk;
#endif
	/* Prime the unwinder (its first-call allocations and table look-ups happen
	 * now, under the guard the caller holds). */
	ha_stack_capture_slow(prime, 4, 0, &first, 0);
}
