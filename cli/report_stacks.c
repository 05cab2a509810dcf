/* report_stacks.c - the default report: live blocks clustered by allocation stack,
 * largest first, in text and JSON. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"

#define MAX_FRAMES 4096

void report_frame_text(FILE *f, const struct an_frame *fr)
{
	const char *mod = fmt_base(fr->module);
	char ln[16];

	if (fr->function)
		fputs(fr->function, f);
	else
		fprintf(f, "0x%" PRIx64, fr->addr);
	if (fr->file)
		fprintf(f, " (%s%s)", fmt_base(fr->file), fmt_line(ln, fr->line));
	if (fr->inlined)
		fputs(" [inlined]", f);
	if (mod && fr->function)
		fprintf(f, " [%s]", mod);
	else if (mod)
		fprintf(f, " [%s+0x%" PRIx64 "]", mod, fr->modoff);
	fputc('\n', f);
}

void report_frame_json(struct json *j, const struct an_frame *fr)
{
	json_obj_begin(j);
	json_key(j, "addr");
	json_hex(j, fr->addr);
	json_key(j, "function");
	json_str(j, fr->function);
	json_key(j, "file");
	json_str(j, fr->file);
	json_opt_u64(j, "line", fr->line != 0, fr->line);
	json_key(j, "module");
	json_str(j, fr->module);
	json_key(j, "offset");
	json_hex(j, fr->modoff);
	if (fr->inlined) {
		json_key(j, "inlined");
		json_bool(j, 1);
	}
	json_obj_end(j);
}

void report_frames_json(struct json *j, const struct an_frame *fr, size_t n)
{
	json_arr_begin(j);
	for (size_t k = 0; k < n; k++)
		report_frame_json(j, &fr[k]);
	json_arr_end(j);
}

void report_cut_text(FILE *f, const struct cli_profile *p, uint32_t stack, const char *indent)
{
	if (cli_stack_cut(p, stack))
		fprintf(f, "%s(More stack frames follow: cut at HEAPANN_DEPTH=%" PRIu32 ")\n", indent,
			p->scan.stacks[stack].depth);
}

void report_cut_json(struct json *j, const struct cli_profile *p, uint32_t stack)
{
	json_key(j, "cut");
	json_bool(j, cli_stack_cut(p, stack));
}

size_t cli_stacks_shown(const struct cli_options *o, const struct an_stacks *st, long default_top)
{
	size_t n = st->n;
	long top = o->top >= 0 ? o->top : default_top;

	if (top > 0 && (size_t)top < n)
		n = (size_t)top;
	if (o->threshold > 0 && st->bytes) {
		size_t k = 0;

		while (k < n && 100.0 * st->v[k].bytes / st->bytes >= o->threshold)
			k++;
		n = k;
	}
	return n;
}

const char *cli_rest_hint(const struct cli_options *o)
{
	return o->threshold > 0 ? "--top 0 --threshold 0 show all" : "--top 0 shows all";
}

static void sizes_text(FILE *f, const struct an_stack *c)
{
	char a[32], b[32];

	if (c->ndistinct_sizes == 1) {
		fprintf(f, "size %s", fmt_num(a, c->min_size));
		return;
	}
	fprintf(f, "sizes %s..%s, mostly ", fmt_num(a, c->min_size), fmt_num(b, c->max_size));
	for (uint32_t i = 0; i < c->ncommon; i++)
		fprintf(f, "%s%s x%" PRIu64, i ? ", " : "", fmt_num(a, c->common[i].size),
			c->common[i].count);
	if (c->ndistinct_sizes > c->ncommon)
		fprintf(f, " (%u distinct)", c->ndistinct_sizes);
}

int report_stacks_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st)
{
	struct an_frame *fr = malloc(MAX_FRAMES * sizeof(*fr));
	size_t n = cli_stacks_shown(o, st, 25);
	uint64_t rest_bytes = 0, rest_blocks = 0;
	char a[32], b[32];

	if (!fr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct an_stack *c = &st->v[i];
		size_t nf = an_frames_get(&p->in, c->stack, c->skip, fr, MAX_FRAMES);

		fprintf(f, "\n#%zu: %s bytes (%.2f%%) in %s block%s, ", i + 1, fmt_num(a, c->bytes),
			st->bytes ? 100.0 * c->bytes / st->bytes : 0.0, fmt_num(b, c->blocks),
			c->blocks == 1 ? "" : "s");
		sizes_text(f, c);
		fputc('\n', f);
		if (nf > MAX_FRAMES)
			nf = MAX_FRAMES;
		if (!nf)
			fputs("    (no frames recorded: allocated before the unwinder was ready, or HEAPANN_UNWIND=none)\n", f);
		for (size_t k = 0; k < nf; k++) {
			fputs("    ", f);
			report_frame_text(f, &fr[k]);
		}
		report_cut_text(f, p, c->stack, "    ");
	}
	for (size_t i = n; i < st->n; i++) {
		rest_bytes += st->v[i].bytes;
		rest_blocks += st->v[i].blocks;
	}
	if (n < st->n)
		fprintf(f, "\n... %zu more stacks with %s bytes in %s blocks (%s)\n",
			st->n - n, fmt_num(a, rest_bytes), fmt_num(b, rest_blocks), cli_rest_hint(o));
	free(fr);
	return 0;
}

int report_stacks_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st)
{
	struct an_frame *fr = malloc(MAX_FRAMES * sizeof(*fr));
	size_t n = cli_stacks_shown(o, st, 0);

	if (!fr)
		return -1;
	json_key(j, "stacks");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct an_stack *c = &st->v[i];
		size_t nf = an_frames_get(&p->in, c->stack, c->skip, fr, MAX_FRAMES);

		if (nf > MAX_FRAMES)
			nf = MAX_FRAMES;
		json_obj_begin(j);
		json_key(j, "blocks");
		json_u64(j, c->blocks);
		json_key(j, "bytes");
		json_u64(j, c->bytes);
		json_key(j, "percent");
		json_dbl(j, st->bytes ? 100.0 * c->bytes / st->bytes : 0.0);
		json_key(j, "min_size");
		json_u64(j, c->min_size);
		json_key(j, "max_size");
		json_u64(j, c->max_size);
		json_key(j, "sizes");
		json_arr_begin(j);
		for (uint32_t k = 0; k < c->ncommon; k++) {
			json_obj_begin(j);
			json_key(j, "size");
			json_u64(j, c->common[k].size);
			json_key(j, "count");
			json_u64(j, c->common[k].count);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_key(j, "frames");
		report_frames_json(j, fr, nf);
		report_cut_json(j, p, c->stack);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (o->blocks) {
		const struct cp_scan *sc = &p->scan;

		json_key(j, "block_list");
		json_arr_begin(j);
		for (size_t i = 0; i < sc->nblocks; i++) {
			const struct cp_block *b = &sc->blocks[i];

			uint32_t c = an_block_cluster(st, sc, i);

			if (c == UINT32_MAX)
				continue;
			json_obj_begin(j);
			json_key(j, "address");
			json_hex(j, b->user);
			json_key(j, "size");
			json_u64(j, b->size);
			json_key(j, "seq");
			json_u64(j, b->seq);
			json_opt_u64(j, "stack", c < n, c);
			json_obj_end(j);
		}
		json_arr_end(j);
	}
	free(fr);
	return 0;
}
