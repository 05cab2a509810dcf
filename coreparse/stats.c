/* stats.c - find libheapann's statistics region in an image, check it, decode it,
 * and intern its stacks into the scan so that one symbolizer pass names them all.
 *
 * The region is a claim: signature, version, header size, offsets, capacities and
 * the check word (tied to the region's own address) are all checked before any
 * count is believed, and the whole region must be in the dumped memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_priv.h"
#include "cp_stats.h"
#include "htab.h"

void cp_stats_free(struct cp_stats *st)
{
	if (!st)
		return;
	free(st->stacks);
	free(st->samples);
	free(st->unload.v);
	memset(st, 0, sizeof(*st));
}

/* The decoded header of a candidate region. */
struct region {
	uint64_t addr, total, stack_cap, stack_depth, off_counters, off_bins, off_tl, off_stacks;
	uint64_t tl_cap, ncounters, nbins, entry_words;
	unsigned version;         /* HEAPANN_STATS_VERSION_MIN .. HEAPANN_STATS_VERSION */
	uint64_t bin_shards;      /* copies of the bins: what fits before the timeline */
	const unsigned char *p;   /* the whole region, when dumped */
	unsigned char *copy;      /* p when the region spans several segments (owned) */
};

/* The len bytes at addr: a pointer into the image, or, when they span adjacent
 * segments (a program's .data and .bss are two mappings in a core), a copy in
 * *copy that the caller frees. NULL when some byte is not in the image (or out
 * of memory: *nomem is set). */
static const unsigned char *bytes_at(const struct cp_image *img, uint64_t addr, uint64_t len,
				     unsigned char **copy, int *nomem)
{
	const unsigned char *p = cp_image_ptr(img, addr, len);
	uint64_t done = 0;

	*copy = NULL;
	if (p)
		return p;
	if (len > SIZE_MAX || !(*copy = malloc((size_t)len))) {
		*nomem = 1;
		return NULL;
	}
	while (done < len) {
		const struct cp_segment *seg = cp_image_segment(img, addr + done);
		uint64_t n;

		if (!seg || addr + done - seg->vaddr >= seg->avail)
			break;
		n = seg->avail - (addr + done - seg->vaddr);
		if (n > len - done)
			n = len - done;
		p = cp_image_ptr(img, addr + done, n);
		if (!p)
			break;
		memcpy(*copy + done, p, (size_t)n);
		done += n;
	}
	if (done < len) {
		free(*copy);
		*copy = NULL;
		return NULL;
	}
	return *copy;
}

/* 1 when the header at p (target address r, at least HDR_WORDS words readable)
 * is a region's: signature, version, sizes and check word. */
static int header_ok(const struct cp_image *img, const unsigned char *p, uint64_t r,
		     struct region *rg)
{
	unsigned w = img->wsize;
	uint64_t hw[HEAPANN_STATS_HDR_WORDS];

	for (unsigned i = 0; i < HEAPANN_STATS_HDR_WORDS; i++)
		hw[i] = cp_image_word(img, p + i * w);
	if (hw[HEAPANN_SH_MAGIC0] != heapann_stats_magic0(w) ||
	    hw[HEAPANN_SH_MAGIC1] != heapann_stats_magic1(w) ||
	    !heapann_stats_version_ok(hw[HEAPANN_SH_VERSION]) ||
	    hw[HEAPANN_SH_HDR_WORDS] != HEAPANN_STATS_HDR_WORDS)
		return 0;
	rg->addr = r;
	rg->total = hw[HEAPANN_SH_TOTAL];
	rg->stack_cap = hw[HEAPANN_SH_STACK_CAP];
	rg->stack_depth = hw[HEAPANN_SH_STACK_DEPTH];
	rg->off_counters = hw[HEAPANN_SH_OFF_COUNTERS];
	rg->off_bins = hw[HEAPANN_SH_OFF_BINS];
	rg->off_tl = hw[HEAPANN_SH_OFF_TIMELINE];
	rg->off_stacks = hw[HEAPANN_SH_OFF_STACKS];
	rg->tl_cap = hw[HEAPANN_SH_TL_CAP];
	rg->ncounters = hw[HEAPANN_SH_NCOUNTERS];
	rg->nbins = hw[HEAPANN_SH_NBINS];
	rg->entry_words = hw[HEAPANN_SH_ENTRY_WORDS];
	rg->version = (unsigned)hw[HEAPANN_SH_VERSION];
	return hw[HEAPANN_SH_CHECK] == heapann_stats_check(r, rg->total, rg->stack_depth,
							   rg->stack_cap, rg->tl_cap, rg->version, w);
}

/* The region's fields fit together and in its TOTAL. */
static int bounds_ok(struct region *rg, unsigned w)
{
	uint64_t hdr = (uint64_t)HEAPANN_STATS_HDR_WORDS * w;

	if (rg->total > (1ULL << 40) || rg->stack_cap > HEAPANN_STATS_MAX_STACKS ||
	    rg->stack_depth > HEAPANN_MAX_DEPTH || rg->tl_cap < HEAPANN_STATS_TL_MIN ||
	    rg->tl_cap > (1u << 20) || rg->ncounters < HEAPANN_STATS_NCOUNTERS ||
	    rg->ncounters > 65536 || rg->nbins != HEAPANN_STATS_NBINS ||
	    rg->entry_words != HEAPANN_STATS_ENTRY_FIXED + rg->stack_depth)
		return 0;
	if (rg->off_counters < hdr || rg->off_counters + rg->ncounters * w > rg->off_bins ||
	    rg->off_bins + rg->nbins * HEAPANN_STATS_BIN_WORDS * w > rg->off_tl ||
	    rg->off_tl + rg->tl_cap * 2 * w > rg->off_stacks ||
	    rg->off_stacks + rg->stack_cap * rg->entry_words * w > rg->total)
		return 0;
	rg->bin_shards = (rg->off_tl - rg->off_bins) / (rg->nbins * HEAPANN_STATS_BIN_WORDS * w);
	if (rg->bin_shards > HEAPANN_STATS_MAX_BIN_SHARDS)
		rg->bin_shards = HEAPANN_STATS_MAX_BIN_SHARDS;
	return 1;
}

/* Find the first valid region. Returns 1 with *rg filled, 0 when there is none,
 * -1 with err filled when one is valid but not fully dumped or out of bounds. */
/* Validate a signature candidate at target address addr (p points at it in the
 * image, hdr bytes readable). Returns 1 with rg filled, 0 when it is not a region,
 * or -1 with err filled when it is one but damaged or not fully dumped. */
static int region_try(const struct cp_image *img, const unsigned char *p, uint64_t addr,
		      struct region *rg, struct cp_error *err)
{
	int nomem = 0;

	if (cp_decode(p, img->wsize, img->big_endian) != heapann_stats_magic0(img->wsize) ||
	    !header_ok(img, p, addr, rg))
		return 0;
	if (!bounds_ok(rg, img->wsize))
		return cp_error_set(err, CP_EFORMAT, img->path,
				    "statistics region at 0x%llx has fields out of bounds",
				    (unsigned long long)rg->addr);
	rg->p = bytes_at(img, rg->addr, rg->total, &rg->copy, &nomem);
	if (nomem)
		return cp_error_set(err, CP_ENOMEM, img->path,
				    "out of memory reading the statistics region");
	if (!rg->p)
		return cp_error_set(err, CP_EFORMAT, img->path,
				    "statistics region at 0x%llx (%llu bytes) is not fully in the image",
				    (unsigned long long)rg->addr, (unsigned long long)rg->total);
	return 1;
}

/* Find the region: among the signatures the block scan already noted (scan->sigs),
 * or, for a scan that has none recorded (tests' hand-made scans), by reading every
 * word again. Same results as region_try(). */
static int region_find(const struct cp_image *img, const struct cp_scan *scan,
		       struct region *rg, struct cp_error *err)
{
	unsigned w = img->wsize;
	uint64_t hdr = (uint64_t)HEAPANN_STATS_HDR_WORDS * w;

	if (scan && scan->sigs) {
		for (size_t i = 0; i < scan->nsigs; i++) {
			const unsigned char *p = cp_image_ptr(img, scan->sigs[i], hdr);
			int rc;

			if (p && (rc = region_try(img, p, scan->sigs[i], rg, err)) != 0)
				return rc;
		}
		return 0;
	}
	for (size_t s = 0; s < img->nsegs; s++) {
		const struct cp_segment *seg = &img->segs[s];
		const unsigned char *base = img->map + seg->offset;
		uint64_t first = (w - seg->vaddr % w) % w;

		if (seg->avail < hdr)
			continue;
		for (uint64_t off = first; off + hdr <= seg->avail; off += w) {
			int rc = region_try(img, base + off, seg->vaddr + off, rg, err);

			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t addr_find(const uint64_t *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == a ? lo : SIZE_MAX;
}

/* A thread's allocations not yet added to their slot (heapann_stats_pending). */
struct pending {
	uint64_t slot;                   /* the slot's index in the table */
	uint64_t allocs, cls_bytes[HEAPANN_STATS_NCLASSES];
};

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static uint64_t chain_hash(const uint32_t *ids, size_t n)
{
	uint64_t h = 0xCBF29CE484222325ULL ^ n;

	for (size_t i = 0; i < n; i++) {
		h ^= ids[i];
		h *= 0x100000001B3ULL;
		h ^= h >> 31;
	}
	return h;
}

/* A chain of address ids, the key of both tables below. */
struct chain_key {
	const uint32_t *ids;
	size_t n;
	uint32_t cut;   /* 1: the chain went on past its frames */
};

/* Is cp stack 'stack' of the scan (ctx) the chain key? */
static int stack_eq(const void *ctx, uint32_t stack, const void *key)
{
	const struct cp_scan *scan = ctx;
	const struct cp_stack *cs = &scan->stacks[stack];
	const struct chain_key *k = key;

	return cs->depth == k->n && cs->cut == k->cut && !memcmp(&scan->stack_frames[cs->first], k->ids, k->n * sizeof(*k->ids));
}

/* Intern the frames of the decoded entries (frames[e*depth ..], depths[e],
 * cut as cuts[e] says) into scan: merge the new addresses into scan->addrs, renumber scan->stack_frames,
 * and set out->stacks[e].stack to an existing or new cp stack. Returns 0 or -1. */
static int intern(struct cp_scan *scan, struct cp_stats *out, const uint64_t *frames,
		  const uint32_t *depths, const uint8_t *cuts, size_t depth)
{
	size_t ne = out->nstacks, nnew = 0, nall;
	uint64_t *fresh = NULL, *all = NULL;
	uint32_t *remap = NULL, *ids = NULL;
	struct htab table = { 0 };   /* cp stacks by their chain */
	int rc = -1;

	/* 1. the new addresses, merged and renumbered */
	fresh = malloc((ne * depth + 1) * sizeof(*fresh));
	if (!fresh)
		goto out;
	for (size_t e = 0; e < ne; e++)
		for (size_t k = 0; k < depths[e]; k++)
			if (addr_find(scan->addrs, scan->naddrs, frames[e * depth + k]) == SIZE_MAX)
				fresh[nnew++] = frames[e * depth + k];
	qsort(fresh, nnew, sizeof(*fresh), u64_cmp);
	{
		size_t j = 0;

		for (size_t i = 0; i < nnew; i++)
			if (!j || fresh[j - 1] != fresh[i])
				fresh[j++] = fresh[i];
		nnew = j;
	}
	nall = scan->naddrs + nnew;
	all = malloc((nall + 1) * sizeof(*all));
	remap = malloc((scan->naddrs + 1) * sizeof(*remap));
	if (!all || !remap)
		goto out;
	{
		size_t i = 0, j = 0, k = 0;

		while (i < scan->naddrs || j < nnew) {
			if (j == nnew || (i < scan->naddrs && scan->addrs[i] < fresh[j])) {
				remap[i] = (uint32_t)k;
				all[k++] = scan->addrs[i++];
			} else {
				all[k++] = fresh[j++];
			}
		}
	}
	for (size_t i = 0; i < scan->nstack_frames; i++)
		scan->stack_frames[i] = remap[scan->stack_frames[i]];
	free(scan->addrs);
	scan->addrs = all;
	scan->naddrs = nall;
	all = NULL;

	/* 2. the chains: an existing stack, or a new one */
	{
		size_t need_frames = scan->nstack_frames, need_stacks = scan->nstacks + ne;
		struct cp_stack *st;
		uint32_t *sf;

		for (size_t e = 0; e < ne; e++)
			need_frames += depths[e];
		st = realloc(scan->stacks, (need_stacks + 1) * sizeof(*st));
		if (!st)
			goto out;
		scan->stacks = st;
		sf = realloc(scan->stack_frames, (need_frames + 1) * sizeof(*sf));
		if (!sf)
			goto out;
		scan->stack_frames = sf;
	}
	ids = malloc((depth + 1) * sizeof(*ids));
	if (!ids || htab_reserve(&table, scan->nstacks + ne) < 0)
		goto out;
	for (size_t s = 0; s < scan->nstacks; s++) {
		const struct cp_stack *cs = &scan->stacks[s];

		if (htab_add(&table, chain_hash(&scan->stack_frames[cs->first], cs->depth), (uint32_t)s) < 0)
			goto out;
	}
	for (size_t e = 0; e < ne; e++) {
		struct chain_key key = { ids, depths[e], cuts[e] };
		int64_t st;

		for (size_t k = 0; k < key.n; k++)
			ids[k] = (uint32_t)addr_find(scan->addrs, scan->naddrs, frames[e * depth + k]);
		st = htab_put(&table, chain_hash(ids, key.n), (uint32_t)scan->nstacks, stack_eq, scan, &key);
		if (st < 0)
			goto out;
		if ((size_t)st == scan->nstacks) {
			struct cp_stack *cs = &scan->stacks[scan->nstacks];

			cs->first = (uint32_t)scan->nstack_frames;
			cs->depth = (uint32_t)key.n;
			cs->cut = key.cut;
			memcpy(&scan->stack_frames[scan->nstack_frames], ids, key.n * sizeof(*ids));
			scan->nstack_frames += key.n;
			scan->nstacks++;
		}
		out->stacks[e].stack = (uint32_t)st;
	}
	rc = 0;
out:
	free(fresh);
	free(all);
	free(remap);
	htab_release(&table);
	free(ids);
	return rc;
}

/* The statistics' slots and the scan they were interned into. */
struct slot_ctx {
	const struct cp_scan *scan;
	const struct cp_stats *out;
};

/* Is slot e's chain (a full-depth one) the key's first key->n frames? Its cut
 * mark is not asked: a region before block format 2 has none, and libheapann
 * now keeps as many frames in a slot as in a header, so no deeper block comes
 * from it. */
static int slot_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct slot_ctx *x = ctx;
	const struct cp_stack *es = &x->scan->stacks[x->out->stacks[e].stack];
	const struct chain_key *k = key;

	return !memcmp(&x->scan->stack_frames[es->first], k->ids, k->n * sizeof(*k->ids));
}

/* Derive what libheapann no longer counts (heapann_stats.h, version 2): each
 * stack's frees are its allocations minus the live blocks of the scan under it,
 * its bytes freed per class its bytes minus their sizes, and the unrecorded frees
 * the unrecorded allocations minus the live blocks whose stack has no slot. A
 * block is under a slot when its first `depth` (the region's STACK_DEPTH) frames
 * are the slot's frames: its own cp stack when it is no deeper (intern() gave
 * equal chains one stack), else the slot with its first `depth` frames.
 * Assumes every live block is in the image: a block in memory that was not
 * dumped (a truncated core) or whose header was overwritten counts as freed, so
 * frees are over-counted then (the report's missing writable memory says where
 * blocks could hide). A block caught half-way through free() (counted freed, its
 * header still live) would make a count go below 0: it stops at 0. Returns 0, or
 * -1 when out of memory. */
static int derive_frees(const struct cp_scan *scan, struct cp_stats *out, size_t depth,
			uint64_t mask)
{
	uint32_t *slot_of = NULL;
	uint64_t *live = NULL, unmatched = 0;
	struct htab table = { 0 };   /* full-depth slots by their chain */
	struct slot_ctx cx = { scan, out };
	int rc = -1;

	slot_of = malloc((scan->nstacks + 1) * sizeof(*slot_of));
	live = calloc(out->nstacks + 1, (1 + HEAPANN_STATS_NCLASSES) * sizeof(*live));
	if (!slot_of || !live || htab_reserve(&table, out->nstacks) < 0)
		goto out;
	memset(slot_of, 0xFF, (scan->nstacks + 1) * sizeof(*slot_of));
	/* the slot of each cp stack that is a slot's chain; full-depth slots also
	 * by the hash of their chain, for the deeper stacks */
	for (size_t e = 0; e < out->nstacks; e++) {
		const struct cp_stack *cs = &scan->stacks[out->stacks[e].stack];

		if (slot_of[out->stacks[e].stack] != UINT32_MAX)
			continue;   /* a chain in two slots (a writer gave up waiting): the first */
		slot_of[out->stacks[e].stack] = (uint32_t)e;
		if (cs->depth == depth &&
		    htab_add(&table, chain_hash(&scan->stack_frames[cs->first], depth), (uint32_t)e) < 0)
			goto out;
	}
	for (size_t s = 0; s < scan->nstacks; s++) {
		const struct cp_stack *cs = &scan->stacks[s];
		struct chain_key key = { &scan->stack_frames[cs->first], depth, 0 };
		int64_t e;

		if (cs->depth <= depth || slot_of[s] != UINT32_MAX)
			continue;
		e = htab_find(&table, chain_hash(key.ids, depth), slot_eq, &cx, &key);
		if (e >= 0)
			slot_of[s] = (uint32_t)e;
	}
	/* live blocks per slot: count, then bytes per class; from the scan's
	 * counts per stack when it kept them (the same sums) */
	for (size_t s = 0; scan->stack_live && s < scan->nstack_live && s < scan->nstacks; s++) {
		const struct cp_stack_live *sl = &scan->stack_live[s];
		uint64_t *l;

		if (!sl->n)
			continue;
		if (slot_of[s] == UINT32_MAX) {
			unmatched += sl->n;
			continue;
		}
		l = &live[(size_t)slot_of[s] * (1 + HEAPANN_STATS_NCLASSES)];
		l[0] += sl->n;
		for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
			l[1 + k] += sl->cls_bytes[k];
	}
	for (size_t i = 0; !scan->stack_live && i < scan->nblocks; i++) {
		const struct cp_block *b = &scan->blocks[i];
		uint64_t *l;

		if (b->state != CP_LIVE || b->stack >= scan->nstacks)
			continue;
		if (slot_of[b->stack] == UINT32_MAX) {
			unmatched++;
			continue;
		}
		l = &live[(size_t)slot_of[b->stack] * (1 + HEAPANN_STATS_NCLASSES)];
		l[0]++;
		l[1 + heapann_stats_class(b->size)] += b->size;
	}
	for (size_t e = 0; e < out->nstacks; e++) {
		struct cp_stats_stack *cs = &out->stacks[e];
		const uint64_t *l = &live[e * (1 + HEAPANN_STATS_NCLASSES)];

		cs->frees = cs->allocs > l[0] ? cs->allocs - l[0] : 0;
		cs->bytes_freed = 0;
		for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++) {
			/* byte counts are target words: on 32 bits they wrap alike */
			cs->cls_freed[k] = cs->allocs >= l[0] ? (cs->cls_bytes[k] - l[1 + k]) & mask : 0;
			cs->bytes_freed += cs->cls_freed[k];
		}
	}
	out->unrecorded_frees = out->unrecorded_allocs > unmatched ?
				out->unrecorded_allocs - unmatched : 0;
	rc = 0;
out:
	free(slot_of);
	free(live);
	htab_release(&table);
	return rc;
}

/* Read the table of unloaded libraries at target address u into out->unload;
 * a table that is garbage, damaged or not all in the image leaves it empty and
 * says why in out->unload_err. Returns 0, or -1 when out of memory. */
static int unload_read(const struct cp_image *img, uint64_t u, struct cp_stats *out)
{
	unsigned w = img->wsize;
	uint64_t hdr = (uint64_t)HEAPANN_UNLOAD_HDR_WORDS * w, avail = 0;
	unsigned char *copy = NULL, *copy2 = NULL;
	const unsigned char *p;
	char why[160];
	int nomem = 0, rc;

	p = bytes_at(img, u, hdr, &copy, &nomem);
	if (p) {
		uint64_t cap = cp_image_word(img, p + (uint64_t)HEAPANN_UH_CAP * w);
		uint64_t total = hdr + cap * heapann_unload_rec_bytes(w);
		const unsigned char *all;

		avail = hdr;
		/* the whole table when its capacity is sane and it is all there */
		if (cap && cap <= HEAPANN_UNLOAD_MAX_CAP &&
		    (all = bytes_at(img, u, total, &copy2, &nomem)) != NULL) {
			p = all;
			avail = total;
		}
	}
	if (nomem) {
		free(copy);
		free(copy2);
		return -1;
	}
	rc = cp_unload_decode(p, avail, u, w, img->big_endian, &out->unload, why, sizeof(why));
	free(copy);
	free(copy2);
	if (rc == -2)
		return -1;
	if (rc < 0)
		snprintf(out->unload_err, sizeof(out->unload_err),
			 "%s: table of unloaded libraries at 0x%llx skipped: %s", img->path,
			 (unsigned long long)u, why);
	return 0;
}

int cp_stats_read(const struct cp_image *img, struct cp_scan *scan, struct cp_stats *out,
		  struct cp_error *err)
{
	struct region rg = { 0 };
	unsigned w = img->wsize;
	uint64_t *frames = NULL;
	uint32_t *depths = NULL;
	uint8_t *cuts = NULL;
	const unsigned char *c, *e;
	struct pending pend[HEAPANN_STATS_CALL_SHARDS];
	size_t ntl, npend = 0;
	int found;

	memset(out, 0, sizeof(*out));
	found = region_find(img, scan, &rg, err);
	if (found <= 0)
		return found;
#define WORD(p, i) cp_image_word(img, (p) + (uint64_t)(i) * w)
	out->addr = rg.addr;
	c = rg.p + rg.off_counters;
	out->peak_live = WORD(c, HEAPANN_SC_PEAK);
	out->peak_time = WORD(c, HEAPANN_SC_PEAK_TIME);
	out->unrecorded_allocs = WORD(c, HEAPANN_SC_UNREC_ALLOCS);
	out->unrecorded_bytes = WORD(c, HEAPANN_SC_UNREC_BYTES);
	out->tl_interval = WORD(c, HEAPANN_SC_TL_INTERVAL);
	out->guard_breaks = WORD(c, HEAPANN_SC_GUARD_BREAKS);
	out->bad_frees = WORD(c, HEAPANN_SC_BAD_FREES);
	out->last_guard_seq = WORD(c, HEAPANN_SC_LAST_GUARD_SEQ);
	out->temp_counted = rg.version >= 3;
	/* version 2 kept the word reserved (0) */
	out->unrecorded_temp = rg.version >= 3 ? WORD(c, HEAPANN_SC_UNREC_TEMP) : 0;
	out->temp = out->unrecorded_temp;
	if (WORD(c, HEAPANN_SC_UNLOAD_TABLE) &&
	    unload_read(img, WORD(c, HEAPANN_SC_UNLOAD_TABLE), out) < 0)
		goto nomem;
	for (unsigned sh = 0; sh < HEAPANN_STATS_CALL_SHARDS; sh++) {
		uint64_t base = HEAPANN_SC_CALLS + (uint64_t)sh * HEAPANN_STATS_CALL_SHARD_WORDS;
		uint64_t slot = WORD(c, base + HEAPANN_SP_SLOT);

		for (unsigned i = 0; i < HEAPANN_NCALLS; i++)
			out->calls[i] += WORD(c, base + i);
		if (slot == 0 || slot > rg.stack_cap)
			continue;   /* no pending counts (or a slot out of the table: ignored) */
		pend[npend].slot = slot - 1;
		pend[npend].allocs = WORD(c, base + HEAPANN_SP_ALLOCS);
		for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
			pend[npend].cls_bytes[k] = WORD(c, base + HEAPANN_SP_CLS_BYTES + k);
		npend++;
	}
	qsort(pend, npend, sizeof(*pend), pending_cmp);
	for (unsigned b = 0; b < HEAPANN_STATS_NBINS; b++) {
		/* the sum of the threads' copies, as target words (they wrap alike) */
		uint64_t mask = w == 8 ? UINT64_MAX : 0xFFFFFFFFu, v[4] = { 0, 0, 0, 0 };

		for (unsigned sh = 0; sh < rg.bin_shards; sh++) {
			const unsigned char *bp = rg.p + rg.off_bins +
				((uint64_t)sh * HEAPANN_STATS_NBINS + b) * HEAPANN_STATS_BIN_WORDS * w;

			for (unsigned k = 0; k < 4; k++)
				v[k] = (v[k] + WORD(bp, k)) & mask;
		}
		out->bins[b].allocs = v[0];
		out->bins[b].frees = v[2];
		/* bytes are kept for the large bin only (heapann_stats.h) */
		if (b == HEAPANN_STATS_BIN_LARGE) {
			out->bins[b].bytes = v[1];
			out->bins[b].bytes_freed = v[3];
		} else {
			out->bins[b].bytes = out->bins[b].allocs * b;
			out->bins[b].bytes_freed = out->bins[b].frees * b;
		}
		out->allocs += out->bins[b].allocs;
		out->frees += out->bins[b].frees;
	}
	out->bytes = WORD(c, HEAPANN_SC_BYTES);
	out->bytes_freed = WORD(c, HEAPANN_SC_BYTES_FREED);
	out->live_bytes = (out->bytes - out->bytes_freed) & (w == 8 ? UINT64_MAX : 0xFFFFFFFFu);
	out->time = (out->bytes + out->bytes_freed) & (w == 8 ? UINT64_MAX : 0xFFFFFFFFu);
	ntl = (size_t)WORD(c, HEAPANN_SC_TL_COUNT);
	if (ntl > rg.tl_cap)
		ntl = (size_t)rg.tl_cap;
	out->samples = malloc((ntl + 1) * sizeof(*out->samples));
	if (!out->samples)
		goto nomem;
	for (size_t i = 0; i < ntl; i++) {
		const unsigned char *sp = rg.p + rg.off_tl + (uint64_t)i * 2 * w;
		uint64_t t = WORD(sp, 0);

		/* a sample being written while the core was taken is left out */
		if (out->nsamples && t < out->samples[out->nsamples - 1].time)
			continue;
		out->samples[out->nsamples].time = t;
		out->samples[out->nsamples].live = WORD(sp, 1);
		out->nsamples++;
	}

	/* the stack table: complete entries only */
	out->stack_cap = rg.stack_cap;
	{
		size_t used = 0, depth = (size_t)rg.stack_depth, ip = 0;
		uint64_t mask = w == 8 ? UINT64_MAX : 0xFFFFFFFFu;

		for (uint64_t s = 0; s < rg.stack_cap; s++) {
			e = rg.p + rg.off_stacks + s * rg.entry_words * w;
			if (WORD(e, HEAPANN_SE_HASH))
				used++;
		}
		out->stacks = calloc(used + 1, sizeof(*out->stacks));
		frames = malloc((used * depth + 1) * sizeof(*frames));
		depths = malloc((used + 1) * sizeof(*depths));
		cuts = malloc(used + 1);
		if (!out->stacks || !frames || !depths || !cuts)
			goto nomem;
		for (uint64_t s = 0; s < rg.stack_cap; s++) {
			struct cp_stats_stack *cs = &out->stacks[out->nstacks];
			uint64_t dw;
			unsigned n;

			e = rg.p + rg.off_stacks + s * rg.entry_words * w;
			while (ip < npend && pend[ip].slot < s)
				ip++;
			if (!WORD(e, HEAPANN_SE_HASH))
				continue;
			dw = WORD(e, HEAPANN_SE_DEPTH);
			n = (unsigned)(dw & HEAPANN_STATS_DEPTH_MASK);
			if (!(dw & HEAPANN_STATS_READY) || n > depth) {
				out->skipped_entries++;
				continue;
			}
			cs->allocs = WORD(e, HEAPANN_SE_ALLOCS);
			cs->temp = rg.version >= 3 ? WORD(e, HEAPANN_SE_TEMP) : 0;
			out->temp = (out->temp + cs->temp) & mask;
			for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
				cs->cls_bytes[k] = WORD(e, HEAPANN_SE_CLS_BYTES + k);
			/* plus what threads have not moved to the slot yet (as target words) */
			for (size_t j = ip; j < npend && pend[j].slot == s; j++) {
				cs->allocs = (cs->allocs + pend[j].allocs) & mask;
				for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
					cs->cls_bytes[k] = (cs->cls_bytes[k] + pend[j].cls_bytes[k]) & mask;
			}
			/* frees and bytes freed: derive_frees() below */
			for (unsigned k = 0; k < HEAPANN_STATS_NCLASSES; k++)
				cs->bytes += cs->cls_bytes[k];
			for (unsigned k = 0; k < n; k++)
				frames[out->nstacks * depth + k] = WORD(e, HEAPANN_SE_FRAMES + k);
			depths[out->nstacks] = n;
			cuts[out->nstacks] = (dw & HEAPANN_STATS_CUT) != 0;
			out->nstacks++;
		}
		if (intern(scan, out, frames, depths, cuts, depth) < 0 ||
		    derive_frees(scan, out, depth, mask) < 0)
			goto nomem;
	}
#undef WORD
	free(frames);
	free(depths);
	free(cuts);
	free(rg.copy);
	return 1;
nomem:
	free(frames);
	free(depths);
	free(cuts);
	free(rg.copy);
	cp_stats_free(out);
	return cp_error_set(err, CP_ENOMEM, img->path, "out of memory reading the statistics region");
}
