/* report_corruption.c - the corruption report in text and JSON: every live block
 * whose guard is broken (how far it overflowed), every damaged header with what
 * could still be read of it, and the block just before it as the suspect, each
 * with its allocation stack. Also the stack printers that report_addr.c shares. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heapann_block.h"

#define MAX_FRAMES 1024

/* The frames of 'stack' without the allocator's; with trim, also without the
 * outermost frames that lie in no module: in a header whose END side was
 * overwritten (an underrun) those words are the damage, not return addresses.
 * Returns how many are in fr; *trimmed (may be NULL) gets how many were cut. */
static size_t frames_load(const struct cli_profile *p, uint32_t stack, int trim,
			  struct an_frame *fr, size_t *trimmed)
{
	size_t n = 0, keep;

	if (trimmed)
		*trimmed = 0;
	if (stack >= p->scan.nstacks)
		return 0;
	n = an_frames_get(&p->in, stack, an_alloc_skip(&p->in, &p->filter, stack), fr, MAX_FRAMES);
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	if (!trim || !p->in.sym)
		return n;
	for (keep = n; keep > 0 && !fr[keep - 1].module && !fr[keep - 1].function; keep--)
		;
	if (keep == 0)
		return n;   /* nothing is named at all: no evidence of damage */
	if (trimmed)
		*trimmed = n - keep;
	return keep;
}

static void stack_text(FILE *f, const struct cli_profile *p, uint32_t stack, const char *indent,
		       int trim)
{
	struct an_frame fr[MAX_FRAMES];
	size_t cut, n = frames_load(p, stack, trim, fr, &cut);

	if (!n)
		fprintf(f, "%s(no frames recorded)\n", indent);
	for (size_t i = 0; i < n; i++) {
		fputs(indent, f);
		report_frame_text(f, &fr[i]);
	}
	if (cut)
		fprintf(f, "%s(%zu outer frame%s overwritten)\n", indent, cut, cut == 1 ? "" : "s");
	else
		report_cut_text(f, p, stack, indent);
}

/* Writes the array; returns how many outer frames were cut (trim). */
static size_t stack_json(struct json *j, const struct cli_profile *p, uint32_t stack, int trim)
{
	struct an_frame fr[MAX_FRAMES];
	size_t cut, n = frames_load(p, stack, trim, fr, &cut);

	report_frames_json(j, fr, n);
	return cut;
}

void report_stack_text(FILE *f, const struct cli_profile *p, uint32_t stack, const char *indent)
{
	stack_text(f, p, stack, indent, 0);
}

void report_stack_json(struct json *j, const struct cli_profile *p, uint32_t stack)
{
	stack_json(j, p, stack, 0);
	report_cut_json(j, p, stack);
}

/* The frames of a neighbour found by its END word only (an_guard_hit.lost_frame). */
static size_t lost_frames(const struct cli_profile *p, const struct an_guard_hit *g,
			  struct an_frame *fr)
{
	size_t n = 0;

	for (uint32_t i = 0; i < g->nlost_frames && n < MAX_FRAMES; i++)
		n += an_frames_at(&p->in, g->lost_frame[i], fr + n, MAX_FRAMES - n);
	return n;
}

static const char *kind_name(uint32_t k)
{
	switch (k) {
	case CP_DMG_CHECK: return "check";
	case CP_DMG_END: return "end";
	case CP_DMG_START: return "start";
	case CP_DMG_VERSION: return "version";
	case CP_DMG_BOUNDS: return "bounds";
	}
	return "unknown";
}

static const char *kind_text(uint32_t k)
{
	switch (k) {
	case CP_DMG_CHECK: return "check word or fields wrong";
	case CP_DMG_END: return "end magic overwritten";
	case CP_DMG_START: return "start magic overwritten, found by its end word";
	case CP_DMG_VERSION: return "unknown format version";
	case CP_DMG_BOUNDS: return "size or depth out of bounds, or not fully dumped";
	}
	return "damaged";
}

static const char *state_name(const struct cp_block *b)
{
	return b->state == CP_LIVE ? "live" : "freed";
}

/* The freed block whose header still names sequence number seq (the last block
 * libheapann found with a broken guard at run time), or NULL. A header the
 * allocator partly reused (CP_HDR_UNVERIFIED) is taken only when no verified one
 * has that number. */
static const struct cp_block *freed_by_seq(const struct cp_scan *sc, uint64_t seq)
{
	const struct cp_block *best = NULL;

	if (!seq)
		return NULL;
	for (size_t i = 0; i < sc->nblocks; i++) {
		const struct cp_block *b = &sc->blocks[i];

		if (b->state != CP_FREED || b->seq != seq)
			continue;
		if (!(b->flags & CP_HDR_UNVERIFIED))
			return b;
		if (!best)
			best = b;
	}
	return best;
}

/* What libheapann counted while the program ran: text. */
static void runtime_text(FILE *f, const struct cli_profile *p, const struct an_corrupt *c)
{
	const struct cp_block *b;
	char a[32];

	if (!c->runtime_guards && !c->runtime_bad_frees)
		return;
	fprintf(f, "\nlibheapann found at run time: %" PRIu64 " broken guard%s (checked at free or "
		"realloc), %" PRIu64 " free%s or realloc%s of a freed or damaged block\n",
		c->runtime_guards, c->runtime_guards == 1 ? "" : "s", c->runtime_bad_frees,
		c->runtime_bad_frees == 1 ? "" : "s", c->runtime_bad_frees == 1 ? "" : "s");
	if (!c->runtime_guards)
		return;
	b = freed_by_seq(&p->scan, c->runtime_last_seq);
	if (!b) {
		fprintf(f, "last broken guard: block seq %" PRIu64 ", freed since; its header is no "
			"longer in the image\n", c->runtime_last_seq);
		return;
	}
	fprintf(f, "last broken guard: block 0x%" PRIx64 " (%s bytes, seq %" PRIu64 "), freed since; "
		"allocated at:\n", b->user, fmt_num(a, b->size), b->seq);
	stack_text(f, p, b->stack, "        ", 0);
}

int report_corruption_text(FILE *f, const struct cli_profile *p, const struct an_corrupt *c)
{
	const struct cp_scan *sc = &p->scan;
	char a[32], b2[32];

	if (!an_corrupt_found(c))
		return 0;
	fprintf(f, "\nheap corruption: %zu block%s overflowed %s guard, %zu damaged header%s\n",
		c->nguards, c->nguards == 1 ? "" : "s", c->nguards == 1 ? "its" : "their",
		c->ndamaged, c->ndamaged == 1 ? "" : "s");
	for (size_t i = 0; i < c->nguards; i++) {
		const struct an_guard_hit *g = &c->guards[i];
		const struct cp_block *b = &sc->blocks[g->block];
		uint64_t end = b->user + b->size;

		fprintf(f, "\noverflow: block 0x%" PRIx64 " (%s bytes, seq %" PRIu64 ") wrote past its end: ",
			b->user, fmt_num(a, b->size), b->seq);
		if (!g->whole_guard) {
			fprintf(f, "%u of %u guard bytes differ, the overrun is %" PRIu64 " byte%s\n",
				b->guard_diff, b->guard_len, g->overrun, g->overrun == 1 ? "" : "s");
		} else {
			fprintf(f, "%s%u guard bytes differ, the overrun is at least %" PRIu64 " bytes\n",
				b->guard_diff == b->guard_len ? "all " : "", b->guard_diff, g->overrun);
			if (g->next_damaged != AN_NONE && g->reach > end)
				fprintf(f, "  the next header, %s bytes after the guard at 0x%" PRIx64
					", is damaged up to 0x%" PRIx64 ": at least %s bytes if one overflow\n",
					fmt_num(a, g->next_header - end - b->guard_len), g->next_header,
					g->reach, fmt_num(b2, g->reach - end));
			else if (g->next_damaged != AN_NONE)
				fprintf(f, "  the next header, %s bytes after the guard at 0x%" PRIx64 ", is damaged\n",
					fmt_num(a, g->next_header - end - b->guard_len), g->next_header);
			else if (g->next_block != AN_NONE) {
				fprintf(f, "  the next header found, %s bytes after the guard at 0x%" PRIx64
					", is intact: block 0x%" PRIx64 " (seq %" PRIu64 ")\n",
					fmt_num(a, g->next_header - end - b->guard_len), g->next_header,
					sc->blocks[g->next_block].user, sc->blocks[g->next_block].seq);
				if (g->nlost == 1)
					fprintf(f, "  the allocation between them, seq %" PRIu64 ", is found nowhere"
						" in the image: perhaps the neighbour whose header this overflow"
						" erased\n", g->first_lost);
				else if (g->nlost)
					fprintf(f, "  %" PRIu64 " allocations between them (seq %" PRIu64 " and on)"
						" are found nowhere in the image: perhaps one is the neighbour"
						" whose header this overflow erased\n", g->nlost, g->first_lost);
			} else {
				fputs("  no annotated header follows it in the same memory segment\n", f);
			}
			if (g->lost_user) {
				struct an_frame fr[MAX_FRAMES];
				size_t nf = lost_frames(p, g, fr);

				fprintf(f, "  the next block, 0x%" PRIx64 ", is known only by its end word: the"
					" start of its header at 0x%" PRIx64 " is overwritten (at least %s bytes"
					" if one overflow)\n", g->lost_user, g->lost_hdr,
					fmt_num(a, g->lost_hdr + HEAPANN_W_DEPTH * p->img->wsize + 1 - end));
				fputs(nf ? "    it was allocated at (the outer frames that survive):\n" :
				      "    none of its frames survives\n", f);
				for (size_t k = 0; k < nf; k++) {
					fputs("        ", f);
					report_frame_text(f, &fr[k]);
				}
			}
		}
		fputs("    allocated at:\n", f);
		report_stack_text(f, p, b->stack, "        ");
	}
	for (size_t i = 0; i < c->ndamaged; i++) {
		const struct an_damage_hit *h = &c->damaged[i];
		const struct cp_damage *d = &sc->damaged[h->damage];

		fprintf(f, "\ndamaged header at 0x%" PRIx64 " (%s)", d->hdr, kind_text(d->kind));
		if (d->known & CP_KNOWN_USER)
			fprintf(f, ": block 0x%" PRIx64, d->user);
		if (h->have_size)
			fprintf(f, ", %s bytes, seq %" PRIu64 "%s", fmt_num(a, h->size), h->seq,
				h->recovered ? " (its check word still proves them)" : "");
		fputc('\n', f);
		if (d->known & CP_KNOWN_FRAMES) {
			fputs("    allocated at (as far as the header could be read):\n", f);
			stack_text(f, p, d->stack, "        ", d->kind == CP_DMG_END);
		} else {
			fputs("    its allocation stack is overwritten\n", f);
		}
		if (h->likely == AN_LIKELY_OVERFLOW)
			fputs("  likely: an overflow of the block just before it (its whole guard differs)\n", f);
		else if (h->likely == AN_LIKELY_UNDERRUN)
			fputs("  likely: an underrun of this block (only the end of its header is wrong and"
			      " the block before has an intact guard)\n", f);
		if (h->suspect != AN_NONE) {
			const struct cp_block *s = &sc->blocks[h->suspect];

			fprintf(f, "  suspect: %s block 0x%" PRIx64 " (%s bytes, seq %" PRIu64 ") just before it",
				state_name(s), s->user, fmt_num(a, s->size), s->seq);
			if (h->gap >= 0)
				fprintf(f, ", %s bytes between its %s and this header", fmt_num(a, (uint64_t)h->gap),
					s->guard_len ? "guard" : "end");
			if (s->state == CP_LIVE && !s->guard_len)
				fputs("; it has no guard (HEAPANN_GUARD=0): an overflow of it leaves no "
				      "trace there", f);
			else if (s->state == CP_LIVE)
				fprintf(f, "; its guard is %s", (s->flags & CP_GUARD_BROKEN) ? "broken" :
					(s->flags & CP_GUARD_MISSING) ? "not dumped" : "intact");
			fputs("\n    allocated at:\n", f);
			report_stack_text(f, p, s->stack, "        ");
		} else if (h->suspect_damage != AN_NONE) {
			const struct cp_damage *s = &sc->damaged[h->suspect_damage];

			fprintf(f, "  suspect: block 0x%" PRIx64 " just before it, whose own header at 0x%" PRIx64
				" is damaged\n", s->user, s->hdr);
			if (s->known & CP_KNOWN_FRAMES) {
				fputs("    allocated at:\n", f);
				report_stack_text(f, p, s->stack, "        ");
			}
		} else {
			fputs("  no block found before it in the same memory segment\n", f);
		}
	}
	runtime_text(f, p, c);
	if (c->nstack_copies)
		fprintf(f, "\n(%zu header-like word%s on thread stacks ignored: stale copies, not heap damage)\n",
			c->nstack_copies, c->nstack_copies == 1 ? "" : "s");
	return 0;
}

void report_block_json_id(struct json *j, const struct cp_block *b)
{
	json_key(j, "address");
	json_hex(j, b->user);
	json_key(j, "header");
	json_hex(j, cp_block_hdr(b));
	json_key(j, "size");
	json_u64(j, b->size);
	json_key(j, "seq");
	json_u64(j, b->seq);
	json_key(j, "state");
	json_str(j, state_name(b));
}

static void block_json(struct json *j, const struct cli_profile *p, const struct cp_block *b)
{
	report_block_json_id(j, b);
	json_key(j, "frames");
	report_stack_json(j, p, b->stack);
}

int report_corruption_json(struct json *j, const struct cli_profile *p, const struct an_corrupt *c)
{
	const struct cp_scan *sc = &p->scan;

	json_key(j, "corruption");
	json_obj_begin(j);
	json_key(j, "found");
	json_bool(j, an_corrupt_found(c));
	json_key(j, "stack_copies_ignored");
	json_u64(j, c->nstack_copies);
	json_key(j, "guards");
	json_arr_begin(j);
	for (size_t i = 0; i < c->nguards; i++) {
		const struct an_guard_hit *g = &c->guards[i];
		const struct cp_block *b = &sc->blocks[g->block];
		uint64_t end = b->user + b->size;
		int reach = g->next_damaged != AN_NONE && g->reach > end;

		json_obj_begin(j);
		block_json(j, p, b);
		json_key(j, "guard_len");
		json_u64(j, b->guard_len);
		json_key(j, "guard_bytes_differ");
		json_u64(j, b->guard_diff);
		json_key(j, "overrun");
		json_u64(j, g->overrun);
		json_key(j, "overrun_exact");
		json_bool(j, !g->whole_guard);
		json_opt_hex(j, "next_header", g->next_header != 0, g->next_header);
		json_opt_hex(j, "next_block", g->next_block != AN_NONE,
			g->next_block != AN_NONE ? sc->blocks[g->next_block].user : 0);
		json_opt_hex(j, "next_damaged", g->next_damaged != AN_NONE,
			g->next_damaged != AN_NONE ? sc->damaged[g->next_damaged].hdr : 0);
		json_key(j, "lost_seqs");
		json_u64(j, g->nlost);
		json_opt_u64(j, "first_lost_seq", g->nlost != 0, g->first_lost);
		json_key(j, "lost_neighbour");
		if (g->lost_user) {
			struct an_frame fr[MAX_FRAMES];
			size_t nf = lost_frames(p, g, fr);

			json_obj_begin(j);
			json_key(j, "address");
			json_hex(j, g->lost_user);
			json_key(j, "header");
			json_hex(j, g->lost_hdr);
			json_key(j, "frames");
			report_frames_json(j, fr, nf);
			json_obj_end(j);
		} else {
			json_null(j);
		}
		json_opt_hex(j, "reach", reach, g->reach);
		json_opt_u64(j, "overrun_if_contiguous", reach, g->reach - end);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "damaged");
	json_arr_begin(j);
	for (size_t i = 0; i < c->ndamaged; i++) {
		const struct an_damage_hit *h = &c->damaged[i];
		const struct cp_damage *d = &sc->damaged[h->damage];

		json_obj_begin(j);
		json_key(j, "header");
		json_hex(j, d->hdr);
		json_key(j, "kind");
		json_str(j, kind_name(d->kind));
		json_key(j, "first_bad_word");
		json_u64(j, d->first_bad);
		json_opt_hex(j, "address", d->known & CP_KNOWN_USER, d->user);
		json_opt_u64(j, "size", h->have_size, h->size);
		json_opt_u64(j, "seq", h->have_size, h->seq);
		json_key(j, "size_recovered");
		json_bool(j, h->recovered);
		json_key(j, "frames");
		if (d->known & CP_KNOWN_FRAMES) {
			size_t cut = stack_json(j, p, d->stack, d->kind == CP_DMG_END);

			json_key(j, "frames_overwritten");
			json_u64(j, cut);
		} else {
			json_null(j);
		}
		json_key(j, "likely");
		json_str(j, h->likely == AN_LIKELY_OVERFLOW ? "overflow" :
			 h->likely == AN_LIKELY_UNDERRUN ? "underrun" : NULL);
		json_key(j, "suspect");
		if (h->suspect != AN_NONE) {
			const struct cp_block *s = &sc->blocks[h->suspect];

			json_obj_begin(j);
			block_json(j, p, s);
			json_key(j, "guard_broken");
			json_bool(j, (s->flags & CP_GUARD_BROKEN) != 0);
			json_key(j, "gap");
			json_i64(j, h->gap);
			json_obj_end(j);
		} else if (h->suspect_damage != AN_NONE) {
			const struct cp_damage *s = &sc->damaged[h->suspect_damage];

			json_obj_begin(j);
			json_key(j, "address");
			json_hex(j, s->user);
			json_key(j, "header");
			json_hex(j, s->hdr);
			json_opt_u64(j, "size", s->known & CP_KNOWN_SIZE, s->size);
			json_opt_u64(j, "seq", s->known & CP_KNOWN_SEQ, s->seq);
			json_key(j, "state");
			json_str(j, "damaged");
			json_key(j, "frames");
			if (s->known & CP_KNOWN_FRAMES)
				report_stack_json(j, p, s->stack);
			else
				json_null(j);
			json_key(j, "gap");
			json_i64(j, h->gap);
			json_obj_end(j);
		} else {
			json_null(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	/* damage libheapann counted while the program ran (its blocks are gone) */
	json_key(j, "runtime");
	json_obj_begin(j);
	json_key(j, "guards");
	json_u64(j, c->runtime_guards);
	json_key(j, "bad_frees");
	json_u64(j, c->runtime_bad_frees);
	json_key(j, "last_guard_seq");
	if (c->runtime_guards)
		json_u64(j, c->runtime_last_seq);
	else
		json_null(j);
	json_key(j, "last_guard_block");
	{
		const struct cp_block *b = c->runtime_guards ?
			freed_by_seq(sc, c->runtime_last_seq) : NULL;

		if (b) {
			json_obj_begin(j);
			block_json(j, p, b);
			json_obj_end(j);
		} else {
			json_null(j);
		}
	}
	json_obj_end(j);
	json_obj_end(j);
	return 0;
}
