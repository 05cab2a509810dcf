/* t_tables.c - mprof's tables and Massif's tree on synthetic scans: exact bytes,
 * blocks and paths for the producer/consumer example, the F/G recursion of the
 * call graph, the size bins and the tree, with no core or symbolizer needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tables.h"

/* A synthetic profile: return addresses with one named frame each, stacks over
 * them, live blocks. */
struct fake {
	struct cp_scan scan;
	struct sym_table sym;
	struct an_input in;
	uint64_t addrs[64];
	struct sym_loc locs[64];
	struct sym_frame frames[64];
	struct cp_stack stacks[32];
	uint32_t sf[512];
	struct cp_block blocks[4096];
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->scan.addrs = f->addrs;
	f->scan.stacks = f->stacks;
	f->scan.stack_frames = f->sf;
	f->scan.blocks = f->blocks;
	f->sym.locs = f->locs;
	f->sym.frames = f->frames;
	f->in.scan = &f->scan;
	f->in.sym = &f->sym;
}

/* Add a return address in function fn at line; returns its index. */
static uint32_t fake_addr(struct fake *f, const char *fn, unsigned line)
{
	size_t i = f->scan.naddrs++;

	f->addrs[i] = 0x1000 + 0x10 * i;   /* ascending, as a scan keeps them */
	f->frames[i].function = fn;
	f->frames[i].file = "prog.c";
	f->frames[i].line = line;
	f->locs[i].addr = f->addrs[i];
	f->locs[i].first = (uint32_t)i;
	f->locs[i].nframes = 1;
	f->sym.nlocs = f->sym.nframes = i + 1;
	return (uint32_t)i;
}

/* Add a stack of n address indices, innermost first; returns its index. */
static uint32_t fake_stack(struct fake *f, size_t n, const uint32_t *a)
{
	size_t s = f->scan.nstacks++;

	f->stacks[s].first = (uint32_t)f->scan.nstack_frames;
	f->stacks[s].depth = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		f->sf[f->scan.nstack_frames++] = a[i];
	return (uint32_t)s;
}

static void fake_block(struct fake *f, uint32_t stack, uint64_t size, int live)
{
	struct cp_block *b = &f->blocks[f->scan.nblocks++];

	b->user = 0x100000 + 0x1000 * f->scan.nblocks;
	b->depth = 1;   /* a header of 8 words of 8 bytes: user - 64 */
	b->w = 8;
	b->size = size;
	b->stack = stack;
	b->state = live ? CP_LIVE : CP_FREED;
	if (live) {
		f->scan.nlive++;
		f->scan.live_bytes += size;
	}
}

static const char *leak_fn(const struct an_input *in, const struct an_leak *l, size_t k)
{
	struct an_frame fr[16];

	if (an_frames_get(in, l->stack, l->skip, fr, 16) <= k || k >= l->npath)
		return NULL;
	return fr[k].function;
}

/* The graph node of function fn (not a cycle), or NULL. Frames are counted from
 * the stack's start after skip; the tests use stacks whose skip is known. */
static const struct an_gnode *gnode(const struct an_input *in, const struct an_usage *u,
				    const struct an_graph *g, const char *fn)
{
	for (size_t i = 0; i < g->n; i++) {
		struct an_frame fr[32];
		size_t n;

		if (g->v[i].is_cycle)
			continue;
		n = an_frames_get(in, g->v[i].stack, g->v[i].skip, fr, 32);
		if (g->v[i].frame < n && fr[g->v[i].frame].function &&
		    !strcmp(fr[g->v[i].frame].function, fn))
			return &g->v[i];
	}
	(void)u;
	return NULL;
}

static uint64_t edge_bytes(const struct an_gedge *e, size_t n, uint32_t node)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].node == node)
			return e[i].bytes;
	return UINT64_MAX;
}

/* mprof's producer/consumer: make_widget called by make_red_widget and
 * make_blue_widget; blue widgets are freed. */
static void test_widgets(void)
{
	struct fake *f = malloc(sizeof(*f));
	struct an_filter filt = { 0 };
	struct an_usage u;
	struct an_leaks l;
	struct an_directs d;
	struct an_graph g;
	struct cp_stats st;
	uint32_t a_malloc, a_mw, a_red, a_blue, a_main_r, a_main_b, s_red, s_blue;
	const unsigned nred = 7, nblue = 5;

	fake_init(f);
	a_malloc = fake_addr(f, "malloc", 0);       /* the allocator's own frame */
	a_mw = fake_addr(f, "make_widget", 10);
	a_red = fake_addr(f, "make_red_widget", 20);
	a_blue = fake_addr(f, "make_blue_widget", 30);
	a_main_r = fake_addr(f, "main", 40);
	a_main_b = fake_addr(f, "main", 41);
	s_red = fake_stack(f, 4, (uint32_t[]){ a_malloc, a_mw, a_red, a_main_r });
	s_blue = fake_stack(f, 4, (uint32_t[]){ a_malloc, a_mw, a_blue, a_main_b });
	for (unsigned i = 0; i < nred; i++)
		fake_block(f, s_red, 204, 1);
	for (unsigned i = 0; i < nblue; i++)
		fake_block(f, s_blue, 204, 0);

	/* live blocks only */
	CHECK("scan usage builds", an_usage_from_scan(&f->in, &filt, &u) == 0);
	CHECK("scan usage: one site (freed blocks left out)", u.n == 1 && !u.from_stats);
	CHECK("scan usage: malloc frame skipped", u.n == 1 && u.v[0].skip == 1);
	CHECK("scan usage: totals", u.allocs == nred && u.bytes == nred * 204 && u.frees == 0);
	CHECK("scan usage: bin 204", u.bins[204].allocs == nred && u.bins[204].bytes == nred * 204);
	an_usage_release(&u);

	/* the statistics: the whole history */
	memset(&st, 0, sizeof(st));
	st.stacks = calloc(2, sizeof(*st.stacks));
	st.nstacks = 2;
	st.stacks[0].stack = s_red;
	st.stacks[0].allocs = nred;
	st.stacks[0].bytes = nred * 204;
	st.stacks[0].cls_bytes[1] = nred * 204;
	st.stacks[1].stack = s_blue;
	st.stacks[1].allocs = nblue;
	st.stacks[1].frees = nblue;
	st.stacks[1].bytes = nblue * 204;
	st.stacks[1].bytes_freed = nblue * 204;
	st.stacks[1].cls_bytes[1] = nblue * 204;
	st.stacks[1].cls_freed[1] = nblue * 204;
	st.bins[204].allocs = nred + nblue;
	st.bins[204].bytes = (nred + nblue) * 204;
	st.bins[204].frees = nblue;
	st.bins[204].bytes_freed = nblue * 204;
	CHECK("stats usage builds", an_usage_from_stats(&f->in, &filt, &st, &u) == 0);
	CHECK("stats usage: two sites", u.n == 2 && u.from_stats);
	CHECK("stats usage: totals", u.allocs == nred + nblue && u.frees == nblue &&
	      u.bytes == (nred + nblue) * 204 && u.bytes_freed == nblue * 204);
	CHECK("stats usage: bin 204 from the region",
	      u.bins[204].allocs == nred + nblue && u.bins[204].frees == nblue);

	CHECK("leaks build", an_leaks_build(&f->in, &u, 5, 0, &l) == 0);
	CHECK("leaks: exactly one leaking path", l.n == 1);
	CHECK("leaks: through make_red_widget",
	      l.n == 1 && l.v[0].npath == 3 && !strcmp(leak_fn(&f->in, &l.v[0], 0), "make_widget") &&
	      !strcmp(leak_fn(&f->in, &l.v[0], 1), "make_red_widget") &&
	      !strcmp(leak_fn(&f->in, &l.v[0], 2), "main"));
	CHECK("leaks: kept, allocs, frees exact",
	      l.n == 1 && l.v[0].kept_blocks == nred && l.v[0].kept_bytes == nred * 204 &&
	      l.v[0].allocs == nred && l.v[0].frees == 0 && l.v[0].bytes == nred * 204);
	an_leaks_release(&l);
	/* a path of one function: red and blue share it, blue's allocs and frees count */
	CHECK("leaks depth 1 build", an_leaks_build(&f->in, &u, 1, 0, &l) == 0);
	CHECK("leaks depth 1: make_widget with both producers' counts",
	      l.n == 1 && l.v[0].npath == 1 && l.v[0].kept_blocks == nred &&
	      l.v[0].allocs == nred + nblue && l.v[0].frees == nblue &&
	      l.v[0].bytes == (nred + nblue) * 204);
	an_leaks_release(&l);

	CHECK("direct build", an_direct_build(&f->in, &u, &d) == 0);
	CHECK("direct: one function, make_widget", d.n == 1);
	CHECK("direct: bytes, kept, calls",
	      d.n == 1 && d.v[0].bytes == (nred + nblue) * 204 && d.v[0].kept_bytes == nred * 204 &&
	      d.v[0].calls == nred + nblue);
	CHECK("direct: medium class", d.n == 1 && d.v[0].cls_bytes[1] == (nred + nblue) * 204 &&
	      d.v[0].cls_kept[1] == nred * 204 && d.v[0].cls_bytes[0] == 0);
	an_directs_release(&d);

	CHECK("graph build", an_graph_build(&f->in, &u, &g) == 0);
	{
		const struct an_gnode *mw = gnode(&f->in, &u, &g, "make_widget");
		const struct an_gnode *red = gnode(&f->in, &u, &g, "make_red_widget");
		const struct an_gnode *blue = gnode(&f->in, &u, &g, "make_blue_widget");
		const struct an_gnode *mn = gnode(&f->in, &u, &g, "main");

		CHECK("graph: 4 functions, no cycle", g.n == 4 && g.ncycles == 0);
		CHECK("graph: nodes found", mw && red && blue && mn);
		if (mw && red && blue && mn) {
			CHECK("graph: make_widget self = all bytes",
			      mw->self == (nred + nblue) * 204 && mw->total == mw->self);
			CHECK("graph: main first (index 1), total all, self 0",
			      mn->index == 1 && mn->total == (nred + nblue) * 204 && mn->self == 0);
			CHECK("graph: make_red_widget requests the kept bytes from make_widget",
			      edge_bytes(red->callees, red->ncallees, mw->index - 1) == nred * 204);
			CHECK("graph: make_widget's callers",
			      mw->ncallers == 2 &&
			      edge_bytes(mw->callers, mw->ncallers, blue->index - 1) == nblue * 204);
			CHECK("graph: calls", red->calls == nred && mw->calls == nred + nblue);
		}
	}
	an_graph_release(&g);
	an_usage_release(&u);
	cp_stats_free(&st);
	free(f);
}

/* main -> F -> G -> F -> G -> malloc(10), and main -> malloc(5). */
static void test_recursion(void)
{
	struct fake *f = malloc(sizeof(*f));
	struct an_filter filt = { 0 };
	struct an_usage u;
	struct an_graph g;
	uint32_t m, g1, f1, g2, f2, mn, mn2, s1, s2;

	fake_init(f);
	m = fake_addr(f, "malloc", 0);
	g1 = fake_addr(f, "G", 11);
	f1 = fake_addr(f, "F", 21);
	g2 = fake_addr(f, "G", 12);
	f2 = fake_addr(f, "F", 22);
	mn = fake_addr(f, "main", 31);
	mn2 = fake_addr(f, "main", 32);
	s1 = fake_stack(f, 6, (uint32_t[]){ m, g1, f1, g2, f2, mn });
	s2 = fake_stack(f, 2, (uint32_t[]){ m, mn2 });
	fake_block(f, s1, 10, 1);
	fake_block(f, s2, 5, 1);
	CHECK("recursion: usage", an_usage_from_scan(&f->in, &filt, &u) == 0 && u.n == 2);
	CHECK("recursion: graph builds", an_graph_build(&f->in, &u, &g) == 0);
	CHECK("recursion: one cycle", g.ncycles == 1);
	{
		const struct an_gnode *F = gnode(&f->in, &u, &g, "F"), *G = gnode(&f->in, &u, &g, "G");
		const struct an_gnode *M = gnode(&f->in, &u, &g, "main"), *C = NULL;

		for (size_t i = 0; i < g.n; i++)
			if (g.v[i].is_cycle)
				C = &g.v[i];
		CHECK("recursion: nodes", F && G && M && C && g.n == 4);
		if (F && G && M && C) {
			CHECK("recursion: F and G in cycle 1", F->cycle == 1 && G->cycle == 1 &&
			      C->cycle == 1 && C->nmembers == 2);
			CHECK("recursion: main credited with exactly 15 (10 through F, 5 itself)",
			      M->total == 15 && M->self == 5);
			CHECK("recursion: main -> F exactly 10 bytes",
			      edge_bytes(M->callees, M->ncallees, F->index - 1) == 10);
			CHECK("recursion: cycle total 10, self 10", C->total == 10 && C->self == 10);
			CHECK("recursion: cycle's caller main, 10 bytes",
			      C->ncallers == 1 && C->callers[0].node == M->index - 1 &&
			      C->callers[0].bytes == 10);
			CHECK("recursion: cycle has no callees outside", C->ncallees == 0);
			CHECK("recursion: F and G 10 bytes each, not 20",
			      F->total == 10 && G->total == 10 && G->self == 10 && F->self == 0);
			CHECK("recursion: recursive calls counted",
			      F->calls == 1 && F->rcalls == 1 && G->rcalls == 1);
			CHECK("recursion: F -> G edge once", edge_bytes(F->callees, F->ncallees,
									 G->index - 1) == 10);
			CHECK("recursion: main first", M->index == 1);
		}
	}
	an_graph_release(&g);
	an_usage_release(&u);
	free(f);
}

/* Massif's manual example: g(4000) from f and from main, f(2000), main 10 x 1000. */
static void test_tree(void)
{
	struct fake *f = malloc(sizeof(*f));
	struct an_filter filt = { 0 };
	struct an_usage u;
	struct an_tree t;
	uint32_t m, g, f_g, f_own, mn_f, mn_g, mn_own;
	uint32_t s_gf, s_gm, s_f, s_m;

	fake_init(f);
	m = fake_addr(f, "malloc", 0);
	g = fake_addr(f, "g", 5);
	f_g = fake_addr(f, "f", 11);
	f_own = fake_addr(f, "f", 10);
	mn_f = fake_addr(f, "main", 25);
	mn_g = fake_addr(f, "main", 26);
	mn_own = fake_addr(f, "main", 20);
	s_gf = fake_stack(f, 4, (uint32_t[]){ m, g, f_g, mn_f });
	s_gm = fake_stack(f, 3, (uint32_t[]){ m, g, mn_g });
	s_f = fake_stack(f, 3, (uint32_t[]){ m, f_own, mn_f });
	s_m = fake_stack(f, 2, (uint32_t[]){ m, mn_own });
	fake_block(f, s_gf, 4000, 1);
	fake_block(f, s_gm, 4000, 1);
	fake_block(f, s_f, 2000, 1);
	for (int i = 0; i < 10; i++)
		fake_block(f, s_m, 1000, 1);
	fake_block(f, s_m, 777, 0);    /* freed: not in the tree */
	CHECK("tree: usage", an_usage_from_scan(&f->in, &filt, &u) == 0);
	CHECK("tree: builds", an_tree_build(&f->in, &u, &t) == 0);
	CHECK("tree: root 20000 bytes in 13 blocks", t.v[0].bytes == 20000 && t.v[0].blocks == 13);
	CHECK("tree: root has 3 children (main, g, f)", t.v[0].nchildren == 3);
	if (t.v[0].nchildren == 3) {
		const struct an_tnode *c0 = &t.v[t.v[0].children[0]];
		const struct an_tnode *c1 = &t.v[t.v[0].children[1]];
		const struct an_tnode *c2 = &t.v[t.v[0].children[2]];

		CHECK("tree: largest first: 10000, 8000, 2000",
		      c0->bytes == 10000 && c1->bytes == 8000 && c2->bytes == 2000);
		CHECK("tree: main's own node is a leaf, 10 blocks", c0->nchildren == 0 && c0->blocks == 10);
		CHECK("tree: g splits into f (4000) and main (4000)",
		      c1->nchildren == 2 && t.v[c1->children[0]].bytes == 4000 &&
		      t.v[c1->children[1]].bytes == 4000);
		CHECK("tree: g -> f -> main", c1->nchildren == 2 &&
		      t.v[t.v[c1->children[0]].children[0]].bytes == 4000);
		CHECK("tree: parents", c0->parent == 0 && t.v[c1->children[0]].parent == t.v[0].children[1]);
	}
	an_tree_release(&t);
	an_usage_release(&u);
	free(f);
}

/* Size bins, size classes, call sites and --ignore-fn. */
static void test_bins_and_sites(void)
{
	struct fake *f = malloc(sizeof(*f));
	struct an_filter filt = { 0 };
	const char *ign[] = { "noisy" };
	struct an_usage u;
	struct an_leaks l;
	uint32_t a1, a2, mn, nz, s1, s2, s3;

	fake_init(f);
	a1 = fake_addr(f, "alloc_here", 5);
	a2 = fake_addr(f, "alloc_here", 6);
	mn = fake_addr(f, "main", 9);
	nz = fake_addr(f, "noisy", 3);
	s1 = fake_stack(f, 2, (uint32_t[]){ a1, mn });
	s2 = fake_stack(f, 2, (uint32_t[]){ a2, mn });
	s3 = fake_stack(f, 2, (uint32_t[]){ nz, mn });
	fake_block(f, s1, 0, 1);
	fake_block(f, s1, 1024, 1);
	fake_block(f, s2, 1025, 1);
	fake_block(f, s2, 5000, 1);
	fake_block(f, s3, 64, 1);
	CHECK("classes", an_size_class(0) == 0 && an_size_class(32) == 0 && an_size_class(33) == 1 &&
	      an_size_class(256) == 1 && an_size_class(257) == 2 && an_size_class(2048) == 2 &&
	      an_size_class(2049) == 3);
	CHECK("bins: usage", an_usage_from_scan(&f->in, &filt, &u) == 0);
	CHECK("bins: 0 and 1024 have their own bins", u.bins[0].allocs == 1 && u.bins[1024].allocs == 1 &&
	      u.bins[1024].bytes == 1024);
	CHECK("bins: 1025 and 5000 in the large bin",
	      u.bins[AN_BIN_LARGE].allocs == 2 && u.bins[AN_BIN_LARGE].bytes == 6025);
	CHECK("leaks by function: both lines of alloc_here in one path",
	      an_leaks_build(&f->in, &u, 5, 0, &l) == 0 && l.n == 2 && l.v[0].kept_blocks == 4 &&
	      l.v[0].kept_bytes == 7049);
	an_leaks_release(&l);
	CHECK("leaks --call-sites: the two lines apart",
	      an_leaks_build(&f->in, &u, 5, 1, &l) == 0 && l.n == 3 && l.v[0].kept_bytes == 6025 &&
	      l.v[1].kept_bytes == 1024 && l.v[2].kept_bytes == 64);
	an_leaks_release(&l);
	an_usage_release(&u);
	filt.ignore_fns = ign;
	filt.nignore_fns = 1;
	CHECK("--ignore-fn: usage", an_usage_from_scan(&f->in, &filt, &u) == 0);
	CHECK("--ignore-fn: noisy left out", u.allocs == 4 && u.ignored_allocs == 1 &&
	      u.ignored_bytes == 64 && u.bins[64].allocs == 0);
	an_usage_release(&u);
	free(f);
}

/* ---- the statistics region read from a raw image ---- */

#define RG_BASE 0x20000000ull
#define RG_OFF 0x1000u
#define RG_CAP 16u
#define RG_DEPTH 4u
#define RG_TL 1024u

static void put64(unsigned char *img, uint64_t addr, uint64_t v)
{
	memcpy(img + (addr - RG_BASE), &v, 8);
}

/* Write a block header as annotate/ does at user address USER (64-bit), with
 * guard bytes; FREED marks it freed. */
static void block_put(unsigned char *img, uint64_t user, uint64_t size, uint64_t seq,
		      const uint64_t *frames, unsigned depth, int freed)
{
	uint64_t hdr = user - heapann_header_bytes(depth, 8), info = heapann_info_make(8, 0);

	put64(img, hdr, freed ? HEAPANN_START_FREED64 : HEAPANN_START_LIVE64);
	put64(img, hdr + HEAPANN_W_INFO * 8, info);
	put64(img, hdr + HEAPANN_W_SIZE * 8, size);
	put64(img, hdr + HEAPANN_W_DEPTH * 8, depth);
	put64(img, hdr + HEAPANN_W_SEQ * 8, seq);
	put64(img, hdr + HEAPANN_W_CHECK * 8, heapann_check(hdr, size, depth, seq, info, 8));
	for (unsigned i = 0; i < depth; i++)
		put64(img, hdr + (HEAPANN_W_FRAMES + i) * 8, frames[i]);
	put64(img, user - 8, (freed ? HEAPANN_END_FREED64 : HEAPANN_END_LIVE64) | depth);
	memset(img + (user - RG_BASE), 0xAB, size);
	memset(img + (user + size - RG_BASE), HEAPANN_GUARD_BYTE, 8);
}

/* Lay out a region at RG_BASE + RG_OFF in img as libheapann does (64-bit,
 * little-endian host assumed by the test), and the blocks that are live at the
 * end of its history; returns the region's total size.
 *
 * The history: chain A (0x401000 0x402000) 3 allocs of 100 bytes, 1 freed; chain B
 * (0x403000) 1 alloc of 1000; chain C (0x404000 .. 0x407000, the table's full
 * depth) 3 allocs of 40 bytes from deeper stacks, 1 freed; 2 allocs of 32 bytes
 * that found no slot, 1 freed. 9 allocs, 3 frees, 1484 bytes, 172 freed. The
 * region counts no per-stack frees: the reader derives them from the live blocks
 * (A: 2 + a freed header, B: 1, C: 2 under stacks deeper than the table keeps,
 * unrecorded: 1). Part of A's and C's allocations are still in two threads'
 * pending words. */
static uint64_t region_build_v(unsigned char *img, uint64_t version)
{
	uint64_t r = RG_BASE + RG_OFF, w = 8, entry = HEAPANN_STATS_ENTRY_FIXED + RG_DEPTH;
	uint64_t off_c = 128, off_b = off_c + HEAPANN_STATS_NCOUNTERS * w;
	uint64_t off_t = off_b + HEAPANN_STATS_BIN_SHARDS * HEAPANN_STATS_NBINS * 4 * w;
	uint64_t off_s = off_t + RG_TL * 2 * w;
	uint64_t total = off_s + RG_CAP * entry * w;
	uint64_t h[HEAPANN_STATS_HDR_WORDS] = { 0 };
	uint64_t e0, e1, e2, ub = RG_BASE + 0xC0000;
	static const uint64_t fa[] = { 0x401000, 0x402000 }, fb[] = { 0x403000 };
	static const uint64_t fc1[] = { 0x404000, 0x405000, 0x406000, 0x407000, 0x408000, 0x409000 };
	static const uint64_t fc2[] = { 0x404000, 0x405000, 0x406000, 0x407000, 0x40a000 };
	static const uint64_t fu[] = { 0x40b000 };

	h[HEAPANN_SH_MAGIC0] = HEAPANN_STATS_MAGIC0_64;
	h[HEAPANN_SH_MAGIC1] = HEAPANN_STATS_MAGIC1_64;
	h[HEAPANN_SH_VERSION] = version;
	h[HEAPANN_SH_HDR_WORDS] = HEAPANN_STATS_HDR_WORDS;
	h[HEAPANN_SH_TOTAL] = total;
	h[HEAPANN_SH_STACK_CAP] = RG_CAP;
	h[HEAPANN_SH_STACK_DEPTH] = RG_DEPTH;
	h[HEAPANN_SH_OFF_COUNTERS] = off_c;
	h[HEAPANN_SH_OFF_BINS] = off_b;
	h[HEAPANN_SH_OFF_TIMELINE] = off_t;
	h[HEAPANN_SH_OFF_STACKS] = off_s;
	h[HEAPANN_SH_TL_CAP] = RG_TL;
	h[HEAPANN_SH_NCOUNTERS] = HEAPANN_STATS_NCOUNTERS;
	h[HEAPANN_SH_NBINS] = HEAPANN_STATS_NBINS;
	h[HEAPANN_SH_ENTRY_WORDS] = entry;
	h[HEAPANN_SH_CHECK] = heapann_stats_check(r, total, RG_DEPTH, RG_CAP, RG_TL, version, 8);
	for (unsigned i = 0; i < HEAPANN_STATS_HDR_WORDS; i++)
		put64(img, r + i * w, h[i]);
	put64(img, r + off_c + HEAPANN_SC_BYTES * w, 1484);
	put64(img, r + off_c + HEAPANN_SC_BYTES_FREED * w, 172);
	put64(img, r + off_c + HEAPANN_SC_PEAK * w, 1484);
	put64(img, r + off_c + HEAPANN_SC_PEAK_TIME * w, 1484);
	put64(img, r + off_c + HEAPANN_SC_UNREC_ALLOCS * w, 2);
	put64(img, r + off_c + HEAPANN_SC_UNREC_BYTES * w, 64);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + HEAPANN_CALL_MALLOC) * w, 8);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + 16 + HEAPANN_CALL_MALLOC) * w, 1);
	put64(img, r + off_c + HEAPANN_SC_TL_COUNT * w, 2);
	put64(img, r + off_c + HEAPANN_SC_TL_INTERVAL * w, 1);
	put64(img, r + off_t, 100);
	put64(img, r + off_t + w, 100);
	put64(img, r + off_t + 2 * w, 1656);
	put64(img, r + off_t + 3 * w, 1312);
	put64(img, r + off_b + 100 * 4 * w, 2);   /* two threads' copies: 2 + 1 */
	put64(img, r + off_b + ((5 * HEAPANN_STATS_NBINS + 100) * 4) * w, 1);
	put64(img, r + off_b + (100 * 4 + 2) * w, 1);
	put64(img, r + off_b + 1000 * 4 * w, 1);   /* a size-1000 bin with 1 alloc */
	put64(img, r + off_b + 40 * 4 * w, 3);
	put64(img, r + off_b + (40 * 4 + 2) * w, 1);
	put64(img, r + off_b + 32 * 4 * w, 2);
	put64(img, r + off_b + (32 * 4 + 2) * w, 1);
	/* slot 3: chain A, 3 allocs, medium class */
	e0 = r + off_s + 3 * entry * w;
	put64(img, e0 + HEAPANN_SE_HASH * w, 0x1234);
	put64(img, e0 + HEAPANN_SE_DEPTH * w, 2 | HEAPANN_STATS_READY);
	put64(img, e0 + HEAPANN_SE_ALLOCS * w, 2);   /* + 1 pending in shard 1 */
	put64(img, e0 + HEAPANN_SE_TEMP * w, 2);     /* read from version 3 on */
	put64(img, e0 + (HEAPANN_SE_CLS_BYTES + 1) * w, 200);
	put64(img, e0 + HEAPANN_SE_FRAMES * w, 0x401000);
	put64(img, e0 + (HEAPANN_SE_FRAMES + 1) * w, 0x402000);
	/* slot 9: chain B, 1 alloc of 1000 */
	e1 = r + off_s + 9 * entry * w;
	put64(img, e1 + HEAPANN_SE_HASH * w, 0x5678);
	put64(img, e1 + HEAPANN_SE_DEPTH * w, 1 | HEAPANN_STATS_READY);
	put64(img, e1 + HEAPANN_SE_ALLOCS * w, 1);
	put64(img, e1 + (HEAPANN_SE_CLS_BYTES + 2) * w, 1000);
	put64(img, e1 + HEAPANN_SE_FRAMES * w, 0x403000);
	/* slot 12: being written (no READY): skipped */
	put64(img, r + off_s + 12 * entry * w + HEAPANN_SE_HASH * w, 0x9abc);
	/* slot 14: chain C, cut to the table's depth, 3 allocs of 40 */
	e2 = r + off_s + 14 * entry * w;
	put64(img, e2 + HEAPANN_SE_HASH * w, 0xdef0);
	put64(img, e2 + HEAPANN_SE_DEPTH * w, RG_DEPTH | HEAPANN_STATS_READY);
	put64(img, e2 + HEAPANN_SE_ALLOCS * w, 1);   /* + 2 pending in shard 0 */
	put64(img, e2 + (HEAPANN_SE_CLS_BYTES + 1) * w, 40);
	/* the threads' pending counts (not yet moved to their slots) */
	put64(img, r + off_c + (HEAPANN_SC_CALLS + HEAPANN_SP_SLOT) * w, 14 + 1);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + HEAPANN_SP_ALLOCS) * w, 2);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + HEAPANN_SP_CLS_BYTES + 1) * w, 80);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + 16 + HEAPANN_SP_SLOT) * w, 3 + 1);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + 16 + HEAPANN_SP_ALLOCS) * w, 1);
	put64(img, r + off_c + (HEAPANN_SC_CALLS + 16 + HEAPANN_SP_CLS_BYTES + 1) * w, 100);
	for (unsigned k = 0; k < RG_DEPTH; k++)
		put64(img, e2 + (HEAPANN_SE_FRAMES + k) * w, fc1[k]);
	/* the blocks live at the end (and one freed header, which counts as freed) */
	block_put(img, ub, 100, 1, fa, 2, 0);
	block_put(img, ub + 0x1000, 100, 2, fa, 2, 1);
	block_put(img, ub + 0x2000, 100, 3, fa, 2, 0);
	block_put(img, ub + 0x3000, 1000, 4, fb, 1, 0);
	block_put(img, ub + 0x4000, 40, 5, fc1, 6, 0);
	block_put(img, ub + 0x5000, 40, 7, fc2, 5, 0);
	block_put(img, ub + 0x6000, 32, 9, fu, 1, 0);
	return total;
}

/* The region of the current version. */
static uint64_t region_build(unsigned char *img)
{
	return region_build_v(img, HEAPANN_STATS_VERSION);
}

/* Write img to a temporary file and read the region back from it. Returns
 * cp_stats_read's result. */
static int region_read(const unsigned char *img, size_t len, struct cp_scan *scan,
		       struct cp_stats *st, struct cp_error *err)
{
	char path[] = "/tmp/t_tables.XXXXXX";
	int fd = mkstemp(path), rc = -2;
	struct cp_image *im;

	memset(scan, 0, sizeof(*scan));
	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return -2;
	if (write(fd, img, len) == (ssize_t)len) {
		im = cp_image_open_raw(path, RG_BASE, 8, 0, 62, err);
		if (im && cp_scan_image(im, 1, scan, err) == 0)
			rc = cp_stats_read(im, scan, st, err);
		cp_image_free(im);
	}
	close(fd);
	unlink(path);
	return rc;
}

static void test_region(void)
{
	size_t len = 0x100000;
	unsigned char *img = calloc(1, len);
	struct cp_scan scan;
	struct cp_stats st;
	struct cp_error err;
	uint64_t total;
	int rc;

	if (!img)
		return;
	total = region_build(img);
	CHECK("region fits the test image", RG_OFF + total <= len);
	rc = region_read(img, len, &scan, &st, &err);
	CHECK("region found", rc == 1 && st.addr == RG_BASE + RG_OFF);
	CHECK("region: the blocks scanned", scan.nlive == 6 && scan.nfreed == 1);
	CHECK("region: totals from the bins and counters", st.allocs == 9 && st.frees == 3 &&
	      st.bytes == 1484 && st.bytes_freed == 172 && st.live_bytes == 1312 && st.time == 1656);
	CHECK("region: bin 100 bytes derived", st.bins[100].allocs == 3 && st.bins[100].bytes == 300 &&
	      st.bins[100].frees == 1 && st.bins[100].bytes_freed == 100);
	CHECK("region: calls summed over the shards", st.calls[HEAPANN_CALL_MALLOC] == 9);
	CHECK("region: timeline", st.nsamples == 2 && st.samples[1].time == 1656 &&
	      st.samples[1].live == 1312 && st.peak_live == 1484);
	CHECK("region: three complete stacks, one skipped", st.nstacks == 3 && st.skipped_entries == 1);
	CHECK("region: stack counts: the slots' plus the threads' pending",
	      st.nstacks == 3 && st.stacks[0].allocs == 3 && st.stacks[0].cls_bytes[1] == 300 &&
	      st.stacks[1].allocs == 1 && st.stacks[2].allocs == 3 && st.stacks[2].cls_bytes[1] == 120);
	CHECK("region: stack bytes from the classes", st.nstacks == 3 && st.stacks[0].allocs == 3 &&
	      st.stacks[0].bytes == 300 && st.stacks[1].bytes == 1000 && st.stacks[2].bytes == 120);
	CHECK("region: frees derived: A 3 allocs - 2 live (the freed header not counted)",
	      st.nstacks == 3 && st.stacks[0].frees == 1 && st.stacks[0].bytes_freed == 100 &&
	      st.stacks[0].cls_freed[1] == 100 && st.stacks[0].cls_freed[0] == 0);
	CHECK("region: frees derived: B all live", st.nstacks == 3 && st.stacks[1].frees == 0 &&
	      st.stacks[1].bytes_freed == 0);
	CHECK("region: frees derived: C from 2 live blocks deeper than the table",
	      st.nstacks == 3 && st.stacks[2].frees == 1 && st.stacks[2].bytes_freed == 40 &&
	      st.stacks[2].cls_freed[1] == 40);
	CHECK("region: deeper blocks have stacks of their own",
	      st.nstacks == 3 && scan.blocks[4].stack != st.stacks[2].stack &&
	      scan.blocks[5].stack != st.stacks[2].stack && scan.blocks[4].stack != scan.blocks[5].stack);
	CHECK("region: unrecorded frees derived (2 allocs - 1 live without a slot)",
	      st.unrecorded_allocs == 2 && st.unrecorded_bytes == 64 && st.unrecorded_frees == 1);
	CHECK("region: frames interned into the scan",
	      scan.naddrs == 11 && scan.addrs[0] == 0x401000 && scan.addrs[2] == 0x403000 &&
	      st.nstacks == 3 && st.stacks[0].stack < scan.nstacks &&
	      scan.stacks[st.stacks[0].stack].depth == 2 &&
	      scan.addrs[scan.stack_frames[scan.stacks[st.stacks[0].stack].first + 1]] == 0x402000);
	CHECK("region: temporary allocations (version 3)", st.temp_counted && st.temp == 2 &&
	      st.nstacks == 3 && st.stacks[0].temp == 2 && st.stacks[1].temp == 0);
	cp_stats_free(&st);
	cp_scan_free(&scan);

	/* version 2 (libheapann before temporary allocations) is read, its word 3
	 * not; 1 and 4 are not regions this reader takes */
	memset(img, 0, len);
	region_build_v(img, 2);
	rc = region_read(img, len, &scan, &st, &err);
	CHECK("region version 2: read, temporary allocations not counted",
	      rc == 1 && st.nstacks == 3 && st.stacks[0].allocs == 3 && !st.temp_counted &&
	      st.temp == 0 && st.stacks[0].temp == 0);
	for (uint64_t v = 1; v <= 4; v += 3) {
		cp_stats_free(&st);
		cp_scan_free(&scan);
		memset(img, 0, len);
		region_build_v(img, v);
		rc = region_read(img, len, &scan, &st, &err);
		CHECK(v == 1 ? "region version 1: not taken" : "region version 4: not taken",
		      rc == 0 && st.nstacks == 0);
	}
	cp_stats_free(&st);
	cp_scan_free(&scan);
	memset(img, 0, len);
	region_build(img);

	/* a copy of the header elsewhere fails its check word: not found */
	memmove(img + RG_OFF + 0x100, img + RG_OFF, HEAPANN_STATS_HDR_WORDS * 8);
	memset(img + RG_OFF, 0, 0x100);
	rc = region_read(img, len, &scan, &st, &err);
	CHECK("moved header rejected (check word)", rc == 0 && st.nstacks == 0);
	cp_stats_free(&st);
	cp_scan_free(&scan);

	/* a region running past the end of the image: a clear error */
	memset(img, 0, len);
	region_build(img);
	rc = region_read(img, RG_OFF + 4096, &scan, &st, &err);
	CHECK("truncated region: error", rc == -1 && err.code == CP_EFORMAT &&
	      strstr(err.msg, "not fully in the image") != NULL);
	cp_stats_free(&st);
	cp_scan_free(&scan);

	/* the table of unloaded libraries the region points at (counter word
	 * UNLOAD_TABLE): 2 records claimed of 4, one READY */
	memset(img, 0, len);
	region_build(img);
	{
		uint64_t u = RG_BASE + 0xD0000, rb = heapann_unload_rec_bytes(8);
		uint64_t r0 = u + HEAPANN_UNLOAD_HDR_WORDS * 8, r1 = r0 + rb;

		put64(img, RG_BASE + RG_OFF + 128 + HEAPANN_SC_UNLOAD_TABLE * 8, u);
		put64(img, u + HEAPANN_UH_MAGIC * 8, HEAPANN_UNLOAD_MAGIC_64);
		put64(img, u + HEAPANN_UH_VERSION * 8, HEAPANN_UNLOAD_VERSION);
		put64(img, u + HEAPANN_UH_CAP * 8, 4);
		put64(img, u + HEAPANN_UH_REC_BYTES * 8, rb);
		put64(img, u + HEAPANN_UH_CLAIMED * 8, 2);
		put64(img, u + HEAPANN_UH_CHECK * 8, heapann_unload_check(u, 4, rb, 8));
		put64(img, r0 + HEAPANN_UR_READY * 8, 1);
		put64(img, r0 + HEAPANN_UR_SEQ * 8, 6);
		put64(img, r0 + HEAPANN_UR_BIAS * 8, 0x7f0000000000);
		put64(img, r0 + HEAPANN_UR_LO * 8, 0x7f0000000000);
		put64(img, r0 + HEAPANN_UR_HI * 8, 0x7f0000005000);
		memcpy(img + (r0 + HEAPANN_UNLOAD_REC_WORDS * 8 + HEAPANN_UNLOAD_ID_MAX - RG_BASE),
		       "/tmp/libgone.so", 16);
		put64(img, r1 + HEAPANN_UR_SEQ * 8, 7);   /* not READY */
		rc = region_read(img, len, &scan, &st, &err);
		CHECK("unload table: read through the region, one record of two",
		      rc == 1 && st.unload.n == 1 && st.unload.skipped == 1 && st.unload.v[0].seq == 6 &&
		      st.unload.v[0].hi == 0x7f0000005000 && !strcmp(st.unload.v[0].path, "/tmp/libgone.so") &&
		      st.unload_err[0] == '\0');
		cp_stats_free(&st);
		cp_scan_free(&scan);
		/* pointing past the image: the region is still read, the table is not */
		put64(img, RG_BASE + RG_OFF + 128 + HEAPANN_SC_UNLOAD_TABLE * 8, RG_BASE + len - 16);
		rc = region_read(img, len, &scan, &st, &err);
		CHECK("unload table past the image: the region read, the table skipped with a line",
		      rc == 1 && st.nstacks == 3 && st.unload.n == 0 &&
		      strstr(st.unload_err, "table of unloaded libraries at 0x200ffff0 skipped: "
				     "its header is not in the image") != NULL);
		cp_stats_free(&st);
		cp_scan_free(&scan);
	}
	free(img);
}

/* Rust's allocation layer is the allocator: its frames are skipped in both name
 * forms (DWARF's "alloc::raw_vec::RawVecInner<A>::f", v0's "<alloc::...>::f"),
 * up to what the program called; a path only alike is not. */
/* For each of the N function names: a stack malloc (INNER), that name, OUTER
 * (main); 1 when an_alloc_skip finds WANT allocator frames in every one
 * (else a line per name that did not). */
static int skips_each(struct fake *f, uint32_t inner, const char *const *names, size_t n,
		      uint32_t outer, uint32_t want)
{
	int ok = 1;

	for (size_t i = 0; i < n; i++) {
		uint32_t b[3] = { inner, fake_addr(f, names[i], 100 + (unsigned)i), outer };

		if (an_alloc_skip(&f->in, NULL, fake_stack(f, 3, b)) != want) {
			fprintf(stderr, "# %s: %s\n", names[i],
				want == 1 ? "taken for the allocator" : "not taken for the allocator");
			ok = 0;
		}
	}
	return ok;
}

static void test_rust_layer(void)
{
	static const char *const layer[] = {
		"malloc", "__rustc::__rust_alloc", "__rdl_alloc", "alloc::alloc::alloc",
		"<alloc::alloc::Global>::alloc_impl",
		"<alloc::alloc::Global as core::alloc::Allocator>::allocate",
		"alloc::raw_vec::RawVecInner<A>::try_allocate_in",
		"<alloc::raw_vec::RawVecInner>::grow_one",
		"<std::alloc::System as core::alloc::global::GlobalAlloc>::alloc",
		"std::sys::alloc::unix::<impl core::alloc::global::GlobalAlloc for std::alloc::System>::alloc",
		"alloc::boxed::box_new_uninit",
	};
	static const char *const program[] = {
		"alloc::vec::Vec<T,A>::with_capacity_in", "<alloc::boxed::Box<u8>>::new",
		"my_alloc::alloc::f", "alloc::allocate", "<my::alloc::alloc::X>::f", "allocator::alloc::f",
		"__rust_alloc_shim_user",
	};
	const size_t nl = sizeof(layer) / sizeof(layer[0]), np = sizeof(program) / sizeof(program[0]);
	struct fake *f = malloc(sizeof(*f));
	uint32_t a[16], s, main_a;

	fake_init(f);
	main_a = fake_addr(f, "main", 9);
	for (size_t i = 0; i < nl; i++)
		a[i] = fake_addr(f, layer[i], (unsigned)i);
	/* the whole layer, then the program: every layer frame skipped */
	a[nl] = main_a;
	s = fake_stack(f, nl + 1, a);
	CHECK("rust: the allocation layer's frames skipped, both name forms",
	      an_alloc_skip(&f->in, NULL, s) == nl);
	/* each name of the program's after malloc: only malloc skipped */
	CHECK("rust: names only alike (other crates, Vec, Box::new) are the program's",
	      skips_each(f, a[0], program, np, main_a, 1));
	/* the program's own #[global_allocator] (a counting wrapper of System):
	 * rustc inlines it into the __rust_alloc shim it inlines into the
	 * caller, so before, every such block's site read
	 * <ga::Counting as core::alloc::global::GlobalAlloc>::alloc */
	{
		static const char *const ga[] = {
			"<ga::Counting as core::alloc::global::GlobalAlloc>::alloc",
			"<ga::Counting as core::alloc::global::GlobalAlloc>::realloc",
			"ga::<impl core::alloc::global::GlobalAlloc for ga::Counting>::alloc_zeroed",
			/* gdb's names at -O0: the shim in the expansion's "_", and
			 * the impl by its symbol (sym/gdb.c asks for it) */
			"ga::_::__rust_alloc", "ga::_::__rust_realloc",
		};
		static const char *const not_ga[] = {
			"<ga::Counting as ga::Stats>::alloc", "ga::GlobalAllocStats::alloc",
		};

		CHECK("rust: the program's GlobalAlloc impl is the allocator, other impls are not",
		      skips_each(f, a[0], ga, sizeof(ga) / sizeof(ga[0]), main_a, 2) &&
		      skips_each(f, a[0], not_ga, sizeof(not_ga) / sizeof(not_ga[0]), main_a, 1));
	}
	free(f);
}

/* an_temps_build: sites whose frames read the same are one stack (two return
 * addresses on one line), other lines stay apart, a stack without temporary
 * allocations counts in the totals only; most temporary first. A site of a
 * stack that has temporaries counts its allocations there even when it has
 * none itself (a third address on line 10: before, the row read 9 of 15,
 * 100%-like, where the stacks report's grouping gives 9 of 18). */
static void test_temps(void)
{
	struct fake *f = malloc(sizeof(*f));
	struct an_site v[5];
	struct an_usage u = { 0 };
	struct an_temps t;
	uint32_t m, a1, a2, a3, b, mn, s1, s2, s3, s4, s5;

	fake_init(f);
	m = fake_addr(f, "malloc", 0);
	a1 = fake_addr(f, "parse", 10);
	a2 = fake_addr(f, "parse", 10);   /* another address, the same line */
	a3 = fake_addr(f, "parse", 10);   /* a third: its blocks outlive the next allocation */
	b = fake_addr(f, "parse", 12);
	mn = fake_addr(f, "main", 40);
	s1 = fake_stack(f, 3, (uint32_t[]){ m, a1, mn });
	s2 = fake_stack(f, 3, (uint32_t[]){ m, a2, mn });
	s3 = fake_stack(f, 3, (uint32_t[]){ m, b, mn });
	s4 = fake_stack(f, 2, (uint32_t[]){ m, mn });
	s5 = fake_stack(f, 3, (uint32_t[]){ m, a3, mn });
	memset(v, 0, sizeof(v));
	v[0] = (struct an_site){ .stack = s1, .skip = 1, .allocs = 10, .bytes = 100, .temp = 4 };
	v[1] = (struct an_site){ .stack = s2, .skip = 1, .allocs = 5, .bytes = 50, .temp = 5 };
	v[2] = (struct an_site){ .stack = s3, .skip = 1, .allocs = 20, .bytes = 200, .temp = 12 };
	v[3] = (struct an_site){ .stack = s4, .skip = 1, .allocs = 7, .bytes = 70, .temp = 0 };
	v[4] = (struct an_site){ .stack = s5, .skip = 1, .allocs = 3, .bytes = 30, .temp = 0 };
	u.v = v;
	u.n = 5;
	CHECK("temps: builds", an_temps_build(&f->in, &u, &t) == 0);
	CHECK("temps: totals over every site", t.temp == 21 && t.allocs == 45);
	CHECK("temps: line 12 first, then line 10's three addresses as one",
	      t.n == 2 && t.v[0].stack == s3 && t.v[0].temp == 12 && t.v[0].allocs == 20 &&
	      t.v[1].temp == 9 && t.v[1].allocs == 18 && t.v[1].bytes == 180 && t.v[1].skip == 1);
	an_temps_release(&t);
	free(f);
}

int main(void)
{
	test_widgets();
	test_recursion();
	test_tree();
	test_bins_and_sites();
	test_region();
	test_rust_layer();
	test_temps();
	return CHECK_DONE();
}
