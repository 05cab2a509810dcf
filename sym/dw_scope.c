/* dw_scope.c - the per-CU index of code scopes for the libdw symbolizer: one
 * walk of a CU's DIE tree collects every subprogram and inlined subroutine with
 * code, and a sorted array of their ranges then finds the innermost scope of
 * an address in O(log n) plus the walk up through its parents.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "dw_priv.h"
#include "grow.h"

enum { DW_MAX_DEPTH = 512 };

struct dw_walk {
	struct dw_cuidx *c;
	size_t scope_cap, range_cap;
};

static int dw_scope_add(struct dw_walk *w, Dwarf_Die *die, int32_t parent, int inlined)
{
	struct dw_cuidx *c = w->c;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t first = (uint32_t)c->nranges, n = 0;
	uint32_t depth = parent >= 0 ? c->scopes[parent].depth + 1 : 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (c->nranges == w->range_cap) {
			size_t ncap = w->range_cap ? w->range_cap * 2 : 64;
			struct dw_range *p = realloc(c->ranges, ncap * sizeof *p);
			if (!p)
				return -2;
			c->ranges = p;
			w->range_cap = ncap;
		}
		c->ranges[c->nranges++] = (struct dw_range){ lo, hi, (uint32_t)c->nscopes, depth };
		n++;
	}
	if (n == 0)
		return -1;   /* no code: not a scope */
	if (c->nscopes == w->scope_cap) {
		size_t ncap = w->scope_cap ? w->scope_cap * 2 : 32;
		struct dw_scope *p = realloc(c->scopes, ncap * sizeof *p);
		if (!p)
			return -2;
		c->scopes = p;
		w->scope_cap = ncap;
	}
	struct dw_scope *sc = &c->scopes[c->nscopes];
	memset(sc, 0, sizeof *sc);
	sc->die = *die;
	sc->off = dwarf_dieoffset(die);
	sc->have_die = 1;
	sc->parent = parent;
	sc->depth = depth;
	sc->inlined = inlined;
	sc->first_range = first;
	sc->nranges = n;
	return (int)c->nscopes++;
}


static inline int dw_range_cmp(const struct dw_range *x, const struct dw_range *y)
{
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi);
}

/* Room for one more element in the array *P of N elements of ELSZ bytes whose
 * capacity is *CAP (doubled, from FIRST). Returns 0, or -1 out of memory (*P is
 * unchanged then). */
static int dw_room(void **p, size_t *cap, size_t n, size_t elsz, size_t first)
{
	size_t ncap;
	void *q;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first;
	q = realloc(*p, ncap * elsz);
	if (!q)
		return -1;
	*p = q;
	*cap = ncap;
	return 0;
}

/* Give back the room of the array *p past its n elements of elsz bytes (kept
 * as it is when realloc fails or n is 0). */
static void dw_shrink(void **p, size_t n, size_t elsz)
{
	void *q = n ? realloc(*p, n * elsz) : NULL;
	if (q)
		*p = q;
}

/* dw_cuidx_scan's callbacks: a range of the scope being read, then the scope. */
static int dw_fast_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct dw_walk *w = arg;
	struct dw_cuidx *c = w->c;
	if (dw_room((void **)&c->ranges, &w->range_cap, c->nranges, sizeof(*c->ranges), 64) < 0)
		return -2;
	c->ranges[c->nranges++] = (struct dw_range){ lo, hi, (uint32_t)c->nscopes, 0 };
	return 0;
}

static int dw_fast_scope(void *arg, uint64_t off, int32_t parent, int inlined, int nranges,
			 uint64_t origin, const struct dw_sattrs *x)
{
	struct dw_walk *w = arg;
	struct dw_cuidx *c = w->c;
	if (dw_room((void **)&c->scopes, &w->scope_cap, c->nscopes, sizeof(*c->scopes), 32) < 0)
		return -1;
	uint32_t depth = parent >= 0 ? c->scopes[parent].depth + 1 : 0;
	struct dw_scope *sc = &c->scopes[c->nscopes];
	memset(sc, 0, sizeof *sc);
	sc->off = off;
	sc->origin = origin;
	sc->parent = parent;
	sc->depth = depth;
	sc->inlined = inlined;
	sc->own_name = x->name;
	sc->own_linkage = x->linkage;
	if (x->have_call && x->call_file <= UINT32_MAX && x->call_line <= UINT32_MAX && x->call_col <= UINT32_MAX) {
		sc->have_call = 1;
		sc->has_call_file = x->has_call_file;
		sc->call_file = (uint32_t)x->call_file;
		sc->call_line = (uint32_t)x->call_line;
		sc->call_col = (uint32_t)x->call_col;
	}
	sc->first_range = (uint32_t)(c->nranges - (size_t)nranges);
	sc->nranges = (uint32_t)nranges;
	for (size_t k = sc->first_range; k < c->nranges; k++)
		c->ranges[k].depth = depth;
	return (int)c->nscopes++;
}

/* The header fields dw_cuidx_scan needs, from libdw and the unit's own first
 * bytes. Returns 0, or -1 for a unit it does not read (type units, split units). */
static int dw_unit_get(struct dw_cuidx *c, const struct dw_secs *secs, struct dw_unit *u)
{
	Dwarf_Die cudie;
	Dwarf_Half version;
	Dwarf_Off abbrev_off;
	uint8_t addrsz, offsz, unit_type;
	memset(u, 0, sizeof *u);
	if (!secs->info.data || !c->cu.cu ||
	    !dwarf_cu_die(c->cu.cu, &cudie, &version, &abbrev_off, &addrsz, &offsz, NULL, NULL) ||
	    dwarf_cu_info(c->cu.cu, NULL, &unit_type, NULL, NULL, NULL, NULL, NULL) != 0)
		return -1;
	if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
		return -1;
	if (version < 2 || version > 5 || (offsz != 4 && offsz != 8))
		return -1;
	uint64_t hdr = version >= 5 ? (offsz == 8 ? 24 : 12) : (offsz == 8 ? 23 : 11);
	u->die_off = dwarf_dieoffset(&c->cu);
	if (u->die_off < hdr || u->die_off >= secs->info.size)
		return -1;
	u->unit_start = u->die_off - hdr;
	const unsigned char *p = secs->info.data + u->unit_start;
	uint64_t len = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
	uint64_t lenfield = 4;
	if (offsz == 8) {
		if (len != 0xffffffffu)
			return -1;
		len = 0;
		for (int i = 0; i < 8; i++)
			len |= (uint64_t)p[4 + i] << (8 * i);
		lenfield = 12;
	}
	if (len > secs->info.size - u->unit_start - lenfield)
		return -1;
	unsigned v = (unsigned)p[lenfield] | (unsigned)p[lenfield + 1] << 8;
	if (v != version)
		return -1;
	u->unit_end = u->unit_start + lenfield + len;
	u->abbrev_off = abbrev_off;
	u->version = version;
	u->addrsz = addrsz;
	u->offsz = offsz;
	/* the CU DIE's attributes from its bytes; libdw's lookups read the
	 * unit's whole abbreviation table first (20k instructions a unit) */
	if (dw_unit_cu_read(u, secs, &c->ca) == 0) {
		c->ca_ok = 1;
		c->u = *u;
		/* dwarf_srclang's answer, for dw_die_is_cxx */
		c->is_cxx = c->ca.lang == DW_LANG_C_plus_plus || c->ca.lang == DW_LANG_C_plus_plus_03 ||
			    c->ca.lang == DW_LANG_C_plus_plus_11 || c->ca.lang == DW_LANG_C_plus_plus_14;
		return 0;
	}
	c->ca_ok = 0;
	/* the base address of ranges, as libdw finds it */
	Dwarf_Addr base;
	Dwarf_Attribute attr;
	if (dwarf_lowpc(&c->cu, &base) != 0 &&
	    dwarf_formaddr(dwarf_attr(&c->cu, DW_AT_entry_pc, &attr), &base) != 0)
		base = 0;
	u->base = base;
	Dwarf_Word w;
	if ((dwarf_attr(&c->cu, DW_AT_addr_base, &attr) || dwarf_attr(&c->cu, DW_AT_GNU_addr_base, &attr)) &&
	    dwarf_formudata(&attr, &w) == 0) {
		u->addr_base = w;
		u->has_addr_base = 1;
	}
	if (dwarf_attr(&c->cu, DW_AT_rnglists_base, &attr) && dwarf_formudata(&attr, &w) == 0) {
		u->rnglists_base = w;
		u->has_rnglists_base = 1;
	}
	return 0;
}

/* Sort the n ranges of src by dw_range_cmp's order, src left as it is, with
 * a and b as room for n each: a natural merge sort, because the walk yields
 * long runs already in order (functions in address order, their inlined
 * ranges after them) and qsort's callback per comparison was most of the
 * cost. Each pass merges pairs of runs from one buffer into the other (no
 * copy back). Returns a or b, whichever holds the result. */
static struct dw_range *dw_ranges_sort(const struct dw_range *src, struct dw_range *a, struct dw_range *b,
				       size_t n)
{
	struct dw_range *dst = a;
	if (n <= 1) {
		memcpy(a, src, n * sizeof *a);
		return a;
	}
	for (;;) {
		size_t runs = 0, i = 0, w = 0;
		while (i < n) {
			size_t m = i + 1;   /* first run [i, m) */
			while (m < n && dw_range_cmp(&src[m - 1], &src[m]) <= 0)
				m++;
			size_t e = m;       /* second run [m, e) */
			if (e < n) {
				e++;
				while (e < n && dw_range_cmp(&src[e - 1], &src[e]) <= 0)
					e++;
			}
			size_t x = i, y = m;
			while (x < m && y < e)
				dst[w++] = dw_range_cmp(&src[y], &src[x]) < 0 ? src[y++] : src[x++];
			while (x < m)
				dst[w++] = src[x++];
			while (y < e)
				dst[w++] = src[y++];
			runs++;
			i = e;
		}
		if (runs == 1)
			return dst;
		src = dst;
		dst = dst == a ? b : a;
	}
}

/* The same order as dw_ranges_sort by a radix sort of lo (11 bits a pass,
 * stable), then equal lo put in order by depth and hi (stable insertion): the
 * merge sort took about 10 passes a unit, as inlined ranges follow the source
 * rather than the addresses. The result is the one stable order, so equal to
 * the merge sort's. Returns a or b, whichever holds it, or NULL when the
 * addresses span 4 GiB or more or DW_RADIX_RUN_MAX ranges share one lo (the
 * caller then merges from SRC, which is left as it was). */
/* the longest run of ranges with one lo that dw_ranges_radix orders by
 * insertion; a longer one is left to the merge sort */
#define DW_RADIX_RUN_MAX 64

static struct dw_range *dw_ranges_radix(const struct dw_range *src, struct dw_range *a, struct dw_range *b,
					size_t n)
{
	enum { BITS = 11, SLOTS = 1 << BITS };
	uint64_t min = UINT64_MAX, max = 0;
	for (size_t i = 0; i < n; i++) {
		if (src[i].lo < min)
			min = src[i].lo;
		if (src[i].lo > max)
			max = src[i].lo;
	}
	uint64_t span = n ? max - min : 0;
	if (span >> 32)
		return NULL;
	unsigned bits = 0;
	while (span >> bits)
		bits++;
	unsigned passes = bits ? (bits + BITS - 1) / BITS : 1;
	const struct dw_range *in = src;
	struct dw_range *out = a;
	for (unsigned p = 0; p < passes; p++) {
		uint32_t pos[SLOTS] = { 0 };
		unsigned shift = p * BITS;
		for (size_t i = 0; i < n; i++)
			pos[((in[i].lo - min) >> shift) & (SLOTS - 1)]++;
		uint32_t at = 0;
		for (size_t k = 0; k < SLOTS; k++) {
			uint32_t cnt = pos[k];
			pos[k] = at;
			at += cnt;
		}
		for (size_t i = 0; i < n; i++)
			out[pos[((in[i].lo - min) >> shift) & (SLOTS - 1)]++] = in[i];
		in = out;
		out = out == a ? b : a;
	}
	struct dw_range *r = (struct dw_range *)in;
	size_t run = 0; /* start of the current run of equal lo */
	for (size_t i = 1; i < n; i++) {
		if (r[i].lo != r[i - 1].lo) {
			run = i;
			continue;
		}
		/* a long run of one lo (functions --gc-sections left at 0, or a
		 * crafted unit) would make the insertion sort quadratic: merge */
		if (i - run >= DW_RADIX_RUN_MAX)
			return NULL;
		if (dw_range_cmp(&r[i - 1], &r[i]) <= 0)
			continue;
		struct dw_range x = r[i];
		size_t j = i;
		while (j > 0 && r[j - 1].lo == x.lo && dw_range_cmp(&x, &r[j - 1]) < 0) {
			r[j] = r[j - 1];
			j--;
		}
		r[j] = x;
	}
	return r;
}

struct dw_range *dw_ranges_order(const struct dw_range *src, struct dw_range *a, struct dw_range *b,
				 size_t n, int *radix)
{
	/* the radix sort's passes cost 2048 slots each: for small units
	 * (most of libc's) the merge sort is cheaper */
	struct dw_range *r = n >= 1024 && n <= UINT32_MAX ? dw_ranges_radix(src, a, b, n) : NULL;
	if (radix)
		*radix = r != NULL;
	return r ? r : dw_ranges_sort(src, a, b, n);
}

static int dw_cuidx_sort(struct dw_cuidx *c)
{
	if (c->nranges) {
		struct dw_range *a = malloc(c->nranges * sizeof *a);
		struct dw_range *b = malloc(c->nranges * sizeof *b);
		if (!a || !b) {
			free(a);
			free(b);
			return -1;
		}
		c->sorted = dw_ranges_order(c->ranges, a, b, c->nranges, NULL);
		free(c->sorted == a ? b : a);
	}
	return 0;
}

/* the most scopes and ranges sized in advance for one unit (the rest grow) */
#define DW_GUESS_MAX ((size_t)1 << 18)

/* Build c's index from the section bytes. Returns 0, or -1 with c left empty. */
int dw_cuidx_decode(struct dw_cuidx *c, const struct dw_secs *secs, const struct dw_unit *unit)
{
	struct dw_unit u = *unit;
	struct dw_walk w = { c, 0, 0 };
	{
		/* room for the scopes and ranges of a unit this size, once: growing
		 * from 32 by doubling copied each array about 7 times (10.7M of
		 * realloc at 10k addresses of the generated program, whose units
		 * hold a scope and a range per 92 bytes of DIEs). What is left over
		 * is given back below. */
		/* the unit's length is the file's claim: capped, and when the
		 * guess cannot be had the arrays grow from nothing as before */
		uint64_t len = u.unit_end - u.unit_start;
		size_t guess = (size_t)(len / 64 < DW_GUESS_MAX ? len / 64 : DW_GUESS_MAX) + 32;
		c->scopes = malloc(guess * sizeof *c->scopes);
		c->ranges = malloc(guess * sizeof *c->ranges);
		if (c->scopes && c->ranges) {
			w.scope_cap = w.range_cap = guess;
		} else {
			free(c->scopes);
			free(c->ranges);
			c->scopes = NULL;
			c->ranges = NULL;
		}
	}
	if (dw_cuidx_scan(&u, secs, dw_fast_scope, dw_fast_range, &w) == 0 &&
	    dw_cuidx_sort(c) == 0) {
		dw_shrink((void **)&c->scopes, c->nscopes, sizeof *c->scopes);
		dw_shrink((void **)&c->ranges, c->nranges, sizeof *c->ranges);
		return 0;
	}
	free(c->scopes);
	free(c->ranges);
	free(c->sorted);
	c->scopes = NULL;
	c->ranges = c->sorted = NULL;
	c->nscopes = c->nranges = 0;
	return -1;
}

static int dw_cuidx_build_fast(struct dw_cuidx *c, const struct dw_secs *secs)
{
	struct dw_unit u;
	return dw_unit_get(c, secs, &u) == 0 ? dw_cuidx_decode(c, secs, &u) : -1;
}

int dw_cuidx_unit(struct dw_cuidx *c, const struct dw_secs *secs, struct dw_unit *u)
{
	return dw_unit_get(c, secs, u);
}

static int dw_cuidx_build(struct dw_cuidx *c)
{
	struct dw_walk w = { c, 0, 0 };
	struct dw_level {
		Dwarf_Die die;
		int32_t parent;
	} *stack = malloc(DW_MAX_DEPTH * sizeof *stack);
	int top = 0, rc = -1;
	if (!stack)
		return -1;
	if (dwarf_child(dw_cuidx_top(c), &stack[0].die) != 0) {
		rc = 0;
		goto out;
	}
	stack[0].parent = -1;
	for (;;) {
		Dwarf_Die *die = &stack[top].die;
		int tag = dwarf_tag(die);
		int32_t me = stack[top].parent;
		int descend = dw_tag_descend(tag);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			int r = dw_scope_add(&w, die, me, tag == DW_TAG_inlined_subroutine);
			if (r == -2)
				goto out;
			if (r >= 0)
				me = r;
			else if (tag == DW_TAG_subprogram)
				descend = 0;  /* declarations and abstract instances hold no code */
		}
		Dwarf_Die child;
		if (descend && top + 1 < DW_MAX_DEPTH && dwarf_child(die, &child) == 0) {
			top++;
			stack[top].die = child;
			stack[top].parent = me;
			continue;
		}
		while (top >= 0) {
			Dwarf_Die next;
			if (dwarf_siblingof(&stack[top].die, &next) == 0) {
				stack[top].die = next;
				break;
			}
			top--;
		}
		if (top < 0)
			break;
	}
	if (dw_cuidx_sort(c) < 0)
		goto out;
	rc = 0;
out:
	free(stack);
	return rc;
}

static int dw_scope_holds(const struct dw_cuidx *c, int32_t i, uint64_t pc)
{
	const struct dw_scope *sc = &c->scopes[i];
	for (uint32_t k = 0; k < sc->nranges; k++) {
		const struct dw_range *r = &c->ranges[sc->first_range + k];
		if (pc >= r->lo && pc < r->hi)
			return 1;
	}
	return 0;
}

int32_t dw_cuidx_find(const struct dw_cuidx *c, uint64_t pc)
{
	size_t lo = 0, hi = c->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->sorted[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	/* Ranges of one CU nest (a scope's ranges lie inside its parent's), so
	 * the innermost scope holding pc is the last range starting at or before
	 * pc, or one of that range's parents. Ties at equal lo sort inner last. */
	const struct dw_range *r = &c->sorted[lo - 1];
	if (pc < r->hi)
		return (int32_t)r->scope;
	for (int32_t i = c->scopes[r->scope].parent; i >= 0; i = c->scopes[i].parent)
		if (dw_scope_holds(c, i, pc))
			return i;
	/* not nested after all (unusual DWARF): look at every earlier range */
	for (size_t k = lo - 1; k-- > 0;) {
		const struct dw_range *q = &c->sorted[k];
		if (pc >= q->lo && pc < q->hi)
			return (int32_t)q->scope;
	}
	return -1;
}

static void dw_cuidx_free(struct dw_cuidx *c)
{
	if (!c)
		return;
	free(c->scopes);
	free(c->ranges);
	free(c->sorted);
	dw_lines_release(&c->lines);
	free(c);
}

/* The table probes from the low bits: the multiply's high half is folded in. */
static uint64_t dw_off_hash(Dwarf_Off off)
{
	uint64_t h = off * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

static int dw_cutab_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const struct dw_cutab *)ctx)->v[i]->off == *(const Dwarf_Off *)key;
}

Dwarf_Die *dw_cuidx_top(struct dw_cuidx *c)
{
	return c->has_sub ? &c->sub : &c->cu;
}

/* Set c->sub when c's unit is a skeleton whose split unit libdw found (a .dwo
 * file; libdw 0.188 reads no .dwp package): without it a skeleton has no scopes,
 * and its frames would be named from the symbol table without inlines. */
static void dw_cuidx_split(struct dw_cuidx *c)
{
	uint8_t unit_type;
	Dwarf_Die sub;
	memset(&sub, 0, sizeof sub);
	if (c->cu.cu && dwarf_cu_info(c->cu.cu, NULL, &unit_type, NULL, &sub, NULL, NULL, NULL) == 0 &&
	    unit_type == DW_UT_skeleton && sub.cu) {
		c->sub = sub;
		c->has_sub = 1;
	}
}

Dwarf_Die *dw_cuidx_die(struct dw_cuidx *c, int32_t i)
{
	struct dw_scope *sc = &c->scopes[i];
	if (!sc->have_die) {
		Dwarf *dbg = dwarf_cu_getdwarf(dw_cuidx_top(c)->cu);
		if (!dbg || !dwarf_offdie(dbg, sc->off, &sc->die))
			return NULL;
		sc->have_die = 1;
	}
	return &sc->die;
}

struct dw_cuidx *dw_cutab_get(struct dw_cutab *t, Dwarf_Die *cu, const struct dw_secs *secs)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	int64_t i = htab_find(&t->idx, dw_off_hash(off), dw_cutab_eq, t, &off);
	if (i >= 0)
		return t->v[i];
	struct dw_cuidx **v = grow_array(t->v, &t->cap, t->count, sizeof *v, 64);
	if (!v)
		return NULL;
	t->v = v;
	struct dw_cuidx *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->off = off;
	c->is_cxx = -1;
	c->cu = *cu;
	dw_cuidx_split(c);
	if ((!secs || dw_cuidx_build_fast(c, secs) < 0) && dw_cuidx_build(c) < 0) {
		dw_cuidx_free(c);
		return NULL;
	}
	if (htab_add(&t->idx, dw_off_hash(off), (uint32_t)t->count) < 0) {
		dw_cuidx_free(c);
		return NULL;
	}
	t->v[t->count++] = c;
	return c;
}

struct dw_cuidx *dw_cutab_find(struct dw_cutab *t, Dwarf_Off off)
{
	int64_t i = htab_find(&t->idx, dw_off_hash(off), dw_cutab_eq, t, &off);
	return i >= 0 ? t->v[i] : NULL;
}

struct dw_cuidx *dw_cuidx_new(Dwarf_Die *cu)
{
	struct dw_cuidx *c = calloc(1, sizeof *c);
	if (c) {
		c->off = dwarf_dieoffset(cu);
		c->is_cxx = -1;
		c->cu = *cu;
		dw_cuidx_split(c);
	}
	return c;
}

int dw_cuidx_build_libdw(struct dw_cuidx *c)
{
	return dw_cuidx_build(c);
}

void dw_cuidx_discard(struct dw_cuidx *c)
{
	dw_cuidx_free(c);
}

int dw_cutab_insert(struct dw_cutab *t, struct dw_cuidx *c)
{
	struct dw_cuidx **v = grow_array(t->v, &t->cap, t->count, sizeof *v, 64);
	if (!v)
		return -1;
	t->v = v;
	if (htab_add(&t->idx, dw_off_hash(c->off), (uint32_t)t->count) < 0)
		return -1;
	t->v[t->count++] = c;
	return 0;
}

void dw_cutab_release(struct dw_cutab *t)
{
	for (size_t i = 0; i < t->count; i++)
		dw_cuidx_free(t->v[i]);
	htab_release(&t->idx);
	free(t->v);
	memset(t, 0, sizeof *t);
}
