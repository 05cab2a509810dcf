/* tables_priv.h - helpers shared by tables.c, graph.c and tree.c; not for other
 * modules: function identities (a name, or an address when unnamed) numbered
 * densely, and a scratch buffer of logical frames. */
#ifndef AN_TABLES_PRIV_H
#define AN_TABLES_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "htab.h"
#include "tables.h"

/* Dense numbering of functions. A frame with a name is its name (two addresses
 * in one function are one function); an unnamed frame is its address. With
 * sites set (before the first id), of call sites instead: a named frame is its
 * function, file, line, module and inline flag, as the stacks report clusters
 * frames (two calls on one source line are one site). */
struct an_fnmap {
	int sites;
	struct htab idx;                  /* ids by function identity */
	struct an_fnkey *keys;            /* per id: its name, or its address when unnamed */
	size_t n;                         /* ids given */
	uint32_t *rep_stack, *rep_frame;  /* per id: a stack and logical frame naming it */
	size_t rep_cap;                   /* of keys, rep_stack and rep_frame */
};

/* The id of fr, which is logical frame 'frame' of cp stack 'stack'. Returns the
 * id (0..n-1), or UINT32_MAX when out of memory. */
uint32_t an_fnmap_id(struct an_fnmap *m, const struct an_frame *fr, uint32_t stack,
		     uint32_t frame);
void an_fnmap_release(struct an_fnmap *m);

/* A growable buffer of logical frames. */
struct an_fbuf {
	struct an_frame *v;
	size_t cap;
};

/* The logical frames of site s after its skip into b->v, up to and including the
 * first frame named "main" (the frames below main are left out, as Massif does).
 * Returns how many, or SIZE_MAX when out of memory. */
size_t an_fbuf_site(struct an_fbuf *b, const struct an_input *in, const struct an_site *s);

/* 1 when the nf frames an_fbuf_site wrote into b for site s end short of the
 * stack's outermost frame: the stack was cut at HEAPANN_DEPTH (cp_stack.cut) and
 * its frames did not stop at main (a cut below main lost nothing the tables and
 * the tree show). 0 otherwise. */
int an_fbuf_cut(const struct an_fbuf *b, size_t nf, const struct an_input *in,
		const struct an_site *s);

/* 64-bit mixer for hash tables. */
static inline uint64_t an_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ULL;
	h ^= h >> 33;
	return h;
}

#endif /* AN_TABLES_PRIV_H */
