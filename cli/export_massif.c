/* export_massif.c - --format massif: a massif.out file, the format Valgrind's Massif
 * writes and ms_print and massif-visualizer read (no spec exists: the grammar is
 * what ms_print's parser and massif-visualizer's parser accept; see the README).
 *
 * Snapshots: libheapann's timeline (time = requested bytes allocated + freed, so
 * time_unit B), then one detailed snapshot at the core's moment: Massif's heap tree
 * of the live blocks (an_tree_build, allocator frames stripped, stopped at main),
 * with the header, pad and guard bytes as mem_heap_extra_B. The statistics region
 * keeps the peak's size and time but not which stacks were live then, so the peak
 * is a snapshot without a tree unless the core was taken at the peak. Only writes;
 * the tree is built in analysis/. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tables.h"

#define MASSIF_DEFAULT_THRESHOLD 1.0   /* percent, as Massif and ms_print */

struct msf {
	FILE *f;
	const struct cli_profile *p;
	const struct an_tree *t;
	uint64_t total;       /* mem_heap_B + mem_heap_extra_B of the detailed snapshot */
	double threshold;     /* percent of total */
	struct an_frame *fr;  /* scratch for node frames */
	size_t frcap;
	unsigned nsnap;       /* snapshots written */
};

/* Text that goes into the file as is, except the characters its readers cannot
 * take: '#' starts a comment for ms_print, a line break ends the line. */
static void put_clean(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '#' || *s == '\n' || *s == '\r' ? '_' : *s, f);
}

/* The same for a path in the desc: and cmd: lines, the last MAX_PATH_SHOWN bytes
 * of it: massif-visualizer reads those lines into a 4 KiB buffer. */
#define MAX_PATH_SHOWN 1024
static void put_path(FILE *f, const char *s)
{
	size_t n = strlen(s);

	if (n > MAX_PATH_SHOWN) {
		fputs("...", f);
		s += n - MAX_PATH_SHOWN;
	}
	put_clean(f, s);
}

/* 1 when a child of 'bytes' stands on its own line: ms_print's test, so that
 * ms_print at the same threshold shows exactly the lines written here. */
static int significant(const struct msf *m, uint64_t bytes)
{
	if (m->threshold <= 0)
		return 1;
	return m->total && 100.0 * (double)bytes / (double)m->total >= m->threshold;
}

/* The frame of tree node n into *out; 0 when it cannot be read. */
static int node_frame(struct msf *m, const struct an_tnode *n, struct an_frame *out)
{
	size_t k;

	if (n->frame + 1 > m->frcap) {
		struct an_frame *v = realloc(m->fr, (n->frame + 1) * sizeof(*v));

		if (!v)
			return 0;
		m->fr = v;
		m->frcap = n->frame + 1;
	}
	k = an_frames_get(&m->p->in, n->stack, n->skip, m->fr, n->frame + 1);
	if (k <= n->frame)
		return 0;
	*out = m->fr[n->frame];
	return 1;
}

/* Massif's label of a code location: "0xADDR: function (file:line)" ("(file)"
 * when only the file is known), or "(in module)" when neither is, "???" for an
 * unnamed function. An
 * inlined level is a node of its own with its return address, as Massif writes
 * inline chains. */
static void frame_label(FILE *f, const struct an_frame *fr)
{
	char ln[16];

	fprintf(f, "0x%" PRIX64 ": ", fr->addr);
	put_clean(f, fr->function ? fr->function : "???");
	if (fr->file) {
		fputs(" (", f);
		put_clean(f, fmt_base(fr->file));
		fprintf(f, "%s)", fmt_line(ln, fr->line));
	} else if (fr->module) {
		fputs(" (in ", f);
		put_clean(f, fr->module);
		fputc(')', f);
	}
}

/* The "in N places" line for the children folded away. */
static void insig_line(const struct msf *m, unsigned depth, uint64_t bytes, uint32_t places)
{
	fprintf(m->f, "%*sn0: %" PRIu64 " in %" PRIu32 " place%s below massif's threshold (%.2f%%)\n",
		(int)depth, "", bytes, places, places == 1 ? "," : "s, all", m->threshold);
}

/* Node i at depth (the root at 0) and everything under it. extra_bytes (root
 * only): bytes of blocks without frames (allocated before libheapann started, such
 * as libstdc++'s emergency pool, or with HEAPANN_DEPTH=0), a line of their own so
 * that the root's children add up to it. */
static int write_node(struct msf *m, uint32_t i, unsigned depth, uint64_t extra_bytes)
{
	const struct an_tnode *n = &m->t->v[i];
	uint32_t k = 0, places = 0;
	uint64_t rest = 0;
	int extra_sig = extra_bytes && significant(m, extra_bytes);

	/* children are sorted by bytes, largest first */
	while (k < n->nchildren && significant(m, m->t->v[n->children[k]].bytes))
		k++;
	for (uint32_t r = k; r < n->nchildren; r++) {
		rest += m->t->v[n->children[r]].bytes;
		places++;
	}
	if (extra_bytes && !extra_sig) {
		rest += extra_bytes;
		places++;
	}
	fprintf(m->f, "%*sn%" PRIu32 ": %" PRIu64 " ", (int)depth, "",
		k + (uint32_t)extra_sig + (places ? 1u : 0u), n->bytes);
	if (i == 0) {
		fputs("(heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n", m->f);
	} else {
		struct an_frame fr;

		if (n->cut)
			fputs(CLI_TREE_CUT, m->f);
		else if (node_frame(m, n, &fr))
			frame_label(m->f, &fr);
		else
			fputs("???", m->f);
		fputc('\n', m->f);
	}
	for (uint32_t x = 0; x <= k; x++) {
		/* the blocks without frames in their place by size, as a child */
		if (extra_sig && (x == k || extra_bytes >= m->t->v[n->children[x]].bytes)) {
			fprintf(m->f, "%*sn0: %" PRIu64 " (no frames recorded)\n", (int)depth + 1, "",
				extra_bytes);
			extra_sig = 0;
		}
		if (x < k && write_node(m, n->children[x], depth + 1, 0) < 0)
			return -1;
	}
	if (places)
		insig_line(m, depth + 1, rest, places);
	return 0;
}

static void snap_head(struct msf *m, uint64_t time, uint64_t heap, uint64_t extra,
		      const char *tree)
{
	fprintf(m->f, "#-----------\nsnapshot=%u\n#-----------\n", m->nsnap++);
	fprintf(m->f, "time=%" PRIu64 "\nmem_heap_B=%" PRIu64 "\nmem_heap_extra_B=%" PRIu64
		"\nmem_stacks_B=0\nheap_tree=%s\n", time, heap, extra, tree);
}

/* The one "desc:" line (massif-visualizer reads exactly one): where the numbers
 * come from and what is not known. */
static void write_desc(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st, const struct an_corrupt *c, int peak_now,
		       size_t dropped)
{
	const struct cp_stats *s = &p->stats;

	fputs("desc: mprof-core --format massif ", f);
	put_path(f, p->image_path);
	if (!p->have_stats) {
		fputs("; no statistics region in the image: one snapshot, the live blocks "
		      "(time unknown, written as 0)", f);
	} else {
		fputs("; time = requested bytes allocated + freed (libheapann's statistics)"
		      "; last snapshot: the live blocks of the image", f);
		fputs("; the others: libheapann's timeline (heap extra unknown there, written as 0)", f);
		if (peak_now)
			fputs("; the image was taken at the peak", f);
		else if (s->peak_live)
			fprintf(f, "; peak %" PRIu64 " B at time %" PRIu64 ": no heap tree (the "
				"statistics do not record which stacks were live at the peak)",
				s->peak_live, s->peak_time);
		if (dropped)
			fprintf(f, "; %zu samples after the image's time left out", dropped);
		if (o->nignore_fns)
			fputs("; --ignore-fn applies to the last snapshot only", f);
	}
	fputs("; heap extra = headers, pad and guards", f);
	if (st->ignored_blocks)
		fprintf(f, "; --ignore-fn left out %" PRIu64 " blocks (%" PRIu64 " B)",
			st->ignored_blocks, st->ignored_bytes);
	/* c leaves out the stale header copies in threads' stacks the scan also lists */
	if (c->ndamaged)
		fprintf(f, "; %zu damaged headers: their blocks are not in the tree "
			"(--report=corruption)", c->ndamaged);
	fputc('\n', f);
}

int export_massif(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		  const struct an_stacks *st, const struct an_corrupt *c)
{
	const struct cp_stats *s = &p->stats;
	struct an_usage u;
	struct an_tree t;
	struct msf m;
	uint64_t now = p->have_stats ? s->time : 0, framed = 0;
	int peak_now = 0, peak_done = 1, rc = -1;
	size_t dropped = 0;

	if (an_usage_from_scan(&p->in, &p->filter, &u) < 0)
		goto nomem;
	if (an_tree_build(&p->in, &u, &t) < 0) {
		an_usage_release(&u);
		goto nomem;
	}
	memset(&m, 0, sizeof(m));
	m.f = f;
	m.p = p;
	m.t = &t;
	m.total = t.v[0].bytes + st->overhead;
	m.threshold = o->threshold_given ? o->threshold : MASSIF_DEFAULT_THRESHOLD;
	for (uint32_t k = 0; k < t.v[0].nchildren; k++)
		framed += t.v[t.v[0].children[k]].bytes;

	if (p->have_stats) {
		/* the core's moment is the peak when nothing happened since */
		peak_now = s->peak_live && s->peak_time == now && s->peak_live == s->live_bytes;
		peak_done = peak_now || !s->peak_live || s->peak_time > now;
		for (size_t i = 0; i < s->nsamples; i++)
			dropped += s->samples[i].time > now;
	}
	write_desc(f, o, p, st, c, peak_now, dropped);
	fputs("cmd: ", f);
	put_path(f, p->img->prpsinfo_args[0] ? p->img->prpsinfo_args : o->prog);
	fputs("\ntime_unit: B\n", f);

	if (p->have_stats) {
		/* Massif starts at time 0 with nothing allocated; so do the counters */
		if (!s->nsamples || s->samples[0].time > 0)
			snap_head(&m, 0, 0, 0, "empty");
		for (size_t i = 0; i < s->nsamples; i++) {
			const struct cp_stats_sample *x = &s->samples[i];

			if (x->time >= now)   /* the detailed snapshot stands for the image's time */
				break;
			if (!peak_done && s->peak_time <= x->time) {
				peak_done = 1;
				if (s->peak_time != x->time || s->peak_live != x->live)
					snap_head(&m, s->peak_time, s->peak_live, 0, "empty");
			}
			snap_head(&m, x->time, x->live, 0, "empty");
		}
		if (!peak_done)
			snap_head(&m, s->peak_time, s->peak_live, 0, "empty");
	}
	snap_head(&m, now, t.v[0].bytes, st->overhead, peak_now ? "peak" : "detailed");
	rc = write_node(&m, 0, 0, t.v[0].bytes > framed ? t.v[0].bytes - framed : 0);
	free(m.fr);
	an_tree_release(&t);
	an_usage_release(&u);
	if (rc == 0)
		return 0;
nomem:
	fputs("mprof-core: out of memory writing the massif file\n", stderr);
	return -1;
}
