/* t_stacksizes.c - the size summary of an_stacks_build() (min, max, the three
 * most frequent sizes, how many distinct): exact answers on synthetic scans, for
 * sizes counted in place (below 512 bytes, up to 2048 clusters), sizes counted in
 * the hash map, the tie between the two (the larger size wins), and more clusters
 * than are counted in place, several stacks merged into one cluster; each from
 * the blocks and from the counts a scan keeps (cp_scan.stack_live and
 * stack_sizes), which must agree, also with --ignore-fn. No core or symbolizer needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "check.h"
#include "heapann_stats.h"

/* A synthetic scan: nstacks stacks of one frame each (main at line 100 + s, so
 * each is its own cluster), and blocks added by ss_block(). */
struct ss {
	struct cp_scan scan;
	struct sym_table sym;
	struct an_input in;
	uint64_t *addrs;
	struct sym_loc *locs;
	struct sym_frame *frames;
	struct cp_stack *stacks;
	uint32_t *sf;
	struct cp_block *blocks;
	size_t cap;
};

static void ss_init(struct ss *x, size_t nstacks, size_t cap)
{
	memset(x, 0, sizeof(*x));
	x->addrs = calloc(nstacks, sizeof(*x->addrs));
	x->locs = calloc(nstacks, sizeof(*x->locs));
	x->frames = calloc(nstacks, sizeof(*x->frames));
	x->stacks = calloc(nstacks, sizeof(*x->stacks));
	x->sf = calloc(nstacks, sizeof(*x->sf));
	x->blocks = calloc(cap, sizeof(*x->blocks));
	x->cap = cap;
	for (size_t s = 0; s < nstacks; s++) {
		x->addrs[s] = 0x1000 + 0x10 * s;
		x->frames[s].function = "main";
		x->frames[s].file = "prog.c";
		x->frames[s].line = 100 + (unsigned)s;
		x->locs[s].addr = x->addrs[s];
		x->locs[s].first = (uint32_t)s;
		x->locs[s].nframes = 1;
		x->stacks[s].first = (uint32_t)s;
		x->stacks[s].depth = 1;
		x->sf[s] = (uint32_t)s;
	}
	x->scan.addrs = x->addrs;
	x->scan.naddrs = nstacks;
	x->scan.stacks = x->stacks;
	x->scan.nstacks = nstacks;
	x->scan.stack_frames = x->sf;
	x->scan.nstack_frames = nstacks;
	x->scan.blocks = x->blocks;
	x->sym.locs = x->locs;
	x->sym.nlocs = nstacks;
	x->sym.frames = x->frames;
	x->sym.nframes = nstacks;
	x->in.scan = &x->scan;
	x->in.sym = &x->sym;
}

static void ss_release(struct ss *x)
{
	free(x->addrs);
	free(x->locs);
	free(x->frames);
	free(x->stacks);
	free(x->sf);
	free(x->blocks);
}

/* n live blocks of size bytes under stack s (and one freed block, which must not
 * count). */
static void ss_block(struct ss *x, uint32_t s, uint64_t size, unsigned n)
{
	for (unsigned i = 0; i <= n && x->scan.nblocks < x->cap; i++) {
		struct cp_block *b = &x->blocks[x->scan.nblocks++];

		b->user = 0x100000 + 0x1000 * x->scan.nblocks;
		b->depth = 1;   /* a header of 8 words of 8 bytes: user - 64 */
		b->w = 8;
		b->size = size;
		b->stack = s;
		b->state = i < n ? CP_LIVE : CP_FREED;
		if (i < n) {
			x->scan.nlive++;
			x->scan.live_bytes += size;
		} else {
			x->scan.nfreed++;
		}
	}
}

/* Fill x's stack_live and stack_sizes from its blocks, as scan_merge counts
 * them: every (stack, size) pair in its own slot, an empty slot between two. */
static void ss_count(struct ss *x)
{
	size_t ns = x->scan.nstacks, n = 0;

	x->scan.stack_live = calloc(ns, sizeof(*x->scan.stack_live));
	x->scan.stack_sizes = calloc(2 * x->scan.nblocks + 1, sizeof(*x->scan.stack_sizes));
	x->scan.nstack_live = ns;
	for (size_t i = 0; i < x->scan.nblocks; i++) {
		const struct cp_block *b = &x->blocks[i];
		struct cp_stack_live *l = &x->scan.stack_live[b->stack];
		size_t k;

		if (b->state != CP_LIVE)
			continue;
		if (!l->n || b->size < l->min_size)
			l->min_size = b->size;
		if (b->size > l->max_size)
			l->max_size = b->size;
		l->n++;
		l->cls_bytes[heapann_stats_class(b->size)] += b->size;
		l->overhead += 64 + b->pad + b->guard_len;   /* depth 1, 8-byte words */
		for (k = 0; k < n; k += 2)
			if (x->scan.stack_sizes[k].stack == b->stack && x->scan.stack_sizes[k].size == b->size)
				break;
		if (k == n) {
			x->scan.stack_sizes[k].stack = b->stack;
			x->scan.stack_sizes[k].size = b->size;
			n += 2;
		}
		x->scan.stack_sizes[k].n++;
	}
	x->scan.nstack_sizes = n ? n - 1 : 0;
}

/* an_stacks_build on x with filter f gives the same from its blocks as from
 * its counts (ss_count), and f leaves out ign_blocks live blocks of ign_bytes
 * bytes (all of them: no cluster left). */
static int counts_agree(struct ss *x, const struct an_filter *f, uint64_t ign_blocks, uint64_t ign_bytes)
{
	struct an_stacks a, b;
	int ok;

	ss_count(x);
	ok = an_stacks_build(&x->in, f, &a) == 0;
	free(x->scan.stack_sizes);
	x->scan.stack_sizes = NULL;   /* no counts: the blocks are read */
	x->scan.nstack_sizes = 0;
	ok = ok && an_stacks_build(&x->in, f, &b) == 0;
	ok = ok && a.n == b.n && a.blocks == b.blocks && a.bytes == b.bytes && a.overhead == b.overhead &&
	     a.ignored_blocks == b.ignored_blocks && a.ignored_bytes == b.ignored_bytes &&
	     !memcmp(a.v, b.v, a.n * sizeof(*a.v)) &&
	     !memcmp(a.stack_cluster, b.stack_cluster, x->scan.nstacks * sizeof(*a.stack_cluster));
	ok = ok && a.ignored_blocks == ign_blocks && a.ignored_bytes == ign_bytes &&
	     a.blocks + ign_blocks == x->scan.nlive && a.bytes + ign_bytes == x->scan.live_bytes &&
	     a.overhead == 64 * a.blocks && (ign_blocks < x->scan.nlive || a.n == 0);
	an_stacks_release(&a);
	an_stacks_release(&b);
	free(x->scan.stack_live);
	x->scan.stack_live = NULL;
	x->scan.nstack_live = 0;
	return ok;
}

/* The cluster of stack s, or NULL. */
static const struct an_stack *cluster_of(const struct an_stacks *st, uint32_t s)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->v[i].stack == s)
			return &st->v[i];
	return NULL;
}

/* c's common sizes are (s0 x n0), (s1 x n1), (s2 x n2) and it has nd distinct. */
static int common_is(const struct an_stack *c, uint64_t s0, uint64_t n0, uint64_t s1, uint64_t n1,
		     uint64_t s2, uint64_t n2, uint32_t nd)
{
	return c && c->ncommon == 3 && c->common[0].size == s0 && c->common[0].count == n0 &&
	       c->common[1].size == s1 && c->common[1].count == n1 && c->common[2].size == s2 &&
	       c->common[2].count == n2 && c->ndistinct_sizes == nd;
}

/* Three clusters: small sizes only, large sizes only, and both with ties across
 * the 512-byte line; blocks of one cluster interleaved with the others'. */
static void test_few_clusters(void)
{
	struct ss x;
	struct an_filter f = { 0 };
	struct an_stacks st;
	const struct an_stack *c;

	ss_init(&x, 3, 256);
	ss_block(&x, 0, 24, 5);
	ss_block(&x, 1, 4096, 2);
	ss_block(&x, 2, 511, 3);
	ss_block(&x, 0, 16, 5);      /* ties 24 x5: the larger first */
	ss_block(&x, 1, 70000, 4);
	ss_block(&x, 2, 512, 3);     /* ties 511 x3 across the line: 512 first */
	ss_block(&x, 0, 0, 1);
	ss_block(&x, 1, 512, 1);
	ss_block(&x, 2, 1, 2);
	ss_block(&x, 0, 200, 7);
	ss_block(&x, 2, 100000, 3);  /* a third at x3: 100000 > 512 > 511 */
	ss_block(&x, 2, 1, 2);       /* size 1 now x4 */
	CHECK("few clusters: builds", an_stacks_build(&x.in, &f, &st) == 0);
	CHECK("few clusters: 3 clusters, 38 live blocks", st.n == 3 && st.blocks == 38);
	c = cluster_of(&st, 0);
	CHECK("small sizes: 200 x7, 24 x5, 16 x5; 4 distinct; 0..200",
	      common_is(c, 200, 7, 24, 5, 16, 5, 4) && c->min_size == 0 && c->max_size == 200 &&
	      c->blocks == 18 && c->bytes == 200 * 7 + 24 * 5 + 16 * 5);
	c = cluster_of(&st, 1);
	CHECK("large sizes: 70000 x4, 4096 x2, 512 x1; 3 distinct",
	      common_is(c, 70000, 4, 4096, 2, 512, 1, 3) && c->min_size == 512 && c->max_size == 70000);
	c = cluster_of(&st, 2);
	CHECK("both: 1 x4, then 100000, 512, 511 x3 (larger first): 4 distinct, 3 kept",
	      common_is(c, 1, 4, 100000, 3, 512, 3, 4) && c->min_size == 1 && c->max_size == 100000);
	an_stacks_release(&st);
	CHECK("few clusters: the same from the scan's counts", counts_agree(&x, &f, 0, 0));
	{
		static const char *const all[] = { "main" };
		struct an_filter ig = { .ignore_fns = all, .nignore_fns = 1 };

		CHECK("few clusters, --ignore-fn=main: the same from the counts, all left out",
		      counts_agree(&x, &ig, x.scan.nlive, x.scan.live_bytes));
	}
	ss_release(&x);
}

/* More clusters than are counted in place (2048): every size goes through the
 * hash map, with the same answers. */
static void test_many_clusters(void)
{
	const uint32_t ns = 2100;
	struct ss x;
	struct an_filter f = { 0 };
	struct an_stacks st;
	unsigned bad = 0;

	ss_init(&x, ns, (size_t)ns * 9);
	for (uint32_t s = 0; s < ns; s++) {
		ss_block(&x, s, 8 + s % 100, 3);
		ss_block(&x, s, 600 + s, 2);
		ss_block(&x, s, 7, 1);
	}
	CHECK("2100 clusters: builds", an_stacks_build(&x.in, &f, &st) == 0);
	CHECK("2100 clusters: all of them, 12600 live blocks", st.n == ns && st.blocks == 6ull * ns);
	for (uint32_t s = 0; s < ns; s++)
		if (!common_is(cluster_of(&st, s), 8 + s % 100, 3, 600 + s, 2, 7, 1, 3))
			bad++;
	CHECK("2100 clusters: each one's sizes exact", bad == 0);
	an_stacks_release(&st);
	CHECK("2100 clusters: the same from the scan's counts", counts_agree(&x, &f, 0, 0));
	ss_release(&x);
}

/* Several stacks whose frames are the same by line (a call site the compiler
 * duplicated, or stacks that differ only inside --alloc-fn): one cluster, its
 * smallest size from one stack, its largest from another, the last stack
 * neither, and a size below 512 (24, in all three) and one above (700, in two)
 * counted under more than one stack. Then --ignore-fn leaving out some stacks
 * (helper's two, themselves one cluster) and not the others. */
static void test_merged_stacks(void)
{
	static const char *const helper[] = { "helper" };
	struct an_filter f = { 0 }, ig = { .ignore_fns = helper, .nignore_fns = 1 };
	struct an_stacks st;
	const struct an_stack *c;
	struct ss x;

	ss_init(&x, 6, 64);
	for (uint32_t s = 0; s < 3; s++)
		x.frames[s].line = 100;   /* stacks 0, 1, 2: main at line 100 */
	for (uint32_t s = 3; s < 5; s++) {
		x.frames[s].function = "helper";
		x.frames[s].line = 200;   /* stacks 3, 4: helper at line 200 */
	}
	ss_block(&x, 0, 24, 2);
	ss_block(&x, 1, 8, 1);        /* the cluster's smallest */
	ss_block(&x, 3, 16, 2);
	ss_block(&x, 0, 5000, 1);     /* its largest */
	ss_block(&x, 2, 24, 1);
	ss_block(&x, 1, 24, 3);
	ss_block(&x, 5, 32, 2);       /* main at line 105 */
	ss_block(&x, 0, 700, 1);
	ss_block(&x, 4, 16, 1);
	ss_block(&x, 1, 300, 1);
	ss_block(&x, 2, 700, 2);
	ss_block(&x, 3, 1000, 1);
	ss_block(&x, 0, 48, 1);
	ss_block(&x, 4, 20, 1);
	CHECK("merged stacks: builds", an_stacks_build(&x.in, &f, &st) == 0);
	CHECK("merged stacks: 3 clusters of 20 live blocks", st.n == 3 && st.blocks == 20);
	c = cluster_of(&st, 0);
	CHECK("stacks 0, 1, 2 one cluster: 24 x6, 700 x3, 5000 x1; 6 distinct; 8..5000; 13 blocks",
	      c && st.stack_cluster[1] == st.stack_cluster[0] && st.stack_cluster[2] == st.stack_cluster[0] &&
	      common_is(c, 24, 6, 700, 3, 5000, 1, 6) && c->min_size == 8 && c->max_size == 5000 &&
	      c->blocks == 13 && c->bytes == 24 * 6 + 700 * 3 + 8 + 300 + 5000 + 48);
	c = cluster_of(&st, 3);
	CHECK("stacks 3, 4 one cluster: 16 x3, 1000 x1, 20 x1; 16..1000",
	      c && st.stack_cluster[4] == st.stack_cluster[3] && common_is(c, 16, 3, 1000, 1, 20, 1, 3) &&
	      c->min_size == 16 && c->max_size == 1000);
	an_stacks_release(&st);
	CHECK("merged stacks: the same from the scan's counts", counts_agree(&x, &f, 0, 0));
	CHECK("merged stacks: --ignore-fn=helper builds", an_stacks_build(&x.in, &ig, &st) == 0);
	c = cluster_of(&st, 0);
	CHECK("--ignore-fn=helper: 2 clusters left, 5 blocks of 1068 bytes out; main's 8..5000",
	      st.n == 2 && st.ignored_blocks == 5 && st.ignored_bytes == 16 * 3 + 1000 + 20 && c &&
	      c->min_size == 8 && c->max_size == 5000 && common_is(c, 24, 6, 700, 3, 5000, 1, 6));
	an_stacks_release(&st);
	CHECK("merged stacks, --ignore-fn=helper: the same from the counts, helper's left out",
	      counts_agree(&x, &ig, 5, 16 * 3 + 1000 + 20));
	ss_release(&x);
}

int main(void)
{
	test_few_clusters();
	test_merged_stacks();
	test_many_clusters();
	return CHECK_DONE();
}
