/* tree.c - Massif's allocation tree: kept bytes of every stack merged frame by
 * frame from the allocation site outward, so each node holds everything allocated
 * through one chain of code locations (return address and inline level). Pure; the
 * threshold that folds small entries away is applied by whoever prints it.
 */
#include <stdlib.h>
#include <string.h>

#include "tables_priv.h"

struct tkey {
	uint32_t parent, addr_idx, level, node;   /* node UINT32_MAX: empty */
};

struct tmap {
	struct tkey *v;
	size_t cap, n;
};

static uint64_t tkey_hash(uint32_t parent, uint32_t addr_idx, uint32_t level)
{
	return an_mix(((uint64_t)parent << 32) ^ ((uint64_t)addr_idx << 8) ^ level);
}

static int tmap_grow(struct tmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct tkey *v = malloc(cap * sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < cap; i++)
		v[i].node = UINT32_MAX;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (m->v[i].node == UINT32_MAX)
			continue;
		j = tkey_hash(m->v[i].parent, m->v[i].addr_idx, m->v[i].level) & (cap - 1);
		while (v[j].node != UINT32_MAX)
			j = (j + 1) & (cap - 1);
		v[j] = m->v[i];
	}
	free(m->v);
	m->v = v;
	m->cap = cap;
	return 0;
}

static int tree_push(struct an_tree *t, size_t *cap)
{
	if (t->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct an_tnode *v = realloc(t->v, nc * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		*cap = nc;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	t->n++;
	return 0;
}

/* The child of parent for frame fr (frame 'frame' of 'stack'), made if needed.
 * Returns its index or UINT32_MAX when out of memory. */
static uint32_t child_of(struct an_tree *t, size_t *tcap, struct tmap *m, uint32_t parent,
			 const struct an_frame *fr, const struct an_site *s, uint32_t frame)
{
	size_t j;
	struct an_tnode *p;

	if ((m->n + 1) * 2 > m->cap && tmap_grow(m) < 0)
		return UINT32_MAX;
	j = tkey_hash(parent, fr->addr_idx, fr->level) & (m->cap - 1);
	while (m->v[j].node != UINT32_MAX) {
		const struct tkey *k = &m->v[j];

		if (k->parent == parent && k->addr_idx == fr->addr_idx && k->level == fr->level)
			return k->node;
		j = (j + 1) & (m->cap - 1);
	}
	if (tree_push(t, tcap) < 0)
		return UINT32_MAX;
	t->v[t->n - 1].stack = s->stack;
	t->v[t->n - 1].skip = s->skip;
	t->v[t->n - 1].frame = frame;
	t->v[t->n - 1].parent = parent;
	p = &t->v[parent];
	if (p->nchildren == p->cap) {
		uint32_t nc = p->cap ? p->cap * 2 : 4;
		uint32_t *c = realloc(p->children, nc * sizeof(*c));

		if (!c) {
			t->n--;
			return UINT32_MAX;
		}
		p->children = c;
		p->cap = nc;
	}
	p->children[p->nchildren++] = (uint32_t)(t->n - 1);
	m->v[j].parent = parent;
	m->v[j].addr_idx = fr->addr_idx;
	m->v[j].level = fr->level;
	m->v[j].node = (uint32_t)(t->n - 1);
	m->n++;
	return (uint32_t)(t->n - 1);
}

struct csort {
	uint64_t bytes, blocks;
	uint32_t node;
};

static int child_cmp(const void *pa, const void *pb)
{
	const struct csort *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->blocks != b->blocks)
		return a->blocks < b->blocks ? 1 : -1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* Order every node's children by bytes, largest first. Returns 0 or -1. */
static int tree_sort(struct an_tree *t)
{
	struct csort *tmp = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct an_tnode *p = &t->v[i];

		if (!p->nchildren)
			continue;
		if (p->nchildren > cap) {
			struct csort *v = realloc(tmp, p->nchildren * sizeof(*v));

			if (!v) {
				free(tmp);
				return -1;
			}
			tmp = v;
			cap = p->nchildren;
		}
		for (uint32_t k = 0; k < p->nchildren; k++) {
			tmp[k].node = p->children[k];
			tmp[k].bytes = t->v[p->children[k]].bytes;
			tmp[k].blocks = t->v[p->children[k]].blocks;
		}
		qsort(tmp, p->nchildren, sizeof(*tmp), child_cmp);
		for (uint32_t k = 0; k < p->nchildren; k++)
			p->children[k] = tmp[k].node;
	}
	free(tmp);
	return 0;
}

int an_tree_build(const struct an_input *in, const struct an_usage *u, struct an_tree *out)
{
	struct an_fbuf fb = { 0 };
	struct tmap m = { 0 };
	size_t tcap = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (tree_push(out, &tcap) < 0)
		goto out;
	out->v[0].parent = UINT32_MAX;
	for (size_t i = 0; i < u->n; i++) {
		const struct an_site *s = &u->v[i];
		uint64_t bytes = s->bytes - s->bytes_freed, blocks = s->allocs - s->frees;
		uint32_t node = 0;
		size_t nf;

		if (!blocks)
			continue;
		nf = an_fbuf_site(&fb, in, s);
		if (nf == SIZE_MAX)
			goto out;
		out->v[0].bytes += bytes;
		out->v[0].blocks += blocks;
		for (size_t k = 0; k < nf; k++) {
			node = child_of(out, &tcap, &m, node, &fb.v[k], s, (uint32_t)k);
			if (node == UINT32_MAX)
				goto out;
			out->v[node].bytes += bytes;
			out->v[node].blocks += blocks;
		}
	}
	if (tree_sort(out) < 0)
		goto out;
	rc = 0;
out:
	free(fb.v);
	free(m.v);
	if (rc < 0)
		an_tree_release(out);
	return rc;
}

void an_tree_release(struct an_tree *t)
{
	for (size_t i = 0; t->v && i < t->n; i++)
		free(t->v[i].children);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
