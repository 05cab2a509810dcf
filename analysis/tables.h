/* tables.h - mprof's tables (memory leaks, size bins, direct allocators, the
 * allocation call graph) and Massif's allocation tree, built from per-stack usage.
 *
 * Usage comes either from the live blocks of a scan (what is still allocated: every
 * block counts as one alloc, nothing as freed) or from the statistics region that
 * libheapann keeps in the process (the whole history, freed blocks included). The
 * builders are pure functions: no I/O; results are released with their _release().
 */
#ifndef AN_TABLES_H
#define AN_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "cp_stats.h"

#define AN_NBINS 1026u          /* one bin per size 0..1024, then one for larger */
#define AN_BIN_LARGE 1025u      /* the index (and the "size" shown) of the larger bin */
#define AN_NCLASSES 4u          /* mprof's size classes: 0-32, 33-256, 257-2048, more */

/* mprof's size class of a request: 0 small (0-32), 1 medium (33-256), 2 large
 * (257-2048), 3 extra large. */
unsigned an_size_class(uint64_t size);

/* The bin of a request: its size up to 1024, AN_BIN_LARGE above. */
static inline unsigned an_size_bin(uint64_t size)
{
	return size <= 1024 ? (unsigned)size : AN_BIN_LARGE;
}

/* What one cp stack did: allocations made under it and how many of them were
 * freed. Kept = allocated - freed. */
struct an_site {
	uint32_t stack;                      /* cp_scan.stacks index */
	uint32_t skip;                       /* allocator frames (an_alloc_skip) */
	uint64_t allocs, frees;
	uint64_t bytes, bytes_freed;
	uint64_t temp;                       /* temporary allocations (statistics only) */
	uint64_t cls_bytes[AN_NCLASSES];     /* bytes allocated per size class */
	uint64_t cls_freed[AN_NCLASSES];     /* bytes freed per size class */
};

struct an_bin {
	uint64_t allocs, bytes, frees, bytes_freed;
};

/* Usage per stack and per size bin, and totals. */
struct an_usage {
	struct an_site *v;         /* stacks with at least one allocation, not ignored */
	size_t n;
	struct an_bin *bins;       /* AN_NBINS bins */
	uint64_t allocs, frees, bytes, bytes_freed;  /* totals over v */
	uint64_t ignored_allocs, ignored_bytes;      /* left out by --ignore-fn */
	uint64_t temp;             /* temporary allocations over v */
	int from_stats;            /* 1: the statistics region; 0: live blocks only */
	uint64_t unrecorded_allocs, unrecorded_bytes; /* stats: stacks that did not fit */
	uint64_t unrecorded_temp;  /* stats: their temporary allocations */
	uint64_t fallback_blocks, fallback_bytes; /* stats: live blocks of those stacks,
						  * taken from the image (frees unknown) */
};

/* Usage from the live blocks of in->scan (freed blocks ignored). Returns 0 and
 * fills *out (release with an_usage_release), or -1 when out of memory. */
int an_usage_from_scan(const struct an_input *in, const struct an_filter *f,
		       struct an_usage *out);

/* Usage from a statistics region read by cp_stats_read() against the same scan
 * (st->stacks[i].stack indexes in->scan->stacks). Bins come from the region's own
 * bins (they count every allocation, whatever --ignore-fn says). When the region's
 * stack table was full, the live blocks of stacks it has no entry for are added
 * from the scan (allocs = live blocks, no frees; fallback_*). Returns 0 or -1
 * (out of memory). */
int an_usage_from_stats(const struct an_input *in, const struct an_filter *f,
			const struct cp_stats *st, struct an_usage *out);

void an_usage_release(struct an_usage *u);

/* ---- memory leak table ---- */

/* One partial call path: the first npath logical frames of stack 'stack' after
 * 'skip' (allocation site first), and what all stacks sharing it did. cut: 1 when
 * the path is shorter than the depth asked for because its stacks were cut at
 * HEAPANN_DEPTH (an_fbuf_cut: not stopped at main), so more callers followed;
 * such a path is kept apart from the same frames of a whole stack. */
struct an_leak {
	uint32_t stack, skip, npath;
	uint32_t cut;
	uint64_t kept_bytes, kept_blocks;
	uint64_t allocs, frees, bytes;
};

struct an_leaks {
	struct an_leak *v;         /* paths with kept blocks, most kept bytes first */
	size_t n;
	uint64_t kept_bytes, kept_blocks;
};

/* Group the sites of u by their partial path of 'depth' frames: by function name,
 * or with call_sites by function, file, line, module and whether the frame is
 * inlined (two calls on different lines of one function stay apart, two calls on
 * one line are one site, as the stacks report groups them; a frame without a
 * function name by its address). Returns 0 or -1 (out of memory). */
int an_leaks_build(const struct an_input *in, const struct an_usage *u, unsigned depth,
		   int call_sites, struct an_leaks *out);
void an_leaks_release(struct an_leaks *l);

/* ---- direct allocation table ---- */

/* One function that called the allocator directly. */
struct an_direct {
	uint32_t stack, skip;      /* a stack whose frame 'skip' is this function */
	uint64_t bytes, kept_bytes, calls, frees;
	uint64_t cls_bytes[AN_NCLASSES];
	uint64_t cls_kept[AN_NCLASSES];
};

struct an_directs {
	struct an_direct *v;       /* most bytes first */
	size_t n;
	uint64_t bytes, kept_bytes, calls;
};

int an_direct_build(const struct an_input *in, const struct an_usage *u, struct an_directs *out);
void an_directs_release(struct an_directs *d);

/* ---- temporary allocations ---- */

/* The temporary allocations of one stack as the stacks report reads it: the
 * sites whose logical frames after their skip, up to main, are the same
 * (function, file, line, module, inlined; an unnamed frame by its address),
 * summed: allocs and bytes over every site of the group, those without
 * temporaries too. stack/skip name a site of the group that has some. */
struct an_temp {
	uint32_t stack, skip;
	uint64_t temp, allocs, bytes;
};

struct an_temps {
	struct an_temp *v;         /* stacks with temporary allocations, most first */
	size_t n;
	uint64_t temp, allocs;     /* totals over every site of the usage, with the
				    * allocations of stacks a full table left
				    * unrecorded (not their live blocks) */
	uint64_t unrecorded_temp;  /* in temp: those stacks', in no row */
};

/* Group the temporary allocations of u's sites by stack. Returns 0 or -1 (out
 * of memory); release with an_temps_release. */
int an_temps_build(const struct an_input *in, const struct an_usage *u, struct an_temps *out);
void an_temps_release(struct an_temps *t);

/* ---- allocation call graph ---- */

struct an_gedge {
	uint32_t node;             /* the other end: an index into an_graph.v */
	uint64_t bytes;            /* bytes allocated through this call (each stack once) */
	uint64_t calls;            /* allocations through this call */
};

/* A function, or a cycle: the functions of one strongly connected component
 * (recursion through several functions) merged as gprof does. */
struct an_gnode {
	uint32_t stack, skip, frame; /* functions: a stack, its skip and the logical frame
				      * after skip naming it */
	uint32_t cycle;            /* functions: their cycle number, 0 if none; cycles: theirs */
	int is_cycle;
	uint32_t index;            /* gprof's index: 1.. by total descending */
	uint32_t outer;            /* deepest position from an allocation site (1 = site) */
	uint64_t self;             /* bytes it requested from the allocator directly */
	uint64_t total;            /* self + descendants: stacks it is on, each once */
	uint64_t calls;            /* allocations it is on, each once */
	uint64_t rcalls;           /* extra appearances on the same stacks (recursion) */
	uint64_t cut_bytes;        /* of total: stacks cut at HEAPANN_DEPTH whose
				    * outermost frame is this function (an_fbuf_cut):
				    * their caller is unknown */
	uint64_t cut_calls;        /* allocations of those stacks */
	struct an_gedge *callers;  /* functions: other functions; cycles: outside callers */
	size_t ncallers;
	struct an_gedge *callees;
	size_t ncallees;
	uint32_t *members;         /* cycles: their functions */
	size_t nmembers;
};

struct an_graph {
	struct an_gnode *v;        /* sorted by index (total descending) */
	size_t n;
	uint32_t ncycles;
	uint64_t bytes;            /* all bytes allocated (the 100%) */
};

/* Build the call graph from caller/callee pairs of the sites' logical frames
 * (allocator frames stripped). Returns 0 or -1 (out of memory). */
int an_graph_build(const struct an_input *in, const struct an_usage *u, struct an_graph *out);
void an_graph_release(struct an_graph *g);

/* ---- Massif's allocation tree ---- */

/* A node: all kept bytes whose stacks pass through the same chain of frames from
 * the allocation site outward. The root (index 0) has no frame. */
struct an_tnode {
	uint32_t stack, skip, frame; /* a stack, its skip, and the logical frame after skip */
	uint32_t parent;
	uint32_t cut;              /* 1: no frame, the outer frames of stacks cut at
				    * HEAPANN_DEPTH (cp_stack.cut) under its parent */
	uint64_t bytes, blocks;    /* kept */
	uint32_t *children;        /* node indices, most bytes first */
	uint32_t nchildren;
	uint32_t cap;
};

struct an_tree {
	struct an_tnode *v;        /* v[0] is the root */
	size_t n;
};

/* Build the tree of kept bytes (live blocks, or allocated minus freed). Returns 0
 * or -1 (out of memory). */
int an_tree_build(const struct an_input *in, const struct an_usage *u, struct an_tree *out);
void an_tree_release(struct an_tree *t);

#endif /* AN_TABLES_H */
