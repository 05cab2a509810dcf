/* dw_curange.c - find a module's CU by address when libdw cannot. libdw (0.188)
 * looks a CU up by address only through .debug_aranges, which clang does not
 * emit by default (nor gcc with -gno-aranges): every address of such a module
 * then had no CU, so no line and no inline chain, only symbol-table names. This
 * table holds every CU's own ranges (DW_AT_low_pc/high_pc or DW_AT_ranges, as
 * libdw reads them), built once per module on the first address libdw misses.
 */
#include <stdlib.h>

#include "dw_priv.h"

struct dw_curange {
	uint64_t lo, hi;       /* [lo, hi) in DWARF addresses */
	Dwarf_Die *cu;         /* libdwfl's CU DIE, valid as long as the module */
};

static int dw_curange_cmp(const void *a, const void *b)
{
	const struct dw_curange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Fill t from the module's CUs. Returns 0, or -1 when out of memory. */
static int dw_cutable_build(struct dw_cutable *t, Dwfl_Module *mod)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t cap = 0;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (t->n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct dw_curange *r = realloc(t->r, ncap * sizeof *r);

				if (!r)
					return -1;
				t->r = r;
				cap = ncap;
			}
			t->r[t->n].lo = lo;
			t->r[t->n].hi = hi;
			t->r[t->n].cu = cu;
			t->n++;
		}
	}
	if (t->n)
		qsort(t->r, t->n, sizeof *t->r, dw_curange_cmp);
	return 0;
}

Dwarf_Die *dw_cutable_find(struct dw_cutable *t, Dwfl_Module *mod, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!t->state)
		t->state = dw_cutable_build(t, mod) == 0 ? 1 : -1;
	if (t->state < 0)
		return NULL;
	/* the last range starting at or before pc */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of different CUs may nest (rare): look back a little */
	for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
		if (pc >= t->r[i].lo && pc < t->r[i].hi)
			return t->r[i].cu;
	return NULL;
}

int dw_cutable_range(struct dw_cutable *t, Dwfl_Module *mod, size_t i, uint64_t *lo, uint64_t *hi,
		     Dwarf_Die **cu)
{
	if (!t->state)
		t->state = dw_cutable_build(t, mod) == 0 ? 1 : -1;
	if (t->state < 0)
		return -1;
	if (i >= t->n)
		return 0;
	*lo = t->r[i].lo;
	*hi = t->r[i].hi;
	*cu = t->r[i].cu;
	return 1;
}

void dw_cutable_release(struct dw_cutable *t)
{
	free(t->r);
	t->r = NULL;
	t->n = 0;
	t->state = 0;
}
