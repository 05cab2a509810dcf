/* scan.c - find every annotated block in an image. Dumped memory is cut into
 * chunks that worker threads take in turn; the inner loop filters 32-bit lanes
 * (in the target's raw byte order) against the magics with SSE2 and decodes only
 * the hits. A candidate is validated against heapann_block.h before anything in it
 * is used, and never followed when it fails. Each chunk's blocks are built in a
 * buffer, then copied in chunk order (address order) into the result, and the
 * buffer is reused; stacks are interned per thread and merged at the end. Memory
 * grows with the number of blocks, not with the image (big images' pages are
 * dropped once scanned).
 */
#include <elf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cp_priv.h"
#include "grow.h"
#include "heapann_block.h"
#include "heapann_stats.h"
#include "htab.h"
#include "ncpu.h"

/* the scan writes one per block found (400 MB at 10M blocks): keep it small */
_Static_assert(sizeof(struct cp_block) == 40, "struct cp_block is 40 bytes");

#define CHUNK_BYTES (8u << 20)             /* unit of work for one thread */
#define SMALL_IMAGE (64ull << 20)          /* below this, one thread */
/* cp_block.flags while scanning only: a freed header found by its END whose
 * SIZE or DEPTH word the allocator reused too, dropped (stale) by scan_merge()
 * unless the check word proves it */
#define CP_HDR_GUESS (1u << 7)
#define INFO_SET 64                        /* distinct INFO words kept per worker */

/* A growable array in its own mapping: it never fragments the heap, and its pages
 * go back to the system as soon as it is released. */
struct vec {
	unsigned char *p;
	size_t n, cap;   /* in elements */
};

static void *vec_push(struct vec *v, size_t esz)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : (65536 / esz);
		void *np;

		if (v->p)
			np = mremap(v->p, v->cap * esz, ncap * esz, MREMAP_MAYMOVE);
		else
			np = mmap(NULL, ncap * esz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (np == MAP_FAILED)
			return NULL;
		v->p = np;
		v->cap = ncap;
	}
	return v->p + esz * v->n++;
}

static void vec_release(struct vec *v, size_t esz)
{
	if (v->p)
		munmap(v->p, v->cap * esz);
	memset(v, 0, sizeof(*v));
}

/* Distinct chains of return addresses, interned by a hash table. */
struct stab_entry {
	uint64_t hash;
	uint32_t first;   /* index into frames */
	uint16_t depth;
	uint16_t cut;     /* 1: the stack went on past its frames (HEAPANN_DEPTH_CUT) */
};

#define STAB_RECENT 512  /* slots of the recent-stack cache: 256 pairs */

struct stab {
	struct vec frames;     /* uint64_t */
	struct vec stacks;     /* struct stab_entry */
	struct htab idx;       /* stacks by their frames */
	uint32_t recent[STAB_RECENT]; /* 1 + index of a stack seen lately, in a pair of
				       * slots by its depth and first three frames, the
				       * more recent first; 0: none */
};

static uint64_t frames_hash(const uint64_t *f, unsigned depth, unsigned cut)
{
	uint64_t h = 0x84222325CBF29CE4ULL ^ depth ^ ((uint64_t)cut << 32);
	unsigned i;

	for (i = 0; i < depth; i++) {
		h ^= f[i];
		h *= 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	return h;
}

/* Short chains: an inline loop beats a call to memcmp. */
static inline int frames_equal(const uint64_t *a, const uint64_t *b, unsigned depth)
{
	unsigned i;

	for (i = 0; i < depth; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* A chain being interned: its frames and its full hash. */
struct stab_key {
	const uint64_t *f;
	unsigned depth;
	unsigned cut;
	uint64_t hash;
};

static inline int stab_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct stab *t = ctx;
	const struct stab_entry *e = (const struct stab_entry *)t->stacks.p + i;
	const struct stab_key *k = key;

	/* an empty stack has no frames: the frame vector may not exist yet,
	 * and NULL + 0 is undefined */
	return e->depth == k->depth && e->cut == k->cut &&
	       (k->depth == 0 || frames_equal((const uint64_t *)t->frames.p + e->first, k->f, k->depth));
}

/* The index of the stack f[0..depth) (CUT: 1 when it went on past them; a cut
 * stack and a whole one with the same frames are two), added if new; -1 when
 * out of memory. */
static int64_t stab_intern(struct stab *t, const uint64_t *f, unsigned depth, unsigned cut)
{
	struct stab_key key = { f, depth, cut, frames_hash(f, depth, cut) };
	struct stab_entry *e;
	uint64_t *dst;
	int64_t id;
	unsigned i;

	id = htab_find(&t->idx, key.hash, stab_eq, t, &key);
	if (id >= 0)
		return id;
	if (t->stacks.n >= HTAB_MAX_ENTRIES || t->frames.n + depth > UINT32_MAX)
		return -1;
	/* new: stored before it is indexed, so the index names only whole stacks */
	e = vec_push(&t->stacks, sizeof(*e));
	if (!e)
		return -1;
	e->hash = key.hash;
	e->depth = (uint16_t)depth;
	e->cut = (uint16_t)cut;
	e->first = (uint32_t)t->frames.n;
	for (i = 0; i < depth; i++) {
		dst = vec_push(&t->frames, sizeof(*dst));
		if (!dst)
			return -1;
		*dst = f[i];
	}
	if (htab_add(&t->idx, key.hash, (uint32_t)t->stacks.n - 1) < 0)
		return -1;
	return (int64_t)t->stacks.n - 1;
}

/* Stack i of t holds the chain f[0..depth), cut or not as CUT says. */
static inline int stab_entry_is(const struct stab *t, uint32_t i, const uint64_t *f, unsigned depth,
				unsigned cut)
{
	const struct stab_entry *e = (const struct stab_entry *)t->stacks.p + i;

	return e->depth == depth && e->cut == cut &&
	       (depth == 0 || frames_equal((const uint64_t *)t->frames.p + e->first, f, depth));
}

/* stab_intern() through the recent-stack cache: a heap's blocks come from few
 * call paths, often the same one many times in a row, and a pair of slots picked
 * by the depth and the first three frames (three multiplies), the most recent first,
 * and a compare of the chain spare the full hash and the table's probe for
 * nearly every block. The result is the one stab_intern() gives. */
static int64_t stab_intern_recent(struct stab *t, const uint64_t *f, unsigned depth, unsigned cut)
{
	uint64_t h = depth | (uint64_t)cut << 16;
	uint32_t *r, id0;
	int64_t id;

	if (depth)
		h ^= f[0] * 0x9E3779B97F4A7C15ULL;
	if (depth > 1)
		h ^= f[1] * 0xC2B2AE3D27D4EB4FULL;
	if (depth > 2)
		h ^= f[2] * 0x165667B19E3779F9ULL;
	r = &t->recent[((h ^ (h >> 31)) * 0xFF51AFD7ED558CCDULL >> 55) & (STAB_RECENT - 2)];
	if (r[0] && stab_entry_is(t, r[0] - 1, f, depth, cut))
		return (int64_t)r[0] - 1;
	if (r[1] && stab_entry_is(t, r[1] - 1, f, depth, cut)) {
		id0 = r[0];   /* most recent first */
		r[0] = r[1];
		r[1] = id0;
		return (int64_t)r[0] - 1;
	}
	id = stab_intern(t, f, depth, cut);
	if (id >= 0) {
		r[1] = r[0];
		r[0] = (uint32_t)id + 1;
	}
	return id;
}

static void stab_release(struct stab *t)
{
	vec_release(&t->frames, sizeof(uint64_t));
	vec_release(&t->stacks, sizeof(struct stab_entry));
	htab_release(&t->idx);
	memset(t->recent, 0, sizeof(t->recent));
}

/* One unit of work: bytes [off, end) of segment seg. */
struct chunk {
	size_t seg;
	uint64_t off, end;
	struct vec blocks;     /* struct cp_block, stack = thread-local index, while the
				* chunk is scanned and until it is published */
	size_t bfirst, bn;     /* once published: its blocks are out[bfirst, bfirst + bn) */
	int scanned;           /* scanned, waiting to be published (under pub_lock) */
	struct vec damage;     /* struct cp_damage, same */
	struct vec sigs;       /* uint64_t: statistics region signatures */
	struct vec unver;      /* uint32_t: the indices in blocks of the unverified
				* ones, for prove_unverified() */
	unsigned worker;       /* which worker's stack table the indices refer to */
	int unsorted;          /* a block came before the one pushed ahead of it */
	size_t nstale;
	size_t ncut;      /* headers cut off by the end of the dumped bytes */
	size_t nstray;
	size_t nwriting;
};

struct worker {
	struct scanner *sc;
	unsigned id;
	struct stab stacks;
	uint64_t infos[INFO_SET];     /* distinct INFO words of valid headers (no eviction,
				       * so the merged set does not depend on scheduling) */
	unsigned ninfos;
	uint64_t last_info;
	int failed;                   /* out of memory */
	pthread_t thread;
};

struct scanner {
	uint64_t repeat_cmp, repeat_work;   /* seg_leads: bytes compared, read */
	const struct cp_image *img;
	unsigned w;
	int big;
	const unsigned char *map;
	uint64_t *run_end;       /* per segment: end of its run of contiguous segments */
	struct chunk *chunks;
	size_t nchunks;
	atomic_size_t next;
	atomic_uint_fast64_t done;
	uint64_t total;
	uint64_t chunk_bytes;
	const struct cp_scan_options *opt;
	/* Publication: the blocks of scanned chunks are copied, in chunk order, into
	 * one array (the result's), and each chunk's buffer goes back to a pool for
	 * the next chunk. So the blocks are written to fresh memory once, not twice
	 * (a buffer per chunk, then the merged copy: at 10M blocks, 630 MB of page
	 * faults each), and the buffers stay few and warm. */
	pthread_mutex_t pub_lock;
	size_t published;             /* chunks published so far */
	struct cp_block *out;         /* published blocks (malloc: becomes cp_scan.blocks) */
	size_t out_n, out_cap;
	int unsorted;                 /* the published blocks are not in block_cmp order */
	struct vec *pool;             /* buffers of published chunks, emptied, for reuse */
	size_t npool, pool_cap;
	int pub_failed;               /* out of memory while publishing */
	/* magics as raw host words of the target's byte order */
	uint64_t r_sl, r_sf, r_el, r_ef, r_mask;
	uint32_t lane[5], lane_mask;  /* the lane filter's patterns, see lanes_mask() */
	uint64_t r_sig, sig0, sig1;   /* statistics region signature (heapann_stats.h) */
	/* words that may be addresses (cp_scan.ptr_words), or ptr_words NULL */
	uint64_t *ptr_words, *ptr_seg_bit;
	uint32_t ptr_lo, ptr_span;    /* upper halves within [ptr_lo, ptr_lo + ptr_span] */
	uint64_t sl, sf, el, ef;
	int avx2;                     /* the CPU has AVX2 and the options allow it */
	int no_fast;                  /* cp_scan_options.no_fast */
};

static uint64_t to_raw(uint64_t v, unsigned w, int big)
{
	unsigned char b[8] = { 0 };

	/* encode in target order, then load as a host word */
	for (unsigned i = 0; i < w; i++)
		b[big ? w - 1 - i : i] = (unsigned char)(v >> (8 * i));
	if (w == 8) {
		uint64_t r;

		memcpy(&r, b, 8);
		return r;
	} else {
		uint32_t r;

		memcpy(&r, b, 4);
		return r;
	}
}

/* Memory [addr, addr+len) is dumped, possibly across adjacent segments. */
static int image_dumped(const struct cp_image *img, uint64_t addr, uint64_t len)
{
	while (len) {
		const struct cp_segment *s = cp_image_segment(img, addr);
		uint64_t off, have;

		if (!s)
			return 0;
		off = addr - s->vaddr;
		if (off >= s->avail)
			return 0;
		have = s->avail - off;
		if (have >= len)
			return 1;
		addr += have;
		len -= have;
	}
	return 1;
}

/* Compare the guard of a live block with HEAPANN_GUARD_BYTE. */
static void guard_check(const struct scanner *sc, const struct cp_segment *seg, struct cp_block *b)
{
	uint64_t g = b->user + b->size, i;
	const unsigned char *p = NULL;

	if (!b->guard_len)
		return;
	if (g >= seg->vaddr && g - seg->vaddr <= seg->avail && seg->avail - (g - seg->vaddr) >= b->guard_len)
		p = sc->map + seg->offset + (g - seg->vaddr);
	else
		p = cp_image_ptr(sc->img, g, b->guard_len);
	if (p) {
		/* nearly every guard is intact: compare it a word at a time first */
		const uint64_t gw = 0x0101010101010101ULL * HEAPANN_GUARD_BYTE;
		uint64_t x;

		for (i = 0; i + 8 <= b->guard_len; i += 8) {
			memcpy(&x, p + i, 8);
			if (x != gw)
				break;
		}
		for (; i < b->guard_len && p[i] == HEAPANN_GUARD_BYTE; i++)
			;
		if (i == b->guard_len)
			return;
	}
	for (i = 0; i < b->guard_len; i++) {
		unsigned char c;

		if (p) {
			c = p[i];
		} else {
			const unsigned char *q = cp_image_ptr(sc->img, g + i, 1);

			if (!q) {
				b->flags |= CP_GUARD_MISSING;
				continue;
			}
			c = *q;
		}
		if (c != HEAPANN_GUARD_BYTE) {
			b->guard_diff++;
			b->overrun = (uint8_t)(i + 1);
		}
	}
	if (b->guard_diff)
		b->flags |= CP_GUARD_BROKEN;
}

static int64_t intern_frames(struct worker *wk, const unsigned char *p, unsigned depth,
			     unsigned cut)
{
	const struct scanner *sc = wk->sc;
	uint64_t f[HEAPANN_MAX_DEPTH];
	unsigned i;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the host's own words: read in place when aligned (a core's segments
	 * start at page offsets), else copied */
	if (sc->w == 8 && !sc->big && ((uintptr_t)p & 7) == 0)
		return stab_intern_recent(&wk->stacks, (const uint64_t *)(const void *)p, depth, cut);
	if (sc->w == 8 && !sc->big)
		memcpy(f, p, (size_t)depth * 8);
	else
#endif
		for (i = 0; i < depth; i++)
			f[i] = cp_decode(p + (size_t)i * sc->w, sc->w, sc->big);
	return stab_intern_recent(&wk->stacks, f, depth, cut);
}

static void info_remember(struct worker *wk, uint64_t info)
{
	unsigned i;

	if (info == wk->last_info && wk->ninfos)
		return;
	wk->last_info = info;
	for (i = 0; i < wk->ninfos; i++)
		if (wk->infos[i] == info)
			return;
	if (wk->ninfos < INFO_SET)
		wk->infos[wk->ninfos++] = info;
}

static int push_damage(struct worker *wk, struct chunk *c, const struct cp_damage *d)
{
	struct cp_damage *x = vec_push(&c->damage, sizeof(*x));

	if (!x) {
		wk->failed = 1;
		return -1;
	}
	*x = *d;
	return 0;
}

/* The live blocks per (stack, size) while scan_merge counts them
 * (cp_scan.stack_sizes): open addressing in a power-of-two table kept at most
 * half full; v is NULL once abandoned (past CP_STACK_SIZES_MAX pairs, or out of
 * memory: the reports then read the blocks). Sizes below SIZE_SMALL of the
 * first nsmall stacks are counted in place, small[stack * SIZE_SMALL + size]
 * (a table of a few MB probed at random for every block missed the cache more
 * than the pass over the blocks it saved), and moved into v at the end. */
struct size_tab {
	struct cp_stack_size *v;
	size_t cap, n;
	uint64_t *small;
	size_t nsmall;
};

#define SIZE_SMALL 512u
#define SIZE_SMALL_STACKS 2048u

static inline size_t size_slot(uint32_t stack, uint64_t size, size_t mask)
{
	uint64_t h = (size ^ (uint64_t)stack << 40) * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h >> 32) & mask;
}

/* Double t (or abandon it, see struct size_tab). */
static void size_tab_grow(struct size_tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct cp_stack_size *v = cap > 2 * (size_t)CP_STACK_SIZES_MAX ? NULL : calloc(cap, sizeof(*v));

	if (v)
		for (size_t i = 0; i < t->cap; i++) {
			size_t j = size_slot(t->v[i].stack, t->v[i].size, cap - 1);

			if (!t->v[i].n)
				continue;
			while (v[j].n)
				j = (j + 1) & (cap - 1);
			v[j] = t->v[i];
		}
	free(t->v);
	t->v = v;
	t->cap = v ? cap : 0;
	if (!v)
		t->n = 0;
}

/* Count n live blocks of size bytes under stack in t's table. */
static void size_tab_put(struct size_tab *t, uint32_t stack, uint64_t size, uint64_t n)
{
	size_t i;

	if (!t->v)
		return;
	for (i = size_slot(stack, size, t->cap - 1); t->v[i].n; i = (i + 1) & (t->cap - 1))
		if (t->v[i].size == size && t->v[i].stack == stack) {
			t->v[i].n += n;
			return;
		}
	if (2 * (t->n + 1) > t->cap) {
		size_tab_grow(t);
		size_tab_put(t, stack, size, n);
		return;
	}
	t->v[i].size = size;
	t->v[i].stack = stack;
	t->v[i].n = n;
	t->n++;
}

/* Count one live block of size bytes under stack in t. */
static inline void size_tab_add(struct size_tab *t, uint32_t stack, uint64_t size)
{
	if (size < SIZE_SMALL && stack < t->nsmall)
		t->small[(size_t)stack * SIZE_SMALL + size]++;
	else
		size_tab_put(t, stack, size, 1);
}

/* Move t's counts in place into its table (and free them). */
static void size_tab_finish(struct size_tab *t)
{
	for (size_t k = 0; t->small && k < t->nsmall * SIZE_SMALL; k++)
		if (t->small[k])
			size_tab_put(t, (uint32_t)(k / SIZE_SMALL), k % SIZE_SMALL, t->small[k]);
	free(t->small);
	t->small = NULL;
	t->nsmall = 0;
}

/* Count live block b, of ovh bytes of pad, header and guard, in its stack's
 * cp_stack_live *l and in t. */
static inline void stack_live_add(struct cp_stack_live *l, struct size_tab *t, const struct cp_block *b,
				  uint64_t ovh)
{
	if (!l->n || b->size < l->min_size)
		l->min_size = b->size;
	if (b->size > l->max_size)
		l->max_size = b->size;
	l->n++;
	l->cls_bytes[heapann_stats_class(b->size)] += b->size;
	l->overhead += ovh;
	size_tab_add(t, b->stack, b->size);
}

/* Block x sorts after block y (by user address, then header: block_cmp > 0; of
 * two headers before one user address, the shallower starts later). */
static inline int block_after(const struct cp_block *x, const struct cp_block *y)
{
	return x->user > y->user || (x->user == y->user && x->depth < y->depth);
}

/* Record a valid header: state, fields trusted by the check word. */
static void push_block(struct worker *wk, struct chunk *c, const struct cp_segment *seg,
		       uint64_t hdr, uint64_t info, uint64_t size, uint64_t depth, unsigned cut,
		       uint64_t seq, const unsigned char *frames, int freed, uint32_t flags)
{
	const struct scanner *sc = wk->sc;
	struct cp_block *b;
	int64_t st;

	st = intern_frames(wk, frames, (unsigned)depth, cut);
	b = st < 0 ? NULL : vec_push(&c->blocks, sizeof(*b));
	if (!b) {
		wk->failed = 1;
		return;
	}
	memset(b, 0, sizeof(*b));
	b->user = hdr + heapann_header_bytes(depth, sc->w);
	b->w = (uint8_t)sc->w;
	b->size = size;
	b->seq = seq;
	b->depth = (uint16_t)depth;
	b->stack = (uint32_t)st;
	b->state = freed ? CP_FREED : CP_LIVE;
	b->flags = (uint8_t)flags;
	if (flags & CP_HDR_UNVERIFIED) {
		uint32_t *u = vec_push(&c->unver, sizeof(*u));

		if (!u) {
			wk->failed = 1;
			return;
		}
		*u = (uint32_t)(c->blocks.n - 1);
	}
	if (c->blocks.n > 1 && block_after(b - 1, b))
		c->unsorted = 1;
	if (!(flags & CP_HDR_UNVERIFIED)) {
		b->guard_len = (uint8_t)heapann_info_guard(info);
		b->pad = (uint32_t)(heapann_info_pad(info) * sc->w);
	}
	if (!freed) {
		uint64_t uo = b->user - seg->vaddr;   /* the header is in seg, so no wrap */

		if ((uo > seg->avail || size > seg->avail - uo) && !image_dumped(sc->img, b->user, size))
			b->flags |= CP_DATA_MISSING;
		guard_check(sc, seg, b);
	}
}

/* A start magic at segment offset h. */
static void check_start(struct worker *wk, struct chunk *c, const struct cp_segment *seg,
			uint64_t h, int freed)
{
	const struct scanner *sc = wk->sc;
	const unsigned w = sc->w;
	const unsigned char *base = sc->map + seg->offset;
	uint64_t avail = seg->avail, H = seg->vaddr + h;
	uint64_t info, size, depth, dword, seq, chk, hb, end, user, limit;
	struct cp_damage d;
	unsigned cut;
	int end_ok;

	memset(&d, 0, sizeof(d));
	d.hdr = H;
	if (avail - h < HEAPANN_FIXED_WORDS * w) {
		if (!freed && seg->avail < seg->memsz + (sc->img->kind == CP_KIND_RAW)) {
			c->ncut++;   /* the dump ends inside it: not dumped, not damaged */
			return;
		}
		d.kind = CP_DMG_BOUNDS;
		d.first_bad = (uint32_t)((avail - h) / w);
		goto damaged;
	}
	info = cp_decode(base + h + w, w, sc->big);
	size = cp_decode(base + h + 2 * w, w, sc->big);
	dword = cp_decode(base + h + 3 * w, w, sc->big);
	seq = cp_decode(base + h + 4 * w, w, sc->big);
	chk = cp_decode(base + h + 5 * w, w, sc->big);
	if (heapann_info_version(info) < HEAPANN_VERSION_MIN ||
	    heapann_info_version(info) > HEAPANN_VERSION) {
		d.kind = CP_DMG_VERSION;
		d.first_bad = HEAPANN_W_INFO;
		goto damaged;
	}
	/* version 1 has no cut flag: that bit set there is a depth out of bounds */
	cut = heapann_info_version(info) >= 2 && heapann_depth_cut(dword);
	depth = cut ? heapann_depth_frames(dword) : dword;
	if (depth > HEAPANN_MAX_DEPTH) {
		d.kind = CP_DMG_BOUNDS;
		d.first_bad = HEAPANN_W_DEPTH;
		goto damaged;
	}
	hb = heapann_header_bytes(depth, w);
	user = H + hb;
	end_ok = 0;
	end = 0;
	if (avail - h >= hb) {
		end = cp_decode(base + h + hb - w, w, sc->big);
		end_ok = end == (sc->el | depth) || end == (sc->ef | depth);
	}
	if (heapann_check(H, size, dword, seq, info, w) != chk) {
		d.kind = CP_DMG_CHECK;
		d.first_bad = HEAPANN_W_CHECK;
		if (end_ok) {
			/* the END agrees with DEPTH: the frames sit where DEPTH says */
			d.user = user;
			d.known = CP_KNOWN_USER;
			if (!freed) {
				int64_t st = intern_frames(wk, base + h + HEAPANN_W_FRAMES * w,
							   (unsigned)depth, cut);

				if (st < 0) {
					wk->failed = 1;
					return;
				}
				d.stack = (uint32_t)st;
				d.known |= CP_KNOWN_FRAMES;
			}
		}
		goto damaged;
	}
	/* from here SIZE, DEPTH, SEQ, INFO are proven by the check word */
	d.size = size;
	d.seq = seq;
	d.user = user;
	d.known = CP_KNOWN_SIZE | CP_KNOWN_SEQ | CP_KNOWN_USER;
	limit = sc->run_end[seg - sc->img->segs];
	/* a raw dump is the memory someone chose to dump, not a whole mapping: a block
	 * whose header the check word proves may go on past its end (not dumped, not
	 * damaged); the address space bounds it */
	if (sc->img->kind == CP_KIND_RAW)
		limit = w == 4 ? UINT64_C(0x100000000) : UINT64_MAX;
	if (user < H || user > limit || size > limit - user ||
	    heapann_info_guard(info) > limit - user - size) {
		d.kind = CP_DMG_BOUNDS;
		d.first_bad = HEAPANN_W_SIZE;
		goto damaged;
	}
	if (avail - h < hb) {
		if (!freed && seg->avail < seg->memsz + (sc->img->kind == CP_KIND_RAW)) {
			c->ncut++;
			return;
		}
		d.kind = CP_DMG_BOUNDS;
		d.first_bad = (uint32_t)((avail - h) / w);
		goto damaged;
	}
	if (!end_ok) {
		int64_t st = intern_frames(wk, base + h + HEAPANN_W_FRAMES * w, (unsigned)depth, cut);

		if (st < 0) {
			wk->failed = 1;
			return;
		}
		d.kind = CP_DMG_END;
		d.first_bad = (uint32_t)(HEAPANN_W_FRAMES + depth);
		d.stack = (uint32_t)st;
		d.known |= CP_KNOWN_FRAMES;
		goto damaged;
	}
	info_remember(wk, info);
	/* a START/END disagreement is a free() caught half-way: the block is going */
	freed = freed || end == (sc->ef | depth);
	push_block(wk, c, seg, H, info, size, depth, cut, seq, base + h + HEAPANN_W_FRAMES * w, freed, 0);
	return;
damaged:
	if (freed) {
		/* freed memory is the allocator's and the program's again: stale, not damage */
		c->nstale++;
		return;
	}
	push_damage(wk, c, &d);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* check_start() for the common case, a 64-bit little-endian image and an intact
 * header in a core (not a raw dump): its words read in place, no damage record
 * prepared, the block written whole (issue 15: at 10M blocks the general path's
 * checks of the word size and byte order, its cp_damage and the calls cost about
 * 200 instructions a block). Returns the segment offset of the header's END word
 * when it pushed the block, the same one check_start() would; 0 when the header
 * is anything else, having done nothing: the caller then runs check_start(). */
static inline uint64_t check_start8(struct worker *wk, struct chunk *c, const struct cp_segment *seg,
				    uint64_t h, int freed)
{
	const struct scanner *sc = wk->sc;
	const unsigned char *p = sc->map + seg->offset + h;
	uint64_t hw[HEAPANN_FIXED_WORDS], info, size, dword, depth, hb, H, user, limit, end;
	const uint64_t *frames;
	struct cp_block *b;
	unsigned cut;
	int64_t st;

	if (seg->avail - h < HEAPANN_FIXED_WORDS * 8 || ((uintptr_t)p & 7))
		return 0;
	memcpy(hw, p, sizeof(hw));
	info = hw[HEAPANN_W_INFO];
	size = hw[HEAPANN_W_SIZE];
	dword = hw[HEAPANN_W_DEPTH];
	if (heapann_info_version(info) < HEAPANN_VERSION_MIN || heapann_info_version(info) > HEAPANN_VERSION)
		return 0;
	/* version 1 has no cut flag: there that bit is a depth out of bounds */
	cut = heapann_info_version(info) >= 2 && heapann_depth_cut(dword);
	depth = cut ? heapann_depth_frames(dword) : dword;
	if (depth > HEAPANN_MAX_DEPTH)
		return 0;
	hb = heapann_header_bytes(depth, 8);
	if (seg->avail - h < hb)
		return 0;
	memcpy(&end, p + hb - 8, 8);
	if (end == (sc->ef | depth))
		freed = 1;   /* a free() caught half-way, as check_start() says */
	else if (end != (sc->el | depth))
		return 0;
	H = seg->vaddr + h;
	if (heapann_check(H, size, dword, hw[HEAPANN_W_SEQ], info, 8) != hw[HEAPANN_W_CHECK])
		return 0;
	user = H + hb;
	limit = sc->run_end[seg - sc->img->segs];
	if (user < H || user > limit || size > limit - user || heapann_info_guard(info) > limit - user - size)
		return 0;
	info_remember(wk, info);
	frames = (const uint64_t *)(const void *)(p + HEAPANN_W_FRAMES * 8);
	st = stab_intern_recent(&wk->stacks, frames, (unsigned)depth, cut);
	if (st < 0) {
		wk->failed = 1;
		return hb - 8 + h;
	}
	if (c->blocks.n < c->blocks.cap)
		b = (struct cp_block *)(void *)c->blocks.p + c->blocks.n++;
	else if (!(b = vec_push(&c->blocks, sizeof(*b)))) {
		wk->failed = 1;
		return hb - 8 + h;
	}
	*b = (struct cp_block){
		.user = user, .size = size, .seq = hw[HEAPANN_W_SEQ],
		.stack = (uint32_t)st, .depth = (uint16_t)depth,
		.state = freed ? CP_FREED : CP_LIVE,
		.guard_len = (uint8_t)heapann_info_guard(info),
		.pad = (uint32_t)(heapann_info_pad(info) * 8), .w = 8,
	};
	if (c->blocks.n > 1 && block_after(b - 1, b))
		c->unsorted = 1;
	if (!freed) {
		uint64_t uo = user - seg->vaddr;

		uint64_t go = uo + size, gl = b->guard_len, g0, g1 = 0, want;

		if ((uo > seg->avail || size > seg->avail - uo) && !image_dumped(sc->img, user, size))
			b->flags |= CP_DATA_MISSING;
		/* a guard of up to 16 bytes with 16 bytes dumped from its start (nearly
		 * every one): two words compared under a mask; else guard_check() */
		if (gl && gl <= 16 && go <= seg->avail && seg->avail - go >= 16) {
			const unsigned char *gp = sc->map + seg->offset + go;

			want = 0x0101010101010101ULL * HEAPANN_GUARD_BYTE;
			memcpy(&g0, gp, 8);
			if (gl > 8)
				memcpy(&g1, gp + 8, 8);
			g0 ^= want;
			g1 ^= want;
			if (gl < 8)
				g0 &= (UINT64_C(1) << (8 * gl)) - 1;
			g1 = gl <= 8 ? 0 : gl == 16 ? g1 : g1 & ((UINT64_C(1) << (8 * (gl - 8))) - 1);
			if (g0 | g1)
				guard_check(sc, seg, b);
		} else {
			guard_check(sc, seg, b);
		}
	}
	return hb - 8 + h;
}
#endif

/* An END word (live or freed family, depth dep) at segment offset e whose header
 * is not announced by a start magic. */
static void check_end(struct worker *wk, struct chunk *c, const struct cp_segment *seg,
		      uint64_t e, uint64_t dep, int freed)
{
	const struct scanner *sc = wk->sc;
	const unsigned w = sc->w;
	const unsigned char *base = sc->map + seg->offset;
	uint64_t hb = heapann_header_bytes(dep, w), h, H, start, info, size, depth, seq, chk;
	struct cp_damage d;
	int64_t st;
	int verified = 0;
	unsigned cut = 0;

	if (e + w < hb) {
		/* the header would start before the segment: nothing to corroborate */
		if (freed)
			c->nstale++;
		else
			c->nstray++;
		return;
	}
	h = e + w - hb;
	H = seg->vaddr + h;
	start = cp_decode(base + h, w, sc->big);
	if (start == sc->sl || start == sc->sf)
		return;   /* check_start() reports this header, good or bad */
	info = cp_decode(base + h + w, w, sc->big);
	size = cp_decode(base + h + 2 * w, w, sc->big);
	depth = cp_decode(base + h + 3 * w, w, sc->big);
	seq = cp_decode(base + h + 4 * w, w, sc->big);
	chk = cp_decode(base + h + 5 * w, w, sc->big);
	if (heapann_info_version(info) >= HEAPANN_VERSION_MIN &&
	    heapann_info_version(info) <= HEAPANN_VERSION) {
		if (heapann_check(H, size, dep, seq, info, w) == chk)
			verified = 1;
		else if (heapann_info_version(info) >= 2 &&
			 heapann_check(H, size, dep | HEAPANN_DEPTH_CUT, seq, info, w) == chk)
			verified = cut = 1;
	}
	/* the DEPTH word's count (an unverified header's cut flag is a guess) */
	if (heapann_depth_frames(depth) == dep) {
		if (!verified)
			cut = heapann_info_version(info) >= 2 && heapann_depth_cut(depth);
		depth = dep;
	}
	if (freed) {
		/* unverified ones get a second chance in scan_merge() with the INFO words
		 * of all valid headers (the allocator may have reused INFO too). glibc's
		 * free of a chunk past the small bins also writes over SIZE and, with
		 * no pad word before the header (an odd depth), DEPTH: NULL in the
		 * unsorted bin, heap pointers for the first chunk of its size in a
		 * large bin. Such a header (a size past the mapping, or a DEPTH word
		 * not END's) is kept only if scan_merge() proves it (CP_HDR_GUESS) */
		uint64_t limit = sc->run_end[seg - sc->img->segs], user = H + hb;
		uint32_t guess;

		if (user > limit) {
			c->nstale++;
			return;
		}
		if (verified && size <= limit - user) {
			push_block(wk, c, seg, H, info, size, dep, cut, seq, base + h + HEAPANN_W_FRAMES * w,
				   1, 0);
			return;
		}
		guess = size > limit - user || depth != dep ? CP_HDR_GUESS : 0;
		push_block(wk, c, seg, H, 0, size > limit - user ? 0 : size, dep, cut, seq,
				   base + h + HEAPANN_W_FRAMES * w, 1, CP_HDR_UNVERIFIED | guess);
		return;
	}
	if (!verified && depth != dep) {
		/* a lone END value (a copy on a stack, say): no header agrees with it */
		c->nstray++;
		return;
	}
	if (verified && start == 0) {
		/* libheapann stores START last (heapann_block.h): a header complete but
		 * for a zero START is one malloc was writing when the core was taken.
		 * An overwrite that zeroed START alone and left every other word and
		 * the check word intact is not told apart (it would cross the guard of
		 * the block before first, which is checked on its own). */
		c->nwriting++;
		return;
	}
	memset(&d, 0, sizeof(d));
	d.hdr = H;
	d.user = H + hb;
	d.kind = CP_DMG_START;
	d.first_bad = HEAPANN_W_START;
	d.known = CP_KNOWN_USER;
	if (verified) {
		d.size = size;
		d.seq = seq;
		d.known |= CP_KNOWN_SIZE | CP_KNOWN_SEQ;
	}
	st = intern_frames(wk, base + h + HEAPANN_W_FRAMES * w, (unsigned)dep, cut);
	if (st < 0) {
		wk->failed = 1;
		return;
	}
	d.stack = (uint32_t)st;
	d.known |= CP_KNOWN_FRAMES;
	push_damage(wk, c, &d);
}

/* Look at one word that passed the prefilter. */
static inline void candidate(struct worker *wk, struct chunk *c, const struct cp_segment *seg,
			     uint64_t off, uint64_t v)
{
	const struct scanner *sc = wk->sc;

	if (v == sc->sig0) {
		uint64_t *a;

		/* MAGIC1 must follow; the reader validates the rest */
		if (seg->avail - off >= 2 * sc->w &&
		    cp_decode(sc->map + seg->offset + off + sc->w, sc->w, sc->big) == sc->sig1) {
			a = vec_push(&c->sigs, sizeof(*a));
			if (!a)
				wk->failed = 1;
			else
				*a = seg->vaddr + off;
		}
		return;
	}
	if (v == sc->sl)
		check_start(wk, c, seg, off, 0);
	else if (v == sc->sf)
		check_start(wk, c, seg, off, 1);
	else if ((v & HEAPANN_END_DEPTH_MASK) <= HEAPANN_MAX_DEPTH)
		check_end(wk, c, seg, off, v & HEAPANN_END_DEPTH_MASK,
			  (v & ~(uint64_t)HEAPANN_END_DEPTH_MASK) == sc->ef);
}

/* The word at p matches a magic or the stats signature exactly (raw compare). */
static inline int word_is_magic(const struct scanner *sc, const unsigned char *p)
{
	uint64_t x;

	if (sc->w == 8) {
		memcpy(&x, p, 8);
	} else {
		uint32_t y;

		memcpy(&y, p, 4);
		x = y;
	}
	return x == sc->r_sl || x == sc->r_sf || (x & sc->r_mask) == sc->r_el ||
	       (x & sc->r_mask) == sc->r_ef || x == sc->r_sig;
}

/* OR the low n bits of m into bits [bit, bit + n) of map (n <= 32); other threads
 * may set bits in the same 64-bit words. */
static inline void ptr_bits_or(uint64_t *map, uint64_t bit, uint64_t m, unsigned n)
{
	unsigned sh = (unsigned)(bit & 63);

	if (!m)
		return;
	__atomic_fetch_or(&map[bit / 64], m << sh, __ATOMIC_RELAXED);
	if (sh + n > 64)
		__atomic_fetch_or(&map[bit / 64 + 1], m >> (64 - sh), __ATOMIC_RELAXED);
}

/* Bit k of the result is set when 32-bit lane k of the 256 bytes at p may be
 * (part of) a magic: lane == A, B or E, or (lane & M) == C or D (E: the statistics
 * region's signature). For W=8 the lanes are compared with the high halves of the
 * magics, for W=4 with the magics. It is only a filter: each hit is checked again
 * on the whole word. */
#if defined(__SSE2__) && !defined(CP_NO_SIMD)
#include <emmintrin.h>

static inline uint64_t lanes_mask(const struct scanner *sc, const unsigned char *p)
{
	const __m128i A = _mm_set1_epi32((int)sc->lane[0]), B = _mm_set1_epi32((int)sc->lane[1]);
	const __m128i C = _mm_set1_epi32((int)sc->lane[2]), D = _mm_set1_epi32((int)sc->lane[3]);
	const __m128i E = _mm_set1_epi32((int)sc->lane[4]);
	const __m128i M = _mm_set1_epi32((int)sc->lane_mask);
	uint64_t mask = 0;
	unsigned k;

	for (k = 0; k < 16; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
		__m128i vm = _mm_and_si128(v, M);
		__m128i e = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(v, A), _mm_cmpeq_epi32(v, B)),
					 _mm_or_si128(_mm_cmpeq_epi32(vm, C), _mm_cmpeq_epi32(vm, D)));

		e = _mm_or_si128(e, _mm_cmpeq_epi32(v, E));

		mask |= (uint64_t)(unsigned)_mm_movemask_ps(_mm_castsi128_ps(e)) << (4 * k);
	}
	return mask;
}

/* For W=8: bit k of the result is set when the half of word k of the 256 bytes
 * at p that holds bits 32..63 (the odd lanes for a little-endian target, the even
 * ones for big-endian) equals that half of a magic. The same filter as
 * lanes_mask() on the lanes that matter only: the other half of each word was
 * compared for nothing, and the mask bit per word spares the caller the two hits
 * of one word. About half the work per byte of the scan's inner loop (issue 15). */
#define CP_HAVE_WORDS_MASK8 1
#if defined(__x86_64__) && defined(__GNUC__) && !defined(CP_NO_AVX2)
#include <immintrin.h>
#define CP_HAVE_AVX2 1   /* scan8_avx2(), chosen at run time (scanner.avx2) */
#endif
static inline __attribute__((always_inline)) uint64_t words_mask8(const struct scanner *sc,
								  const unsigned char *p, int odd,
								  uint64_t *ptrs)
{
	const __m128i A = _mm_set1_epi32((int)sc->lane[0]), B = _mm_set1_epi32((int)sc->lane[1]);
	const __m128i C = _mm_set1_epi32((int)sc->lane[2]), D = _mm_set1_epi32((int)sc->lane[3]);
	const __m128i E = _mm_set1_epi32((int)sc->lane[4]);
	/* unsigned (hi - ptr_lo) > ptr_span, as a signed compare of both biased */
	const __m128i L = _mm_set1_epi32((int)sc->ptr_lo);
	const __m128i S = _mm_set1_epi32((int)(sc->ptr_span ^ 0x80000000u));
	const __m128i X = _mm_set1_epi32((int)0x80000000u);
	uint64_t mask = 0, out = 0;
	unsigned k;

	for (k = 0; k < 8; k++) {
		__m128 a = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 32 * k)));
		__m128 b = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 32 * k + 16)));
		/* lanes 1, 3 of a and of b (0xDD), or lanes 0, 2 (0x88): words 4k..4k+3 */
		__m128i v = _mm_castps_si128(odd ? _mm_shuffle_ps(a, b, 0xDD) : _mm_shuffle_ps(a, b, 0x88));
		__m128i e = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(v, A), _mm_cmpeq_epi32(v, B)),
					 _mm_or_si128(_mm_cmpeq_epi32(v, C), _mm_cmpeq_epi32(v, D)));

		e = _mm_or_si128(e, _mm_cmpeq_epi32(v, E));
		mask |= (uint64_t)(unsigned)_mm_movemask_ps(_mm_castsi128_ps(e)) << (4 * k);
		if (ptrs) {
			__m128i gt = _mm_cmpgt_epi32(_mm_xor_si128(_mm_sub_epi32(v, L), X), S);

			out |= (uint64_t)(~(unsigned)_mm_movemask_ps(_mm_castsi128_ps(gt)) & 15u) << (4 * k);
		}
	}
	if (ptrs)
		*ptrs = out;
	return mask;
}
#else
static inline uint64_t lanes_mask(const struct scanner *sc, const unsigned char *p)
{
	uint64_t mask = 0;
	unsigned k;

	for (k = 0; k < 64; k++) {
		uint32_t v;

		memcpy(&v, p + 4 * k, 4);
		mask |= (uint64_t)((v == sc->lane[0]) | (v == sc->lane[1]) | (v == sc->lane[4]) |
				   ((v & sc->lane_mask) == sc->lane[2]) |
				   ((v & sc->lane_mask) == sc->lane[3])) << k;
	}
	return mask;
}
#endif

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* Map the chunk's pages in one call instead of one fault per page or two; only a
 * hint (older kernels say EINVAL, a hole in the file says EFAULT: no matter). */
static void populate(const unsigned char *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;

	madvise((void *)a, (size_t)((uintptr_t)p + len - a), MADV_POPULATE_READ);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Fault in the whole pages of [p, p + len) of fresh anonymous memory in one call,
 * not one page fault per page as a copy into them takes; only a hint, as
 * populate() is. */
static void populate_write(void *p, size_t len)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)4095;

	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

/* Unmap the whole pages of a scanned chunk: the page cache keeps them, a later
 * read faults them back in, and the process does not hold a big core resident. */
static void unmap_scanned(const unsigned char *p, uint64_t len)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)4095;

	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

#ifdef CP_HAVE_WORDS_MASK8
/* The hits of one 256-byte round of the W=8 loop at segment offset off (mask:
 * bit k for word k): each whole word checked again and looked at. With fast
 * (a little-endian core), intact headers go through check_start8() and *skip
 * holds the END word's offset of the last one, which needs no look. */
static inline __attribute__((always_inline)) void words8_hits(struct worker *wk, struct chunk *c,
								const struct cp_segment *seg, uint64_t off,
								uint64_t mask, int fast, uint64_t *skip)
{
	const struct scanner *sc = wk->sc;
	const unsigned char *base = sc->map + seg->offset;

	while (mask) {
		uint64_t o = off + 8 * (uint64_t)__builtin_ctzll(mask);

		mask &= mask - 1;
		if (!word_is_magic(sc, base + o))
			continue;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (fast) {
			uint64_t v;

			memcpy(&v, base + o, 8);
			if (o == *skip)
				continue;   /* the END of the header just pushed:
					     * check_end() would return at its START */
			if (v == sc->sl || v == sc->sf) {
				uint64_t e = check_start8(wk, c, seg, o, v == sc->sf);

				if (e) {
					*skip = e;
					continue;
				}
			}
		}
#endif
		candidate(wk, c, seg, o, cp_decode(base + o, 8, sc->big));
	}
}
#endif

#ifdef CP_HAVE_AVX2
/* words_mask8() for a little-endian image with AVX2: eight words a step, four
 * steps for the 256 bytes, half the instructions of the SSE2 filter. The high
 * halves of words 0..7 come out of the shuffle as 0 1 4 5 | 2 3 6 7 and the
 * permute puts them in order. */
static inline __attribute__((always_inline, target("avx2"))) uint64_t
words_mask8_avx2(const struct scanner *sc, const unsigned char *p, uint64_t *ptrs)
{
	const __m256i A = _mm256_set1_epi32((int)sc->lane[0]), B = _mm256_set1_epi32((int)sc->lane[1]);
	const __m256i C = _mm256_set1_epi32((int)sc->lane[2]), D = _mm256_set1_epi32((int)sc->lane[3]);
	const __m256i E = _mm256_set1_epi32((int)sc->lane[4]);
	const __m256i L = _mm256_set1_epi32((int)sc->ptr_lo);
	const __m256i S = _mm256_set1_epi32((int)(sc->ptr_span ^ 0x80000000u));
	const __m256i X = _mm256_set1_epi32((int)0x80000000u);
	uint64_t mask = 0, out = 0;
	unsigned k;

	for (k = 0; k < 4; k++) {
		__m256 a = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p + 64 * k)));
		__m256 b = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p + 64 * k + 32)));
		__m256i v = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8);
		__m256i e = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(v, A), _mm256_cmpeq_epi32(v, B)),
					    _mm256_or_si256(_mm256_cmpeq_epi32(v, C), _mm256_cmpeq_epi32(v, D)));

		e = _mm256_or_si256(e, _mm256_cmpeq_epi32(v, E));
		mask |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(e)) << (8 * k);
		if (ptrs) {
			__m256i gt = _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_sub_epi32(v, L), X), S);

			out |= (uint64_t)(~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(gt)) & 255u) << (8 * k);
		}
	}
	if (ptrs)
		*ptrs = out;
	return mask;
}

/* scan_chunk()'s W=8 loop for a little-endian image through the AVX2 filter,
 * from segment offset off while 256 bytes are left; returns where it stopped. */
static __attribute__((noinline, target("avx2"))) uint64_t scan8_avx2(struct worker *wk, struct chunk *c,
								       const struct cp_segment *seg, uint64_t off,
								       int fast, uint64_t *skip)
{
	const struct scanner *sc = wk->sc;
	const unsigned char *base = sc->map + seg->offset;
	const uint64_t off0 = (8 - seg->vaddr % 8) % 8;
	uint64_t *pw = sc->ptr_words, bit0 = pw ? sc->ptr_seg_bit[c->seg] : 0, pm = 0;

	for (; c->end - off >= 256; off += 256) {
		uint64_t mask = pw ? words_mask8_avx2(sc, base + off, &pm) : words_mask8_avx2(sc, base + off, NULL);

		if (pw)
			ptr_bits_or(pw, bit0 + (off - off0) / 8, pm, 32);
		words8_hits(wk, c, seg, off, mask, fast, skip);
	}
	return off;
}
#endif

/* Scan one chunk: 256 bytes at a time through the lane filter, branching only on
 * its hits; the tail word by word. */
static void scan_chunk(struct worker *wk, struct chunk *c)
{
	const struct scanner *sc = wk->sc;
	const struct cp_segment *seg = &sc->img->segs[c->seg];
	const unsigned char *base = sc->map + seg->offset;
	const unsigned w = sc->w, shift = w == 8 ? 3 : 2;
	uint64_t off = c->off, last = UINT64_MAX;

	c->worker = wk->id;
	pthread_mutex_lock(&wk->sc->pub_lock);
	if (wk->sc->npool)
		c->blocks = wk->sc->pool[--wk->sc->npool];
	pthread_mutex_unlock(&wk->sc->pub_lock);
	populate(base + c->off, c->end - c->off);
#ifdef CP_HAVE_WORDS_MASK8
	if (w == 8) {
		/* two loops, so that the shuffle's lane choice is a constant */
		const int odd = !sc->big;
		/* the words that may be addresses, when noted: bit of the word at off */
		const uint64_t off0 = (w - seg->vaddr % w) % w;
		uint64_t *pw = sc->ptr_words, bit0 = pw ? sc->ptr_seg_bit[c->seg] : 0, pm = 0;
		/* check_start8() for the intact headers of a little-endian core; skip:
		 * the END word's offset of the last header it pushed (none yet: an
		 * offset no word has) */
		const int fast = odd && sc->img->kind != CP_KIND_RAW && !sc->no_fast;
		uint64_t skip = UINT64_MAX;

#ifdef CP_HAVE_AVX2
		if (odd && sc->avx2)
			off = scan8_avx2(wk, c, seg, off, fast, &skip);
#endif
		for (; c->end - off >= 256; off += 256) {
			uint64_t mask = !pw ? (odd ? words_mask8(sc, base + off, 1, NULL) :
					       words_mask8(sc, base + off, 0, NULL)) :
				       words_mask8(sc, base + off, 1, &pm);

			if (pw)
				ptr_bits_or(pw, bit0 + (off - off0) / 8, pm, 32);
			words8_hits(wk, c, seg, off, mask, fast, &skip);
		}
	}
#endif
	for (; c->end - off >= 256; off += 256) {
		uint64_t mask = lanes_mask(sc, base + off);

		while (mask) {
			unsigned k = (unsigned)__builtin_ctzll(mask);
			uint64_t o = off + (((uint64_t)k * 4) >> shift << shift);

			mask &= mask - 1;
			if (o == last)
				continue;   /* both halves of one word hit */
			last = o;
			if (word_is_magic(sc, base + o))
				candidate(wk, c, seg, o, cp_decode(base + o, w, sc->big));
		}
	}
	for (; off < c->end; off += w) {
		if (sc->ptr_words) {   /* W=8, little-endian: see scan_prepare_ptrs() */
			uint64_t v = cp_decode(base + off, w, sc->big);

			if ((uint32_t)((v >> 32) - sc->ptr_lo) <= sc->ptr_span)
				ptr_bits_or(sc->ptr_words, sc->ptr_seg_bit[c->seg] +
					    (off - (w - seg->vaddr % w) % w) / w, 1, 1);
		}
		if (word_is_magic(sc, base + off))
			candidate(wk, c, seg, off, cp_decode(base + off, w, sc->big));
	}
	if (sc->total >= SMALL_IMAGE)
		unmap_scanned(base + c->off, c->end - c->off);
}

/* Copy the blocks of the scanned chunks that follow the published ones into
 * sc->out, in chunk order, and put their buffers in the pool (pub_lock held). */
static void publish_ready(struct scanner *sc)
{
	while (sc->published < sc->nchunks && sc->chunks[sc->published].scanned && !sc->pub_failed) {
		struct chunk *c = &sc->chunks[sc->published];
		size_t n = c->blocks.n;

		if (sc->out_n + n > sc->out_cap) {
			size_t cap = sc->out_cap ? sc->out_cap : 1024;
			struct cp_block *o;

			while (cap < sc->out_n + n)
				cap *= 2;
			o = realloc(sc->out, cap * sizeof(*o));
			if (!o) {
				sc->pub_failed = 1;
				return;
			}
			sc->out = o;
			sc->out_cap = cap;
		}
		{
			struct vec *v = grow_array(sc->pool, &sc->pool_cap, sc->npool, sizeof(*v), 8);

			if (!v) {
				sc->pub_failed = 1;
				return;
			}
			sc->pool = v;
		}
		if (c->unsorted ||
		    (n && sc->out_n && block_after(&sc->out[sc->out_n - 1], (struct cp_block *)c->blocks.p)))
			sc->unsorted = 1;
		if (n) {
			populate_write(sc->out + sc->out_n, n * sizeof(*sc->out));
			memcpy(sc->out + sc->out_n, c->blocks.p, n * sizeof(*sc->out));
		}
		c->bfirst = sc->out_n;
		c->bn = n;
		sc->out_n += n;
		c->blocks.n = 0;
		sc->pool[sc->npool++] = c->blocks;
		memset(&c->blocks, 0, sizeof(c->blocks));
		sc->published++;
	}
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct scanner *sc = wk->sc;

	for (;;) {
		size_t i = atomic_fetch_add(&sc->next, 1);

		if (i >= sc->nchunks || wk->failed)
			break;
		scan_chunk(wk, &sc->chunks[i]);
		pthread_mutex_lock(&sc->pub_lock);
		sc->chunks[i].scanned = 1;
		publish_ready(sc);
		pthread_mutex_unlock(&sc->pub_lock);
		atomic_fetch_add(&sc->done, sc->chunks[i].end - sc->chunks[i].off);
		if (wk->id == 0 && sc->opt && sc->opt->progress)
			sc->opt->progress(sc->opt->progress_arg, atomic_load(&sc->done), sc->total);
	}
	return NULL;
}

/* A hash of up to 10 pages of segment S's dumped bytes (the first, the last
 * and 8 spread between): segments that differ there are told apart without
 * comparing them. Adds the bytes read to *WORK. */
static uint64_t seg_sample_hash(const struct cp_image *img, const struct cp_segment *s, uint64_t *work)
{
	const unsigned char *p = img->map + s->offset;
	uint64_t h = 1469598103934665603ull ^ s->avail ^ (s->memsz << 1);
	uint64_t page = s->avail < 4096 ? s->avail : 4096, last = s->avail - page;

	for (unsigned k = 0; k < 10; k++) {
		uint64_t at = k == 9 ? last : last / 9 * k / 4096 * 4096;

		for (uint64_t o = 0; o + 8 <= page; o += 8) {
			uint64_t x;

			memcpy(&x, p + at + o, 8);
			h = (h ^ x) * 1099511628211ull;
		}
		*work += page;
	}
	return h;
}

struct seg_key {
	uint64_t avail, memsz, hash;
	size_t i;
};

static int seg_key_cmp(const void *a, const void *b)
{
	const struct seg_key *x = a, *y = b;

	if (x->avail != y->avail)
		return x->avail < y->avail ? -1 : 1;
	if (x->memsz != y->memsz)
		return x->memsz < y->memsz ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* LEAD[i] = the lowest-numbered segment that segment I repeats byte for byte,
 * or I, in a core with neither NT_FILE nor NT_AUXV (a board's: qemu's
 * mps2-an385 shows each 4 MiB SSRAM again 4 MiB higher in dump-guest-memory;
 * a Linux or qemu-user core has auxv, whose identical anonymous mappings are
 * different memory). Each segment is hashed once (seg_sample_hash), sorted by
 * (size, hash), and only segments of one bucket are compared in full, each
 * with at most 4 earlier leaders of its bucket, and no more than
 * CP_REPEAT_CMP_CAP bytes in all (past it segments count as distinct: scanned).
 * *CMP gets the bytes compared in full, *WORK the bytes read. Returns 0, -1
 * when out of memory. */
static int seg_leads(const struct cp_image *img, size_t *lead, uint64_t *cmp, uint64_t *work)
{
	size_t n = img->nsegs, m = 0;
	struct seg_key *k;

	for (size_t i = 0; i < n; i++)
		lead[i] = i;
	if (img->kind != CP_KIND_CORE || img->nfiles || img->nauxv || n < 2)
		return 0;
	k = malloc(n * sizeof(*k));
	if (!k)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (img->segs[i].avail)
			k[m++] = (struct seg_key){ img->segs[i].avail, img->segs[i].memsz,
						   seg_sample_hash(img, &img->segs[i], work), i };
	qsort(k, m, sizeof(*k), seg_key_cmp);
	for (size_t r = 0; r < m;) {
		size_t e = r + 1;

		while (e < m && k[e].avail == k[r].avail && k[e].memsz == k[r].memsz && k[e].hash == k[r].hash)
			e++;
		for (size_t x = r + 1; x < e; x++) {
			unsigned tries = 0;

			/* the leaders of the bucket so far, lowest index first */
			for (size_t y = r; y < x && tries < 4; y++) {
				const struct cp_segment *s = &img->segs[k[x].i], *t = &img->segs[k[y].i];

				if (lead[k[y].i] != k[y].i)
					continue;
				if (*cmp + s->avail > CP_REPEAT_CMP_CAP)
					break;
				tries++;
				*cmp += s->avail;
				*work += 2 * s->avail;
				if (memcmp(img->map + t->offset, img->map + s->offset, s->avail) == 0) {
					lead[k[x].i] = k[y].i;
					break;
				}
			}
		}
		r = e;
	}
	free(k);
	return 0;
}

/* The offsets of the first (at most 32) live or freed START words in the bytes
 * of segment S, in OFFS; returns how many. */
static unsigned seg_starts(const struct scanner *sc, const struct cp_segment *s, uint64_t *offs)
{
	const unsigned w = sc->w;
	const unsigned char *p = sc->map + s->offset;
	unsigned n = 0;

	for (uint64_t off = 0; off + HEAPANN_FIXED_WORDS * w <= s->avail && n < 32; off += w) {
		uint64_t v = cp_decode(p + off, w, sc->big);

		if (v == sc->sl || v == sc->sf)
			offs[n++] = off;
	}
	return n;
}

/* How many of the headers at OFFS (N of them) in the bytes of segment S have a
 * check word that holds when the bytes sit at address VA (a header's check
 * word holds its address, so only the copy at the real address passes). */
static unsigned copy_headers_pass(const struct scanner *sc, const struct cp_segment *s,
				  const uint64_t *offs, unsigned n, uint64_t va)
{
	const unsigned w = sc->w;
	const unsigned char *p = sc->map + s->offset;
	unsigned pass = 0;

	for (unsigned k = 0; k < n; k++) {
		const unsigned char *h = p + offs[k];

		if (heapann_check(va + offs[k], cp_decode(h + 2 * w, w, sc->big),
				  cp_decode(h + 3 * w, w, sc->big), cp_decode(h + 4 * w, w, sc->big),
				  cp_decode(h + w, w, sc->big), w) == cp_decode(h + 5 * w, w, sc->big))
			pass++;
	}
	return pass;
}

/* Mark in REPEAT (one byte per segment) the copies to leave out of a core
 * without a load map (seg_leads): of a group of byte-identical segments (one
 * memory at several addresses: an alias may lie above or below the real RAM,
 * SRAM remapped at 0, Armv8-M secure and non-secure views) the headers of all
 * but one copy fail their check words and would read as damaged headers and
 * freed blocks twice. The copy kept is the one whose headers pass their check,
 * else the one holding a thread's stack pointer, else the first (any copy then
 * shows the same failing headers, once). Returns 0, or -1 when out of memory. */
static int mark_repeats(struct scanner *sc, unsigned char *repeat)
{
	const struct cp_image *img = sc->img;
	size_t n = img->nsegs, *lead = malloc((n ? n : 1) * 2 * sizeof(*lead)), *next;

	if (!lead)
		return -1;
	next = lead + (n ? n : 1);
	if (seg_leads(img, lead, &sc->repeat_cmp, &sc->repeat_work) < 0) {
		free(lead);
		return -1;
	}
	/* next[j]: the following member of j's group, or n; built in one pass
	 * with each leader's next[] pointing at its current tail meanwhile */
	for (size_t i = 0; i < n; i++)
		next[i] = n;
	{
		size_t *tail = malloc((n ? n : 1) * sizeof(*tail));

		if (!tail) {
			free(lead);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			tail[i] = i;
			if (lead[i] != i) {
				next[tail[lead[i]]] = i;
				tail[lead[i]] = i;
			}
		}
		free(tail);
	}
	for (size_t i = 0; i < n; i++) {
		size_t keep = i;
		unsigned best = 0, nh;
		int best_sp = 0;
		uint64_t offs[32];

		if (lead[i] != i || next[i] == n)
			continue;   /* a copy, or alone */
		nh = seg_starts(sc, &img->segs[i], offs);
		for (size_t j = i; j < n; j = next[j]) {
			const struct cp_segment *t = &img->segs[j];
			unsigned pass = copy_headers_pass(sc, &img->segs[i], offs, nh, t->vaddr);
			int sp = 0;

			for (size_t k = 0; k < img->nthreads; k++)
				if (img->threads[k].sp >= t->vaddr && img->threads[k].sp - t->vaddr < t->memsz)
					sp = 1;
			if (pass > best || (pass == best && sp && !best_sp)) {
				best = pass;
				best_sp = sp;
				keep = j;
			}
		}
		for (size_t j = i; j < n; j = next[j])
			if (j != keep)
				repeat[j] = 1;
	}
	free(lead);
	return 0;
}

/* The end of the part of [a, b) that starts at a and is not skipped (cp_scan_options
 * skip): *a moves past skipped ranges first. */
static uint64_t unskipped_end(const struct cp_scan_options *opt, uint64_t *a, uint64_t b)
{
	uint64_t end = b;
	int moved = 1;

	if (!opt || !opt->nskip)
		return b;
	while (moved && *a < b) {
		moved = 0;
		for (size_t k = 0; k < opt->nskip; k++)
			if (*a >= opt->skip[2 * k] && *a < opt->skip[2 * k + 1]) {
				*a = opt->skip[2 * k + 1];
				moved = 1;
			}
	}
	for (size_t k = 0; k < opt->nskip; k++)
		if (opt->skip[2 * k] > *a && opt->skip[2 * k] < end)
			end = opt->skip[2 * k];
	return end;
}

/* Cut the dumped part of every segment into chunks at word-aligned addresses,
 * less the ranges to skip and the repeats of earlier segments. */
static int plan_chunks(struct scanner *sc)
{
	const struct cp_image *img = sc->img;
	size_t i, n = 0, pass;
	unsigned char *repeat = calloc(img->nsegs ? img->nsegs : 1, 1);

	if (!repeat)
		return -1;
	if (mark_repeats(sc, repeat) < 0) {
		free(repeat);
		return -1;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < img->nsegs; i++) {
			const struct cp_segment *s = &img->segs[i];
			uint64_t a = s->vaddr, pe, b = s->avail > UINT64_MAX - s->vaddr ?
				UINT64_MAX : s->vaddr + s->avail;   /* the top of the address space */

			if (repeat[i])
				continue;
			for (; a < b; a = pe) {
				uint64_t off, end;

				pe = unskipped_end(sc->opt, &a, b);
				if (a >= b)
					break;
				off = a - s->vaddr;
				off += (sc->w - (a % sc->w)) % sc->w;
				if (pe - s->vaddr < off + sc->w)
					continue;
				end = off + (pe - s->vaddr - off) / sc->w * sc->w;
				while (off < end) {
					uint64_t len = end - off > sc->chunk_bytes ? sc->chunk_bytes : end - off;

					if (pass == 1) {
						sc->chunks[n].seg = i;
						sc->chunks[n].off = off;
						sc->chunks[n].end = off + len;
						sc->total += len;
					}
					n++;
					off += len;
				}
			}
		}
		if (pass == 0) {
			sc->chunks = calloc(n ? n : 1, sizeof(*sc->chunks));
			if (!sc->chunks) {
				free(repeat);
				return -1;
			}
			sc->nchunks = n;
			n = 0;
		}
	}
	free(repeat);
	/* the end of each run of address-contiguous segments bounds a block's size */
	sc->run_end = calloc(img->nsegs ? img->nsegs : 1, sizeof(*sc->run_end));
	if (!sc->run_end)
		return -1;
	for (i = img->nsegs; i-- > 0;) {
		const struct cp_segment *s = &img->segs[i];

		sc->run_end[i] = s->vaddr + s->memsz;
		if (i + 1 < img->nsegs && img->segs[i + 1].vaddr == s->vaddr + s->memsz)
			sc->run_end[i] = sc->run_end[i + 1];
		if (sc->run_end[i] < s->vaddr)   /* wraps at the top of the address space */
			sc->run_end[i] = UINT64_MAX;
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int block_cmp(const void *a, const void *b)
{
	const struct cp_block *x = a, *y = b;

	if (x->user != y->user)
		return x->user < y->user ? -1 : 1;
	return x->depth > y->depth ? -1 : x->depth < y->depth;   /* by header address */
}

static int damage_cmp(const void *a, const void *b)
{
	const struct cp_damage *x = a, *y = b;

	return x->hdr < y->hdr ? -1 : x->hdr > y->hdr;
}

/* A freed block of a glibc process whose SIZE word was reused too: glibc's free
 * of a chunk too large for the small bins (1,008 bytes of user data and up on
 * 64-bit) writes fd_nextsize there (NULL in the unsorted bin), after fd and bk
 * over the pad and START or START and INFO. --addr read "0 bytes" for a freed
 * block of 1,024. Per INFO of a valid header, the raw block is the header less
 * that INFO's pad (glibc aligns it to 2 words), glibc's chunk size is in the
 * word before it, and the size is the one the check word proves among: the 48
 * requests that chunk size allows (16 of rounding, and a realloc in place
 * keeps a rest under MINSIZE, 32 bytes); then, for a chunk merged with free
 * neighbours since, the sizes whose guard bytes stand intact after the data
 * (recover_guarded: one pass over the chunk); then, on 64-bit only (the guard
 * may lie under the old neighbour's chunk header), every size the chunk can
 * hold. A 32-bit check word is too short for that last search: over 2^32
 * tries sizes collide (w 4, depth 8, seq 1,234: 46,088 and 54,300 give the
 * same word), so there a size must have its guard. Every check word tried
 * comes out of *BUDGET (for the whole scan); the search stops when it is
 * spent. B's SEQ and the DEPTH word's count must have survived. Returns 1 when
 * proven (B is then verified). */
static int recover_try(struct cp_block *b, uint64_t size, uint64_t dword, uint64_t info,
		       uint64_t chk, unsigned w, uint64_t raw)
{
	const uint64_t hdr = cp_block_hdr(b);

	if (heapann_check(hdr, size, dword, b->seq, info, w) != chk)
		return 0;
	b->size = size;
	b->flags &= (uint8_t)~CP_HDR_UNVERIFIED;
	b->guard_len = (uint8_t)heapann_info_guard(info);
	b->pad = (uint32_t)(hdr - raw);
	return 1;
}

/* The sizes up to MAX whose G guard bytes (G > 0) stand intact at DATA + size,
 * each tried as recover_try() does, within *BUDGET. Returns 1 when one is
 * proven. */
static int recover_guarded(struct cp_block *b, const unsigned char *data, uint64_t max, uint64_t g,
			   uint64_t dword, uint64_t info, uint64_t chk, unsigned w, uint64_t raw,
			   uint64_t *budget)
{
	uint64_t run = 0;

	/* run: the 0xFD bytes ending at data[i]; a guard of size s ends at s + g - 1 */
	for (uint64_t i = 0; i < max + g; i++) {
		if (data[i] != HEAPANN_GUARD_BYTE) {
			run = 0;
			continue;
		}
		if (++run < g || i + 1 - g == 0)
			continue;
		if (!*budget)
			return 0;
		--*budget;
		if (recover_try(b, i + 1 - g, dword, info, chk, w, raw))
			return 1;
	}
	return 0;
}

/* The 48 requests a glibc chunk of HI usable bytes allows, from HI down, as
 * recover_try() tries them, within *BUDGET; a request leaving no room for the
 * block's guard G past LEAD is a 0-byte block (it asks for more than its guard:
 * ha_alloc), tried once at the end. Returns 1 when one is proven. */
static int recover_requests(struct cp_block *b, uint64_t hi, uint64_t lead, uint64_t g, uint64_t dword,
			    uint64_t info, uint64_t chk, unsigned w, uint64_t raw, uint64_t *budget)
{
	uint64_t lo = hi > 47 ? hi - 47 : 0, req;

	for (req = hi; req >= lo && req >= lead + g + 1 && *budget; req--, --*budget)
		if (recover_try(b, req - lead - g, dword, info, chk, w, raw))
			return 1;
	if (!*budget)
		return 0;
	--*budget;
	return recover_try(b, 0, dword, info, chk, w, raw);
}

static int recover_freed_size(const struct scanner *sc, const uint64_t *infos, size_t ninfos,
			      struct cp_block *b, uint64_t chk, uint64_t dword, uint64_t *budget)
{
	const unsigned w = sc->w;
	const uint64_t hdr = cp_block_hdr(b);

	/* pass 0: the requests the chunk size allows and the guarded sizes, for
	 * every INFO; pass 1 (64-bit): every size, for every INFO */
	for (unsigned pass = 0; pass < (w == 4 ? 1u : 2u); pass++)
		for (size_t i = 0; i < ninfos; i++) {
			uint64_t pad = heapann_info_pad(infos[i]) * w, g = heapann_info_guard(infos[i]);
			uint64_t raw = hdr - pad, lead = b->user - raw, csz, hi;
			const unsigned char *q;

			if (pad > hdr || raw < 2 * w || raw % (2 * w) ||
			    (q = cp_image_ptr(sc->img, raw - w, w)) == NULL)
				continue;
			csz = cp_decode(q, w, sc->big) & ~(uint64_t)7;
			if (csz < 4 * w || csz - w < lead || csz > ((uint64_t)1 << 40))
				continue;
			hi = csz - w;
			if (pass == 1) {
				for (uint64_t size = 1; size + lead + g <= hi && *budget; size++, --*budget)
					if (recover_try(b, size, dword, infos[i], chk, w, raw))
						return 1;
				continue;
			}
			if (recover_requests(b, hi, lead, g, dword, infos[i], chk, w, raw, budget))
				return 1;
			/* a chunk merged since: glibc wrote the block's own chunk size
			 * as the next chunk's prev_size (its foot) when it was freed,
			 * often over the block's guard */
			if ((q = cp_image_ptr(sc->img, raw - 2 * w, csz)) != NULL)
				for (uint64_t k = 4 * w; k + w <= csz - w && *budget; k += 2 * w)
					if (cp_decode(q + k, w, sc->big) == k && k - w >= lead + g + 1 &&
					    recover_requests(b, k - w, lead, g, dword, infos[i], chk, w, raw, budget))
						return 1;
			if (g && hi >= lead + g + 1 && (q = cp_image_ptr(sc->img, b->user, hi - lead)) != NULL &&
			    recover_guarded(b, q, hi - lead - g, g, dword, infos[i], chk, w, raw, budget))
				return 1;
		}
	return 0;
}

#define RECOVER_BUDGET (16u << 20)

/* A freed block found by its END alone whose INFO word was reused: if the check
 * word verifies with the INFO of some valid header, its fields are proven
 * (recover_freed_size, within *BUDGET, when its SIZE word was reused too).
 * Returns the cut flag (0 or 1) of the DEPTH word the check word was proven
 * with, which may differ from the one B's stack was interned with (a guess when
 * the allocator wrote over DEPTH), or -1 when B stays unproven. */
static int verify_unverified(const struct scanner *sc, const uint64_t *infos, size_t ninfos,
			      struct cp_block *b, uint64_t *budget)
{
	const unsigned w = sc->w;
	const uint64_t hdr = cp_block_hdr(b);
	const unsigned char *p = cp_image_ptr(sc->img, hdr, HEAPANN_FIXED_WORDS * w);
	uint64_t chk, dword, d0;
	size_t i;
	unsigned k, ncut = 2;

	if (!p)
		return -1;
	chk = cp_decode(p + HEAPANN_W_CHECK * w, w, sc->big);
	/* the whole DEPTH word (its cut flag) when it holds the block's count;
	 * else (the allocator wrote over it) END's count, with and without the
	 * cut flag */
	dword = cp_decode(p + HEAPANN_W_DEPTH * w, w, sc->big);
	if (heapann_depth_frames(dword) == b->depth)
		ncut = 1;
	else
		dword = b->depth;
	d0 = dword;
	for (k = 0; k < ncut; k++, dword |= HEAPANN_DEPTH_CUT)
		for (i = 0; i < ninfos; i++) {
			if (heapann_check(hdr, b->size, dword, b->seq, infos[i], w) == chk) {
				b->flags &= (uint8_t)~CP_HDR_UNVERIFIED;
				b->guard_len = (uint8_t)heapann_info_guard(infos[i]);
				b->pad = (uint32_t)(heapann_info_pad(infos[i]) * w);
				return heapann_depth_cut(dword) != 0;
			}
		}
	if (sc->img->kind != CP_KIND_CORE)
		return -1;
	for (k = 0, dword = d0; k < ncut; k++, dword |= HEAPANN_DEPTH_CUT)
		if (recover_freed_size(sc, infos, ninfos, b, chk, dword, budget))
			return heapann_depth_cut(dword) != 0;
	return -1;
}

/* Try to prove every unverified freed block of the published chunks
 * (verify_unverified, in address order, within *BUDGET). A block proven with a
 * DEPTH word whose cut flag is not its stack's (check_end() guessed it from a
 * DEPTH word the allocator wrote over) moves to the stack with the same frames
 * and the proven flag, added to its worker's table. Runs before the workers'
 * tables are merged. Returns 0, or -1 when out of memory. */
static int prove_unverified(const struct scanner *sc, struct worker *wks, const uint64_t *infos,
			    size_t ninfos, uint64_t *budget)
{
	uint64_t f[HEAPANN_MAX_DEPTH];
	size_t i, off = 0;

	/* only the blocks each chunk listed: no pass over all of them */
	for (i = 0; i < sc->nchunks && off + sc->chunks[i].bn <= sc->out_n; off += sc->chunks[i++].bn) {
		struct chunk *c = &sc->chunks[i];
		struct stab *t = &wks[c->worker].stacks;
		const uint32_t *u = (const uint32_t *)c->unver.p;

		for (size_t x = 0; x < c->unver.n; x++) {
			struct cp_block *b = sc->out + off + u[x];
			const struct stab_entry *se;
			int cut;
			int64_t id;

			if (u[x] >= c->bn || !(b->flags & CP_HDR_UNVERIFIED))
				continue;
			cut = verify_unverified(sc, infos, ninfos, b, budget);
			se = (const struct stab_entry *)t->stacks.p + b->stack;
			if (cut < 0 || se->cut == (unsigned)cut || se->depth > HEAPANN_MAX_DEPTH)
				continue;
			/* a copy: interning may move the frames it reads */
			if (se->depth)
				memcpy(f, (const uint64_t *)t->frames.p + se->first, se->depth * sizeof(*f));
			id = stab_intern(t, f, se->depth, (unsigned)cut);
			if (id < 0)
				return -1;
			b->stack = (uint32_t)id;
		}
		vec_release(&c->unver, sizeof(uint32_t));
	}
	return 0;
}

/* The final number of merged stack old (numbered by first use: the first not
 * seen yet becomes out's next stack, its frames appended to out->addrs, where
 * stack_frames keeps addresses until the end of scan_merge). */
static inline uint32_t stack_number(struct cp_scan *out, const struct stab_entry *ge,
				    const uint64_t *gf, uint32_t *newid, size_t *nf, uint32_t old)
{
	if (newid[old] == UINT32_MAX) {
		struct cp_stack *st = &out->stacks[out->nstacks];

		newid[old] = (uint32_t)out->nstacks++;
		st->first = (uint32_t)*nf;
		st->depth = ge[old].depth;
		st->cut = ge[old].cut;
		if (ge[old].depth)
			memcpy(out->addrs + *nf, gf + ge[old].first, ge[old].depth * sizeof(uint64_t));
		*nf += ge[old].depth;
	}
	return newid[old];
}

/* One thread stack of a Linux process's core: [lo, hi). */
struct stack_range {
	uint64_t lo, hi;
};

static int stack_range_cmp(const void *a, const void *b)
{
	const struct stack_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Add to R (at *N) the stack that holds ADDR, a thread's stack pointer or an
 * address libheapann's snapshot gave for a running thread's stack
 * (HEAPANN_NT_STACKS): the anonymous segment holding it, when no block of OUT
 * (sorted) lies there; when blocks do (a stack the program took from the heap: a
 * coroutine's, or a thread's made with pthread_attr_setstack), only the user
 * bytes of the live block holding ADDR (stale freed headers inside it do not
 * count), so that a damaged header in the rest of that heap still counts, and
 * nothing when no live block holds ADDR. */
static void stack_range_add(const struct cp_image *img, const struct cp_scan *out, uint64_t addr,
			    struct stack_range *r, size_t *n)
{
	const struct cp_segment *seg = cp_image_segment(img, addr);
	const struct cp_block *b;
	uint64_t lo, hi;
	size_t k;

	if (!seg || cp_image_mapping(img, seg->vaddr))
		return;
	lo = seg->vaddr;
	hi = seg->vaddr + seg->memsz < lo ? UINT64_MAX : seg->vaddr + seg->memsz;
	k = cp_scan_lower(out, lo);
	if (k < out->nblocks && out->blocks[k].user < hi) {
		b = cp_scan_find(out, addr);
		if (!b || b->state != CP_LIVE || addr < b->user || addr - b->user >= b->size)
			return;
		lo = b->user;
		hi = lo + b->size;
	}
	r[*n].lo = lo;
	r[(*n)++].hi = hi;
}

/* Drop from out's damaged headers (sorted) those that lie in one of the threads'
 * stacks (its dead part below the stack pointer as well as its live frames),
 * counting them in nstack_copies. No allocator of a Linux process puts a block
 * there, while registers spilled there (the lazy resolver's, a callee's saves,
 * uninitialized locals) may still hold a header magic malloc had in them: such a
 * word is no damaged header. A Linux process's core is one with NT_FILE (the
 * kernel's, gdb's and libheapann's); a stack is an anonymous mapping. Raw dumps,
 * and cores without NT_FILE (a QEMU or debugger dump of a firmware's RAM, where
 * stack and heap may share a segment; qemu-user's), never. Returns 0, or -1 out
 * of memory. */
static int drop_stack_copies(const struct cp_image *img, struct cp_scan *out)
{
	size_t nr = 0, i, j, k, cap = img->nthreads + img->nstack_hints;
	struct stack_range *r;

	if (img->kind != CP_KIND_CORE || !cap || !img->nfiles || !out->ndamaged)
		return 0;
	r = malloc(cap * sizeof(*r));
	if (!r)
		return -1;
	for (i = 0; i < img->nthreads; i++)
		stack_range_add(img, out, img->threads[i].sp, r, &nr);
	for (i = 0; i < img->nstack_hints; i++)
		stack_range_add(img, out, img->stack_hints[i], r, &nr);
	qsort(r, nr, sizeof(*r), stack_range_cmp);
	/* their union, disjoint and in order (two threads may share a segment) */
	for (i = 0, k = 0; i < nr; i++)
		if (k && r[i].lo <= r[k - 1].hi) {
			if (r[i].hi > r[k - 1].hi)
				r[k - 1].hi = r[i].hi;
		} else {
			r[k++] = r[i];
		}
	nr = k;
	for (i = j = k = 0; i < out->ndamaged; i++) {
		uint64_t h = out->damaged[i].hdr;

		while (k < nr && r[k].hi <= h)   /* both in order: one pass */
			k++;
		if (k < nr && r[k].lo <= h) {
			out->nstack_copies++;
			continue;
		}
		out->damaged[j++] = out->damaged[i];
	}
	out->ndamaged = j;
	free(r);
	return 0;
}

/* Merge the workers' stack tables and the chunks' results into out. Stacks are
 * numbered by first use in address order, so the result does not depend on the
 * number of threads or on their timing. */
static int scan_merge(struct scanner *sc, struct worker *wks, unsigned nw, struct cp_scan *out)
{
	struct stab g;
	struct size_tab szt = { NULL, 0, 0, NULL, 0 };
	uint32_t **remap, *newid = NULL;
	uint64_t infos[INFO_SET * 4];
	/* check words recover_freed_size may try over the whole scan: 0.15-0.2 s
	 * at most (doc/performance.md, hunt10) */
	uint64_t budget = RECOVER_BUDGET;
	size_t i, nb = 0, nd = 0, nsig = 0, j, ninfos = 0, nf, rdoff = 0;
	unsigned t, k;
	int rc = -1, sorted;
	const struct stab_entry *ge;
	const uint64_t *gf;

	memset(&g, 0, sizeof(g));
	for (t = 0; t < nw; t++)
		for (k = 0; k < wks[t].ninfos; k++) {
			for (j = 0; j < ninfos && infos[j] != wks[t].infos[k]; j++)
				;
			if (j == ninfos && ninfos < sizeof(infos) / sizeof(infos[0]))
				infos[ninfos++] = wks[t].infos[k];
		}
	/* before the tables are merged: a block proven with the other cut flag
	 * gets its stack in its worker's table */
	if (sc->published != sc->nchunks || prove_unverified(sc, wks, infos, ninfos, &budget) < 0)
		return -1;
	remap = calloc(nw, sizeof(*remap));
	if (!remap)
		return -1;
	for (t = 0; t < nw; t++) {
		const struct stab_entry *e = (const struct stab_entry *)wks[t].stacks.stacks.p;
		const uint64_t *f = (const uint64_t *)wks[t].stacks.frames.p;
		size_t ns = wks[t].stacks.stacks.n;

		remap[t] = malloc((ns ? ns : 1) * sizeof(uint32_t));
		if (!remap[t])
			goto out;
		for (i = 0; i < ns; i++) {
			/* no frames at all (every stack empty): no vector, and NULL + 0 is undefined */
			int64_t id = stab_intern(&g, e[i].depth ? f + e[i].first : NULL, e[i].depth,
						 e[i].cut);

			if (id < 0)
				goto out;
			remap[t][i] = (uint32_t)id;
		}
		stab_release(&wks[t].stacks);
	}
	for (i = 0; i < sc->nchunks; i++) {
		nb += sc->chunks[i].bn;
		nd += sc->chunks[i].damage.n;
		nsig += sc->chunks[i].sigs.n;
		out->nstale += sc->chunks[i].nstale;
		out->nstray += sc->chunks[i].nstray;
		out->ncut += sc->chunks[i].ncut;
		out->nwriting += sc->chunks[i].nwriting;
	}
	/* the blocks are published in place already: only their stacks change */
	if (sc->published != sc->nchunks || nb != sc->out_n)
		goto out;
	if (sc->out && sc->out_cap > nb + nb / 8) {
		struct cp_block *o = realloc(sc->out, (nb ? nb : 1) * sizeof(*o));

		if (o)
			sc->out = o;
	}
	out->blocks = sc->out ? sc->out : malloc(sizeof(*out->blocks));
	sc->out = NULL;
	out->damaged = malloc((nd ? nd : 1) * sizeof(*out->damaged));
	out->sigs = malloc((nsig ? nsig : 1) * sizeof(*out->sigs));
	ge = (const struct stab_entry *)g.stacks.p;
	gf = (const uint64_t *)g.frames.p;
	newid = malloc((g.stacks.n ? g.stacks.n : 1) * sizeof(*newid));
	out->stacks = malloc((g.stacks.n ? g.stacks.n : 1) * sizeof(*out->stacks));
	out->stack_frames = malloc((g.frames.n ? g.frames.n : 1) * sizeof(uint32_t));
	out->addrs = malloc((g.frames.n ? g.frames.n : 1) * sizeof(uint64_t));
	if (!out->blocks || !out->damaged || !out->sigs || !newid || !out->stacks ||
	    !out->stack_frames || !out->addrs)
		goto out;
	memset(newid, 0xFF, (g.stacks.n ? g.stacks.n : 1) * sizeof(*newid));
	/* the live blocks per stack, counted here for the statistics (a pass over
	 * the blocks less in cp_stats_read: 0.5 GB at 10M blocks, issue 15) */
	_Static_assert(HEAPANN_STATS_NCLASSES == 4, "cp_stack_live.cls_bytes");
	if (g.stacks.n <= CP_STACK_LIVE_MAX)
		out->stack_live = calloc(g.stacks.n + 1, sizeof(*out->stack_live));
	if (out->stack_live)
		size_tab_grow(&szt);
	if (szt.v && g.stacks.n <= SIZE_SMALL_STACKS &&
	    (szt.small = calloc(g.stacks.n * SIZE_SMALL + 1, sizeof(*szt.small))))
		szt.nsmall = g.stacks.n;
	out->nstacks = 0;
	nf = 0;
	/* blocks already in order (nearly always: chunks are published in address
	 * order) get their final stack numbers in this one pass; else after the sort */
	sorted = !sc->unsorted;
	for (i = 0; i < sc->nchunks; i++) {
		struct chunk *c = &sc->chunks[i];
		struct cp_damage *d = (struct cp_damage *)c->damage.p;
		/* the totals in locals: stores through out and its arrays would make
		 * the compiler load and store each one again for every block */
		const uint32_t *rm = remap[c->worker];
		struct cp_stack_live *sl = sorted ? out->stack_live : NULL;
		/* read at rb, kept at ob (a guess not proven is dropped) */
		struct cp_block *rb = out->blocks + rdoff, *re = rb + c->bn, *ob = out->blocks + out->nblocks;
		uint64_t lead_max = out->lead_max, nlive = 0, live_bytes = 0, live_ovh = 0;
		uint64_t nbroken = 0, hdr_w = sc->w;
		size_t nkept;

		for (; rb < re; rb++) {
			/* a guess prove_unverified() did not prove is dropped */
			if (rb->flags & CP_HDR_GUESS) {
				if (rb->flags & CP_HDR_UNVERIFIED) {
					out->nstale++;
					continue;
				}
				rb->flags &= (uint8_t)~CP_HDR_GUESS;
			}
			if (ob != rb)
				*ob = *rb;
			ob->stack = rm[ob->stack];
			if (sorted)
				ob->stack = stack_number(out, ge, gf, newid, &nf, ob->stack);
			if (ob->user - cp_block_start(ob) > lead_max)
				lead_max = ob->user - cp_block_start(ob);
			if (ob->state == CP_LIVE) {
				uint64_t ovh = (HEAPANN_FIXED_WORDS + 1u + ob->depth) * hdr_w + ob->pad + ob->guard_len;

				nlive++;
				live_bytes += ob->size;
				live_ovh += ovh;
				nbroken += (ob->flags & CP_GUARD_BROKEN) != 0;
				if (sl)
					stack_live_add(&sl[ob->stack], &szt, ob, ovh);
			}
			ob++;
		}
		nkept = (size_t)(ob - (out->blocks + out->nblocks));
		rdoff += c->bn;
		out->nblocks += nkept;
		out->lead_max = lead_max;
		out->nlive += nlive;
		out->nfreed += nkept - nlive;
		out->live_bytes += live_bytes;
		out->live_overhead += live_ovh;
		out->nguard_broken += nbroken;
		for (j = 0; j < c->damage.n; j++) {
			struct cp_damage *o = &out->damaged[out->ndamaged++];

			*o = d[j];
			if (o->known & CP_KNOWN_FRAMES)
				o->stack = remap[c->worker][o->stack];
		}
		if (c->sigs.n)
			memcpy(out->sigs + out->nsigs, c->sigs.p, c->sigs.n * sizeof(*out->sigs));
		out->nsigs += c->sigs.n;
		vec_release(&c->damage, sizeof(struct cp_damage));
		vec_release(&c->sigs, sizeof(uint64_t));
	}
	if (!sorted)
		qsort(out->blocks, out->nblocks, sizeof(*out->blocks), block_cmp);
	for (i = 1; i < out->ndamaged; i++)
		if (out->damaged[i - 1].hdr > out->damaged[i].hdr)
			break;
	if (i < out->ndamaged)
		qsort(out->damaged, out->ndamaged, sizeof(*out->damaged), damage_cmp);
	if (drop_stack_copies(sc->img, out) < 0)
		goto out;

	/* number the stacks by first use: blocks (done above when they were in
	 * order), then damaged headers */
	for (i = sorted ? out->nblocks : 0; i < out->nblocks + out->ndamaged; i++) {
		uint32_t *sp;

		if (i < out->nblocks) {
			const struct cp_block *o = &out->blocks[i];

			sp = &out->blocks[i].stack;
			*sp = stack_number(out, ge, gf, newid, &nf, *sp);
			if (o->state == CP_LIVE && out->stack_live)
				stack_live_add(&out->stack_live[*sp], &szt, o,
					       heapann_header_bytes(o->depth, sc->w) + o->pad + o->guard_len);
			continue;
		} else {
			if (!(out->damaged[i - out->nblocks].known & CP_KNOWN_FRAMES))
				continue;
			sp = &out->damaged[i - out->nblocks].stack;
		}
		*sp = stack_number(out, ge, gf, newid, &nf, *sp);
	}
	out->nstack_frames = nf;
	out->nstack_live = out->stack_live ? out->nstacks : 0;
	size_tab_finish(&szt);
	if (out->stack_live && szt.v) {
		out->stack_sizes = szt.v;
		out->nstack_sizes = szt.cap;
		szt.v = NULL;
	}
	/* distinct addresses, then frames as indices into them */
	{
		uint64_t *chain = malloc((nf ? nf : 1) * sizeof(uint64_t));

		if (!chain)
			goto out;
		memcpy(chain, out->addrs, nf * sizeof(uint64_t));
		qsort(out->addrs, nf, sizeof(uint64_t), u64_cmp);
		for (i = 0, j = 0; i < nf; i++)
			if (j == 0 || out->addrs[j - 1] != out->addrs[i])
				out->addrs[j++] = out->addrs[i];
		out->naddrs = j;
		for (i = 0; i < nf; i++) {
			size_t lo = 0, hi = out->naddrs;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (out->addrs[mid] < chain[i])
					lo = mid + 1;
				else
					hi = mid;
			}
			out->stack_frames[i] = (uint32_t)lo;
		}
		free(chain);
	}
	rc = 0;
out:
	for (t = 0; t < nw; t++)
		free(remap[t]);
	free(remap);
	free(newid);
	free(szt.v);
	free(szt.small);
	stab_release(&g);
	return rc;
}

/* Note the words that may be addresses (cp_scan.ptr_words) where the fast path
 * can: 64-bit little-endian images with the SSE2 or the AVX2 filter (both write
 * the notes, and the tail loop after them). The range is the upper
 * halves of the lowest and highest address of the writable segments (a heap is
 * writable; the vsyscall page at the top of x86-64's address space is not, and
 * would widen the range to almost every value), of all segments when none is.
 * The mark checks that every live block lies inside it before it trusts the
 * bits. Returns 0 (also when nothing is noted), -1 out of memory. */
static int scan_prepare_ptrs(struct scanner *sc)
{
#ifdef CP_HAVE_WORDS_MASK8
	const struct cp_image *img = sc->img;
	uint64_t lo = UINT64_MAX, hi = 0, nbits = 0;
	size_t i;
	int any_w = 0;

	if (sc->w != 8 || sc->big || !img->nsegs)
		return 0;
	sc->ptr_seg_bit = malloc(img->nsegs * sizeof(*sc->ptr_seg_bit));
	if (!sc->ptr_seg_bit)
		return -1;
	for (i = 0; i < img->nsegs; i++)
		any_w |= img->segs[i].memsz && (img->segs[i].flags & PF_W);
	for (i = 0; i < img->nsegs; i++) {
		const struct cp_segment *s = &img->segs[i];
		uint64_t off0 = (8 - s->vaddr % 8) % 8, last;

		sc->ptr_seg_bit[i] = nbits;
		if (s->avail >= off0 + 8)
			nbits += ((s->avail - off0) / 8 + 63) / 64 * 64;
		if (!s->memsz || (any_w && !(s->flags & PF_W)))
			continue;
		last = s->memsz - 1 > UINT64_MAX - s->vaddr ? UINT64_MAX : s->vaddr + (s->memsz - 1);
		if (s->vaddr < lo)
			lo = s->vaddr;
		if (last > hi)
			hi = last;
	}
	if (lo > hi)
		return 0;
	sc->ptr_lo = (uint32_t)(lo >> 32);
	sc->ptr_span = (uint32_t)(hi >> 32) - sc->ptr_lo;
	sc->ptr_words = calloc(nbits / 64 + 1, sizeof(uint64_t));
	if (!sc->ptr_words)
		return -1;
#else
	(void)sc;
#endif
	return 0;
}

int cp_scan_image_opts(const struct cp_image *img, const struct cp_scan_options *opt,
		       struct cp_scan *out, struct cp_error *err)
{
	struct scanner sc;
	struct worker *wks = NULL;
	unsigned nw = opt ? opt->nthreads : 0, t, started = 0;
	int rc = -1, failed = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	memset(&sc, 0, sizeof(sc));
	if (!img)
		return cp_error_set(err, CP_EARG, "(null)", "no image");
	if (img->wsize != 4 && img->wsize != 8)
		return cp_error_set(err, CP_EARG, img->path, "unsupported word size %u", img->wsize);
	sc.img = img;
	sc.w = img->wsize;
	sc.big = img->big_endian;
	sc.map = img->map;
	sc.opt = opt;
	sc.sl = heapann_start_live(sc.w);
	sc.sf = heapann_start_freed(sc.w);
	sc.el = heapann_end_live(sc.w);
	sc.ef = heapann_end_freed(sc.w);
	sc.r_sl = to_raw(sc.sl, sc.w, sc.big);
	sc.r_sf = to_raw(sc.sf, sc.w, sc.big);
	sc.r_el = to_raw(sc.el, sc.w, sc.big);
	sc.r_ef = to_raw(sc.ef, sc.w, sc.big);
	sc.sig0 = heapann_stats_magic0(sc.w);
	sc.sig1 = heapann_stats_magic1(sc.w);
	sc.r_sig = to_raw(sc.sig0, sc.w, sc.big);
	sc.r_mask = to_raw(sc.w == 8 ? ~(uint64_t)HEAPANN_END_DEPTH_MASK :
			   (uint32_t)~HEAPANN_END_DEPTH_MASK, sc.w, sc.big);
	if (sc.w == 8) {
		/* the half of each magic that holds bits 32..63: exact for all four */
		unsigned hi = sc.big ? 0 : 4;
		uint64_t r[5] = { sc.r_sl, sc.r_sf, sc.r_el, sc.r_ef, sc.r_sig };

		for (t = 0; t < 5; t++)
			memcpy(&sc.lane[t], (const unsigned char *)&r[t] + hi, 4);
		sc.lane_mask = UINT32_MAX;
	} else {
		sc.lane[0] = (uint32_t)sc.r_sl;
		sc.lane[1] = (uint32_t)sc.r_sf;
		sc.lane[2] = (uint32_t)sc.r_el;
		sc.lane[3] = (uint32_t)sc.r_ef;
		sc.lane[4] = (uint32_t)sc.r_sig;
		sc.lane_mask = (uint32_t)sc.r_mask;
	}
#ifdef CP_HAVE_AVX2
	sc.avx2 = !(opt && opt->no_avx2) && __builtin_cpu_supports("avx2");
#endif
	sc.no_fast = opt && opt->no_fast;
	atomic_init(&sc.next, 0);
	atomic_init(&sc.done, 0);
	pthread_mutex_init(&sc.pub_lock, NULL);
	sc.chunk_bytes = opt && opt->chunk_bytes ? opt->chunk_bytes : CHUNK_BYTES;
	sc.chunk_bytes = (sc.chunk_bytes + sc.w - 1) / sc.w * sc.w;
	if (plan_chunks(&sc) < 0 || (!(opt && opt->no_ptr_notes) && scan_prepare_ptrs(&sc) < 0)) {
		cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
		goto out;
	}
	if (nw == 0)
		nw = ncpu_usable();
	if (sc.total < SMALL_IMAGE && !(opt && opt->chunk_bytes))
		nw = 1;
	if (nw > sc.nchunks)
		nw = sc.nchunks ? (unsigned)sc.nchunks : 1;
	if (nw > 64)
		nw = 64;
	wks = calloc(nw, sizeof(*wks));
	if (!wks) {
		cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
		goto out;
	}
	for (t = 0; t < nw; t++) {
		wks[t].sc = &sc;
		wks[t].id = t;
	}
	/* the calling thread is worker 0, so the progress callback runs on it */
	for (t = 1; t < nw; t++) {
		if (pthread_create(&wks[t].thread, NULL, worker_main, &wks[t]) != 0)
			break;
		started = t;
	}
	worker_main(&wks[0]);
	for (t = 1; t <= started; t++)
		pthread_join(wks[t].thread, NULL);
	for (t = 0; t < nw; t++)
		failed |= wks[t].failed;
	failed |= sc.pub_failed;
	if (failed) {
		cp_error_set(err, CP_ENOMEM, img->path, "out of memory while scanning");
		goto out;
	}
	if (opt && opt->progress)
		opt->progress(opt->progress_arg, sc.total, sc.total);
	out->scanned_bytes = sc.total;
	out->repeat_cmp_bytes = sc.repeat_cmp;
	out->repeat_read_bytes = sc.repeat_work;
	if (scan_merge(&sc, wks, nw, out) < 0) {
		cp_error_set(err, CP_ENOMEM, img->path, "out of memory while merging the scan");
		goto out;
	}
	out->guards_counted = 1;
	out->ptr_words = sc.ptr_words;
	out->ptr_seg_bit = sc.ptr_words ? sc.ptr_seg_bit : NULL;
	if (sc.ptr_words) {
		out->ptr_lo = (uint64_t)sc.ptr_lo << 32;
		out->ptr_hi = ((uint64_t)(sc.ptr_lo + sc.ptr_span) << 32) | 0xFFFFFFFFu;
	}
	sc.ptr_words = NULL;
	if (out->ptr_seg_bit)
		sc.ptr_seg_bit = NULL;
	rc = 0;
out:
	if (wks)
		for (t = 0; t < nw; t++)
			stab_release(&wks[t].stacks);
	free(wks);
	for (i = 0; i < sc.nchunks; i++) {
		vec_release(&sc.chunks[i].blocks, sizeof(struct cp_block));
		vec_release(&sc.chunks[i].damage, sizeof(struct cp_damage));
		vec_release(&sc.chunks[i].sigs, sizeof(uint64_t));
		vec_release(&sc.chunks[i].unver, sizeof(uint32_t));
	}
	free(sc.chunks);
	free(sc.run_end);
	for (i = 0; i < sc.npool; i++)
		vec_release(&sc.pool[i], sizeof(struct cp_block));
	free(sc.pool);
	free(sc.out);
	free(sc.ptr_words);
	free(sc.ptr_seg_bit);
	pthread_mutex_destroy(&sc.pub_lock);
	if (rc < 0)
		cp_scan_free(out);
	return rc;
}

int cp_scan_image(const struct cp_image *img, unsigned nthreads, struct cp_scan *out,
		  struct cp_error *err)
{
	struct cp_scan_options o;

	memset(&o, 0, sizeof(o));
	o.nthreads = nthreads;
	return cp_scan_image_opts(img, &o, out, err);
}

void cp_scan_free(struct cp_scan *scan)
{
	if (!scan)
		return;
	free(scan->blocks);
	free(scan->stacks);
	free(scan->stack_frames);
	free(scan->addrs);
	free(scan->damaged);
	free(scan->sigs);
	free(scan->ptr_words);
	free(scan->ptr_seg_bit);
	free(scan->stack_live);
	free(scan->stack_sizes);
	memset(scan, 0, sizeof(*scan));
}

int cp_scan_ptr_base(const struct cp_scan *scan, const struct cp_image *img,
		     const struct cp_segment *seg, uint64_t *base, uint64_t *from)
{
	size_t s;
	uint64_t off0;

	if (!scan || !scan->ptr_words || !seg || img->wsize != 8)
		return -1;
	s = (size_t)(seg - img->segs);
	if (s >= img->nsegs)
		return -1;
	off0 = (8 - seg->vaddr % 8) % 8;
	*from = seg->vaddr + off0;
	*base = scan->ptr_seg_bit[s] - *from / 8;   /* modulo 2^64: + A / 8 lands right */
	return 0;
}

int cp_scan_may_point(const struct cp_scan *scan, const struct cp_image *img,
		      const struct cp_segment *seg, uint64_t a, uint64_t b)
{
	uint64_t base, from;

	if (b <= a || cp_scan_ptr_base(scan, img, seg, &base, &from) < 0)
		return 1;
	if (a < from || (a - from) % 8 || b - seg->vaddr > seg->avail)
		return 1;
	if ((b - a) / 8 == 0)
		return 0;
	return cp_scan_ptr_any(scan, base + a / 8, (b - a) / 8);
}

/* addr lies in b's raw block: pad, header, user data or guard (a zero-size block
 * still holds its user address). */
static int block_holds(const struct cp_block *b, uint64_t addr)
{
	uint64_t end = cp_block_end(b);

	if (end == b->user)
		end++;
	return addr >= cp_block_start(b) && addr < end;
}

size_t cp_scan_lower(const struct cp_scan *scan, uint64_t addr)
{
	size_t lo = 0, hi = scan->nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scan->blocks[mid].user < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t cp_scan_upper(const struct cp_scan *scan, uint64_t addr)
{
	return addr == UINT64_MAX ? scan->nblocks : cp_scan_lower(scan, addr + 1);
}

/* One step of cp_scan_find's walk away from the search point: 1 when the walk
 * stops at b (a live block: *found is b if it holds addr), else 0; the first
 * freed block holding addr is kept in *freed. */
static int find_step(const struct cp_block *b, uint64_t addr, const struct cp_block **freed,
		     const struct cp_block **found)
{
	if (block_holds(b, addr)) {
		if (b->state == CP_LIVE) {
			*found = b;
			return 1;
		}
		if (!*freed)
			*freed = b;
	}
	return b->state == CP_LIVE;
}

const struct cp_block *cp_scan_find(const struct cp_scan *scan, uint64_t addr)
{
	size_t lo = cp_scan_upper(scan, addr), i;
	const struct cp_block *freed = NULL, *found = NULL;

	/* Live blocks never overlap: only the last live block with user <= addr (addr
	 * in its data or guard) and the first one after (addr in its header or pad) can
	 * hold addr. Freed headers may lie in between (stale ones even inside a live
	 * block's data): step over them, remembering the first that holds addr. */
	for (i = lo; i-- > 0;)
		if (find_step(&scan->blocks[i], addr, &freed, &found))
			break;
	if (found)
		return found;
	for (i = lo; i < scan->nblocks; i++)
		if (find_step(&scan->blocks[i], addr, &freed, &found))
			break;
	return found ? found : freed;
}
