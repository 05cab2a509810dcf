/* t_corrupt.c - the corruption analysis and address classification on synthetic
 * raw dumps: blocks laid out the way glibc places neighbours (guard, slack, the
 * allocator's size word, next header), then damaged on purpose, scanned by the real
 * scanner, and checked against the numbers this test wrote. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "corrupt.h"
#include "heapann_block.h"

#define BASE 0x40000ULL
#define DUMP 0x4000u
/* The target: 64-bit little-endian, or 32-bit big-endian (a MIPS firmware). */
static unsigned W = 8;
static int BIG;
#define DEPTH 3u
#define GUARD 8u

static unsigned char buf[DUMP];

struct blk {
	uint64_t raw, hdr, user, size, seq;
};

static void put_word(uint64_t addr, uint64_t v)
{
	for (unsigned i = 0; i < W; i++)
		buf[addr - BASE + i] = (unsigned char)(v >> (8 * (BIG ? W - 1 - i : i)));
}

/* Write a live block at raw with the given size; frames are distinct per seq. */
static struct blk put_block(uint64_t raw, uint64_t size, uint64_t seq)
{
	struct blk b;
	uint64_t info = heapann_info_make(GUARD, 0);

	b.raw = raw;
	b.hdr = raw;
	b.user = raw + heapann_header_bytes(DEPTH, W);
	b.size = size;
	b.seq = seq;
	put_word(b.hdr + 0 * W, heapann_start_live(W));
	put_word(b.hdr + 1 * W, info);
	put_word(b.hdr + 2 * W, size);
	put_word(b.hdr + 3 * W, DEPTH);
	put_word(b.hdr + 4 * W, seq);
	put_word(b.hdr + 5 * W, heapann_check(b.hdr, size, DEPTH, seq, info, W));
	for (unsigned i = 0; i < DEPTH; i++)
		put_word(b.hdr + (6 + i) * W, 0x401000 + (seq & 1) * 0x100 + i * 8);   /* P and N share a stack */
	/* the header's own bytes stay in the dump: the scan reads them as W-byte words */
	put_word(b.hdr + (6 + DEPTH) * W, heapann_end_live(W) | DEPTH);
	memset(buf + (b.user + size - BASE), HEAPANN_GUARD_BYTE, GUARD);
	return b;
}

/* Where glibc would put the next raw block: chunk rounding, then its size word. */
static uint64_t next_raw(const struct blk *b)
{
	uint64_t req = (b->user - b->raw) + b->size + GUARD;
	uint64_t chunk = (req + 8 + 15) & ~15ULL;

	if (chunk < 32)
		chunk = 32;
	return b->raw + chunk;
}

/* Lay out four neighbours P, C (the culprit), N, NN; returns them in v. */
static void layout(struct blk v[4], uint64_t csize)
{
	memset(buf, 0, sizeof(buf));
	v[0] = put_block(BASE + 0x100, 40, 10);
	v[1] = put_block(next_raw(&v[0]), csize, 11);
	v[2] = put_block(next_raw(&v[1]), 256, 12);
	v[3] = put_block(next_raw(&v[2]), 32, 13);
}

static int load(struct cp_image **img, struct cp_scan *sc)
{
	char path[] = "/tmp/t_corrupt.XXXXXX";
	int fd = mkstemp(path);
	struct cp_error err = { 0 };

	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return -1;
	close(fd);
	*img = cp_image_open_raw(path, BASE, W, BIG, BIG ? 8 : 62, &err);
	unlink(path);
	if (!*img)
		return -1;
	return cp_scan_image(*img, 1, sc, &err);
}

static size_t block_at(const struct cp_scan *sc, uint64_t user)
{
	for (size_t i = 0; i < sc->nblocks; i++)
		if (sc->blocks[i].user == user)
			return i;
	return AN_NONE;
}

static void test_overruns(void)
{
	static const uint64_t sizes[] = { 1, 24, 100, 4096 };
	static const unsigned overruns[] = { 1, 3, 8, 40, 200 };

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (size_t oi = 0; oi < sizeof(overruns) / sizeof(overruns[0]); oi++) {
			struct blk v[4];
			struct cp_image *img = NULL;
			struct cp_scan sc = { 0 };
			struct an_corrupt c;
			char name[128];
			unsigned k = overruns[oi];
			uint64_t end;
			const struct an_guard_hit *g;

			layout(v, sizes[si]);
			end = v[1].user + v[1].size;
			memset(buf + (end - BASE), 'X', k);
			snprintf(name, sizeof(name), "%s: size %llu overrun %u", W == 8 ? "le64" : "be32",
				 (unsigned long long)sizes[si], k);
			if (load(&img, &sc) < 0 || an_corrupt_build(img, &sc, &c) < 0) {
				CHECK(name, 0);
				continue;
			}
			g = c.nguards == 1 ? &c.guards[0] : NULL;
			snprintf(name, sizeof(name), "size %llu overrun %u: one broken guard, the culprit's",
				 (unsigned long long)sizes[si], k);
			CHECK(name, g && sc.blocks[g->block].user == v[1].user);
			snprintf(name, sizeof(name), "size %llu overrun %u: overrun %u from the guard",
				 (unsigned long long)sizes[si], k, k < GUARD ? k : GUARD);
			CHECK(name, g && g->overrun == (k < GUARD ? k : GUARD) && g->whole_guard == (k >= GUARD));
			if (k == 40 && W == 4) {
				/* 32 bits: 40 bytes reach the neighbour's DEPTH word; the scan no
				 * longer lists it, its END word still names it */
				snprintf(name, sizeof(name), "be32: size %llu overrun 40: neighbour found by its END",
					 (unsigned long long)sizes[si]);
				CHECK(name, g && g->next_damaged == AN_NONE && g->lost_user == v[2].user &&
				      g->lost_hdr == v[2].hdr && g->nlost_frames == DEPTH &&
				      sc.addrs[g->lost_frame[0]] == 0x401000 && sc.addrs[g->lost_frame[2]] == 0x401010);
			} else if (k == 40) {
				/* the neighbour's start magic is gone: found by its END, named,
				 * and the culprit is its suspect */
				int ok = g && g->next_damaged != AN_NONE && c.ndamaged == 1;
				const struct cp_damage *d = ok ? &sc.damaged[g->next_damaged] : NULL;

				snprintf(name, sizeof(name), "size %llu overrun 40: neighbour's header damaged (start)",
					 (unsigned long long)sizes[si]);
				CHECK(name, d && d->kind == CP_DMG_START && d->user == v[2].user && d->hdr == v[2].hdr);
				snprintf(name, sizeof(name), "size %llu overrun 40: reach: the start magic, not past the overrun",
					 (unsigned long long)sizes[si]);
				CHECK(name, g && g->reach >= v[2].hdr + W && g->reach <= end + 40);
				snprintf(name, sizeof(name), "size %llu overrun 40: size and seq %s",
					 (unsigned long long)sizes[si],
					 v[2].hdr + 3 * W <= end + 40 ? "lost with the SIZE word" : "proven by the check word");
				if (v[2].hdr + 3 * W <= end + 40)
					CHECK(name, ok && !c.damaged[0].have_size);
				else
					CHECK(name, ok && c.damaged[0].have_size && c.damaged[0].size == 256 &&
					      c.damaged[0].seq == 12);
				snprintf(name, sizeof(name), "size %llu overrun 40: likely an overflow",
					 (unsigned long long)sizes[si]);
				CHECK(name, ok && c.damaged[0].likely == AN_LIKELY_OVERFLOW);
				snprintf(name, sizeof(name), "size %llu overrun 40: suspect is the culprit",
					 (unsigned long long)sizes[si]);
				CHECK(name, ok && c.damaged[0].suspect == block_at(&sc, v[1].user) &&
				      c.damaged[0].gap == (int64_t)(v[2].hdr - end - GUARD));
			} else if (k == 200) {
				/* the neighbour's header is gone entirely: the next header after
				 * the guard is NN's, and N lies in between */
				snprintf(name, sizeof(name), "size %llu overrun 200: next header is NN, N lost in between",
					 (unsigned long long)sizes[si]);
				CHECK(name, g && g->next_header == v[3].hdr && g->next_block == block_at(&sc, v[3].user) &&
				      v[2].user > end && v[2].user < g->next_header && c.ndamaged == 0);
			} else {
				snprintf(name, sizeof(name), "size %llu overrun %u: no damaged header",
					 (unsigned long long)sizes[si], k);
				CHECK(name, c.ndamaged == 0);
			}
			an_corrupt_release(&c);
			cp_scan_free(&sc);
			cp_image_free(img);
		}
	}
}

/* An underrun of 8 bytes before a block overwrites its own END: it keeps its
 * identity through the start of its header, and the block before is the suspect. */
static void test_underrun(void)
{
	struct blk v[4];
	struct cp_image *img = NULL;
	struct cp_scan sc = { 0 };
	struct an_corrupt c;
	const struct cp_damage *d;
	struct an_addr a;

	layout(v, 24);
	memset(buf + (v[2].user - 8 - BASE), 'U', 8);
	if (load(&img, &sc) < 0 || an_corrupt_build(img, &sc, &c) < 0) {
		CHECK("underrun: load", 0);
		return;
	}
	d = c.ndamaged == 1 ? &sc.damaged[0] : NULL;
	CHECK("underrun: one damaged header, end magic", d && d->kind == CP_DMG_END);
	CHECK("underrun: identity kept (address, size, seq, frames)",
	      d && d->user == v[2].user && d->size == 256 && d->seq == 12 &&
	      (d->known & CP_KNOWN_FRAMES) && sc.stacks[d->stack].depth == DEPTH &&
	      sc.addrs[sc.stack_frames[sc.stacks[d->stack].first]] == 0x401000);
	CHECK("underrun: the block before is the suspect",
	      c.ndamaged == 1 && c.damaged[0].suspect == block_at(&sc, v[1].user));
	CHECK("underrun: no broken guard", c.nguards == 0);
	CHECK("underrun: likely an underrun", c.ndamaged == 1 && c.damaged[0].likely == AN_LIKELY_UNDERRUN);
	an_addr_classify(img, &sc, v[2].user + 10, &a);
	CHECK("underrun: --addr in its data names the damaged block",
	      a.what == AN_ADDR_BLOCK && a.damage == 0 && a.offset == 10 && a.have_size &&
	      a.size == 256 && a.seq == 12);
	an_addr_classify(img, &sc, v[2].user - 8, &a);
	CHECK("underrun: --addr on its END is its header", a.what == AN_ADDR_HEADER && a.damage == 0);
	an_corrupt_release(&c);
	cp_scan_free(&sc);
	cp_image_free(img);
}

static void test_addr(void)
{
	struct blk v[4];
	struct cp_image *img = NULL;
	struct cp_scan sc = { 0 };
	struct an_addr a;
	struct an_corrupt c;
	struct cp_thread th[3];
	uint64_t gap;

	layout(v, 24);
	/* free N the way libheapann does, then let the allocator reuse its first words */
	put_word(v[2].hdr, heapann_start_freed(W));
	put_word(v[2].user - W, heapann_end_freed(W) | DEPTH);
	put_word(v[2].hdr, 0x1234);
	put_word(v[2].hdr + W, 0x5678);
	/* something unannotated in between, far after NN */
	if (load(&img, &sc) < 0 || an_corrupt_build(img, &sc, &c) < 0) {
		CHECK("addr: load", 0);
		return;
	}
	CHECK("addr: nothing corrupt", !an_corrupt_found(&c));
	an_addr_classify(img, &sc, v[1].user + 5, &a);
	CHECK("addr: in data", a.what == AN_ADDR_BLOCK && a.block == block_at(&sc, v[1].user) && a.offset == 5);
	an_addr_classify(img, &sc, v[1].user + 24 + 3, &a);
	CHECK("addr: 3 past the end is the guard", a.what == AN_ADDR_GUARD && a.offset == 3 &&
	      a.block == block_at(&sc, v[1].user));
	an_addr_classify(img, &sc, v[1].hdr + 2 * W, &a);
	CHECK("addr: header", a.what == AN_ADDR_HEADER && a.part == AN_PART_HEADER && a.offset == 16);
	an_addr_classify(img, &sc, v[2].user + 7, &a);
	CHECK("addr: freed block with its old stack", a.what == AN_ADDR_FREED && a.part == AN_PART_DATA &&
	      a.offset == 7 && a.block != AN_NONE && sc.blocks[a.block].seq == 12 &&
	      sc.blocks[a.block].depth == DEPTH);
	gap = v[1].user + 24 + GUARD + 4;   /* the slack after C's guard */
	an_addr_classify(img, &sc, gap, &a);
	CHECK("addr: between C and N", a.what == AN_ADDR_BETWEEN && a.prev == block_at(&sc, v[1].user) &&
	      a.next == block_at(&sc, v[2].user));
	an_addr_classify(img, &sc, BASE + 0x10, &a);
	CHECK("addr: before the first block", a.what == AN_ADDR_BETWEEN && a.prev == AN_NONE &&
	      a.next == block_at(&sc, v[0].user));
	an_addr_classify(img, &sc, BASE + DUMP + 0x1000, &a);
	CHECK("addr: unmapped", a.what == AN_ADDR_UNMAPPED);
	/* a thread whose stack pointer lies in the dump: the region above it is its stack */
	memset(th, 0, sizeof(th));
	th[0].tid = 42;
	th[0].sp = BASE + 0x3000;
	img->threads = th;
	img->nthreads = 1;
	an_addr_classify(img, &sc, BASE + 0x3010, &a);
	CHECK("addr: thread stack", a.what == AN_ADDR_STACK && a.thread == 0 && !a.below_sp);
	/* three threads' stacks in one segment (no guard pages between them):
	 * below every stack pointer, the dead part of the stack whose pointer is
	 * nearest above; above two, the live frames of the nearest below */
	th[1] = th[0];
	th[1].tid = 43;
	th[1].sp = BASE + 0x3c00;
	th[2] = th[0];
	th[2].tid = 44;
	th[2].sp = BASE + 0x3800;
	img->nthreads = 3;
	an_addr_classify(img, &sc, BASE + 0x2f00, &a);
	CHECK("addr: below all three stack pointers: the dead part of the nearest (tid 42)",
	      a.what == AN_ADDR_STACK && a.thread == 0 && a.below_sp);
	an_addr_classify(img, &sc, BASE + 0x3400, &a);
	CHECK("addr: above the lowest only: its live frames (tid 42)",
	      a.what == AN_ADDR_STACK && a.thread == 0 && !a.below_sp);
	an_addr_classify(img, &sc, BASE + 0x3a00, &a);
	CHECK("addr: above two: the live frames of the nearest below (tid 44)",
	      a.what == AN_ADDR_STACK && a.thread == 2 && !a.below_sp);
	th[0].sp = BASE + 0x3e00;   /* now tid 44's is nearest above 0x3400 */
	an_addr_classify(img, &sc, BASE + 0x3400, &a);
	CHECK("addr: below all three, listed last of the three: the nearest (tid 44)",
	      a.what == AN_ADDR_STACK && a.thread == 2 && a.below_sp);
	img->threads = NULL;
	img->nthreads = 0;
	CHECK("addr: names", !strcmp(an_addr_what_name(AN_ADDR_NOT_DUMPED), "not-dumped"));
	an_corrupt_release(&c);
	cp_scan_free(&sc);
	cp_image_free(img);
}

int main(void)
{
	test_overruns();
	test_underrun();
	test_addr();
	/* the same on a 32-bit big-endian target */
	W = 4;
	BIG = 1;
	test_overruns();
	test_underrun();
	return CHECK_DONE();
}
