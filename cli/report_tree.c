/* report_tree.c - Massif's allocation tree as ms_print draws it ("->" lines, a
 * percentage and bytes per node, allocation site first), and the same tree nested
 * in JSON. Entries below the threshold (--threshold, default 1%) are folded into
 * one "in N places, all below the threshold" entry per parent. */
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
	fprintf(f, "0x%" PRIX64 ": ", fr->addr);
	if (fr->function)
		fputs(fr->function, f);
	else
		fputs("???", f);
	if (fr->file)
		fprintf(f, " (%s:%u)", fmt_base(fr->file), fr->line);
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
	while (k < n->nchildren && tpct(c, c->t->v[n->children[k]].bytes) >= c->threshold &&
	       c->t->v[n->children[k]].bytes)
		k++;
	for (uint32_t r = k; r < n->nchildren; r++) {
		*rest_bytes += c->t->v[n->children[r]].bytes;
		*rest_blocks += c->t->v[n->children[r]].blocks;
	}
	return k;
}

static int text_node(struct tree_ctx *c, const struct an_usage *u, uint32_t i)
{
	const struct an_tnode *n = &c->t->v[i];
	uint64_t rb, rk;
	uint32_t k = shown_children(c, n, &rb, &rk);
	uint32_t nlines = k + (k < n->nchildren ? 1 : 0);
	char a[32];

	for (uint32_t x = 0; x < nlines; x++) {
		int last = x + 1 == nlines;
		const char *down = last ? "  " : "| ";

		fprintf(c->f, "%s->", c->prefix);
		if (x == k) {
			uint32_t places = n->nchildren - k;

			fprintf(c->f, "%05.2f%% (%sB) in %u place%s, %sbelow the threshold (%05.2f%%)\n",
				tpct(c, rb), fmt_num(a, rb), places, places == 1 ? "" : "s",
				places == 1 ? "" : "all ", c->threshold);
			fprintf(c->f, "%s%s\n", c->prefix, down);
			continue;
		}
		{
			const struct an_tnode *ch = &c->t->v[n->children[x]];
			struct an_frame fr;

			fprintf(c->f, "%05.2f%% (%sB) ", tpct(c, ch->bytes), fmt_num(a, ch->bytes));
			if (node_frame(c, ch, &fr))
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

static int json_node(struct tree_ctx *c, const struct an_usage *u, uint32_t i)
{
	const struct an_tnode *n = &c->t->v[i];
	uint64_t rb, rk;
	uint32_t k = shown_children(c, n, &rb, &rk);
	struct an_frame fr;
	int have = i != 0 && node_frame(c, n, &fr);

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
	json_key(c->j, "bytes");
	json_u64(c->j, n->bytes);
	json_key(c->j, "blocks");
	json_u64(c->j, n->blocks);
	json_key(c->j, "percent");
	json_dbl(c->j, tpct(c, n->bytes));
	json_key(c->j, "children");
	json_arr_begin(c->j);
	for (uint32_t x = 0; x < k; x++)
		if (json_node(c, u, n->children[x]) < 0)
			return -1;
	if (k < n->nchildren) {
		json_obj_begin(c->j);
		json_key(c->j, "function");
		json_null(c->j);
		json_key(c->j, "file");
		json_null(c->j);
		json_key(c->j, "line");
		json_null(c->j);
		json_key(c->j, "below_threshold");
		json_bool(c->j, 1);
		json_key(c->j, "places");
		json_u64(c->j, n->nchildren - k);
		json_key(c->j, "bytes");
		json_u64(c->j, rb);
		json_key(c->j, "blocks");
		json_u64(c->j, rk);
		json_key(c->j, "percent");
		json_dbl(c->j, tpct(c, rb));
		json_key(c->j, "children");
		json_arr_begin(c->j);
		json_arr_end(c->j);
		json_obj_end(c->j);
	}
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
	json_key(j, "tree_threshold");
	json_dbl(j, c.threshold);
	json_key(j, "tree");
	rc = json_node(&c, u, 0);
	free(c.fr);
	an_tree_release(&t);
	return rc;
}
