/* t_reach.c - the mark phase on synthetic raw images: blocks with real headers
 * written with heapann_block.h, a scan built by hand (so that only reach.c is under
 * test), roots added by the test. Asserts the exact category of every block, the
 * parents, --refs and --why links, exclusions (also inside a block: a task's
 * stack), that the threaded root scan of
 * a large root gives the same answer as one thread, a 32-bit big-endian image,
 * blocks read across two segments and up to the end of a cut core, and random
 * heaps in three regions against a plain reference of memcheck's algorithm (also
 * with the scanner's own scan, whose notes of address words skip blocks).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "corrupt.h"
#include "heapann_block.h"
#include "heapann_stats.h"
#include "reach.h"

#define BASE 0x10000ull

static unsigned W = 8;         /* target word size of the image being built */
static int BIG;                /* and its byte order */
static unsigned char *mem;     /* the image being built */
static size_t mem_size;

static uint64_t mem_base = BASE; /* target address of mem[0] */

static void put(uint64_t addr, uint64_t v)
{
	for (unsigned i = 0; i < W; i++)
		mem[addr - mem_base + (BIG ? W - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

/* Blocks of the image, in address order as the scan gives them. */
static struct cp_block blocks[64];
static size_t nblocks;

/* Write a block header for user data at 'user' (depth 1) and record the block. */
static uint32_t block(uint64_t user, uint64_t size, int freed)
{
	uint64_t h = user - heapann_header_bytes(1, W);
	uint64_t info = heapann_info_make(0, 0);
	struct cp_block *b = &blocks[nblocks];

	put(h + 0 * W, freed ? heapann_start_freed(W) : heapann_start_live(W));
	put(h + 1 * W, info);
	put(h + 2 * W, size);
	put(h + 3 * W, 1);
	put(h + 4 * W, nblocks + 1);
	put(h + 5 * W, heapann_check(h, size, 1, nblocks + 1, info, W));
	put(h + 6 * W, 0x401234);
	put(h + 7 * W, (freed ? heapann_end_freed(W) : heapann_end_live(W)) | 1);
	memset(b, 0, sizeof(*b));
	b->user = user;
	b->size = size;
	b->seq = nblocks + 1;
	b->depth = 1;
	b->w = W;
	b->state = freed ? CP_FREED : CP_LIVE;
	return (uint32_t)nblocks++;
}

static struct cp_image *image_write(const char *path)
{
	struct cp_error err = { 0 };
	FILE *f = fopen(path, "wb");
	struct cp_image *img;

	if (!f || fwrite(mem, 1, mem_size, f) != mem_size || fclose(f) != 0)
		return NULL;
	img = cp_image_open_raw(path, BASE, W, BIG, W == 8 ? 62 : 8, &err);
	if (!img)
		fprintf(stderr, "%s\n", err.msg);
	return img;
}

static void scan_fill(struct cp_scan *sc)
{
	static struct cp_stack st = { 0, 1, 0 };
	static uint32_t frames[1] = { 0 };
	static uint64_t addrs[1] = { 0x401234 };

	memset(sc, 0, sizeof(*sc));
	sc->blocks = blocks;
	sc->nblocks = nblocks;
	for (size_t i = 0; i < nblocks; i++) {
		if (blocks[i].state == CP_LIVE)
			sc->nlive++;
		else
			sc->nfreed++;
	}
	sc->stacks = &st;
	sc->nstacks = 1;
	sc->stack_frames = frames;
	sc->nstack_frames = 1;
	sc->addrs = addrs;
	sc->naddrs = 1;
}

/* The setup of most tests below: mem written out and opened as a raw image,
 * its blocks in *sc and ROOT the one root in *roots. Returns the image (the
 * caller frees it; *roots is the caller's to release either way), or NULL after
 * a failed check named WHAT. */
static struct cp_image *image_setup(const char *path, const char *what, struct cp_scan *sc,
				    struct an_roots *roots, const struct an_root *root)
{
	struct cp_image *img = image_write(path);

	if (!img) {
		CHECK(what, 0);
		return NULL;
	}
	scan_fill(sc);
	an_roots_add(roots, root);
	return img;
}

/* user address of the n-th slot: one block every 0x100 bytes from BASE + 0x1000 */
static uint64_t slot(unsigned n)
{
	return BASE + 0x1000 + (uint64_t)n * 0x100;
}

static void test_categories(const char *path)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots;
	struct an_reach r;
	struct an_reach_options opt = { 1, 1, 0 };
	struct an_root root = { BASE, BASE + 0x100, AN_ROOT_USER, -1, NULL, 0 };
	struct an_root root2 = { 0, 0, AN_ROOT_USER, -1, NULL, 0 };
	uint64_t rw = BASE;   /* next root word */
	struct an_ref *refs = NULL, link;
	size_t nrefs = 0;

	mem_size = 0x4000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	/* slot layout, in address order */
	uint32_t A = block(slot(0), 32, 0);   /* root -> A: reachable */
	uint32_t B = block(slot(1), 32, 0);   /* A -> B: reachable */
	uint32_t C = block(slot(2), 32, 0);   /* root -> C+8 only: possibly lost */
	uint32_t D = block(slot(3), 32, 0);   /* C -> D (start): possibly lost */
	uint32_t E = block(slot(4), 32, 0);   /* A -> E+16: possibly lost */
	uint32_t F = block(slot(5), 32, 0);   /* F <-> G cycle: F definitely lost */
	uint32_t G = block(slot(6), 32, 0);   /* ... G indirectly lost */
	uint32_t H = block(slot(7), 32, 0);   /* H -> I -> J: H definitely lost */
	uint32_t I = block(slot(8), 32, 0);
	uint32_t J = block(slot(9), 32, 0);
	uint32_t L = block(slot(10), 32, 0);  /* pointed to only by M (higher address) */
	uint32_t M = block(slot(11), 32, 0);  /* unreferenced: definitely lost, L indirect */
	uint32_t N = block(slot(12), 32, 1);  /* freed, points to O; root points to N */
	uint32_t O = block(slot(13), 32, 0);  /* only a freed block points here: definitely lost */
	uint32_t P = block(slot(14), 0, 0);   /* size 0, root -> P: reachable */
	uint32_t Q = block(slot(15), 0, 0);   /* size 0, root -> Q+1 only: definitely lost */
	uint32_t S = block(slot(16), 32, 0);  /* root -> S+32 (one past): definitely lost */
	uint32_t U = block(slot(17), 32, 0);  /* inside root2's range, points to T */
	uint32_t T = block(slot(18), 32, 0);  /* only from U's data: indirectly lost */
	uint32_t V = block(slot(19), 32, 0);  /* only from an excluded root word */
	uint32_t X = block(slot(20), 32, 0);  /* root -> X+8, then B -> X: reachable (upgrade) */
	uint32_t Y = block(slot(21), 32, 0);  /* X -> Y: reachable after X's upgrade */
	uint32_t Z = block(slot(22), 32, 0);  /* header words of Z point to ... nothing followed */

	put(rw, slot(0)), rw += 8;            /* -> A */
	put(rw, slot(2) + 8), rw += 8;        /* -> C+8 */
	put(rw, slot(12)), rw += 8;           /* -> N (freed) */
	put(rw, slot(14)), rw += 8;           /* -> P */
	put(rw, slot(15) + 1), rw += 8;       /* -> Q+1 */
	put(rw, slot(16) + 32), rw += 8;      /* -> S+32 */
	put(rw, slot(20) + 8), rw += 8;       /* -> X+8 */
	put(BASE + 0xF8, slot(19));           /* -> V, excluded below */
	put(slot(0), slot(1));                /* A -> B */
	put(slot(0) + 8, slot(4) + 16);       /* A -> E+16 */
	put(slot(1) + 24, slot(20));          /* B -> X */
	put(slot(2), slot(3));                /* C -> D */
	put(slot(5) + 8, slot(6));            /* F -> G */
	put(slot(6) + 16, slot(5) + 4);       /* G -> F+4 */
	put(slot(7), slot(8));                /* H -> I */
	put(slot(8), slot(9));                /* I -> J */
	put(slot(11), slot(10));              /* M -> L */
	put(slot(12) + 8, slot(13));          /* freed N -> O */
	put(slot(17), slot(18));              /* U -> T */
	put(slot(20), slot(21));              /* X -> Y */
	put(slot(22) - 8 * 2, slot(1));       /* Z's header (a return address slot) -> B */
	(void)Z;

	img = image_write(path);
	CHECK("raw image opens", img != NULL);
	if (!img)
		return;
	scan_fill(&sc);
	CHECK("a raw dump has no roots of its own", an_roots_find(img, &sc, &roots) == 0 && roots.n == 0);
	CHECK("add the data root", an_roots_add(&roots, &root) == 0);
	root2.start = slot(17) - 0x80;        /* spans U's header and data */
	root2.end = slot(17) + 0x80;
	CHECK("add a root over a block", an_roots_add(&roots, &root2) == 0);
	CHECK("exclude the last root word", an_roots_exclude(&roots, BASE + 0xF8, BASE + 0x100) == 0);
	CHECK("build", an_reach_build(img, &sc, &roots, &opt, &r) == 0);

	CHECK("A reachable (root start pointer)", r.cat[A] == AN_REACH_REACHABLE);
	CHECK("B reachable (from A)", r.cat[B] == AN_REACH_REACHABLE);
	CHECK("C possibly lost (root interior pointer)", r.cat[C] == AN_REACH_POSSIBLE);
	CHECK("D possibly lost (start pointer from a possibly lost block)", r.cat[D] == AN_REACH_POSSIBLE);
	CHECK("E possibly lost (interior pointer from a reachable block)", r.cat[E] == AN_REACH_POSSIBLE);
	CHECK("cycle: F (lower address) definitely lost", r.cat[F] == AN_REACH_DEFINITE);
	CHECK("cycle: G indirectly lost", r.cat[G] == AN_REACH_INDIRECT);
	CHECK("list head H definitely lost", r.cat[H] == AN_REACH_DEFINITE);
	CHECK("list I, J indirectly lost", r.cat[I] == AN_REACH_INDIRECT && r.cat[J] == AN_REACH_INDIRECT);
	CHECK("L (leader first, then taken by M) indirectly lost", r.cat[L] == AN_REACH_INDIRECT);
	CHECK("M definitely lost", r.cat[M] == AN_REACH_DEFINITE);
	CHECK("freed block N not classified", r.cat[N] == AN_REACH_NONE);
	CHECK("O: a freed block's data is no reference", r.cat[O] == AN_REACH_DEFINITE);
	CHECK("P: size 0, start pointer: reachable", r.cat[P] == AN_REACH_REACHABLE);
	CHECK("Q: size 0, pointer past it: definitely lost", r.cat[Q] == AN_REACH_DEFINITE);
	CHECK("S: pointer one past the end: definitely lost", r.cat[S] == AN_REACH_DEFINITE);
	CHECK("U: a root over a block does not read the block", r.cat[U] == AN_REACH_DEFINITE);
	CHECK("T: indirectly lost through U", r.cat[T] == AN_REACH_INDIRECT);
	CHECK("V: excluded root word is no reference", r.cat[V] == AN_REACH_DEFINITE);
	CHECK("X: upgraded from possibly lost to reachable", r.cat[X] == AN_REACH_REACHABLE);
	CHECK("Y: reachable through the upgraded X", r.cat[Y] == AN_REACH_REACHABLE);
	CHECK("Z: header words are no references (B stays from A)", r.from[B] == A);
	CHECK("totals", r.blocks[AN_REACH_REACHABLE] == 5 && r.blocks[AN_REACH_POSSIBLE] == 3 &&
	      r.blocks[AN_REACH_INDIRECT] == 5 && r.blocks[AN_REACH_DEFINITE] == 9 &&
	      r.blocks[AN_REACH_NONE] == 0);
	CHECK("bytes", r.bytes[AN_REACH_REACHABLE] == 4 * 32 && r.bytes[AN_REACH_DEFINITE] == 8 * 32);
	CHECK("parent of A is the data root", r.from[A] == (AN_REACH_FROM_ROOT | 0));
	CHECK("parent of Y is X", r.from[Y] == X);
	CHECK("parent of X is B (the start pointer)", r.from[X] == B);
	CHECK("parent of G is F, of J is I", r.from[G] == F && r.from[J] == I);
	CHECK("parent of L is M", r.from[L] == M);
	CHECK("definitely lost: no parent", r.from[M] == AN_REACH_FROM_NONE && r.from[H] == AN_REACH_FROM_NONE);
	CHECK("link root -> A is the first root word",
	      an_reach_link(img, &sc, &roots, r.from[A], A, &link) == 0 && link.addr == BASE &&
	      link.value == slot(0));
	CHECK("link B -> X", an_reach_link(img, &sc, &roots, B, X, &link) == 0 &&
	      link.addr == slot(1) + 24 && link.block == B);
	CHECK("link G -> F is the interior pointer", an_reach_link(img, &sc, &roots, G, F, &link) == 0 &&
	      link.addr == slot(6) + 16 && link.value == slot(5) + 4);
	CHECK("refs of X: the root word and B's word",
	      an_reach_refs(img, &sc, &roots, X, &refs, &nrefs) == 0 && nrefs == 2 &&
	      refs[0].addr == BASE + 6 * 8 && refs[0].block == UINT32_MAX &&
	      refs[1].addr == slot(1) + 24 && refs[1].block == B);
	free(refs);
	CHECK("refs of B leave out Z's header",
	      an_reach_refs(img, &sc, &roots, B, &refs, &nrefs) == 0 && nrefs == 1 &&
	      refs[0].block == A);
	free(refs);
	CHECK("refs of O include the freed block's word",
	      an_reach_refs(img, &sc, &roots, O, &refs, &nrefs) == 0 && nrefs == 1 &&
	      refs[0].block == N);
	free(refs);
	CHECK("locate a root", an_roots_locate(&roots, BASE + 8) == 0 &&
	      an_roots_locate(&roots, slot(17)) == 1 && an_roots_locate(&roots, slot(3)) == -1);
	an_reach_release(&r);
	an_roots_release(&roots);
	cp_image_free(img);
	free(mem);
}

/* A root of 24 MiB read by two threads: a start pointer near its end, an interior
 * one in its middle; same answer as one thread. */
static void test_threads(const char *path)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots = { 0 };
	struct an_reach r1, r2;
	struct an_reach_options o1 = { 1, 1, 0 }, o2 = { 2, 1, 0 };
	const uint64_t root_len = 24u << 20;
	struct an_root root = { BASE, BASE + root_len, AN_ROOT_USER, -1, NULL, 0 };
	uint64_t heap = BASE + root_len;

	mem_size = root_len + 0x10000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	uint32_t a = block(heap + 0x100, 64, 0), b = block(heap + 0x200, 64, 0);
	uint32_t c = block(heap + 0x300, 64, 0);

	put(BASE + root_len - 8, heap + 0x100);       /* -> a */
	put(BASE + root_len / 2, heap + 0x200 + 8);   /* -> b+8 */
	if (!(img = image_setup(path, "big image opens", &sc, &roots, &root)))
		return;
	CHECK("one thread", an_reach_build(img, &sc, &roots, &o1, &r1) == 0);
	CHECK("two threads", an_reach_build(img, &sc, &roots, &o2, &r2) == 0);
	CHECK("threads: same categories", memcmp(r1.cat, r2.cat, nblocks) == 0);
	CHECK("threads: exact", r2.cat[a] == AN_REACH_REACHABLE && r2.cat[b] == AN_REACH_POSSIBLE &&
	      r2.cat[c] == AN_REACH_DEFINITE);
	CHECK("threads: whole root read", r2.root_bytes == root_len && r1.root_bytes == root_len);
	an_reach_release(&r1);
	an_reach_release(&r2);
	an_roots_release(&roots);
	cp_image_free(img);
	free(mem);
}

/* A 32-bit big-endian image (a MIPS firmware): words decoded in target order. */
static void test_be32(const char *path)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots = { 0 };
	struct an_reach r;
	struct an_reach_options o = { 1, 1, 0 };
	struct an_root root = { BASE, BASE + 0x40, AN_ROOT_USER, -1, NULL, 0 };
	struct an_ref *refs = NULL;
	size_t nrefs = 0;

	W = 4;
	BIG = 1;
	mem_size = 0x2000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	uint32_t a = block(BASE + 0x100, 16, 0), b = block(BASE + 0x200, 16, 0);
	uint32_t c = block(BASE + 0x300, 16, 0), d = block(BASE + 0x400, 16, 0);

	put(BASE + 4, BASE + 0x100);          /* root -> a */
	put(BASE + 0x100 + 4, BASE + 0x200);  /* a -> b */
	put(BASE + 0x300 + 8, BASE + 0x404);  /* c -> d+4 */
	put(BASE + 8, 0x00000100);            /* byte-swapped BASE+0x100 would be garbage */
	if (!(img = image_setup(path, "be32 image opens", &sc, &roots, &root)))
		goto out;
	CHECK("be32 build", an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("be32 categories", r.cat[a] == AN_REACH_REACHABLE && r.cat[b] == AN_REACH_REACHABLE &&
	      r.cat[c] == AN_REACH_DEFINITE && r.cat[d] == AN_REACH_INDIRECT);
	CHECK("be32 refs of d", an_reach_refs(img, &sc, &roots, d, &refs, &nrefs) == 0 && nrefs == 1 &&
	      refs[0].addr == BASE + 0x308 && refs[0].value == BASE + 0x404 && refs[0].block == c);
	free(refs);
	an_reach_release(&r);
	cp_image_free(img);
out:
	an_roots_release(&roots);
	free(mem);
	W = 8;
	BIG = 0;
}

/* A statistics region (valid header at a page) inside a root: its words are no
 * references once an_roots_exclude_stats() found it; a copy elsewhere (wrong check
 * word) is not taken for one. */
static void test_stats(const char *path)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots = { 0 };
	struct an_reach r;
	struct an_reach_options o = { 1, 0, 0 };
	struct an_root root = { BASE, BASE + 0x4000, AN_ROOT_USER, -1, NULL, 0 };
	uint64_t R = BASE + 0x1000, copy = BASE + 0x3000, h[HEAPANN_STATS_HDR_WORDS] = { 0 };

	mem_size = 0x8000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	uint32_t a = block(BASE + 0x5000, 32, 0), b = block(BASE + 0x5100, 32, 0);

	h[HEAPANN_SH_MAGIC0] = HEAPANN_STATS_MAGIC0_64;
	h[HEAPANN_SH_MAGIC1] = HEAPANN_STATS_MAGIC1_64;
	h[HEAPANN_SH_VERSION] = HEAPANN_STATS_VERSION;
	h[HEAPANN_SH_HDR_WORDS] = HEAPANN_STATS_HDR_WORDS;
	h[HEAPANN_SH_TOTAL] = 0x1800;
	h[HEAPANN_SH_STACK_CAP] = 16;
	h[HEAPANN_SH_STACK_DEPTH] = 8;
	h[HEAPANN_SH_TL_CAP] = 1024;
	h[HEAPANN_SH_CHECK] = heapann_check(R, 0x1800, 8, 16, HEAPANN_STATS_VERSION | 1024u << 8, 8);
	for (unsigned k = 0; k < HEAPANN_STATS_HDR_WORDS; k++) {
		put(R + 8 * k, h[k]);
		put(copy + 8 * k, h[k]);
	}
	put(R + 0x1400, BASE + 0x5000);      /* inside the region (R + TOTAL = R + 0x1800) */
	put(copy + 0x200, BASE + 0x5100);    /* after the copy's header: an ordinary root word */
	if (!(img = image_setup(path, "stats image opens", &sc, &roots, &root)))
		goto out;
	CHECK("stats region found and excluded", an_roots_exclude_stats(img, NULL, &roots) == 0 &&
	      roots.nexclude == 1 && roots.exclude[0].start == R && roots.exclude[0].end == R + 0x1800);
	{
		/* the same from the scan's signatures (the real region, its copy, and
		 * one at no page start), reading no other page */
		uint64_t sigs[] = { R, R + 0x10, copy };
		struct cp_scan s2 = sc;

		s2.sigs = sigs;
		s2.nsigs = 3;
		roots.nexclude = 0;
		CHECK("stats region found from the scan's signatures", an_roots_exclude_stats(img, &s2, &roots) == 0 &&
		      roots.nexclude == 1 && roots.exclude[0].start == R && roots.exclude[0].end == R + 0x1800);
	}
	CHECK("stats build", an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("a word in the region is no reference", r.cat[a] == AN_REACH_DEFINITE);
	CHECK("a copy of the header is no region", r.cat[b] == AN_REACH_REACHABLE);
	an_reach_release(&r);
	cp_image_free(img);
out:
	an_roots_release(&roots);
	free(mem);
}

/* Two switched-out task stacks (--task-sp): one in the data root, one a heap
 * block K reached from it. Below each saved stack pointer a stale word points to
 * a block (D, L); above K's a live one (M). With the dead parts excluded, D and L
 * are definitely lost, M stays reachable and --refs sees no word of L; without,
 * the stale words hold D and L. */
static void test_task_stack(const char *path)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots = { 0 };
	struct an_reach r;
	struct an_reach_options o = { 1, 1, 0 };
	struct an_root root = { BASE, BASE + 0x1000, AN_ROOT_USER, -1, NULL, 0 };
	uint64_t ks = BASE + 0x5000, st = BASE + 0x100;   /* K's data; the static stack */
	struct an_ref *refs = NULL;
	size_t nrefs = 9;

	mem_size = 0x6000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	uint32_t K = block(ks, 0xC0, 0), L = block(BASE + 0x5200, 32, 0),
		 M = block(BASE + 0x5300, 32, 0), D = block(BASE + 0x5400, 32, 0);

	put(BASE, ks);                /* the task table -> K */
	put(st + 0x20, BASE + 0x5400); /* static stack, below its sp (st + 0x80) -> D */
	put(ks + 0x10, BASE + 0x5200); /* K below its sp (ks + 0x40) -> L */
	put(ks + 0x80, BASE + 0x5300); /* K above its sp -> M */
	if (!(img = image_setup(path, "task stack image opens", &sc, &roots, &root)))
		goto out;
	CHECK("task stacks: build without exclusions", an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("task stacks: the stale words hold D and L", r.cat[D] == AN_REACH_REACHABLE &&
	      r.cat[L] == AN_REACH_REACHABLE && r.cat[M] == AN_REACH_REACHABLE);
	an_reach_release(&r);
	CHECK("task stacks: exclude below both stack pointers",
	      an_roots_exclude_stack(&roots, st, st + 0x80) == 0 &&
	      an_roots_exclude_stack(&roots, ks, ks + 0x40) == 0 && roots.nexclude == 2 &&
	      roots.exclude[0].kind == AN_EXCLUDE_STACK && roots.exclude[1].start == ks);
	CHECK("task stacks: build", an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("task stacks: K reachable from the task table", r.cat[K] == AN_REACH_REACHABLE);
	CHECK("task stacks: D definitely lost (the static stack's dead part)", r.cat[D] == AN_REACH_DEFINITE);
	CHECK("task stacks: L definitely lost (the heap stack's dead part)", r.cat[L] == AN_REACH_DEFINITE);
	CHECK("task stacks: M reachable from K's live part", r.cat[M] == AN_REACH_REACHABLE &&
	      r.from[M] == K);
	CHECK("task stacks: --refs of L finds no word", an_reach_refs(img, &sc, &roots, L, &refs, &nrefs) == 0 &&
	      nrefs == 0);
	free(refs);
	an_reach_release(&r);
	cp_image_free(img);
out:
	an_roots_release(&roots);
	free(mem);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* A heap big enough for the mark to read batches on two threads: the same
 * categories and parents as one thread. */
/* 1 if the page holding p is mapped in this process, 0 if not, -1 unknown. */
static int page_present(const void *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e;
	int rc = -1;

	if (fd >= 0 && pread(fd, &e, 8, (off_t)((uintptr_t)p / 4096 * 8)) == 8)
		rc = (int)(e >> 63);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Pages of img's live blocks' data that are mapped in this process, of *total. */
static size_t data_pages_present(const struct cp_image *img, const struct cp_scan *sc, size_t *total)
{
	size_t n = 0;
	uintptr_t last = 0;

	*total = 0;
	for (size_t i = 0; i < sc->nblocks; i++) {
		const struct cp_block *b = &sc->blocks[i];
		const unsigned char *d = img->map + (b->user - BASE);
		uintptr_t pg = (uintptr_t)d & ~(uintptr_t)4095;

		if (b->state != CP_LIVE || b->size < 8 || pg == last)
			continue;
		last = pg;
		(*total)++;
		n += page_present(d) == 1;
	}
	return n;
}

/* The same mark with pages given back after every 2 MiB read (two threads, and
 * one), and with none given back: same categories and parents as *want; pages of
 * block data mapped afterwards: none, and all. */
static void released_same(const struct cp_image *img, const struct cp_scan *sc,
			  const struct an_roots *roots, const struct an_reach *want, size_t n)
{
	struct an_reach_options tiny2 = { 2, 1, 1 }, tiny1 = { 1, 1, 1 }, never = { 2, 1, UINT64_MAX };
	struct an_reach r;
	size_t total, mapped;

	if (page_present(img->map) < 0) {
		printf("# /proc/self/pagemap unreadable: page checks skipped\n");
		return;
	}
	CHECK("released every 2 MiB, two threads: built", an_reach_build(img, sc, roots, &tiny2, &r) == 0);
	CHECK("released every 2 MiB, two threads: same categories and parents",
	      memcmp(r.cat, want->cat, n) == 0 && memcmp(r.from, want->from, n * sizeof(*r.from)) == 0 &&
	      r.block_bytes == want->block_bytes && r.root_bytes == want->root_bytes);
	mapped = data_pages_present(img, sc, &total);
	printf("# released %llu bytes; %zu of %zu data pages mapped after\n",
	       (unsigned long long)r.released, mapped, total);
	CHECK("released every 2 MiB: at least every page of live data given back once",
	      r.released >= total * 4096 && total > 2000);
	CHECK("released every 2 MiB: no page of live data left mapped", mapped == 0);
	an_reach_release(&r);
	CHECK("released every 2 MiB, one thread: same categories and parents",
	      an_reach_build(img, sc, roots, &tiny1, &r) == 0 && memcmp(r.cat, want->cat, n) == 0 &&
	      memcmp(r.from, want->from, n * sizeof(*r.from)) == 0);
	an_reach_release(&r);
	CHECK("never released: same categories and parents",
	      an_reach_build(img, sc, roots, &never, &r) == 0 && memcmp(r.cat, want->cat, n) == 0 &&
	      memcmp(r.from, want->from, n * sizeof(*r.from)) == 0 && r.released == 0);
	CHECK("never released: every page of live data mapped after",
	      data_pages_present(img, sc, &total) == total);
	an_reach_release(&r);
}

static void test_parallel_mark(const char *path)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots = { 0 };
	struct an_reach r1, r2;
	struct an_reach_options o1 = { 1, 1, 0 }, o2 = { 2, 1, 0 };
	struct an_root root = { BASE, BASE + 0x1000, AN_ROOT_USER, -1, NULL, 0 };
	static struct cp_block big[40000];
	const size_t n = 20000;
	uint64_t a = BASE + 0x2000;

	mem_size = 0x2000 + n * 0x200 + 0x1000;
	mem = calloc(1, mem_size);
	for (size_t i = 0; i < n; i++, a += 0x200) {
		uint64_t h = a, user = a + 64, size = 8 * (1 + rnd(50));

		put(h + 2 * W, size);
		big[i].user = user;
		big[i].size = size;
		big[i].w = W;   /* h = user - heapann_header_bytes(1, W) */
		big[i].depth = 1;
		big[i].seq = i + 1;
		big[i].state = rnd(20) ? CP_LIVE : CP_FREED;
	}
	for (size_t i = 0; i < n; i++)
		for (uint64_t w = big[i].user; w + 8 <= big[i].user + big[i].size; w += 8) {
			const struct cp_block *t = &big[rnd(n)];

			if (rnd(4) == 0)
				put(w, rnd(3) ? t->user : t->user + rnd(t->size));
		}
	for (uint64_t w = BASE; w < BASE + 0x1000; w += 8)
		if (rnd(8) == 0)
			put(w, big[rnd(n)].user + (rnd(4) ? 0 : 8));
	img = image_write(path);
	if (!img) {
		CHECK("parallel image opens", 0);
		goto out;
	}
	memset(&sc, 0, sizeof(sc));
	sc.blocks = big;
	sc.nblocks = n;
	for (size_t i = 0; i < n; i++)
		big[i].state == CP_LIVE ? sc.nlive++ : sc.nfreed++;
	an_roots_add(&roots, &root);
	CHECK("parallel mark: one thread", an_reach_build(img, &sc, &roots, &o1, &r1) == 0);
	CHECK("parallel mark: two threads", an_reach_build(img, &sc, &roots, &o2, &r2) == 0);
	CHECK("parallel mark: same categories", memcmp(r1.cat, r2.cat, n) == 0);
	CHECK("parallel mark: same parents", memcmp(r1.from, r2.from, n * sizeof(*r1.from)) == 0);
	CHECK("parallel mark: every category seen", r2.blocks[AN_REACH_REACHABLE] && r2.blocks[AN_REACH_POSSIBLE] &&
	      r2.blocks[AN_REACH_INDIRECT] && r2.blocks[AN_REACH_DEFINITE]);
	CHECK("parallel mark: all block data read once or twice",
	      r2.block_bytes == r1.block_bytes && r2.block_bytes >= 8 * sc.nlive);
	CHECK("parallel mark: a 10 MB image is not released by default", r1.released == 0 && r2.released == 0);
	released_same(img, &sc, &roots, &r1, n);
	an_reach_release(&r1);
	an_reach_release(&r2);
	cp_image_free(img);
out:
	an_roots_release(&roots);
	free(mem);
}

/* ---- the roots of a synthetic x86-64 core ---- */

/* One PT_LOAD of the synthetic core: [vaddr, vaddr + size) of mem, its flags. */
struct tseg {
	uint64_t vaddr, size;
	uint32_t flags;
};

static void note_add(unsigned char *buf, size_t *n, uint32_t type, const void *desc, uint32_t descsz)
{
	Elf64_Nhdr nh = { 5, descsz, type };

	memcpy(buf + *n, &nh, sizeof(nh));
	*n += sizeof(nh);
	memcpy(buf + *n, "CORE\0\0\0", 8);
	*n += 8;
	memcpy(buf + *n, desc, descsz);
	*n += (descsz + 3) & ~3u;
}

/* NT_PRSTATUS of x86-64: pid at 32, 27 registers at 112 (rsp 19, fs_base 21). */
static uint32_t prstatus(unsigned char *d, int pid, uint64_t sp, uint64_t fs_base, uint64_t rbx)
{
	uint64_t regs[27] = { 0 };

	memset(d, 0, 336);
	memcpy(d + 32, &pid, 4);
	regs[5] = rbx;
	regs[16] = 0x400100;
	regs[19] = sp;
	regs[21] = fs_base;
	memcpy(d + 112, regs, sizeof(regs));
	return 336;
}

static struct cp_image *core_write(const char *path, const struct tseg *sg, size_t nseg,
				   const unsigned char *notes, size_t nnotes)
{
	struct cp_error err = { 0 };
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	FILE *f = fopen(path, "wb");
	uint64_t off = sizeof(eh) + (nseg + 1) * sizeof(ph);
	struct cp_image *img;

	if (!f)
		return NULL;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = (uint16_t)(nseg + 1);
	fwrite(&eh, sizeof(eh), 1, f);
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_NOTE;
	ph.p_offset = off;
	ph.p_filesz = nnotes;
	fwrite(&ph, sizeof(ph), 1, f);
	off += (nnotes + 4095) & ~(uint64_t)4095;
	for (size_t i = 0; i < nseg; i++) {
		memset(&ph, 0, sizeof(ph));
		ph.p_type = PT_LOAD;
		ph.p_flags = sg[i].flags;
		ph.p_offset = off;
		ph.p_vaddr = sg[i].vaddr;
		ph.p_filesz = ph.p_memsz = sg[i].size;
		ph.p_align = 4096;
		fwrite(&ph, sizeof(ph), 1, f);
		off += sg[i].size;
	}
	fwrite(notes, 1, nnotes, f);
	{
		static const unsigned char zero[4096];

		fwrite(zero, 1, ((nnotes + 4095) & ~(size_t)4095) - nnotes, f);
	}
	for (size_t i = 0; i < nseg; i++)
		fwrite(mem + (sg[i].vaddr - mem_base), 1, sg[i].size, f);
	if (fclose(f) != 0)
		return NULL;
	img = cp_image_open_core(path, &err);
	if (!img)
		fprintf(stderr, "# %s\n", err.msg);
	return img;
}

static long root_of_kind(const struct an_roots *r, uint32_t kind, int thread, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].kind == kind && r->v[i].thread == thread && r->v[i].start == start &&
		    r->v[i].end == end)
			return (long)i;
	return -1;
}

/* 1 when two root sets hold the same roots and exclusions, in the same order. */
static int roots_same(const struct an_roots *a, const struct an_roots *b)
{
	if (a->n != b->n || a->nexclude != b->nexclude)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].start != b->v[i].start || a->v[i].end != b->v[i].end ||
		    a->v[i].kind != b->v[i].kind || a->v[i].thread != b->v[i].thread ||
		    a->v[i].in_block != b->v[i].in_block ||
		    (a->v[i].module == NULL) != (b->v[i].module == NULL) ||
		    (a->v[i].module && strcmp(a->v[i].module, b->v[i].module)))
			return 0;
	for (size_t i = 0; i < a->nexclude; i++)
		if (a->exclude[i].start != b->exclude[i].start || a->exclude[i].end != b->exclude[i].end)
			return 0;
	return 1;
}

/* The largest user - start of the blocks (cp_scan.lead_max as the scanner sets it). */
static uint64_t lead_of(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < nblocks; i++)
		if (blocks[i].user - cp_block_start(&blocks[i]) > m)
			m = blocks[i].user - cp_block_start(&blocks[i]);
	return m;
}

static void test_core_roots(const char *path)
{
	enum { RX = PF_R | PF_X, RW = PF_R | PF_W, RO = PF_R };
	static const struct tseg sg[] = {
		{ 0x400000, 0x1000, RX },   /* exe code */
		{ 0x401000, 0x1000, RW },   /* exe data (file) */
		{ 0x402000, 0x1000, RW },   /* its bss (anonymous, right after) */
		{ 0x500000, 0x4000, RW },   /* heap */
		{ 0x600000, 0x1000, RW },   /* thread 1 stack, split by the dumper ... */
		{ 0x601000, 0x1000, RW },   /* ... in two segments */
		{ 0x700000, 0x1000, RW },   /* thread 1 TLS (fs_base) */
		{ 0x7FF000, 0x1000, 0 },    /* guard page */
		{ 0x800000, 0x1000, RW },   /* thread 2 stack, its TLS at the top */
		{ 0x900000, 0x2000, RW },   /* another mapping: libheapann's statistics, then data */
		{ 0xA00000, 0x1000, RO },   /* relro of the exe (read-only now) */
	};
	unsigned char notes[4096], d[512];
	size_t nn = 0;
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots;
	struct an_reach r;
	struct an_reach_options o = { 1, 1, 0 };
	uint32_t b[12];
	uint64_t h[HEAPANN_STATS_HDR_WORDS] = { 0 };

	mem_base = 0x400000;
	mem_size = 0x601000 + 0x10000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	for (unsigned i = 0; i < 12; i++)
		b[i] = block(0x500100 + 0x100 * i, 32, 0);
	put(0x401010, blocks[b[0]].user);         /* exe data */
	put(0x402020, blocks[b[1]].user);         /* bss */
	put(0x601800, blocks[b[2]].user);         /* thread 1 stack, upper segment */
	put(0x600400, blocks[b[3]].user);         /* below thread 1's sp: stale */
	put(0x700108, blocks[b[4]].user);         /* thread 1 TLS */
	put(0x800F80, blocks[b[5]].user);         /* thread 2 stack */
	put(0x800EC0, blocks[b[5]].user);         /* the same in its red zone: stale */
	/* b[6]: thread 2's rbx */
	put(0x901008, blocks[b[7]].user);         /* another mapping */
	put(0x900400, blocks[b[8]].user);         /* inside the statistics region */
	put(0xA00010, blocks[b[9]].user);         /* read-only: no root */
	put(0x400800, blocks[b[10]].user);        /* code: no root */
	put(0x800200, blocks[b[11]].user);        /* below thread 2's sp: stale */
	h[HEAPANN_SH_MAGIC0] = HEAPANN_STATS_MAGIC0_64;
	h[HEAPANN_SH_MAGIC1] = HEAPANN_STATS_MAGIC1_64;
	h[HEAPANN_SH_VERSION] = HEAPANN_STATS_VERSION;
	h[HEAPANN_SH_TOTAL] = 0x1000;
	h[HEAPANN_SH_TL_CAP] = 1024;
	h[HEAPANN_SH_CHECK] = heapann_check(0x900000, 0x1000, 0, 0, HEAPANN_STATS_VERSION | 1024u << 8, 8);
	for (unsigned k = 0; k < HEAPANN_STATS_HDR_WORDS; k++)
		put(0x900000 + 8 * k, h[k]);

	note_add(notes, &nn, NT_PRSTATUS, d, prstatus(d, 100, 0x600800, 0x700100, 0));
	note_add(notes, &nn, NT_PRSTATUS, d, prstatus(d, 101, 0x800F00, 0x800FF0, blocks[b[6]].user));
	{
		/* NT_FILE: count, page size, (start, end, page offset) each, then names */
		uint64_t w[2 + 3 * 3] = { 3, 4096, 0x400000, 0x401000, 0, 0x401000, 0x402000, 1,
					  0xA00000, 0xA01000, 2 };
		static const char names[] = "/bin/prog\0/bin/prog\0/bin/prog";
		unsigned char fd[256];

		memcpy(fd, w, sizeof(w));
		memcpy(fd + sizeof(w), names, sizeof(names));
		note_add(notes, &nn, 0x46494c45, fd, (uint32_t)(sizeof(w) + sizeof(names)));
	}
	img = core_write(path, sg, sizeof(sg) / sizeof(sg[0]), notes, nn);
	CHECK("synthetic core opens", img != NULL);
	if (!img)
		goto out;
	CHECK("synthetic core: 2 threads, 3 file mappings", img->nthreads == 2 && img->nfiles == 3);
	scan_fill(&sc);
	CHECK("roots found", an_roots_find(img, &sc, &roots) == 0);
	CHECK("root: exe data", root_of_kind(&roots, AN_ROOT_DATA, -1, 0x401000, 0x402000) >= 0);
	CHECK("root: bss after the exe", root_of_kind(&roots, AN_ROOT_DATA, -1, 0x402000, 0x403000) >= 0 &&
	      !strcmp(roots.v[root_of_kind(&roots, AN_ROOT_DATA, -1, 0x402000, 0x403000)].module, "/bin/prog"));
	/* x86-64: from the 128-byte red zone below sp */
	CHECK("root: thread 1 stack from sp - 128 through the split", root_of_kind(&roots, AN_ROOT_STACK, 0, 0x600780, 0x602000) >= 0);
	CHECK("root: thread 2 stack from sp - 128", root_of_kind(&roots, AN_ROOT_STACK, 1, 0x800E80, 0x801000) >= 0);
	CHECK("root: thread 1 TLS", root_of_kind(&roots, AN_ROOT_TLS, 0, 0x700000, 0x701000) >= 0);
	CHECK("root: registers of both threads", root_of_kind(&roots, AN_ROOT_REGS, 0, 0, 0) >= 0 &&
	      root_of_kind(&roots, AN_ROOT_REGS, 1, 0, 0) >= 0);
	CHECK("root: the other mapping", root_of_kind(&roots, AN_ROOT_ANON, -1, 0x900000, 0x902000) >= 0);
	CHECK("no root in the heap, code, guard or relro", an_roots_locate(&roots, 0x500000) < 0 &&
	      an_roots_locate(&roots, 0x400800) < 0 && an_roots_locate(&roots, 0xA00010) < 0 &&
	      an_roots_locate(&roots, 0x7FF000) < 0 && an_roots_locate(&roots, 0x600400) < 0);
	CHECK("statistics region excluded", roots.nexclude == 1 && roots.exclude[0].start == 0x900000 &&
	      roots.exclude[0].end == 0x901000);
	{
		/* with lead_max known, the heap segments are found by a binary search
		 * per segment instead of a walk over every block: the same roots */
		struct an_roots r2;

		sc.lead_max = lead_of();
		CHECK("roots with lead_max: the same as block by block", sc.lead_max > 0 &&
		      an_roots_find(img, &sc, &r2) == 0 && roots_same(&roots, &r2));
		an_roots_release(&r2);
		sc.lead_max = 0;
	}
	CHECK("core build", an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("reached from data, bss, stacks, TLS, register, other mapping",
	      r.cat[b[0]] == AN_REACH_REACHABLE && r.cat[b[1]] == AN_REACH_REACHABLE &&
	      r.cat[b[2]] == AN_REACH_REACHABLE && r.cat[b[4]] == AN_REACH_REACHABLE &&
	      r.cat[b[5]] == AN_REACH_REACHABLE && r.cat[b[6]] == AN_REACH_REACHABLE &&
	      r.cat[b[7]] == AN_REACH_REACHABLE);
	CHECK("lost: below sp, statistics, relro, code",
	      r.cat[b[3]] == AN_REACH_DEFINITE && r.cat[b[8]] == AN_REACH_DEFINITE &&
	      r.cat[b[9]] == AN_REACH_DEFINITE && r.cat[b[10]] == AN_REACH_DEFINITE &&
	      r.cat[b[11]] == AN_REACH_DEFINITE);
	CHECK("parent of b6 is thread 2's registers",
	      r.from[b[6]] == (AN_REACH_FROM_ROOT | (uint32_t)root_of_kind(&roots, AN_ROOT_REGS, 1, 0, 0)));
	{
		struct an_ref link;

		CHECK("link: rbx of thread 2", an_reach_link(img, &sc, &roots, r.from[b[6]], b[6], &link) == 0 &&
		      link.thread == 1 && link.addr == 5);
		/* a frame and the red zone below sp hold it: the frame is named */
		CHECK("link: thread 2's frame, not the stale copy in its red zone",
		      an_reach_link(img, &sc, &roots, r.from[b[5]], b[5], &link) == 0 &&
		      link.addr == 0x800F80);
	}
	an_reach_release(&r);
	an_roots_release(&roots);
	cp_image_free(img);
out:
	free(mem);
	mem_base = BASE;
}

/* Two threads' stacks with no guard between them, which the kernel merges into
 * one mapping [0x600000, 0x630000): a page of the program's data, stack A
 * [0x601000, 0x611000), stack B [0x611000, 0x621000), more data up to the end.
 * Each stack's TCB is 0x940 below its top, with glibc's self pointers, guards,
 * (stackblock, stackblock_size, guardsize) 0x690 above it and, before them, a
 * (list.prev, tid) pair whose sum also ends above it; thread 1 (main) has its
 * stack and TLS elsewhere. VARIANT 0: every thread's fs_base known (a kernel
 * core). 1: A's and B's registers partial (libheapann's snapshot): their TCBs
 * found from the top of the mapping down. 2: no stackblock (each top from the
 * page of its TCB, no base: the data below A is not read). 3: A's and B's
 * thread pointers unknown: A's stack reads up to B's red zone, B's to the end. */
static void test_adjacent_stacks(const char *path, int variant)
{
	enum { RW = PF_R | PF_W };
	static const struct tseg sg[] = {
		{ 0x500000, 0x2000, RW },    /* heap */
		{ 0x600000, 0x30000, RW },   /* data, stack A, stack B, data */
		{ 0x700000, 0x1000, RW },    /* main's stack */
		{ 0x800000, 0x1000, RW },    /* main's TLS */
	};
	static const uint64_t tcb[3] = { 0x800100, 0x6106c0, 0x6206c0 }, sp[3] = { 0x700800, 0x608000, 0x618000 };
	static const uint64_t sguard = 0x1122334455667788ull, pguard = 0x99aabbccddeeff00ull;
	/* per block, the word holding its only pointer and the category per variant */
	static const struct {
		uint64_t at;
		uint8_t cat[4];
		const char *what;
	} ref[] = {
		{ 0x609000, { 1, 1, 1, 1 }, "A's live frames" },
		{ 0x612000, { 4, 4, 4, 1 }, "B's dead part" },
		{ 0x602000, { 4, 4, 4, 4 }, "A's dead part" },
		{ 0x600100, { 1, 1, 4, 4 }, "the data below A's stack" },
		{ 0x622000, { 1, 1, 1, 1 }, "the data above B's stack" },
		{ 0x619000, { 1, 1, 1, 1 }, "B's live frames" },
		{ 0x610800, { 1, 1, 1, 1 }, "A's struct pthread" },
		{ 0x610bc0, { 1, 1, 1, 1 }, "A's struct pthread, above its false pair's end" },
	};
	enum { NREF = sizeof(ref) / sizeof(ref[0]) };
	unsigned char notes[4096], d[512];
	size_t nn = 0;
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots;
	struct an_reach r;
	struct an_reach_options o = { 1, 1, 0 };
	struct an_addr a;
	uint32_t b[NREF];
	char name[160];
	int ok;

	mem_base = 0x500000;
	mem_size = 0x400000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	for (unsigned i = 0; i < NREF; i++) {
		b[i] = block(0x500100 + 0x100 * i, 32, 0);
		put(ref[i].at, blocks[b[i]].user);
	}
	for (unsigned t = 0; t < 3; t++) {
		put(tcb[t], tcb[t]);
		put(tcb[t] + 8, 0x7777000);     /* the DTV: no block */
		put(tcb[t] + 16, tcb[t]);
		put(tcb[t] + 0x28, sguard);
		put(tcb[t] + 0x30, pguard);
		if (t > 0 && variant != 2) {
			put(tcb[t] + 0x690, tcb[t] + 0x940 - 0x10000);
			put(tcb[t] + 0x698, 0x10000);
			put(tcb[t] + 0x6a0, 0);   /* guardsize */
		}
		/* glibc 2.36's list.prev (into the struct pthread of the thread
		 * below), tid and robust_prev: a pointer plus a thread id that
		 * also ends in the window above tp, ahead of stackblock */
		if (t > 0) {
			put(tcb[t] + 0x2c8, (t == 2 ? tcb[1] : 0x601000) + 0x2c0);
			put(tcb[t] + 0x2d0, t == 2 ? 0x10800 : 0xf800);
			put(tcb[t] + 0x2d8, tcb[t] + 0x2e0);
		}
	}
	for (unsigned t = 0; t < 3; t++) {
		uint64_t fs = tcb[t], rbx = 0;

		if (t > 0 && (variant == 1 || variant == 3))
			fs = 0;
		if (t > 0 && variant == 3)
			rbx = 0x42;   /* not a snapshot's partial registers: no TCB search */
		note_add(notes, &nn, NT_PRSTATUS, d, prstatus(d, 100 + (int)t, sp[t], fs, rbx));
	}
	img = core_write(path, sg, sizeof(sg) / sizeof(sg[0]), notes, nn);
	snprintf(name, sizeof(name), "adjacent stacks %d: synthetic core opens", variant);
	CHECK(name, img != NULL);
	if (!img)
		goto out;
	scan_fill(&sc);
	snprintf(name, sizeof(name), "adjacent stacks %d: roots found", variant);
	CHECK(name, an_roots_find(img, &sc, &roots) == 0);
	if (variant < 2) {
		ok = root_of_kind(&roots, AN_ROOT_STACK, 1, 0x607f80, 0x611000) >= 0 &&
		     root_of_kind(&roots, AN_ROOT_STACK, 2, 0x617f80, 0x621000) >= 0 &&
		     root_of_kind(&roots, AN_ROOT_ANON, -1, 0x600000, 0x601000) >= 0 &&
		     root_of_kind(&roots, AN_ROOT_ANON, -1, 0x621000, 0x630000) >= 0;
	} else if (variant == 2) {
		ok = root_of_kind(&roots, AN_ROOT_STACK, 1, 0x607f80, 0x611000) >= 0 &&
		     root_of_kind(&roots, AN_ROOT_STACK, 2, 0x617f80, 0x621000) >= 0 &&
		     root_of_kind(&roots, AN_ROOT_ANON, -1, 0x621000, 0x630000) >= 0 &&
		     an_roots_locate(&roots, 0x600100) < 0;
	} else {
		ok = root_of_kind(&roots, AN_ROOT_STACK, 1, 0x607f80, 0x617f80) >= 0 &&
		     root_of_kind(&roots, AN_ROOT_STACK, 2, 0x617f80, 0x630000) >= 0 &&
		     an_roots_locate(&roots, 0x600100) < 0;
	}
	snprintf(name, sizeof(name), "adjacent stacks %d: each stack from its red zone to its own top, "
		 "the data around them anonymous", variant);
	CHECK(name, ok);
	CHECK("adjacent stacks: main's stack", root_of_kind(&roots, AN_ROOT_STACK, 0, 0x700780, 0x701000) >= 0);
	if (variant < 3) {
		uint64_t tpa = 0, tpb = 0;

		/* a snapshot's thread: its own TCB, not the highest in the segment */
		snprintf(name, sizeof(name), "adjacent stacks %d: each thread's own thread pointer", variant);
		CHECK(name, an_thread_pointer(img, 1, &tpa) == 0 && tpa == tcb[1] &&
		      an_thread_pointer(img, 2, &tpb) == 0 && tpb == tcb[2]);
	}
	snprintf(name, sizeof(name), "adjacent stacks %d: mark", variant);
	CHECK(name, an_reach_build(img, &sc, &roots, &o, &r) == 0);
	for (unsigned i = 0; i < NREF; i++) {
		snprintf(name, sizeof(name), "adjacent stacks %d: the block held by %s is %s", variant, ref[i].what,
			 an_reach_cat_name(ref[i].cat[variant]));
		CHECK(name, r.cat[b[i]] == ref[i].cat[variant]);
	}
	an_reach_release(&r);
	if (variant < 3) {
		an_addr_classify(img, &sc, 0x612000, &a);
		snprintf(name, sizeof(name), "adjacent stacks %d: --addr: B's dead part", variant);
		CHECK(name, a.what == AN_ADDR_STACK && a.thread == 2 && a.below_sp);
		an_addr_classify(img, &sc, 0x602000, &a);
		snprintf(name, sizeof(name), "adjacent stacks %d: --addr: A's dead part", variant);
		CHECK(name, a.what == AN_ADDR_STACK && a.thread == 1 && a.below_sp);
		an_addr_classify(img, &sc, 0x610800, &a);
		snprintf(name, sizeof(name), "adjacent stacks %d: --addr: A's live part, up to its top", variant);
		CHECK(name, a.what == AN_ADDR_STACK && a.thread == 1 && !a.below_sp);
		an_addr_classify(img, &sc, 0x622000, &a);
		snprintf(name, sizeof(name), "adjacent stacks %d: --addr: the data above is no stack", variant);
		CHECK(name, a.what != AN_ADDR_STACK);
	}
	an_roots_release(&roots);
	cp_image_free(img);
out:
	free(mem);
	mem_base = BASE;
}

/* A board's RAM in one segment (qemu-system's core of a firmware: no NT_FILE):
 * heap blocks low, the stack pointer above them in no block, one more block
 * above the stack. The stack is read from sp up to that block; a pointer below
 * sp is stale. VARIANT 1: the same core with NT_FILE (a process's sp in a heap
 * segment outside any block): no stack root, all lost. 2: a damaged header at
 * 0x503A00 bounds the stack below the block: b0's pointer past it is not read.
 * 3: no block above the stack: it runs to the end of the segment. */
static void test_board_stack(const char *path, int variant)
{
	static const struct tseg sg[] = { { 0x500000, 0x4000, PF_R | PF_W | PF_X } };
	unsigned char notes[1024], d[512];
	size_t nn = 0;
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots;
	struct an_reach r;
	struct an_reach_options o = { 1, 1, 0 };
	struct cp_damage dmg;
	uint32_t b[3];
	uint64_t end;
	int k;
	char name[120];

#define NAME(t) (snprintf(name, sizeof(name), "board stack %d: %s", variant, t), name)
	mem_base = 0x500000;
	mem_size = 0x4000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	b[0] = block(0x500100, 32, 0);
	b[1] = block(0x500200, 32, 0);
	b[2] = variant == 3 ? UINT32_MAX : block(0x503C00, 32, 0);
	put(variant == 2 ? 0x503B00 : 0x503900, blocks[b[0]].user);   /* a live frame above sp */
	put(0x503000, blocks[b[1]].user);   /* below sp: stale */
	note_add(notes, &nn, NT_PRSTATUS, d, prstatus(d, 7, 0x503800, 0, 0));
	if (variant == 1) {
		uint64_t w[2 + 3] = { 1, 4096, 0x400000, 0x401000, 0 };
		static const char names[] = "/bin/prog";
		unsigned char fd[128];

		memcpy(fd, w, sizeof(w));
		memcpy(fd + sizeof(w), names, sizeof(names));
		note_add(notes, &nn, 0x46494c45, fd, (uint32_t)(sizeof(w) + sizeof(names)));
	}
	img = core_write(path, sg, 1, notes, nn);
	CHECK(NAME("core opens, 1 thread"), img && img->nthreads == 1 && img->nfiles == (variant == 1));
	if (!img)
		goto out;
	scan_fill(&sc);
	if (variant == 2) {
		memset(&dmg, 0, sizeof(dmg));
		dmg.hdr = 0x503A00;
		dmg.kind = CP_DMG_CHECK;
		sc.damaged = &dmg;
		sc.ndamaged = 1;
	}
	CHECK(NAME("roots found"), an_roots_find(img, &sc, &roots) == 0);
	end = variant == 2 ? 0x503A00 : variant == 3 ? 0x504000 : cp_block_start(&sc.blocks[b[2]]);
	k = root_of_kind(&roots, AN_ROOT_STACK, 0, 0x503800, end);
	if (variant == 1) {
		size_t nstack = 0;

		for (size_t i = 0; i < roots.n; i++)
			nstack += roots.v[i].kind == AN_ROOT_STACK;
		CHECK(NAME("NT_FILE: no stack root"), k < 0 && nstack == 0);
	}
	else
		CHECK(NAME("the stack from sp to the next block, damaged header or segment end"), k >= 0);
	CHECK(NAME("reach"), an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK(NAME("b0 held by a live frame only when the stack is read there, the stale one lost"),
	      r.cat[b[0]] == (variant == 0 || variant == 3 ? AN_REACH_REACHABLE : AN_REACH_DEFINITE) &&
	      r.cat[b[1]] == AN_REACH_DEFINITE && (variant == 3 || r.cat[b[2]] == AN_REACH_DEFINITE));
	an_reach_release(&r);
	an_roots_release(&roots);
	cp_image_free(img);
out:
	free(mem);
	mem_base = BASE;
#undef NAME
}

/* Blocks read across a segment boundary and up to the end of what a truncated
 * core holds: the mark reads a block through the segment of the block before when
 * it can (issue 15), and must still read past that segment, and never past the
 * dumped bytes. b1 straddles two adjacent heap segments and holds b2's address in
 * the second; b3 is cut by the end of the file, with b4's address before the cut
 * and b5's after it. */
static void test_segments(const char *path)
{
	enum { RW = PF_R | PF_W };
	static const struct tseg sg[] = {
		{ 0x401000, 0x1000, RW },   /* data: the root */
		{ 0x480000, 0x1000, RW },   /* the thread's stack */
		{ 0x500000, 0x1000, RW },   /* heap ... */
		{ 0x501000, 0x1000, RW },   /* ... split in two segments */
		{ 0x600000, 0x1000, RW },   /* another heap, last in the file, cut at 0x600180 */
	};
	unsigned char notes[1024], d[512];
	size_t nn = 0;
	struct cp_image *img;
	struct cp_error err = { 0 };
	struct cp_scan sc;
	struct an_roots roots;
	struct an_reach r;
	struct an_reach_options o = { 1, 0, 0 };
	uint32_t b0, b1, b2, b3, b4, b5;
	long fsize;
	FILE *f;

	mem_base = 0x400000;
	mem_size = 0x201000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	b0 = block(0x500100, 32, 0);
	b5 = block(0x500400, 16, 0);
	b1 = block(0x500FE0, 64, 0);   /* [0x500FE0, 0x501020) */
	b2 = block(0x501100, 32, 0);
	b4 = block(0x600040, 16, 0);
	b3 = block(0x600100, 0x200, 0);
	put(0x401010, blocks[b0].user);
	put(blocks[b0].user, blocks[b1].user);
	put(0x501008, blocks[b2].user);          /* in b1, in the second segment */
	put(blocks[b2].user, blocks[b3].user);
	put(0x600108, blocks[b4].user);          /* in b3, dumped */
	put(0x600200, blocks[b5].user);          /* in b3, past the end of the file */
	note_add(notes, &nn, NT_PRSTATUS, d, prstatus(d, 100, 0x480F00, 0, 0));
	img = core_write(path, sg, sizeof(sg) / sizeof(sg[0]), notes, nn);
	CHECK("segments: core opens", img != NULL);
	if (!img)
		goto out;
	cp_image_free(img);
	f = fopen(path, "rb");
	fsize = -1;
	if (f && fseek(f, 0, SEEK_END) == 0)
		fsize = ftell(f);
	if (f)
		fclose(f);
	img = NULL;
	if (fsize > 0x1000 && truncate(path, fsize - (0x1000 - 0x180)) == 0)
		img = cp_image_open_core(path, &err);
	CHECK("segments: the cut core opens, its last segment dumped up to 0x600180",
	      img && img->nsegs == 5 && img->segs[4].avail == 0x180);
	if (!img)
		goto out;
	scan_fill(&sc);
	CHECK("segments: roots and mark", an_roots_find(img, &sc, &roots) == 0 &&
	      an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("segments: b2 reached through the second segment, b3 and b4 after it",
	      r.cat[b0] == AN_REACH_REACHABLE && r.cat[b1] == AN_REACH_REACHABLE &&
	      r.cat[b2] == AN_REACH_REACHABLE && r.cat[b3] == AN_REACH_REACHABLE &&
	      r.cat[b4] == AN_REACH_REACHABLE);
	CHECK("segments: b5's address past the cut is not read", r.cat[b5] == AN_REACH_DEFINITE);
	CHECK("segments: the lost one counted", r.blocks[AN_REACH_DEFINITE] == 1 &&
	      r.bytes[AN_REACH_DEFINITE] == 16 && r.blocks[AN_REACH_REACHABLE] == 5 &&
	      r.bytes[AN_REACH_REACHABLE] == 32 + 64 + 32 + 16 + 0x200);
	an_reach_release(&r);
	an_roots_release(&roots);
	cp_image_free(img);
out:
	free(mem);
	mem_base = BASE;
}

/* ---- random heaps against a plain reference of memcheck's algorithm ---- */

/* The live block holding v, by a linear search; -1 if none. */
static long ref_find(uint64_t v)
{
	for (size_t i = 0; i < nblocks; i++) {
		const struct cp_block *b = &blocks[i];

		if (b->state != CP_LIVE)
			continue;
		if (b->size ? (v >= b->user && v < b->user + b->size) : v == b->user)
			return (long)i;
	}
	return -1;
}

static uint64_t get(uint64_t addr)
{
	uint64_t v;

	memcpy(&v, mem + (addr - mem_base), 8);
	return v;
}

/* memcheck's mark and cliques, with recursion-free fixpoint loops: O(n^2), plain. */
static void ref_classify(const struct an_roots *roots, uint8_t *cat)
{
	enum { U = 0, P = 1, R = 2, I = 3 };
	uint8_t st[64] = { 0 };
	int changed = 1;

	for (size_t r = 0; r < roots->n; r++)
		for (uint64_t a = roots->v[r].start; a + 8 <= roots->v[r].end; a += 8) {
			long k = ref_find(get(a));

			if (k >= 0 && ref_find(a) < 0) {
				int start = get(a) == blocks[k].user;

				if (start)
					st[k] = R;
				else if (st[k] == U)
					st[k] = P;
			}
		}
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < nblocks; i++) {
			if (blocks[i].state != CP_LIVE || (st[i] != R && st[i] != P))
				continue;
			for (uint64_t a = blocks[i].user; a + 8 <= blocks[i].user + blocks[i].size; a += 8) {
				long k = ref_find(get(a));
				int start;

				if (k < 0)
					continue;
				start = get(a) == blocks[k].user;
				if (start && st[i] == R && st[k] != R) {
					st[k] = R;
					changed = 1;
				} else if (st[k] == U) {
					st[k] = P;
					changed = 1;
				}
			}
		}
	}
	for (size_t l = 0; l < nblocks; l++) {
		uint8_t in[64] = { 0 };

		if (blocks[l].state != CP_LIVE || st[l] != U)
			continue;
		in[l] = 1;
		changed = 1;
		while (changed) {
			changed = 0;
			for (size_t i = 0; i < nblocks; i++) {
				if (!in[i])
					continue;
				for (uint64_t a = blocks[i].user; a + 8 <= blocks[i].user + blocks[i].size; a += 8) {
					long k = ref_find(get(a));

					if (k >= 0 && (size_t)k != l && st[k] == U) {
						st[k] = I;
						in[k] = 1;
						changed = 1;
					}
				}
			}
		}
	}
	for (size_t i = 0; i < nblocks; i++)
		cat[i] = blocks[i].state != CP_LIVE ? AN_REACH_NONE : st[i] == U ? AN_REACH_DEFINITE :
			 st[i] == P ? AN_REACH_POSSIBLE : st[i] == R ? AN_REACH_REACHABLE : AN_REACH_INDIRECT;
}

/* Blocks in three regions (gaps over 1 MiB), sizes 0..200, words that are start
 * pointers, interior pointers, one past the end, headers, or noise. */
static uint64_t random_skipped;   /* block bytes the mark did not read, all rounds */

static void test_random(const char *path, int round)
{
	struct cp_image *img;
	struct cp_scan sc;
	struct an_roots roots = { 0 };
	struct an_reach r;
	struct an_reach_options o = { 1, 1, 0 };
	struct an_root root = { BASE, BASE + 0x200, AN_ROOT_USER, -1, NULL, 0 };
	uint8_t want[64];
	uint64_t at[3] = { BASE + 0x1000, BASE + 0x180000, BASE + 0x330000 };
	int same = 1;

	mem_size = 0x340000 + 0x10000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	for (unsigned rg = 0; rg < 3; rg++) {
		uint64_t a = at[rg];
		unsigned nb = 8 + (unsigned)rnd(12);

		for (unsigned i = 0; i < nb && nblocks < 60; i++) {
			uint64_t size = rnd(5) == 0 ? 0 : 8 * rnd(26);

			a += heapann_header_bytes(1, W);
			block(a, size, rnd(8) == 0);
			a += (size + 15) / 16 * 16 + 16 * rnd(4) + 16;
		}
	}
	/* fill every live and freed block's data and the root with random words;
	 * one block in three holds no address at all, only values past 4 GiB (the
	 * scanner's notes let the mark skip those) */
	for (size_t i = 0; i < nblocks; i++) {
		int far = rnd(3) == 0;

		for (uint64_t a = blocks[i].user; a + 8 <= blocks[i].user + blocks[i].size; a += 8) {
			const struct cp_block *t = &blocks[rnd(nblocks)];
			uint64_t v;

			if (far) {
				put(a, 0x8080808000000000ull | rnd(UINT32_MAX));
				continue;
			}
			switch (rnd(6)) {
			case 0: v = t->user; break;
			case 1: v = t->user + (t->size ? rnd(t->size) : 0); break;
			case 2: v = t->user + t->size; break;
			case 3: v = cp_block_hdr(t) + 8 * rnd(8); break;
			default: v = rnd(4) ? 0 : rnd(UINT32_MAX); break;
			}
			if (rnd(3) == 0)
				v = 0;
			put(a, v);
		}
	}
	for (uint64_t a = BASE; a < BASE + 0x200; a += 8)
		if (rnd(4) == 0) {
			const struct cp_block *t = &blocks[rnd(nblocks)];

			put(a, rnd(2) ? t->user : t->user + (t->size ? rnd(t->size) : 0));
		}
	if (!(img = image_setup(path, "random image opens", &sc, &roots, &root)))
		goto out;
	ref_classify(&roots, want);
	if (an_reach_build(img, &sc, &roots, &o, &r) < 0) {
		CHECK("random build", 0);
		cp_image_free(img);
		goto out;
	}
	for (size_t i = 0; i < nblocks; i++)
		if (r.cat[i] != want[i]) {
			same = 0;
			printf("# round %d block %zu (0x%llx, %llu bytes): got %u, want %u\n", round, i,
			       (unsigned long long)blocks[i].user, (unsigned long long)blocks[i].size,
			       r.cat[i], want[i]);
		}
	{
		char name[64];

		snprintf(name, sizeof(name), "random heap %d (%zu blocks): same as the reference", round, nblocks);
		CHECK(name, same);
	}
	{
		/* the same with the scanner's own scan, whose notes of the words that
		 * may be addresses let the mark skip blocks: the same categories */
		struct cp_scan real;
		struct cp_error err = { 0 };
		struct an_reach r2;
		int same2 = 0;
		char name[96];

		if (cp_scan_image(img, 1, &real, &err) == 0) {
			if (real.nblocks == nblocks && real.ptr_words &&
			    an_reach_build(img, &real, &roots, &o, &r2) == 0) {
				uint64_t bytes[AN_REACH_NCATS] = { 0 };

				same2 = 1;
				for (size_t i = 0; i < nblocks; i++) {
					if (r2.cat[i] != want[i])
						same2 = 0;
					if (blocks[i].state == CP_LIVE)
						bytes[want[i]] += blocks[i].size;
				}
				/* the bytes per category (the reachable ones are the rest) */
				for (unsigned c = 0; c < AN_REACH_NCATS; c++)
					if (r2.bytes[c] != bytes[c] || r.bytes[c] != bytes[c])
						same2 = 0;
				if (r2.block_bytes > r.block_bytes)
					same2 = 0;
				random_skipped += r.block_bytes - r2.block_bytes;
				an_reach_release(&r2);
			}
			{
				/* the scanner's lead_max: heap segments by binary search */
				struct an_roots ra, rb;
				char rn[96];

				snprintf(rn, sizeof(rn), "random heap %d: the scan's lead_max %s, roots as block by block",
					 round, real.lead_max == lead_of() ? "right" : "WRONG");
				CHECK(rn, real.lead_max == lead_of() && an_roots_find(img, &sc, &ra) == 0 &&
				      an_roots_find(img, &real, &rb) == 0 && roots_same(&ra, &rb));
				an_roots_release(&ra);
				an_roots_release(&rb);
			}
			cp_scan_free(&real);
		}
		snprintf(name, sizeof(name), "random heap %d, the scanner's scan (notes of address words): the same", round);
		CHECK(name, same2);
	}
	an_reach_release(&r);
	cp_image_free(img);
out:
	an_roots_release(&roots);
	free(mem);
}

/* Live blocks in a read-only segment above every writable one: the scanner's
 * notes cover the upper halves of the writable segments' addresses only, so
 * the mark must not trust them for blocks outside (a wrapped range test once
 * did: b, reached only through a, came out definitely lost). */
static void test_notes_range(const char *path)
{
	static const struct tseg sg[] = {
		{ 0x2FFFFF000ull, 0x1000, PF_R | PF_W }, /* the root and the stack */
		{ 0x300000000ull, 0x1000, PF_R },        /* the blocks, read-only */
	};
	unsigned char notes[1024], d[512];
	size_t nn = 0;
	struct cp_image *img;
	struct cp_error err = { 0 };
	struct cp_scan sc;
	struct an_roots roots;
	struct an_reach r;
	struct an_reach_options o = { 1, 0, 0 };
	uint32_t a, b;

	mem_base = 0x2FFFFF000ull;
	mem_size = 0x2000;
	mem = calloc(1, mem_size);
	nblocks = 0;
	a = block(0x300000100ull, 32, 0);
	b = block(0x300000400ull, 32, 0);
	put(0x2FFFFFF10ull, blocks[a].user);   /* the stack above sp -> a */
	put(blocks[a].user, blocks[b].user);  /* a -> b */
	note_add(notes, &nn, NT_PRSTATUS, d, prstatus(d, 100, 0x2FFFFFF00ull, 0, 0));
	img = core_write(path, sg, 2, notes, nn);
	CHECK("notes range: core opens", img != NULL);
	if (!img)
		goto out;
	CHECK("notes range: the real scan finds both blocks and notes words",
	      cp_scan_image(img, 1, &sc, &err) == 0 && sc.nblocks == 2 && sc.ptr_words != NULL);
	CHECK("notes range: the blocks lie above the noted range", sc.ptr_hi < 0x300000000ull);
	CHECK("notes range: roots and mark", an_roots_find(img, &sc, &roots) == 0 &&
	      an_reach_build(img, &sc, &roots, &o, &r) == 0);
	CHECK("notes range: a reachable from the root, b through a",
	      r.cat[0] == AN_REACH_REACHABLE && r.cat[1] == AN_REACH_REACHABLE);
	an_reach_release(&r);
	an_roots_release(&roots);
	cp_scan_free(&sc);
	cp_image_free(img);
out:
	free(mem);
	mem_base = BASE;
}

int main(void)
{
	char path[] = "/tmp/t_reach.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	test_categories(path);
	test_threads(path);
	test_be32(path);
	test_stats(path);
	test_task_stack(path);
	test_parallel_mark(path);
	test_core_roots(path);
	for (int v = 0; v < 4; v++)
		test_board_stack(path, v);
	for (int v = 0; v < 4; v++)
		test_adjacent_stacks(path, v);
	test_segments(path);
	test_notes_range(path);
	for (int i = 0; i < 20; i++)
		test_random(path, i);
	printf("# block bytes not read thanks to the scanner's notes: %llu\n", (unsigned long long)random_skipped);
	CHECK("random heaps: the mark skipped blocks that hold no address", random_skipped > 0);
	unlink(path);
	CHECK("category names", !strcmp(an_reach_cat_name(AN_REACH_DEFINITE), "definitely lost") &&
	      !strcmp(an_reach_cat_name(AN_REACH_REACHABLE), "still reachable"));
	return CHECK_DONE();
}
