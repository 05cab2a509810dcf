/* fold.c - stacks as "folded" text, the key that --format folded, svg and diff
 * share: frames root first, joined by ';', allocator frames stripped as in the
 * stacks report, inlined frames as frames of their own, a stack cut at
 * HEAPANN_DEPTH under the root CLI_FOLD_CUT. Identical texts are
 * aggregated (two clusters can fold to one text), and the result is sorted so
 * that the output order is stable and stacks with a common prefix are adjacent. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define FOLD_MAX_FRAMES 4096

int cli_buf_add(struct cli_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return -1;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *ns;

		while (cap < b->len + n + 1)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (!ns) {
			b->oom = 1;
			return -1;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int cli_buf_str(struct cli_buf *b, const char *s)
{
	return cli_buf_add(b, s, strlen(s));
}

void cli_buf_release(struct cli_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/* Append s with the characters a folded line cannot hold replaced: ';' (the frame
 * separator) by ':', control characters (newline ends the line) by '?'. */
static void add_clean(struct cli_buf *b, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';' || c < 0x20 || c == 0x7f) {
			cli_buf_add(b, run, (size_t)(s - run));
			cli_buf_add(b, c == ';' ? ":" : "?", 1);
			run = s + 1;
		}
	}
	cli_buf_add(b, run, (size_t)(s - run));
}

void cli_fold_frame(struct cli_buf *b, const struct an_frame *fr, enum cli_fold_mode mode)
{
	char tmp[64], ln[16];

	if (fr->function) {
		add_clean(b, fr->function);
	} else if (fr->module) {
		add_clean(b, fmt_base(fr->module));
		snprintf(tmp, sizeof(tmp), "+0x%" PRIx64, fr->modoff);
		cli_buf_str(b, tmp);
	} else {
		snprintf(tmp, sizeof(tmp), "0x%" PRIx64, fr->addr);
		cli_buf_str(b, tmp);
	}
	if (mode == FOLD_NAMES || !fr->file)
		return;
	cli_buf_str(b, mode == FOLD_SPLIT ? "\x1f" : " (");
	add_clean(b, fmt_base(fr->file));
	snprintf(tmp, sizeof(tmp), "%s%s", fmt_line(ln, fr->line), mode == FOLD_SPLIT ? "" : ")");
	cli_buf_str(b, tmp);
}

int cli_fold_key(const struct cli_profile *p, uint32_t stack, uint32_t skip,
		 enum cli_fold_mode mode, struct an_frame *fr, struct cli_buf *b)
{
	size_t nf = an_frames_get(&p->in, stack, skip, fr, FOLD_MAX_FRAMES);

	b->len = 0;
	cli_buf_add(b, "", 0);
	if (nf > FOLD_MAX_FRAMES)
		nf = FOLD_MAX_FRAMES;
	if (!nf)
		cli_buf_str(b, CLI_FOLD_NO_FRAMES);
	else if (cli_stack_cut(p, stack))
		cli_buf_str(b, CLI_FOLD_CUT ";");   /* the unknown outer frames: the root */
	for (size_t k = nf; k-- > 0;) {   /* root first */
		cli_fold_frame(b, &fr[k], mode);
		if (k)
			cli_buf_add(b, ";", 1);
	}
	return b->oom ? -1 : 0;
}

struct an_frame *cli_fold_frames_alloc(void)
{
	return malloc(FOLD_MAX_FRAMES * sizeof(struct an_frame));
}

int cli_fold_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	/* ';' sorts before every other byte, so "a;b;c" comes right after "a;b" and
	 * before "a;b!": a frame's callees stay next to it */
	for (;; x++, y++) {
		unsigned cx = *x == ';' ? 1 : *x ? *x + 1u : 0;
		unsigned cy = *y == ';' ? 1 : *y ? *y + 1u : 0;

		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!cx)
			return 0;
	}
}

/* By key, then by stack and skip: equal keys merge into the entry of the lowest
 * stack whatever qsort does, so the representative frames are reproducible. */
static int entry_cmp(const void *a, const void *b)
{
	const struct cli_fold_entry *x = a, *y = b;
	int c = cli_fold_cmp(x->key, y->key);

	if (c)
		return c;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->skip < y->skip ? -1 : x->skip > y->skip;
}

void cli_fold_sort(struct cli_fold *f)
{
	size_t k = 0;

	if (!f->n)
		return;
	qsort(f->v, f->n, sizeof(f->v[0]), entry_cmp);
	/* merge equal keys into the first */
	for (size_t i = 1; i < f->n; i++) {
		if (!strcmp(f->v[k].key, f->v[i].key)) {
			f->v[k].bytes += f->v[i].bytes;
			f->v[k].blocks += f->v[i].blocks;
			f->v[k].allocs += f->v[i].allocs;
			f->v[k].frees += f->v[i].frees;
			f->v[k].unrecorded += f->v[i].unrecorded;
			free(f->v[i].key);
		} else {
			f->v[++k] = f->v[i];
		}
	}
	f->n = k + 1;
}

int cli_fold_push(struct cli_fold *f, const char *key, uint32_t stack, uint32_t skip)
{
	struct cli_fold_entry *e;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct cli_fold_entry *nv = realloc(f->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		f->v = nv;
		f->cap = cap;
	}
	e = &f->v[f->n];
	memset(e, 0, sizeof(*e));
	if (!(e->key = strdup(key)))
		return -1;
	e->stack = stack;
	e->skip = skip;
	f->n++;
	return 0;
}

int cli_fold_build(const struct cli_profile *p, const struct an_stacks *st,
		   enum cli_fold_mode mode, struct cli_fold *out)
{
	struct an_frame *fr = cli_fold_frames_alloc();
	struct cli_buf b = { 0 };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!fr)
		goto done;
	for (size_t i = 0; i < st->n; i++) {
		const struct an_stack *c = &st->v[i];

		if (cli_fold_key(p, c->stack, c->skip, mode, fr, &b) < 0 ||
		    cli_fold_push(out, b.s, c->stack, c->skip) < 0)
			goto done;
		out->v[out->n - 1].bytes = c->bytes;
		out->v[out->n - 1].blocks = c->blocks;
	}
	cli_fold_sort(out);
	rc = 0;
done:
	cli_buf_release(&b);
	free(fr);
	if (rc < 0)
		cli_fold_release(out);
	return rc;
}

struct cli_fold_entry *cli_fold_find(const struct cli_fold *f, const char *key)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cli_fold_cmp(f->v[mid].key, key);

		if (!c)
			return &f->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void cli_fold_release(struct cli_fold *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].key);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

void cli_export_note_skipped(const struct cli_options *o, const struct cli_profile *p,
			     const struct an_stacks *st, const char *what)
{
	char a[32], b[32];

	if (o->quiet)
		return;
	if (p->scan.ndamaged)
		fprintf(stderr, "mprof-core: note: %s leaves out %s damaged header%s (see --report=corruption)\n",
			what, fmt_num(a, p->scan.ndamaged), p->scan.ndamaged == 1 ? "" : "s");
	if (st->ignored_blocks)
		fprintf(stderr, "mprof-core: note: %s leaves out %s blocks, %s bytes (--ignore-fn)\n",
			what, fmt_num(a, st->ignored_blocks), fmt_num(b, st->ignored_bytes));
}
