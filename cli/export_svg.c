/* export_svg.c - --format svg (issue 12): a static flame graph (icicle: the root
 * at the top, callees below) of the live heap by allocation stack, for CI
 * artifacts and bug reports. No script: each frame is a <g> with a <title>
 * tooltip (function, file:line, bytes, blocks, percent). Frames narrower than
 * MIN_PX are left out with their callees (their weight stays in their callers)
 * and a note at the bottom says how many. Frames of one function under one caller
 * are one box, whatever the line; its tooltip names the first line and says how
 * many others it spans. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "htab.h"

#define SVG_W 1200.0      /* image width */
#define SVG_PAD 10.0      /* left and right margin */
#define FRAME_H 17        /* one frame's row */
#define TOP 44            /* rows start below the heading */
#define MIN_PX 0.5        /* narrower frames are not drawn */
#define CHAR_PX 7.0       /* rough width of a character at font-size 12 */
#define NONE UINT32_MAX

/* One box of the graph: a function under one chain of callers. */
struct node {
	const char *name;       /* points into a fold key; nlen bytes */
	size_t nlen;
	const char *place;      /* first file:line seen, plen bytes (0: none) */
	size_t plen;
	uint32_t nplaces;       /* distinct file:line values merged into the box */
	uint32_t parent, first, last, next;
	uint32_t depth;
	uint64_t bytes, blocks;
};

/* One file:line of one box (for its count of lines). */
struct place {
	uint32_t node;
	const char *place;
	size_t plen;
};

struct tree {
	struct node *v;
	uint32_t n, cap;
	struct htab idx;        /* nodes but the root by (parent, name) */
	uint32_t maxdepth;      /* deepest drawn row */
	uint64_t omitted;       /* frames left out (narrower than MIN_PX) */
	struct place *pl;       /* the set of (node, file:line) seen */
	uint32_t npl, plcap;
	struct htab plidx;      /* pl by (node, file:line) */
};

static uint64_t name_hash(uint32_t parent, const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ (parent * 0x9e3779b97f4a7c15ull);

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Room for one more node. Returns 0, or -1 out of memory. */
static int tree_grow(struct tree *t)
{
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		struct node *nv = realloc(t->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		t->v = nv;
		t->cap = cap;
	}
	return 0;
}

/* key of both indexes: a name (or file:line) under a node */
struct name_key {
	uint32_t node;
	const char *s;
	size_t n;
};

static int node_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct node *nd = &((const struct tree *)ctx)->v[id];
	const struct name_key *k = key;

	return nd->parent == k->node && nd->nlen == k->n && !memcmp(nd->name, k->s, k->n);
}

static int place_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct place *pl = &((const struct tree *)ctx)->pl[i];
	const struct name_key *k = key;

	return pl->node == k->node && pl->plen == k->n && !memcmp(pl->place, k->s, k->n);
}

/* Count place as one of node id's file:line values unless seen before (the set of
 * (node, place) pairs). Returns 0, or -1 out of memory. */
static int place_add(struct tree *t, uint32_t id, const char *place, size_t plen)
{
	struct name_key key = { id, place, plen };
	int64_t i;

	if (t->npl == t->plcap) {
		uint32_t cap = t->plcap ? 2 * t->plcap : 256;
		struct place *nv = realloc(t->pl, cap * sizeof(*nv));

		if (!nv)
			return -1;
		t->pl = nv;
		t->plcap = cap;
	}
	i = htab_put(&t->plidx, name_hash(id, place, plen), t->npl, place_eq, t, &key);
	if (i < 0)
		return -1;
	if (i < t->npl)
		return 0;
	t->pl[i].node = id;
	t->pl[i].place = place;
	t->pl[i].plen = plen;
	t->npl++;
	if (!t->v[id].plen) {
		t->v[id].place = place;
		t->v[id].plen = plen;
	}
	t->v[id].nplaces++;
	return 0;
}

/* The child of parent named name (at file:line place, plen 0 for none), created
 * when missing. Returns its index or NONE (out of memory). */
static uint32_t child_of(struct tree *t, uint32_t parent, const char *name, size_t nlen,
			 const char *place, size_t plen)
{
	struct name_key key = { parent, name, nlen };
	struct node *nd;
	int64_t i;
	uint32_t id;

	if (tree_grow(t) < 0)
		return NONE;
	i = htab_put(&t->idx, name_hash(parent, name, nlen), t->n, node_eq, t, &key);
	if (i < 0)
		return NONE;
	id = (uint32_t)i;
	if (id == t->n) {
		t->n++;
		nd = &t->v[id];
		memset(nd, 0, sizeof(*nd));
		nd->name = name;
		nd->nlen = nlen;
		nd->parent = parent;
		nd->first = nd->last = nd->next = NONE;
		nd->depth = t->v[parent].depth + 1;
		if (t->v[parent].last == NONE)
			t->v[parent].first = id;
		else
			t->v[t->v[parent].last].next = id;
		t->v[parent].last = id;
	}
	if (plen && place_add(t, id, place, plen) < 0)
		return NONE;
	return id;
}

/* The tree of the folded stacks of fold (FOLD_SPLIT keys, which must outlive it). */
static int tree_build(struct tree *t, const struct cli_fold *fold)
{
	memset(t, 0, sizeof(*t));
	if (tree_grow(t) < 0)
		return -1;
	t->n = 1;
	memset(&t->v[0], 0, sizeof(t->v[0]));
	t->v[0].name = "all";
	t->v[0].nlen = 3;
	t->v[0].parent = t->v[0].first = t->v[0].last = t->v[0].next = NONE;
	for (size_t i = 0; i < fold->n; i++) {
		const struct cli_fold_entry *e = &fold->v[i];
		const char *s = e->key;
		uint32_t cur = 0;

		t->v[0].bytes += e->bytes;
		t->v[0].blocks += e->blocks;
		while (*s) {
			size_t len = strcspn(s, ";");
			const char *sep = memchr(s, '\x1f', len);
			size_t nlen = sep ? (size_t)(sep - s) : len;

			cur = child_of(t, cur, s, nlen, sep ? sep + 1 : NULL, sep ? len - nlen - 1 : 0);
			if (cur == NONE)
				return -1;
			t->v[cur].bytes += e->bytes;
			t->v[cur].blocks += e->blocks;
			s += len;
			if (*s == ';')
				s++;
		}
	}
	return 0;
}

static void tree_release(struct tree *t)
{
	free(t->v);
	htab_release(&t->idx);
	free(t->pl);
	htab_release(&t->plidx);
	memset(t, 0, sizeof(*t));
}

/* XML text: the five special characters as entities; control characters and
 * bytes outside ASCII as '?' (names are not known to be UTF-8). */
static void xml_put(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(c < 0x20 || c >= 0x7f ? '?' : c, f);
		}
	}
}

static void xml_str(FILE *f, const char *s)
{
	xml_put(f, s, strlen(s));
}

/* A stable colour per function name: the warm palette of flame graphs. */
static void colour(const struct node *nd, unsigned *r, unsigned *g, unsigned *b)
{
	uint64_t h = name_hash(0, nd->name, nd->nlen);

	*r = 205 + (unsigned)(h % 51);
	*g = (unsigned)((h >> 8) % 200);
	*b = (unsigned)((h >> 16) % 56);
}

struct draw {
	FILE *f;
	const struct tree *t;
	int blocks;             /* width by blocks, not bytes */
	uint64_t total;         /* the root's weight */
	double scale;           /* pixels per unit of weight */
};

static uint64_t weight(const struct draw *d, const struct node *nd)
{
	return d->blocks ? nd->blocks : nd->bytes;
}

static uint64_t count_nodes(const struct tree *t, uint32_t id)
{
	uint64_t n = 1;

	for (uint32_t c = t->v[id].first; c != NONE; c = t->v[c].next)
		n += count_nodes(t, c);
	return n;
}

static void node_title(const struct draw *d, const struct node *nd)
{
	char a[32], b[32];
	uint64_t w = weight(d, nd);

	xml_put(d->f, nd->name, nd->nlen);
	if (nd->plen) {
		fputs(" (", d->f);
		xml_put(d->f, nd->place, nd->plen);
		if (nd->nplaces > 1)
			fprintf(d->f, " and %u other line%s", nd->nplaces - 1, nd->nplaces == 2 ? "" : "s");
		fputc(')', d->f);
	}
	fprintf(d->f, ": %s bytes in %s block%s, %.2f%% of %s", fmt_num(a, nd->bytes),
		fmt_num(b, nd->blocks), nd->blocks == 1 ? "" : "s",
		d->total ? 100.0 * (double)w / (double)d->total : 0.0, d->blocks ? "blocks" : "bytes");
}

/* Draw node id at x and its callees, noting in tm what was left out. Deep stacks
 * recurse at most FOLD depth (4096) levels. */
static void draw_node(struct draw *d, uint32_t id, double x, struct tree *tm)
{
	const struct node *nd = &d->t->v[id];
	double w = (double)weight(d, nd) * d->scale;
	double y = TOP + (double)nd->depth * FRAME_H;
	unsigned r, g, b;
	size_t fit;

	if (w < MIN_PX && id != 0) {
		tm->omitted += count_nodes(d->t, id);
		return;
	}
	if (nd->depth > tm->maxdepth)
		tm->maxdepth = nd->depth;
	colour(nd, &r, &g, &b);
	if (id == 0)
		r = 230, g = 230, b = 230;
	fputs("<g><title>", d->f);
	node_title(d, nd);
	fprintf(d->f, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>", x, y, w, FRAME_H - 1, r, g, b);
	fit = w > 3 * CHAR_PX ? (size_t)((w - 6) / CHAR_PX) : 0;
	if (fit >= 3) {
		fprintf(d->f, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + FRAME_H - 5);
		if (nd->nlen <= fit) {
			xml_put(d->f, nd->name, nd->nlen);
		} else {
			xml_put(d->f, nd->name, fit - 2);
			fputs("..", d->f);
		}
		fputs("</text>", d->f);
	}
	fputs("</g>\n", d->f);
	for (uint32_t c = nd->first; c != NONE; c = d->t->v[c].next) {
		draw_node(d, c, x, tm);
		x += (double)weight(d, &d->t->v[c]) * d->scale;
	}
}

int export_svg(FILE *f, const struct cli_options *o, const struct cli_profile *p,
	       const struct an_stacks *st, const struct an_corrupt *c)
{
	struct cli_fold fold;
	struct tree t;
	struct draw d;
	FILE *body = NULL;
	char *buf = NULL;
	size_t blen = 0;
	char a[32], b[32];
	int rc = -1;
	uint32_t rows;
	double height, min_units;

	(void)c;
	memset(&t, 0, sizeof(t));
	if (cli_fold_build(p, st, FOLD_SPLIT, &fold) < 0)
		goto oom;
	if (tree_build(&t, &fold) < 0)
		goto oom;
	/* the frames first, into memory: the height depends on the rows drawn */
	if (!(body = open_memstream(&buf, &blen)))
		goto oom;
	d.f = body;
	d.t = &t;
	d.blocks = o->weight_blocks;
	d.total = weight(&d, &t.v[0]);
	d.scale = d.total ? (SVG_W - 2 * SVG_PAD) / (double)d.total : 0;
	draw_node(&d, 0, SVG_PAD, &t);
	if (fclose(body) != 0) {
		body = NULL;
		goto oom;
	}
	body = NULL;
	rows = t.maxdepth + 1;
	height = TOP + rows * FRAME_H + 40;
	min_units = d.scale > 0 ? MIN_PX / d.scale : 0;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"Verdana, sans-serif\" font-size=\"12\">\n",
		SVG_W, height, SVG_W, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f4\"/>\n",
		SVG_W, height);
	fprintf(f, "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">Live heap of ",
		SVG_W / 2);
	xml_str(f, fmt_base(o->prog));
	fprintf(f, " by allocation stack: %s bytes in %s blocks (width: %s)</text>\n",
		fmt_num(a, st->bytes), fmt_num(b, st->blocks), d.blocks ? "blocks" : "bytes");
	fwrite(buf, 1, blen, f);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">", SVG_PAD, height - 22);
	xml_str(f, p->image_path);
	fprintf(f, ": %s distinct stacks", fmt_num(a, st->n));
	if (p->scan.ndamaged)
		fprintf(f, "; %s damaged headers not shown (mprof-core --report=corruption)",
			fmt_num(b, p->scan.ndamaged));
	fputs("</text>\n", f);
	if (t.omitted) {
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%s frames narrower than %.1f px "
			"(under %.0f %s) not drawn; their weight stays in their callers</text>\n",
			SVG_PAD, height - 8, fmt_num(a, t.omitted), MIN_PX, min_units,
			d.blocks ? "blocks" : "bytes");
	}
	fputs("</svg>\n", f);
	cli_export_note_skipped(o, p, st, "--format svg");
	rc = 0;
	goto done;
oom:
	fputs("mprof-core: out of memory\n", stderr);
done:
	if (body)
		fclose(body);
	free(buf);
	tree_release(&t);
	cli_fold_release(&fold);
	return rc;
}
