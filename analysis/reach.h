/* reach.h - which live blocks can still be reached from a core: a conservative
 * mark phase over the image with memcheck's categories (still reachable, possibly
 * lost, indirectly lost, definitely lost), the chain that keeps a block alive, and
 * every word that points into a block.
 *
 * Pure functions over a read-only image and its scan: no I/O, no printing. Block
 * headers, freed blocks and excluded ranges are never read as references. Memory
 * is proportional to the number of blocks (about 10 bytes per live block: the
 * address index 4, its buckets about 4, states and categories 2, a leaf bit,
 * the work list up to 4 for each block that may hold an address); pages
 * of a large image are given back as they are read (pagerel.h), so the mapped core
 * does not stay resident.
 */
#ifndef REACH_H
#define REACH_H

#include <stddef.h>
#include <stdint.h>

#include "coreparse.h"

/* Category of a block, worst last. Values index an_reach.blocks/bytes. */
enum an_reach_cat {
	AN_REACH_NONE = 0,      /* not a live block (freed): not classified */
	AN_REACH_REACHABLE = 1, /* a chain of start pointers from a root */
	AN_REACH_POSSIBLE = 2,  /* reached from the roots, but only through an interior pointer */
	AN_REACH_INDIRECT = 3,  /* not reached from the roots; pointed to by a lost block */
	AN_REACH_DEFINITE = 4,  /* not reached from the roots nor from another lost block */
};
#define AN_REACH_NCATS 5

/* The name memcheck gives a category ("definitely lost"...), "" for NONE. */
const char *an_reach_cat_name(unsigned cat);

enum an_root_kind {
	AN_ROOT_DATA = 0,   /* a module's writable segment, or the anonymous one right after it (bss) */
	AN_ROOT_ANON = 1,   /* another writable mapping that holds no heap block */
	AN_ROOT_STACK = 2,  /* a thread's stack, from its stack pointer to the end of its mapping */
	AN_ROOT_TLS = 3,    /* the mapping at a thread's thread pointer (x86-64 fs_base) */
	AN_ROOT_REGS = 4,   /* a thread's general registers (no memory range) */
	AN_ROOT_USER = 5,   /* added by the caller (an ELF's data of a raw dump, tests) */
	AN_ROOT_LINKMAP = 6, /* the public words (l_addr, l_name, l_ld, l_next, l_prev) of a
			     * link_map of ld.so's list lying in a heap segment outside
			     * any block: one ld.so made while libheapann was inside
			     * malloc (its dlopen of libunwind), unannotated */
};
#define AN_ROOT_NKINDS 7

/* One root: a range of the image read as words, or one thread's registers. */
struct an_root {
	uint64_t start, end;   /* [start, end) in target addresses; 0, 0 for REGS */
	uint32_t kind;         /* enum an_root_kind */
	int32_t thread;        /* index into img->threads (STACK, TLS, REGS), else -1 */
	const char *module;    /* DATA: module path, borrowed from the image; else NULL */
	int in_block;          /* the range lies inside a block (a thread running on a
				* heap-allocated stack): read it although it is heap */
};

/* What an excluded range is (an_range.kind). */
enum an_exclude_kind {
	AN_EXCLUDE_STATS = 0,   /* libheapann's statistics region */
	AN_EXCLUDE_STACK = 1,   /* a switched-out task's stack below its saved stack pointer */
	AN_EXCLUDE_ARENA = 2,   /* glibc's malloc state (main_arena): memcheck never reads it */
	AN_EXCLUDE_FINISHED = 3, /* a finished thread's stack below its last stack pointer, in
				 * a live block (pthread_attr_setstack on heap memory) */
};

/* An address range never read as a root or a reference, in a root or a block. */
struct an_range {
	uint64_t start, end;
	uint32_t kind;          /* enum an_exclude_kind */
};

/* The root set. Owned by the struct; release with an_roots_release(). */
struct an_roots {
	struct an_root *v;
	size_t n, cap;
	struct an_range *exclude;  /* sorted by start after an_roots_find / _exclude */
	size_t nexclude, exclude_cap;
	struct an_range *finished; /* the dead part of finished threads' stacks, below
				* their last stack pointer: not read as roots (kind 0) */
	size_t nfinished, finished_cap;
	int tcb_state;             /* an_roots_find's own: 0 not looked for yet, 1 the
				* guards and tid offset below are known, -1 not there */
	uint64_t tcb_pguard, tcb_tid_off;  /* the TCBs' pointer guard; struct pthread's
				* tid, from the thread pointer */
};

/* Find the roots of a core: every writable segment that holds no block (module
 * data and bss, other writable mappings), each thread's stack from its stack
 * pointer to the end of its mapping (adjacent segments of a split mapping with the
 * same flags joined), each thread's registers and its TLS mapping. Segments that
 * hold blocks (the heap) are not roots, but for the public words of each link_map
 * of ld.so's list (found through the program's DT_DEBUG) that lies in one outside
 * any block (AN_ROOT_LINKMAP): the maps of libunwind and its libraries, which
 * libheapann loads inside malloc, are no blocks, and the l_next of the last of
 * them is all that holds the link_map of a library the program dlopens later. The
 * stack of a thread that has finished (glibc's TCB at its top with a tid of 0 or
 * -1, x86-64) is read only from that thread's last stack pointer, start_thread's,
 * saved in struct pthread's unwind buffer (out->finished); in a live block, the
 * part below it is excluded (AN_EXCLUDE_FINISHED). A raw dump has no roots of its own: the
 * caller adds the ELF's writable segments with an_roots_add().
 * Returns 0 and fills *out (release with an_roots_release), or -1 out of memory. */
int an_roots_find(const struct cp_image *img, const struct cp_scan *scan, struct an_roots *out);

/* Append a copy of *r. Returns 0, or -1 out of memory. */
int an_roots_add(struct an_roots *roots, const struct an_root *r);

/* Never read [start, end) as a root or a reference (the hook for libheapann's
 * statistics region: kind AN_EXCLUDE_STATS). Returns 0, or -1 out of memory. */
int an_roots_exclude(struct an_roots *roots, uint64_t start, uint64_t end);

/* The same for the dead part of a task's stack, [start, end) with end its saved
 * stack pointer (kind AN_EXCLUDE_STACK): left out of the roots, and out of the
 * block that holds it when the stack is a heap block. Returns 0, or -1 out of
 * memory. */
int an_roots_exclude_stack(struct an_roots *roots, uint64_t start, uint64_t end);

/* The same for glibc's main_arena, [start, end) (kind AN_EXCLUDE_ARENA): the
 * allocator's own state, which can keep a pointer to a chunk it has since handed
 * out. Returns 0, or -1 out of memory. */
int an_roots_exclude_arena(struct an_roots *roots, uint64_t start, uint64_t end);

/* Exclude libheapann's statistics region (include/heapann_stats.h) wherever a
 * valid header starts a page of a memory root: [R, R + TOTAL). an_roots_find()
 * does it; call it again after an_roots_add(). With scan (its sigs, borrowed)
 * only the signatures the scan noted are checked; with scan NULL every dumped
 * page start of the roots is read. Returns 0, or -1 out of memory. */
int an_roots_exclude_stats(const struct cp_image *img, const struct cp_scan *scan,
			   struct an_roots *roots);

/* 1 when thread t's general registers are only partly known: an x86-64 thread
 * whose fs_base and callee-saved registers (rbx, rbp, r12-r15) all read 0, as
 * libheapann's snapshots write the threads other than their own (pc, stack
 * pointer and system call arguments only). A real thread always has fs_base. */
int an_regs_partial(const struct cp_image *img, size_t t);

/* Thread t's thread pointer into *tp: on x86-64 its fs_base (NT_PRSTATUS), where
 * glibc puts the thread's TCB, its static TLS blocks right below (TLS variant
 * II); for a thread of libheapann's snapshot with only partial registers (no
 * fs_base), the TCB glibc keeps at the top of its stack mapping, found by its
 * self pointers (the lowest above its stack pointer when the segment holds
 * another thread's stack above it: stacks with no guard between them). Returns
 * 0, or -1 on other machines and when neither is there. */
int an_thread_pointer(const struct cp_image *img, size_t t, uint64_t *tp);

/* A thread's stack in memory [lo, hi) that holds its stack pointer and no heap
 * (one mapping, or adjacent segments of one): [dead, live) the part below the
 * stack pointer that no frame uses, [live, end) its live frames (the x86-64 red
 * zone included) up to the end of its own mapping, its TCB and static TLS. */
struct an_stack_span {
	uint64_t dead, live, end;
};

/* Thread t's span in [lo, hi), which may hold other threads' stacks too: the
 * kernel merges stacks mapped with no guard between them into one mapping. The
 * end is the top of the thread's own mapping from glibc's struct pthread at its
 * thread pointer (x86-64), else where the next thread's live part above it
 * starts, else hi; dead starts at the thread's own stack mapping's base, else at
 * the end of the thread below it, else at lo (when the thread below has no known
 * end, the dead part is empty: its span reaches this one's). What no span of the
 * threads in [lo, hi) covers is another mapping the kernel merged with theirs.
 * Returns 0, or -1 when t's stack pointer is not in [lo, hi). */
int an_stack_span(const struct cp_image *img, size_t t, uint64_t lo, uint64_t hi, struct an_stack_span *out);

/* The memory around addr that an_roots_find() reads as one thread stack run:
 * the segment holding addr and the adjacent ones with the same flags, none
 * holding a block or a damaged header, [*lo, *hi). Returns 0, or -1 when addr
 * is in no segment or in one that holds heap. */
int an_stack_run(const struct cp_image *img, const struct cp_scan *scan, uint64_t addr, uint64_t *lo,
		 uint64_t *hi);

/* The root whose range holds addr (the first in order), or -1. */
long an_roots_locate(const struct an_roots *roots, uint64_t addr);

/* Free what the root set holds; *roots is zeroed. */
void an_roots_release(struct an_roots *roots);

/* Where the reference that gave a block its category came from (an_reach.from). */
#define AN_REACH_FROM_NONE UINT32_MAX       /* definitely lost, or not live */
#define AN_REACH_FROM_ROOT 0x80000000u      /* | root index; else a scan block index */

/* The result of the mark phase. Arrays are per scan block (scan->blocks order). */
struct an_reach {
	uint8_t *cat;            /* enum an_reach_cat */
	uint32_t *from;          /* parents, or NULL when not asked for: the block
				  * (scan index) or root (AN_REACH_FROM_ROOT | index)
				  * whose word set the category; for an indirectly lost
				  * block, the lost block that holds it */
	uint64_t blocks[AN_REACH_NCATS];  /* live blocks per category */
	uint64_t bytes[AN_REACH_NCATS];   /* their requested bytes */
	uint64_t root_bytes;     /* root bytes read */
	uint64_t block_bytes;    /* block bytes read */
	uint64_t released;       /* bytes of the mapped image given back while reading
				  * (an_reach_options.resident_max) */
};

/* Options for an_reach_build(). Zero-initialize. */
struct an_reach_options {
	unsigned nthreads;       /* threads for the root scan: 0 all online cores */
	int parents;             /* fill an_reach.from (4 more bytes per block); the
				  * mark then goes breadth first, so that following
				  * from[] gives a shortest chain */
	uint64_t resident_max;   /* bytes of the mapped image the mark may read before
				  * it gives them back to the system (MADV_DONTNEED:
				  * they stay in the page cache; a later read faults
				  * them back in): 0 is AN_REACH_RESIDENT_DEFAULT for
				  * images of AN_REACH_RESIDENT_MIN bytes and more and
				  * no release below; UINT64_MAX never releases. The
				  * result does not depend on it */
};

#define AN_REACH_RESIDENT_DEFAULT (64ull << 20)
#define AN_REACH_RESIDENT_MIN (64ull << 20)

/* Classify every live block of scan as memcheck does (without its heuristics):
 * a word of a root or of a reached block whose value lies in [user, user+size) of a
 * live block points into it (to user only, for a block of size 0); at user it is a
 * start pointer. Blocks reached from roots through start pointers of reachable
 * blocks are still reachable; reached otherwise, possibly lost. Of the rest, taken
 * in address order, each one not yet taken is a definitely lost block and takes
 * every untaken block it reaches as indirectly lost (so one block of an unreferenced
 * cycle is definitely lost and the others indirectly). Returns 0 and fills *out
 * (release with an_reach_release), or -1 out of memory. */
int an_reach_build(const struct cp_image *img, const struct cp_scan *scan,
		   const struct an_roots *roots, const struct an_reach_options *opt,
		   struct an_reach *out);

/* Free what the result holds; *r is zeroed. */
void an_reach_release(struct an_reach *r);

/* A word that points into a block. */
struct an_ref {
	uint64_t addr;     /* where the word is; for a register, its index in regs[] */
	uint64_t value;    /* what it holds */
	int32_t thread;    /* for a register: index into img->threads, else -1 */
	uint32_t block;    /* scan index of the block holding the word, or UINT32_MAX */
};

/* Every word of the dumped image (block headers and excluded ranges left out) and
 * every thread register whose value points into the live block scan->blocks[target],
 * in address order, registers last. Words inside other blocks' user data, freed or
 * live, are included (block says which). Returns 0 and sets *out (caller frees
 * it with free()) and *n, or -1 out of memory. */
int an_reach_refs(const struct cp_image *img, const struct cp_scan *scan,
		  const struct an_roots *roots, uint32_t target, struct an_ref **out, size_t *n);

/* The reference that gave block 'target' its category, for --why: the first word
 * in 'from' (a block's user data, or a root) pointing to target's user address, or
 * failing that into its user data. Returns 0 and fills *ref, or -1 when there is
 * none (a changed image, or from is AN_REACH_FROM_NONE). */
int an_reach_link(const struct cp_image *img, const struct cp_scan *scan,
		  const struct an_roots *roots, uint32_t from, uint32_t target, struct an_ref *ref);

#endif /* REACH_H */
