/* report_types.c - --report=types: the live blocks by C++ dynamic type. An
 * object of a class with virtual functions starts with its vtable pointer,
 * which points into the symbol `vtable for T` (_ZTV...) of the most derived
 * class T, past its offset-to-top and typeinfo words; an array made by new[]
 * of such a class with a destructor starts with the element count (the array
 * cookie) and then the first element. So the first words of a block name the
 * class of what was allocated there, exactly, without debug info: what chap
 * does for a core. A block whose first word is no such pointer (a C struct, a
 * string, a class without virtual functions, or an object whose first
 * polymorphic member begins it: it reads as that member's class) is untyped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grow.h"
#include "htab.h"

/* A word already looked up: the type it names (index into names), or -1. */
struct vt_word {
	uint64_t word;
	int32_t type;
};

/* A type's live blocks and bytes. */
struct vt_type {
	const char *name;      /* the session's (demangled) or ours (arrays) */
	int owned;             /* name is ours to free */
	uint64_t blocks, bytes;
};

struct vt_state {
	const struct cli_profile *p;
	struct cli_datasym *ds;
	struct vt_word *words;
	size_t nwords, capwords;
	struct htab index;     /* words by value */
	struct vt_type *types;
	size_t ntypes, captypes;
};

static uint64_t vt_hash(uint64_t w)
{
	w ^= w >> 33;
	w *= 0xff51afd7ed558ccdULL;
	w ^= w >> 33;
	return w;
}

static int vt_word_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct vt_state *s = ctx;

	return s->words[e].word == *(const uint64_t *)key;
}

/* The type named NAME (a copy kept when OWN), added when new. Returns its
 * index, or -1 out of memory. */
static int32_t vt_type_of(struct vt_state *s, const char *name, int own)
{
	for (size_t i = 0; i < s->ntypes; i++)
		if (!strcmp(s->types[i].name, name))
			return (int32_t)i;
	if (s->ntypes >= INT32_MAX)
		return -1;
	struct vt_type *v = grow_array(s->types, &s->captypes, s->ntypes, sizeof(*v), 16);
	char *copy = own ? strdup(name) : NULL;

	if (!v || (own && !copy)) {
		free(copy);
		if (v)
			s->types = v;
		return -1;
	}
	s->types = v;
	v[s->ntypes] = (struct vt_type){ own ? copy : name, own, 0, 0 };
	return (int32_t)s->ntypes++;
}

/* Is word W a vtable pointer of the image's modules? Then its class's type
 * index, else -1 (also when out of memory: *oom set). Looked up once per value. */
static int32_t vt_class(struct vt_state *s, uint64_t w, int *oom)
{
	const struct cp_image *img = s->p->img;
	unsigned ws = img->wsize;
	struct cli_symref r;
	int64_t e;
	int32_t t = -1;

	if (!w || w % ws)
		return -1;
	/* only a file's mapping holds a vtable: most words are not in one (a raw
	 * dump or a core without NT_FILE lists none: every value is looked up) */
	if (img->nfiles && !cp_image_mapping(img, w))
		return -1;
	if (s->nwords >= UINT32_MAX - 1) {
		*oom = 1;
		return -1;
	}
	e = htab_put(&s->index, vt_hash(w), (uint32_t)s->nwords, vt_word_eq, s, &w);
	if (e < 0) {
		*oom = 1;
		return -1;
	}
	if ((size_t)e < s->nwords)
		return s->words[e].type;
	/* a new value: name it */
	if (cli_datasym(s->ds, w, &r) == 0 && r.name && r.offset >= 2ull * ws && r.offset < r.size &&
	    ((!strncmp(r.name, "vtable for ", 11) && r.name[11]) ||
	     (!strncmp(r.name, "_ZTV", 4) && r.name[4]))) {   /* _ZTV: no demangler */
		t = vt_type_of(s, r.name[0] == 'v' ? r.name + 11 : r.name, 0);
		if (t < 0) {
			*oom = 1;
			return -1;
		}
	}
	struct vt_word *v = grow_array(s->words, &s->capwords, s->nwords, sizeof(*v), 256);
	if (!v) {
		*oom = 1;
		return -1;
	}
	s->words = v;
	v[s->nwords++] = (struct vt_word){ w, t };
	return t;
}

/* The class of the array after a cookie of C bytes at the start of block B
 * (the Itanium C++ ABI's: max(sizeof(size_t), alignof(T)) bytes, the element
 * count N in its last word, then N elements of equal size, a multiple of the
 * alignment, each holding at least its vtable pointer), or -1. */
static int32_t vt_cookie(struct vt_state *s, const struct cp_block *b, uint64_t c, int *oom)
{
	const struct cp_image *img = s->p->img;
	unsigned ws = img->wsize;
	uint64_t n, w, esize;

	if (b->size < c + ws || cp_image_read_word(img, b->user + c - ws, &n) < 0 || n == 0 ||
	    (b->size - c) % n)
		return -1;
	esize = (b->size - c) / n;
	if (esize < ws || (c > ws && esize % c) || cp_image_read_word(img, b->user + c, &w) < 0)
		return -1;
	return vt_class(s, w, oom);
}

/* The type of live block B: its first word's class, or for an array cookie
 * (vt_cookie: of 1 word, or padded to an over-aligned class's alignment, up
 * to 256 bytes; before, those arrays were untyped) the class of its elements
 * as "T[]"; -1 when none. */
static int32_t vt_block(struct vt_state *s, const struct cp_block *b, int *oom)
{
	const struct cp_image *img = s->p->img;
	unsigned ws = img->wsize;
	uint64_t w0;
	int32_t t = -1;

	if (b->size < ws || cp_image_read_word(img, b->user, &w0) < 0)
		return -1;
	if ((t = vt_class(s, w0, oom)) >= 0 || *oom)
		return t;
	for (uint64_t c = ws; c <= 256 && t < 0 && !*oom; c *= 2)
		t = vt_cookie(s, b, c, oom);
	if (t < 0)
		return -1;
	{
		char name[1024];

		snprintf(name, sizeof(name), "%s[]", s->types[t].name);
		t = vt_type_of(s, name, 1);
		if (t < 0)
			*oom = 1;
		return t;
	}
}

static int vt_cmp(const void *x, const void *y)
{
	const struct vt_type *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->blocks != b->blocks)
		return a->blocks > b->blocks ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void vt_release(struct vt_state *s)
{
	for (size_t i = 0; i < s->ntypes; i++)
		if (s->types[i].owned)
			free((char *)s->types[i].name);
	free(s->types);
	free(s->words);
	htab_release(&s->index);
	cli_datasym_free(s->ds);
}

/* Drop the types no block has: the element class of an array ("P" of "P[]")
 * is named on the way and was listed with 0 blocks (and counted in ntypes)
 * when no object of it stood alone. */
static void vt_drop_empty(struct vt_state *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->ntypes; i++) {
		if (s->types[i].blocks)
			s->types[n++] = s->types[i];
		else if (s->types[i].owned)
			free((char *)s->types[i].name);
	}
	s->ntypes = n;
}

/* Type every live block of P into S (sorted, largest first); *untyped gets
 * what has no type. Blocks allocated under an --ignore-fn are left out, as
 * from every other report (they were counted before). Returns 0, -1 after
 * printing why. */
static int vt_build(const struct cli_options *o, const struct cli_profile *p, struct vt_state *s,
		    uint64_t *ublocks, uint64_t *ubytes)
{
	struct cp_error err = { 0 };
	signed char *ignored = NULL;   /* per scan stack: 1 left out, 0 kept, -1 not known yet */
	int oom = 0;

	memset(s, 0, sizeof(*s));
	s->p = p;
	*ublocks = *ubytes = 0;
	if (p->filter.nignore_fns && p->scan.nstacks) {
		ignored = malloc(p->scan.nstacks);
		if (!ignored) {
			fputs("mprof-core: out of memory\n", stderr);
			return -1;
		}
		memset(ignored, -1, p->scan.nstacks);
	}
	s->ds = cli_datasym_open(o, p->img, &err);
	if (!s->ds && !o->quiet)
		fprintf(stderr, "mprof-core: %s: no symbols for the types report\n", err.msg);
	for (size_t i = 0; i < p->scan.nblocks && !oom; i++) {
		const struct cp_block *b = &p->scan.blocks[i];
		int32_t t;

		if (b->state != CP_LIVE)
			continue;
		if (ignored && b->stack < p->scan.nstacks) {
			if (ignored[b->stack] < 0)
				ignored[b->stack] = (signed char)an_stack_ignored(&p->in, &p->filter, b->stack);
			if (ignored[b->stack])
				continue;
		}
		t = s->ds ? vt_block(s, b, &oom) : -1;
		if (t < 0) {
			(*ublocks)++;
			*ubytes += b->size;
		} else {
			s->types[t].blocks++;
			s->types[t].bytes += b->size;
		}
	}
	free(ignored);
	if (oom) {
		fputs("mprof-core: out of memory\n", stderr);
		return -1;
	}
	vt_drop_empty(s);
	if (s->ntypes)
		qsort(s->types, s->ntypes, sizeof(*s->types), vt_cmp);
	return 0;
}

int report_types_text(FILE *f, const struct cli_options *o, const struct cli_profile *p)
{
	struct vt_state s;
	uint64_t ub, uby, tb = 0, tby = 0;
	long top = o->top >= 0 ? o->top : 25;
	size_t shown;
	char a[32], b[32], c[32], d[32];

	if (vt_build(o, p, &s, &ub, &uby) < 0) {
		vt_release(&s);
		return -1;
	}
	for (size_t i = 0; i < s.ntypes; i++) {
		tb += s.types[i].blocks;
		tby += s.types[i].bytes;
	}
	fputs("\n== types: live blocks by C++ dynamic type (the vtable pointer at a block's start) ==\n", f);
	fprintf(f, "typed: %s bytes in %s blocks of %zu types; untyped: %s bytes in %s blocks\n",
		fmt_num(a, tby), fmt_num(b, tb), s.ntypes, fmt_num(c, uby), fmt_num(d, ub));
	shown = top > 0 && (size_t)top < s.ntypes ? (size_t)top : s.ntypes;
	if (s.ntypes)
		fprintf(f, "%14s %10s  %s\n", "bytes", "blocks", "type");
	for (size_t i = 0; i < shown; i++)
		fprintf(f, "%14s %10s  %s\n", fmt_num(a, s.types[i].bytes), fmt_num(b, s.types[i].blocks),
			s.types[i].name);
	if (shown < s.ntypes)
		fprintf(f, "... %zu more types (--top 0 shows all)\n", s.ntypes - shown);
	vt_release(&s);
	return 0;
}

int report_types_json(struct json *j, const struct cli_options *o, const struct cli_profile *p)
{
	struct vt_state s;
	uint64_t ub, uby;
	long top = o->top >= 0 ? o->top : 0;
	size_t shown;

	if (vt_build(o, p, &s, &ub, &uby) < 0) {
		vt_release(&s);
		return -1;
	}
	shown = top > 0 && (size_t)top < s.ntypes ? (size_t)top : s.ntypes;
	json_key(j, "types");
	json_obj_begin(j);
	json_key(j, "untyped_blocks");
	json_u64(j, ub);
	json_key(j, "untyped_bytes");
	json_u64(j, uby);
	json_key(j, "ntypes");
	json_u64(j, s.ntypes);
	json_key(j, "types");
	json_arr_begin(j);
	for (size_t i = 0; i < shown; i++) {
		json_obj_begin(j);
		json_key(j, "type");
		json_str(j, s.types[i].name);
		json_key(j, "blocks");
		json_u64(j, s.types[i].blocks);
		json_key(j, "bytes");
		json_u64(j, s.types[i].bytes);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	vt_release(&s);
	return 0;
}

/* ---- one block at a time (--addr) ---- */

struct cli_typer {
	struct vt_state s;
};

struct cli_typer *cli_typer_new(const struct cli_profile *p, struct cli_datasym *ds)
{
	struct cli_typer *t = ds ? calloc(1, sizeof(*t)) : NULL;

	if (t) {
		t->s.p = p;
		t->s.ds = ds;
	}
	return t;
}

const char *cli_typer_block(struct cli_typer *t, const struct cp_block *b)
{
	int oom = 0;
	int32_t k;

	if (!t || b->state != CP_LIVE)
		return NULL;
	k = vt_block(&t->s, b, &oom);
	return k >= 0 ? t->s.types[k].name : NULL;
}

void cli_typer_free(struct cli_typer *t)
{
	if (!t)
		return;
	t->s.ds = NULL;   /* borrowed */
	vt_release(&t->s);
	free(t);
}
