/* diff.c - mprof-core diff [OPTIONS] PROG OLD NEW (issue 12): the live heap of two
 * cores of one build (or two raw dumps of one firmware: --elf ELF --base ADDR
 * --raw OLD NEW), stack by stack, largest growth first; how slow leaks are
 * found. Stacks are clustered as in the stacks report and matched across the two
 * cores by their symbolized frames (fold.c's text, with file:line), never by
 * address, so ASLR between runs does not matter. Where both cores hold libheapann's
 * statistics region, the allocations and frees each stack made in between are the
 * differences of its cumulative counts. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DIFF_MAX_FRAMES 4096

/* One stack in the diff: its entries in OLD and NEW (NULL when absent there). */
struct diff_row {
	const struct cli_fold_entry *old, *new;
	int64_t growth;         /* weight new - old: bytes, or blocks with --weight blocks */
};

static void hex_id(char *dst, size_t cap, const unsigned char *id, size_t n)
{
	dst[0] = '\0';
	for (size_t i = 0; i < n && 2 * i + 2 < cap; i++)
		snprintf(dst + 2 * i, 3, "%02x", id[i]);
}

/* The main program's build-id of the core at path into id (*len 0 when the core
 * does not hold it). Returns 0, or -1 after printing why the core cannot be read. */
static int core_buildid(const char *path, unsigned char *id, size_t cap, size_t *len)
{
	struct cp_error err = { 0 };
	struct cp_image *img = cp_image_open_core(path, &err);
	const struct cp_mapping *mm;

	*len = 0;
	if (!img) {
		fprintf(stderr, "mprof-core: %s\n", err.msg);
		return -1;
	}
	mm = cp_image_main_module(img);
	if (!mm || cp_image_module_buildid(img, mm, id, cap, len) < 0)
		*len = 0;
	cp_image_free(img);
	return 0;
}

/* Refuse two cores of different builds: a diff of them would pair stacks of two
 * programs. Returns 0 when the build-ids agree or either is unknown (each core
 * is still checked against PROG when loaded), else -1 after the one-line error. */
static int same_build(const char *old, const char *new)
{
	unsigned char a[64], b[64];
	size_t la, lb;
	char ha[130], hb[130];

	if (core_buildid(old, a, sizeof(a), &la) < 0 || core_buildid(new, b, sizeof(b), &lb) < 0)
		return -1;
	if (!la || !lb || (la == lb && !memcmp(a, b, la < sizeof(a) ? la : sizeof(a))))
		return 0;
	hex_id(ha, sizeof(ha), a, la < sizeof(a) ? la : sizeof(a));
	hex_id(hb, sizeof(hb), b, lb < sizeof(b) ? lb : sizeof(b));
	fprintf(stderr, "mprof-core: diff: %s and %s are cores of different builds "
		"(build-id %s, build-id %s): compare two cores of one build\n", old, new, ha, hb);
	return -1;
}

/* Add the statistics region's stacks of p to fold (its entries' allocs and frees,
 * merged by the same key as the live clusters), and, when the region's stack
 * table was full, the live blocks of the stacks it did not record (as
 * 'unrecorded': what those stacks did in between is not known). Returns 0, or
 * -1 out of memory. */
static int add_stats(const struct cli_profile *p, enum cli_fold_mode mode, struct cli_fold *fold)
{
	struct an_frame *fr = cli_fold_frames_alloc();
	struct cli_buf b = { 0 };
	uint64_t *live = NULL;   /* per scan stack: live blocks the region has no entry for */
	int rc = -1;

	if (!fr || (p->stats.unrecorded_allocs && !(live = calloc(p->scan.nstacks + 1, sizeof(*live)))))
		goto done;
	for (size_t i = 0; live && i < p->scan.nblocks; i++)
		if (p->scan.blocks[i].state == CP_LIVE && p->scan.blocks[i].stack < p->scan.nstacks)
			live[p->scan.blocks[i].stack]++;
	for (size_t i = 0; i < p->stats.nstacks; i++) {
		const struct cp_stats_stack *s = &p->stats.stacks[i];
		uint32_t skip;

		if (live && s->stack < p->scan.nstacks)
			live[s->stack] = 0;   /* recorded */
		if (an_stack_ignored(&p->in, &p->filter, s->stack))
			continue;
		skip = an_alloc_skip(&p->in, &p->filter, s->stack);
		if (cli_fold_key(p, s->stack, skip, mode, fr, &b) < 0 ||
		    cli_fold_push(fold, b.s, s->stack, skip) < 0)
			goto done;
		fold->v[fold->n - 1].allocs = s->allocs;
		fold->v[fold->n - 1].frees = s->frees;
	}
	for (uint32_t s = 0; live && s < p->scan.nstacks; s++) {
		uint32_t skip;

		if (!live[s] || an_stack_ignored(&p->in, &p->filter, s))
			continue;
		skip = an_alloc_skip(&p->in, &p->filter, s);
		if (cli_fold_key(p, s, skip, mode, fr, &b) < 0 || cli_fold_push(fold, b.s, s, skip) < 0)
			goto done;
		fold->v[fold->n - 1].unrecorded = live[s];
	}
	cli_fold_sort(fold);
	rc = 0;
done:
	cli_buf_release(&b);
	free(live);
	free(fr);
	return rc;
}

/* 1 when what row R's stack did in between is known: both images' statistics
 * recorded every stack folding to it. */
static int row_between_known(const struct diff_row *r)
{
	return !(r->old && r->old->unrecorded) && !(r->new && r->new->unrecorded);
}

static uint64_t w_of(const struct cli_options *o, const struct cli_fold_entry *e)
{
	return !e ? 0 : o->weight_blocks ? e->blocks : e->bytes;
}

#define GET(e, f) ((e) ? (e)->f : 0)

static int row_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;

	if (a->growth != b->growth)
		return a->growth > b->growth ? -1 : 1;
	return cli_fold_cmp(a->new ? a->new->key : a->old->key, b->new ? b->new->key : b->old->key);
}

/* Join the sorted folds into rows (key order); stacks with nothing live in either
 * core are kept only when they allocated or freed in between. Returns how many, or -1 out of
 * memory; *out is the caller's to free. */
static long rows_join(const struct cli_options *o, const struct cli_fold *fo,
		      const struct cli_fold *fn, int between, struct diff_row **out)
{
	struct diff_row *r = malloc((fo->n + fn->n + 1) * sizeof(*r));
	size_t i = 0, j = 0, n = 0;

	if (!(*out = r))
		return -1;
	while (i < fo->n || j < fn->n) {
		int c = i == fo->n ? 1 : j == fn->n ? -1 : cli_fold_cmp(fo->v[i].key, fn->v[j].key);
		const struct cli_fold_entry *a = c <= 0 ? &fo->v[i++] : NULL;
		const struct cli_fold_entry *b = c >= 0 ? &fn->v[j++] : NULL;

		if (!GET(a, blocks) && !GET(b, blocks) && (!between ||
		    (GET(a, allocs) == GET(b, allocs) && GET(a, frees) == GET(b, frees))))
			continue;
		r[n].old = a;
		r[n].new = b;
		r[n].growth = (int64_t)(w_of(o, b) - w_of(o, a));
		n++;
	}
	return (long)n;
}

static void signed_num(char *buf, int64_t v)
{
	char tmp[32];

	fmt_num(tmp, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	snprintf(buf, 33, "%s%s", v < 0 ? "-" : "+", tmp);
}

/* Frames of a row: from NEW when it has the stack there, else from OLD. */
static size_t row_frames(const struct cli_profile *p, const struct diff_row *r,
			 struct an_frame *fr)
{
	const struct cli_profile *pp = r->new ? &p[1] : &p[0];
	const struct cli_fold_entry *e = r->new ? r->new : r->old;
	size_t nf = an_frames_get(&pp->in, e->stack, e->skip, fr, DIFF_MAX_FRAMES);

	return nf > DIFF_MAX_FRAMES ? DIFF_MAX_FRAMES : nf;
}

static void side_text(FILE *f, const char *label, const struct cli_profile *p,
		      const struct an_stacks *st)
{
	char a[32], b[32], c[32], d[32];

	fprintf(f, "%s %s: %s blocks, %s bytes", label, p->image_path, fmt_num(a, st->blocks),
		fmt_num(b, st->bytes));
	if (p->have_stats)
		fprintf(f, "; %s allocations, %s frees so far", fmt_num(c, p->stats.allocs),
			fmt_num(d, p->stats.frees));
	/* a cut core's missing blocks would read as growth or shrinkage */
	if (cli_missing_writable(p->img, NULL) || p->img->truncated)
		fprintf(f, "; missing from the image: %s bytes of writable memory%s: blocks there "
			"are not seen", fmt_num(a, cli_missing_writable(p->img, NULL)),
			p->img->truncated ? " (the file is truncated)" : "");
	if (p->img->notes_cut)
		fputs("; notes cut off by the truncation (library frames unnamed)", f);
	fputc('\n', f);
}

static void diff_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		      const struct an_stacks *st, const struct diff_row *r, size_t n,
		      int between, struct an_frame *fr)
{
	char a[40], b[40], c[40], d[40], e[40], g[40];
	long top = o->top >= 0 ? o->top : 25;
	size_t shown = top > 0 && (size_t)top < n ? (size_t)top : n;
	size_t grew = 0, shrank = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t db = (int64_t)(GET(r[i].new, bytes) - GET(r[i].old, bytes));

		grew += db > 0;
		shrank += db < 0;
	}
	fprintf(f, "diff of %s\n", o->prog);
	side_text(f, "old", &p[0], &st[0]);
	side_text(f, "new", &p[1], &st[1]);
	signed_num(a, (int64_t)(st[1].blocks - st[0].blocks));
	signed_num(b, (int64_t)(st[1].bytes - st[0].bytes));
	fprintf(f, "change: %s blocks, %s bytes; %s stacks: %s grew, %s shrank\n", a, b,
		fmt_num(c, n), fmt_num(d, grew), fmt_num(e, shrank));
	if (between) {
		fmt_num(a, p[1].stats.allocs - p[0].stats.allocs);
		fmt_num(b, p[1].stats.frees - p[0].stats.frees);
		fprintf(f, "in between: %s allocations, %s frees\n", a, b);
	}
	for (size_t i = 0; i < shown; i++) {
		const struct cli_fold_entry *eo = r[i].old, *en = r[i].new;
		size_t nf = row_frames(p, &r[i], fr);

		signed_num(a, (int64_t)(GET(en, bytes) - GET(eo, bytes)));
		signed_num(b, (int64_t)(GET(en, blocks) - GET(eo, blocks)));
		fprintf(f, "\n#%zu: %s bytes, %s blocks: %s -> %s bytes, %s -> %s blocks", i + 1, a, b,
			fmt_num(c, GET(eo, bytes)), fmt_num(d, GET(en, bytes)),
			fmt_num(e, GET(eo, blocks)), fmt_num(g, GET(en, blocks)));
		if (between && row_between_known(&r[i]))
			fprintf(f, "; in between %s allocations, %s frees",
				fmt_num(c, GET(en, allocs) - GET(eo, allocs)),
				fmt_num(d, GET(en, frees) - GET(eo, frees)));
		else if (between)
			fputs("; in between not known (the statistics' stack table was full)", f);
		fputc('\n', f);
		if (!nf)
			fputs("    (no frames recorded)\n", f);
		for (size_t k = 0; k < nf; k++) {
			fputs("    ", f);
			report_frame_text(f, &fr[k]);
		}
		report_cut_text(f, r[i].new ? &p[1] : &p[0], (r[i].new ? r[i].new : r[i].old)->stack,
				"    ");
	}
	if (shown < n)
		fprintf(f, "\n... %zu more stacks (--top 0 shows all)\n", n - shown);
}

static void side_json(struct json *j, const char *key, const struct cli_profile *p,
		      const struct an_stacks *st)
{
	json_key(j, key);
	json_obj_begin(j);
	json_key(j, "image");
	json_str(j, p->image_path);
	json_key(j, "blocks");
	json_u64(j, st->blocks);
	json_key(j, "bytes");
	json_u64(j, st->bytes);
	json_key(j, "damaged_headers");
	json_u64(j, p->scan.ndamaged);
	json_key(j, "missing_writable_bytes");
	json_u64(j, cli_missing_writable(p->img, NULL));
	json_key(j, "truncated");
	json_bool(j, p->img->truncated);
	json_opt_u64(j, "allocs", p->have_stats, p->stats.allocs);
	json_opt_u64(j, "frees", p->have_stats, p->stats.frees);
	json_obj_end(j);
}

static void diff_json(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		      const struct an_stacks *st, const struct diff_row *r, size_t n,
		      int between, struct an_frame *fr)
{
	struct json j;
	size_t shown = o->top > 0 && (size_t)o->top < n ? (size_t)o->top : n;

	json_init(&j, f);
	json_obj_begin(&j);
	json_key(&j, "program");
	json_str(&j, o->prog);
	side_json(&j, "old", &p[0], &st[0]);
	side_json(&j, "new", &p[1], &st[1]);
	json_key(&j, "between");
	json_bool(&j, between);
	json_key(&j, "stacks");
	json_arr_begin(&j);
	for (size_t i = 0; i < shown; i++) {
		const struct cli_fold_entry *eo = r[i].old, *en = r[i].new;

		json_obj_begin(&j);
		json_key(&j, "blocks_old");
		json_u64(&j, GET(eo, blocks));
		json_key(&j, "blocks_new");
		json_u64(&j, GET(en, blocks));
		json_key(&j, "bytes_old");
		json_u64(&j, GET(eo, bytes));
		json_key(&j, "bytes_new");
		json_u64(&j, GET(en, bytes));
		json_opt_u64(&j, "allocs_between", between && row_between_known(&r[i]),
			     GET(en, allocs) - GET(eo, allocs));
		json_opt_u64(&j, "frees_between", between && row_between_known(&r[i]),
			     GET(en, frees) - GET(eo, frees));
		json_key(&j, "frames");
		report_frames_json(&j, fr, row_frames(p, &r[i], fr));
		report_cut_json(&j, r[i].new ? &p[1] : &p[0], (r[i].new ? r[i].new : r[i].old)->stack);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
}

/* 1 when the two images are of one process: the statistics region at one address
 * and some thread (the main thread's id is the process id) in both, or two raw
 * dumps with the region at one address. */
static int same_process(const struct cli_profile *p)
{
	if (p[0].stats.addr != p[1].stats.addr)
		return 0;
	/* two raw dumps of one firmware (one --elf): no threads to tell two runs
	 * apart; the caller's check that every count grew is what is left */
	if (p[0].img->kind == CP_KIND_RAW && p[1].img->kind == CP_KIND_RAW)
		return 1;
	for (size_t i = 0; i < p[0].img->nthreads; i++)
		for (size_t k = 0; k < p[1].img->nthreads; k++)
			if (p[0].img->threads[i].tid == p[1].img->threads[k].tid)
				return 1;
	return 0;
}

/* The counts of NEW's statistics are those of OLD plus what happened in between
 * only when the two are moments of one run: one process, and every count grown. */
static int stats_between(const struct cli_profile *p, const struct cli_fold *fo,
			 const struct cli_fold *fn)
{
	if (!p[0].have_stats || !p[1].have_stats || !same_process(p) ||
	    p[1].stats.allocs < p[0].stats.allocs || p[1].stats.frees < p[0].stats.frees)
		return 0;
	for (size_t i = 0; i < fo->n; i++) {
		const struct cli_fold_entry *e = cli_fold_find(fn, fo->v[i].key);

		if (GET(e, allocs) < fo->v[i].allocs || GET(e, frees) < fo->v[i].frees)
			return 0;
	}
	return 1;
}

int cli_diff_main(int argc, char **argv)
{
	struct cli_options o;
	const char *newcore = NULL;
	struct cli_profile p[2];
	struct an_stacks st[2];
	struct cli_fold fold[2];
	struct diff_row *rows = NULL;
	struct an_frame *fr = NULL;
	FILE *out = stdout;
	enum cli_fold_mode mode;
	int status = 1, loaded = 0, between;
	long n;

	memset(p, 0, sizeof(p));
	memset(st, 0, sizeof(st));
	memset(fold, 0, sizeof(fold));
	cli_parse_args(argc - 1, argv + 1, &o, &newcore);
	if (o.format != FMT_TEXT && o.format != FMT_JSON && o.format != FMT_FOLDED) {
		fputs("mprof-core: diff writes text, json or folded (see mprof-core --help)\n", stderr);
		return 2;
	}
	if (!o.raw && same_build(o.core, newcore) < 0)
		return 1;
	for (int k = 0; k < 2; k++) {
		if (k && o.raw)
			o.raw = newcore;   /* two dumps of one firmware, read as --elf's */
		else if (k)
			o.core = newcore;
		loaded = k + 1;   /* released below even when the load fails */
		if (cli_profile_load(&o, &p[k]) < 0)
			goto done;
		if (an_stacks_build(&p[k].in, &p[k].filter, &st[k]) < 0)
			goto oom;
	}
	/* folded output is keyed as the user asked; text and JSON tell call sites apart */
	mode = o.format == FMT_FOLDED && !o.folded_lines ? FOLD_NAMES : FOLD_LINES;
	for (int k = 0; k < 2; k++) {
		if (cli_fold_build(&p[k], &st[k], mode, &fold[k]) < 0)
			goto oom;
		if (p[0].have_stats && p[1].have_stats && add_stats(&p[k], mode, &fold[k]) < 0)
			goto oom;
	}
	between = stats_between(p, &fold[0], &fold[1]);
	if (!between && p[0].have_stats && p[1].have_stats && !o.quiet)
		fputs("mprof-core: note: OLD and NEW are not two moments of one process: "
		      "no allocations and frees in between\n", stderr);
	if ((n = rows_join(&o, &fold[0], &fold[1], between, &rows)) < 0 || !(fr = cli_fold_frames_alloc()))
		goto oom;
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "mprof-core: %s: %s\n", o.output, strerror(errno));
		out = stdout;
		goto done;
	}
	if (o.format == FMT_FOLDED) {   /* key order, as difffolded.pl writes it */
		for (long i = 0; i < n; i++)
			fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", rows[i].new ? rows[i].new->key :
				rows[i].old->key, w_of(&o, rows[i].old), w_of(&o, rows[i].new));
	} else {
		qsort(rows, (size_t)n, sizeof(rows[0]), row_cmp);
		if (o.format == FMT_JSON)
			diff_json(out, &o, p, st, rows, (size_t)n, between, fr);
		else
			diff_text(out, &o, p, st, rows, (size_t)n, between, fr);
	}
	for (int k = 0; k < 2; k++)
		cli_export_note_skipped(&o, &p[k], &st[k], k ? "diff (NEW)" : "diff (OLD)");
	status = 0;
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "mprof-core: error writing %s\n", o.output ? o.output : "the diff");
		status = 1;
	}
	goto done;
oom:
	fputs("mprof-core: out of memory\n", stderr);
done:
	if (out != stdout && fclose(out) != 0 && status == 0) {
		fprintf(stderr, "mprof-core: error writing %s\n", o.output);
		status = 1;
	}
	free(fr);
	free(rows);
	for (int k = 0; k < 2; k++) {
		cli_fold_release(&fold[k]);
		an_stacks_release(&st[k]);
		if (k < loaded)
			cli_profile_release(&p[k]);
	}
	return status;
}
