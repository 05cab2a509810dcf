/* tables.c - per-stack usage (from live blocks or from the statistics region) and
 * mprof's memory leak and direct allocation tables built on it.
 *
 * Pure functions over the scan, the symbol table and the statistics; no I/O. A
 * function is identified by its name (an unnamed frame by its address), so the
 * tables read the way mprof printed them.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tables_priv.h"

unsigned an_size_class(uint64_t size)
{
	return heapann_stats_class(size);
}

/* ---- helpers ---- */

struct an_fnkey {
	const char *name;   /* NULL: an unnamed frame, known by addr */
	uint64_t addr;      /* 0 when named */
	const char *file, *module;  /* call sites (m->sites) only; else NULL, 0 */
	unsigned line;
	int inlined;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static uint64_t fn_hash(const char *name, uint64_t addr)
{
	return an_mix(name ? str_hash(name) : addr ^ 0x5bd1e995u);
}

static int str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int fn_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct an_fnkey *s = &((const struct an_fnmap *)ctx)->keys[id], *k = key;

	if (!k->name || !s->name)
		return !k->name && !s->name && s->addr == k->addr;
	return str_same(s->name, k->name) && s->line == k->line && s->inlined == k->inlined &&
	       str_same(s->file, k->file) && str_same(s->module, k->module);
}

uint32_t an_fnmap_id(struct an_fnmap *m, const struct an_frame *fr, uint32_t stack,
		     uint32_t frame)
{
	struct an_fnkey key = { fr->function, fr->function ? 0 : fr->addr, NULL, NULL, 0, 0 };
	uint64_t h;
	int64_t id;

	if (m->sites && fr->function) {
		key.file = fr->file;
		key.module = fr->module;
		key.line = fr->line;
		key.inlined = fr->inlined;
	}
	h = fn_hash(key.name, key.addr);
	if (key.file)
		h = an_mix(h ^ str_hash(key.file) ^ key.line);

	if (m->n == m->rep_cap) {
		size_t cap = m->rep_cap ? m->rep_cap * 2 : 256;
		struct an_fnkey *k = realloc(m->keys, cap * sizeof(*k));
		uint32_t *a;

		if (!k)
			return UINT32_MAX;
		m->keys = k;
		a = realloc(m->rep_stack, cap * sizeof(*a));
		if (!a)
			return UINT32_MAX;
		m->rep_stack = a;
		a = realloc(m->rep_frame, cap * sizeof(*a));
		if (!a)
			return UINT32_MAX;
		m->rep_frame = a;
		m->rep_cap = cap;
	}
	id = htab_put(&m->idx, h, (uint32_t)m->n, fn_eq, m, &key);
	if (id < 0)
		return UINT32_MAX;
	if ((size_t)id == m->n) {
		m->keys[id] = key;
		m->rep_stack[id] = stack;
		m->rep_frame[id] = frame;
		m->n++;
	}
	return (uint32_t)id;
}

void an_fnmap_release(struct an_fnmap *m)
{
	htab_release(&m->idx);
	free(m->keys);
	free(m->rep_stack);
	free(m->rep_frame);
	memset(m, 0, sizeof(*m));
}

size_t an_fbuf_site(struct an_fbuf *b, const struct an_input *in, const struct an_site *s)
{
	size_t n = an_frames_count(in, s->stack);

	n = n > s->skip ? n - s->skip : 0;
	if (n + 1 > b->cap) {
		struct an_frame *v = realloc(b->v, (n + 1) * sizeof(*v));

		if (!v)
			return SIZE_MAX;
		b->v = v;
		b->cap = n + 1;
	}
	n = an_frames_get(in, s->stack, s->skip, b->v, b->cap);
	if (n > b->cap)
		n = b->cap;
	/* stop at main, as Massif does: what runs below it is the same for every stack */
	for (size_t k = 0; k < n; k++)
		if (b->v[k].function && !strcmp(b->v[k].function, "main"))
			return k + 1;
	return n;
}

int an_fbuf_cut(const struct an_fbuf *b, size_t nf, const struct an_input *in,
		const struct an_site *s)
{
	if (!in->scan->stacks[s->stack].cut)
		return 0;
	return !(nf && b->v[nf - 1].function && !strcmp(b->v[nf - 1].function, "main"));
}

/* ---- usage ---- */

static int usage_start(struct an_usage *out, size_t nstacks)
{
	memset(out, 0, sizeof(*out));
	out->bins = calloc(AN_NBINS, sizeof(*out->bins));
	out->v = calloc(nstacks + 1, sizeof(*out->v));
	if (!out->bins || !out->v) {
		an_usage_release(out);
		return -1;
	}
	return 0;
}

/* Drop sites without allocations and add up the totals. */
static void usage_finish(struct an_usage *out)
{
	size_t n = 0;

	for (size_t i = 0; i < out->n; i++) {
		struct an_site *s = &out->v[i];

		if (!s->allocs && !s->frees)
			continue;
		out->allocs += s->allocs;
		out->frees += s->frees;
		out->bytes += s->bytes;
		out->bytes_freed += s->bytes_freed;
		out->temp += s->temp;
		out->v[n++] = *s;
	}
	out->n = n;
}

int an_usage_from_scan(const struct an_input *in, const struct an_filter *f,
		       struct an_usage *out)
{
	const struct cp_scan *sc = in->scan;
	signed char *ignored;

	if (usage_start(out, sc->nstacks) < 0)
		return -1;
	ignored = malloc(sc->nstacks + 1);
	if (!ignored) {
		an_usage_release(out);
		return -1;
	}
	for (uint32_t s = 0; s < sc->nstacks; s++) {
		ignored[s] = (signed char)an_stack_ignored(in, f, s);
		out->v[s].stack = s;
		out->v[s].skip = an_alloc_skip(in, f, s);
	}
	out->n = sc->nstacks;
	for (size_t i = 0; i < sc->nblocks; i++) {
		const struct cp_block *b = &sc->blocks[i];
		struct an_site *s;
		struct an_bin *bin;
		unsigned c;

		if (b->state != CP_LIVE || b->stack >= sc->nstacks)
			continue;
		if (ignored[b->stack]) {
			out->ignored_allocs++;
			out->ignored_bytes += b->size;
			continue;
		}
		s = &out->v[b->stack];
		c = an_size_class(b->size);
		s->allocs++;
		s->bytes += b->size;
		s->cls_bytes[c] += b->size;
		bin = &out->bins[an_size_bin(b->size)];
		bin->allocs++;
		bin->bytes += b->size;
	}
	free(ignored);
	usage_finish(out);
	return 0;
}

int an_usage_from_stats(const struct an_input *in, const struct an_filter *f,
			const struct cp_stats *st, struct an_usage *out)
{
	const struct cp_scan *sc = in->scan;
	unsigned char *seen;

	if (usage_start(out, st->nstacks + sc->nstacks) < 0)
		return -1;
	seen = calloc(sc->nstacks + 1, 1);   /* scan stacks the region has an entry for */
	if (!seen) {
		an_usage_release(out);
		return -1;
	}
	out->from_stats = 1;
	out->unrecorded_allocs = st->unrecorded_allocs;
	out->unrecorded_bytes = st->unrecorded_bytes;
	out->unrecorded_temp = st->unrecorded_temp;
	for (size_t i = 0; i < st->nstacks; i++) {
		const struct cp_stats_stack *e = &st->stacks[i];
		struct an_site *s;

		if (e->stack >= in->scan->nstacks)
			continue;
		seen[e->stack] = 1;
		if (an_stack_ignored(in, f, e->stack)) {
			out->ignored_allocs += e->allocs;
			out->ignored_bytes += e->bytes;
			continue;
		}
		s = &out->v[out->n++];
		s->stack = e->stack;
		s->skip = an_alloc_skip(in, f, e->stack);
		s->allocs = e->allocs;
		s->frees = e->frees;
		s->bytes = e->bytes;
		s->bytes_freed = e->bytes_freed;
		s->temp = e->temp;
		for (unsigned c = 0; c < AN_NCLASSES; c++) {
			s->cls_bytes[c] = e->cls_bytes[c];
			s->cls_freed[c] = e->cls_freed[c];
		}
	}
	/* A full stack table left some stacks out: their live blocks are in the image,
	 * so the tables show them from there (allocations = live blocks, frees not
	 * known) rather than leave kept bytes out of the leak and direct tables. */
	if (st->unrecorded_allocs) {
		uint32_t *at = malloc((sc->nstacks + 1) * sizeof(*at));

		if (!at) {
			free(seen);
			an_usage_release(out);
			return -1;
		}
		for (size_t i = 0; i < sc->nblocks; i++) {
			const struct cp_block *b = &sc->blocks[i];
			struct an_site *s;

			if (b->state != CP_LIVE || b->stack >= sc->nstacks || seen[b->stack] == 1)
				continue;
			if (!seen[b->stack]) {
				if (an_stack_ignored(in, f, b->stack)) {
					seen[b->stack] = 1;
					continue;
				}
				seen[b->stack] = 2;
				at[b->stack] = (uint32_t)out->n;
				s = &out->v[out->n++];
				s->stack = b->stack;
				s->skip = an_alloc_skip(in, f, b->stack);
			}
			s = &out->v[at[b->stack]];
			s->allocs++;
			s->bytes += b->size;
			s->cls_bytes[an_size_class(b->size)] += b->size;
			out->fallback_blocks++;
			out->fallback_bytes += b->size;
		}
		free(at);
	}
	free(seen);
	for (unsigned b = 0; b < AN_NBINS; b++) {
		out->bins[b].allocs = st->bins[b].allocs;
		out->bins[b].bytes = st->bins[b].bytes;
		out->bins[b].frees = st->bins[b].frees;
		out->bins[b].bytes_freed = st->bins[b].bytes_freed;
	}
	usage_finish(out);
	return 0;
}

void an_usage_release(struct an_usage *u)
{
	free(u->v);
	free(u->bins);
	memset(u, 0, sizeof(*u));
}

/* ---- memory leak table ---- */

struct leak_key {
	uint64_t *k;         /* the path's keys, allocation site first */
	uint32_t n;
	uint32_t cut;        /* the path ends where the stack was cut (an_leak.cut) */
	uint32_t site;
};

static int leak_key_cmp(const void *pa, const void *pb)
{
	const struct leak_key *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	if (a->cut != b->cut)
		return a->cut < b->cut ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Does sorted key i start a new path (not the same as key i - 1)? */
static int leak_key_starts(const struct leak_key *keys, size_t i)
{
	return i == 0 || keys[i].n != keys[i - 1].n || keys[i].cut != keys[i - 1].cut ||
	       memcmp(keys[i].k, keys[i - 1].k, keys[i].n * sizeof(uint64_t)) != 0;
}

/* The path keys of every site of u, sorted (leak_key_cmp): the first DEPTH
 * logical frames after its skip (UINT_MAX: all of them, up to main), as fm
 * names them; cut where the path ends short at a stack cut at HEAPANN_DEPTH.
 * Fills *keys (u->n of them, owned by the caller) whose k point into *karr
 * (owned by the caller, also on failure). Returns 0, or -1 out of memory. */
static int site_keys(const struct an_input *in, const struct an_usage *u, unsigned depth,
		     struct an_fnmap *fm, struct leak_key **keys, uint64_t **karr)
{
	struct an_fbuf fb = { 0 };
	size_t *off = calloc(u->n + 1, sizeof(*off)), nkarr = 0, cap = 0;
	int rc = -1;

	*karr = NULL;
	*keys = calloc(u->n + 1, sizeof(**keys));
	if (!off || !*keys)
		goto out;
	for (size_t i = 0; i < u->n; i++) {
		const struct an_site *s = &u->v[i];
		struct leak_key *lk = &(*keys)[i];
		size_t nf = an_fbuf_site(&fb, in, s);

		if (nf == SIZE_MAX)
			goto out;
		lk->site = (uint32_t)i;
		lk->n = (uint32_t)(nf < depth ? nf : depth);
		lk->cut = nf < depth && an_fbuf_cut(&fb, nf, in, s);
		if (nkarr + lk->n + 1 > cap) {
			size_t c = (nkarr + lk->n + 1) * 2;
			uint64_t *k = realloc(*karr, c * sizeof(*k));

			if (!k)
				goto out;
			*karr = k;
			cap = c;
		}
		off[i] = nkarr;   /* *karr may move: k is set below */
		for (uint32_t k = 0; k < lk->n; k++) {
			uint32_t id = an_fnmap_id(fm, &fb.v[k], s->stack, k);

			if (id == UINT32_MAX)
				goto out;
			(*karr)[nkarr++] = id;
		}
	}
	for (size_t i = 0; i < u->n; i++)
		(*keys)[i].k = *karr + off[i];
	qsort(*keys, u->n, sizeof(**keys), leak_key_cmp);
	rc = 0;
out:
	free(off);
	free(fb.v);
	return rc;
}

static int leak_cmp(const void *pa, const void *pb)
{
	const struct an_leak *a = pa, *b = pb;

	if (a->kept_bytes != b->kept_bytes)
		return a->kept_bytes < b->kept_bytes ? 1 : -1;
	if (a->kept_blocks != b->kept_blocks)
		return a->kept_blocks < b->kept_blocks ? 1 : -1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

int an_leaks_build(const struct an_input *in, const struct an_usage *u, unsigned depth,
		   int call_sites, struct an_leaks *out)
{
	struct an_fnmap fm = { .sites = call_sites };
	struct leak_key *keys = NULL;
	uint64_t *karr = NULL;
	size_t n = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	/* Every site gets its path key, kept or not: a path that leaks also counts
	 * the allocations and frees of the stacks under it that kept nothing. */
	out->v = calloc(u->n + 1, sizeof(*out->v));
	if (!out->v || site_keys(in, u, depth ? depth : 1, &fm, &keys, &karr) < 0)
		goto out;
	for (size_t i = 0; i < u->n; i++) {
		const struct an_site *s = &u->v[keys[i].site];
		struct an_leak *l;

		if (leak_key_starts(keys, i)) {
			if (n && !out->v[n - 1].kept_blocks)
				n--;   /* the previous path kept nothing */
			l = &out->v[n++];
			memset(l, 0, sizeof(*l));
			l->stack = s->stack;
			l->skip = s->skip;
			l->npath = keys[i].n;
			l->cut = keys[i].cut;
		}
		l = &out->v[n - 1];
		if (!l->kept_blocks && s->allocs > s->frees) {
			l->stack = s->stack;   /* name the path after a stack that leaks */
			l->skip = s->skip;
		}
		l->kept_blocks += s->allocs - s->frees;
		l->kept_bytes += s->bytes - s->bytes_freed;
		l->allocs += s->allocs;
		l->frees += s->frees;
		l->bytes += s->bytes;
		out->kept_blocks += s->allocs - s->frees;
		out->kept_bytes += s->bytes - s->bytes_freed;
	}
	if (n && !out->v[n - 1].kept_blocks)
		n--;
	out->n = n;
	qsort(out->v, out->n, sizeof(*out->v), leak_cmp);
	rc = 0;
out:
	free(keys);
	free(karr);
	an_fnmap_release(&fm);
	if (rc < 0)
		an_leaks_release(out);
	return rc;
}

void an_leaks_release(struct an_leaks *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- temporary allocations ---- */

static int temp_cmp(const void *pa, const void *pb)
{
	const struct an_temp *a = pa, *b = pb;

	if (a->temp != b->temp)
		return a->temp < b->temp ? 1 : -1;
	if (a->allocs != b->allocs)
		return a->allocs < b->allocs ? 1 : -1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

int an_temps_build(const struct an_input *in, const struct an_usage *u, struct an_temps *out)
{
	struct an_fnmap fm = { .sites = 1 };
	struct leak_key *keys = NULL;
	uint64_t *karr = NULL;
	size_t n = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	/* every site's whole path, as the leak table's with call sites; sites
	 * without temporaries too: one of a stack that has some counts its
	 * allocations there (two return addresses on one line, one of them
	 * keeping its blocks) */
	out->v = calloc(u->n + 1, sizeof(*out->v));
	if (!out->v || site_keys(in, u, UINT_MAX, &fm, &keys, &karr) < 0)
		goto out;
	for (size_t i = 0; i < u->n; i++) {
		out->temp += u->v[i].temp;
		out->allocs += u->v[i].allocs;
	}
	/* the allocations of the stacks a full table left out, not the live
	 * blocks that stand for them among the sites */
	out->allocs = out->allocs - u->fallback_blocks + u->unrecorded_allocs;
	out->unrecorded_temp = u->unrecorded_temp;
	out->temp += u->unrecorded_temp;
	for (size_t i = 0; i < u->n; i++) {
		const struct an_site *s = &u->v[keys[i].site];
		struct an_temp *t;

		if (leak_key_starts(keys, i)) {
			if (n && !out->v[n - 1].temp)
				n--;   /* the previous stack had no temporary allocation */
			t = &out->v[n++];
			memset(t, 0, sizeof(*t));
			t->stack = s->stack;
			t->skip = s->skip;
		}
		t = &out->v[n - 1];
		/* the stack's name is that of a site with temporaries, as it was */
		if (s->temp && !t->temp) {
			t->stack = s->stack;
			t->skip = s->skip;
		}
		t->temp += s->temp;
		t->allocs += s->allocs;
		t->bytes += s->bytes;
	}
	if (n && !out->v[n - 1].temp)
		n--;
	out->n = n;
	qsort(out->v, out->n, sizeof(*out->v), temp_cmp);
	rc = 0;
out:
	free(keys);
	free(karr);
	an_fnmap_release(&fm);
	if (rc < 0)
		an_temps_release(out);
	return rc;
}

void an_temps_release(struct an_temps *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- direct allocation table ---- */

static int direct_cmp(const void *pa, const void *pb)
{
	const struct an_direct *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->calls != b->calls)
		return a->calls < b->calls ? 1 : -1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

int an_direct_build(const struct an_input *in, const struct an_usage *u, struct an_directs *out)
{
	struct an_fnmap fm = { 0 };
	struct an_frame fr;
	uint32_t *row = NULL;   /* per function id: row index */
	size_t rowcap = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->v = calloc(u->n + 1, sizeof(*out->v));
	if (!out->v)
		goto out;
	for (size_t i = 0; i < u->n; i++) {
		const struct an_site *s = &u->v[i];
		struct an_direct *d;
		uint32_t id;

		memset(&fr, 0, sizeof(fr));
		if (an_frames_get(in, s->stack, s->skip, &fr, 1) == 0) {
			fr.function = "(no frames)";
		}
		id = an_fnmap_id(&fm, &fr, s->stack, 0);
		if (id == UINT32_MAX)
			goto out;
		if (id >= rowcap) {
			size_t cap = rowcap ? rowcap * 2 : 256;
			uint32_t *r;

			while (cap <= id)
				cap *= 2;
			r = realloc(row, cap * sizeof(*r));
			if (!r)
				goto out;
			for (size_t k = rowcap; k < cap; k++)
				r[k] = UINT32_MAX;
			row = r;
			rowcap = cap;
		}
		if (row[id] == UINT32_MAX) {
			row[id] = (uint32_t)out->n;
			out->v[out->n].stack = s->stack;
			out->v[out->n].skip = s->skip;
			out->n++;
		}
		d = &out->v[row[id]];
		d->bytes += s->bytes;
		d->kept_bytes += s->bytes - s->bytes_freed;
		d->calls += s->allocs;
		d->frees += s->frees;
		for (unsigned c = 0; c < AN_NCLASSES; c++) {
			d->cls_bytes[c] += s->cls_bytes[c];
			d->cls_kept[c] += s->cls_bytes[c] - s->cls_freed[c];
		}
		out->bytes += s->bytes;
		out->kept_bytes += s->bytes - s->bytes_freed;
		out->calls += s->allocs;
	}
	qsort(out->v, out->n, sizeof(*out->v), direct_cmp);
	rc = 0;
out:
	free(row);
	an_fnmap_release(&fm);
	if (rc < 0)
		an_directs_release(out);
	return rc;
}

void an_directs_release(struct an_directs *d)
{
	free(d->v);
	memset(d, 0, sizeof(*d));
}
