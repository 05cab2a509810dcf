/* report_tree.c - Massif's allocation tree as ms_print draws it ("->" lines, a
 * percentage and bytes per node, allocation site first), and the same tree nested
 * in JSON. Entries below the threshold (--threshold, default 1%) are folded into
 * one "in N places, all below the threshold" entry per parent. Blocks without
 * frames are an entry of the root's, "(no frames recorded)", as in the massif
 * export, so that the root's entries add up to it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tables.h"

#define TREE_DEFAULT_THRESHOLD 1.0

struct tree_ctx {
	FILE *f;
	struct json *j;
	const struct cli_profile *p;
	const struct an_tree *t;
	double threshold;     /* percent of the root */
	uint64_t total;
	uint64_t nf_bytes, nf_blocks; /* blocks without frames: the root's, in no child */
	struct an_frame *fr;  /* scratch */
	size_t frcap;
	char *prefix;         /* text: the "| " columns of the ancestors */
	size_t plen, pcap;
};

static double tree_threshold(const struct cli_options *o)
{
	return o->threshold_given ? o->threshold : TREE_DEFAULT_THRESHOLD;
}

static double tpct(const struct tree_ctx *c, uint64_t v)
{
	return c->total ? 100.0 * (double)v / (double)c->total : 0.0;
}

/* The frame of tree node n into *out; 0 when it cannot be read. */
static int node_frame(struct tree_ctx *c, const struct an_tnode *n, struct an_frame *out)
{
	size_t k;

	if (n->frame + 1 > c->frcap) {
		struct an_frame *v = realloc(c->fr, (n->frame + 1) * sizeof(*v));

		if (!v)
			return 0;
		c->fr = v;
		c->frcap = n->frame + 1;
	}
	k = an_frames_get(&c->p->in, n->stack, n->skip, c->fr, n->frame + 1);
	if (k <= n->frame)
		return 0;
	*out = c->fr[n->frame];
	return 1;
}

static int prefix_push(struct tree_ctx *c, const char *s)
{
	size_t n = strlen(s);

	if (c->plen + n + 1 > c->pcap) {
		size_t cap = (c->pcap + n + 1) * 2;
		char *v = realloc(c->prefix, cap);

		if (!v)
			return -1;
		c->prefix = v;
		c->pcap = cap;
	}
	memcpy(c->prefix + c->plen, s, n + 1);
	c->plen += n;
	return 0;
}

static void prefix_pop(struct tree_ctx *c, size_t n)
{
	c->plen -= n;
	c->prefix[c->plen] = '\0';
}

static void frame_line(FILE *f, const struct an_frame *fr)
{
	char ln[16];

	fprintf(f, "0x%" PRIX64 ": ", fr->addr);
	if (fr->function)
		fputs(fr->function, f);
	else
		fputs("???", f);
	if (fr->file)
		fprintf(f, " (%s%s)", fmt_base(fr->file), fmt_line(ln, fr->line));
	else if (fr->module)
		fprintf(f, " (in %s)", fmt_base(fr->module));
	if (fr->inlined)
		fputs(" [inlined]", f);
	fputc('\n', f);
}

/* Children of node i shown on their own, and what is folded away. */
static uint32_t shown_children(const struct tree_ctx *c, const struct an_tnode *n,
			       uint64_t *rest_bytes, uint64_t *rest_blocks)
{
	uint32_t k = 0;

	*rest_bytes = *rest_blocks = 0;
	/* at --threshold 0 nothing is below it: blocks of 0 bytes are shown too */
	while (k < n->nchildren && tpct(c, c->t->v[n->children[k]].bytes) >= c->threshold &&
	       (c->t->v[n->children[k]].bytes || c->threshold <= 0))
		k++;
	for (uint32_t r = k; r < n->nchildren; r++) {
		*rest_bytes += c->t->v[n->children[r]].bytes;
		*rest_blocks += c->t->v[n->children[r]].blocks;
	}
	return k;
}

/* The bytes and blocks of the root that no child holds: blocks without frames
 * (allocated before libheapann's unwinder was ready, or HEAPANN_UNWIND=none). */
static void no_frames_part(struct tree_ctx *c)
{
	const struct an_tnode *r = &c->t->v[0];
	uint64_t b = 0, k = 0;

	for (uint32_t x = 0; x < r->nchildren; x++) {
		b += c->t->v[r->children[x]].bytes;
		k += c->t->v[r->children[x]].blocks;
	}
	c->nf_bytes = r->bytes - b;
	c->nf_blocks = r->blocks - k;
}

/* Node i's entries in order: its children shown on their own (k of them), the
 * root's blocks without frames in their place by size when shown (*nf_at: before
 * child *nf_at, k = after the last; UINT32_MAX: not shown, folded or none), and
 * the folded rest (*places, *rb, *rk: with the blocks without frames when they
 * are below the threshold). Returns k. */
static uint32_t entries(const struct tree_ctx *c, uint32_t i, uint32_t *nf_at,
			uint32_t *places, uint64_t *rb, uint64_t *rk)
{
	const struct an_tnode *n = &c->t->v[i];
	uint32_t k = shown_children(c, n, rb, rk);

	*places = n->nchildren - k;
	*nf_at = UINT32_MAX;
	if (i != 0 || !c->nf_bytes)
		return k;
	if (tpct(c, c->nf_bytes) < c->threshold) {
		*rb += c->nf_bytes;
		*rk += c->nf_blocks;
		++*places;
		return k;
	}
	*nf_at = 0;
	while (*nf_at < k && c->t->v[n->children[*nf_at]].bytes > c->nf_bytes)
		++*nf_at;
	return k;
}

static int text_node(struct tree_ctx *c, const struct an_usage *u, uint32_t i)
{
	const struct an_tnode *n = &c->t->v[i];
	uint64_t rb, rk;
	uint32_t nf_at, places;
	uint32_t k = entries(c, i, &nf_at, &places, &rb, &rk);
	uint32_t nlines = k + (nf_at != UINT32_MAX) + (places ? 1 : 0), line = 0;
	char a[32];

	for (uint32_t x = 0; x <= k; x++) {
		if (x == nf_at) {
			fprintf(c->f, "%s->%05.2f%% (%sB) (no frames recorded)\n", c->prefix,
				tpct(c, c->nf_bytes), fmt_num(a, c->nf_bytes));
			fprintf(c->f, "%s%s\n", c->prefix, ++line == nlines ? "  " : "| ");
		}
		if (x == k)
			break;
		{
			const struct an_tnode *ch = &c->t->v[n->children[x]];
			const char *down = ++line == nlines ? "  " : "| ";
			struct an_frame fr;

			fprintf(c->f, "%s->%05.2f%% (%sB) ", c->prefix, tpct(c, ch->bytes),
				fmt_num(a, ch->bytes));
			if (ch->cut)
				fputs(CLI_TREE_CUT "\n", c->f);
			else if (node_frame(c, ch, &fr))
				frame_line(c->f, &fr);
			else
				fputs("???\n", c->f);
			if (prefix_push(c, down) < 0)
				return -1;
			if (ch->nchildren) {
				if (text_node(c, u, n->children[x]) < 0)
					return -1;
			} else {
				fprintf(c->f, "%s\n", c->prefix);
			}
			prefix_pop(c, 2);
		}
	}
	if (places) {
		fprintf(c->f, "%s->%05.2f%% (%sB) in %u place%s, %sbelow the threshold (%05.2f%%)\n",
			c->prefix, tpct(c, rb), fmt_num(a, rb), places, places == 1 ? "" : "s",
			places == 1 ? "" : "all ", c->threshold);
		fprintf(c->f, "%s  \n", c->prefix);
	}
	return 0;
}

int report_tree_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u)
{
	struct an_tree t;
	struct tree_ctx c;
	char a[32], b[32];
	int rc;

	if (an_tree_build(&p->in, u, &t) < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.f = f;
	c.p = p;
	c.t = &t;
	c.threshold = tree_threshold(o);
	c.total = t.v[0].bytes;
	no_frames_part(&c);
	fprintf(f, "\nAllocation tree (Massif's): kept bytes by stack, allocation site first; "
		"%s blocks\n", fmt_num(a, t.v[0].blocks));
	fprintf(f, "%05.2f%% (%sB) (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n",
		c.total ? 100.0 : 0.0, fmt_num(b, c.total));
	rc = prefix_push(&c, "");
	if (rc == 0)
		rc = text_node(&c, u, 0);
	free(c.fr);
	free(c.prefix);
	an_tree_release(&t);
	return rc;
}

/* An entry of no frame, flagged 'what' ("no_frames", or "below_threshold" with
 * its number of places when places > 0), of bytes and blocks. */
static void json_entry(struct tree_ctx *c, const char *what, uint32_t places, uint64_t bytes,
		       uint64_t blocks)
{
	json_obj_begin(c->j);
	json_key(c->j, "function");
	json_null(c->j);
	json_key(c->j, "file");
	json_null(c->j);
	json_key(c->j, "line");
	json_null(c->j);
	json_key(c->j, what);
	json_bool(c->j, 1);
	if (places) {
		json_key(c->j, "places");
		json_u64(c->j, places);
	}
	json_key(c->j, "bytes");
	json_u64(c->j, bytes);
	json_key(c->j, "blocks");
	json_u64(c->j, blocks);
	json_key(c->j, "percent");
	json_dbl(c->j, tpct(c, bytes));
	json_key(c->j, "children");
	json_arr_begin(c->j);
	json_arr_end(c->j);
	json_obj_end(c->j);
}

static int json_node(struct tree_ctx *c, const struct an_usage *u, uint32_t i)
{
	const struct an_tnode *n = &c->t->v[i];
	uint64_t rb, rk;
	uint32_t nf_at, places;
	uint32_t k = entries(c, i, &nf_at, &places, &rb, &rk);
	struct an_frame fr;
	int have = i != 0 && !n->cut && node_frame(c, n, &fr);

	json_obj_begin(c->j);
	json_key(c->j, "function");
	json_str(c->j, have ? fr.function : NULL);
	json_key(c->j, "file");
	json_str(c->j, have ? fr.file : NULL);
	json_key(c->j, "line");
	if (have && fr.line)
		json_u64(c->j, fr.line);
	else
		json_null(c->j);
	if (have) {
		json_key(c->j, "addr");
		json_hex(c->j, fr.addr);
	}
	if (n->cut) {   /* the outer frames of stacks cut at HEAPANN_DEPTH */
		json_key(c->j, "cut");
		json_bool(c->j, 1);
	}
	json_key(c->j, "bytes");
	json_u64(c->j, n->bytes);
	json_key(c->j, "blocks");
	json_u64(c->j, n->blocks);
	json_key(c->j, "percent");
	json_dbl(c->j, tpct(c, n->bytes));
	json_key(c->j, "children");
	json_arr_begin(c->j);
	for (uint32_t x = 0; x <= k; x++) {
		if (x == nf_at)
			json_entry(c, "no_frames", 0, c->nf_bytes, c->nf_blocks);
		if (x < k && json_node(c, u, n->children[x]) < 0)
			return -1;
	}
	if (places)
		json_entry(c, "below_threshold", places, rb, rk);
	json_arr_end(c->j);
	json_obj_end(c->j);
	return 0;
}

int report_tree_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u)
{
	struct an_tree t;
	struct tree_ctx c;
	int rc;

	if (an_tree_build(&p->in, u, &t) < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.j = j;
	c.p = p;
	c.t = &t;
	c.threshold = tree_threshold(o);
	c.total = t.v[0].bytes;
	no_frames_part(&c);
	json_key(j, "tree_threshold");
	json_dbl(j, c.threshold);
	json_key(j, "tree");
	rc = json_node(&c, u, 0);
	free(c.fr);
	an_tree_release(&t);
	return rc;
}
