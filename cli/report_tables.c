/* report_tables.c - mprof's four tables (memory leaks, size bins, direct
 * allocations, the allocation call graph) and the timeline of live bytes, in text
 * and JSON; and reading the statistics region they come from.
 *
 * With the statistics region the tables cover the whole history of the process;
 * without it (a raw dump of the heap alone) they are built from the live blocks and
 * say so. Only prints; the tables are built in analysis/.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tables.h"

#define PATH_MAX_FRAMES 256

int cli_stats_load(const struct cli_options *o, struct cli_profile *p)
{
	struct cp_error err = { 0 };
	int rc = cp_stats_read(p->img, &p->scan, &p->stats, &err);

	if (rc > 0) {
		p->have_stats = 1;
		if (p->stats.unload_err[0] && !o->quiet)
			fprintf(stderr, "mprof-core: %s; its libraries' frames stay addresses\n",
				p->stats.unload_err);
		if (p->stats.unload.dropped && !o->quiet)
			fprintf(stderr, "mprof-core: %s: %llu libraries unloaded before the core are not "
				"in libheapann's table (full, or a path too long): their frames stay "
				"addresses\n", p->image_path, (unsigned long long)p->stats.unload.dropped);
		return 0;
	}
	if (rc < 0 && err.code == CP_ENOMEM) {
		fprintf(stderr, "mprof-core: %s\n", err.msg);
		return -1;
	}
	if (rc < 0 && !o->quiet)
		fprintf(stderr, "mprof-core: %s; the tables use the live blocks only\n", err.msg);
	p->have_stats = 0;
	return 0;
}

static const char *source_note(const struct an_usage *u)
{
	return u->from_stats ? "from the statistics kept in the process"
			     : "NO STATISTICS REGION in the image: built from the live blocks only "
			       "(allocs = live blocks, frees unknown)";
}

/* The name of a frame for a table: its function, or its address. */
static const char *frame_name(const struct an_frame *fr, char *buf, size_t cap)
{
	if (fr->function)
		return fr->function;
	if (fr->module)
		snprintf(buf, cap, "%s+0x%" PRIx64, fmt_base(fr->module), fr->modoff);
	else
		snprintf(buf, cap, "0x%" PRIx64, fr->addr);
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* How many rows to print: --top (text default 25, JSON all; with text 0 all in
 * both) and --threshold on the given per-row values (sorted descending). */
static size_t rows_shown(const struct cli_options *o, size_t n, int text,
			 const uint64_t *val, size_t stride, uint64_t whole)
{
	long top = o->top >= 0 ? o->top : (text ? 25 : 0);
	size_t k = 0;

	if (top > 0 && (size_t)top < n)
		n = (size_t)top;
	if (o->threshold <= 0 || !whole)
		return n;
	while (k < n && pct(*(const uint64_t *)((const char *)val + k * stride), whole) >= o->threshold)
		k++;
	return k;
}

/* ---- leaks ---- */

static void leak_path_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
			   const struct an_leak *l, struct an_frame *fr)
{
	size_t n = an_frames_get(&p->in, l->stack, l->skip, fr, l->npath);
	char buf[64], ln[16];

	if (n > l->npath)
		n = l->npath;
	if (!n)
		fputs("(no frames recorded)", f);
	for (size_t k = 0; k < n; k++) {
		fprintf(f, "%s%s", k ? " <- " : "", frame_name(&fr[k], buf, sizeof(buf)));
		if (o->call_sites && fr[k].file)
			fprintf(f, " (%s%s)", fmt_base(fr[k].file), fmt_line(ln, fr[k].line));
	}
	if (l->cut)   /* the path ends where HEAPANN_DEPTH cut its stacks */
		fputs(n ? " <- [more frames: cut at HEAPANN_DEPTH]" : " [more frames: cut at HEAPANN_DEPTH]", f);
	fputc('\n', f);
}

static int leaks_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		      const struct an_usage *u)
{
	struct an_leaks l;
	struct an_frame *fr = malloc(PATH_MAX_FRAMES * sizeof(*fr));
	unsigned depth = o->leak_depth ? o->leak_depth : 5;
	char a[32], b[32], c[32], d[32], e[32];
	size_t n;

	if (!fr || an_leaks_build(&p->in, u, depth > PATH_MAX_FRAMES ? PATH_MAX_FRAMES : depth,
				  o->call_sites, &l) < 0) {
		free(fr);
		return -1;
	}
	fprintf(f, "\nMemory leak table: partial call paths of %u function%s%s, %s\n", depth,
		depth == 1 ? "" : "s", o->call_sites ? " (call sites apart)" : "", source_note(u));
	fprintf(f, "kept: %s bytes in %s blocks\n", fmt_num(a, l.kept_bytes), fmt_num(b, l.kept_blocks));
	if (!l.n) {
		fputs("    (nothing kept)\n", f);
		goto done;
	}
	fprintf(f, "%14s %7s %11s %11s %11s %14s  %s\n", "kept bytes", "%", "kept blocks",
		"allocs", "frees", "bytes", "path (allocation site first)");
	n = rows_shown(o, l.n, 1, &l.v[0].kept_bytes, sizeof(l.v[0]), l.kept_bytes);
	for (size_t i = 0; i < n; i++) {
		const struct an_leak *x = &l.v[i];

		fprintf(f, "%14s %6.2f%% %11s %11s %11s %14s  ", fmt_num(a, x->kept_bytes),
			pct(x->kept_bytes, l.kept_bytes), fmt_num(b, x->kept_blocks),
			fmt_num(c, x->allocs), fmt_num(d, x->frees), fmt_num(e, x->bytes));
		leak_path_text(f, o, p, x, fr);
	}
	if (n < l.n)
		fprintf(f, "... %zu more paths (%s)\n", l.n - n, cli_rest_hint(o));
done:
	an_leaks_release(&l);
	free(fr);
	return 0;
}

static int leaks_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		      const struct an_usage *u)
{
	struct an_leaks l;
	struct an_frame *fr = malloc(PATH_MAX_FRAMES * sizeof(*fr));
	unsigned depth = o->leak_depth ? o->leak_depth : 5;
	char buf[64];
	size_t n;

	if (!fr || an_leaks_build(&p->in, u, depth > PATH_MAX_FRAMES ? PATH_MAX_FRAMES : depth,
				  o->call_sites, &l) < 0) {
		free(fr);
		return -1;
	}
	n = rows_shown(o, l.n, 0, &l.v[0].kept_bytes, sizeof(l.v[0]), l.kept_bytes);
	json_key(j, "leaks");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct an_leak *x = &l.v[i];
		size_t nf = an_frames_get(&p->in, x->stack, x->skip, fr, x->npath);

		if (nf > x->npath)
			nf = x->npath;
		json_obj_begin(j);
		json_key(j, "path");
		json_arr_begin(j);
		for (size_t k = 0; k < nf; k++)
			json_str(j, frame_name(&fr[k], buf, sizeof(buf)));
		json_arr_end(j);
		if (o->call_sites) {
			json_key(j, "sites");
			json_arr_begin(j);
			for (size_t k = 0; k < nf; k++)
				report_frame_json(j, &fr[k]);
			json_arr_end(j);
		}
		json_key(j, "cut");
		json_bool(j, x->cut);
		json_key(j, "kept_bytes");
		json_u64(j, x->kept_bytes);
		json_key(j, "kept_blocks");
		json_u64(j, x->kept_blocks);
		json_key(j, "allocs");
		json_u64(j, x->allocs);
		json_key(j, "frees");
		json_u64(j, x->frees);
		json_key(j, "bytes");
		json_u64(j, x->bytes);
		json_obj_end(j);
	}
	json_arr_end(j);
	an_leaks_release(&l);
	free(fr);
	return 0;
}

/* ---- bins ---- */

static int bins_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u, const struct cli_types *types)
{
	uint64_t allocs = 0, bytes = 0, kept = 0;
	char a[32], b[32], c[32], d[32], e[32], tb[256];

	for (unsigned i = 0; i < AN_NBINS; i++) {
		allocs += u->bins[i].allocs;
		bytes += u->bins[i].bytes;
		kept += u->bins[i].bytes - u->bins[i].bytes_freed;
	}
	fprintf(f, "\nAllocation bins: one per requested size, 1025+ for larger; %s\n",
		source_note(u));
	if (u->from_stats && u->ignored_allocs)
		fputs("(--ignore-fn does not apply to the bins: the process counts sizes for all "
		      "stacks together)\n", f);
	fprintf(f, "%6s %11s %14s %7s %11s %11s %14s %7s  %s\n", "size", "allocs", "bytes", "%",
		"frees", "kept blocks", "kept bytes", "%", "types");
	for (unsigned i = 0; i < AN_NBINS; i++) {
		const struct an_bin *x = &u->bins[i];
		const char *t;

		if (!x->allocs)
			continue;
		if (o->threshold > 0 && pct(x->bytes, bytes) < o->threshold &&
		    pct(x->bytes - x->bytes_freed, kept) < o->threshold)
			continue;
		t = i == AN_BIN_LARGE ? "" : cli_types_names(types, i, tb, sizeof(tb));
		fprintf(f, "%5u%s %11s %14s %6.2f%% %11s %11s %14s %6.2f%%  %s\n", i,
			i == AN_BIN_LARGE ? "+" : " ", fmt_num(a, x->allocs), fmt_num(b, x->bytes),
			pct(x->bytes, bytes), fmt_num(c, x->frees), fmt_num(d, x->allocs - x->frees),
			fmt_num(e, x->bytes - x->bytes_freed), pct(x->bytes - x->bytes_freed, kept), t);
	}
	fprintf(f, "%6s %11s %14s %7s %11s %11s %14s\n", "total", fmt_num(a, allocs), fmt_num(b, bytes),
		"", "", "", fmt_num(c, kept));
	(void)p;
	return 0;
}

static int bins_json(struct json *j, const struct cli_options *o, const struct an_usage *u,
		     const struct cli_types *types)
{
	if (u->from_stats && u->ignored_allocs) {
		json_key(j, "bins_include_ignored");
		json_bool(j, 1);
	}
	json_key(j, "bins");
	json_arr_begin(j);
	for (unsigned i = 0; i < AN_NBINS; i++) {
		const struct an_bin *x = &u->bins[i];

		if (!x->allocs)
			continue;
		json_obj_begin(j);
		json_key(j, "size");
		json_u64(j, i);
		json_key(j, "allocs");
		json_u64(j, x->allocs);
		json_key(j, "bytes");
		json_u64(j, x->bytes);
		json_key(j, "frees");
		json_u64(j, x->frees);
		json_key(j, "kept_blocks");
		json_u64(j, x->allocs - x->frees);
		json_key(j, "kept_bytes");
		json_u64(j, x->bytes - x->bytes_freed);
		json_key(j, "types");
		json_arr_begin(j);
		if (i != AN_BIN_LARGE)
			cli_types_json(types, i, j);
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	(void)o;
	return 0;
}

/* ---- direct ---- */

static const char *const class_names[AN_NCLASSES] = { "small", "medium", "large", "xlarge" };

static int direct_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_usage *u)
{
	struct an_directs d;
	struct an_frame fr;
	char a[32], b[32], c[32], buf[64];
	size_t n;

	if (an_direct_build(&p->in, u, &d) < 0)
		return -1;
	fprintf(f, "\nDirect allocation table: functions that called the allocator; %s\n",
		source_note(u));
	fputs("size classes: small 0-32, medium 33-256, large 257-2048, xlarge above "
	      "(percent of the row's bytes)\n", f);
	fprintf(f, "%7s %14s %14s %11s   %-23s   %-23s  %s\n", "%", "bytes", "kept bytes", "calls",
		"allocated: s/m/l/x %", "kept: s/m/l/x %", "function");
	n = rows_shown(o, d.n, 1, &d.v[0].bytes, sizeof(d.v[0]), d.bytes);
	for (size_t i = 0; i < n; i++) {
		const struct an_direct *x = &d.v[i];
		char cls[2][64];

		for (int t = 0; t < 2; t++) {
			const uint64_t *v = t ? x->cls_kept : x->cls_bytes;
			uint64_t whole = t ? x->kept_bytes : x->bytes;

			snprintf(cls[t], sizeof(cls[t]), "%5.1f %5.1f %5.1f %5.1f", pct(v[0], whole),
				 pct(v[1], whole), pct(v[2], whole), pct(v[3], whole));
		}
		memset(&fr, 0, sizeof(fr));
		if (!an_frames_get(&p->in, x->stack, x->skip, &fr, 1))
			fr.function = "(no frames)";
		fprintf(f, "%6.2f%% %14s %14s %11s   %-23s   %-23s  %s\n", pct(x->bytes, d.bytes),
			fmt_num(a, x->bytes), fmt_num(b, x->kept_bytes), fmt_num(c, x->calls), cls[0],
			cls[1], frame_name(&fr, buf, sizeof(buf)));
	}
	if (n < d.n)
		fprintf(f, "... %zu more functions (%s)\n", d.n - n, cli_rest_hint(o));
	an_directs_release(&d);
	return 0;
}

static int direct_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_usage *u)
{
	struct an_directs d;
	struct an_frame fr;
	char buf[64];
	size_t n;

	if (an_direct_build(&p->in, u, &d) < 0)
		return -1;
	n = rows_shown(o, d.n, 0, &d.v[0].bytes, sizeof(d.v[0]), d.bytes);
	json_key(j, "direct");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct an_direct *x = &d.v[i];

		memset(&fr, 0, sizeof(fr));
		if (!an_frames_get(&p->in, x->stack, x->skip, &fr, 1))
			fr.function = "(no frames)";
		json_obj_begin(j);
		json_key(j, "function");
		json_str(j, frame_name(&fr, buf, sizeof(buf)));
		json_key(j, "bytes");
		json_u64(j, x->bytes);
		json_key(j, "kept_bytes");
		json_u64(j, x->kept_bytes);
		json_key(j, "calls");
		json_u64(j, x->calls);
		json_key(j, "percent");
		json_dbl(j, pct(x->bytes, d.bytes));
		for (int t = 0; t < 2; t++) {
			const uint64_t *v = t ? x->cls_kept : x->cls_bytes;

			json_key(j, t ? "kept_by_class" : "bytes_by_class");
			json_obj_begin(j);
			for (unsigned c = 0; c < AN_NCLASSES; c++) {
				json_key(j, class_names[c]);
				json_u64(j, v[c]);
			}
			json_obj_end(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	an_directs_release(&d);
	return 0;
}

/* ---- graph ---- */

/* The name of graph node i: its function (with " <cycle N>" when with_cycle and
 * it is in one), or "<cycle N as a whole>". */
static const char *gnode_name(const struct cli_profile *p, const struct an_graph *g, size_t i,
			      int with_cycle, char *buf, size_t cap)
{
	const struct an_gnode *x = &g->v[i];
	struct an_frame *fr;
	char tmp[64];
	size_t n;

	if (x->is_cycle) {
		snprintf(buf, cap, with_cycle ? "<cycle %u as a whole>" : "<cycle %u>", x->cycle);
		return buf;
	}
	fr = malloc((x->frame + 1) * sizeof(*fr));
	n = fr ? an_frames_get(&p->in, x->stack, x->skip, fr, x->frame + 1) : 0;
	if (n > x->frame)
		snprintf(buf, cap, "%s", frame_name(&fr[x->frame], tmp, sizeof(tmp)));
	else if (fr && n == 0 && x->frame == 0)
		snprintf(buf, cap, "(no frames)");   /* the node of blocks without frames */
	else
		snprintf(buf, cap, "?");
	free(fr);
	if (with_cycle && x->cycle) {
		size_t len = strlen(buf);

		snprintf(buf + len, cap - len, " <cycle %u>", x->cycle);
	}
	return buf;
}

static int graph_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		      const struct an_usage *u)
{
	struct an_graph g;
	char a[32], b[32], c[32], name[512];
	size_t n;

	if (an_graph_build(&p->in, u, &g) < 0)
		return -1;
	fprintf(f, "\nAllocation call graph: bytes allocated through each call, every stack "
		"counted once per function; %s\n", source_note(u));
	fputs("(callers above each entry, callees below; recursion through several functions "
	      "is merged into <cycle N>)\n\n", f);
	fprintf(f, "%-7s %7s %14s %14s %16s  %s\n", "index", "% total", "self", "self+desc.",
		"calls+recursive", "name");
	fputs("(caller and callee lines: bytes and calls through that call)\n", f);
	n = g.n ? rows_shown(o, g.n, 0, &g.v[0].total, sizeof(*g.v), g.bytes) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct an_gnode *x = &g.v[i];
		char calls[64];

		for (size_t k = 0; k < x->ncallers; k++) {
			const struct an_gedge *e = &x->callers[k];

			fprintf(f, "%-7s %7s %14s %14s %16s      %s [%u]\n", "", "", "",
				fmt_num(a, e->bytes), fmt_num(b, e->calls),
				gnode_name(p, &g, e->node, 1, name, sizeof(name)), g.v[e->node].index);
		}
		if (x->cut_calls)   /* like gprof's <spontaneous>: no known caller */
			fprintf(f, "%-7s %7s %14s %14s %16s      <cut at HEAPANN_DEPTH>\n", "", "", "",
				fmt_num(a, x->cut_bytes), fmt_num(b, x->cut_calls));
		if (x->rcalls)
			snprintf(calls, sizeof(calls), "%s+%s", fmt_num(a, x->calls), fmt_num(b, x->rcalls));
		else
			snprintf(calls, sizeof(calls), "%s", fmt_num(a, x->calls));
		{
			char idx[16];

			snprintf(idx, sizeof(idx), "[%u]", x->index);
			fprintf(f, "%-7s %6.1f%% %14s %14s %16s  %s [%u]\n", idx, pct(x->total, g.bytes),
				fmt_num(b, x->self), fmt_num(c, x->total), calls,
				gnode_name(p, &g, i, 1, name, sizeof(name)), x->index);
		}
		for (size_t k = 0; k < x->ncallees; k++) {
			const struct an_gedge *e = &x->callees[k];

			fprintf(f, "%-7s %7s %14s %14s %16s      %s [%u]\n", "", "", "",
				fmt_num(a, e->bytes), fmt_num(b, e->calls),
				gnode_name(p, &g, e->node, 1, name, sizeof(name)), g.v[e->node].index);
		}
		for (size_t k = 0; k < x->nmembers; k++)
			fprintf(f, "%-7s %7s %14s %14s %16s      member %s [%u]\n", "", "", "", "", "",
				gnode_name(p, &g, x->members[k], 1, name, sizeof(name)),
				g.v[x->members[k]].index);
		fputs("-----------------------------------------------\n", f);
	}
	if (n < g.n)
		fprintf(f, "... %zu more entries (%s)\n", g.n - n, cli_rest_hint(o));
	an_graph_release(&g);
	return 0;
}

static void gedges_json(struct json *j, const struct cli_profile *p, const struct an_graph *g,
			const struct an_usage *u, const struct an_gedge *e, size_t n)
{
	char name[512];

	json_arr_begin(j);
	for (size_t k = 0; k < n; k++) {
		json_obj_begin(j);
		json_key(j, "function");
		json_str(j, gnode_name(p, g, e[k].node, 0, name, sizeof(name)));
		json_key(j, "index");
		json_u64(j, g->v[e[k].node].index);
		json_key(j, "bytes");
		json_u64(j, e[k].bytes);
		json_key(j, "calls");
		json_u64(j, e[k].calls);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static int graph_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		      const struct an_usage *u)
{
	struct an_graph g;
	char name[512];
	size_t n;

	if (an_graph_build(&p->in, u, &g) < 0)
		return -1;
	n = g.n ? rows_shown(o, g.n, 0, &g.v[0].total, sizeof(*g.v), g.bytes) : 0;
	json_key(j, "graph");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct an_gnode *x = &g.v[i];

		json_obj_begin(j);
		json_key(j, "function");
		json_str(j, gnode_name(p, &g, i, 0, name, sizeof(name)));
		json_key(j, "index");
		json_u64(j, x->index);
		json_key(j, "self");
		json_u64(j, x->self);
		json_key(j, "total");
		json_u64(j, x->total);
		json_key(j, "percent");
		json_dbl(j, pct(x->total, g.bytes));
		json_key(j, "calls");
		json_u64(j, x->calls);
		json_key(j, "recursive_calls");
		json_u64(j, x->rcalls);
		json_key(j, "callers");
		gedges_json(j, p, &g, u, x->callers, x->ncallers);
		json_key(j, "cut_bytes");
		json_u64(j, x->cut_bytes);
		json_key(j, "cut_calls");
		json_u64(j, x->cut_calls);
		json_key(j, "callees");
		gedges_json(j, p, &g, u, x->callees, x->ncallees);
		json_key(j, "cycle");
		if (x->cycle)
			json_u64(j, x->cycle);
		else
			json_null(j);
		if (x->is_cycle) {
			json_key(j, "members");
			json_arr_begin(j);
			for (size_t k = 0; k < x->nmembers; k++) {
				json_str(j, gnode_name(p, &g, x->members[k], 0, name, sizeof(name)));
			}
			json_arr_end(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	an_graph_release(&g);
	return 0;
}

/* ---- timeline ---- */

/* A value in the unit chosen for the chart's axis. */
static void unit_for(uint64_t max, const char **unit, double *div)
{
	if (max >= 10ULL << 30) {
		*unit = "GB";
		*div = 1024.0 * 1024 * 1024;
	} else if (max >= 10ULL << 20) {
		*unit = "MB";
		*div = 1024.0 * 1024;
	} else if (max >= 10ULL << 10) {
		*unit = "KB";
		*div = 1024.0;
	} else {
		*unit = "B";
		*div = 1.0;
	}
}

#define TL_ROWS 20
#define TL_COLS 72

static int timeline_text(FILE *f, const struct cli_profile *p)
{
	const struct cp_stats *st = &p->stats;
	uint64_t col[TL_COLS], tmax = 0, ymax;
	int have[TL_COLS], peak_col = -1;
	const char *yu, *xu;
	double yd, xd;
	char a[32], b[32];

	fputs("\nTimeline: live bytes as allocation proceeds (time = bytes allocated + freed)\n", f);
	if (!p->have_stats) {
		fputs("    (no statistics region in the image: no timeline)\n", f);
		return 0;
	}
	if (!st->nsamples) {
		fputs("    (no samples)\n", f);
		return 0;
	}
	tmax = st->samples[st->nsamples - 1].time;
	if (st->peak_time > tmax)
		tmax = st->peak_time;
	ymax = st->peak_live;
	for (size_t i = 0; i < st->nsamples; i++)
		if (st->samples[i].live > ymax)
			ymax = st->samples[i].live;
	memset(have, 0, sizeof(have));
	memset(col, 0, sizeof(col));
	for (size_t i = 0; i < st->nsamples; i++) {
		int c = tmax ? (int)((double)st->samples[i].time * (TL_COLS - 1) / (double)tmax) : 0;

		if (!have[c] || st->samples[i].live > col[c])
			col[c] = st->samples[i].live;
		have[c] = 1;
	}
	if (ymax) {
		peak_col = tmax ? (int)((double)st->peak_time * (TL_COLS - 1) / (double)tmax) : 0;
		if (!have[peak_col] || col[peak_col] < st->peak_live)
			col[peak_col] = st->peak_live;
		have[peak_col] = 1;
	}
	for (int c = 1; c < TL_COLS; c++)
		if (!have[c]) {
			col[c] = col[c - 1];   /* live bytes hold until the next sample */
			have[c] = have[c - 1] ? 2 : 0;
		}
	unit_for(ymax, &yu, &yd);
	unit_for(tmax, &xu, &xd);
	fprintf(f, "    %s\n", yu);
	for (int r = TL_ROWS; r >= 1; r--) {
		uint64_t level = ymax ? (uint64_t)((double)ymax * (r - 0.5) / TL_ROWS) : 1;

		if (r == TL_ROWS)
			fprintf(f, "%7.2f^", (double)ymax / yd);
		else
			fputs("       |", f);
		for (int c = 0; c < TL_COLS; c++)
			fputc(have[c] && col[c] >= level && col[c] ? (c == peak_col ? '#' : ':') : ' ', f);
		fputc('\n', f);
	}
	fputs("     0 +", f);
	for (int c = 0; c < TL_COLS; c++)
		fputc('-', f);
	fprintf(f, ">%s\n", xu);
	fprintf(f, "       0%*.*f\n", TL_COLS, xd == 1.0 ? 0 : 2, (double)tmax / xd);
	{
		char c[32], d[32];

		fprintf(f, "peak (#): %s bytes live at time %s; now: %s bytes live; %zu samples, "
			"one every %s bytes or more\n", fmt_num(a, st->peak_live),
			fmt_num(b, st->peak_time), fmt_num(c, st->live_bytes), st->nsamples,
			fmt_num(d, st->tl_interval));
	}
	return 0;
}

static int timeline_json(struct json *j, const struct cli_profile *p)
{
	const struct cp_stats *st = &p->stats;
	int peak_done = 0;

	json_key(j, "timeline");
	json_arr_begin(j);
	for (size_t i = 0; p->have_stats && i <= st->nsamples; i++) {
		/* the peak, in its place among the samples when it is not one of them */
		if (!peak_done && st->peak_live &&
		    (i == st->nsamples || st->samples[i].time > st->peak_time ||
		     (st->samples[i].time == st->peak_time && st->samples[i].live == st->peak_live))) {
			int same = i < st->nsamples && st->samples[i].time == st->peak_time &&
				   st->samples[i].live == st->peak_live;

			json_obj_begin(j);
			json_key(j, "time");
			json_u64(j, st->peak_time);
			json_key(j, "live_bytes");
			json_u64(j, st->peak_live);
			json_key(j, "peak");
			json_bool(j, 1);
			json_obj_end(j);
			peak_done = 1;
			if (same)
				continue;
		}
		if (i == st->nsamples)
			break;
		json_obj_begin(j);
		json_key(j, "time");
		json_u64(j, st->samples[i].time);
		json_key(j, "live_bytes");
		json_u64(j, st->samples[i].live);
		json_obj_end(j);
	}
	json_arr_end(j);
	return 0;
}

/* ---- entry points ---- */

/* ---- temporary allocations ---- */

/* Why there is no count of temporary allocations, or NULL when there is. */
static const char *temp_absent(const struct cli_profile *p)
{
	if (!p->have_stats)
		return "no statistics region in the image";
	if (!p->stats.temp_counted)
		return "the statistics region is from a libheapann that did not count them "
		       "(region version 2)";
	return NULL;
}

static int temp_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u)
{
	const char *why = temp_absent(p);
	struct an_temps t;
	char a[32], b[32], c[32];
	size_t n;

	fputs("\nTemporary allocations: blocks freed by the thread that allocated them before it "
	      "allocated again; from the statistics kept in the process\n", f);
	if (why) {
		fprintf(f, "    (not counted: %s)\n", why);
		return 0;
	}
	if (an_temps_build(&p->in, u, &t) < 0)
		return -1;
	fprintf(f, "temporary: %s of %s allocations (%.2f%%)\n", fmt_num(a, t.temp),
		fmt_num(b, t.allocs), pct(t.temp, t.allocs));
	if (u->unrecorded_allocs)
		fprintf(f, "stack table full: %s of them under unrecorded stacks, in no row below\n",
			fmt_num(a, t.unrecorded_temp));
	n = rows_shown(o, t.n, 1, &t.v[0].temp, sizeof(t.v[0]), t.temp);
	for (size_t i = 0; i < n; i++) {
		const struct an_temp *x = &t.v[i];

		fprintf(f, "\n#%zu: %s temporary of %s allocations (%.2f%%), %s bytes allocated\n", i + 1,
			fmt_num(a, x->temp), fmt_num(b, x->allocs), pct(x->temp, x->allocs),
			fmt_num(c, x->bytes));
		report_stack_text(f, p, x->stack, "    ");
	}
	if (n < t.n)
		fprintf(f, "... %zu more stacks (%s)\n", t.n - n, cli_rest_hint(o));
	an_temps_release(&t);
	return 0;
}

static int temp_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u)
{
	struct an_temps t;
	size_t n;

	json_key(j, "temporary");
	if (temp_absent(p)) {
		json_null(j);
		return 0;
	}
	if (an_temps_build(&p->in, u, &t) < 0)
		return -1;
	n = rows_shown(o, t.n, 0, &t.v[0].temp, sizeof(t.v[0]), t.temp);
	json_obj_begin(j);
	json_key(j, "temporary");
	json_u64(j, t.temp);
	json_key(j, "allocs");
	json_u64(j, t.allocs);
	json_key(j, "unrecorded_temporary");   /* in "temporary", in no stack */
	json_u64(j, t.unrecorded_temp);
	json_key(j, "stacks");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct an_temp *x = &t.v[i];

		json_obj_begin(j);
		json_key(j, "temporary");
		json_u64(j, x->temp);
		json_key(j, "allocs");
		json_u64(j, x->allocs);
		json_key(j, "bytes");
		json_u64(j, x->bytes);
		json_key(j, "frames");
		report_stack_json(j, p, x->stack);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	an_temps_release(&t);
	return 0;
}

#define TABLE_REPORTS (REP_TREE | REP_LEAKS | REP_BINS | REP_DIRECT | REP_GRAPH | REP_TIMELINE | \
		       REP_TEMP)

static int usage_build(const struct cli_profile *p, struct an_usage *u)
{
	if (p->have_stats)
		return an_usage_from_stats(&p->in, &p->filter, &p->stats, u);
	return an_usage_from_scan(&p->in, &p->filter, u);
}

int report_tables_text(FILE *f, const struct cli_options *o, const struct cli_profile *p)
{
	struct an_usage u;
	struct cli_types *types = NULL;
	int rc = 0;

	if (!(o->reports & TABLE_REPORTS))
		return 0;
	if (usage_build(p, &u) < 0)
		return -1;
	if (p->have_stats) {
		char a[32], b[32], c[32], d[32];
		uint64_t nb, nby;

		fprintf(f, "\nstatistics (whole run): %s allocations, %s frees, %s bytes allocated, "
			"%s bytes freed\n", fmt_num(a, p->stats.allocs), fmt_num(b, p->stats.frees),
			fmt_num(c, p->stats.bytes), fmt_num(d, p->stats.bytes_freed));
		fprintf(f, "live: %s bytes in %s blocks, peak %s bytes\n",
			fmt_num(a, p->stats.live_bytes), fmt_num(b, p->stats.allocs - p->stats.frees),
			fmt_num(c, p->stats.peak_live));
		if (p->stats.unrecorded_allocs)
			fprintf(f, "stack table full: %s allocations (%s bytes) under unrecorded stacks; "
				"the tables show their %s live blocks (%s bytes) from the image, "
				"without their frees\n", fmt_num(a, p->stats.unrecorded_allocs),
				fmt_num(b, p->stats.unrecorded_bytes), fmt_num(c, u.fallback_blocks),
				fmt_num(d, u.fallback_bytes));
		cli_stats_shortfall(p, &nb, &nby);
		if (nb)
			fprintf(f, "the statistics count %s live blocks (%s bytes) that the image does not "
				"hold (memory not dumped, damaged or cut-off headers): the leak, direct "
				"and graph tables count them as freed; the size bins, whose frees were "
				"counted as they happened, keep them\n", fmt_num(a, nb), fmt_num(b, nby));
	} else {
		fputs("\nstatistics: none in the image (a raw dump of the heap alone, HEAPANN_STATS=0, "
		      "or no memory for the region when the program started): the tables use the "
		      "live blocks only\n", f);
	}
	if (o->reports & REP_TREE)
		rc |= report_tree_text(f, o, p, &u);
	if (o->reports & REP_LEAKS)
		rc |= leaks_text(f, o, p, &u);
	if (o->reports & REP_BINS) {
		types = cli_types_load(o->prog);
		rc |= bins_text(f, o, p, &u, types);
	}
	if (o->reports & REP_DIRECT)
		rc |= direct_text(f, o, p, &u);
	if (o->reports & REP_GRAPH)
		rc |= graph_text(f, o, p, &u);
	if (o->reports & REP_TIMELINE)
		rc |= timeline_text(f, p);
	if (o->reports & REP_TEMP)
		rc |= temp_text(f, o, p, &u);
	cli_types_free(types);
	an_usage_release(&u);
	return rc ? -1 : 0;
}

int report_tables_json(struct json *j, const struct cli_options *o, const struct cli_profile *p)
{
	struct an_usage u;
	struct cli_types *types = NULL;
	int rc = 0;

	if (!(o->reports & TABLE_REPORTS))
		return 0;
	if (usage_build(p, &u) < 0)
		return -1;
	json_key(j, "tables_source");
	json_str(j, p->have_stats ? "statistics" : "live_blocks");
	if (p->have_stats) {
		const struct cp_stats *st = &p->stats;
		uint64_t nb, nby;
		static const char *const calls[HEAPANN_NCALLS] = {
			"malloc", "calloc", "realloc", "free", "reallocarray", "posix_memalign",
			"aligned_alloc", "memalign", "valloc", "pvalloc",
		};

		json_key(j, "statistics");
		json_obj_begin(j);
		json_key(j, "allocs");
		json_u64(j, st->allocs);
		json_key(j, "frees");
		json_u64(j, st->frees);
		json_key(j, "bytes");
		json_u64(j, st->bytes);
		json_key(j, "bytes_freed");
		json_u64(j, st->bytes_freed);
		json_key(j, "live_bytes");
		json_u64(j, st->live_bytes);
		json_key(j, "live_blocks");
		json_u64(j, st->allocs - st->frees);
		json_key(j, "peak_live_bytes");
		json_u64(j, st->peak_live);
		json_key(j, "peak_time");   /* bytes allocated + freed when it was reached */
		json_u64(j, st->peak_time);
		json_key(j, "unrecorded_allocs");
		json_u64(j, st->unrecorded_allocs);
		json_key(j, "unrecorded_bytes");
		json_u64(j, st->unrecorded_bytes);
		json_key(j, "unrecorded_live_blocks");   /* in the tables, from the image */
		json_u64(j, u.fallback_blocks);
		json_key(j, "unrecorded_live_bytes");
		json_u64(j, u.fallback_bytes);
		cli_stats_shortfall(p, &nb, &nby);
		json_key(j, "live_blocks_not_in_image");   /* freed in the leak, direct and graph tables */
		json_u64(j, nb);
		json_key(j, "live_bytes_not_in_image");
		json_u64(j, nby);
		json_key(j, "stacks");
		json_u64(j, st->nstacks);
		json_key(j, "temporary");   /* null: a region that did not count them */
		if (st->temp_counted)
			json_u64(j, st->temp);
		else
			json_null(j);
		json_key(j, "calls");
		json_obj_begin(j);
		for (unsigned i = 0; i < HEAPANN_NCALLS; i++) {
			json_key(j, calls[i]);
			json_u64(j, st->calls[i]);
		}
		json_obj_end(j);
		json_obj_end(j);
	}
	if (o->reports & REP_TREE)
		rc |= report_tree_json(j, o, p, &u);
	if (o->reports & REP_LEAKS)
		rc |= leaks_json(j, o, p, &u);
	if (o->reports & REP_BINS) {
		types = cli_types_load(o->prog);
		rc |= bins_json(j, o, &u, types);
	}
	if (o->reports & REP_DIRECT)
		rc |= direct_json(j, o, p, &u);
	if (o->reports & REP_GRAPH)
		rc |= graph_json(j, o, p, &u);
	if (o->reports & REP_TIMELINE)
		rc |= timeline_json(j, p);
	if (o->reports & REP_TEMP)
		rc |= temp_json(j, o, p, &u);
	cli_types_free(types);
	an_usage_release(&u);
	return rc ? -1 : 0;
}
