/* analysis.h - the analysis model: blocks from a scan, names from a symbolizer, and
 * stacks clustered the way a user reads them (allocator frames stripped).
 *
 * Pure functions over arrays: no I/O, no printing. Everything returned is owned by
 * the result struct and released with its _release() function. Other analyses
 * (tree, tables, reachability, corruption) build on an_input and an_frames_get().
 */
#ifndef ANALYSIS_H
#define ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "coreparse.h"
#include "sym.h"

/* What the analyses read. sym may be NULL (no names: frames are bare addresses). */
struct an_input {
	const struct cp_scan *scan;
	const struct sym_table *sym;   /* sym->locs[i] names scan->addrs[i] */
};

/* Which frames count as the allocator and which blocks to leave out. Function names
 * match a pattern when equal to it, or equal up to the start of the parameter list
 * ("operator new" matches "operator new(unsigned long)"); glibc's "__GI_" prefix
 * of its internal aliases is ignored ("__strdup" matches "__GI___strdup"). */
struct an_filter {
	const char *const *alloc_fns;  /* user's --alloc-fn names (added to the built-in list) */
	size_t nalloc_fns;
	const char *const *ignore_fns; /* --ignore-fn: leave out blocks allocated under these */
	size_t nignore_fns;
};

/* One logical frame: a return address, or one inlined level of it. Strings are
 * borrowed from the symbol table (NULL when unknown). */
struct an_frame {
	uint64_t addr;          /* the return address */
	const char *function;
	const char *file;
	unsigned line;
	const char *module;
	uint64_t modoff;
	int inlined;            /* inlined into the next frame */
	uint32_t addr_idx;      /* index into scan->addrs */
	uint32_t level;         /* inline level within the address (0 = innermost) */
};

/* Number of logical frames of cp stack 'stack' (all inline levels expanded). */
size_t an_frames_count(const struct an_input *in, uint32_t stack);

/* Fill out[0..cap) with the logical frames of cp stack 'stack', innermost first,
 * starting after 'skip' frames. Returns how many there are in all after skip (may
 * exceed cap; only cap are written). */
size_t an_frames_get(const struct an_input *in, uint32_t stack, uint32_t skip,
		     struct an_frame *out, size_t cap);

/* Fill out[0..cap) with the logical frames of the one return address
 * scan->addrs[addr_idx]: its inline chain, innermost first, or one bare frame
 * when it has no name. Returns how many were written (at most cap). */
size_t an_frames_at(const struct an_input *in, uint32_t addr_idx, struct an_frame *out, size_t cap);

/* 1 when name matches pattern as described at struct an_filter. */
int an_name_matches(const char *name, const char *pattern);

/* How many innermost logical frames of 'stack' belong to the allocator: built-in
 * names (malloc family, operator new/new[], strdup..., Rust's allocation layer:
 * alloc::alloc::, alloc::raw_vec::, std::alloc::, the __rust_alloc shims) and
 * f->alloc_fns. When
 * all of them do, all but the outermost (a stack keeps at least one frame). */
uint32_t an_alloc_skip(const struct an_input *in, const struct an_filter *f, uint32_t stack);

/* 1 when any logical frame of 'stack' matches one of f->ignore_fns. */
int an_stack_ignored(const struct an_input *in, const struct an_filter *f, uint32_t stack);

#define AN_COMMON_SIZES 3

/* A cluster of live blocks with the same stack once the allocator frames are
 * stripped. */
struct an_stack {
	uint32_t stack;           /* a cp stack index of this cluster (the first seen) */
	uint32_t skip;            /* allocator frames to skip in it */
	uint64_t blocks;
	uint64_t bytes;           /* requested bytes */
	uint64_t overhead;        /* header, pad and guard bytes */
	uint64_t min_size, max_size;
	struct { uint64_t size, count; } common[AN_COMMON_SIZES]; /* most frequent sizes */
	uint32_t ncommon;
	uint32_t ndistinct_sizes;
};

struct an_stacks {
	struct an_stack *v;       /* sorted by bytes, then blocks, descending */
	size_t n;
	uint64_t blocks, bytes, overhead;     /* live blocks counted */
	uint64_t ignored_blocks, ignored_bytes; /* left out by --ignore-fn */
	uint32_t *stack_cluster;  /* per scan stack: index into v, or UINT32_MAX (left out by
				   * --ignore-fn, or no live block); an_block_cluster() */
};

/* The cluster (index into s->v) of block i of scan, the scan s was built from;
 * UINT32_MAX when the block is not live or its stack was left out. */
static inline uint32_t an_block_cluster(const struct an_stacks *s, const struct cp_scan *scan, size_t i)
{
	const struct cp_block *b = &scan->blocks[i];

	return b->state != CP_LIVE || b->stack >= scan->nstacks ? UINT32_MAX : s->stack_cluster[b->stack];
}

/* Cluster the live blocks of in->scan by stack. Returns 0 and fills *out (release
 * with an_stacks_release), or -1 when out of memory. */
int an_stacks_build(const struct an_input *in, const struct an_filter *f, struct an_stacks *out);

/* Free what an_stacks_build allocated; *s is zeroed. */
void an_stacks_release(struct an_stacks *s);

#endif /* ANALYSIS_H */
