/* export_html.c - --format html (issue 12): one self-contained HTML file with the
 * summary, an icicle of live bytes by stack, the timeline, the top stacks and, when
 * present, the corruption findings and the lost summary. The profile goes in as one
 * compact JSON blob (string table, frame table, tree as flat arrays) that the
 * inline script (cli/html/report.js, embedded at build time) turns into the page.
 * Tiny subtrees are folded into "other" nodes so that the file and the page stay
 * small however many distinct stacks the core holds. No URL leaves the file. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "htab.h"

/* The page's script and style (cli/html/, generated into build/gen/html_assets.c). */
extern const char html_report_css[];
extern const char html_report_js[];

#define HTML_MAX_FRAMES 4096
#define HTML_MIN_PERMYRIAD 1        /* tree nodes below 0.01% of the bytes are folded */
#define HTML_MAX_NODES 20000        /* and never more nodes than this are kept */
#define HTML_TOP_DEFAULT 50         /* rows of the stacks table without --top */
#define HTML_LOST_TOP_DEFAULT 25    /* loss records without --top */

/* Escaped text between two script tags: "</" and "<!--" cannot end or bend the
 * element. Both replacements are valid inside JSON strings, where they can only
 * occur (JSON has no '<' outside strings). */
static void put_script_text(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<' && i + 1 < n && s[i + 1] == '/') {
			fputs("<\\/", f);
			i++;
		} else if (s[i] == '<' && i + 3 < n && !memcmp(s + i, "<!--", 4)) {
			fputs("\\u003c", f);
		} else {
			fputc(s[i], f);
		}
	}
}

/* Text for an HTML element's content or a double-quoted attribute. */
static void put_html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* ---- the string table: distinct strings, index 0 is "no string" ---- */

struct strtab {
	char **v;            /* owned copies, v[0] unused */
	size_t n, cap;
	struct htab idx;     /* v[1..n) by content */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int strtab_eq(const void *ctx, uint32_t i, const void *key)
{
	return !strcmp(((const struct strtab *)ctx)->v[i], key);
}

/* The index of s (added when new); 0 for NULL; UINT32_MAX when out of memory. */
static uint32_t strtab_add(struct strtab *t, const char *s)
{
	uint64_t h;
	int64_t i;

	if (!s)
		return 0;
	if (t->n == 0)
		t->n = 1;
	h = str_hash(s);
	i = htab_find(&t->idx, h, strtab_eq, t, s);
	if (i >= 0)
		return (uint32_t)i;
	if (t->n >= t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		char **v = realloc(t->v, nc * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		t->v = v;
		t->cap = nc;
	}
	/* copied before it is indexed: the index never names a missing string */
	if (!(t->v[t->n] = strdup(s)))
		return UINT32_MAX;
	if (htab_add(&t->idx, h, (uint32_t)t->n) < 0) {
		free(t->v[t->n]);
		return UINT32_MAX;
	}
	return (uint32_t)t->n++;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 1; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	htab_release(&t->idx);
	memset(t, 0, sizeof(*t));
}

/* ---- logical frames, one entry per (return address, inline level) ---- */

struct hframe {
	uint32_t fn, file, module;   /* strtab indices (fn: the label, never 0) */
	uint32_t line;
	int inlined;
	uint32_t out;                /* index in the emitted table, UINT32_MAX: unused */
};

struct html_ctx {
	const struct cli_profile *p;
	struct strtab s;
	struct hframe *fr;           /* by id */
	size_t nfr, frcap;
	uint32_t *base;              /* per scan address: id of its level 0, or UINT32_MAX */
	uint32_t *nlev;              /* per scan address seen: its inline levels */
	uint32_t noframes;           /* id of "(no frames recorded)", or UINT32_MAX */
	uint32_t cutframe;           /* id of CLI_TREE_CUT, or UINT32_MAX */
	struct an_frame *tmp;        /* scratch for a stack, HTML_MAX_FRAMES */
	struct an_frame *one;        /* scratch for one address's inline chain, as many */
	/* the tree: node 0 is the root */
	struct hnode {
		uint32_t parent, frame;
		uint64_t bytes, blocks;
		uint32_t out;        /* emitted index, UINT32_MAX: folded */
	} *nodes;
	size_t nnodes, nodecap;
	struct htab nidx;            /* nodes but the root by (parent, frame) */
};

/* The frame id of scan address ai at inline level 'level' (clamped to the levels
 * the address has), filling the table the first time the address is seen.
 * UINT32_MAX when out of memory. */
static uint32_t frame_id(struct html_ctx *x, uint32_t ai, uint32_t level)
{
	if (x->base[ai] == UINT32_MAX) {
		size_t n = an_frames_at(&x->p->in, ai, x->one, HTML_MAX_FRAMES);
		char buf[64];

		if (!n)   /* never: a bare frame at least */
			return UINT32_MAX;
		if (x->nfr + n > x->frcap) {
			size_t nc = (x->frcap + n) * 2;
			struct hframe *v = realloc(x->fr, nc * sizeof(*v));

			if (!v)
				return UINT32_MAX;
			x->fr = v;
			x->frcap = nc;
		}
		for (size_t k = 0; k < n; k++) {
			struct hframe *h = &x->fr[x->nfr + k];
			const struct an_frame *o = &x->one[k];
			const char *label = o->function;

			if (!label && o->module) {
				snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, fmt_base(o->module), o->modoff);
				label = buf;
			} else if (!label) {
				snprintf(buf, sizeof(buf), "0x%" PRIx64, o->addr);
				label = buf;
			}
			h->fn = strtab_add(&x->s, label);
			h->file = strtab_add(&x->s, o->file);
			h->module = strtab_add(&x->s, fmt_base(o->module));
			h->line = o->line;
			h->inlined = o->inlined;
			h->out = UINT32_MAX;
			if (h->fn == UINT32_MAX || h->file == UINT32_MAX || h->module == UINT32_MAX)
				return UINT32_MAX;
		}
		x->base[ai] = (uint32_t)x->nfr;
		x->nlev[ai] = (uint32_t)n;
		x->nfr += n;
	}
	return x->base[ai] + (level < x->nlev[ai] ? level : x->nlev[ai] - 1);
}

/* The hash of a (parent, frame) pair: the multiply's high half folded into the
 * low bits the table probes from. */
static uint64_t node_hash(uint32_t parent, uint32_t frame)
{
	uint64_t h = ((uint64_t)parent << 32 | frame) * 0x9E3779B97F4A7C15ull;

	return h ^ (h >> 29);
}

/* key: a struct hnode with parent and frame set */
static int node_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct hnode *a = &((const struct html_ctx *)ctx)->nodes[i], *b = key;

	return a->parent == b->parent && a->frame == b->frame;
}

/* The child of 'parent' for 'frame', created when new. UINT32_MAX: out of memory. */
static uint32_t tree_child(struct html_ctx *x, uint32_t parent, uint32_t frame)
{
	struct hnode key = { parent, frame, 0, 0, UINT32_MAX };
	int64_t i;

	if (x->nnodes == x->nodecap) {
		size_t nc = x->nodecap * 2;
		struct hnode *v = realloc(x->nodes, nc * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		x->nodes = v;
		x->nodecap = nc;
	}
	i = htab_put(&x->nidx, node_hash(parent, frame), (uint32_t)x->nnodes, node_eq, x, &key);
	if (i < 0)
		return UINT32_MAX;
	if ((size_t)i == x->nnodes)
		x->nodes[x->nnodes++] = key;
	return (uint32_t)i;
}

/* The id of a frame that is only a label (LABEL), made once into *SLOT.
 * UINT32_MAX: out of memory. */
static uint32_t label_id(struct html_ctx *x, uint32_t *slot, const char *label)
{
	struct hframe *h;

	if (*slot != UINT32_MAX)
		return *slot;
	if (x->nfr == x->frcap) {
		size_t nc = (x->frcap + 1) * 2;
		struct hframe *v = realloc(x->fr, nc * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		x->fr = v;
		x->frcap = nc;
	}
	h = &x->fr[x->nfr];
	memset(h, 0, sizeof(*h));
	h->out = UINT32_MAX;
	if ((h->fn = strtab_add(&x->s, label)) == UINT32_MAX)
		return UINT32_MAX;
	return *slot = (uint32_t)x->nfr++;
}

/* The frame id of "(no frames recorded)": blocks allocated before libheapann's
 * unwinder was ready, or with HEAPANN_UNWIND=none. UINT32_MAX: out of memory. */
static uint32_t noframes_id(struct html_ctx *x)
{
	return label_id(x, &x->noframes, "(no frames recorded)");
}

/* The frame id of CLI_TREE_CUT: the unknown outer frames of a stack cut at
 * HEAPANN_DEPTH, outermost in its stack (the root's child in the tree).
 * UINT32_MAX: out of memory. */
static uint32_t cut_id(struct html_ctx *x)
{
	return label_id(x, &x->cutframe, CLI_TREE_CUT);
}

/* Every cluster of st into the tree, outermost frame first. */
static int tree_build(struct html_ctx *x, const struct an_stacks *st)
{
	x->nodecap = 1024;
	if (!(x->nodes = malloc(x->nodecap * sizeof(*x->nodes))))
		return -1;
	x->nodes[0] = (struct hnode){ UINT32_MAX, UINT32_MAX, st->bytes, st->blocks, 0 };
	x->nnodes = 1;
	for (size_t i = 0; i < st->n; i++) {
		const struct an_stack *c = &st->v[i];
		size_t nf = an_frames_get(&x->p->in, c->stack, c->skip, x->tmp, HTML_MAX_FRAMES);
		uint32_t node = 0;

		if (nf > HTML_MAX_FRAMES)
			nf = HTML_MAX_FRAMES;
		if (!nf) {   /* its bytes get a box of their own, not a hole under the root */
			uint32_t id = noframes_id(x);

			if (id == UINT32_MAX || (node = tree_child(x, 0, id)) == UINT32_MAX)
				return -1;
			x->nodes[node].bytes += c->bytes;
			x->nodes[node].blocks += c->blocks;
		} else if (cli_stack_cut(x->p, c->stack)) {
			uint32_t id = cut_id(x);

			if (id == UINT32_MAX || (node = tree_child(x, 0, id)) == UINT32_MAX)
				return -1;
			x->nodes[node].bytes += c->bytes;
			x->nodes[node].blocks += c->blocks;
		}
		for (size_t k = nf; k-- > 0;) {
			uint32_t id = frame_id(x, x->tmp[k].addr_idx, x->tmp[k].level);

			if (id == UINT32_MAX || (node = tree_child(x, node, id)) == UINT32_MAX)
				return -1;
			x->nodes[node].bytes += c->bytes;
			x->nodes[node].blocks += c->blocks;
		}
	}
	return 0;
}

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The smallest byte count a node needs to be kept: 0.01% of the root, raised so
 * that at most HTML_MAX_NODES nodes are kept. A child never weighs more than its
 * parent, so "bytes >= min" keeps a tree: every kept node's parent is kept. */
static int tree_min_bytes(const struct html_ctx *x, uint64_t *min)
{
	uint64_t total = x->nodes[0].bytes;
	uint64_t m = total / 10000 * HTML_MIN_PERMYRIAD + (total % 10000 ? 1 : 0);
	uint64_t *v;
	size_t n = 0;

	for (size_t i = 1; i < x->nnodes; i++)
		n += x->nodes[i].bytes >= m;
	if (n <= HTML_MAX_NODES) {
		*min = m;
		return 0;
	}
	if (!(v = malloc(n * sizeof(*v))))
		return -1;
	n = 0;
	for (size_t i = 1; i < x->nnodes; i++)
		if (x->nodes[i].bytes >= m)
			v[n++] = x->nodes[i].bytes;
	qsort(v, n, sizeof(*v), u64_desc);
	m = v[HTML_MAX_NODES - 1];
	/* ties at the cut would keep too many: then keep only the strictly larger */
	if (HTML_MAX_NODES < n && v[HTML_MAX_NODES] == m)
		m++;
	free(v);
	*min = m;
	return 0;
}

/* ---- output ---- */

static void summary_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
			 const struct an_stacks *st)
{
	const struct cp_image *img = p->img;
	size_t nwr;
	uint64_t wr = cli_missing_writable(img, &nwr);
	const char *mach = cli_machine_name(img->machine);

	json_key(j, "summary");
	json_obj_begin(j);
	json_key(j, "program");
	json_str(j, o->prog);
	json_key(j, "image");
	json_str(j, p->image_path);
	json_key(j, "kind");
	json_str(j, img->kind == CP_KIND_RAW ? "raw dump" : "core");
	json_key(j, "bits");
	json_u64(j, img->wsize * 8);
	json_key(j, "endian");
	json_str(j, img->big_endian ? "big" : "little");
	json_key(j, "machine");
	json_str(j, mach);
	json_key(j, "threads");
	if (img->kind == CP_KIND_CORE)
		json_u64(j, img->nthreads);
	else
		json_null(j);
	json_key(j, "blocks");
	json_u64(j, st->blocks);
	json_key(j, "bytes");
	json_u64(j, st->bytes);
	json_key(j, "with_overhead");
	json_u64(j, st->bytes + st->overhead);
	json_key(j, "stacks");
	json_u64(j, st->n);
	json_key(j, "freed");
	json_u64(j, p->scan.nfreed);
	json_key(j, "damaged");
	json_u64(j, p->scan.ndamaged);
	json_key(j, "ignored_blocks");
	json_u64(j, st->ignored_blocks);
	json_key(j, "ignored_bytes");
	json_u64(j, st->ignored_bytes);
	json_key(j, "missing_writable");
	json_u64(j, wr);
	json_key(j, "missing_segments");
	json_u64(j, nwr);
	json_key(j, "truncated");
	json_bool(j, img->truncated);
	json_key(j, "not_dumped_readonly");
	json_u64(j, img->missing_bytes > wr ? img->missing_bytes - wr : 0);
	json_obj_end(j);
}

static void timeline_json(struct json *j, const struct cli_profile *p)
{
	const struct cp_stats *s = &p->stats;

	json_key(j, "timeline");
	if (!p->have_stats) {
		json_null(j);
		return;
	}
	json_obj_begin(j);
	json_key(j, "time");
	json_arr_begin(j);
	for (size_t i = 0; i < s->nsamples; i++)
		json_u64(j, s->samples[i].time);
	json_arr_end(j);
	json_key(j, "live");
	json_arr_begin(j);
	for (size_t i = 0; i < s->nsamples; i++)
		json_u64(j, s->samples[i].live);
	json_arr_end(j);
	json_key(j, "peak_time");
	json_u64(j, s->peak_time);
	json_key(j, "peak_live");
	json_u64(j, s->peak_live);
	json_key(j, "now_time");
	json_u64(j, s->time);
	json_key(j, "now_live");
	json_u64(j, s->live_bytes);
	json_key(j, "interval");
	json_u64(j, s->tl_interval);
	json_key(j, "allocs");
	json_u64(j, s->allocs);
	json_key(j, "frees");
	json_u64(j, s->frees);
	json_key(j, "bytes_allocated");
	json_u64(j, s->bytes);
	json_obj_end(j);
}

/* The stacks table as [bytes, blocks, min size, max size, [frame ids]] rows, marking
 * the frames it uses. Returns 0 or -1 (out of memory). */
static int stacks_mark(struct html_ctx *x, const struct an_stacks *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct an_stack *c = &st->v[i];
		size_t nf = an_frames_get(&x->p->in, c->stack, c->skip, x->tmp, HTML_MAX_FRAMES);

		if (nf > HTML_MAX_FRAMES)
			nf = HTML_MAX_FRAMES;
		for (size_t k = 0; k < nf; k++) {
			uint32_t id = frame_id(x, x->tmp[k].addr_idx, x->tmp[k].level);

			if (id == UINT32_MAX)
				return -1;
			x->fr[id].out = 0;
		}
		if (nf && cli_stack_cut(x->p, c->stack)) {
			uint32_t id = cut_id(x);

			if (id == UINT32_MAX)
				return -1;
			x->fr[id].out = 0;
		}
	}
	return 0;
}

static void stacks_json(struct json *j, struct html_ctx *x, const struct cli_options *o,
			const struct an_stacks *st, size_t n)
{
	uint64_t rb = 0, rk = 0;

	json_key(j, "stacks");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct an_stack *c = &st->v[i];
		size_t nf = an_frames_get(&x->p->in, c->stack, c->skip, x->tmp, HTML_MAX_FRAMES);

		if (nf > HTML_MAX_FRAMES)
			nf = HTML_MAX_FRAMES;
		json_arr_begin(j);
		json_u64(j, c->bytes);
		json_u64(j, c->blocks);
		json_u64(j, c->min_size);
		json_u64(j, c->max_size);
		json_arr_begin(j);
		for (size_t k = 0; k < nf; k++)
			json_u64(j, x->fr[frame_id(x, x->tmp[k].addr_idx, x->tmp[k].level)].out);
		if (nf && cli_stack_cut(x->p, c->stack))   /* its last "frame": the cut line */
			json_u64(j, x->fr[cut_id(x)].out);
		json_arr_end(j);
		json_arr_end(j);
	}
	json_arr_end(j);
	for (size_t i = n; i < st->n; i++) {
		rb += st->v[i].bytes;
		rk += st->v[i].blocks;
	}
	json_key(j, "stacks_rest");
	json_arr_begin(j);
	json_u64(j, st->n - n);
	json_u64(j, rb);
	json_u64(j, rk);
	json_arr_end(j);
	json_key(j, "stacks_rest_hint");
	json_str(j, cli_rest_hint(o));
}

/* A report writer's JSON object ({"corruption": ...}, {"lost": ...}) written to
 * memory instead of the page, so that it can go into the blob. capture_begin opens
 * *buf (NULL on failure); capture_end closes it and returns 0, or -1 (and frees
 * *buf) when the writer returned rc < 0 or the stream failed. */
static FILE *capture_begin(struct json *j, char **buf, size_t *len)
{
	FILE *m = open_memstream(buf, len);

	if (m) {
		json_init(j, m);
		json_obj_begin(j);
	}
	return m;
}

static int capture_end(FILE *m, struct json *j, int rc, char **buf)
{
	json_obj_end(j);
	if (ferror(m))
		rc = -1;
	if (fclose(m) != 0)
		rc = -1;
	if (rc < 0) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* The blob: everything the script draws. Written to a memory stream first so that
 * it can be escaped on the way into the script element. */
static int blob_write(FILE *m, struct html_ctx *x, const struct cli_options *o,
		      const struct an_stacks *st, const char *corr, const char *lost,
		      uint64_t min_bytes, size_t nshown)
{
	const struct cli_profile *p = x->p;
	struct json j;
	size_t nout = 0, nfolded = 0, nother = 0;
	uint64_t fbytes = 0;
	uint32_t nframes_out = 0;

	/* kept nodes get their emitted index (parents come first: creation order) */
	for (size_t i = 0; i < x->nnodes; i++) {
		struct hnode *n = &x->nodes[i];

		if (i == 0 || (n->bytes >= min_bytes && x->nodes[n->parent].out != UINT32_MAX)) {
			n->out = (uint32_t)nout++;
			if (i)
				x->fr[n->frame].out = 0;
		} else {
			n->out = UINT32_MAX;
			nfolded++;
		}
	}
	for (size_t i = 0; i < x->nfr; i++)
		if (x->fr[i].out != UINT32_MAX)
			x->fr[i].out = nframes_out++;

	json_init(&j, m);
	json_obj_begin(&j);
	json_key(&j, "version");
	json_u64(&j, 1);
	summary_json(&j, o, p, st);
	json_key(&j, "strings");
	json_arr_begin(&j);
	for (size_t i = 0; i < x->s.n; i++)
		json_str(&j, i ? x->s.v[i] : "");
	json_arr_end(&j);
	/* frames: function, file, line, module, inlined; 5 numbers each */
	json_key(&j, "frames");
	json_arr_begin(&j);
	for (size_t i = 0; i < x->nfr; i++) {
		const struct hframe *h = &x->fr[i];

		if (h->out == UINT32_MAX)
			continue;
		json_u64(&j, h->fn);
		json_u64(&j, h->file);
		json_u64(&j, h->line);
		json_u64(&j, h->module);
		json_u64(&j, h->inlined ? 1 : 0);
	}
	json_arr_end(&j);
	/* tree: parent, frame (-1 root, -2 "other"), bytes, blocks; 4 numbers per node.
	 * The kept nodes come first (a parent before its children), then one "other"
	 * node per parent that had children folded, holding their sum. */
	{
		uint64_t *ob = calloc(x->nnodes, sizeof(*ob)), *ok = calloc(x->nnodes, sizeof(*ok));
		uint32_t *oc = calloc(x->nnodes, sizeof(*oc));

		if (!ob || !ok || !oc) {
			free(ob);
			free(ok);
			free(oc);
			return -1;
		}
		for (size_t i = 1; i < x->nnodes; i++) {
			const struct hnode *n = &x->nodes[i];

			if (n->out == UINT32_MAX && x->nodes[n->parent].out != UINT32_MAX) {
				ob[n->parent] += n->bytes;
				ok[n->parent] += n->blocks;
				oc[n->parent]++;
			}
		}
		json_key(&j, "tree");
		json_arr_begin(&j);
		for (size_t i = 0; i < x->nnodes; i++) {
			const struct hnode *n = &x->nodes[i];

			if (n->out == UINT32_MAX)
				continue;
			json_i64(&j, i ? (int64_t)x->nodes[n->parent].out : -1);
			json_i64(&j, i ? (int64_t)x->fr[n->frame].out : -1);
			json_u64(&j, n->bytes);
			json_u64(&j, n->blocks);
		}
		for (size_t i = 0; i < x->nnodes; i++)
			if (oc[i]) {
				json_u64(&j, x->nodes[i].out);
				json_i64(&j, -2);
				json_u64(&j, ob[i]);
				json_u64(&j, ok[i]);
				fbytes += ob[i];
				nother++;
			}
		json_arr_end(&j);
		json_key(&j, "other");   /* per "other" node, in order: how many children it folds */
		json_arr_begin(&j);
		for (size_t i = 0; i < x->nnodes; i++)
			if (oc[i])
				json_u64(&j, oc[i]);
		json_arr_end(&j);
		free(ob);
		free(ok);
		free(oc);
	}
	json_key(&j, "pruned");
	json_obj_begin(&j);
	json_key(&j, "nodes");
	json_u64(&j, nfolded);
	json_key(&j, "of");
	json_u64(&j, x->nnodes - 1);
	json_key(&j, "other_nodes");
	json_u64(&j, nother);
	json_key(&j, "bytes");
	json_u64(&j, fbytes);
	json_key(&j, "min_bytes");
	json_u64(&j, min_bytes);
	json_key(&j, "max_nodes");
	json_u64(&j, HTML_MAX_NODES);
	json_obj_end(&j);
	stacks_json(&j, x, o, st, nshown);
	timeline_json(&j, p);
	/* the captured reports go in as they are: {"corruption": {...}}, {"lost": {...}};
	 * after a value written by hand the writer must not wait for one any more */
	json_key(&j, "corruption");
	if (corr) {
		fputs(corr, m);
		j.pending_key = 0;
	} else {
		json_null(&j);
	}
	json_key(&j, "lost");
	if (lost) {
		fputs(lost, m);
		j.pending_key = 0;
	} else {
		json_null(&j);
	}
	json_obj_end(&j);
	return 0;
}

int export_html(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		const struct an_stacks *st, const struct an_corrupt *c)
{
	struct html_ctx x;
	char *corr = NULL, *lost = NULL, *blob = NULL;
	size_t corr_len = 0, lost_len = 0, blob_len = 0;
	uint64_t min_bytes = 0;
	size_t nshown = cli_stacks_shown(o, st, HTML_TOP_DEFAULT);
	FILE *m = NULL;
	int rc = -1;

	memset(&x, 0, sizeof(x));
	x.p = p;
	x.noframes = UINT32_MAX;
	x.cutframe = UINT32_MAX;
	x.tmp = malloc(HTML_MAX_FRAMES * sizeof(*x.tmp));
	x.one = malloc(HTML_MAX_FRAMES * sizeof(*x.one));
	x.base = malloc((p->scan.naddrs ? p->scan.naddrs : 1) * sizeof(*x.base));
	x.nlev = malloc((p->scan.naddrs ? p->scan.naddrs : 1) * sizeof(*x.nlev));
	if (!x.tmp || !x.one || !x.base || !x.nlev)
		goto nomem;
	memset(x.base, 0xff, (p->scan.naddrs ? p->scan.naddrs : 1) * sizeof(*x.base));
	if (tree_build(&x, st) < 0 || tree_min_bytes(&x, &min_bytes) < 0 ||
	    stacks_mark(&x, st, nshown) < 0)
		goto nomem;
	if (an_corrupt_found(c)) {
		struct json j;

		if (!(m = capture_begin(&j, &corr, &corr_len)) ||
		    capture_end(m, &j, report_corruption_json(&j, p, c), &corr) < 0)
			goto nomem;
	}
	if (o->reports & REP_LOST) {   /* the mark phase costs time: only when asked */
		struct cli_options lo = *o;
		struct json j;

		if (lo.top < 0)
			lo.top = HTML_LOST_TOP_DEFAULT;
		if (!(m = capture_begin(&j, &lost, &lost_len)) ||
		    capture_end(m, &j, report_lost_json(&j, &lo, p, st), &lost) < 0)
			goto nomem;
	}
	if (!(m = open_memstream(&blob, &blob_len)))
		goto nomem;
	if (blob_write(m, &x, o, st, corr, lost, min_bytes, nshown) < 0) {
		fclose(m);
		goto nomem;
	}
	if (fclose(m) != 0)
		goto nomem;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"mprof-core\">\n<title>mprof-core: ", f);
	put_html_text(f, fmt_base(o->prog));
	fputs("</title>\n<style>\n", f);
	fputs(html_report_css, f);
	fputs("</style>\n</head>\n<body>\n<noscript>This report draws itself with its inline "
	      "script: enable JavaScript.</noscript>\n<div id=\"app\"></div>\n"
	      "<script type=\"application/json\" id=\"mprof-data\">", f);
	put_script_text(f, blob, blob_len);
	fputs("</script>\n<script>\n", f);
	fputs(html_report_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
	rc = 0;
	goto out;
nomem:
	fputs("mprof-core: out of memory writing the HTML report\n", stderr);
out:
	free(blob);
	free(corr);
	free(lost);
	free(x.tmp);
	free(x.one);
	free(x.base);
	free(x.nlev);
	free(x.fr);
	free(x.nodes);
	htab_release(&x.nidx);
	strtab_release(&x.s);
	return rc;
}
