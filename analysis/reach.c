/* reach.c - the mark phase behind --report=lost, --why and --refs: memcheck's
 * leak categories computed over a core instead of a running program.
 *
 * Pure over a read-only image: every read goes through the segments' dumped bytes.
 * Live blocks are indexed by user address (a sorted array of their scan indices,
 * cut into regions with one bucket per 2^k bytes, about one bucket per block; the
 * addresses are read from the scan's blocks), so a candidate word costs a range
 * check, a search among the few regions, a bucket and one to three blocks.
 * The mark uses an explicit work list. Roots and batches of the list are read by
 * several threads into hit lists that the calling thread applies in order, so the
 * result (parents included) does not depend on the thread count. Every read of
 * the image is noted (pagerel.c) and the pages read are given back now and then,
 * so that a core larger than memory is not held resident by the walk.
 */
#include <elf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "heapann_stats.h"
#include "ncpu.h"
#include "pagerel.h"
#include "reach.h"

#define CHUNK_BYTES (4u << 20)            /* root bytes per work item */
#define PARALLEL_MIN (8u << 20)           /* fewer root bytes: one thread */

const char *an_reach_cat_name(unsigned cat)
{
	switch (cat) {
	case AN_REACH_REACHABLE: return "still reachable";
	case AN_REACH_POSSIBLE: return "possibly lost";
	case AN_REACH_INDIRECT: return "indirectly lost";
	case AN_REACH_DEFINITE: return "definitely lost";
	default: return "";
	}
}

/* x rounded up to a multiple of m (a power of two), or UINT64_MAX when that does
 * not fit: a walk stepping with it ends at the top of the address space instead
 * of wrapping to 0 and starting over (a segment or region read from a damaged
 * image may end there). */
static uint64_t round_up_sat(uint64_t x, uint64_t m)
{
	return x > UINT64_MAX - (m - 1) ? UINT64_MAX : (x + m - 1) & ~(m - 1);
}

/* ---- roots ---- */

int an_roots_add(struct an_roots *roots, const struct an_root *r)
{
	struct an_root *v = grow_array(roots->v, &roots->cap, roots->n, sizeof(*v), 32);

	if (!v)
		return -1;
	roots->v = v;
	roots->v[roots->n++] = *r;
	return 0;
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct an_range *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

static int roots_exclude(struct an_roots *roots, uint64_t start, uint64_t end, uint32_t kind)
{
	if (end <= start)
		return 0;
	if (roots->nexclude == roots->exclude_cap) {
		size_t cap = roots->exclude_cap ? roots->exclude_cap * 2 : 8;
		struct an_range *v = realloc(roots->exclude, cap * sizeof(*v));

		if (!v)
			return -1;
		roots->exclude = v;
		roots->exclude_cap = cap;
	}
	roots->exclude[roots->nexclude].start = start;
	roots->exclude[roots->nexclude].end = end;
	roots->exclude[roots->nexclude].kind = kind;
	roots->nexclude++;
	qsort(roots->exclude, roots->nexclude, sizeof(*roots->exclude), range_cmp);
	return 0;
}

int an_roots_exclude(struct an_roots *roots, uint64_t start, uint64_t end)
{
	return roots_exclude(roots, start, end, AN_EXCLUDE_STATS);
}

int an_roots_exclude_stack(struct an_roots *roots, uint64_t start, uint64_t end)
{
	return roots_exclude(roots, start, end, AN_EXCLUDE_STACK);
}

int an_roots_exclude_arena(struct an_roots *roots, uint64_t start, uint64_t end)
{
	return roots_exclude(roots, start, end, AN_EXCLUDE_ARENA);
}

long an_roots_locate(const struct an_roots *roots, uint64_t addr)
{
	for (size_t i = 0; i < roots->n; i++)
		if (roots->v[i].kind != AN_ROOT_REGS && addr >= roots->v[i].start &&
		    addr < roots->v[i].end)
			return (long)i;
	return -1;
}

void an_roots_release(struct an_roots *roots)
{
	free(roots->v);
	free(roots->exclude);
	free(roots->finished);
	memset(roots, 0, sizeof(*roots));
}

/* Segment index i extended forward and backward through adjacent segments with the
 * same flags (a gcore may split one mapping), never into a heap segment (mark bit
 * 1): [*first, *last]. */
static void seg_run(const struct cp_image *img, const unsigned char *mark, size_t i,
		    size_t *first, size_t *last)
{
	size_t a = i, b = i;

	while (a > 0 && img->segs[a - 1].vaddr + img->segs[a - 1].memsz == img->segs[a].vaddr &&
	       img->segs[a - 1].flags == img->segs[a].flags && !(mark[a - 1] & 1))
		a--;
	while (b + 1 < img->nsegs && img->segs[b].vaddr + img->segs[b].memsz == img->segs[b + 1].vaddr &&
	       img->segs[b + 1].flags == img->segs[b].flags && !(mark[b + 1] & 1))
		b++;
	*first = a;
	*last = b;
}

/* 1 when segment sg holds a block's memory or a damaged header, as
 * an_roots_find marks heap: a damaged header in a segment holding a thread's
 * stack pointer is a copy on that stack, not heap. */
static int seg_has_heap(const struct cp_image *img, const struct cp_scan *scan,
			const struct cp_segment *sg)
{
	uint64_t v = sg->vaddr, e = v + sg->memsz;
	size_t k = cp_scan_lower(scan, v);

	if (k > 0 && cp_block_end(&scan->blocks[k - 1]) > v)
		return 1;
	/* a block's header may start in the segment, its user address after it */
	for (; k < scan->nblocks && cp_block_start(&scan->blocks[k]) < e; k++)
		if (cp_block_end(&scan->blocks[k]) > v)
			return 1;
	for (size_t t = 0; t < img->nthreads; t++)
		if (img->threads[t].sp >= v && img->threads[t].sp < e)
			return 0;
	for (size_t d = 0; d < scan->ndamaged; d++)
		if (scan->damaged[d].hdr >= v && scan->damaged[d].hdr < e)
			return 1;
	return 0;
}

int an_stack_run(const struct cp_image *img, const struct cp_scan *scan, uint64_t addr, uint64_t *lo,
		 uint64_t *hi)
{
	const struct cp_segment *sg = cp_image_segment(img, addr);
	size_t a, b;

	if (!sg || seg_has_heap(img, scan, sg))
		return -1;
	a = b = (size_t)(sg - img->segs);
	while (a > 0 && img->segs[a - 1].vaddr + img->segs[a - 1].memsz == img->segs[a].vaddr &&
	       img->segs[a - 1].flags == img->segs[a].flags && !seg_has_heap(img, scan, &img->segs[a - 1]))
		a--;
	while (b + 1 < img->nsegs && img->segs[b].vaddr + img->segs[b].memsz == img->segs[b + 1].vaddr &&
	       img->segs[b + 1].flags == img->segs[b].flags && !seg_has_heap(img, scan, &img->segs[b + 1]))
		b++;
	*lo = img->segs[a].vaddr;
	*hi = img->segs[b].vaddr + img->segs[b].memsz;
	return 0;
}

static long seg_index(const struct cp_image *img, uint64_t addr)
{
	const struct cp_segment *s = cp_image_segment(img, addr);

	return s ? (long)(s - img->segs) : -1;
}

/* The block whose memory (raw block through guard) holds addr, or NULL: like
 * cp_scan_find, kept here so that this file needs only the scan's arrays. */
static const struct cp_block *block_at(const struct cp_scan *scan, uint64_t addr)
{
	size_t k = cp_scan_upper(scan, addr);

	/* blocks before k have user <= addr; a few back cover headers and nesting */
	for (size_t i = k, n = 0; i > 0 && n < 4; i--, n++) {
		const struct cp_block *b = &scan->blocks[i - 1];

		if (cp_block_start(b) <= addr && addr < cp_block_end(b))
			return b;
	}
	if (k < scan->nblocks && cp_block_start(&scan->blocks[k]) <= addr)
		return &scan->blocks[k];
	return NULL;
}

/* The end of a stack at SP in segment S, which also holds heap: the start of the
 * first block or damaged header above SP, or the end of the segment. */
static uint64_t stack_end_before_heap(const struct cp_image *img, const struct cp_scan *scan,
				      size_t s, uint64_t sp)
{
	uint64_t end = img->segs[s].vaddr + img->segs[s].memsz;
	size_t k = cp_scan_upper(scan, sp);

	for (; k < scan->nblocks; k++)
		if (cp_block_start(&scan->blocks[k]) > sp) {
			if (cp_block_start(&scan->blocks[k]) < end)
				end = cp_block_start(&scan->blocks[k]);
			break;
		}
	for (size_t i = 0; i < scan->ndamaged; i++)
		if (scan->damaged[i].hdr > sp && scan->damaged[i].hdr < end)
			end = scan->damaged[i].hdr;
	return end;
}

/* x86-64 user_regs_struct: fs_base is word 21. */
#define X86_64_RED_ZONE 128u
#define X86_64_FS_BASE 21

/* How far below the end of a thread's stack mapping its TCB is looked for when
 * the core lacks its fs_base: glibc puts struct pthread (2,304 bytes in 2.36)
 * at the top of the mapping, the static TLS right below it. */
#define TCB_SEARCH 16384u

/* tcbhead_t's stack_guard and pointer_guard: glibc copies both into every
 * thread's TCB */
#define TCB_STACK_GUARD 0x28u
#define TCB_POINTER_GUARD 0x30u

/* The stack_guard and pointer_guard of the TCB of the first thread whose
 * fs_base the core has (glibc copies both into every thread's TCB): 0, or -1
 * when no thread has its fs_base. */
static int tcb_guards(const struct cp_image *img, uint64_t *sguard, uint64_t *pguard)
{
	for (size_t t = 0; t < img->nthreads; t++) {
		const struct cp_thread *th = &img->threads[t];
		uint64_t fs = th->nregs > X86_64_FS_BASE ? th->regs[X86_64_FS_BASE] : 0;

		if (fs && cp_image_read_word(img, fs + TCB_STACK_GUARD, sguard) == 0 &&
		    cp_image_read_word(img, fs + TCB_POINTER_GUARD, pguard) == 0)
			return 0;
	}
	return -1;
}

/* 1 when a glibc TCB starts at a: tcbhead_t's tcb and self, words 0 and 2, both
 * a, the DTV pointer in word 1 not null, and the process's guards at 0x28 and
 * 0x30 (a self-referencing object on a stack, {a, 1, a}, is no TCB). */
static int tcb_at(const struct cp_image *img, uint64_t a, uint64_t sguard, uint64_t pguard)
{
	uint64_t v;

	return cp_image_read_word(img, a, &v) == 0 && v == a && cp_image_read_word(img, a + 16, &v) == 0 &&
	       v == a && cp_image_read_word(img, a + 8, &v) == 0 && v &&
	       cp_image_read_word(img, a + TCB_STACK_GUARD, &v) == 0 && v == sguard &&
	       cp_image_read_word(img, a + TCB_POINTER_GUARD, &v) == 0 && v == pguard;
}

/* The TCB of a thread whose fs_base the core lacks (libheapann's snapshots give
 * the threads other than their own only pc, stack pointer and system call
 * arguments: the TLS of a thread at its exit snapshot read as plain stack, in
 * --addr and in --why's roots), which glibc keeps at the top of its stack
 * mapping: the highest TCB (tcb_at) in the last TCB_SEARCH bytes below end,
 * above sp. Returns 0 with *tp, -1 when none is there or no thread has its
 * fs_base. */
static int tcb_below(const struct cp_image *img, uint64_t sp, uint64_t end, uint64_t *tp)
{
	uint64_t sguard, pguard;

	if (end - sp < 24 || tcb_guards(img, &sguard, &pguard) < 0)
		return -1;
	for (uint64_t a = (end - 24) & ~(uint64_t)7; a > sp && end - a <= TCB_SEARCH; a -= 8)
		if (tcb_at(img, a, sguard, pguard)) {
			*tp = a;
			return 0;
		}
	return -1;
}

/* The same, the lowest TCB above sp and below end: the thread's own where the
 * memory above sp holds other threads' stacks too (tcb_below would find the
 * highest of them). Reads the live part of the stack: the mark reads it too. */
static int tcb_above(const struct cp_image *img, uint64_t sp, uint64_t end, uint64_t *tp)
{
	uint64_t sguard, pguard;

	if (tcb_guards(img, &sguard, &pguard) < 0)
		return -1;
	for (uint64_t a = (sp + 8) & ~(uint64_t)7; a < end && end - a >= 24; a += 8)
		if (tcb_at(img, a, sguard, pguard)) {
			*tp = a;
			return 0;
		}
	return -1;
}

/* How far above the thread pointer glibc's struct pthread is searched for its
 * stackblock and stackblock_size (2,304 bytes in 2.36, then the static TLS
 * alignment's slack up to the end of the stack mapping). */
#define STACKBLOCK_SEARCH 8192u
#define GUARD_MAX (64u << 20)

/* The thread's own stack mapping from its TCB at tp: glibc's struct pthread
 * holds stackblock, stackblock_size and guardsize, three adjacent words
 * (a, n, g) with [a, a + n) the stack glibc mapped (its guard of g bytes
 * included), or the stack the program gave with pthread_attr_setstack (g 0),
 * the TCB at its top. The first such triple in the STACKBLOCK_SEARCH bytes from
 * tp with a <= below (the thread's stack pointer), n at least 16 KiB
 * (PTHREAD_STACK_MIN), g a multiple of 4096 below n, tp < a + n <= tp +
 * STACKBLOCK_SEARCH, the triple itself below a + n, and a at or above lo, the
 * start of the memory holding the stack, or a page boundary at most GUARD_MAX
 * below it (the guard pages are a mapping of their own): *base = a, *top =
 * a + n, returns 0. Else -1. The guard word rules out list.prev and tid, 0x3c8
 * bytes earlier in glibc 2.36: a pointer into the next thread's struct pthread
 * (whose stack lies below, in the same run) plus a thread id can land in the
 * window too (a review found 4 of 6 threads with 16 KiB stacks cut short). */
static int tcb_stackblock(const struct cp_image *img, uint64_t lo, uint64_t below, uint64_t tp,
			  uint64_t *base, uint64_t *top)
{
	uint64_t w[3];

	for (unsigned k = 0; k < 2; k++)
		if (cp_image_read_word(img, tp + 8 * k, &w[k]) < 0)
			return -1;
	for (uint64_t o = 0; o + 24 <= STACKBLOCK_SEARCH; o += 8) {
		uint64_t a = w[0], n = w[1], g, e;

		if (cp_image_read_word(img, tp + o + 16, &w[2]) < 0)
			return -1;
		g = w[2];
		e = a + n;
		if (a <= below && (a >= lo || (a % 4096 == 0 && lo - a <= GUARD_MAX)) && n >= 16384 &&
		    g % 4096 == 0 && g < n && e > a && e >= tp + o + 24 && e - tp <= STACKBLOCK_SEARCH) {
			*base = a;
			*top = e;
			return 0;
		}
		w[0] = w[1];
		w[1] = w[2];
	}
	return -1;
}

/* Bytes of the red zone below stack pointer sp (x86-64's 128, else none), none
 * when sp is less than that above lo. */
static uint64_t red_zone(const struct cp_image *img, uint64_t sp, uint64_t lo)
{
	return img->machine == EM_X86_64 && sp - lo >= X86_64_RED_ZONE ? X86_64_RED_ZONE : 0;
}

/* The lowest stack pointer of another thread in (sp, hi), or hi. */
static uint64_t next_sp(const struct cp_image *img, size_t t, uint64_t hi)
{
	uint64_t sp = img->threads[t].sp, best = hi;

	for (size_t o = 0; o < img->nthreads; o++)
		if (o != t && img->threads[o].sp > sp && img->threads[o].sp < best)
			best = img->threads[o].sp;
	return best;
}

/* Thread t's own stack mapping inside [lo, hi), the memory holding its stack
 * pointer: the top from its TCB (its fs_base, or for a thread of libheapann's
 * snapshot, the lowest TCB above its stack pointer), the base too when struct
 * pthread gives it (else *base = 0). The top lies above the stack pointer and
 * at or below cap. Returns 0, or -1 when the top is not known. */
static int own_stack(const struct cp_image *img, size_t t, uint64_t lo, uint64_t cap, uint64_t *base,
		     uint64_t *top)
{
	const struct cp_thread *th = &img->threads[t];
	uint64_t tp;

	*base = 0;
	if (img->machine != EM_X86_64 || th->nregs <= X86_64_FS_BASE)
		return -1;
	if (th->regs[X86_64_FS_BASE])
		tp = th->regs[X86_64_FS_BASE];
	else if (!an_regs_partial(img, t) || img->kind != CP_KIND_CORE || tcb_above(img, th->sp, cap, &tp) < 0)
		return -1;
	if (tp <= th->sp || tp >= cap)
		return -1;
	if (tcb_stackblock(img, lo, th->sp, tp, base, top) < 0 || *top > cap) {
		/* struct pthread and the TLS slack stay in the page of tp */
		*base = 0;
		*top = round_up_sat(tp + 1, 4096);
		if (*top > cap)
			return -1;
	}
	if (*base < lo)
		*base = 0;
	return 0;
}

/* ---- finished threads' stacks ----
 * glibc keeps the stack of a thread that has returned (joined, detached, or
 * not yet joined) for reuse, struct pthread and the static TLS at its top. The
 * core has no thread there, so the dead thread's last stack pointer is not in
 * it; memcheck stops reading a stack below its stack pointer as it moves, so it
 * reads such a stack from where the thread left it: start_thread's frame. */

/* How far below the jmp_buf that start_thread's setjmp filled its stack
 * pointer may be (the jmp_buf lies in start_thread's frame, at its sp or
 * above). */
#define START_FRAME_MAX 4096u
/* x86-64 __jmp_buf: rbx, rbp, r12-r15, rsp, pc; rsp and pc mangled */
#define JB_RSP 6
#define JB_PC 7

/* glibc's PTR_DEMANGLE on x86-64: rotate right by 17, xor the pointer guard. */
static uint64_t ptr_demangle(uint64_t v, uint64_t pguard)
{
	return ((v >> 17) | (v << 47)) ^ pguard;
}

/* The offset from the thread pointer of struct pthread's tid, a 32-bit word
 * the kernel clears when the thread exits (CLONE_CHILD_CLEARTID): the first
 * 32-bit word past tcbhead_t's guards holding the thread's tid, the same for each
 * thread whose fs_base the core has (at least one; the first 4 are looked at).
 * 0, or -1. */
static int tcb_tid_offset(const struct cp_image *img, uint64_t *off)
{
	int found = 0;

	for (size_t t = 0; t < img->nthreads && found < 4; t++) {
		const struct cp_thread *th = &img->threads[t];
		uint64_t fs = th->nregs > X86_64_FS_BASE ? th->regs[X86_64_FS_BASE] : 0, w, o;

		if (!fs || th->tid <= 0)
			continue;
		for (o = TCB_POINTER_GUARD + 8; o < STACKBLOCK_SEARCH; o += 4) {
			if (cp_image_read_word(img, fs + (o & ~(uint64_t)7), &w) < 0)
				return -1;
			if ((uint32_t)(o & 4 ? w >> 32 : w) == (uint32_t)th->tid)
				break;
		}
		if (o >= STACKBLOCK_SEARCH || (found && o != *off))
			return -1;
		*off = o;
		found++;
	}
	return found ? 0 : -1;
}

/* Where the live part of a finished thread's stack starts in the writable
 * memory [lo, hi) (16 KiB at least) that no thread's stack pointer lies in, nor
 * a stack hint of libheapann's (a running thread's): glibc's TCB at its
 * top (tcb_below) whose tid reads 0 or less (the kernel clears it when the
 * thread exits, pthread_join sets -1; a live thread whose stack pointer is
 * elsewhere, on a sigaltstack, keeps its tid), and in its
 * struct pthread the pointer to start_thread's unwind buffer
 * (cleanup_jmp_buf): an address in [lo, tp) whose jmp_buf's demangled stack
 * pointer lies at most START_FRAME_MAX below it and whose demangled pc lies
 * in a file mapping (libc). The thread's last stack pointer was start_thread's;
 * less the red zone, as for live threads. *live = that, *base = the start of
 * the thread's stack (struct pthread's stackblock, else lo); 0. -1 when this
 * is no finished thread's stack (or not on x86-64). The guards and the tid's
 * offset are looked for once, kept in out. */
static int finished_stack_live(const struct cp_image *img, struct an_roots *out, uint64_t lo, uint64_t hi,
			       uint64_t *live, uint64_t *base)
{
	uint64_t sguard, pguard, tp, off, w, rsp, pc, top;

	if (img->machine != EM_X86_64 || img->kind != CP_KIND_CORE || img->wsize != 8 || hi - lo < 16384)
		return -1;
	if (out->tcb_state == 0) {
		out->tcb_state = -1;
		if (tcb_guards(img, &sguard, &out->tcb_pguard) == 0 && tcb_tid_offset(img, &out->tcb_tid_off) == 0)
			out->tcb_state = 1;
	}
	if (out->tcb_state < 0 || tcb_below(img, lo, hi, &tp) < 0)
		return -1;
	pguard = out->tcb_pguard;
	off = out->tcb_tid_off;
	if (cp_image_read_word(img, tp + (off & ~(uint64_t)7), &w) < 0 ||
	    (int32_t)(uint32_t)(off & 4 ? w >> 32 : w) > 0)
		return -1;
	/* a thread libheapann's snapshot names running (its thread pointer) */
	for (size_t h = 0; h < img->nstack_hints; h++)
		if (img->stack_hints[h] >= lo && img->stack_hints[h] < hi && img->stack_hints[h] >= tp &&
		    img->stack_hints[h] - tp < STACKBLOCK_SEARCH)
			return -1;
	for (uint64_t o = 0; o < STACKBLOCK_SEARCH && tp + o + 8 <= hi; o += 8) {
		if (cp_image_read_word(img, tp + o, &w) < 0)
			return -1;
		if (w % 8 || w < lo || w >= tp || tp - w < 8 * (JB_PC + 1) ||
		    cp_image_read_word(img, w + 8 * JB_RSP, &rsp) < 0 ||
		    cp_image_read_word(img, w + 8 * JB_PC, &pc) < 0)
			continue;
		rsp = ptr_demangle(rsp, pguard);
		pc = ptr_demangle(pc, pguard);
		if (rsp % 8 || rsp < lo || rsp > w || w - rsp > START_FRAME_MAX || !cp_image_mapping(img, pc))
			continue;
		*live = rsp - red_zone(img, rsp, lo);
		if (tcb_stackblock(img, lo, rsp, tp, base, &top) < 0 || *base < lo || *base > *live)
			*base = lo;
		return 0;
	}
	return -1;
}

/* The most finished threads' stacks one writable range is searched for. */
#define FINISHED_MAX 64u

/* Add [lo, hi), writable memory without heap nor a live thread's stack, as
 * AN_ROOT_ANON roots less the dead part of each finished thread's stack in
 * it (out->finished), found walking down from hi: a finished stack's TCB in
 * the last bytes below the current top, then the same below its base (stacks
 * with no guard between them are one mapping). run_lo, run_hi: the whole run
 * of segments holding [lo, hi), where the walk looks. Returns 0, or -1 out of
 * memory. */
static int anon_roots_add(const struct cp_image *img, struct an_roots *out, uint64_t lo, uint64_t hi,
			  uint64_t run_lo, uint64_t run_hi)
{
	struct an_range dead[FINISHED_MAX];
	size_t nd = 0;
	uint64_t top = run_hi, cur = lo, live, base;

	while (top > run_lo && nd < FINISHED_MAX && finished_stack_live(img, out, run_lo, top, &live, &base) == 0) {
		dead[nd].start = base;
		dead[nd].end = live < top ? live : top;
		dead[nd].kind = 0;
		nd++;
		if (base >= top)
			break;
		top = base;
	}
	/* dead[] is in descending order: walk it up */
	for (size_t k = nd; k-- > 0;) {
		uint64_t a = dead[k].start > lo ? dead[k].start : lo, b = dead[k].end < hi ? dead[k].end : hi;
		struct an_root r = { cur, a, AN_ROOT_ANON, -1, NULL, 0 };

		if (b <= a)
			continue;
		if (r.end > r.start && an_roots_add(out, &r) < 0)
			return -1;
		{
			struct an_range *v = grow_array(out->finished, &out->finished_cap, out->nfinished,
							sizeof(*v), 4);

			if (!v)
				return -1;
			out->finished = v;
			out->finished[out->nfinished].start = a;
			out->finished[out->nfinished].end = b;
			out->finished[out->nfinished].kind = 0;
			out->nfinished++;
		}
		cur = b;
	}
	if (hi > cur) {
		struct an_root r = { cur, hi, AN_ROOT_ANON, -1, NULL, 0 };

		if (an_roots_add(out, &r) < 0)
			return -1;
	}
	return 0;
}

int an_stack_span(const struct cp_image *img, size_t t, uint64_t lo, uint64_t hi, struct an_stack_span *out)
{
	const struct cp_thread *th;
	uint64_t nsp, base, top, psp = 0;
	size_t prev = SIZE_MAX;

	if (t >= img->nthreads || img->threads[t].sp < lo || img->threads[t].sp >= hi)
		return -1;
	th = &img->threads[t];
	/* the live part ends at the thread's own top, else where the next
	 * thread's (its red zone included) starts, else at hi */
	nsp = next_sp(img, t, hi);
	out->end = nsp < hi ? nsp - red_zone(img, nsp, th->sp) : hi;
	if (own_stack(img, t, lo, out->end, &base, &top) == 0)
		out->end = top;
	else
		base = 0;
	/* the dead part starts at the thread's own base, else where the thread
	 * below ends: at its own top, else at this one's live part */
	for (size_t o = 0; o < img->nthreads; o++)
		if (o != t && img->threads[o].sp >= lo && img->threads[o].sp < th->sp &&
		    img->threads[o].sp >= psp) {
			psp = img->threads[o].sp;
			prev = o;
		}
	out->live = th->sp - red_zone(img, th->sp, prev != SIZE_MAX ? psp : lo);
	out->dead = lo;
	if (prev != SIZE_MAX) {
		uint64_t pb, pt;

		out->dead = out->live;
		if (own_stack(img, prev, lo, out->live, &pb, &pt) == 0)
			out->dead = pt;
	}
	if (base > out->dead && base <= out->live)
		out->dead = base;
	if (out->live < out->dead)
		out->live = out->dead;
	return 0;
}

int an_thread_pointer(const struct cp_image *img, size_t t, uint64_t *tp)
{
	const struct cp_thread *th;

	if (img->machine != EM_X86_64 || t >= img->nthreads)
		return -1;
	th = &img->threads[t];
	if (th->nregs <= X86_64_FS_BASE)
		return -1;
	if (!th->regs[X86_64_FS_BASE]) {
		const struct cp_segment *sg = cp_image_segment(img, th->sp);
		uint64_t end, nsp;

		if (!an_regs_partial(img, t) || img->kind != CP_KIND_CORE || !sg)
			return -1;
		/* stacks with no guard between them share the segment: the
		 * thread's own TCB lies below the next one's stack pointer; and
		 * another mapping merged above the stack puts it further down
		 * than the end's TCB_SEARCH bytes */
		end = sg->vaddr + sg->memsz;
		nsp = next_sp(img, t, end);
		if (nsp < end)
			return tcb_above(img, th->sp, nsp, tp);
		return tcb_below(img, th->sp, end, tp) == 0 ? 0 : tcb_above(img, th->sp, end, tp);
	}
	*tp = th->regs[X86_64_FS_BASE];
	return 0;
}

int an_regs_partial(const struct cp_image *img, size_t t)
{
	static const unsigned callee_saved[] = { 0, 1, 2, 3, 4, 5 };   /* r15 .. rbx */
	const struct cp_thread *th;

	if (img->machine != EM_X86_64 || t >= img->nthreads)
		return 0;
	th = &img->threads[t];
	if (th->nregs <= X86_64_FS_BASE || th->regs[X86_64_FS_BASE])
		return 0;
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++)
		if (th->regs[callee_saved[i]])
			return 0;
	return 1;
}

/* The first address at or after a whose byte the image holds, or UINT64_MAX when
 * there is none. A walk over a range jumps with it over what the file does not
 * hold, so its steps are bounded by the dumped bytes and the segment count, never
 * by what a segment claims (p_memsz may be anything in a damaged core). */
static uint64_t dumped_from(const struct cp_image *img, uint64_t a)
{
	size_t lo = 0, hi = img->nsegs;

	/* the first segment whose dumped part ends after a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->segs[mid].vaddr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && a - img->segs[lo - 1].vaddr < img->segs[lo - 1].avail)
		return a;
	for (; lo < img->nsegs; lo++)
		if (img->segs[lo].avail)
			return img->segs[lo].vaddr;
	return UINT64_MAX;
}

/* If the image holds a valid statistics-region header at address a (a page
 * start), exclude the region from out's roots. Returns 1 when excluded (*end: the region's end), 0 when a holds none, -1 out
 * of memory. */
static int stats_try(const struct cp_image *img, struct an_roots *out, uint64_t a, uint64_t *end)
{
	unsigned w = img->wsize;
	uint64_t m0 = w == 8 ? HEAPANN_STATS_MAGIC0_64 : HEAPANN_STATS_MAGIC0_32;
	uint64_t m1 = w == 8 ? HEAPANN_STATS_MAGIC1_64 : HEAPANN_STATS_MAGIC1_32;
	const unsigned char *p = cp_image_ptr(img, a, (uint64_t)HEAPANN_STATS_HDR_WORDS * w);
	uint64_t h[HEAPANN_STATS_HDR_WORDS];

	if (!p || cp_image_word(img, p) != m0 || cp_image_word(img, p + w) != m1)
		return 0;
	for (unsigned k = 0; k < HEAPANN_STATS_HDR_WORDS; k++)
		h[k] = cp_image_word(img, p + (size_t)k * w);
	if (!heapann_stats_version_ok(h[HEAPANN_SH_VERSION]) || !h[HEAPANN_SH_TOTAL] ||
	    h[HEAPANN_SH_CHECK] != heapann_stats_check(a, h[HEAPANN_SH_TOTAL], h[HEAPANN_SH_STACK_DEPTH],
						       h[HEAPANN_SH_STACK_CAP], h[HEAPANN_SH_TL_CAP],
						       h[HEAPANN_SH_VERSION], w))
		return 0;
	*end = h[HEAPANN_SH_TOTAL] > UINT64_MAX - a ? UINT64_MAX : a + h[HEAPANN_SH_TOTAL];
	return an_roots_exclude(out, a, *end) < 0 ? -1 : 1;
}

/* libheapann's statistics region starts a page (R) with its two magic words and
 * a header whose check word ties it to R: exclude [R, R + TOTAL) from the roots.
 * It holds no heap pointers, but it is never a root (and can be large). With the
 * scan's signatures only those addresses are looked at: a walk reading the first
 * word of every dumped page faulted in a page per 4 KiB of the roots (4.4 GB
 * resident for a 4 GiB MAP_NORESERVE mapping dumped as holes). */
int an_roots_exclude_stats(const struct cp_image *img, const struct cp_scan *scan,
			   struct an_roots *out)
{
	unsigned w = img->wsize;
	size_t nroots = out->n;

	for (size_t i = 0; i < nroots; i++) {
		const struct an_root *r = &out->v[i];
		uint64_t a, next, end;
		int rc;

		if (r->kind == AN_ROOT_REGS || r->kind == AN_ROOT_STACK)
			continue;
		if (scan && scan->sigs) {
			/* ascending: the first at or after the range's start */
			size_t lo = 0, hi = scan->nsigs;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (scan->sigs[mid] < r->start)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < scan->nsigs && scan->sigs[lo] < r->end; lo++) {
				a = scan->sigs[lo];
				if ((a & 4095) || r->end - a < (uint64_t)HEAPANN_STATS_HDR_WORDS * w)
					continue;
				if (stats_try(img, out, a, &end) < 0)
					return -1;
			}
			continue;
		}
		for (a = round_up_sat(r->start, 4096);
		     a < r->end && r->end - a >= (uint64_t)HEAPANN_STATS_HDR_WORDS * w; a = next) {
			uint64_t d = dumped_from(img, a);

			if (d != a) {   /* not in the file: on to the next dumped page */
				if (d == UINT64_MAX)
					break;
				next = round_up_sat(d, 4096);
				continue;
			}
			next = round_up_sat(a + 1, 4096);
			if ((rc = stats_try(img, out, a, &end)) < 0)
				return -1;
			if (rc)
				next = round_up_sat(end, 4096);   /* on after the region */
		}
	}
	return 0;
}

/* A scan whose lead_max is larger (a damaged header's pad) is walked block by
 * block in an_roots_find. */
#define HEAP_LEAD_MAX (1u << 20)

/* ---- mappings holding only glibc's mmapped chunks ---- */

#define GLIBC_IS_MMAPPED 2u
#define PAGE_MIN 4096u

/* 1 when segment i is a module's: file-backed (mark bit 8), or the anonymous
 * segment right after a file-backed one (its bss), as the writable segments'
 * pass of an_roots_find reads them. */
static int module_data(const struct cp_image *img, const unsigned char *mark, size_t i)
{
	return (mark[i] & 8) || (i > 0 && (mark[i - 1] & 8) &&
				 img->segs[i - 1].vaddr + img->segs[i - 1].memsz == img->segs[i].vaddr);
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct an_stack_span *a = pa, *b = pb;

	return a->dead < b->dead ? -1 : a->dead > b->dead;
}

/* Add as AN_ROOT_ANON roots the parts of [lo, hi), memory that holds threads'
 * stacks and no heap, outside every one of those threads' spans
 * (an_stack_span): another mapping of the program's that the kernel merged
 * with theirs, or finished threads' stacks (anon_roots_add: from their last
 * stack pointers). Below the lowest stack pointer's dead part, that is only what
 * lies under the base of its thread's own stack, when struct pthread gives it.
 * Returns 0, or -1 out of memory. */
static int stack_run_gaps(const struct cp_image *img, struct an_roots *out, uint64_t lo, uint64_t hi)
{
	struct an_stack_span *v = malloc((img->nthreads + 1) * sizeof(*v));
	uint64_t cur = lo;
	size_t n = 0;
	int rc = 0;

	if (!v)
		return -1;
	for (size_t t = 0; t < img->nthreads; t++)
		if (an_stack_span(img, t, lo, hi, &v[n]) == 0)
			n++;
	qsort(v, n, sizeof(*v), span_cmp);
	for (size_t k = 0; k <= n && rc == 0; k++) {
		uint64_t g = k < n ? v[k].dead : hi;

		/* a finished thread's stack there: from its last stack pointer */
		if (g > cur)
			rc = anon_roots_add(img, out, cur, g, cur, g);
		if (k < n && v[k].end > cur)
			cur = v[k].end;
	}
	free(v);
	return rc;
}

/* One piece [start, end) of an mmapped-only segment outside the chunks. With
 * out, added as an AN_ROOT_ANON root, but when a thread's stack pointer lies
 * in it only what no thread's span covers (stack_run_gaps: an_roots_find reads
 * the spans as the threads' stacks; below a stack pointer is the dead part of
 * a stack the kernel merged into the mapping, a thread's made without
 * MAP_STACK). Without out, *plo and *phi are set to the
 * piece when addr lies in it. Returns 0, or -1 out of memory. */
static int mmapped_piece(const struct cp_image *img, struct an_roots *out, uint64_t start, uint64_t end,
			 uint64_t addr, uint64_t *plo, uint64_t *phi)
{
	struct an_root r = { start, end, AN_ROOT_ANON, -1, NULL, 0 };

	if (start >= end)
		return 0;
	if (!out) {
		if (addr >= start && addr < end) {
			*plo = start;
			*phi = end;
		}
		return 0;
	}
	for (size_t t = 0; t < img->nthreads; t++)
		if (img->threads[t].sp >= start && img->threads[t].sp < end)
			return stack_run_gaps(img, out, start, end);
	return an_roots_add(out, &r);
}

/* Segment i holds blocks, but when every one of them is a live block in a chunk
 * glibc mmapped for it alone (a large block: size word IS_MMAPPED, the mapping
 * [chunk - prev_size, chunk + size) page-aligned and inside the segment) and
 * nothing else of the heap is there (no freed block, no damaged header), the
 * rest of the segment is not heap: the kernel merged the chunks' mappings with
 * an anonymous mapping of the program's own beside them (pymalloc's arenas, a
 * thread's stack mapped without MAP_STACK). With out, add the parts of the
 * segment outside those mappings as AN_ROOT_ANON roots (but those holding a
 * thread's stack pointer: see mmapped_piece) and return 1; without, return 1
 * and set *plo and *phi to the part holding addr ([0, 0) when addr lies in a
 * chunk). Return 0 (nothing added) when the segment is a heap of another kind,
 * or -1 out of memory. */
static int mmapped_only_roots(const struct cp_image *img, const struct cp_scan *scan, size_t i,
			      struct an_roots *out, uint64_t addr, uint64_t *plo, uint64_t *phi)
{
	const struct cp_segment *sg = &img->segs[i];
	uint64_t v = sg->vaddr, e = v + sg->memsz, cur = v, w = img->wsize;
	size_t k = cp_scan_lower(scan, v), n0 = out ? out->n : 0, nchunks = 0;

	if (plo)
		*plo = *phi = 0;
	if (e < v || (k > 0 && cp_block_end(&scan->blocks[k - 1]) > v))
		return 0;
	for (size_t d = 0; d < scan->ndamaged; d++)
		if (scan->damaged[d].hdr >= v && scan->damaged[d].hdr < e)
			return 0;
	for (; k < scan->nblocks && scan->blocks[k].user < e; k++) {
		const struct cp_block *b = &scan->blocks[k];
		uint64_t raw = cp_block_start(b), c = raw - 2 * w, size, prev, lo, hi;

		if (b->state != CP_LIVE || raw < v + 2 * w || cp_image_read_word(img, raw - w, &size) < 0 ||
		    cp_image_read_word(img, c, &prev) < 0 || !(size & GLIBC_IS_MMAPPED))
			goto heap;
		size &= ~(uint64_t)7;
		lo = c - prev;
		hi = c + size;
		if (prev > c || lo < cur || hi < c || hi > e || cp_block_end(b) > hi ||
		    (lo | hi) % PAGE_MIN)
			goto heap;
		if (mmapped_piece(img, out, cur, lo, addr, plo, phi) < 0)
			return -1;
		cur = hi;
		nchunks++;
	}
	if (!nchunks)
		goto heap;
	if (mmapped_piece(img, out, cur, e, addr, plo, phi) < 0)
		return -1;
	return 1;
heap:
	if (out)
		out->n = n0;   /* what was added for this segment goes again */
	if (plo)
		*plo = *phi = 0;
	return 0;
}

/* ---- ld.so's link maps outside blocks ---- */

#define LINKMAP_MAX 65536u     /* maps followed, over all namespaces */
#define LINKMAP_NS_MAX 16u     /* namespaces followed (r_next, glibc 2.35+) */
#define ELF_DT_DEBUG 21
#define ELF_AT_PHDR 3
#define ELF_AT_PHNUM 5

static uint64_t load_u32(const struct cp_image *img, const unsigned char *p)
{
	return img->big_endian ? (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3]
			       : (uint64_t)p[3] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[1] << 8 | p[0];
}

/* The address of ld.so's struct r_debug, from the DT_DEBUG entry of the main
 * program's dynamic section (found through AT_PHDR's PT_PHDR and PT_DYNAMIC),
 * or 0 when the core does not say (a static program, no auxv, not dumped). */
static uint64_t r_debug_addr(const struct cp_image *img)
{
	unsigned w = img->wsize, esz = w == 8 ? 56 : 32;
	uint64_t phdr = 0, phnum = 0, bias = 0, dyn = 0, dynsz = 0;
	int have_bias = 0;

	if (cp_image_auxv(img, ELF_AT_PHDR, &phdr) < 0 || cp_image_auxv(img, ELF_AT_PHNUM, &phnum) < 0 ||
	    !phnum || phnum > 4096)
		return 0;
	for (uint64_t i = 0; i < phnum; i++) {
		const unsigned char *p = cp_image_ptr(img, phdr + i * esz, esz);
		uint64_t type, vaddr, memsz;

		if (!p)
			return 0;
		type = load_u32(img, p);
		vaddr = cp_image_word(img, p + (w == 8 ? 16 : 8));
		memsz = cp_image_word(img, p + (w == 8 ? 40 : 20));
		if (type == PT_PHDR) {
			bias = phdr - vaddr;
			have_bias = 1;
		} else if (type == PT_DYNAMIC) {
			dyn = vaddr;
			dynsz = memsz;
		}
	}
	if (!have_bias || !dynsz)
		return 0;
	dyn += bias;
	for (uint64_t off = 0; off + 2 * w <= dynsz && off < (1u << 20); off += 2 * w) {
		uint64_t tag, val;

		if (cp_image_read_word(img, dyn + off, &tag) < 0 || tag == DT_NULL)
			return 0;
		if (tag == ELF_DT_DEBUG)
			return cp_image_read_word(img, dyn + off + w, &val) < 0 ? 0 : val;
	}
	return 0;
}

/* Add an AN_ROOT_LINKMAP root for each link_map of ld.so's lists (every
 * namespace) whose public words lie in a heap segment (mark bit 1) and in no
 * live block. Returns 0, or -1 out of memory. */
static int linkmap_roots(const struct cp_image *img, const struct cp_scan *scan,
			 const unsigned char *mark, struct an_roots *out)
{
	unsigned w = img->wsize;
	uint64_t rd = r_debug_addr(img), version, lm;
	unsigned steps = 0;
	uint64_t seen_rd[LINKMAP_NS_MAX], seen_head[LINKMAP_NS_MAX];

	if (!rd || cp_image_read_word(img, rd, &version) < 0)
		return 0;
	/* r_version is an int: the high half of a big-endian 64-bit word */
	version = img->big_endian && w == 8 ? version >> 32 : version & 0xffffffffu;
	for (unsigned ns = 0; rd && ns < LINKMAP_NS_MAX; ns++) {
		uint64_t head;

		if (cp_image_read_word(img, rd + w, &lm) < 0)
			break;
		/* a corrupt r_next cycle, or two namespaces sharing a list */
		for (unsigned k = 0; k < ns; k++)
			if (seen_rd[k] == rd || (lm && seen_head[k] == lm))
				return 0;
		seen_rd[ns] = rd;
		seen_head[ns] = head = lm;
		for (; lm && steps < LINKMAP_MAX; steps++) {
			long s = seg_index(img, lm);
			uint64_t end = lm + 5 * (uint64_t)w, next, prev;
			const struct cp_block *b = block_at(scan, lm);
			const struct cp_block *e = block_at(scan, end - 1);

			if (s >= 0 && (mark[s] & 1) && end > lm &&
			    !(b && b->state == CP_LIVE) && !(e && e->state == CP_LIVE)) {
				struct an_root r = { lm, end, AN_ROOT_LINKMAP, -1, NULL, 1 };

				if (an_roots_add(out, &r) < 0)
					return -1;
			}
			/* a corrupt list: the next map's l_prev is not this one (an
			 * l_next to itself), or the list comes back to its head (the
			 * only repeat possible when every l_prev agrees) */
			if (cp_image_read_word(img, lm + 3 * (uint64_t)w, &next) < 0 || next == head ||
			    (next && (cp_image_read_word(img, next + 4 * (uint64_t)w, &prev) < 0 || prev != lm)))
				break;
			lm = next;
		}
		/* glibc 2.35+: r_version 2, r_next after r_ldbase links the other
		 * namespaces' r_debug */
		if (version < 2 || cp_image_read_word(img, rd + 5 * (uint64_t)w, &rd) < 0)
			break;
	}
	return 0;
}

int an_roots_find(const struct cp_image *img, const struct cp_scan *scan, struct an_roots *out)
{
	/* per segment: 1 heap, 2 stack, 4 TLS (taken), 8 file-backed, 16 a
	 * module's data or bss holding a stack (read whole as module data) */
	unsigned char *mark = NULL;
	uint64_t *heap_first = NULL;   /* per segment: lowest block memory in it */
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (img->nsegs == 0)
		return 0;
	mark = calloc(img->nsegs, 1);
	heap_first = malloc(img->nsegs * sizeof(*heap_first));
	if (!mark || !heap_first)
		goto out;
	for (size_t i = 0; i < img->nsegs; i++) {
		heap_first[i] = UINT64_MAX;
		if (cp_image_mapping(img, img->segs[i].vaddr))
			mark[i] |= 8;
	}
	/* heap: segments holding any block, live or freed, or a damaged header */
	if (scan->lead_max && scan->lead_max <= HEAP_LEAD_MAX) {
		/* per segment [v, e): a block whose memory starts there has its user
		 * address at v or after, and one at u >= x + lead_max starts at x or
		 * after: a binary search and a few blocks, not a pass over all of
		 * them (0.5 GB at 10M blocks, issue 15) */
		for (size_t i = 0; i < img->nsegs; i++) {
			uint64_t v = img->segs[i].vaddr, len = img->segs[i].memsz;
			uint64_t e = v + len < v ? UINT64_MAX : v + len;

			for (size_t k = cp_scan_lower(scan, v); k < scan->nblocks; k++) {
				uint64_t u = scan->blocks[k].user, a;
				uint64_t bound = heap_first[i] != UINT64_MAX ? heap_first[i] : e;

				if (u >= scan->lead_max && u - scan->lead_max >= bound)
					break;
				a = cp_block_start(&scan->blocks[k]);
				if (a >= v && a - v < len && a < heap_first[i]) {
					heap_first[i] = a;
					mark[i] |= 1;
				}
			}
		}
	} else {
		long cur = -1;
		uint64_t cur_end = 0, cur_start = 1;

		for (size_t k = 0; k < scan->nblocks; k++) {
			uint64_t a = cp_block_start(&scan->blocks[k]);

			if (cur < 0 || a < cur_start || a >= cur_end) {
				cur = seg_index(img, a);
				if (cur < 0)
					continue;
				cur_start = img->segs[cur].vaddr;
				cur_end = cur_start + img->segs[cur].memsz;
			}
			mark[cur] |= 1;
			if (a < heap_first[cur])
				heap_first[cur] = a;
		}
	}
	for (size_t k = 0; k < scan->ndamaged; k++) {
		long s = seg_index(img, scan->damaged[k].hdr);

		/* on a thread's stack it is a copy (a signal frame, a spill), not
		 * a heap header, as the corruption report says: still a stack */
		for (size_t t = 0; s >= 0 && t < img->nthreads; t++)
			if (seg_index(img, img->threads[t].sp) == s)
				s = -1;
		if (s >= 0) {
			mark[s] |= 1;
			if (scan->damaged[k].hdr < heap_first[s])
				heap_first[s] = scan->damaged[k].hdr;
		}
	}
	/* stacks and registers */
	for (size_t t = 0; t < img->nthreads; t++) {
		const struct cp_thread *th = &img->threads[t];
		struct an_root r = { 0, 0, AN_ROOT_REGS, (int32_t)t, NULL, 0 };
		struct an_stack_span sp;
		long s = seg_index(img, th->sp);
		uint64_t lo, hi;

		if (th->nregs && an_roots_add(out, &r) < 0)
			goto out;
		if (s < 0)
			continue;
		r.kind = AN_ROOT_STACK;
		r.start = th->sp;
		if (mark[s] & 1) {
			/* running on a heap-allocated stack: to the end of that block */
			const struct cp_block *b = block_at(scan, th->sp);

			if (b && (b->state != CP_LIVE || th->sp < b->user))
				continue;
			if (b) {
				r.end = b->user + b->size;
				r.in_block = 1;
			} else if (!img->nfiles && !img->nauxv) {
				/* in no block of a board's core (neither NT_FILE nor
				 * NT_AUXV: qemu-system's): a firmware's RAM in one
				 * segment, heap below and the stack above it */
				r.end = stack_end_before_heap(img, scan, (size_t)s, th->sp);
			} else if (!cp_image_mapping(img, img->segs[s].vaddr) && (img->segs[s].flags & PF_W) &&
				   mmapped_only_roots(img, scan, (size_t)s, NULL, th->sp, &lo, &hi) == 1 && hi) {
				/* a stack the kernel merged with glibc's mmapped chunks
				 * (mapped without MAP_STACK): from sp (and the red zone)
				 * to the end of its part outside the chunks, which the
				 * writable segments' pass leaves to this root (less the
				 * stacks of threads above it there) */
				if (an_stack_span(img, t, lo, hi, &sp) < 0)
					continue;
				r.start = sp.live;
				r.end = sp.end;
			} else {
				/* a process's sp in a heap segment outside any block:
				 * reading up to the next block as roots could hide leaks */
				continue;
			}
		} else {
			size_t a, z;
			uint64_t v, e;

			seg_run(img, mark, (size_t)s, &a, &z);
			v = img->segs[a].vaddr;
			e = img->segs[z].vaddr + img->segs[z].memsz;
			/* a stack in a module's data or bss (a static array given
			 * to pthread_attr_setstack, or a coroutine's): the
			 * writable segments' pass reads the module's segments
			 * whole, globals below the stack pointer too (they read
			 * definitely lost before); this root is the live part */
			if (module_data(img, mark, (size_t)s) || module_data(img, mark, a)) {
				for (size_t i = a; i <= z; i++)
					mark[i] |= 16;
			} else {
				/* the run's first thread adds what lies outside
				 * all of their stacks */
				if (!(mark[s] & 2) && (img->segs[a].flags & PF_W) &&
				    stack_run_gaps(img, out, v, e) < 0)
					goto out;
				for (size_t i = a; i <= z; i++)
					mark[i] |= 2;
			}
			/* from the red zone (x86-64's ABI lets a leaf function keep
			 * data in the 128 bytes below its stack pointer: read them
			 * too, as memcheck does, or a pointer held there looks lost)
			 * to the end of the thread's own mapping: stacks with no
			 * guard between them share a segment run, and the dead part
			 * of the one above is no root */
			if (an_stack_span(img, t, v, e, &sp) < 0)
				continue;
			r.start = sp.live;
			r.end = sp.end;
		}
		if (an_roots_add(out, &r) < 0)
			goto out;
	}
	/* TLS: glibc keeps the main thread's TCB and static TLS in an anonymous mapping
	 * at fs_base; other threads' sit at the top of their stack (read already). */
	if (img->machine == EM_X86_64) {
		for (size_t t = 0; t < img->nthreads; t++) {
			struct an_root r = { 0, 0, AN_ROOT_TLS, (int32_t)t, NULL, 0 };
			uint64_t tp = 0;
			size_t a, z;
			long s;

			if (an_thread_pointer(img, t, &tp) < 0)
				continue;
			s = seg_index(img, tp);
			if (s < 0 || (mark[s] & 23) || !(img->segs[s].flags & PF_W))
				continue;
			seg_run(img, mark, (size_t)s, &a, &z);
			for (size_t i = a; i <= z; i++)
				mark[i] |= 4;
			r.start = img->segs[a].vaddr;
			r.end = img->segs[z].vaddr + img->segs[z].memsz;
			if (an_roots_add(out, &r) < 0)
				goto out;
		}
	}
	/* writable segments: module data, bss right after a module, other mappings */
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct cp_segment *sg = &img->segs[i];
		const struct cp_mapping *m = NULL;
		struct an_root r = { sg->vaddr, sg->vaddr + sg->memsz, AN_ROOT_ANON, -1, NULL, 0 };

		if (!(sg->flags & PF_W) || (mark[i] & 6))
			continue;
		if (mark[i] & 8)
			m = cp_image_mapping(img, sg->vaddr);
		else if (i > 0 && (mark[i - 1] & 8) &&
			 img->segs[i - 1].vaddr + img->segs[i - 1].memsz == sg->vaddr)
			m = cp_image_mapping(img, sg->vaddr - 1);
		if (m) {
			r.kind = AN_ROOT_DATA;
			r.module = m->path;
		} else if (!(mark[i] & 1)) {
			/* finished threads' stacks: from their last stack pointers */
			size_t a, z;

			seg_run(img, mark, i, &a, &z);
			if (anon_roots_add(img, out, r.start, r.end, img->segs[a].vaddr,
					   img->segs[z].vaddr + img->segs[z].memsz) < 0)
				goto out;
			continue;
		}
		if (mark[i] & 1) {
			/* large blocks' own mappings merged with an anonymous one */
			if (!m) {
				if (mmapped_only_roots(img, scan, i, out, 0, NULL, NULL) < 0)
					goto out;
				continue;
			}
			/* a heap merged with the bss before it: only the part before the heap */
			if (heap_first[i] <= sg->vaddr)
				continue;
			r.end = heap_first[i];
		}
		if (an_roots_add(out, &r) < 0)
			goto out;
	}
	/* a finished thread's stack in a live block (pthread_attr_setstack on
	 * heap memory): its dead part is no reference, neither as the block's
	 * words (memcheck made it inaccessible as the stack pointer rose) */
	for (size_t k = 0; k < scan->nblocks; k++) {
		const struct cp_block *b = &scan->blocks[k];
		uint64_t live, base;

		if (b->state == CP_LIVE && b->size >= 16384 && b->user + b->size > b->user &&
		    finished_stack_live(img, out, b->user, b->user + b->size, &live, &base) == 0 && live > base &&
		    roots_exclude(out, base, live, AN_EXCLUDE_FINISHED) < 0)
			goto out;
	}
	if (linkmap_roots(img, scan, mark, out) < 0)
		goto out;
	if (an_roots_exclude_stats(img, scan, out) < 0)
		goto out;
	rc = 0;
out:
	free(mark);
	free(heap_first);
	if (rc < 0)
		an_roots_release(out);
	return rc;
}

/* ---- the index of live blocks ---- */

/* Live blocks in address order fall into regions (runs with gaps under
 * REGION_GAP); each region has one bucket per 2^shift bytes holding the index of
 * the first block that ends after the bucket's start. shift is chosen so that
 * there are about as many buckets as blocks: a lookup reads a bucket, then one to
 * three blocks. */
#define REGION_GAP (1u << 20)

struct region {
	uint64_t start, end;  /* first block's start, last block's end */
	uint32_t first;       /* index of the region's first block */
	uint32_t last;        /* index of its last block */
	uint32_t *bucket;     /* into li->buckets */
	size_t boff;          /* bucket - li->buckets */
};

struct live_index {
	const struct cp_block *blocks;  /* the scan's: a block's addresses are read there
				* (issue 15: a copy of them cost 16 bytes per live block,
				* 160 MB of fresh pages at 10M blocks) */
	uint32_t *idx;        /* scan index of each, ascending by user address */
	size_t n;
	uint64_t lo, span;    /* candidates: [lo, lo + span) */
	struct region *regions;
	size_t nregions;
	uint32_t *buckets;
	unsigned shift;
	uint64_t bytes;       /* requested bytes of the indexed blocks */
	const struct cp_scan *ptrs;  /* the scan when its ptr_words cover every live
				* block (no word outside them can point into one), else NULL */
	uint64_t *leaf;       /* bit k: reading live block k raises nothing (no word of
				* it may be an address, per ptrs): the mark never puts it
				* on its work list (issue 15: at 10M blocks of bench/core.sh,
				* 10M pushes, pops and passes over the blocks for nothing) */
};

static inline int live_leaf(const struct live_index *li, uint32_t k)
{
	return (int)(li->leaf[k / 64] >> (k % 64)) & 1;
}

/* Live block k's user data: [live_start, live_end) (one byte for size 0). */
static inline uint64_t live_start(const struct live_index *li, uint32_t k)
{
	return li->blocks[li->idx[k]].user;
}

static inline uint64_t live_end(const struct live_index *li, uint32_t k)
{
	const struct cp_block *b = &li->blocks[li->idx[k]];

	return b->user + (b->size ? b->size : 1);
}

static void live_index_release(struct live_index *li)
{
	free(li->idx);
	free(li->regions);
	free(li->buckets);
	free(li->leaf);
	memset(li, 0, sizeof(*li));
}

/* The segment of the blocks range_silent() looked at last, and where its
 * notes lie (cp_scan_ptr_base). */
struct seg_notes {
	const struct cp_segment *s;
	int noted;            /* base and from are valid */
	uint64_t base, from;
};

/* 1 when for_dumped_near() over [a, b) would call its function on nothing (the
 * same tests, cp_scan_may_point's with the segment's notes looked up once): a
 * range without a whole word, or one inside a segment's dumped bytes none of
 * whose words the scan saw hold an address. */
static inline __attribute__((always_inline)) int range_silent(const struct cp_image *img,
								 const struct cp_scan *ptrs,
								 struct seg_notes *c, uint64_t a,
								 uint64_t b)
{
	const struct cp_segment *s = c->s;
	unsigned w = img->wsize;
	uint64_t a2 = round_up_sat(a, w), len;

	if (a2 >= b)
		return 1;
	if (!s || a2 < s->vaddr || a2 - s->vaddr >= s->memsz) {
		s = cp_image_segment(img, a2);
		c->s = s;
		c->noted = s && cp_scan_ptr_base(ptrs, img, s, &c->base, &c->from) == 0;
	}
	if (!s || b - s->vaddr > s->avail || b - s->vaddr > s->memsz)
		return 0;
	len = (b - a2) & ~(uint64_t)(w - 1);
	if (!len)
		return 1;
	/* what cp_scan_may_point(ptrs, img, s, a2, a2 + len) says (w is 8 when
	 * noted, so a2 - from is a whole number of words) */
	if (!c->noted || a2 < c->from)
		return 0;
	return !cp_scan_ptr_any(ptrs, c->base + a2 / 8, len / 8);
}

/* The scan when its notes cover [lo, lo + span), else NULL. */
static const struct cp_scan *notes_cover(const struct cp_scan *scan, uint64_t lo, uint64_t span)
{
	if (scan->ptr_words && lo >= scan->ptr_lo && lo <= scan->ptr_hi && span &&
	    span - 1 <= scan->ptr_hi - lo)
		return scan;
	return NULL;
}

/* Append bucket value k (growing li->buckets). Returns 0, or -1 out of memory. */
static inline int bucket_push(struct live_index *li, size_t *nb, size_t *cap, uint32_t k)
{
	if (*nb == *cap) {
		uint32_t *v = grow_array(li->buckets, cap, *nb, sizeof(*v), 1024);

		if (!v)
			return -1;
		li->buckets = v;
	}
	li->buckets[(*nb)++] = k;
	return 0;
}

/* Index the live blocks of scan (see above), with their leaf bits when the scan's
 * notes cover them all (img: their segments). Returns 0, or -1 out of memory. */
static int live_index_build(const struct cp_image *img, const struct cp_scan *scan, struct live_index *li)
{
	size_t n = 0, nb = 0, cap = 0, bcap = 0;
	uint64_t spans = 0, prev_end = 0;
	unsigned shift_p = 0;               /* 0: the buckets in a second pass */
	const struct cp_scan *ptrs_p = NULL;
	struct seg_notes seg = { NULL, 0, 0, 0 };

	memset(li, 0, sizeof(*li));
	li->blocks = scan->blocks;
	li->idx = malloc((scan->nlive + 1) * sizeof(*li->idx));
	li->leaf = calloc(scan->nlive / 64 + 1, sizeof(*li->leaf));
	if (!li->idx || !li->leaf)
		goto fail;
	{
		/* The buckets and leaves in the same pass as the index (one read of
		 * the scan's blocks, 0.5 GB at 10M, not two: issue 15) when the bucket
		 * size can be told before: from the live blocks' bytes with their
		 * headers, which the regions' spans nearly always give too; and
		 * whether the notes cover them from the first and last live blocks.
		 * When either guess turns out wrong, the second pass below. */
		uint64_t est = scan->live_bytes + scan->live_overhead, lo_p, hi_p;
		size_t f = 0, l = scan->nblocks;

		while (f < l && scan->blocks[f].state != CP_LIVE)
			f++;
		while (l > f && scan->blocks[l - 1].state != CP_LIVE)
			l--;
		if (est && f < l) {
			lo_p = scan->blocks[f].user;
			hi_p = scan->blocks[l - 1].user + (scan->blocks[l - 1].size ? scan->blocks[l - 1].size : 1);
			shift_p = 4;
			while (shift_p < 40 && (est >> shift_p) > scan->nlive)
				shift_p++;
			if (hi_p > lo_p)
				ptrs_p = notes_cover(scan, lo_p, hi_p - lo_p);
			bcap = hi_p > lo_p ? ((hi_p - lo_p) >> shift_p) + 64 : 64;
			if (bcap > 2 * scan->nlive + 1024)
				bcap = 2 * scan->nlive + 1024;
			li->buckets = malloc(bcap * sizeof(*li->buckets));
			if (!li->buckets)
				goto fail;
		}
	}
	for (size_t i = 0; i < scan->nblocks; i++) {
		const struct cp_block *b = &scan->blocks[i];
		uint64_t end;
		struct region *rg;

		if (b->state != CP_LIVE || n >= scan->nlive)
			continue;
		end = b->user + (b->size ? b->size : 1);
		if (n && b->user < prev_end)
			continue;   /* overlaps the one before: not a real block */
		prev_end = end;
		li->bytes += b->size;
		li->idx[n] = (uint32_t)i;
		if (!li->nregions || b->user - li->regions[li->nregions - 1].end > REGION_GAP) {
			if (li->nregions == cap) {
				struct region *r = realloc(li->regions, (cap = cap ? cap * 2 : 16) * sizeof(*r));

				if (!r)
					goto fail;
				li->regions = r;
			}
			/* the region before: its buckets past its last block's end */
			for (rg = li->nregions ? &li->regions[li->nregions - 1] : NULL;
			     shift_p && rg && nb - rg->boff < ((rg->end - rg->start) >> shift_p) + 2;)
				if (bucket_push(li, &nb, &bcap, rg->last) < 0)
					goto fail;
			li->regions[li->nregions].start = b->user;
			li->regions[li->nregions].first = (uint32_t)n;
			li->regions[li->nregions].boff = nb;
			li->nregions++;
		}
		rg = &li->regions[li->nregions - 1];
		rg->end = end;
		rg->last = (uint32_t)n;
		if (shift_p) {
			/* the buckets that start before this block's end and have no
			 * block yet: this one is the first to end after their start */
			while (rg->start + ((uint64_t)(nb - rg->boff) << shift_p) < end)
				if (bucket_push(li, &nb, &bcap, (uint32_t)n) < 0)
					goto fail;
			if (ptrs_p && range_silent(img, ptrs_p, &seg, b->user, end))
				li->leaf[n / 64] |= 1ull << (n % 64);
			/* the final shift allows at most nlive + 2 buckets a region:
			 * past that the guess (from the live bytes, blind to the freed
			 * memory between them) is already wrong, and a sparse heap
			 * (an exit snapshot's few leaks) would push thousands of
			 * buckets a block: stop and take the second pass */
			if (nb > scan->nlive + 2 * li->nregions + 2) {
				shift_p = 0;
				free(li->buckets);
				li->buckets = NULL;
				nb = bcap = 0;
			}
		}
		n++;
	}
	li->n = n;
	if (!n)
		return 0;
	for (struct region *rg = &li->regions[li->nregions - 1];
	     shift_p && nb - rg->boff < ((rg->end - rg->start) >> shift_p) + 2;)
		if (bucket_push(li, &nb, &bcap, rg->last) < 0)
			goto fail;
	li->lo = live_start(li, 0);
	li->span = li->regions[li->nregions - 1].end - li->lo;
	/* a word can point into a live block only if its value lies in [li.lo,
	 * li.lo + li.span): the scan's notes say which words may, when that range
	 * is inside the one they were taken for */
	li->ptrs = notes_cover(scan, li->lo, li->span);
	for (size_t r = 0; r < li->nregions; r++)
		spans += li->regions[r].end - li->regions[r].start;
	li->shift = 4;
	while (li->shift < 40 && (spans >> li->shift) > n)
		li->shift++;
	if (shift_p && shift_p == li->shift && ptrs_p == li->ptrs) {
		for (size_t r = 0; r < li->nregions; r++)
			li->regions[r].bucket = li->buckets + li->regions[r].boff;
		return 0;
	}
	/* a guess was wrong: the buckets and leaves again, from the index */
	free(li->buckets);
	li->buckets = NULL;
	memset(li->leaf, 0, (scan->nlive / 64 + 1) * sizeof(*li->leaf));
	nb = 0;
	for (size_t r = 0; r < li->nregions; r++)
		nb += ((li->regions[r].end - li->regions[r].start) >> li->shift) + 2;
	li->buckets = malloc(nb * sizeof(*li->buckets));
	if (!li->buckets)
		goto fail;
	nb = 0;
	/* bucket bk holds the first block k of its region that ends after the
	 * bucket's start (ends rise: the blocks do not overlap), or the region's
	 * last; one pass over the blocks also notes which are leaves */
	for (size_t r = 0; r < li->nregions; r++) {
		struct region *rg = &li->regions[r];
		size_t nbk = ((rg->end - rg->start) >> li->shift) + 2, bk = 0;

		seg.s = NULL;
		rg->bucket = li->buckets + nb;
		for (uint32_t k = rg->first; k <= rg->last; k++) {
			const struct cp_block *b = &li->blocks[li->idx[k]];
			uint64_t end = b->user + (b->size ? b->size : 1);

			if (li->ptrs && range_silent(img, li->ptrs, &seg, b->user, end))
				li->leaf[k / 64] |= 1ull << (k % 64);
			if (k == rg->last)
				break;
			for (; bk < nbk && rg->start + ((uint64_t)bk << li->shift) < end; bk++)
				rg->bucket[bk] = k;
		}
		for (; bk < nbk; bk++)
			rg->bucket[bk] = rg->last;
		nb += nbk;
	}
	return 0;
fail:
	live_index_release(li);
	return -1;
}

/* The bucket of the region holding v (bucket[0] and bucket[1] bound the blocks
 * to look at), or NULL when no region holds v. */
static const uint32_t *bucket_of(const struct live_index *li, uint64_t v)
{
	size_t lo = 0, hi = li->nregions;
	const struct region *rg;

	if (v - li->lo >= li->span)
		return NULL;
	while (hi - lo > 1) {   /* last region starting at or before v */
		size_t mid = lo + (hi - lo) / 2;

		if (li->regions[mid].start <= v)
			lo = mid;
		else
			hi = mid;
	}
	rg = &li->regions[lo];
	if (v >= rg->end || v < rg->start)
		return NULL;
	return &rg->bucket[(v - rg->start) >> li->shift];
}

/* The block among live blocks a..z whose user data holds v, or -1: the block holding
 * v, if any, is the last one starting at or before v. */
static inline long live_pick(const struct live_index *li, uint64_t v, uint32_t a, uint32_t z)
{
	while (z - a > 4) {
		uint32_t mid = a + (z - a) / 2;

		if (live_start(li, mid) <= v)
			a = mid;
		else
			z = mid;
	}
	while (a < z && live_start(li, a + 1) <= v)
		a++;
	if (live_start(li, a) <= v && v < live_end(li, a))
		return (long)a;
	return -1;
}

/* The live block (index into li) whose user data holds v, or -1. */
static inline long live_find(const struct live_index *li, uint64_t v)
{
	const uint32_t *bp = bucket_of(li, v);

	return bp ? live_pick(li, v, bp[0], bp[1]) : -1;
}

/* live_find for n values at once (n <= FIND_BATCH), out[i] for vals[i]: the
 * same answers, with the random reads of the buckets and blocks issued together
 * so that their cache misses overlap (a pointer-dense heap is bound by them). */
#define FIND_BATCH 32

static void live_find_batch(const struct live_index *li, const uint64_t *vals, unsigned n, long *out)
{
	const uint32_t *bp[FIND_BATCH];
	uint32_t a[FIND_BATCH], z[FIND_BATCH];

	for (unsigned i = 0; i < n; i++) {
		bp[i] = bucket_of(li, vals[i]);
		if (bp[i])
			__builtin_prefetch(bp[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		if (!bp[i])
			continue;
		a[i] = bp[i][0];
		z[i] = bp[i][1];
		__builtin_prefetch(&li->idx[a[i]]);
	}
	for (unsigned i = 0; i < n; i++)
		if (bp[i])
			__builtin_prefetch(&li->blocks[li->idx[a[i]]]);
	for (unsigned i = 0; i < n; i++)
		out[i] = bp[i] ? live_pick(li, vals[i], a[i], z[i]) : -1;
}

/* ---- reading words ---- */

static inline uint64_t load_word(const unsigned char *p, unsigned w, int swap)
{
	if (w == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	} else {
		uint32_t v;

		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	}
}

static int host_big(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

/* Call fn for each dumped piece of [a, b): target address and bytes. Pieces start
 * at word-aligned addresses and hold whole words only. */
struct piece_fn {
	void (*fn)(void *arg, uint64_t addr, const unsigned char *p, uint64_t len);
	void *arg;
};

static void for_dumped(const struct cp_image *img, uint64_t a, uint64_t b, const struct piece_fn *f)
{
	unsigned w = img->wsize;

	a = round_up_sat(a, w);
	while (a < b) {
		const struct cp_segment *s = cp_image_segment(img, a);
		uint64_t stop, avail_end;

		if (!s) {
			/* skip to the next segment after a */
			size_t lo = 0, hi = img->nsegs;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (img->segs[mid].vaddr <= a)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo >= img->nsegs || img->segs[lo].vaddr >= b)
				return;
			a = round_up_sat(img->segs[lo].vaddr, w);
			continue;
		}
		stop = s->vaddr + s->memsz < b ? s->vaddr + s->memsz : b;
		avail_end = s->vaddr + s->avail < stop ? s->vaddr + s->avail : stop;
		if (avail_end > a) {
			uint64_t len = (avail_end - a) & ~(uint64_t)(w - 1);

			if (len)
				f->fn(f->arg, a, img->map + s->offset + (a - s->vaddr), len);
		}
		if (stop <= a)
			return;
		a = round_up_sat(stop, w);
	}
}

/* for_dumped() for [a, b) when the caller walks many short ranges mostly in
 * address order (the mark, block by block): the segment of the last range is
 * kept in *seg, and a range inside its dumped bytes is one call of fn, without
 * looking the segment up again. The same calls as for_dumped() (segments do
 * not overlap: cp_image refuses a core where they do), but for a range whose
 * words the scan saw hold no address (cp_scan_may_point): no word there can
 * point into a block, so it is not read at all (at 10M blocks of bench/core.sh,
 * a gigabyte of block data the mark read and faulted in again, issue 15). */
static inline void for_dumped_near(const struct cp_image *img, const struct cp_scan *scan,
				   const struct cp_segment **seg, uint64_t a, uint64_t b,
				   const struct piece_fn *f)
{
	const struct cp_segment *s = *seg;
	unsigned w = img->wsize;
	uint64_t a2 = round_up_sat(a, w);

	if (a2 >= b)
		return;
	if (!s || a2 < s->vaddr || a2 - s->vaddr >= s->memsz) {
		s = cp_image_segment(img, a2);
		*seg = s;
	}
	if (s && b - s->vaddr <= s->avail && b - s->vaddr <= s->memsz) {
		uint64_t len = (b - a2) & ~(uint64_t)(w - 1);

		if (len && cp_scan_may_point(scan, img, s, a2, a2 + len))
			f->fn(f->arg, a2, img->map + s->offset + (a2 - s->vaddr), len);
		return;
	}
	for_dumped(img, a, b, f);
}

/* For a walk from a upwards over the sorted excluded ranges (*e: the first one
 * that may still matter, advanced here): an excluded range holding a raises
 * *skip_to to its end; one starting later lowers *next to its start. */
static void exclude_clip(const struct an_roots *roots, size_t *e, uint64_t a,
			 uint64_t *skip_to, uint64_t *next)
{
	while (*e < roots->nexclude && roots->exclude[*e].end <= a)
		(*e)++;
	if (*e < roots->nexclude) {
		const struct an_range *x = &roots->exclude[*e];

		if (x->start <= a) {
			if (x->end > *skip_to)
				*skip_to = x->end;
		} else if (x->start < *next) {
			*next = x->start;
		}
	}
}

/* Call fn for the parts of root r in [a, b) that are neither block memory (unless
 * the root lies in a block) nor excluded. */
static void for_root_range(const struct cp_image *img, const struct cp_scan *scan,
			   const struct an_roots *roots, const struct an_root *r,
			   uint64_t a, uint64_t b, const struct piece_fn *f)
{
	size_t k = 0, e = 0;

	if (!r->in_block && scan->nblocks) {
		k = cp_scan_lower(scan, a);
		/* the block before may reach into [a, ...) */
		if (k > 0)
			k--;
	}
	while (a < b) {
		uint64_t next = b, skip_to = a;

		if (!r->in_block) {
			while (k < scan->nblocks && cp_block_end(&scan->blocks[k]) <= a)
				k++;
			if (k < scan->nblocks) {
				uint64_t s = cp_block_start(&scan->blocks[k]);

				if (s <= a)
					skip_to = cp_block_end(&scan->blocks[k]);
				else if (s < next)
					next = s;
			}
		}
		exclude_clip(roots, &e, a, &skip_to, &next);
		if (skip_to > a) {
			a = skip_to;
			continue;
		}
		for_dumped(img, a, next, f);
		a = next;
	}
}

/* Call fn for the parts of a block's [a, b) that are not excluded (a task's
 * stack that is a heap block, below its saved stack pointer): for_dumped_near
 * with *seg (the segment read last), or for_dumped when seg is NULL. */
static void for_block_range(const struct cp_image *img, const struct cp_scan *ptrs,
			    const struct cp_segment **seg, const struct an_roots *roots,
			    uint64_t a, uint64_t b, const struct piece_fn *f)
{
	size_t e = 0;

	while (a < b) {
		uint64_t next = b, skip_to = a;

		if (roots->nexclude)
			exclude_clip(roots, &e, a, &skip_to, &next);
		if (skip_to > a) {
			a = skip_to;
			continue;
		}
		if (seg)
			for_dumped_near(img, ptrs, seg, a, next, f);
		else
			for_dumped(img, a, next, f);
		a = next;
	}
}

/* ---- the mark ---- */

enum { ST_UNREACHED = 0, ST_POSSIBLE = 1, ST_REACHABLE = 2, ST_INDIRECT = 3 };

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

static int u32vec_push(struct u32vec *s, uint32_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint32_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

struct mark {
	const struct cp_image *img;
	const struct cp_scan *scan;
	const struct an_roots *roots;
	struct live_index li;
	uint8_t *st;          /* per live block */
	uint32_t *from;       /* per live block: parent (live index | ROOT flag), or NULL */
	struct u32vec stack;  /* the work list */
	int fifo;             /* read it first in, first out (from head) */
	size_t head;
	int swap;
	int oom;
	/* the block being read */
	uint32_t cur;         /* live index, or AN_REACH_FROM_ROOT | root */
	int prior_definite;
	uint32_t leader;      /* clique phase: the leader, else UINT32_MAX */
	uint64_t block_bytes;
	struct an_pagerel rel; /* pages of img->map read since the last release */
	const struct cp_segment *seg;  /* segment of the block read last (for_dumped_near) */
};

/* memcheck's lc_push_without_clique_if_a_chunk_ptr */
static inline void mark_raise(struct mark *m, uint32_t k, int start, uint32_t parent, int definite)
{
	uint8_t s = m->st[k];

	if (s == ST_REACHABLE)
		return;
	if (start && definite) {
		m->st[k] = ST_REACHABLE;
	} else if (s == ST_UNREACHED) {
		m->st[k] = ST_POSSIBLE;
	} else {
		return;
	}
	if (m->from)
		m->from[k] = parent;
	if (!live_leaf(&m->li, k) && u32vec_push(&m->stack, k) < 0)
		m->oom = 1;
}

/* memcheck's lc_push_with_clique_if_a_chunk_ptr */
static inline void clique_take(struct mark *m, uint32_t k, uint32_t parent)
{
	if (m->st[k] != ST_UNREACHED || k == m->leader)
		return;
	m->st[k] = ST_INDIRECT;
	if (m->from)
		m->from[k] = parent;
	if (!live_leaf(&m->li, k) && u32vec_push(&m->stack, k) < 0)
		m->oom = 1;
}

static void mark_piece(void *arg, uint64_t addr, const unsigned char *p, uint64_t len)
{
	struct mark *m = arg;
	unsigned w = m->img->wsize;
	const unsigned char *end = p + len;
	uint64_t vals[FIND_BATCH];
	long ks[FIND_BATCH];

	(void)addr;
	m->block_bytes += len;
	an_pagerel_note(&m->rel, p, len);
	while (p < end) {
		unsigned n = 0, cand = 0;

		for (; p < end && n < FIND_BATCH; p += w) {
			vals[n] = load_word(p, w, m->swap);
			cand |= vals[n] - m->li.lo < m->li.span;
			n++;
		}
		if (!cand)
			continue;
		live_find_batch(&m->li, vals, n, ks);
		for (unsigned i = 0; i < n; i++) {
			if (ks[i] >= 0)
				__builtin_prefetch(&m->st[ks[i]]);
		}
		for (unsigned i = 0; i < n; i++) {
			long k = ks[i];

			if (k < 0)
				continue;
			if (m->leader != UINT32_MAX)
				clique_take(m, (uint32_t)k, m->cur);
			else
				mark_raise(m, (uint32_t)k, vals[i] == live_start(&m->li, k), m->cur,
					   m->prior_definite);
		}
	}
}

static void mark_block(struct mark *m, uint32_t k)
{
	struct piece_fn f = { mark_piece, m };

	/* a size 0 block's [user, user + 1) holds no whole word: nothing is read */
	m->cur = k;
	for_block_range(m->img, m->li.ptrs, &m->seg, m->roots, live_start(&m->li, k),
			live_end(&m->li, k), &f);
	an_pagerel_check(&m->rel);
}

/* Next block to read: last pushed (depth first, little memory), or with parents
 * asked for, first pushed (breadth first: --why then shows a shortest chain). */
static int work_pop(struct mark *m, uint32_t *k)
{
	if (m->fifo) {
		if (m->head == m->stack.n) {
			m->head = m->stack.n = 0;
			return 0;
		}
		*k = m->stack.v[m->head++];
		return 1;
	}
	if (!m->stack.n)
		return 0;
	*k = m->stack.v[--m->stack.n];
	return 1;
}


/* ---- reading the roots, maybe on several threads ---- */

struct hit {
	uint32_t k;       /* live index */
	uint32_t start;   /* 1 for a start pointer */
};

struct chunk {
	uint64_t a, b;
	uint32_t root;
	struct hit *hits;
	size_t n, cap;
	int oom;
};

/* Chunks are read by any thread, but their hits are applied by the calling thread
 * in chunk order, as soon as each is read; at most 'window' chunks are ahead of
 * the one being applied, so the hit lists stay small. */
struct root_job {
	struct mark *m;
	struct chunk *chunks;
	size_t nchunks;
	size_t next;              /* next chunk to read */
	size_t applied;           /* chunks applied so far */
	size_t window;
	unsigned char *done;      /* per chunk: read */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t bytes;
};

struct chunk_ctx {
	const struct live_index *li;
	struct an_pagerel *rel;
	struct chunk *c;
	unsigned w;
	int swap;
	uint64_t bytes;
};

static void chunk_piece(void *arg, uint64_t addr, const unsigned char *p, uint64_t len)
{
	struct chunk_ctx *x = arg;
	struct chunk *c = x->c;
	const unsigned char *end = p + len;
	uint64_t vals[FIND_BATCH];
	long ks[FIND_BATCH];

	(void)addr;
	x->bytes += len;
	an_pagerel_note(x->rel, p, len);
	while (p < end) {
		unsigned n = 0, cand = 0;

		for (; p < end && n < FIND_BATCH; p += x->w) {
			vals[n] = load_word(p, x->w, x->swap);
			cand |= vals[n] - x->li->lo < x->li->span;
			n++;
		}
		if (!cand)
			continue;
		live_find_batch(x->li, vals, n, ks);
		for (unsigned i = 0; i < n; i++) {
			if (ks[i] < 0)
				continue;
			if (c->n == c->cap) {
				struct hit *h = grow_array(c->hits, &c->cap, c->n, sizeof(*h), 256);

				if (!h) {
					c->oom = 1;
					return;
				}
				c->hits = h;
			}
			c->hits[c->n].k = (uint32_t)ks[i];
			c->hits[c->n].start = vals[i] == live_start(x->li, (uint32_t)ks[i]);
			c->n++;
		}
	}
}

/* Read chunk i into its hit list. */
static void chunk_read(struct root_job *j, size_t i)
{
	struct mark *m = j->m;
	struct chunk_ctx x;
	struct piece_fn f = { chunk_piece, &x };

	x.li = &m->li;
	x.rel = &m->rel;
	x.c = &j->chunks[i];
	x.w = m->img->wsize;
	x.swap = m->swap;
	x.bytes = 0;
	for_root_range(m->img, m->scan, m->roots, &m->roots->v[x.c->root], x.c->a, x.c->b, &f);
	pthread_mutex_lock(&j->lock);
	j->bytes += x.bytes;
	j->done[i] = 1;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/* Take the next chunk to read within the window, or return SIZE_MAX (lock held). */
static size_t chunk_take(struct root_job *j)
{
	if (j->next < j->nchunks && j->next < j->applied + j->window)
		return j->next++;
	return SIZE_MAX;
}

static void *root_worker(void *arg)
{
	struct root_job *j = arg;

	pthread_mutex_lock(&j->lock);
	while (j->next < j->nchunks) {
		size_t i = chunk_take(j);

		if (i == SIZE_MAX) {
			pthread_cond_wait(&j->cond, &j->lock);
			continue;
		}
		pthread_mutex_unlock(&j->lock);
		chunk_read(j, i);
		pthread_mutex_lock(&j->lock);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* The calling thread: apply read chunks in order, read chunks when none is ready. */
static void root_apply_all(struct root_job *j)
{
	struct mark *m = j->m;

	pthread_mutex_lock(&j->lock);
	while (j->applied < j->nchunks) {
		size_t i = j->applied;
		struct chunk *c = &j->chunks[i];

		if (j->done[i]) {
			pthread_mutex_unlock(&j->lock);
			if (c->oom)
				m->oom = 1;
			for (size_t h = 0; h < c->n && !m->oom; h++)
				mark_raise(m, c->hits[h].k, (int)c->hits[h].start,
					   AN_REACH_FROM_ROOT | c->root, 1);
			free(c->hits);
			c->hits = NULL;
			c->n = c->cap = 0;
			an_pagerel_check(&m->rel);
			pthread_mutex_lock(&j->lock);
			j->applied++;
			pthread_cond_broadcast(&j->cond);
			continue;
		}
		i = chunk_take(j);
		if (i != SIZE_MAX) {
			pthread_mutex_unlock(&j->lock);
			chunk_read(j, i);
			pthread_mutex_lock(&j->lock);
			continue;
		}
		pthread_cond_wait(&j->cond, &j->lock);
	}
	pthread_mutex_unlock(&j->lock);
}

/* Read every memory root into per-chunk hit lists, then apply them in order. */
static int mark_roots(struct mark *m, unsigned nthreads, uint64_t *root_bytes)
{
	struct root_job j;
	uint64_t total = 0;
	size_t cap = 0;
	int rc = -1;

	memset(&j, 0, sizeof(j));
	j.m = m;
	pthread_mutex_init(&j.lock, NULL);
	pthread_cond_init(&j.cond, NULL);
	for (size_t r = 0; r < m->roots->n; r++) {
		const struct an_root *rt = &m->roots->v[r];

		if (rt->kind == AN_ROOT_REGS || rt->end <= rt->start)
			continue;
		/* chunks start only in dumped bytes: their number is bounded by the
		 * file, not by the size a (possibly damaged) segment claims */
		for (uint64_t a = dumped_from(m->img, rt->start); a < rt->end;
		     a = dumped_from(m->img, a + CHUNK_BYTES)) {
			if (j.nchunks == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct chunk *c = realloc(j.chunks, nc * sizeof(*c));

				if (!c)
					goto out;
				j.chunks = c;
				cap = nc;
			}
			memset(&j.chunks[j.nchunks], 0, sizeof(j.chunks[0]));
			j.chunks[j.nchunks].a = a;
			j.chunks[j.nchunks].b = rt->end - a > CHUNK_BYTES ? a + CHUNK_BYTES : rt->end;
			j.chunks[j.nchunks].root = (uint32_t)r;
			total += j.chunks[j.nchunks].b - a;
			j.nchunks++;
			if (rt->end - a <= CHUNK_BYTES)
				break;
		}
	}
	if (!nthreads)
		nthreads = ncpu_usable();
	if (total < PARALLEL_MIN || j.nchunks < 2)
		nthreads = 1;
	if (nthreads > j.nchunks)
		nthreads = (unsigned)j.nchunks;
	j.window = 2 * (size_t)nthreads + 2;
	j.done = calloc(j.nchunks + 1, 1);
	if (!j.done)
		goto out;
	if (nthreads > 1) {
		pthread_t *tid = calloc(nthreads, sizeof(*tid));
		unsigned started = 0;

		if (!tid)
			goto out;
		for (unsigned t = 1; t < nthreads; t++)
			if (pthread_create(&tid[started], NULL, root_worker, &j) == 0)
				started++;
		root_apply_all(&j);
		for (unsigned t = 0; t < started; t++)
			pthread_join(tid[t], NULL);
		free(tid);
	} else {
		root_apply_all(&j);
	}
	*root_bytes = j.bytes;
	if (m->oom)
		goto out;
	/* registers, after memory as memcheck does */
	for (size_t r = 0; r < m->roots->n; r++) {
		const struct an_root *rt = &m->roots->v[r];
		const struct cp_thread *th;

		if (rt->kind != AN_ROOT_REGS || rt->thread < 0 || (size_t)rt->thread >= m->img->nthreads)
			continue;
		th = &m->img->threads[rt->thread];
		for (unsigned i = 0; i < th->nregs; i++) {
			uint64_t v = th->regs[i];
			long k;

			if (m->img->wsize == 4)
				v &= 0xFFFFFFFFu;
			k = live_find(&m->li, v);
			if (k >= 0)
				mark_raise(m, (uint32_t)k, v == live_start(&m->li, k), AN_REACH_FROM_ROOT | (uint32_t)r, 1);
		}
	}
	rc = m->oom ? -1 : 0;
out:
	for (size_t i = 0; i < j.nchunks; i++)
		free(j.chunks[i].hits);
	free(j.chunks);
	free(j.done);
	pthread_mutex_destroy(&j.lock);
	pthread_cond_destroy(&j.cond);
	return rc;
}

/* ---- the mark phase on several threads ---- */

/* The work list is read first in, first out, in batches of about BATCH_BYTES of
 * block data: the threads read a batch's blocks into hit lists, then the calling
 * thread applies them in list order, taking each block's state at that moment as
 * the sequential reading would. The result is the one of one thread. */
#define BATCH_BYTES (4u << 20)
#define BATCH_MIN (256u << 10)     /* smaller batches are read by the caller alone */

struct part {
	struct mark *m;
	size_t a, b;          /* work list positions */
	struct chunk hits;    /* hits of all its blocks, in order */
	uint32_t *ends;       /* per position: hits.n after it */
	uint64_t bytes;
};

static void *part_read(void *arg)
{
	struct part *pt = arg;
	struct mark *m = pt->m;
	struct chunk_ctx x;
	struct piece_fn f = { chunk_piece, &x };
	const struct cp_segment *seg = NULL;

	x.li = &m->li;
	x.rel = &m->rel;
	x.c = &pt->hits;
	x.w = m->img->wsize;
	x.swap = m->swap;
	x.bytes = 0;
	for (size_t pos = pt->a; pos < pt->b; pos++) {
		uint32_t k = m->stack.v[pos];

		if (!pt->hits.oom)
			for_block_range(m->img, m->li.ptrs, &seg, m->roots, live_start(&m->li, k),
					live_end(&m->li, k), &f);
		pt->ends[pos - pt->a] = (uint32_t)pt->hits.n;
	}
	pt->bytes = x.bytes;
	return NULL;
}

static void mark_drain_parallel(struct mark *m, unsigned nthreads)
{
	struct part parts[16];
	/* cum[i]: block bytes of the batch's first i + 1 blocks, so that cutting it
	 * into parts does not read every block's addresses a second time */
	uint64_t *cum = NULL;
	size_t cum_cap = 0;

	if (nthreads > 16)
		nthreads = 16;
	while (m->head < m->stack.n && !m->oom) {
		size_t a = m->head, b = a;
		uint64_t bytes = 0;

		while (b < m->stack.n && bytes < BATCH_BYTES) {
			uint32_t k = m->stack.v[b];
			uint64_t *c = grow_array(cum, &cum_cap, b - a, sizeof(*cum), 4096);

			if (!c) {
				m->oom = 1;
				break;
			}
			cum = c;
			bytes += live_end(&m->li, k) - live_start(&m->li, k);
			cum[b - a] = bytes;
			b++;
		}
		if (m->oom)
			break;
		if (nthreads < 2 || bytes < BATCH_MIN || b - a < 2 * nthreads) {
			/* small batch, or one big block: read and apply one by one */
			for (; m->head < b && !m->oom; m->head++) {
				uint32_t k = m->stack.v[m->head];

				m->prior_definite = m->st[k] != ST_POSSIBLE;
				mark_block(m, k);
			}
		} else {
			/* cut [a, b) into nthreads parts of about the same bytes */
			uint64_t per = bytes / nthreads + 1, acc = 0;
			size_t pos = a;
			pthread_t tid[16];
			int started[16] = { 0 };

			for (unsigned t = 0; t < nthreads; t++) {
				struct part *pt = &parts[t];

				memset(pt, 0, sizeof(*pt));
				pt->m = m;
				pt->a = pos;
				while (pos < b && (t == nthreads - 1 || acc < per * (t + 1)))
					acc = cum[pos++ - a];
				pt->b = pos;
				pt->ends = malloc((pt->b - pt->a + 1) * sizeof(*pt->ends));
				if (!pt->ends)
					m->oom = 1;
			}
			for (unsigned t = 1; t < nthreads && !m->oom; t++)
				started[t] = pthread_create(&tid[t], NULL, part_read, &parts[t]) == 0;
			for (unsigned t = 0; t < nthreads && !m->oom; t++)
				if (!started[t])
					part_read(&parts[t]);
			for (unsigned t = 1; t < nthreads; t++)
				if (started[t])
					pthread_join(tid[t], NULL);
			for (unsigned t = 0; t < nthreads; t++) {
				struct part *pt = &parts[t];
				uint32_t h = 0;

				if (pt->hits.oom)
					m->oom = 1;
				m->block_bytes += pt->bytes;
				for (size_t q = pt->a; q < pt->b && !m->oom; q++) {
					uint32_t k = m->stack.v[q];
					int definite = m->st[k] != ST_POSSIBLE;

					for (; h < pt->ends[q - pt->a] && !m->oom; h++)
						mark_raise(m, pt->hits.hits[h].k, (int)pt->hits.hits[h].start, k,
							   definite);
				}
				free(pt->hits.hits);
				free(pt->ends);
			}
			m->head = b;
			an_pagerel_check(&m->rel);
		}
		/* keep the list short: drop what was read once it is half of it */
		if (m->head > 4096 && m->head * 2 > m->stack.n) {
			memmove(m->stack.v, m->stack.v + m->head, (m->stack.n - m->head) * sizeof(*m->stack.v));
			m->stack.n -= m->head;
			m->head = 0;
		}
	}
	free(cum);
	m->head = m->stack.n = 0;
}

int an_reach_build(const struct cp_image *img, const struct cp_scan *scan,
		   const struct an_roots *roots, const struct an_reach_options *opt,
		   struct an_reach *out)
{
	struct mark m;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	m.img = img;
	m.scan = scan;
	m.roots = roots;
	m.swap = img->big_endian != host_big();
	m.leader = UINT32_MAX;
	if (live_index_build(img, scan, &m.li) < 0)
		goto out;
	{
		uint64_t budget = opt ? opt->resident_max : 0;

		if (budget == 0)
			budget = img->map_size >= AN_REACH_RESIDENT_MIN ? AN_REACH_RESIDENT_DEFAULT : 0;
		else if (budget == UINT64_MAX)
			budget = 0;
		if (an_pagerel_init(&m.rel, img->map, img->map_size, budget) < 0)
			goto out;
	}
	m.st = calloc(m.li.n + 1, 1);
	out->cat = calloc(scan->nblocks + 1, 1);
	if (!m.st || !out->cat)
		goto out;
	if (opt && opt->parents) {
		m.fifo = 1;
		m.from = malloc((m.li.n + 1) * sizeof(*m.from));
		out->from = malloc((scan->nblocks + 1) * sizeof(*out->from));
		if (!m.from || !out->from)
			goto out;
		for (size_t k = 0; k < m.li.n; k++)
			m.from[k] = AN_REACH_FROM_NONE;
	}
	if (mark_roots(&m, opt ? opt->nthreads : 0, &out->root_bytes) < 0)
		goto out;
	mark_drain_parallel(&m, opt && opt->nthreads ? opt->nthreads : ncpu_usable());
	if (m.oom)
		goto out;
	/* the lost ones, in address order: each untaken block leads a clique */
	for (uint32_t k = 0; k < m.li.n && !m.oom; k++) {
		if (m.st[k] != ST_UNREACHED || live_leaf(&m.li, k))
			continue;   /* a leaf leads a clique of itself: nothing to read */
		m.leader = k;
		if (u32vec_push(&m.stack, k) < 0)
			goto out;
		for (uint32_t b; !m.oom && work_pop(&m, &b);)
			mark_block(&m, b);
	}
	if (m.oom)
		goto out;
	out->block_bytes = m.block_bytes;
	an_pagerel_flush(&m.rel);
	out->released = m.rel.released;
	/* out->cat is calloc'd: AN_REACH_NONE is 0 (a pass over every block less) */
	_Static_assert(AN_REACH_NONE == 0, "out->cat starts as AN_REACH_NONE");
	if (out->from)
		for (size_t i = 0; i < scan->nblocks; i++)
			out->from[i] = AN_REACH_FROM_NONE;
	for (size_t k = 0; k < m.li.n; k++) {
		static const uint8_t cat_of[] = {
			[ST_UNREACHED] = AN_REACH_DEFINITE, [ST_POSSIBLE] = AN_REACH_POSSIBLE,
			[ST_REACHABLE] = AN_REACH_REACHABLE, [ST_INDIRECT] = AN_REACH_INDIRECT,
		};
		uint32_t i = m.li.idx[k];
		uint8_t c = cat_of[m.st[k]];

		out->cat[i] = c;
		out->blocks[c]++;
		if (c != AN_REACH_REACHABLE)
			out->bytes[c] += scan->blocks[i].size;
		if (out->from) {
			uint32_t f = m.from[k];

			if (c == AN_REACH_DEFINITE || f == AN_REACH_FROM_NONE)
				out->from[i] = AN_REACH_FROM_NONE;
			else if (f & AN_REACH_FROM_ROOT)
				out->from[i] = f;
			else
				out->from[i] = m.li.idx[f];
		}
	}
	/* the reachable bytes are the rest: most blocks are, and their sizes are
	 * not read again (a pass over the scan's blocks, 0.5 GB at 10M) */
	out->bytes[AN_REACH_REACHABLE] = m.li.bytes - out->bytes[AN_REACH_POSSIBLE] -
					 out->bytes[AN_REACH_INDIRECT] - out->bytes[AN_REACH_DEFINITE];
	rc = 0;
out:
	live_index_release(&m.li);
	an_pagerel_release(&m.rel);
	free(m.st);
	free(m.from);
	free(m.stack.v);
	if (rc < 0)
		an_reach_release(out);
	return rc;
}

void an_reach_release(struct an_reach *r)
{
	free(r->cat);
	free(r->from);
	memset(r, 0, sizeof(*r));
}

/* ---- references into one block ---- */

struct refs_ctx {
	const struct cp_image *img;
	uint64_t lo, size;      /* target user data: v - lo < size (size 0: v == lo) */
	int swap;
	struct an_ref *v;
	size_t n, cap;
	int oom;
	int first_only;         /* an_reach_link: stop at the first start pointer */
	int found_start;
	struct an_pagerel *rel; /* pages read, or NULL */
};

static inline int refs_hit(const struct refs_ctx *x, uint64_t v)
{
	return x->size ? v - x->lo < x->size : v == x->lo;
}

static void refs_add(struct refs_ctx *x, uint64_t addr, uint64_t v, int32_t thread)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct an_ref *r = realloc(x->v, cap * sizeof(*r));

		if (!r) {
			x->oom = 1;
			return;
		}
		x->v = r;
		x->cap = cap;
	}
	x->v[x->n].addr = addr;
	x->v[x->n].value = v;
	x->v[x->n].thread = thread;
	x->v[x->n].block = UINT32_MAX;
	x->n++;
}

static void refs_piece(void *arg, uint64_t addr, const unsigned char *p, uint64_t len)
{
	struct refs_ctx *x = arg;
	unsigned w = x->img->wsize;

	if (x->rel)
		an_pagerel_note(x->rel, p, len);
	for (uint64_t off = 0; off < len && !x->found_start; off += w) {
		uint64_t v = load_word(p + off, w, x->swap);

		if (!refs_hit(x, v))
			continue;
		if (x->first_only) {
			/* keep the first word, replace it by the first start pointer */
			if (x->n == 0)
				refs_add(x, addr + off, v, -1);
			else if (v == x->lo && x->v[0].value != x->lo)
				x->v[0].addr = addr + off, x->v[0].value = v;
			if (v == x->lo)
				x->found_start = 1;
			continue;
		}
		refs_add(x, addr + off, v, -1);
	}
}

/* The block (scan index) whose user data holds addr, or UINT32_MAX. */
static uint32_t block_holding(const struct cp_scan *scan, uint64_t addr)
{
	const struct cp_block *b = block_at(scan, addr);

	if (!b || addr < b->user || addr - b->user >= b->size)
		return UINT32_MAX;
	return (uint32_t)(b - scan->blocks);
}

int an_reach_refs(const struct cp_image *img, const struct cp_scan *scan,
		  const struct an_roots *roots, uint32_t target, struct an_ref **out, size_t *n)
{
	const struct cp_block *t = &scan->blocks[target];
	struct refs_ctx x;
	struct piece_fn f = { refs_piece, &x };
	struct an_pagerel rel;

	memset(&x, 0, sizeof(x));
	x.img = img;
	x.lo = t->user;
	x.size = t->size;
	x.swap = img->big_endian != host_big();
	*out = NULL;
	*n = 0;
	/* the whole image is read once: give its pages back as an_reach_build does */
	if (an_pagerel_init(&rel, img->map, img->map_size,
			    img->map_size >= AN_REACH_RESIDENT_MIN ? AN_REACH_RESIDENT_DEFAULT : 0) < 0)
		return -1;
	x.rel = &rel;
	/* every segment, minus block headers and excluded ranges */
	for (size_t s = 0; s < img->nsegs && !x.oom; s++) {
		uint64_t a = img->segs[s].vaddr, b = a + img->segs[s].memsz;
		size_t k = cp_scan_lower(scan, a), e = 0;

		while (a < b && !x.oom) {
			uint64_t next = b, skip_to = a;

			/* header of block k: [cp_block_start, user) */
			while (k < scan->nblocks && scan->blocks[k].user <= a)
				k++;
			if (k < scan->nblocks) {
				uint64_t hs = cp_block_start(&scan->blocks[k]);

				if (hs <= a)
					skip_to = scan->blocks[k].user;
				else if (hs < next)
					next = hs;
			}
			exclude_clip(roots, &e, a, &skip_to, &next);
			if (skip_to > a) {
				a = skip_to;
				continue;
			}
			for_dumped(img, a, next, &f);
			an_pagerel_check(&rel);
			a = next;
		}
	}
	an_pagerel_flush(&rel);
	an_pagerel_release(&rel);
	for (size_t i = 0; i < img->nthreads && !x.oom; i++) {
		const struct cp_thread *th = &img->threads[i];

		for (unsigned r = 0; r < th->nregs; r++) {
			uint64_t v = img->wsize == 4 ? th->regs[r] & 0xFFFFFFFFu : th->regs[r];

			if (refs_hit(&x, v))
				refs_add(&x, r, v, (int32_t)i);
		}
	}
	if (x.oom) {
		free(x.v);
		return -1;
	}
	for (size_t i = 0; i < x.n; i++)
		if (x.v[i].thread < 0)
			x.v[i].block = block_holding(scan, x.v[i].addr);
	*out = x.v;
	*n = x.n;
	return 0;
}

int an_reach_link(const struct cp_image *img, const struct cp_scan *scan,
		  const struct an_roots *roots, uint32_t from, uint32_t target, struct an_ref *ref)
{
	const struct cp_block *t = &scan->blocks[target];
	struct refs_ctx x;
	struct piece_fn f = { refs_piece, &x };

	if (from == AN_REACH_FROM_NONE)
		return -1;
	memset(&x, 0, sizeof(x));
	x.img = img;
	x.lo = t->user;
	x.size = t->size;
	x.swap = img->big_endian != host_big();
	x.first_only = 1;
	if (from & AN_REACH_FROM_ROOT) {
		uint32_t r = from & ~AN_REACH_FROM_ROOT;
		const struct an_root *rt;

		if (r >= roots->n)
			return -1;
		rt = &roots->v[r];
		if (rt->kind == AN_ROOT_REGS) {
			const struct cp_thread *th;
			long best = -1;

			if (rt->thread < 0 || (size_t)rt->thread >= img->nthreads)
				return -1;
			th = &img->threads[rt->thread];
			for (unsigned i = 0; i < th->nregs; i++) {
				uint64_t v = img->wsize == 4 ? th->regs[i] & 0xFFFFFFFFu : th->regs[i];

				if (refs_hit(&x, v) && (best < 0 || (v == x.lo && th->regs[best] != x.lo)))
					best = i;
			}
			if (best < 0)
				return -1;
			ref->addr = (uint64_t)best;
			ref->value = th->regs[best];
			ref->thread = rt->thread;
			ref->block = UINT32_MAX;
			return 0;
		}
		/* a stack's frames before its red zone: where a frame holds the
		 * pointer, the frame keeps the block, not a stale copy that a
		 * returned call left below the stack pointer */
		if (rt->kind == AN_ROOT_STACK && rt->thread >= 0 && (size_t)rt->thread < img->nthreads &&
		    rt->start < img->threads[rt->thread].sp && img->threads[rt->thread].sp < rt->end) {
			uint64_t sp = img->threads[rt->thread].sp;

			for_root_range(img, scan, roots, rt, sp, rt->end, &f);
			if (!x.found_start)
				for_root_range(img, scan, roots, rt, rt->start, sp, &f);
		} else {
			for_root_range(img, scan, roots, rt, rt->start, rt->end, &f);
		}
	} else {
		const struct cp_block *b;

		if (from >= scan->nblocks)
			return -1;
		b = &scan->blocks[from];
		for_block_range(img, scan, NULL, roots, b->user, b->user + b->size, &f);
	}
	if (x.oom || x.n == 0) {
		free(x.v);
		return -1;
	}
	*ref = x.v[0];
	ref->block = from & AN_REACH_FROM_ROOT ? UINT32_MAX : from;
	free(x.v);
	return 0;
}
