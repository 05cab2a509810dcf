/* t_block.c - the block header as annotate/hdr.h writes it (the same inline
 * code that runs inside malloc): every field reads back, the check word ties it
 * to its address, and damaged, moved, freed and foreign variants are told apart. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "hdr.h"

#define DEPTH 5u
#define SIZE 100u
#define GUARD 8u

/* Room for one block: raw | pad | header | user | guard, aligned like malloc. A
 * real heap has other memory before a block: damaged-depth tests read there. */
static _Alignas(64) struct {
	unsigned char before[4096];
	unsigned char blocks[2][4096];
} mem;
#define arena mem.blocks

/* sized for the deepest header the tests write; the first DEPTH are checked */
static uintptr_t frames[HEAPANN_MAX_DEPTH] = { 0x401111, 0x402222, 0x403333, 0x404444, 0x405555 };

/* Build a block in BUF: returns the user pointer. */
static unsigned char *make_block(unsigned char *buf, unsigned depth, size_t align, uintptr_t seq)
{
	size_t off = ha_hdr_offset(depth, align);

	memset(buf, 0xAA, 4096);
	ha_hdr_write(buf + off, off, SIZE, depth, 0, frames, seq, GUARD);
	return buf + off;
}

static int state_of(const void *user)
{
	struct ha_hdr_view v;

	return ha_hdr_find(user, &v);
}

int main(void)
{
	struct ha_hdr_view v;
	unsigned char *u = make_block(arena[0], DEPTH, HA_MIN_ALIGN, 42);
	uintptr_t *w = (uintptr_t *)u;
	uintptr_t *h = w - (7 + DEPTH);
	uintptr_t save;
	unsigned d, i, bad;
	size_t a;

	/* Every field as written. */
	CHECK("start magic", h[HEAPANN_W_START] == (uintptr_t)HEAPANN_START_LIVE64);
	CHECK("info version", heapann_info_version(h[HEAPANN_W_INFO]) == HEAPANN_VERSION);
	CHECK("info guard", heapann_info_guard(h[HEAPANN_W_INFO]) == GUARD);
	/* 12 words of header = 96 bytes, a multiple of 16: no pad. */
	CHECK("info pad 0 for depth 5", heapann_info_pad(h[HEAPANN_W_INFO]) == 0);
	CHECK("size", h[HEAPANN_W_SIZE] == SIZE);
	CHECK("depth", h[HEAPANN_W_DEPTH] == DEPTH);
	CHECK("seq", h[HEAPANN_W_SEQ] == 42);
	CHECK("check word", h[HEAPANN_W_CHECK] ==
	      heapann_check((uintptr_t)h, SIZE, DEPTH, 42, h[HEAPANN_W_INFO], 8));
	for (i = 0, bad = 0; i < DEPTH; i++)
		bad += h[HEAPANN_W_FRAMES + i] != frames[i];
	CHECK("frames innermost first", bad == 0);
	CHECK("end word is END_LIVE|depth", w[-1] == (HEAPANN_END_LIVE64 | DEPTH));
	for (i = 0, bad = 0; i < GUARD; i++)
		bad += u[SIZE + i] != HEAPANN_GUARD_BYTE;
	CHECK("guard bytes after size", bad == 0);
	CHECK("byte after guard untouched", u[SIZE + GUARD] == 0xAA);

	/* Found again, every view field right. */
	CHECK("find: live", ha_hdr_find(u, &v) == HA_HDR_LIVE);
	CHECK("view hdr", v.hdr == h);
	CHECK("view raw", v.raw == (void *)arena[0]);
	CHECK("view size", v.size == SIZE);
	CHECK("view depth", v.depth == DEPTH);
	CHECK("view guard", v.guard == GUARD);
	CHECK("view offset", v.offset == 96);
	CHECK("view seq", v.seq == 42);
	CHECK("guard intact", ha_hdr_guard_damage(u, &v) == 0);

	/* Even depth: 13 words (104 bytes) need one word of pad before H. */
	u = make_block(arena[1], 6, HA_MIN_ALIGN, 7);
	CHECK("depth 6: user 16-aligned", ((uintptr_t)u & 15) == 0);
	CHECK("depth 6: pad 1 word", ha_hdr_find(u, &v) == HA_HDR_LIVE && v.offset == 112 &&
	      heapann_info_pad(v.hdr[HEAPANN_W_INFO]) == 1 && v.raw == (void *)arena[1]);
	CHECK("depth 6: pad word untouched", arena[1][0] == 0xAA && arena[1][7] == 0xAA);

	/* Offsets for every depth and alignment keep the user pointer aligned and
	 * the pad smaller than the alignment. */
	for (bad = 0, d = 0; d <= HEAPANN_MAX_DEPTH; d++)
		for (a = HA_MIN_ALIGN; a <= 65536; a <<= 1) {
			size_t off = ha_hdr_offset(d, a);
			size_t hb = (size_t)heapann_header_bytes(d, 8);
			bad += off % a != 0 || off < hb || off - hb >= a;
		}
	CHECK("offset: aligned, holds the header, pad < alignment", bad == 0);

	/* Aligned block: 4096 alignment with depth 5 pads 4000 bytes. */
	{
		static _Alignas(4096) unsigned char big[8192 + 256];
		size_t off = ha_hdr_offset(DEPTH, 4096);
		ha_hdr_write(big + off, off, SIZE, DEPTH, 0, frames, 9, 0);
		CHECK("aligned: found with pad", ha_hdr_find(big + off, &v) == HA_HDR_LIVE &&
		      v.offset == 4096 && v.raw == (void *)big && v.guard == 0 &&
		      heapann_info_pad(v.hdr[HEAPANN_W_INFO]) == (4096 - 96) / 8);
	}

	/* Damaged variants: every word the check covers, the magics, the depth. */
	u = make_block(arena[0], DEPTH, HA_MIN_ALIGN, 42);
	w = (uintptr_t *)u;
	h = w - (7 + DEPTH);
	{
		static const struct { const char *name; unsigned word; uintptr_t flip; } dmg[] = {
			{ "damaged START rejected", HEAPANN_W_START, 1 },
			{ "damaged INFO (guard) rejected", HEAPANN_W_INFO, 1u << 9 },
			{ "damaged INFO (version) rejected", HEAPANN_W_INFO, 3 },
			{ "damaged INFO (pad) rejected", HEAPANN_W_INFO, 1u << 16 },
			{ "damaged SIZE rejected", HEAPANN_W_SIZE, 1 },
			{ "damaged SIZE high bit rejected", HEAPANN_W_SIZE, (uintptr_t)1 << 40 },
			{ "damaged DEPTH rejected", HEAPANN_W_DEPTH, 1 },
			{ "damaged SEQ rejected", HEAPANN_W_SEQ, 1 },
			{ "damaged CHECK rejected", HEAPANN_W_CHECK, 1 },
		};
		for (i = 0; i < sizeof(dmg) / sizeof(dmg[0]); i++) {
			save = h[dmg[i].word];
			h[dmg[i].word] ^= dmg[i].flip;
			CHECK(dmg[i].name, state_of(u) == HA_HDR_DAMAGED);
			h[dmg[i].word] = save;
		}
	}
	CHECK("restored header valid again", state_of(u) == HA_HDR_LIVE);
	save = w[-1];
	w[-1] = HEAPANN_END_LIVE64 | (DEPTH + 1);
	CHECK("END depth disagreeing with DEPTH rejected", state_of(u) == HA_HDR_DAMAGED);
	w[-1] = HEAPANN_END_LIVE64 | 300;
	CHECK("END depth over the maximum: not ours", state_of(u) == HA_HDR_FOREIGN);
	w[-1] = save ^ ((uintptr_t)1 << 40);
	CHECK("END magic damaged: not ours", state_of(u) == HA_HDR_FOREIGN);
	w[-1] = 0x31;   /* what glibc keeps there: a chunk size with flag bits */
	CHECK("glibc chunk size word: not ours", state_of(u) == HA_HDR_FOREIGN);
	w[-1] = save;

	/* A verbatim copy at another address fails the check word. */
	memcpy(arena[1] + 16, (unsigned char *)h, (7 + DEPTH) * 8 + SIZE);
	CHECK("moved copy rejected", state_of(arena[1] + 16 + (7 + DEPTH) * 8) == HA_HDR_DAMAGED);

	/* Guard damage is counted byte by byte. */
	CHECK("find before guard test", ha_hdr_find(u, &v) == HA_HDR_LIVE);
	u[SIZE] = 0;
	u[SIZE + 3] = 0x12;
	CHECK("guard: 2 bytes differ", ha_hdr_guard_damage(u, &v) == 2);
	u[SIZE + 7] = 0;
	CHECK("guard: 3 bytes differ", ha_hdr_guard_damage(u, &v) == 3);
	CHECK("guard damage does not invalidate the header", state_of(u) == HA_HDR_LIVE);

	/* Guards of other lengths, after odd sizes (unaligned), are filled and
	 * counted word by word and then byte by byte: every byte, every length. */
	{
		static _Alignas(16) unsigned char gb[1024];
		static const unsigned lens[] = { 1, 7, 8, 9, 16, 21, 255 };
		unsigned ok_fill = 1, ok_count = 1;
		struct ha_hdr_view gv = { 0 };

		for (unsigned li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			unsigned gl = lens[li];
			size_t sz = 13 + li, off = ha_hdr_offset(3, HA_MIN_ALIGN);
			unsigned char *gu = gb + off;

			memset(gb, 0xAA, sizeof(gb));
			ha_hdr_write(gu, off, sz, 3, 0, frames, 7, gl);
			ok_fill &= ha_hdr_find(gu, &gv) == HA_HDR_LIVE && gv.guard == gl &&
				   ha_hdr_guard_damage(gu, &gv) == 0 && gu[sz + gl] == 0xAA &&
				   gu[sz - 1] == 0xAA;
			for (unsigned b = 0; b < gl; b++)
				ok_fill &= gu[sz + b] == HEAPANN_GUARD_BYTE;
			/* damage the first and the last byte, then one in the middle */
			gu[sz] = 0;
			ok_count &= ha_hdr_guard_damage(gu, &gv) == 1;
			if (gl > 1) {
				gu[sz + gl - 1] = 0x11;
				ok_count &= ha_hdr_guard_damage(gu, &gv) == 2;
			}
			if (gl > 2) {
				gu[sz + gl / 2] = 0x22;
				ok_count &= ha_hdr_guard_damage(gu, &gv) == 3;
			}
		}
		CHECK("guards of 1..255 bytes after odd sizes: filled, bounded", ok_fill);
		CHECK("guards of 1..255 bytes: 1, 2, 3 damaged bytes counted", ok_count);
	}

	/* Freed: both magics change, the block is told apart from a damaged one
	 * even after the allocator reuses its first words. */
	ha_hdr_mark_freed(u, &v);
	CHECK("freed: START_FREED", h[HEAPANN_W_START] == (uintptr_t)HEAPANN_START_FREED64);
	CHECK("freed: END_FREED|depth", w[-1] == (HEAPANN_END_FREED64 | DEPTH));
	CHECK("freed: found as freed", state_of(u) == HA_HDR_FREED);
	h[0] = 0x5555;
	h[1] = 0x6666;
	CHECK("freed, first words reused: still freed", state_of(u) == HA_HDR_FREED);

	/* Depth 0 and the maximum depth. */
	u = make_block(arena[0], 0, HA_MIN_ALIGN, 1);
	CHECK("depth 0: live, offset 64", ha_hdr_find(u, &v) == HA_HDR_LIVE && v.depth == 0 &&
	      v.offset == 64 && ((uintptr_t *)u)[-1] == HEAPANN_END_LIVE64);
	{
		static uintptr_t many[HEAPANN_MAX_DEPTH];
		static _Alignas(16) unsigned char buf[4096];
		size_t off = ha_hdr_offset(HEAPANN_MAX_DEPTH, HA_MIN_ALIGN);
		for (i = 0; i < HEAPANN_MAX_DEPTH; i++)
			many[i] = 0x1000 + i;
		ha_hdr_write(buf + off, off, 1, HEAPANN_MAX_DEPTH, 0, many, 3, 0);
		CHECK("depth 256: live", ha_hdr_find(buf + off, &v) == HA_HDR_LIVE &&
		      v.depth == 256 && v.hdr[HEAPANN_W_FRAMES + 255] == 0x1000 + 255);
	}

	/* A cut stack (the walk stopped at the depth limit): DEPTH carries the
	 * flag, under the check word; END and the view's depth are the count. */
	{
		size_t off = ha_hdr_offset(DEPTH, HA_MIN_ALIGN);

		u = make_block(arena[0], DEPTH, HA_MIN_ALIGN, 42);
		CHECK("whole stack: DEPTH not cut", ha_hdr_find(u, &v) == HA_HDR_LIVE &&
		      !heapann_depth_cut(v.hdr[HEAPANN_W_DEPTH]));
		memset(arena[0], 0xAA, 4096);
		h = (uintptr_t *)(void *)(arena[0] + off) - (7 + DEPTH);
		ha_hdr_write(arena[0] + off, off, SIZE, DEPTH, 1, frames, 43, GUARD);
		u = arena[0] + off;
		CHECK("cut: DEPTH word is depth | HEAPANN_DEPTH_CUT",
		      h[HEAPANN_W_DEPTH] == (DEPTH | HEAPANN_DEPTH_CUT));
		CHECK("cut: check word over the whole DEPTH word", h[HEAPANN_W_CHECK] ==
		      heapann_check((uintptr_t)h, SIZE, DEPTH | HEAPANN_DEPTH_CUT, 43, h[HEAPANN_W_INFO], 8));
		CHECK("cut: END holds the count only", ((uintptr_t *)u)[-1] == (HEAPANN_END_LIVE64 | DEPTH));
		CHECK("cut: found live, depth the count", ha_hdr_find(u, &v) == HA_HDR_LIVE &&
		      v.depth == DEPTH && v.hdr == h && heapann_depth_cut(v.hdr[HEAPANN_W_DEPTH]));
		h[HEAPANN_W_DEPTH] = DEPTH;   /* the flag dropped: the check word tells */
		CHECK("cut: the flag cleared is damage", state_of(u) == HA_HDR_DAMAGED);
	}
	return CHECK_DONE();
}
