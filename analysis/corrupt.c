/* corrupt.c - the corruption analysis: live blocks whose guard bytes are broken,
 * how far each overflow provably reached, and for every damaged header the block
 * just before it as the suspect.
 *
 * An overflow runs forward: past the user data, through the guard, over the
 * allocator's own words and into the next block's header. So the block ending
 * right before a damaged header is the first suspect, and a broken guard followed
 * by a damaged header is most likely one overflow. Pure: reads the image, no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "corrupt.h"
#include "heapann_block.h"

/* Byte i (in memory order) of the target word v. */
static unsigned word_byte(uint64_t v, unsigned i, unsigned w, int big)
{
	unsigned sh = big ? 8 * (w - 1 - i) : 8 * i;

	return (unsigned)((v >> sh) & 0xFFu);
}

/* One past the last byte of word p (at target address a) that differs from want;
 * 0 when none differs. */
static uint64_t last_diff(const struct cp_image *img, const unsigned char *p, uint64_t a,
			  uint64_t want)
{
	uint64_t r = 0;

	for (unsigned i = 0; i < img->wsize; i++)
		if (p[i] != word_byte(want, i, img->wsize, img->big_endian))
			r = a + i + 1;
	return r;
}

uint64_t an_damage_reach(const struct cp_image *img, const struct cp_damage *d)
{
	const unsigned w = img->wsize;
	const unsigned char *p = cp_image_ptr(img, d->hdr, (uint64_t)HEAPANN_W_SEQ * w);
	uint64_t reach = d->hdr, r, end, dep;
	unsigned vpos = img->big_endian ? w - 1 : 0;

	if (!p)
		return reach;
	r = last_diff(img, p, d->hdr, heapann_start_live(w));
	if (r > reach)
		reach = r;
	/* a version byte a reader takes (1 or 2: an image holds one or the other) */
	if ((p[w + vpos] < HEAPANN_VERSION_MIN || p[w + vpos] > HEAPANN_VERSION) &&
	    d->hdr + w + vpos + 1 > reach)
		reach = d->hdr + w + vpos + 1;
	/* the depth the END word claims, when it is there and consistent */
	if ((d->known & CP_KNOWN_USER) && d->user >= d->hdr + w &&
	    cp_image_read_word(img, d->user - w, &end) == 0) {
		uint64_t magic = end & ~(uint64_t)HEAPANN_END_DEPTH_MASK;

		dep = end & HEAPANN_END_DEPTH_MASK;
		if ((magic == heapann_end_live(w) || magic == heapann_end_freed(w)) &&
		    dep <= HEAPANN_MAX_DEPTH && d->hdr + heapann_header_bytes(dep, w) == d->user) {
			/* DEPTH is the count, or the count with the cut flag */
			uint64_t rc = last_diff(img, p + HEAPANN_W_DEPTH * w, d->hdr + HEAPANN_W_DEPTH * w,
						dep | HEAPANN_DEPTH_CUT);

			r = last_diff(img, p + HEAPANN_W_DEPTH * w, d->hdr + HEAPANN_W_DEPTH * w, dep);
			if (rc < r)
				r = rc;
			if (r > reach)
				reach = r;
		}
	}
	return reach;
}

/* First index in damaged with hdr >= addr. */
static size_t damaged_lower(const struct cp_scan *scan, uint64_t addr)
{
	size_t lo = 0, hi = scan->ndamaged;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scan->damaged[mid].hdr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int same_segment(const struct cp_image *img, uint64_t a, uint64_t b)
{
	const struct cp_segment *s = cp_image_segment(img, a);

	return s && s == cp_image_segment(img, b);
}

/* Where the guard of block i leads: the next header after it. */
static void guard_follow(const struct cp_image *img, const struct cp_scan *scan, size_t i,
			 struct an_guard_hit *g)
{
	const struct cp_block *b = &scan->blocks[i];
	uint64_t gend = cp_block_end(b), best = UINT64_MAX;
	size_t best_block = AN_NONE, k;

	/* blocks are sorted by user address; a few after i cover differing pads */
	for (size_t j = i + 1; j < scan->nblocks && j < i + 8; j++) {
		uint64_t s = cp_block_start(&scan->blocks[j]);

		if (s >= gend && s < best && same_segment(img, gend - 1, s)) {
			best = s;
			best_block = j;
		}
	}
	k = damaged_lower(scan, gend);
	if (k < scan->ndamaged && scan->damaged[k].hdr < best &&
	    same_segment(img, gend - 1, scan->damaged[k].hdr)) {
		best = scan->damaged[k].hdr;
		best_block = AN_NONE;
		g->next_damaged = k;
		g->reach = an_damage_reach(img, &scan->damaged[k]);
		if (g->reach == scan->damaged[k].hdr)
			g->reach = 0;
	}
	if (best != UINT64_MAX) {
		g->next_header = best;
		g->next_block = best_block;
	}
}

/* Index of return address a in scan->addrs, or -1. */
static long addr_index(const struct cp_scan *scan, uint64_t a)
{
	size_t lo = 0, hi = scan->naddrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scan->addrs[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < scan->naddrs && scan->addrs[lo] == a ? (long)lo : -1;
}

#define LOST_SEARCH (64u * 1024u)   /* bytes after a broken guard searched for an END */

/* After a whole broken guard with no damaged header listed: look in the gap for
 * the live END word of a neighbour whose header start (DEPTH included) is gone.
 * Its frames are words of its header, trusted only from the END side down to the
 * first word that is not a return address some block in the image also holds. */
static void guard_lost_end(const struct cp_image *img, const struct cp_scan *scan,
			   struct an_guard_hit *g, uint64_t gend)
{
	const unsigned w = img->wsize;
	uint64_t a = (gend + w - 1) / w * w;
	uint64_t stop = g->next_header ? g->next_header : gend + LOST_SEARCH;

	if (stop - gend > LOST_SEARCH)
		stop = gend + LOST_SEARCH;
	for (; a + w <= stop; a += w) {
		uint64_t v, dep, hb, h;
		uint32_t n = 0;

		if (cp_image_read_word(img, a, &v) < 0)
			return;
		if ((v & ~(uint64_t)HEAPANN_END_DEPTH_MASK) != heapann_end_live(w))
			continue;
		dep = v & HEAPANN_END_DEPTH_MASK;
		hb = heapann_header_bytes(dep, w);
		if (dep > HEAPANN_MAX_DEPTH || a + w < gend + hb)
			continue;   /* its header would begin inside the culprit */
		h = a + w - hb;
		for (uint64_t f = dep; f-- > 0 && n < AN_LOST_FRAMES;) {
			uint64_t ra;
			long idx;

			if (cp_image_read_word(img, h + (HEAPANN_W_FRAMES + f) * w, &ra) < 0 ||
			    (idx = addr_index(scan, ra)) < 0)
				break;
			g->lost_frame[n++] = (uint32_t)idx;
		}
		/* outermost first so far: turn innermost first */
		for (uint32_t x = 0; x < n / 2; x++) {
			uint32_t t = g->lost_frame[x];

			g->lost_frame[x] = g->lost_frame[n - 1 - x];
			g->lost_frame[n - 1 - x] = t;
		}
		g->lost_user = a + w;
		g->lost_hdr = h;
		g->nlost_frames = n;
		return;
	}
}

/* The suspect of damage record k: the nearest block or identified damaged header
 * starting before it in the same segment. */
static void damage_suspect(const struct cp_image *img, const struct cp_scan *scan, size_t k,
			   struct an_damage_hit *h)
{
	const struct cp_damage *d = &scan->damaged[k];
	size_t lo = cp_scan_lower(scan, d->hdr);
	uint64_t best = 0, end = 0;
	int have = 0;

	h->damage = k;
	h->suspect = AN_NONE;
	h->suspect_damage = AN_NONE;
	h->gap = 0;
	for (size_t n = 0; n < 4 && n < lo; n++) {
		size_t j = lo - 1 - n;
		const struct cp_block *b = &scan->blocks[j];
		uint64_t s = cp_block_start(b);

		if (s >= d->hdr || !same_segment(img, s, d->hdr))
			continue;
		if (!have || s > best ||
		    (s == best && b->state == CP_LIVE && scan->blocks[h->suspect].state != CP_LIVE)) {
			best = s;
			h->suspect = j;
			end = cp_block_end(b);
			have = 1;
		}
	}
	for (size_t n = k; n-- > 0;) {
		const struct cp_damage *e = &scan->damaged[n];

		if (!(e->known & CP_KNOWN_USER) || e->user >= d->hdr)
			continue;
		if ((!have || e->hdr > best) && same_segment(img, e->hdr, d->hdr)) {
			h->suspect = AN_NONE;
			h->suspect_damage = n;
			end = e->user + ((e->known & CP_KNOWN_SIZE) ? e->size : 0);
			have = 1;
		}
		break;
	}
	if (have)
		h->gap = (int64_t)(d->hdr - end);
	if (h->suspect != AN_NONE) {
		const struct cp_block *b = &scan->blocks[h->suspect];

		if (b->state == CP_LIVE && b->guard_len && b->overrun == b->guard_len)
			h->likely = AN_LIKELY_OVERFLOW;
		else if (d->kind == CP_DMG_END && b->state == CP_LIVE && b->guard_len &&
			 !(b->flags & (CP_GUARD_BROKEN | CP_GUARD_MISSING)))
			h->likely = AN_LIKELY_UNDERRUN;
	} else if (h->suspect_damage == AN_NONE && d->kind == CP_DMG_END) {
		h->likely = AN_LIKELY_UNDERRUN;
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int seq_known(const uint64_t *seqs, size_t n, uint64_t seq)
{
	return bsearch(&seq, seqs, n, sizeof(*seqs), u64_cmp) != NULL;
}

/* Sequence numbers between block i and the next intact block that the image holds
 * nowhere: an allocation made right after i whose header is gone. */
static void guard_lost(const struct cp_scan *scan, const uint64_t *seqs, size_t nseqs,
		       struct an_guard_hit *g)
{
	uint64_t a = scan->blocks[g->block].seq, b = scan->blocks[g->next_block].seq;

	if (b <= a + 1 || b - a > 4096)
		return;
	for (uint64_t s = a + 1; s < b; s++)
		if (!seq_known(seqs, nseqs, s)) {
			if (!g->nlost++)
				g->first_lost = s;
		}
}

#define MAX_INFOS 64

/* Distinct INFO words of the intact live blocks, rebuilt from guard and pad. */
static size_t infos_collect(const struct cp_image *img, const struct cp_scan *scan,
			    uint64_t *infos)
{
	size_t n = 0;

	for (size_t i = 0; i < scan->nblocks && n < MAX_INFOS; i++) {
		const struct cp_block *b = &scan->blocks[i];
		uint64_t info;
		size_t k;

		if (b->state != CP_LIVE || (b->flags & CP_HDR_UNVERIFIED))
			continue;
		info = heapann_info_make(b->guard_len, b->pad / img->wsize);
		for (k = 0; k < n && infos[k] != info; k++)
			;
		if (k == n)
			infos[n++] = info;
	}
	return n;
}

/* The words a recovery needs of damaged header d: a live END word at the user
 * pointer that agrees with where the header starts (its depth), and SIZE, SEQ and
 * CHECK dumped. Returns 0 and fills them, or -1 when d cannot be recovered. */
static int damage_words(const struct cp_image *img, const struct cp_damage *d, uint64_t *dep,
			uint64_t *size, uint64_t *seq, uint64_t *chk)
{
	const unsigned w = img->wsize;
	uint64_t end;

	if (!(d->known & CP_KNOWN_USER) || d->user < d->hdr + w ||
	    cp_image_read_word(img, d->user - w, &end) < 0)
		return -1;
	*dep = end & HEAPANN_END_DEPTH_MASK;
	if ((end & ~(uint64_t)HEAPANN_END_DEPTH_MASK) != heapann_end_live(w) ||
	    *dep > HEAPANN_MAX_DEPTH || d->hdr + heapann_header_bytes(*dep, w) != d->user)
		return -1;
	if (cp_image_read_word(img, d->hdr + HEAPANN_W_SIZE * w, size) < 0 ||
	    cp_image_read_word(img, d->hdr + HEAPANN_W_SEQ * w, seq) < 0 ||
	    cp_image_read_word(img, d->hdr + HEAPANN_W_CHECK * w, chk) < 0)
		return -1;
	return 0;
}

/* Size and seq of a damaged header whose INFO (or START) was overwritten but whose
 * SIZE, SEQ and CHECK words survived: the check word decides. */
static void damage_recover(const struct cp_image *img, const struct cp_damage *d,
			   const uint64_t *infos, size_t ninfos, struct an_damage_hit *h)
{
	const unsigned w = img->wsize;
	uint64_t dep, size, seq, chk;

	if (damage_words(img, d, &dep, &size, &seq, &chk) < 0)
		return;
	/* DEP is END's frame count; from version 2 the check covers the whole DEPTH
	 * word, which for a stack cut at HEAPANN_DEPTH also holds HEAPANN_DEPTH_CUT */
	for (size_t i = 0; i < ninfos; i++)
		if (heapann_check(d->hdr, size, dep, seq, infos[i], w) == chk ||
		    (heapann_info_version(infos[i]) >= 2 &&
		     heapann_check(d->hdr, size, dep | HEAPANN_DEPTH_CUT, seq, infos[i], w) == chk)) {
			h->have_size = 1;
			h->recovered = 1;
			h->size = size;
			h->seq = seq;
			return;
		}
}

int an_damage_identity(const struct cp_image *img, const struct cp_scan *scan, size_t k,
		       uint64_t *size, uint64_t *seq)
{
	const struct cp_damage *d = &scan->damaged[k];
	struct an_damage_hit h;
	uint64_t infos[MAX_INFOS];

	if ((d->known & (CP_KNOWN_SIZE | CP_KNOWN_SEQ)) == (CP_KNOWN_SIZE | CP_KNOWN_SEQ)) {
		*size = d->size;
		*seq = d->seq;
		return 1;
	}
	/* the INFO words cost a pass over the blocks: only for a header that has
	 * what a recovery needs (--addr asks this for every damaged neighbour) */
	{
		uint64_t dep, sz, sq, chk;

		if (damage_words(img, d, &dep, &sz, &sq, &chk) < 0)
			return 0;
	}
	memset(&h, 0, sizeof(h));
	damage_recover(img, d, infos, infos_collect(img, scan, infos), &h);
	if (!h.have_size)
		return 0;
	*size = h.size;
	*seq = h.seq;
	return 1;
}

int an_corrupt_build(const struct cp_image *img, const struct cp_scan *scan,
		     struct an_corrupt *out)
{
	uint64_t infos[MAX_INFOS];
	size_t ninfos = 0;
	size_t n = 0, nseqs = 0;
	uint64_t *seqs = NULL;

	memset(out, 0, sizeof(*out));
	out->nstack_copies = scan->nstack_copies;   /* the scan left them out of damaged */
	/* the scanner counted the broken guards: with none (nearly always), two
	 * passes over the blocks less (1 GB read at 10M blocks, issue 15) */
	if (scan->guards_counted) {
		n = scan->nguard_broken;
	} else {
		for (size_t i = 0; i < scan->nblocks; i++)
			if (scan->blocks[i].state == CP_LIVE && (scan->blocks[i].flags & CP_GUARD_BROKEN))
				n++;
	}
	if (n && !(out->guards = calloc(n, sizeof(*out->guards))))
		goto nomem;
	if (scan->ndamaged && !(out->damaged = calloc(scan->ndamaged, sizeof(*out->damaged))))
		goto nomem;
	for (size_t i = 0; out->nguards < n && i < scan->nblocks; i++) {
		const struct cp_block *b = &scan->blocks[i];
		struct an_guard_hit *g;

		if (b->state != CP_LIVE || !(b->flags & CP_GUARD_BROKEN))
			continue;
		g = &out->guards[out->nguards++];
		g->block = i;
		g->overrun = b->overrun;
		g->whole_guard = b->guard_len && b->overrun == b->guard_len;
		g->next_damaged = AN_NONE;
		g->next_block = AN_NONE;
		if (g->whole_guard)
			guard_follow(img, scan, i, g);
		if (g->whole_guard && g->next_damaged == AN_NONE)
			guard_lost_end(img, scan, g, cp_block_end(b));
		if (g->next_block != AN_NONE) {
			if (!seqs) {
				seqs = malloc((scan->nblocks + scan->ndamaged + 1) * sizeof(*seqs));
				if (!seqs)
					goto nomem;
				for (size_t j = 0; j < scan->nblocks; j++)
					seqs[nseqs++] = scan->blocks[j].seq;
				for (size_t j = 0; j < scan->ndamaged; j++)
					if (scan->damaged[j].known & CP_KNOWN_SEQ)
						seqs[nseqs++] = scan->damaged[j].seq;
				qsort(seqs, nseqs, sizeof(*seqs), u64_cmp);
			}
			guard_lost(scan, seqs, nseqs, g);
		}
	}
	if (scan->ndamaged)
		ninfos = infos_collect(img, scan, infos);
	for (size_t k = 0; k < scan->ndamaged; k++) {
		const struct cp_damage *d = &scan->damaged[k];
		struct an_damage_hit *h = &out->damaged[out->ndamaged++];

		damage_suspect(img, scan, k, h);
		if ((d->known & (CP_KNOWN_SIZE | CP_KNOWN_SEQ)) == (CP_KNOWN_SIZE | CP_KNOWN_SEQ)) {
			h->have_size = 1;
			h->size = d->size;
			h->seq = d->seq;
		} else if (d->kind == CP_DMG_START || d->kind == CP_DMG_CHECK || d->kind == CP_DMG_VERSION) {
			damage_recover(img, d, infos, ninfos, h);
		}
	}
	free(seqs);
	return 0;
nomem:
	free(seqs);
	an_corrupt_release(out);
	return -1;
}

void an_corrupt_release(struct an_corrupt *c)
{
	free(c->guards);
	free(c->damaged);
	memset(c, 0, sizeof(*c));
}
