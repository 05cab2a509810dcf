/* stacks.c - logical frames of a stack, allocator-frame stripping, and clustering
 * of live blocks by stack.
 *
 * Pure functions over the scan and the symbol table. A cluster is keyed by the
 * named frames left once the allocator's own frames are stripped (see below).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "grow.h"
#include "htab.h"

/* Functions that are part of the allocator whatever the program: Massif's list,
 * plus libc's own callers of malloc that a user never means, and libstdc++'s
 * allocation of a thrown object (a throw expression's own malloc, as operator
 * new is a new expression's). */
static const char *const builtin_alloc_fns[] = {
	"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "free",
	"operator new", "operator new[]", "__builtin_new", "__builtin_vec_new",
	"strdup", "__strdup", "strndup", "__strndup",
	"__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign",
	"__cxa_allocate_exception", "__cxa_allocate_dependent_exception",
	/* Rust: Box::new's allocation (the shims: builtin_rust_shims) */
	"alloc::boxed::box_new_uninit",
};

/* Rust: the global allocator's shims, plain or as the last part of a path:
 * __rustc::__rust_alloc (their symbols), and the crate::_::__rust_alloc of a
 * #[global_allocator] as gdb names it from the DWARF of its expansion (the
 * anonymous const's namespace "_"; at -O0 that frame is the site of every
 * block otherwise). */
static const char *const builtin_rust_shims[] = {
	"__rust_alloc", "__rust_alloc_zeroed", "__rust_realloc", "__rdl_alloc",
	"__rdl_alloc_zeroed", "__rdl_realloc", "__rg_alloc", "__rg_alloc_zeroed", "__rg_realloc",
};

/* Rust's allocation layer, whole paths: every function in them is the allocator,
 * as operator new is C++'s (without them every Rust block's site would read
 * alloc::alloc::alloc, and a Vec's its RawVec). A name matches when it starts
 * with one, after the '<' of an impl ("<alloc::alloc::Global as
 * core::alloc::Allocator>::allocate", "<alloc::raw_vec::RawVecInner>::grow_one"
 * as v0 names read; "alloc::raw_vec::RawVecInner<A>::grow_one" as DWARF's).
 * What the program called stays: alloc::vec::Vec::with_capacity, Box::new. */
static const char *const builtin_alloc_paths[] = {
	"alloc::alloc::", "alloc::raw_vec::", "std::alloc::", "std::sys::alloc::",
	"std::sys::pal::unix::alloc::", "std::sys::unix::alloc::", "__rustc::",
};

/* The methods of any type's GlobalAlloc impl: the program's own
 * #[global_allocator] (a counting wrapper of System) is the allocator as a
 * user-defined operator new is C++'s. rustc inlines it into the __rust_alloc
 * shim and that into the caller, so without this its frame was the site of
 * every block, the layer under it left in the stack. As v0 and legacy names
 * read ("<ga::Counting as core::alloc::global::GlobalAlloc>::alloc") and as
 * DWARF's do ("ga::<impl core::alloc::global::GlobalAlloc for ga::Counting>::
 * alloc"); core::alloc::GlobalAlloc is the path before Rust 1.28. gdb names
 * the impl "ga::{impl#0}::alloc", which tells no trait: --alloc-fn there. */
static const char *const builtin_alloc_impls[] = {
	" as core::alloc::global::GlobalAlloc>::", " as core::alloc::GlobalAlloc>::",
	"<impl core::alloc::global::GlobalAlloc for ", "<impl core::alloc::GlobalAlloc for ",
};

/* 1 when NAME lies in one of builtin_alloc_paths, or is a method of a
 * GlobalAlloc impl (builtin_alloc_impls). */
static int in_alloc_path(const char *name)
{
	if (name[0] == '<')
		name++;
	for (size_t i = 0; i < sizeof(builtin_alloc_paths) / sizeof(builtin_alloc_paths[0]); i++)
		if (!strncmp(name, builtin_alloc_paths[i], strlen(builtin_alloc_paths[i])))
			return 1;
	for (size_t i = 0; i < sizeof(builtin_alloc_impls) / sizeof(builtin_alloc_impls[0]); i++)
		if (strstr(name, builtin_alloc_impls[i]))
			return 1;
	return 0;
}

/* 1 when NAME, or the last part of its path, is one of builtin_rust_shims. */
static int is_rust_shim(const char *name)
{
	const char *tail = name, *p;

	for (p = name; (p = strstr(p, "::")) != NULL; p += 2)
		tail = p + 2;
	for (size_t i = 0; i < sizeof(builtin_rust_shims) / sizeof(builtin_rust_shims[0]); i++)
		if (an_name_matches(tail, builtin_rust_shims[i]))
			return 1;
	return 0;
}

int an_name_matches(const char *name, const char *pattern)
{
	size_t n;

	if (!name || !pattern)
		return 0;
	n = strlen(pattern);
	/* glibc's internal aliases: libdw names libc's strdup __GI___strdup (the
	 * linkage name of its hidden_proto), which is still __strdup */
	if (!strncmp(name, "__GI_", 5) && strncmp(pattern, "__GI_", 5) != 0)
		name += 5;
	if (strncmp(name, pattern, n) != 0)
		return 0;
	/* whole name, or the pattern ends where the parameter list starts */
	return name[n] == '\0' || name[n] == '(';
}

static const struct sym_loc *loc_of(const struct an_input *in, uint32_t addr_idx)
{
	if (!in->sym || addr_idx >= in->sym->nlocs)
		return NULL;
	return &in->sym->locs[addr_idx];
}

/* Logical frames at one address: its inline chain, or one bare frame. */
static uint32_t levels_of(const struct an_input *in, uint32_t addr_idx)
{
	const struct sym_loc *l = loc_of(in, addr_idx);

	return l && l->nframes ? l->nframes : 1;
}

static void frame_fill(const struct an_input *in, uint32_t addr_idx, uint32_t level,
		       struct an_frame *f)
{
	const struct sym_loc *l = loc_of(in, addr_idx);

	memset(f, 0, sizeof(*f));
	f->addr = in->scan->addrs[addr_idx];
	f->addr_idx = addr_idx;
	f->level = level;
	if (!l)
		return;
	f->module = l->module;
	f->modoff = l->modoff;
	if (l->nframes && level < l->nframes && l->first + level < in->sym->nframes) {
		const struct sym_frame *sf = &in->sym->frames[l->first + level];

		f->function = sf->function;
		f->file = sf->file;
		f->line = sf->line;
		f->inlined = sf->inlined;
	}
}

size_t an_frames_count(const struct an_input *in, uint32_t stack)
{
	const struct cp_stack *st = &in->scan->stacks[stack];
	size_t n = 0;

	for (uint32_t i = 0; i < st->depth; i++)
		n += levels_of(in, in->scan->stack_frames[st->first + i]);
	return n;
}

size_t an_frames_get(const struct an_input *in, uint32_t stack, uint32_t skip,
		     struct an_frame *out, size_t cap)
{
	const struct cp_stack *st = &in->scan->stacks[stack];
	size_t k = 0, n = 0;

	for (uint32_t i = 0; i < st->depth; i++) {
		uint32_t a = in->scan->stack_frames[st->first + i];
		uint32_t lv = levels_of(in, a);

		for (uint32_t j = 0; j < lv; j++, k++) {
			if (k < skip)
				continue;
			if (n < cap)
				frame_fill(in, a, j, &out[n]);
			n++;
		}
	}
	return n;
}

size_t an_frames_at(const struct an_input *in, uint32_t addr_idx, struct an_frame *out, size_t cap)
{
	uint32_t lv = levels_of(in, addr_idx), j;

	for (j = 0; j < lv && j < cap; j++)
		frame_fill(in, addr_idx, j, &out[j]);
	return j;
}

static int is_alloc_fn(const struct an_filter *f, const char *name)
{
	if (!name)
		return 0;
	if (in_alloc_path(name) || is_rust_shim(name))
		return 1;
	for (size_t i = 0; i < sizeof(builtin_alloc_fns) / sizeof(builtin_alloc_fns[0]); i++)
		if (an_name_matches(name, builtin_alloc_fns[i]))
			return 1;
	for (size_t i = 0; f && i < f->nalloc_fns; i++)
		if (an_name_matches(name, f->alloc_fns[i]))
			return 1;
	return 0;
}

uint32_t an_alloc_skip(const struct an_input *in, const struct an_filter *f, uint32_t stack)
{
	const struct cp_stack *st = &in->scan->stacks[stack];
	uint32_t k = 0;

	for (uint32_t i = 0; i < st->depth; i++) {
		uint32_t a = in->scan->stack_frames[st->first + i];
		uint32_t lv = levels_of(in, a);

		for (uint32_t j = 0; j < lv; j++, k++) {
			struct an_frame fr;

			frame_fill(in, a, j, &fr);
			if (!is_alloc_fn(f, fr.function))
				return k;
		}
	}
	/* Every frame is the allocator's (HEAPANN_DEPTH=1 under strdup, or an
	 * unwinder that stopped inside libc): keep the outermost, the one entry
	 * point known, rather than show a stack with no frames at all. */
	return k ? k - 1 : 0;
}

int an_stack_ignored(const struct an_input *in, const struct an_filter *f, uint32_t stack)
{
	const struct cp_stack *st = &in->scan->stacks[stack];

	if (!f || !f->nignore_fns)
		return 0;
	for (uint32_t i = 0; i < st->depth; i++) {
		uint32_t a = in->scan->stack_frames[st->first + i];
		uint32_t lv = levels_of(in, a);

		for (uint32_t j = 0; j < lv; j++) {
			struct an_frame fr;

			frame_fill(in, a, j, &fr);
			for (size_t p = 0; p < f->nignore_fns; p++)
				if (an_name_matches(fr.function, f->ignore_fns[p]))
					return 1;
		}
	}
	return 0;
}

/* ---- clustering ---- */

/* A cluster is keyed by what a user reads: the logical frames left after the
 * allocator's, each by function, file, line and module when it has a name, and by
 * address when it has none. Two call sites on one source line (an unrolled loop)
 * are one cluster; raw stacks that differ only inside an --alloc-fn are one too.
 * A cut stack (cp_stack.cut) is never one cluster with a whole one. */

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xCBF29CE484222325ULL;

	if (!s)
		return 0;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
	return h;
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static uint64_t frame_key_hash(const struct an_frame *f)
{
	if (!f->function)
		return mix64(f->addr);
	return mix64(str_hash(f->function) ^ mix64(str_hash(f->file) + f->line) ^
		     (str_hash(f->module) << 1) ^ (uint64_t)f->inlined);
}

static int frame_key_eq(const struct an_frame *a, const struct an_frame *b)
{
	if (!a->function || !b->function)
		return !a->function && !b->function && a->addr == b->addr;
	return a->line == b->line && a->inlined == b->inlined && str_eq(a->function, b->function) &&
	       str_eq(a->file, b->file) && str_eq(a->module, b->module);
}

/* Scratch space for the logical frames of two stacks. */
struct frames_buf {
	struct an_frame *a, *b;
	size_t cap;
};

static uint64_t key_hash(const struct an_input *in, uint32_t stack, uint32_t skip,
			 struct frames_buf *fb)
{
	size_t n = an_frames_get(in, stack, skip, fb->a, fb->cap);
	uint64_t h = mix64(n ^ (uint64_t)in->scan->stacks[stack].cut << 40);

	for (size_t i = 0; i < n && i < fb->cap; i++)
		h = mix64(h ^ frame_key_hash(&fb->a[i]));
	return h;
}

static int key_equal(const struct an_input *in, uint32_t sa, uint32_t ska, uint32_t sb,
		     uint32_t skb, struct frames_buf *fb)
{
	size_t na = an_frames_get(in, sa, ska, fb->a, fb->cap);
	size_t nb = an_frames_get(in, sb, skb, fb->b, fb->cap);

	/* a stack cut at HEAPANN_DEPTH is not the whole one with its frames */
	if (na != nb || in->scan->stacks[sa].cut != in->scan->stacks[sb].cut)
		return 0;
	for (size_t i = 0; i < na && i < fb->cap; i++)
		if (!frame_key_eq(&fb->a[i], &fb->b[i]))
			return 0;
	return 1;
}

/* Counts of (cluster, size) pairs, for the size summary: entries in v, indexed
 * by idx. */
struct size_ent {
	uint64_t size;
	uint64_t count;
	uint32_t cluster;
};

struct size_map {
	struct htab idx;
	struct size_ent *v;
	size_t n, cap;
	/* sizes below SMALL_SIZES counted in place, small[cluster * SMALL_SIZES +
	 * size], when there are at most SMALL_CLUSTERS clusters (NULL otherwise):
	 * most blocks are small, and a hash probe per block was most of this pass
	 * (issue 15: 0.3 s at 10M blocks) */
	uint64_t *small;
};

#define SMALL_SIZES 512u
#define SMALL_CLUSTERS 2048u

static int size_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct size_ent *a = &((const struct size_map *)ctx)->v[i], *b = key;

	return a->cluster == b->cluster && a->size == b->size;
}

/* Add count blocks of size bytes to cluster's. Returns 0, or -1 out of memory. */
static int size_map_add(struct size_map *m, uint32_t cluster, uint64_t size, uint64_t count)
{
	struct size_ent key = { .size = size, .count = 0, .cluster = cluster };
	int64_t i;

	struct size_ent *v = grow_array(m->v, &m->cap, m->n, sizeof(*v), 1024);

	if (!v)
		return -1;
	m->v = v;
	i = htab_put(&m->idx, mix64(size * 31 + cluster), (uint32_t)m->n, size_eq, m, &key);
	if (i < 0)
		return -1;
	if ((size_t)i == m->n)
		m->v[m->n++] = key;
	m->v[i].count += count;
	return 0;
}

/* What the cluster table's equality callback needs: a cluster is equal to a
 * (stack, skip) key when their logical frames are. */
struct cluster_ctx {
	const struct an_input *in;
	const struct an_stacks *out;
	struct frames_buf *fb;
};

struct cluster_key {
	uint32_t stack, skip;
};

static int cluster_eq(const void *ctx, uint32_t c, const void *key)
{
	const struct cluster_ctx *x = ctx;
	const struct cluster_key *k = key;

	return key_equal(x->in, x->out->v[c].stack, x->out->v[c].skip, k->stack, k->skip, x->fb);
}

static void common_add(struct an_stack *c, uint64_t size, uint64_t count)
{
	uint32_t i;

	c->ndistinct_sizes++;
	/* keep the AN_COMMON_SIZES most frequent; ties go to the larger size */
	for (i = 0; i < c->ncommon; i++)
		if (count > c->common[i].count ||
		    (count == c->common[i].count && size > c->common[i].size))
			break;
	if (i >= AN_COMMON_SIZES)
		return;
	if (c->ncommon < AN_COMMON_SIZES)
		c->ncommon++;
	memmove(&c->common[i + 1], &c->common[i],
		(c->ncommon - 1 - i) * sizeof(c->common[0]));
	c->common[i].size = size;
	c->common[i].count = count;
}

/* The clusters' blocks, bytes, overhead, smallest and largest sizes and sizes
 * from the scan's counts per stack and per (stack, size) (sc->stack_live and
 * sc->stack_sizes), as the pass over the blocks in an_stacks_build would find
 * them. The stacks past sc->nstack_live (the statistics' own, cp_stats_read)
 * have no block. Returns 0, or -1 out of memory. */
static int stacks_from_counts(const struct cp_scan *sc, const uint32_t *stack_cluster, size_t nclusters,
			      struct size_map *sizes, struct an_stacks *out)
{
	for (uint32_t s = 0; s < sc->nstack_live; s++) {
		const struct cp_stack_live *l = &sc->stack_live[s];
		uint64_t bytes = l->cls_bytes[0] + l->cls_bytes[1] + l->cls_bytes[2] + l->cls_bytes[3];
		uint32_t c = stack_cluster[s];
		struct an_stack *cl;

		if (!l->n)
			continue;
		if (c == UINT32_MAX) {
			out->ignored_blocks += l->n;
			out->ignored_bytes += bytes;
			continue;
		}
		cl = &out->v[c];
		cl->blocks += l->n;
		cl->bytes += bytes;
		cl->overhead += l->overhead;
		if (l->min_size < cl->min_size)
			cl->min_size = l->min_size;
		if (l->max_size > cl->max_size)
			cl->max_size = l->max_size;
		out->blocks += l->n;
		out->bytes += bytes;
		out->overhead += l->overhead;
	}
	for (size_t i = 0; i < sc->nstack_sizes; i++) {
		const struct cp_stack_size *e = &sc->stack_sizes[i];
		uint32_t c = e->n && e->stack < sc->nstack_live ? stack_cluster[e->stack] : UINT32_MAX;

		if (c == UINT32_MAX)
			continue;
		if (sizes->small && e->size < SMALL_SIZES && c < nclusters)
			sizes->small[(size_t)c * SMALL_SIZES + e->size] += e->n;
		else if (size_map_add(sizes, c, e->size, e->n) < 0)
			return -1;
	}
	return 0;
}

static int cluster_cmp(const void *pa, const void *pb)
{
	const struct an_stack *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->blocks != b->blocks)
		return a->blocks < b->blocks ? 1 : -1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

int an_stacks_build(const struct an_input *in, const struct an_filter *f, struct an_stacks *out)
{
	const struct cp_scan *sc = in->scan;
	uint32_t *stack_cluster = NULL, *order = NULL;
	struct htab table = { 0 };   /* clusters by their logical frames */
	struct frames_buf fb = { 0 };
	struct size_map sizes = { 0 };
	struct cluster_ctx cx = { in, out, &fb };
	size_t nclusters = 0;
	int rc = -1, counted;

	memset(out, 0, sizeof(*out));
	stack_cluster = malloc((sc->nstacks + 1) * sizeof(*stack_cluster));
	for (uint32_t s = 0; s < sc->nstacks; s++) {
		size_t n = an_frames_count(in, s);

		if (n > fb.cap)
			fb.cap = n;
	}
	fb.a = malloc((fb.cap + 1) * sizeof(*fb.a));
	fb.b = malloc((fb.cap + 1) * sizeof(*fb.b));
	out->v = calloc(sc->nstacks + 1, sizeof(*out->v));
	out->stack_cluster = malloc((sc->nstacks + 1) * sizeof(*out->stack_cluster));
	if (!stack_cluster || !fb.a || !fb.b || !out->v || !out->stack_cluster ||
	    htab_reserve(&table, sc->nstacks) < 0)
		goto out;

	for (uint32_t s = 0; s < sc->nstacks; s++) {
		struct cluster_key key;
		uint32_t skip;
		int64_t c;

		if (an_stack_ignored(in, f, s)) {
			stack_cluster[s] = UINT32_MAX;
			continue;
		}
		skip = an_alloc_skip(in, f, s);
		key.stack = s;
		key.skip = skip;
		c = htab_put(&table, key_hash(in, s, skip, &fb), (uint32_t)nclusters, cluster_eq, &cx,
			     &key);
		if (c < 0)
			goto out;
		if ((size_t)c == nclusters) {
			out->v[nclusters].stack = s;
			out->v[nclusters].skip = skip;
			out->v[nclusters].min_size = UINT64_MAX;
			nclusters++;
		}
		stack_cluster[s] = (uint32_t)c;
	}

	if (nclusters && nclusters <= SMALL_CLUSTERS) {
		sizes.small = calloc(nclusters * SMALL_SIZES, sizeof(*sizes.small));
		if (!sizes.small)
			goto out;
	}
	/* the scan's counts when it kept them (a pass over the blocks less: 0.4
	 * GB at 10M, issue 15), else the blocks */
	counted = sc->stack_sizes && sc->stack_live && sc->nstack_live <= sc->nstacks;
	if (counted && stacks_from_counts(sc, stack_cluster, nclusters, &sizes, out) < 0)
		goto out;
	for (size_t i = 0, nb = counted ? 0 : sc->nblocks; i < nb; i++) {
		const struct cp_block *b = &sc->blocks[i];
		uint32_t c;
		struct an_stack *cl;
		uint64_t ov;

		if (b->state != CP_LIVE)
			continue;
		c = b->stack < sc->nstacks ? stack_cluster[b->stack] : UINT32_MAX;
		if (c == UINT32_MAX) {
			out->ignored_blocks++;
			out->ignored_bytes += b->size;
			continue;
		}
		cl = &out->v[c];
		ov = (uint64_t)b->pad + (b->user - cp_block_hdr(b)) + b->guard_len;
		cl->blocks++;
		cl->bytes += b->size;
		cl->overhead += ov;
		if (b->size < cl->min_size)
			cl->min_size = b->size;
		if (b->size > cl->max_size)
			cl->max_size = b->size;
		out->blocks++;
		out->bytes += b->size;
		out->overhead += ov;
		if (sizes.small && b->size < SMALL_SIZES)
			sizes.small[(size_t)c * SMALL_SIZES + b->size]++;
		else if (size_map_add(&sizes, c, b->size, 1) < 0)
			goto out;
	}
	/* common_add() keeps the same sizes whatever the order they come in */
	for (size_t i = 0; sizes.small && i < nclusters * SMALL_SIZES; i++)
		if (sizes.small[i])
			common_add(&out->v[i / SMALL_SIZES], i % SMALL_SIZES, sizes.small[i]);
	for (size_t i = 0; i < sizes.n; i++)
		common_add(&out->v[sizes.v[i].cluster], sizes.v[i].size, sizes.v[i].count);

	/* Drop empty clusters (all their blocks freed), sort, and renumber the blocks'
	 * cluster ids: a cluster's representative stack still maps to its old id. */
	{
		size_t n = 0;

		order = malloc((nclusters + 1) * sizeof(*order));
		if (!order)
			goto out;
		for (size_t c = 0; c < nclusters; c++)
			if (out->v[c].blocks)
				out->v[n++] = out->v[c];
		qsort(out->v, n, sizeof(*out->v), cluster_cmp);
		for (size_t c = 0; c < nclusters; c++)
			order[c] = UINT32_MAX;
		for (size_t c = 0; c < n; c++)
			order[stack_cluster[out->v[c].stack]] = (uint32_t)c;
		/* the blocks' clusters by their stacks (an_block_cluster): a pass
		 * over the stacks, not over the blocks (issue 15) */
		for (uint32_t s = 0; s < sc->nstacks; s++)
			out->stack_cluster[s] = stack_cluster[s] == UINT32_MAX ? UINT32_MAX : order[stack_cluster[s]];
		out->n = n;
	}
	rc = 0;
out:
	free(stack_cluster);
	free(fb.a);
	free(fb.b);
	htab_release(&table);
	free(order);
	htab_release(&sizes.idx);
	free(sizes.v);
	free(sizes.small);
	if (rc < 0)
		an_stacks_release(out);
	return rc;
}

void an_stacks_release(struct an_stacks *s)
{
	free(s->v);
	free(s->stack_cluster);
	memset(s, 0, sizeof(*s));
}
