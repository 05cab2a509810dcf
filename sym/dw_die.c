/* dw_die.c - build a CU's scope index (dw_scope.c) straight from the bytes of
 * .debug_info and .debug_abbrev: one pass over the CU's DIEs with the
 * abbreviations decoded once, skipping attributes by their form, reading only
 * low_pc, high_pc, ranges and sibling. libdw's dwarf_siblingof, dwarf_attr and
 * dwarf_ranges did the same walk with a lookup per attribute and were 38% of a
 * symbolization run. The walk visits the DIEs in the order and with the rules of
 * dw_scope.c's libdw walk (same descent, same depth limit, same sibling jumps),
 * so the index is the same; the DIEs of the scopes found are handed to libdw
 * later by offset. The bytes are not trusted: any read out of bounds, unknown
 * form or odd structure makes dw_cuidx_scan fail, and the caller then builds
 * the index with libdw as before.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "dw_priv.h"

enum { DW_MAX_DEPTH = 512, DW_MAX_CODE = 1 << 16 };

/* One attribute specification of an abbreviation. */
struct dw_aspec {
	uint32_t name, form;
	int64_t implicit;     /* DW_FORM_implicit_const's value */
	int32_t skip;         /* bytes to skip when the value is not needed, -1: decode */
	int32_t run;          /* skip >= 0: bytes of this and the skipped specs right after it */
	uint32_t nrun;        /* skip >= 0: how many specs run covers (this one included) */
	int32_t size;         /* the value's size when fixed and 1 to 8 bytes (read by one load), else -1 */
	int plain;            /* an attribute dw_rdie_read does not look at (its value only skipped) */
};

/* The size of a value of form in unit u when it is fixed, else -1. */
static int32_t dw_form_size(const struct dw_unit *u, uint32_t form)
{
	switch (form) {
	case DW_FORM_addr: return (int32_t)u->addrsz;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2: return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3: return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8: return 8;
	case DW_FORM_data16: return 16;
	case DW_FORM_flag_present: case DW_FORM_implicit_const: return 0;
	case DW_FORM_ref_addr: return (int32_t)(u->version == 2 ? u->addrsz : u->offsz);
	case DW_FORM_sec_offset: case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
		return (int32_t)u->offsz;
	default:
		return -1;
	}
}

struct dw_abbrev {
	uint32_t tag;
	uint32_t children;    /* DW_CHILDREN_yes */
	uint32_t first, n;    /* specs[first .. first+n) */
	int32_t fixed;        /* size of all attributes when none is read and all are fixed, else -1 */
	int32_t sib_at;       /* a DIE that is not a scope and reads only DW_AT_sibling, in a ref1/2/4/8
			       * form, with every attribute of fixed size: the sibling's place among
			       * the attribute bytes, and size their total; else -1 */
	int32_t size;
	uint32_t sib_size;    /* bytes of that DW_AT_sibling */
	int scope;            /* DW_TAG_subprogram or DW_TAG_inlined_subroutine */
};

struct dw_abbrevs {
	struct dw_abbrev *byc;  /* by code; tag 0: no such code */
	size_t ncodes;
	struct dw_aspec *specs;
	size_t nspecs;
};

static inline __attribute__((always_inline)) uint64_t rd_fixed(const unsigned char **p, const unsigned char *end,
								 unsigned n, int *bad)
{
	if (*bad || (size_t)(end - *p) < n) {
		*bad = 1;
		return 0;
	}
	uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the usual sizes by one load each (the files read are little-endian) */
	if (n == 4) {
		uint32_t x;
		memcpy(&x, *p, 4);
		v = x;
	} else if (n == 8) {
		memcpy(&v, *p, 8);
	} else if (n == 1) {
		v = **p;
	} else if (n == 2) {
		uint16_t x;
		memcpy(&x, *p, 2);
		v = x;
	} else
#endif
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	return v;
}

static uint64_t rd_uleb_long(const unsigned char **p, const unsigned char *end, int *bad)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		if (*bad || *p >= end) {
			*bad = 1;
			return 0;
		}
		unsigned char b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static inline __attribute__((always_inline)) uint64_t rd_uleb(const unsigned char **p, const unsigned char *end,
								 int *bad)
{
	if (!*bad && *p < end && **p < 0x80)
		return *(*p)++;   /* one byte: abbreviation codes, most operands */
	return rd_uleb_long(p, end, bad);
}

static int64_t rd_sleb(const unsigned char **p, const unsigned char *end, int *bad)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b;
	do {
		if (*bad || *p >= end) {
			*bad = 1;
			return 0;
		}
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

static void dw_abbrevs_free(struct dw_abbrevs *a)
{
	free(a->byc);
	free(a->specs);
	memset(a, 0, sizeof *a);
}

/* Decode the abbreviation table at off for unit u. Returns 0, or -1. */
static int dw_abbrevs_read(struct dw_abbrevs *a, const struct dw_unit *u, const struct dw_sec *sec,
			   uint64_t off)
{
	size_t spec_cap = 0;
	int bad = 0;
	if (!sec->data || off >= sec->size)
		return -1;
	const unsigned char *p = sec->data + off, *end = sec->data + sec->size;
	for (;;) {
		uint64_t code = rd_uleb(&p, end, &bad);
		if (bad)
			goto fail;
		if (code == 0)
			break;
		if (code >= DW_MAX_CODE)
			goto fail;
		if (code >= a->ncodes) {
			size_t n = a->ncodes ? a->ncodes : 64;
			while (n <= code)
				n *= 2;
			struct dw_abbrev *q = realloc(a->byc, n * sizeof *q);
			if (!q)
				goto fail;
			memset(q + a->ncodes, 0, (n - a->ncodes) * sizeof *q);
			a->byc = q;
			a->ncodes = n;
		}
		struct dw_abbrev *ab = &a->byc[code];
		if (ab->tag)
			goto fail;   /* a code defined twice */
		ab->tag = (uint32_t)rd_uleb(&p, end, &bad);
		ab->children = (uint32_t)rd_fixed(&p, end, 1, &bad) == DW_CHILDREN_yes;
		ab->first = (uint32_t)a->nspecs;
		if (bad || ab->tag == 0)
			goto fail;
		for (;;) {
			uint64_t name = rd_uleb(&p, end, &bad), form = rd_uleb(&p, end, &bad);
			if (bad)
				goto fail;
			if (name == 0 && form == 0)
				break;
			if (a->nspecs == spec_cap) {
				size_t n = spec_cap ? spec_cap * 2 : 256;
				struct dw_aspec *q = realloc(a->specs, n * sizeof *q);
				if (!q)
					goto fail;
				a->specs = q;
				spec_cap = n;
			}
			struct dw_aspec *s = &a->specs[a->nspecs++];
			s->name = (uint32_t)name;
			s->form = (uint32_t)form;
			s->implicit = form == DW_FORM_implicit_const ? rd_sleb(&p, end, &bad) : 0;
			int scope_tag = ab->tag == DW_TAG_subprogram || ab->tag == DW_TAG_inlined_subroutine;
			/* pcs and names matter for scopes only; DW_AT_sibling for every DIE */
			int wanted = name == DW_AT_sibling || (scope_tag && (name == DW_AT_low_pc ||
				name == DW_AT_high_pc || name == DW_AT_ranges || name == DW_AT_abstract_origin ||
				name == DW_AT_name || name == DW_AT_linkage_name || name == DW_AT_MIPS_linkage_name ||
				name == DW_AT_specification || name == DW_AT_call_file || name == DW_AT_call_line ||
				name == DW_AT_call_column));
			s->skip = wanted ? -1 : dw_form_size(u, s->form);
			s->plain = !(name == DW_AT_sibling || name == DW_AT_low_pc || name == DW_AT_high_pc ||
				     name == DW_AT_ranges || name == DW_AT_abstract_origin || name == DW_AT_name ||
				     name == DW_AT_linkage_name || name == DW_AT_MIPS_linkage_name ||
				     name == DW_AT_specification || name == DW_AT_call_file ||
				     name == DW_AT_call_line || name == DW_AT_call_column);
			s->size = dw_form_size(u, s->form);
			if (s->size > 8 || s->size == 0)
				s->size = -1;
		}
		ab->n = (uint32_t)(a->nspecs - ab->first);
		ab->scope = ab->tag == DW_TAG_subprogram || ab->tag == DW_TAG_inlined_subroutine;
		ab->fixed = 0;
		for (uint32_t k = 0; k < ab->n && ab->fixed >= 0; k++)
			ab->fixed = a->specs[ab->first + k].skip < 0 ? -1 : ab->fixed + a->specs[ab->first + k].skip;
		/* the plan of the walk's most common DIE (a member, a call site, a
		 * type with children): nothing but its sibling to read, at a place
		 * known from the abbreviation */
		ab->sib_at = -1;
		ab->size = 0;
		ab->sib_size = 0;
		for (uint32_t k = 0; k < ab->n && !ab->scope && ab->size >= 0; k++) {
			const struct dw_aspec *s = &a->specs[ab->first + k];
			int32_t sz = dw_form_size(u, s->form);
			if (s->name == DW_AT_sibling) {
				if (ab->sib_at >= 0 || (s->form != DW_FORM_ref1 && s->form != DW_FORM_ref2 &&
							 s->form != DW_FORM_ref4 && s->form != DW_FORM_ref8))
					sz = -1;
				else
					ab->sib_at = ab->size, ab->sib_size = (uint32_t)sz;
			} else if (s->skip < 0) {
				sz = -1;
			}
			ab->size = sz < 0 ? -1 : ab->size + sz;
		}
		if (ab->size < 0)
			ab->sib_at = -1;
		/* runs of attributes skipped one after the other, skipped at once */
		for (uint32_t k = ab->n; k-- > 0;) {
			struct dw_aspec *s = &a->specs[ab->first + k];
			int last = k + 1 == ab->n || a->specs[ab->first + k + 1].skip < 0;
			s->run = s->skip < 0 ? -1 : s->skip + (last ? 0 : a->specs[ab->first + k + 1].run);
			s->nrun = s->skip < 0 ? 0 : 1 + (last ? 0 : a->specs[ab->first + k + 1].nrun);
		}
	}
	return 0;
fail:
	dw_abbrevs_free(a);
	return -1;
}

struct dw_walkctx {
	const struct dw_unit *u;
	const struct dw_secs *secs;
	struct dw_abbrevs ab;
	const unsigned char *ustart, *uend;   /* the unit, header included */
};

/* What the walk needs of one DIE. */
struct dw_rdie {
	const struct dw_abbrev *ab;   /* NULL for a null entry */
	const unsigned char *next;    /* just after its attributes */
	uint64_t sibling;             /* unit-relative DW_AT_sibling, 0 if none */
	int has_low, has_high, high_is_const, has_ranges, ranges_is_index;
	uint64_t low, high, ranges;
	int own_name;                 /* has a name or linkage name of its own */
	uint64_t origin;              /* .debug_info offset of DW_AT_abstract_origin, 0 if none */
	const char *name;             /* DW_AT_name's string, NULL if none or not read */
	int other_name;               /* a linkage name, specification or origin, or a name not read */
	const char *linkage;          /* DW_AT_linkage_name's (else DW_AT_MIPS_linkage_name's) string */
	int linkage_bad;              /* a linkage name in a form not read here */
	int linkage_from;             /* 2: linkage from DW_AT_linkage_name, 1: MIPS, 0: none */
	int refs;                     /* has DW_AT_specification or DW_AT_abstract_origin */
	int call_bad;                 /* a DW_AT_call_* in a form not read here */
	int has_call_file;
	uint64_t call_file, call_line, call_col;
};

/* The string of form at p (value v already read), or NULL when this decoder
 * does not read that form or the string is out of bounds. */
static const char *dw_form_string(const struct dw_walkctx *w, uint32_t form, const unsigned char *at, uint64_t v)
{
	const struct dw_sec *sec;
	if (form == DW_FORM_string)
		return (const char *)at;
	if (form == DW_FORM_strp)
		sec = &w->secs->str;
	else if (form == DW_FORM_line_strp)
		sec = &w->secs->line_str;
	else
		return NULL;
	if (!sec->data || v >= sec->size || !memchr(sec->data + v, '\0', sec->size - v))
		return NULL;
	return (const char *)sec->data + v;
}

/* Is form one dwarf_formudata reads as a plain constant? */
static int dw_form_const(uint32_t form)
{
	return form == DW_FORM_data1 || form == DW_FORM_data2 || form == DW_FORM_data4 ||
	       form == DW_FORM_data8 || form == DW_FORM_udata || form == DW_FORM_implicit_const;
}


/* Read a value of form at *p. Returns 0 with *v set (for string forms *v is
 * unused), or -1 on an unknown form or a read past end. Inline: out of line
 * it cost the DIE walk 1% more (the calls). */
static inline __attribute__((always_inline)) int dw_form_read(const struct dw_walkctx *w, uint32_t form,
							    int64_t implicit, const unsigned char **p, uint64_t *v)
{
	const unsigned char *end = w->uend;
	const struct dw_unit *u = w->u;
	int bad = 0;
	uint64_t n;
	*v = 0;
	switch (form) {
	case DW_FORM_addr: *v = rd_fixed(p, end, u->addrsz, &bad); break;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
		*v = rd_fixed(p, end, 1, &bad); break;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		*v = rd_fixed(p, end, 2, &bad); break;
	case DW_FORM_strx3: case DW_FORM_addrx3: *v = rd_fixed(p, end, 3, &bad); break;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
		*v = rd_fixed(p, end, 4, &bad); break;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		*v = rd_fixed(p, end, 8, &bad); break;
	case DW_FORM_data16: rd_fixed(p, end, 8, &bad); rd_fixed(p, end, 8, &bad); break;
	case DW_FORM_sdata: *v = (uint64_t)rd_sleb(p, end, &bad); break;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
		*v = rd_uleb(p, end, &bad); break;
	case DW_FORM_flag_present: *v = 1; break;
	case DW_FORM_implicit_const: *v = (uint64_t)implicit; break;
	case DW_FORM_ref_addr:
		*v = rd_fixed(p, end, u->version == 2 ? u->addrsz : u->offsz, &bad); break;
	case DW_FORM_sec_offset: case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
		*v = rd_fixed(p, end, u->offsz, &bad); break;
	case DW_FORM_string: {
		const unsigned char *z = *p < end ? memchr(*p, '\0', (size_t)(end - *p)) : NULL;
		if (!z)
			return -1;
		*p = z + 1;
		break;
	}
	case DW_FORM_block1: n = rd_fixed(p, end, 1, &bad); goto block;
	case DW_FORM_block2: n = rd_fixed(p, end, 2, &bad); goto block;
	case DW_FORM_block4: n = rd_fixed(p, end, 4, &bad); goto block;
	case DW_FORM_block: case DW_FORM_exprloc: n = rd_uleb(p, end, &bad);
	block:
		if (bad || n > (uint64_t)(end - *p))
			return -1;
		*p += n;
		break;
	default:   /* DW_FORM_indirect and anything newer: leave it to libdw */
		return -1;
	}
	return bad ? -1 : 0;
}

/* Read the DIE at p. Returns 0, or -1. */
static int dw_rdie_read(const struct dw_walkctx *w, const unsigned char *p, struct dw_rdie *d)
{
	int bad = 0;
	uint64_t code = rd_uleb(&p, w->uend, &bad);
	if (bad)
		return -1;
	if (code == 0) {
		d->ab = NULL;
		d->next = p;
		d->sibling = 0;
		return 0;
	}
	if (code >= w->ab.ncodes || !w->ab.byc[code].tag)
		return -1;
	const struct dw_abbrev *ab = &w->ab.byc[code];
	if (!ab->scope) {
		/* the walk reads ab, next and sibling of a DIE that is not a scope:
		 * by the abbreviation's plan when it has one, and the rest of d is
		 * left as it was */
		d->ab = ab;
		d->sibling = 0;
		if (ab->sib_at >= 0) {
			if ((size_t)(w->uend - p) < (size_t)ab->size)
				return -1;
			const unsigned char *q = p + ab->sib_at;
			d->sibling = rd_fixed(&q, w->uend, ab->sib_size, &bad);
			d->next = p + ab->size;
			return 0;
		}
		/* else the attributes below (some of variable size: locations,
		 * inline strings), without clearing the fields the walk does not
		 * look at */
	} else {
		memset(d, 0, sizeof *d);
		d->ab = ab;
	}
	if (ab->fixed >= 0) {
		/* nothing to read: skip the whole DIE (most variables, types, members) */
		if ((size_t)(w->uend - p) < (size_t)ab->fixed)
			return -1;
		d->next = p + ab->fixed;
		return 0;
	}
	for (uint32_t k = 0; k < ab->n; k++) {
		const struct dw_aspec *s = &w->ab.specs[ab->first + k];
		uint64_t v;
		if (s->skip >= 0) {
			if ((size_t)(w->uend - p) < (size_t)s->run)
				return -1;
			p += s->run;
			k += s->nrun - 1;
			continue;
		}
		uint32_t form = s->form;
		const unsigned char *at = p;
		if (s->size > 0) {
			v = rd_fixed(&p, w->uend, (unsigned)s->size, &bad);
			if (bad)
				return -1;
		} else if (form == DW_FORM_exprloc && s->plain) {
			/* a location (variables, parameters, frame bases): skipped
			 * here, the commonest value of variable size */
			uint64_t n = rd_uleb(&p, w->uend, &bad);
			if (bad || n > (uint64_t)(w->uend - p))
				return -1;
			p += n;
			continue;
		} else if (dw_form_read(w, form, s->implicit, &p, &v) < 0) {
			return -1;
		}
		switch (s->name) {
		case DW_AT_sibling:
			if (form == DW_FORM_ref_addr)
				return -1;
			d->sibling = v;
			break;
		case DW_AT_low_pc:
			if (form != DW_FORM_addr && form != DW_FORM_addrx && form != DW_FORM_addrx1 &&
			    form != DW_FORM_addrx2 && form != DW_FORM_addrx3 && form != DW_FORM_addrx4 &&
			    form != DW_FORM_GNU_addr_index)
				return -1;
			if (form != DW_FORM_addr && w->secs && dw_addrx(w->u, w->secs, v, &v) < 0)
				return -1;
			d->has_low = 1;
			d->low = v;
			break;
		case DW_AT_high_pc:
			if (form == DW_FORM_addr) {
				d->high = v;
			} else if (form == DW_FORM_addrx || form == DW_FORM_addrx1 || form == DW_FORM_addrx2 ||
				   form == DW_FORM_addrx3 || form == DW_FORM_addrx4 || form == DW_FORM_GNU_addr_index) {
				if (dw_addrx(w->u, w->secs, v, &v) < 0)
					return -1;
				d->high = v;
			} else if (form == DW_FORM_data1 || form == DW_FORM_data2 || form == DW_FORM_data4 ||
				   form == DW_FORM_data8 || form == DW_FORM_udata) {
				d->high = v;
				d->high_is_const = 1;
			} else {
				return -1;
			}
			d->has_high = 1;
			break;
		case DW_AT_name:
			d->own_name = 1;
			d->name = dw_form_string(w, form, at, v);
			if (!d->name)
				d->other_name = 1;
			break;
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name:
			d->own_name = 1;
			d->other_name = 1;
			/* dw_die_name asks for DW_AT_linkage_name first, and libdw
			 * gives an attribute's first occurrence: the first
			 * DW_AT_linkage_name, else the first MIPS one */
			if (s->name == DW_AT_linkage_name ? d->linkage_from < 2 : d->linkage_from == 0) {
				d->linkage = dw_form_string(w, form, at, v);
				d->linkage_bad = !d->linkage;
				d->linkage_from = s->name == DW_AT_linkage_name ? 2 : 1;
			}
			break;
		case DW_AT_specification:
			d->other_name = 1;
			d->refs = 1;
			break;
		case DW_AT_call_file:
		case DW_AT_call_line:
		case DW_AT_call_column:
			if (!dw_form_const(form))
				d->call_bad = 1;
			else if (s->name == DW_AT_call_file)
				d->call_file = v, d->has_call_file = 1;
			else if (s->name == DW_AT_call_line)
				d->call_line = v;
			else
				d->call_col = v;
			break;
		case DW_AT_abstract_origin:
			d->other_name = 1;
			d->refs = 1;
			if (form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
			    form == DW_FORM_ref8 || form == DW_FORM_ref_udata)
				d->origin = (uint64_t)(w->ustart - w->secs->info.data) + v;
			else if (form == DW_FORM_ref_addr)
				d->origin = v;
			else
				d->own_name = 1;   /* in another file (dwz): no shortcut */
			break;
		case DW_AT_ranges:
			if (form == DW_FORM_rnglistx)
				d->ranges_is_index = 1;
			else if (form != DW_FORM_sec_offset && form != DW_FORM_data4 && form != DW_FORM_data8)
				return -1;
			d->has_ranges = 1;
			d->ranges = v;
			break;
		default:
			break;
		}
	}
	d->next = p;
	return 0;
}

/* Where the next sibling of d (read at p) starts, as dwarf_siblingof finds it:
 * *next NULL when there is none. Returns 0, or -1 on bad DWARF. */
static int dw_rdie_sibling(const struct dw_walkctx *w, const unsigned char *p, const struct dw_rdie *d0,
			   const unsigned char **next)
{
	/* only ab, next and sibling of each DIE: d0 is not copied whole */
	const struct dw_abbrev *ab = d0->ab;
	const unsigned char *dnext = d0->next;
	uint64_t sibling = d0->sibling;
	struct dw_rdie d;
	int level = 0;
	*next = NULL;
	for (;;) {
		const unsigned char *q;
		if (sibling) {
			size_t size = (size_t)(w->uend - w->ustart);
			size_t die_off = (size_t)(p - w->ustart);
			if (sibling >= size || sibling <= die_off)
				return -1;
			q = w->ustart + sibling;
		} else {
			q = dnext;
			if (ab->children)
				level++;
		}
		for (;;) {
			if (q >= w->uend)
				return 0;
			if (*q != 0)
				break;
			if (level-- == 0)
				return 0;
			q++;
		}
		if (level == 0) {
			*next = q;
			return 0;
		}
		p = q;
		if (dw_rdie_read(w, p, &d) < 0 || !d.ab)
			return -1;
		ab = d.ab;
		dnext = d.next;
		sibling = d.sibling;
	}
}


int dw_addrx(const struct dw_unit *u, const struct dw_secs *secs, uint64_t idx, uint64_t *out)
{
	if (!u->has_addr_base || !secs->addr.data || idx > (secs->addr.size / u->addrsz))
		return -1;
	uint64_t off = u->addr_base + idx * u->addrsz;
	if (off > secs->addr.size || secs->addr.size - off < u->addrsz)
		return -1;
	const unsigned char *p = secs->addr.data + off;
	int bad = 0;
	*out = rd_fixed(&p, secs->addr.data + secs->addr.size, u->addrsz, &bad);
	return bad ? -1 : 0;
}

/* The ranges of d into the scope being added, as dwarf_ranges gives them
 * (empty ones dropped as dw_scope.c drops them). Returns the number added,
 * or -1 on bad or unread DWARF, -2 when out of memory. */
static int dw_rdie_ranges(const struct dw_walkctx *w, const struct dw_rdie *d,
			  int (*add)(void *, uint64_t, uint64_t), void *arg)
{
	const struct dw_unit *u = w->u;
	const struct dw_secs *secs = w->secs;
	int n = 0, bad = 0, r;
	if (d->has_low && d->has_high) {
		uint64_t hi = d->high_is_const ? d->low + d->high : d->high;
		if (hi <= d->low)
			return 0;
		r = add(arg, d->low, hi);
		return r < 0 ? r : 1;
	}
	if (!d->has_ranges)
		return 0;
	uint64_t base = u->base;
	uint64_t maxaddr = u->addrsz == 8 ? ~(uint64_t)0 : 0xffffffffu;
	if (u->version < 5) {
		if (d->ranges_is_index || !secs->ranges.data || d->ranges >= secs->ranges.size)
			return -1;
		const unsigned char *p = secs->ranges.data + d->ranges, *end = secs->ranges.data + secs->ranges.size;
		for (;;) {
			uint64_t b = rd_fixed(&p, end, u->addrsz, &bad), e = rd_fixed(&p, end, u->addrsz, &bad);
			if (bad)
				return -1;
			if (b == 0 && e == 0)
				return n;
			if (b == maxaddr) {
				base = e;
				continue;
			}
			if (base + e > base + b) {
				if ((r = add(arg, base + b, base + e)) < 0)
					return r;
				n++;
			}
		}
	}
	uint64_t off = d->ranges;
	if (d->ranges_is_index) {
		if (!u->has_rnglists_base || !secs->rnglists.data)
			return -1;
		uint64_t at = u->rnglists_base + off * u->offsz;
		if (at > secs->rnglists.size || secs->rnglists.size - at < u->offsz)
			return -1;
		const unsigned char *q = secs->rnglists.data + at;
		off = u->rnglists_base + rd_fixed(&q, secs->rnglists.data + secs->rnglists.size, u->offsz, &bad);
	}
	if (!secs->rnglists.data || off >= secs->rnglists.size)
		return -1;
	const unsigned char *p = secs->rnglists.data + off, *end = secs->rnglists.data + secs->rnglists.size;
	for (;;) {
		unsigned kind = (unsigned)rd_fixed(&p, end, 1, &bad);
		uint64_t b = 0, e = 0;
		if (bad)
			return -1;
		switch (kind) {
		case DW_RLE_end_of_list:
			return n;
		case DW_RLE_base_addressx:
			if (dw_addrx(u, secs, rd_uleb(&p, end, &bad), &base) < 0)
				return -1;
			continue;
		case DW_RLE_startx_endx:
			if (dw_addrx(u, secs, rd_uleb(&p, end, &bad), &b) < 0 ||
			    dw_addrx(u, secs, rd_uleb(&p, end, &bad), &e) < 0)
				return -1;
			break;
		case DW_RLE_startx_length:
			if (dw_addrx(u, secs, rd_uleb(&p, end, &bad), &b) < 0)
				return -1;
			e = b + rd_uleb(&p, end, &bad);
			break;
		case DW_RLE_offset_pair:
			b = base + rd_uleb(&p, end, &bad);
			e = base + rd_uleb(&p, end, &bad);
			break;
		case DW_RLE_base_address:
			base = rd_fixed(&p, end, u->addrsz, &bad);
			continue;
		case DW_RLE_start_end:
			b = rd_fixed(&p, end, u->addrsz, &bad);
			e = rd_fixed(&p, end, u->addrsz, &bad);
			break;
		case DW_RLE_start_length:
			b = rd_fixed(&p, end, u->addrsz, &bad);
			e = b + rd_uleb(&p, end, &bad);
			break;
		default:
			return -1;
		}
		if (bad)
			return -1;
		if (e > b) {
			if ((r = add(arg, b, e)) < 0)
				return r;
			n++;
		}
	}
}

/* The linkage name dw_die_name takes for DIE d, when d has one read here and
 * neither a specification nor an origin (libdw's lookup would find it
 * first all the same), else NULL. */
static const char *dw_own_linkage(const struct dw_rdie *d)
{
	return d->linkage && !d->linkage_bad && !d->refs ? d->linkage : NULL;
}

int dw_cuidx_scan(const struct dw_unit *u, const struct dw_secs *secs,
		  int (*scope)(void *, uint64_t, int32_t, int, int, uint64_t, const struct dw_sattrs *),
		  int (*range)(void *, uint64_t, uint64_t), void *arg)
{
	struct dw_walkctx w = { u, secs, {0}, NULL, NULL };
	struct dw_level {
		const unsigned char *p;
		struct dw_rdie d;
		int32_t parent;
	} *stack = NULL;
	int top = 0, rc = -1;
	if (!secs->info.data || !secs->little_endian || u->unit_start >= secs->info.size ||
	    u->unit_end > secs->info.size || u->die_off <= u->unit_start || u->die_off >= u->unit_end ||
	    (u->addrsz != 4 && u->addrsz != 8) || (u->offsz != 4 && u->offsz != 8))
		return -1;
	w.ustart = secs->info.data + u->unit_start;
	w.uend = secs->info.data + u->unit_end;
	if (dw_abbrevs_read(&w.ab, u, &secs->abbrev, u->abbrev_off) < 0)
		return -1;
	stack = malloc(DW_MAX_DEPTH * sizeof *stack);
	if (!stack)
		goto out;
	/* the CU DIE, then its first child */
	struct dw_rdie cu;
	const unsigned char *p = secs->info.data + u->die_off;
	if (dw_rdie_read(&w, p, &cu) < 0 || !cu.ab)
		goto out;
	if (!cu.ab->children || cu.next >= w.uend || *cu.next == 0) {
		rc = 0;
		goto out;
	}
	stack[0].p = cu.next;
	stack[0].parent = -1;
	for (;;) {
		struct dw_level *lv = &stack[top];
		if (dw_rdie_read(&w, lv->p, &lv->d) < 0 || !lv->d.ab)
			goto out;
		uint32_t tag = lv->d.ab->tag;
		int32_t me = lv->parent;
		int descend = dw_tag_descend(tag);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			int nr = dw_rdie_ranges(&w, &lv->d, range, arg);
			if (nr < 0)
				goto out;
			if (nr > 0) {
				struct dw_sattrs x = { lv->d.other_name ? NULL : lv->d.name, !lv->d.call_bad,
						       lv->d.has_call_file, lv->d.call_file, lv->d.call_line, lv->d.call_col,
						       dw_own_linkage(&lv->d) };
				int idx = scope(arg, (uint64_t)(lv->p - secs->info.data), me,
						tag == DW_TAG_inlined_subroutine, nr,
						lv->d.own_name ? 0 : lv->d.origin, &x);
				if (idx < 0)
					goto out;
				me = idx;
			} else if (tag == DW_TAG_subprogram) {
				descend = 0;  /* declarations and abstract instances hold no code */
			}
		}
		if (descend && top + 1 < DW_MAX_DEPTH && lv->d.ab->children && lv->d.next < w.uend &&
		    *lv->d.next != 0) {
			top++;
			stack[top].p = lv->d.next;
			stack[top].parent = me;
			continue;
		}
		while (top >= 0) {
			const unsigned char *next;
			if (dw_rdie_sibling(&w, stack[top].p, &stack[top].d, &next) < 0)
				goto out;
			if (next) {
				stack[top].p = next;
				break;
			}
			top--;
		}
		if (top < 0)
			break;
	}
	rc = 0;
out:
	free(stack);
	dw_abbrevs_free(&w.ab);
	return rc;
}

/* Whether form is one dwarf_formudata gives an offset for (the *_base and
 * stmt_list attributes). */
static int dw_form_offset(uint32_t form)
{
	return form == DW_FORM_sec_offset || form == DW_FORM_data4 || form == DW_FORM_data8;
}

/* The attribute specifications of abbreviation code in unit u's table (the
 * entries before it stepped over, nothing kept), its tag in *tag; NULL when
 * the table has no such code or is damaged as dw_abbrevs sees it up to that
 * code (a code 0 or DW_MAX_CODE and over, a code defined twice, a tag 0):
 * libdw refuses such a table, and the unit is left to it. */
static const unsigned char *dw_abbrev_find(const struct dw_unit *u, const struct dw_secs *secs, uint64_t code,
					   uint64_t *tag)
{
	int bad = 0;
	if (!secs->abbrev.data || u->abbrev_off >= secs->abbrev.size || code >= DW_MAX_CODE)
		return NULL;
	uint64_t seen[DW_MAX_CODE / 64];   /* codes met before the wanted one */
	size_t nseen = 0;                  /* words of seen cleared so far */
	const unsigned char *a = secs->abbrev.data + u->abbrev_off, *aend = secs->abbrev.data + secs->abbrev.size;
	for (;;) {
		uint64_t c = rd_uleb(&a, aend, &bad);
		if (bad || !c || c >= DW_MAX_CODE)
			return NULL;   /* not in the table, or damaged */
		*tag = rd_uleb(&a, aend, &bad);
		rd_fixed(&a, aend, 1, &bad);   /* children */
		if (bad || *tag == 0)
			return NULL;
		size_t w = (size_t)(c / 64);
		if (w >= nseen) {
			memset(seen + nseen, 0, (w + 1 - nseen) * sizeof seen[0]);
			nseen = w + 1;
		}
		if (seen[w] >> (c % 64) & 1)
			return NULL;   /* a code defined twice */
		if (c == code)
			return a;
		seen[w] |= (uint64_t)1 << (c % 64);
		for (;;) {
			uint64_t name = rd_uleb(&a, aend, &bad), form = rd_uleb(&a, aend, &bad);
			if (bad)
				return NULL;
			if (!name && !form)
				break;
			if (form == DW_FORM_implicit_const)
				rd_sleb(&a, aend, &bad);
		}
	}
}

const char *dw_die_origin_name(const struct dw_unit *u, const struct dw_secs *secs, uint64_t off, int *linkage)
{
	struct dw_walkctx w = { u, secs, {0}, NULL, NULL };
	int bad = 0;
	*linkage = 0;
	if (!secs->info.data || !secs->little_endian || u->unit_end > secs->info.size || off <= u->die_off ||
	    off >= u->unit_end)
		return NULL;
	w.ustart = secs->info.data + u->unit_start;
	w.uend = secs->info.data + u->unit_end;
	const unsigned char *p = secs->info.data + off;
	uint64_t code = rd_uleb(&p, w.uend, &bad), tag;
	if (bad || !code)
		return NULL;
	const unsigned char *a = dw_abbrev_find(u, secs, code, &tag), *aend = secs->abbrev.data + secs->abbrev.size;
	if (!a || tag != DW_TAG_subprogram)
		return NULL;
	const char *name = NULL, *link = NULL;
	int name_bad = 0, link_bad = 0, link_from = 0;   /* link_from: 2 DW_AT_linkage_name, 1 MIPS */
	for (;;) {
		uint64_t at_name = rd_uleb(&a, aend, &bad), form = rd_uleb(&a, aend, &bad);
		int64_t implicit = 0;
		if (bad)
			return NULL;
		if (!at_name && !form)
			break;
		if (form == DW_FORM_implicit_const)
			implicit = rd_sleb(&a, aend, &bad);
		if (bad || form > UINT32_MAX)
			return NULL;
		const unsigned char *at = p;
		uint64_t v;
		if (dw_form_read(&w, (uint32_t)form, implicit, &p, &v) < 0)
			return NULL;
		switch (at_name) {
		case DW_AT_name:
			if (!name && !name_bad) {   /* twice: the first, as libdw */
				name = dw_form_string(&w, (uint32_t)form, at, v);
				name_bad = !name;
			}
			break;
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name:
			/* DW_AT_linkage_name first, as dw_die_name asks; of each,
			 * the first, as libdw */
			if (at_name == DW_AT_linkage_name ? link_from < 2 : link_from == 0) {
				link = dw_form_string(&w, (uint32_t)form, at, v);
				link_bad = !link;
				link_from = at_name == DW_AT_linkage_name ? 2 : 1;
			}
			break;
		case DW_AT_specification:
		case DW_AT_abstract_origin:
			return NULL;   /* libdw follows it */
		default:
			break;
		}
	}
	if (link || link_bad) {
		*linkage = !link_bad;
		return link_bad ? NULL : link;
	}
	return name_bad ? NULL : name;
}

int dw_unit_cu_read(struct dw_unit *u, const struct dw_secs *secs, struct dw_cuattrs *ca)
{
	struct dw_walkctx w = { u, secs, {0}, NULL, NULL };
	int bad = 0;
	memset(ca, 0, sizeof *ca);
	ca->lang = -1;
	if (!secs->info.data || !secs->abbrev.data || !secs->little_endian || u->unit_end > secs->info.size ||
	    u->die_off <= u->unit_start || u->die_off >= u->unit_end || u->abbrev_off >= secs->abbrev.size ||
	    (u->addrsz != 4 && u->addrsz != 8) || (u->offsz != 4 && u->offsz != 8))
		return -1;
	w.ustart = secs->info.data + u->unit_start;
	w.uend = secs->info.data + u->unit_end;
	const unsigned char *p = secs->info.data + u->die_off;
	uint64_t code = rd_uleb(&p, w.uend, &bad);
	if (bad || !code)
		return -1;
	/* the CU DIE's abbreviation */
	const unsigned char *aend = secs->abbrev.data + secs->abbrev.size;
	uint64_t tag;
	const unsigned char *a = dw_abbrev_find(u, secs, code, &tag);
	if (!a || (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit))
		return -1;
	/* an attribute twice (a damaged file): the first, as libdw's lookup */
	int has_low = 0, has_entry = 0, has_addr_base = 0, has_gnu_addr_base = 0, comp_dir_seen = 0;
	uint64_t low = 0, entry = 0, addr_base = 0, gnu_addr_base = 0;
	u->has_rnglists_base = 0;
	for (;;) {
		uint64_t name = rd_uleb(&a, aend, &bad), form = rd_uleb(&a, aend, &bad);
		int64_t implicit = 0;
		if (bad)
			return -1;
		if (!name && !form)
			break;
		if (form == DW_FORM_implicit_const)
			implicit = rd_sleb(&a, aend, &bad);
		if (bad || form > UINT32_MAX)
			return -1;
		const unsigned char *at = p;
		uint64_t v;
		if (dw_form_read(&w, (uint32_t)form, implicit, &p, &v) < 0)
			return -1;
		switch (name) {
		case DW_AT_low_pc:
			if (form != DW_FORM_addr)
				return -1;   /* an index into .debug_addr: libdw's rules */
			if (!has_low)
				has_low = 1, low = v;
			break;
		case DW_AT_entry_pc:
			if (form != DW_FORM_addr)
				return -1;
			if (!has_entry)
				has_entry = 1, entry = v;
			break;
		case DW_AT_addr_base:
		case DW_AT_GNU_addr_base:
			if (!dw_form_offset((uint32_t)form))
				return -1;
			if (name == DW_AT_addr_base && !has_addr_base)
				has_addr_base = 1, addr_base = v;
			else if (name == DW_AT_GNU_addr_base && !has_gnu_addr_base)
				has_gnu_addr_base = 1, gnu_addr_base = v;
			break;
		case DW_AT_rnglists_base:
			if (!dw_form_offset((uint32_t)form))
				return -1;
			if (!u->has_rnglists_base)
				u->has_rnglists_base = 1, u->rnglists_base = v;
			break;
		case DW_AT_stmt_list:
			if (!dw_form_offset((uint32_t)form))
				return -1;
			if (!ca->has_stmt_list)
				ca->has_stmt_list = 1, ca->stmt_list = v;
			break;
		case DW_AT_comp_dir:
			if (!comp_dir_seen && !(ca->comp_dir = dw_form_string(&w, (uint32_t)form, at, v)))
				return -1;
			comp_dir_seen = 1;
			break;
		case DW_AT_language:
			if (!dw_form_const((uint32_t)form) || v > INT32_MAX)
				return -1;
			if (ca->lang < 0)
				ca->lang = (int)v;
			break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
		case DW_AT_GNU_dwo_id:
		case DW_AT_dwo_name:
		case DW_AT_GNU_dwo_name:
			return -1;   /* followed or split by libdw: its answers */
		default:
			break;
		}
	}
	u->base = has_low ? low : has_entry ? entry : 0;
	u->has_addr_base = has_addr_base || has_gnu_addr_base;
	u->addr_base = has_addr_base ? addr_base : gnu_addr_base;
	return 0;
}
