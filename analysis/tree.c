/* tree.c - Massif's allocation tree: kept bytes of every stack merged frame by
 * frame from the allocation site outward, so each node holds everything allocated
 * through one chain of code locations (return address and inline level), and a
 * cut node under the last frame of stacks cut at HEAPANN_DEPTH. Pure; the
 * threshold that folds small entries away is applied by whoever prints it.
 */
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "tables_priv.h"

/* The index of child nodes by (parent, return address, inline level); the key of
 * node i is its parent's index and its frame, kept in keys[i]. */
struct tkey {
	uint32_t parent, addr_idx, level;
};

struct tmap {
	struct htab idx;       /* node numbers */
	struct tkey *keys;     /* keys[node] for every node of the tree */
	size_t cap;            /* of keys */
};

static uint64_t tkey_hash(uint32_t parent, uint32_t addr_idx, uint32_t level)
{
	return an_mix(((uint64_t)parent << 32) ^ ((uint64_t)addr_idx << 8) ^ level);
}

static int tkey_eq(const void *ctx, uint32_t node, const void *key)
{
	const struct tkey *a = &((const struct tmap *)ctx)->keys[node], *b = key;

	return a->parent == b->parent && a->addr_idx == b->addr_idx && a->level == b->level;
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

/* The child of parent for frame fr (frame 'frame' of 'stack'), made if needed;
 * for fr NULL, its cut node (an_tnode.cut). Returns its index or UINT32_MAX when
 * out of memory. */
static uint32_t child_of(struct an_tree *t, size_t *tcap, struct tmap *m, uint32_t parent,
			 const struct an_frame *fr, const struct an_site *s, uint32_t frame)
{
	/* no address index is UINT32_MAX: the cut node's key */
	struct tkey key = { parent, fr ? fr->addr_idx : UINT32_MAX, fr ? fr->level : 0 };
	struct an_tnode *p;
	int64_t i;

	if (t->n >= m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 1024;
		struct tkey *k = realloc(m->keys, nc * sizeof(*k));

		if (!k)
			return UINT32_MAX;
		m->keys = k;
		m->cap = nc;
	}
	/* the new node, if any, is t->n: its key is written before the next probe */
	i = htab_put(&m->idx, tkey_hash(parent, key.addr_idx, key.level), (uint32_t)t->n,
		     tkey_eq, m, &key);
	if (i < 0)
		return UINT32_MAX;
	if ((size_t)i != t->n)
		return (uint32_t)i;
	m->keys[i] = key;
	if (tree_push(t, tcap) < 0)
		return UINT32_MAX;
	t->v[t->n - 1].stack = s->stack;
	t->v[t->n - 1].skip = s->skip;
	t->v[t->n - 1].frame = frame;
	t->v[t->n - 1].parent = parent;
	t->v[t->n - 1].cut = !fr;
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
		/* a stack cut at HEAPANN_DEPTH and not stopped at main: a cut node under
		 * its last frame, so that it is not read as the whole chain */
		if (nf && an_fbuf_cut(&fb, nf, in, s)) {
			node = child_of(out, &tcap, &m, node, NULL, s, (uint32_t)nf);
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
	htab_release(&m.idx);
	free(m.keys);
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
