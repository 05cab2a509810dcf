/* addr.c - what an address is: a block's data, header, pad or guard, a freed
 * block, a damaged header, a thread's stack, heap memory between blocks, or
 * memory the image does not hold. Module symbols are the caller's part (it owns
 * the symbolizer): this file says "between" or "other" and the caller may refine
 * it to "module". Pure: looks at the image's tables and the scan only.
 */
#include <string.h>

#include "corrupt.h"
#include "heapann_block.h"
#include "reach.h"

/* Bytes below a thread's stack pointer that still belong to its frame: the red
 * zone of the x86-64 and AArch64 ABIs (others have none; 128 is harmless there). */
#define RED_ZONE 128u

const char *an_addr_what_name(enum an_addr_what w)
{
	switch (w) {
	case AN_ADDR_BLOCK: return "block";
	case AN_ADDR_HEADER: return "header";
	case AN_ADDR_GUARD: return "guard";
	case AN_ADDR_FREED: return "freed";
	case AN_ADDR_BETWEEN: return "between";
	case AN_ADDR_MODULE: return "module";
	case AN_ADDR_STACK: return "stack";
	case AN_ADDR_UNMAPPED: return "unmapped";
	case AN_ADDR_NOT_DUMPED: return "not-dumped";
	case AN_ADDR_OTHER: return "other";
	case AN_ADDR_TLS: return "tls";
	}
	return "other";
}

/* Which part of block b holds addr (b holds it). */
static void block_part(const struct cp_block *b, uint64_t addr, struct an_addr *out)
{
	const uint64_t hdr = cp_block_hdr(b);

	if (addr < hdr) {
		out->part = AN_PART_PAD;
		out->offset = addr - cp_block_start(b);
	} else if (addr < b->user) {
		out->part = AN_PART_HEADER;
		out->offset = addr - hdr;
	} else if (addr < b->user + b->size || (b->size == 0 && addr == b->user)) {
		out->part = AN_PART_DATA;
		out->offset = addr - b->user;
	} else {
		out->part = AN_PART_GUARD;
		out->offset = addr - (b->user + b->size);
	}
	if (b->state == CP_FREED)
		out->what = AN_ADDR_FREED;
	else if (out->part == AN_PART_DATA)
		out->what = AN_ADDR_BLOCK;
	else if (out->part == AN_PART_GUARD)
		out->what = AN_ADDR_GUARD;
	else
		out->what = AN_ADDR_HEADER;
}

/* Raw start of the first block or damaged header after addr, or UINT64_MAX. */
static uint64_t next_start(const struct cp_scan *scan, uint64_t addr)
{
	uint64_t best = UINT64_MAX;
	size_t lo = cp_scan_upper(scan, addr);

	for (size_t j = lo; j < scan->nblocks && j < lo + 4; j++) {
		uint64_t s = cp_block_start(&scan->blocks[j]);

		if (s > addr && s < best)
			best = s;
	}
	for (size_t k = 0; k < scan->ndamaged; k++)   /* few: a linear pass is fine */
		if (scan->damaged[k].hdr > addr && scan->damaged[k].hdr < best)
			best = scan->damaged[k].hdr;
	return best;
}

/* A damaged header (or the data it announces) holding addr, or AN_NONE. */
static size_t damage_find(const struct cp_image *img, const struct cp_scan *scan, uint64_t addr,
			  struct an_addr *out)
{
	size_t lo = 0, hi = scan->ndamaged;

	/* first record with hdr > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scan->damaged[mid].hdr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t n = 0; n < 4 && n < lo; n++) {
		size_t k = lo - 1 - n;
		const struct cp_damage *d = &scan->damaged[k];
		uint64_t end = d->hdr + 1, size, seq;
		int known = an_damage_identity(img, scan, k, &size, &seq);

		if (d->known & CP_KNOWN_USER)
			end = known ? d->user + size : next_start(scan, d->user);
		if (addr >= d->hdr && addr < end) {
			out->have_size = known;
			out->size = known ? size : 0;
			out->seq = known ? seq : 0;
			return k;
		}
	}
	return AN_NONE;
}

/* Nearest blocks before and after addr within segment s. */
static void neighbours(const struct cp_scan *scan, const struct cp_segment *s, uint64_t addr,
		       struct an_addr *out)
{
	size_t lo = cp_scan_upper(scan, addr);

	/* blocks before: user <= addr, so they end before addr (cp_scan_find found none) */
	for (size_t n = 0; n < 4 && n < lo; n++) {
		const struct cp_block *b = &scan->blocks[lo - 1 - n];

		if (b->user >= s->vaddr && b->user - s->vaddr < s->memsz &&
		    cp_block_end(b) <= addr) {
			out->prev = lo - 1 - n;
			break;
		}
	}
	for (size_t j = lo; j < scan->nblocks && j < lo + 4; j++) {
		const struct cp_block *b = &scan->blocks[j];

		if (cp_block_start(b) > addr && b->user - s->vaddr < s->memsz) {
			out->next = j;
			break;
		}
	}
}

void an_addr_classify(const struct cp_image *img, const struct cp_scan *scan, uint64_t addr,
		      struct an_addr *out)
{
	const struct cp_block *b;
	uint64_t lo, hi;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->block = out->damage = out->prev = out->next = AN_NONE;
	out->thread = -1;
	out->seg = cp_image_segment(img, addr);
	out->mapping = cp_image_mapping(img, addr);

	b = cp_scan_find(scan, addr);
	if (b) {
		out->block = (size_t)(b - scan->blocks);
		block_part(b, addr, out);
		return;
	}
	k = damage_find(img, scan, addr, out);
	if (k != AN_NONE) {
		const struct cp_damage *d = &scan->damaged[k];

		out->damage = k;
		if ((d->known & CP_KNOWN_USER) && addr >= d->user) {
			out->what = AN_ADDR_BLOCK;
			out->part = AN_PART_DATA;
			out->offset = addr - d->user;
		} else {
			out->what = AN_ADDR_HEADER;
			out->part = AN_PART_HEADER;
			out->offset = addr - d->hdr;
		}
		return;
	}
	if (!out->seg) {
		/* gcore writes no segment at all for read-only file mappings:
		 * NT_FILE still says the address is mapped */
		out->what = out->mapping ? AN_ADDR_NOT_DUMPED : AN_ADDR_UNMAPPED;
		return;
	}
	/* in memory that holds stacks and no heap, the thread whose span holds
	 * it, live frames or dead part (thread stacks with no guard between
	 * them share a segment: reach.h) */
	if (an_stack_run(img, scan, addr, &lo, &hi) == 0) {
		/* spans are disjoint and in stack pointer order: the one holding
		 * addr is that of the nearest stack pointer at or below it (its
		 * live part, the red zone above addr included) or of the nearest
		 * above (its dead part); a span costs reads of its thread's TCB,
		 * so only those few (a snapshot of 1,000 threads took 46 ms an
		 * address when every span was made) */
		size_t cand[4] = { SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX };

		for (size_t t = 0; t < img->nthreads; t++) {
			uint64_t s = img->threads[t].sp;

			if (s < lo || s >= hi)
				continue;
			/* j 0, 1: the highest at or below addr, addr + RED_ZONE;
			 * j 2, 3: the lowest above them */
			for (unsigned j = 0; j < 4; j++) {
				uint64_t edge = (j & 1) && addr + RED_ZONE > addr ? addr + RED_ZONE : addr;
				size_t c = cand[j];

				if (j < 2 ? s <= edge && (c == SIZE_MAX || s > img->threads[c].sp)
					  : s > edge && (c == SIZE_MAX || s < img->threads[c].sp))
					cand[j] = t;
			}
		}
		for (unsigned j = 0; j < 4; j++) {
			struct an_stack_span sp;

			if (cand[j] == SIZE_MAX || an_stack_span(img, cand[j], lo, hi, &sp) < 0 ||
			    addr < sp.dead || addr >= sp.end)
				continue;
			out->what = AN_ADDR_STACK;
			out->thread = (int)cand[j];
			out->below_sp = addr < sp.live;
			return;
		}
		goto other;
	}
	/* a segment holding heap too (a firmware's RAM): a thread whose live
	 * frames (or red zone) hold it wins, the one whose stack pointer is
	 * nearest below it; else it is in the dead part of the stack whose
	 * pointer is nearest above it */
	for (size_t t = 0; t < img->nthreads; t++) {
		const struct cp_thread *th = &img->threads[t];
		int below = addr + RED_ZONE < th->sp;
		const struct cp_thread *was = out->thread >= 0 ? &img->threads[out->thread] : NULL;

		if (cp_image_segment(img, th->sp) != out->seg)
			continue;
		if (was && (below ? !out->below_sp || th->sp >= was->sp
				  : !out->below_sp && th->sp <= was->sp))
			continue;
		out->what = AN_ADDR_STACK;
		out->thread = (int)t;
		out->below_sp = below;
	}
	if (out->what == AN_ADDR_STACK)
		return;
other:
	if (addr - out->seg->vaddr >= out->seg->avail) {
		out->what = AN_ADDR_NOT_DUMPED;
		return;
	}
	neighbours(scan, out->seg, addr, out);
	out->what = out->prev != AN_NONE || out->next != AN_NONE ? AN_ADDR_BETWEEN : AN_ADDR_OTHER;
}
