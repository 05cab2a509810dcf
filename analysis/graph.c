/* graph.c - mprof's allocation call graph, gprof style: functions linked by the
 * caller/callee pairs of the allocation stacks, recursion through several
 * functions merged into <cycle N> nodes (Tarjan's strongly connected components).
 *
 * Each stack counts once per node and once per edge however often the node or the
 * edge appears on it, so in main -> F -> G -> F -> G -> malloc(10) main, F, G and
 * their cycle are each credited with exactly 10 bytes. Pure; no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "htab.h"
#include "tables_priv.h"

struct edge {
	uint32_t from, to;      /* node ids: functions 0..F-1, cycles F.. */
	uint64_t bytes, calls;
	size_t stamp;           /* last site counted + 1 */
};

struct edge_map {
	struct htab idx;        /* edge numbers by (from, to) */
	struct edge *v;
	size_t n, vcap;
};

static uint64_t edge_hash(uint32_t a, uint32_t b)
{
	return an_mix(((uint64_t)a << 32) | b);
}

/* key: the (from, to) pair as a struct edge */
static int edge_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct edge *e = &((const struct edge_map *)ctx)->v[i], *k = key;

	return e->from == k->from && e->to == k->to;
}

/* Count site 'site' (bytes, allocs) once on the edge a -> b. Returns 0 or -1. */
static int edge_add(struct edge_map *m, uint32_t a, uint32_t b, size_t site,
		    uint64_t bytes, uint64_t allocs)
{
	struct edge key = { .from = a, .to = b }, *e;
	int64_t i;

	struct edge *v = grow_array(m->v, &m->vcap, m->n, sizeof(*v), 1024);

	if (!v)
		return -1;
	m->v = v;
	i = htab_put(&m->idx, edge_hash(a, b), (uint32_t)m->n, edge_eq, m, &key);
	if (i < 0)
		return -1;
	e = &m->v[i];
	if ((size_t)i == m->n) {
		*e = key;
		m->n++;
	}
	if (e->stamp != site + 1) {
		e->stamp = site + 1;
		e->bytes += bytes;
		e->calls += allocs;
	}
	return 0;
}

/* Tarjan's algorithm without recursion over nodes 0..n-1 with edges in CSR form
 * (adj[off[v] .. off[v+1])). Writes each node's component into comp[] and returns
 * the number of components, or -1 when out of memory. */
static long scc(size_t n, const size_t *off, const uint32_t *adj, uint32_t *comp)
{
	uint32_t *index = malloc((n + 1) * sizeof(*index));
	uint32_t *low = malloc((n + 1) * sizeof(*low));
	uint32_t *stack = malloc((n + 1) * sizeof(*stack));
	uint32_t *cs = malloc((n + 1) * sizeof(*cs));      /* call stack: node */
	size_t *ci = malloc((n + 1) * sizeof(*ci));        /* call stack: next edge */
	unsigned char *on = calloc(n + 1, 1);
	uint32_t next = 0, ncomp = 0;
	size_t sp = 0;
	long rc = -1;

	if (!index || !low || !stack || !cs || !ci || !on)
		goto out;
	for (size_t v = 0; v < n; v++)
		index[v] = UINT32_MAX;
	for (size_t root = 0; root < n; root++) {
		size_t depth = 0;

		if (index[root] != UINT32_MAX)
			continue;
		cs[0] = (uint32_t)root;
		ci[0] = off[root];
		index[root] = low[root] = next++;
		stack[sp++] = (uint32_t)root;
		on[root] = 1;
		depth = 1;
		while (depth) {
			uint32_t v = cs[depth - 1];

			if (ci[depth - 1] < off[v + 1]) {
				uint32_t w = adj[ci[depth - 1]++];

				if (index[w] == UINT32_MAX) {
					index[w] = low[w] = next++;
					stack[sp++] = w;
					on[w] = 1;
					cs[depth] = w;
					ci[depth] = off[w];
					depth++;
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			if (low[v] == index[v]) {
				uint32_t w;

				do {
					w = stack[--sp];
					on[w] = 0;
					comp[w] = ncomp;
				} while (w != v);
				ncomp++;
			}
			depth--;
			if (depth && low[v] < low[cs[depth - 1]])
				low[cs[depth - 1]] = low[v];
		}
	}
	rc = ncomp;
out:
	free(index);
	free(low);
	free(stack);
	free(cs);
	free(ci);
	free(on);
	return rc;
}

static int edge_cmp(const void *pa, const void *pb)
{
	const struct an_gedge *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->calls != b->calls)
		return a->calls < b->calls ? 1 : -1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int node_cmp(const void *pa, const void *pb)
{
	const struct an_gnode *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (a->is_cycle != b->is_cycle)
		return a->is_cycle ? -1 : 1;   /* a cycle before its members */
	if (a->outer != b->outer)
		return a->outer < b->outer ? 1 : -1;   /* on a tie, callers before callees */
	if (a->self != b->self)
		return a->self < b->self ? -1 : 1;   /* on a tie, callers before callees */
	return a->index < b->index ? -1 : a->index > b->index;
}

static int list_push(struct an_gedge **v, size_t *n, uint32_t node, uint64_t bytes,
		     uint64_t calls)
{
	struct an_gedge *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	*v = nv;
	nv[*n].node = node;
	nv[*n].bytes = bytes;
	nv[*n].calls = calls;
	(*n)++;
	return 0;
}

int an_graph_build(const struct an_input *in, const struct an_usage *u, struct an_graph *out)
{
	struct an_fnmap fm = { 0 };
	struct an_fbuf fb = { 0 };
	struct edge_map em = { 0 };
	uint32_t *ids = NULL, *comp = NULL, *compsize = NULL, *cyc = NULL, *adj = NULL;
	uint32_t *pos = NULL;
	size_t *site_off = NULL, *off = NULL, *stamp = NULL;
	unsigned char *cut = NULL;   /* per site: an_fbuf_cut */
	size_t nids = 0, idcap = 0, nf, nn;
	uint32_t ncycles = 0;
	long ncomp;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	site_off = malloc((u->n + 1) * sizeof(*site_off));
	cut = calloc(u->n + 1, 1);
	if (!site_off || !cut)
		goto out;
	/* 1. the function ids of every site's frames, allocation site first */
	for (size_t i = 0; i < u->n; i++) {
		size_t k = an_fbuf_site(&fb, in, &u->v[i]);

		if (k == SIZE_MAX)
			goto out;
		site_off[i] = nids;
		cut[i] = (unsigned char)an_fbuf_cut(&fb, k, in, &u->v[i]);
		if (nids + k + 1 > idcap) {
			size_t cap = idcap ? idcap * 2 : 4096;
			uint32_t *v;

			while (cap < nids + k + 1)
				cap *= 2;
			v = realloc(ids, cap * sizeof(*v));
			if (!v)
				goto out;
			ids = v;
			idcap = cap;
		}
		for (size_t f = 0; f < k; f++) {
			uint32_t id = an_fnmap_id(&fm, &fb.v[f], (uint32_t)i, (uint32_t)f);

			if (id == UINT32_MAX)
				goto out;
			ids[nids++] = id;
		}
		if (k == 0) {   /* no frames: one node of its own, as in the direct table */
			struct an_frame none = { 0 };
			uint32_t id;

			none.function = "(no frames)";
			id = an_fnmap_id(&fm, &none, (uint32_t)i, 0);
			if (id == UINT32_MAX)
				goto out;
			ids[nids++] = id;
		}
	}
	site_off[u->n] = nids;
	nf = fm.n;

	/* 2. function edges (caller -> callee), then their components */
	for (size_t i = 0; i < u->n; i++)
		for (size_t k = site_off[i]; k + 1 < site_off[i + 1]; k++)
			if (ids[k + 1] != ids[k] &&
			    edge_add(&em, ids[k + 1], ids[k], i, u->v[i].bytes, u->v[i].allocs) < 0)
				goto out;
	off = calloc(nf + 2, sizeof(*off));
	adj = malloc((em.n + 1) * sizeof(*adj));
	comp = malloc((nf + 1) * sizeof(*comp));
	compsize = calloc(nf + 1, sizeof(*compsize));
	cyc = calloc(nf + 1, sizeof(*cyc));
	if (!off || !adj || !comp || !compsize || !cyc)
		goto out;
	for (size_t e = 0; e < em.n; e++)
		off[em.v[e].from + 1]++;
	for (size_t v = 0; v < nf; v++)
		off[v + 1] += off[v];
	{
		size_t *fill = malloc((nf + 1) * sizeof(*fill));

		if (!fill)
			goto out;
		memcpy(fill, off, (nf + 1) * sizeof(*fill));
		for (size_t e = 0; e < em.n; e++)
			adj[fill[em.v[e].from]++] = em.v[e].to;
		free(fill);
	}
	ncomp = scc(nf, off, adj, comp);
	if (ncomp < 0)
		goto out;
	for (size_t v = 0; v < nf; v++)
		compsize[comp[v]]++;
	/* cycle numbers in order of first appearance, for stable output */
	{
		uint32_t *num = calloc((size_t)ncomp + 1, sizeof(*num));

		if (!num)
			goto out;
		for (size_t v = 0; v < nf; v++) {
			if (compsize[comp[v]] < 2)
				continue;
			if (!num[comp[v]])
				num[comp[v]] = ++ncycles;
			cyc[v] = num[comp[v]];
		}
		free(num);
	}

	/* 3. nodes: functions, then cycles; counts once per site */
	nn = nf + ncycles;
	out->v = calloc(nn + 1, sizeof(*out->v));
	stamp = calloc(nn + 1, sizeof(*stamp));
	if (!out->v || !stamp)
		goto out;
	out->n = nn;
	out->ncycles = ncycles;
	for (size_t v = 0; v < nf; v++) {
		out->v[v].stack = u->v[fm.rep_stack[v]].stack;   /* rep_stack holds a site */
		out->v[v].skip = u->v[fm.rep_stack[v]].skip;
		out->v[v].frame = fm.rep_frame[v];
		out->v[v].cycle = cyc[v];
		out->v[v].index = (uint32_t)v;
	}
	for (uint32_t c = 1; c <= ncycles; c++) {
		struct an_gnode *g = &out->v[nf + c - 1];

		g->is_cycle = 1;
		g->cycle = c;
		g->index = (uint32_t)(nf + c - 1);
	}
	for (size_t v = 0; v < nf; v++) {
		if (cyc[v]) {
			struct an_gnode *g = &out->v[nf + cyc[v] - 1];
			uint32_t *m = realloc(g->members, (g->nmembers + 1) * sizeof(*m));

			if (!m)
				goto out;
			g->members = m;
			m[g->nmembers++] = (uint32_t)v;
		}
	}
	for (size_t i = 0; i < u->n; i++) {
		const struct an_site *s = &u->v[i];
		size_t a = site_off[i], b = site_off[i + 1];

		out->bytes += s->bytes;
		if (a == b)
			continue;
		out->v[ids[a]].self += s->bytes;
		if (cyc[ids[a]])
			out->v[nf + cyc[ids[a]] - 1].self += s->bytes;
		if (cut[i]) {   /* the outermost frame's caller was cut off */
			out->v[ids[b - 1]].cut_bytes += s->bytes;
			out->v[ids[b - 1]].cut_calls += s->allocs;
			if (cyc[ids[b - 1]]) {
				out->v[nf + cyc[ids[b - 1]] - 1].cut_bytes += s->bytes;
				out->v[nf + cyc[ids[b - 1]] - 1].cut_calls += s->allocs;
			}
		}
		for (size_t k = a; k < b; k++) {
			uint32_t v = ids[k];
			uint32_t nodes[2] = { v, cyc[v] ? (uint32_t)(nf + cyc[v] - 1) : UINT32_MAX };

			for (int t = 0; t < 2 && nodes[t] != UINT32_MAX; t++) {
				struct an_gnode *g = &out->v[nodes[t]];

				if (k - a + 1 > g->outer)
					g->outer = (uint32_t)(k - a + 1);

				if (stamp[nodes[t]] != i + 1) {
					stamp[nodes[t]] = i + 1;
					g->total += s->bytes;
					g->calls += s->allocs;
				} else if (t == 0) {
					g->rcalls += s->allocs;
				}
			}
			/* edges into and out of cycles, for the cycles' entries */
			if (k + 1 < b) {
				uint32_t caller = ids[k + 1], callee = v;

				if (cyc[callee] && cyc[callee] != cyc[caller] &&
				    edge_add(&em, caller, (uint32_t)(nf + cyc[callee] - 1), i,
					     s->bytes, s->allocs) < 0)
					goto out;
				if (cyc[caller] && cyc[caller] != cyc[callee] &&
				    edge_add(&em, (uint32_t)(nf + cyc[caller] - 1), callee, i,
					     s->bytes, s->allocs) < 0)
					goto out;
			}
		}
	}

	/* 4. callers and callees: function entries list function edges (their
	 * cycle's included); cycle entries list the edges that cross their border */
	for (size_t e = 0; e < em.n; e++) {
		const struct edge *ed = &em.v[e];

		if (ed->from < nf && ed->to < nf) {
			if (list_push(&out->v[ed->from].callees, &out->v[ed->from].ncallees,
				      ed->to, ed->bytes, ed->calls) < 0 ||
			    list_push(&out->v[ed->to].callers, &out->v[ed->to].ncallers,
				      ed->from, ed->bytes, ed->calls) < 0)
				goto out;
		} else if (ed->to >= nf) {
			if (list_push(&out->v[ed->to].callers, &out->v[ed->to].ncallers,
				      ed->from, ed->bytes, ed->calls) < 0)
				goto out;
		} else {
			if (list_push(&out->v[ed->from].callees, &out->v[ed->from].ncallees,
				      ed->to, ed->bytes, ed->calls) < 0)
				goto out;
		}
	}

	/* 5. order by total, number 1.., and renumber references */
	qsort(out->v, nn, sizeof(*out->v), node_cmp);
	pos = malloc((nn + 1) * sizeof(*pos));
	if (!pos)
		goto out;
	for (size_t i = 0; i < nn; i++)
		pos[out->v[i].index] = (uint32_t)i;
	for (size_t i = 0; i < nn; i++) {
		struct an_gnode *g = &out->v[i];

		g->index = (uint32_t)i + 1;
		for (size_t k = 0; k < g->ncallers; k++)
			g->callers[k].node = pos[g->callers[k].node];
		for (size_t k = 0; k < g->ncallees; k++)
			g->callees[k].node = pos[g->callees[k].node];
		for (size_t k = 0; k < g->nmembers; k++)
			g->members[k] = pos[g->members[k]];
		if (g->ncallers)
			qsort(g->callers, g->ncallers, sizeof(*g->callers), edge_cmp);
		if (g->ncallees)
			qsort(g->callees, g->ncallees, sizeof(*g->callees), edge_cmp);
	}
	rc = 0;
out:
	an_fnmap_release(&fm);
	free(fb.v);
	htab_release(&em.idx);
	free(em.v);
	free(ids);
	free(comp);
	free(compsize);
	free(cyc);
	free(adj);
	free(pos);
	free(site_off);
	free(cut);
	free(off);
	free(stamp);
	if (rc < 0)
		an_graph_release(out);
	return rc;
}

void an_graph_release(struct an_graph *g)
{
	for (size_t i = 0; g->v && i < g->n; i++) {
		free(g->v[i].callers);
		free(g->v[i].callees);
		free(g->v[i].members);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}
