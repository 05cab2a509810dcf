/* report_addr.c - --addr ADDR: who owns an address. A block's data, header or
 * guard (with its allocation stack), a freed block, heap memory between blocks
 * (with both neighbours), a module's variable or function as symbol+offset, a
 * thread's stack or thread-local storage, or memory the image does not hold.
 * Text and JSON.
 *
 * The pure classification is analysis/addr.c; here symbols refine "between" and
 * "other" into "module" (a symbol that holds no block wins over "between": the
 * heap of a firmware is often one static array). */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "reach.h"

/* One address, classified and named. */
struct addr_info {
	struct an_addr a;
	struct cli_symref sym;
	int have_sym;          /* cli_datasym found a module */
	struct cli_tlsref tls; /* what == AN_ADDR_TLS: whose, which variable */
};

/* What the answers share: the naming session, opened at the first address that
 * needs it, and the block typer over it. */
struct addr_ctx {
	const struct cli_options *o;
	const struct cli_profile *p;
	struct cli_datasym *ds;
	int ds_tried;
	struct cli_typer *ty;
};

/* The naming session of c, opened on first use (a note when there is none). */
static struct cli_datasym *ctx_ds(struct addr_ctx *c)
{
	return cli_datasym_lazy(c->o, c->p->img, &c->ds, &c->ds_tried, "--addr");
}

/* The C++ dynamic type of block b (a live one), or NULL. */
static const char *ctx_type(struct addr_ctx *c, const struct cp_block *b)
{
	if (b->state != CP_LIVE)
		return NULL;
	if (!c->ty && ctx_ds(c))
		c->ty = cli_typer_new(c->p, c->ds);
	return cli_typer_block(c->ty, b);
}

static void ctx_release(struct addr_ctx *c)
{
	cli_typer_free(c->ty);
	cli_datasym_free(c->ds);
}

/* Is block bi (AN_NONE: none) in [lo, hi)? */
static int block_in(const struct cli_profile *p, size_t bi, uint64_t lo, uint64_t hi)
{
	const struct cp_block *b;

	if (bi == AN_NONE)
		return 0;
	b = &p->scan.blocks[bi];
	return b->user >= lo && b->user < hi;
}

static int block_in_sym(const struct cli_profile *p, size_t bi, const struct cli_symref *s)
{
	return block_in(p, bi, s->start, s->start + s->size);
}

/* Can an address of img be a thread's TLS (cli_datasym_tls): a core with the
 * thread pointer of some thread known (x86-64)? */
static int tls_possible(const struct cp_image *img)
{
	uint64_t tp;

	if (img->kind != CP_KIND_CORE)
		return 0;
	for (size_t t = 0; t < img->nthreads; t++)
		if (an_thread_pointer(img, t, &tp) == 0)
			return 1;
	return 0;
}

static void addr_resolve(struct addr_ctx *c, uint64_t addr, struct addr_info *ai)
{
	const struct cli_profile *p = c->p;
	struct an_addr *a = &ai->a;
	struct cli_datasym *ds;

	an_addr_classify(p->img, &p->scan, addr, a);
	ai->have_sym = 0;
	/* a raw dump holds RAM only: an address outside it may still be the ELF's
	 * (code, constants in flash), which names it */
	if (a->what != AN_ADDR_BETWEEN && a->what != AN_ADDR_OTHER && a->what != AN_ADDR_NOT_DUMPED &&
	    a->what != AN_ADDR_STACK && !(a->what == AN_ADDR_UNMAPPED && p->img->kind == CP_KIND_RAW))
		return;
	/* a stack address needs symbols only to tell a thread's TLS on its stack,
	 * or, in a core without a load map (a board's), a variable of the
	 * program in the one segment that holds its stack (below) */
	if (a->what == AN_ADDR_STACK && !tls_possible(p->img) && p->img->nfiles)
		return;
	ds = ctx_ds(c);
	/* a thread's static TLS: the main thread's in an anonymous mapping ("other"),
	 * the others' at the top of their stack mapping */
	if (a->what != AN_ADDR_NOT_DUMPED && cli_datasym_tls(ds, p->img, addr, &ai->tls)) {
		a->what = AN_ADDR_TLS;
		return;
	}
	if (cli_datasym(ds, addr, &ai->sym) < 0)
		return;
	/* "stack" only says the address shares a segment with a thread's stack
	 * pointer: in a core without a load map (qemu-system's dump of a board's
	 * RAM) .data, .bss, heap and stack are one segment, and a variable of the
	 * program is no stack */
	if (a->what == AN_ADDR_STACK && !ai->sym.name)
		return;
	ai->have_sym = 1;
	if (a->what == AN_ADDR_UNMAPPED)
		a->what = AN_ADDR_NOT_DUMPED;
	if (a->what == AN_ADDR_NOT_DUMPED)
		return;
	if (a->what == AN_ADDR_OTHER ||
	    (ai->sym.name && !block_in_sym(p, a->prev, &ai->sym) && !block_in_sym(p, a->next, &ai->sym)))
		a->what = AN_ADDR_MODULE;
	/* a raw dump's .data or .bss where no symbol reaches (padding, a stripped
	 * variable): the module's too, unless blocks lie in that span (a heap
	 * the linker placed in a section of its own) */
	else if (!ai->sym.name && ai->sym.section &&
		 !block_in(p, a->prev, ai->sym.gap_lo, ai->sym.gap_hi) &&
		 !block_in(p, a->next, ai->sym.gap_lo, ai->sym.gap_hi))
		a->what = AN_ADDR_MODULE;
}

static const char *part_name(enum an_addr_part part)
{
	switch (part) {
	case AN_PART_PAD: return "pad";
	case AN_PART_HEADER: return "header";
	case AN_PART_DATA: return "data";
	case AN_PART_GUARD: return "guard";
	case AN_PART_NONE: break;
	}
	return NULL;
}

/* ---- text ---- */

/* "block ADDR (N bytes, seq S)", with its C++ dynamic type when it has one */
static void block_line(FILE *f, struct addr_ctx *c, const struct cp_block *b)
{
	const char *type = ctx_type(c, b);
	char a[32];

	fprintf(f, "block 0x%" PRIx64 " (%s bytes, seq %" PRIu64 "%s%s)", b->user, fmt_num(a, b->size),
		b->seq, type ? ", type " : "", type ? type : "");
}

static void sym_text(FILE *f, const struct cli_symref *s)
{
	if (s->name)
		fprintf(f, "%s+0x%" PRIx64 " (%s of %" PRIu64 " bytes) ", s->name, s->offset,
			s->is_func ? "function" : "variable", s->size);
	else if (s->section && s->before && s->before_is_label)   /* a label: no end to be past */
		fprintf(f, "%s+0x%" PRIx64 " in %s (no symbol covers it) ", s->before, s->before_offset,
			s->section);
	else if (s->section && s->before)   /* gdb's 'info symbol': "NAME + OFF in section SEC" */
		fprintf(f, "%s+0x%" PRIx64 " in %s, past the end of that %s of %" PRIu64
			" bytes (no symbol covers it) ", s->before, s->before_offset, s->section,
			s->before_is_func ? "function" : "variable", s->before_size);
	else if (s->section)
		fprintf(f, "%s+0x%" PRIx64 " (no symbol before it in the section) ", s->section,
			s->sec_offset);
	fprintf(f, "in %s+0x%" PRIx64, fmt_base(s->module), s->modoff);
}

static void addr_text(FILE *f, struct addr_ctx *c, const struct addr_info *ai)
{
	const struct cli_profile *p = c->p;
	const struct an_addr *a = &ai->a;
	const struct cp_scan *sc = &p->scan;
	const struct cp_block *b = a->block != AN_NONE ? &sc->blocks[a->block] : NULL;
	char n1[32];

	fprintf(f, "\naddress 0x%" PRIx64 ": ", a->addr);
	switch (a->what) {
	case AN_ADDR_BLOCK:
		if (b) {
			fprintf(f, "%s bytes into live ", fmt_num(n1, a->offset));
			block_line(f, c, b);
			fputs("\n    allocated at:\n", f);
			report_stack_text(f, p, b->stack, "        ");
		} else {
			const struct cp_damage *d = &sc->damaged[a->damage];

			fprintf(f, "%s bytes into block 0x%" PRIx64, fmt_num(n1, a->offset), d->user);
			if (a->have_size)
				fprintf(f, " (%" PRIu64 " bytes, seq %" PRIu64 ")", a->size, a->seq);
			else
				fputs(" (size unknown)", f);
			fprintf(f, " whose header at 0x%" PRIx64 " is damaged\n", d->hdr);
			if (d->known & CP_KNOWN_FRAMES) {
				fputs("    allocated at (as far as the header could be read):\n", f);
				report_stack_text(f, p, d->stack, "        ");
			}
		}
		break;
	case AN_ADDR_HEADER:
		if (b) {
			if (a->part == AN_PART_PAD)
				fprintf(f, "in the alignment pad before the header of ");
			else
				fprintf(f, "%s bytes into the header of ", fmt_num(n1, a->offset));
			block_line(f, c, b);
			fputs("\n    allocated at:\n", f);
			report_stack_text(f, p, b->stack, "        ");
		} else {
			const struct cp_damage *d = &sc->damaged[a->damage];

			fprintf(f, "%s bytes into the damaged header at 0x%" PRIx64, fmt_num(n1, a->offset), d->hdr);
			if (d->known & CP_KNOWN_USER)
				fprintf(f, " of block 0x%" PRIx64, d->user);
			fputc('\n', f);
			if (d->known & CP_KNOWN_FRAMES) {
				fputs("    allocated at (as far as the header could be read):\n", f);
				report_stack_text(f, p, d->stack, "        ");
			}
		}
		break;
	case AN_ADDR_GUARD:
		fprintf(f, "%s byte%s past the end of ", fmt_num(n1, a->offset), a->offset == 1 ? "" : "s");
		block_line(f, c, b);
		fprintf(f, ", in its %u-byte guard: a write here overflows the block by at least %" PRIu64
			" bytes; ", b->guard_len, a->offset + 1);
		if (b->flags & CP_GUARD_BROKEN)
			fprintf(f, "its guard is broken (%u bytes differ, overrun %u)\n", b->guard_diff, b->overrun);
		else
			fputs("its guard is intact\n", f);
		fputs("    allocated at:\n", f);
		report_stack_text(f, p, b->stack, "        ");
		break;
	case AN_ADDR_FREED:
		if (a->part == AN_PART_DATA)
			fprintf(f, "%s bytes into freed ", fmt_num(n1, a->offset));
		else
			fprintf(f, "in the %s of freed ", part_name(a->part));
		block_line(f, c, b);
		fputs(b->flags & CP_HDR_UNVERIFIED ?
		      " (the allocator reused the start of its header: size and seq as read)\n" : "\n", f);
		fputs("    allocated at (before it was freed):\n", f);
		report_stack_text(f, p, b->stack, "        ");
		break;
	case AN_ADDR_BETWEEN:
		/* a raw dump has no stack pointer: past the last block of a
		 * firmware's RAM is as often its stack as its heap */
		fputs(p->img->kind == CP_KIND_RAW ? "memory in no annotated block (heap, or a stack: "
		      "a raw dump holds no stack pointer)\n" : "heap memory in no annotated block\n", f);
		if (a->prev != AN_NONE) {
			const struct cp_block *x = &sc->blocks[a->prev];

			fprintf(f, "  before it, %s bytes after its end: %s ",
				fmt_num(n1, a->addr - (x->user + x->size)), x->state == CP_LIVE ? "live" : "freed");
			block_line(f, c, x);
			/* an overflow that ran through the whole guard may have gone on
			 * to here, erasing the header of a block that held this address */
			if (x->state == CP_LIVE && (x->flags & CP_GUARD_BROKEN) && x->guard_len &&
			    x->overrun == x->guard_len)
				fputs(", whose overflow ran past its guard and may have written here "
				      "(over a neighbour's header: see the corruption report)", f);
			fputs("\n    allocated at:\n", f);
			report_stack_text(f, p, x->stack, "        ");
		}
		if (a->next != AN_NONE) {
			const struct cp_block *x = &sc->blocks[a->next];

			fprintf(f, "  after it, %s bytes before its header: %s ",
				fmt_num(n1, cp_block_start(x) - a->addr), x->state == CP_LIVE ? "live" : "freed");
			block_line(f, c, x);
			fputs("\n    allocated at:\n", f);
			report_stack_text(f, p, x->stack, "        ");
		}
		break;
	case AN_ADDR_MODULE:
		sym_text(f, &ai->sym);
		fputc('\n', f);
		break;
	case AN_ADDR_STACK: {
		const struct cp_thread *t = &p->img->threads[a->thread];

		fputs(a->below_sp ? "in the stack of " : "on the stack of ", f);
		cli_thread_text(f, p->img, (int)a->thread);
		if (a->below_sp)
			fprintf(f, ", %s bytes below its stack pointer 0x%" PRIx64 " (not in use)\n",
				fmt_num(n1, t->sp - a->addr), t->sp);
		else if (a->addr >= t->sp)
			fprintf(f, ", %s bytes above its stack pointer 0x%" PRIx64 "\n",
				fmt_num(n1, a->addr - t->sp), t->sp);
		else
			fprintf(f, ", in the red zone %s bytes below its stack pointer 0x%" PRIx64 "\n",
				fmt_num(n1, t->sp - a->addr), t->sp);
		break;
	}
	case AN_ADDR_UNMAPPED:
		fputs("not mapped in the image\n", f);
		break;
	case AN_ADDR_NOT_DUMPED:
		if (a->seg)
			fprintf(f, "mapped (0x%" PRIx64 "-0x%" PRIx64 ") but not dumped in the image",
				a->seg->vaddr, a->seg->vaddr + a->seg->memsz);
		else if (a->mapping)   /* known from NT_FILE only */
			fprintf(f, "mapped (0x%" PRIx64 "-0x%" PRIx64 ") but not dumped in the image",
				a->mapping->start, a->mapping->end);
		else   /* a raw dump: in the ELF, outside the dumped memory */
			fputs("in the ELF but not in the dump", f);
		if (ai->have_sym) {
			fputs("; ", f);
			sym_text(f, &ai->sym);
		} else if (a->mapping) {
			fprintf(f, "; in %s", a->mapping->path);
		}
		fputc('\n', f);
		break;
	case AN_ADDR_TLS: {
		const struct cli_tlsref *t = &ai->tls;

		fputs("thread-local storage of ", f);
		cli_thread_text(f, p->img, (int)t->thread);
		if (t->name)
			fprintf(f, ": %s+0x%" PRIx64 " (variable of %" PRIu64 " bytes) in %s\n", t->name,
				t->offset, t->size, fmt_base(t->module));
		else
			fprintf(f, ", %s bytes below its thread pointer 0x%" PRIx64 "\n",
				fmt_num(n1, t->tp - a->addr), t->tp);
		break;
	}
	case AN_ADDR_OTHER:
		fputs("dumped memory in no block, stack or symbol", f);
		if (a->mapping)
			fprintf(f, " (mapped from %s)", a->mapping->path);
		fputc('\n', f);
		break;
	}
}

int report_addr_text(FILE *f, const struct cli_options *o, const struct cli_profile *p)
{
	struct addr_ctx c = { .o = o, .p = p };

	for (size_t i = 0; i < o->naddrs; i++) {
		struct addr_info ai;

		addr_resolve(&c, o->addrs[i], &ai);
		addr_text(f, &c, &ai);
	}
	ctx_release(&c);
	return 0;
}

/* ---- JSON ---- */

static void block_obj(struct json *j, struct addr_ctx *c, const struct cp_block *b)
{
	const struct cli_profile *p = c->p;
	const char *type = ctx_type(c, b);

	json_obj_begin(j);
	report_block_json_id(j, b);
	json_key(j, "type");
	if (type)
		json_str(j, type);
	else
		json_null(j);
	json_key(j, "header_verified");
	json_bool(j, !(b->flags & CP_HDR_UNVERIFIED));
	json_key(j, "guard_len");
	json_u64(j, b->guard_len);
	json_key(j, "guard_bytes_differ");
	json_u64(j, b->guard_diff);
	json_key(j, "overrun");
	json_u64(j, b->overrun);
	json_key(j, "frames");
	report_stack_json(j, p, b->stack);
	json_obj_end(j);
}

static void damage_obj(struct json *j, const struct cli_profile *p, const struct cp_damage *d,
		       const struct an_addr *a)
{
	json_obj_begin(j);
	json_key(j, "header");
	json_hex(j, d->hdr);
	json_opt_hex(j, "address", d->known & CP_KNOWN_USER, d->user);
	json_opt_u64(j, "size", a->have_size, a->size);
	json_opt_u64(j, "seq", a->have_size, a->seq);
	json_key(j, "state");
	json_str(j, "damaged");
	json_key(j, "frames");
	if (d->known & CP_KNOWN_FRAMES)
		report_stack_json(j, p, d->stack);
	else
		json_null(j);
	json_obj_end(j);
}

static void sym_json(struct json *j, const struct cli_symref *s)
{
	json_key(j, "module");
	json_str(j, s->module);
	json_key(j, "module_offset");
	json_hex(j, s->modoff);
	json_key(j, "symbol");
	json_str(j, s->name);
	json_opt_u64(j, "symbol_offset", s->name != NULL, s->offset);
	json_opt_u64(j, "symbol_size", s->name != NULL, s->size);
	if (s->name || !s->section)
		return;
	json_key(j, "section");
	json_str(j, s->section);
	json_key(j, "section_offset");
	json_u64(j, s->sec_offset);
	if (s->before) {
		json_key(j, "symbol_before");
		json_str(j, s->before);
		json_key(j, "symbol_before_offset");
		json_u64(j, s->before_offset);
		json_key(j, "symbol_before_size");
		json_u64(j, s->before_size);
	}
}

static void addr_json(struct json *j, struct addr_ctx *c, const struct addr_info *ai)
{
	const struct cli_profile *p = c->p;
	const struct an_addr *a = &ai->a;
	const struct cp_scan *sc = &p->scan;
	const char *part = part_name(a->part);

	json_obj_begin(j);
	json_key(j, "addr");
	json_hex(j, a->addr);
	json_key(j, "what");
	json_str(j, an_addr_what_name(a->what));
	if (part) {
		json_key(j, "part");
		json_str(j, part);
		json_key(j, "offset");
		json_u64(j, a->offset);
	}
	if (a->block != AN_NONE) {
		json_key(j, "block");
		block_obj(j, c, &sc->blocks[a->block]);
	} else if (a->damage != AN_NONE) {
		json_key(j, "block");
		damage_obj(j, p, &sc->damaged[a->damage], a);
	}
	if (a->what == AN_ADDR_GUARD) {
		json_key(j, "past_end");
		json_u64(j, a->offset);
		json_key(j, "overflow_at_least");
		json_u64(j, a->offset + 1);
	}
	if (a->what == AN_ADDR_BETWEEN) {
		json_key(j, "before");
		if (a->prev != AN_NONE) {
			const struct cp_block *x = &sc->blocks[a->prev];

			block_obj(j, c, x);
		} else {
			json_null(j);
		}
		json_key(j, "after");
		if (a->next != AN_NONE)
			block_obj(j, c, &sc->blocks[a->next]);
		else
			json_null(j);
	}
	if (ai->have_sym && (a->what == AN_ADDR_MODULE || a->what == AN_ADDR_NOT_DUMPED))
		sym_json(j, &ai->sym);
	if (a->what == AN_ADDR_STACK) {
		const struct cp_thread *t = &p->img->threads[a->thread];

		json_key(j, "thread");
		json_i64(j, t->tid);
		json_key(j, "sp");
		json_hex(j, t->sp);
		json_key(j, "below_sp");
		json_bool(j, a->below_sp);
	}
	if (a->what == AN_ADDR_TLS) {
		const struct cli_tlsref *t = &ai->tls;

		json_key(j, "thread");
		json_i64(j, p->img->threads[t->thread].tid);
		json_key(j, "thread_pointer");
		json_hex(j, t->tp);
		json_key(j, "below_thread_pointer");
		json_u64(j, t->tp - a->addr);
		if (t->name) {
			json_key(j, "module");
			json_str(j, t->module);
			json_key(j, "symbol");
			json_str(j, t->name);
			json_key(j, "symbol_offset");
			json_u64(j, t->offset);
			json_key(j, "symbol_size");
			json_u64(j, t->size);
		}
	}
	if (a->mapping && a->what != AN_ADDR_MODULE && a->what != AN_ADDR_TLS) {
		json_key(j, "mapping");
		json_str(j, a->mapping->path);
	}
	json_obj_end(j);
}

int report_addr_json(struct json *j, const struct cli_options *o, const struct cli_profile *p)
{
	struct addr_ctx c = { .o = o, .p = p };

	json_key(j, "addresses");
	json_arr_begin(j);
	for (size_t i = 0; i < o->naddrs; i++) {
		struct addr_info ai;

		addr_resolve(&c, o->addrs[i], &ai);
		addr_json(j, &c, &ai);
	}
	json_arr_end(j);
	ctx_release(&c);
	return 0;
}
