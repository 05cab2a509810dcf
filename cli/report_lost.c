/* report_lost.c - --report=lost (memcheck's loss records from a core, grouped by
 * allocation stack), --why ADDR (the chain of references that keeps a block alive,
 * or the lost block that holds it) and --refs ADDR (every word pointing into a
 * block, and where it lives). Text and JSON.
 *
 * The mark phase is analysis/reach.c; here the roots of a raw dump (the ELF's
 * writable segments) are added, and references are named: symbol+offset in a
 * module (datasym.c), a thread's stack or register, or a block.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "corrupt.h"
#include "reach.h"

#define CHAIN_MAX 16   /* links of a --why chain shown: the first and last 8 */

/* What a report needs besides the profile: the roots and the mark. */
struct lost_ctx {
	const struct cli_options *o;
	const struct cli_profile *p;
	struct an_roots roots;
	struct an_reach reach;
	struct cli_datasym *ds;
	int ds_tried;
	int raw_roots;          /* roots of a raw dump (or a core without NT_FILE)
				 * came from the ELF */
	uint64_t arena_start, arena_end; /* glibc's main_arena, left out; 0, 0: not */
};

/* The ELF's global offset tables (.got, .got.plt): up to MAX ranges into
 * start[]/end[]. Returns how many. */
static size_t raw_got_ranges(Elf *e, uint64_t *start, uint64_t *end, size_t max)
{
	size_t shstrndx, n = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	while (n < max && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && (strcmp(name, ".got") == 0 || strcmp(name, ".got.plt") == 0)) {
			start[n] = sh.sh_addr;
			end[n++] = sh.sh_addr + sh.sh_size;
		}
	}
	return n;
}

/* Add root *R less the ranges [gs[i], ge[i]) for i < NG. Returns 0, or -1 out of
 * memory. */
static int raw_root_add_less(struct lost_ctx *x, struct an_root r, const uint64_t *gs,
			     const uint64_t *ge, size_t ng)
{
	for (size_t i = 0; i < ng; i++) {
		if (ge[i] <= r.start || gs[i] >= r.end)
			continue;
		if (gs[i] > r.start) {
			struct an_root lo = r;

			lo.end = gs[i];
			if (raw_root_add_less(x, lo, gs + i + 1, ge + i + 1, ng - i - 1) < 0)
				return -1;
		}
		r.start = ge[i];
		if (r.start >= r.end)
			return 0;
	}
	return an_roots_add(&x->roots, &r);
}

/* Add the writable PT_LOADs of the program's ELF as roots, less its global offset
 * tables: they hold addresses of symbols and code, never of heap blocks, but
 * MIPS's also hold 64 KiB page addresses (%got(page)), and in a firmware whose
 * heap is a static pool such an entry lands inside a block (a regenerated MIPS
 * fixture showed one of main's blocks "possibly lost" that way). For a raw dump
 * (at the ELF's addresses), and for a core of a static program, where
 * an_roots_find cannot tell the program's .data and .bss from the heap (qemu-user
 * writes no NT_FILE; a pool in .bss holds blocks, and the kernel's core reads
 * only the .bss before the first block as a root, not libc's variables after
 * it): placed by the core's AT_ENTRY (bias 0 for ET_EXEC), less the roots
 * already found. Returns 0 (also when the ELF cannot be read or placed, or is
 * dynamic with a load map: nothing to add), -1 out of memory. */
static int raw_roots_add(struct lost_ctx *x)
{
	const struct cp_image *img = x->p->img;
	Elf *e = NULL;
	GElf_Ehdr eh;
	size_t n = 0, ng = 0;
	uint64_t *gs, *ge, bias = 0;
	int fd, rc = 0;

	gs = malloc((4 + x->roots.n) * sizeof(*gs));
	ge = malloc((4 + x->roots.n) * sizeof(*ge));
	fd = gs && ge ? open(x->o->prog, O_RDONLY | O_CLOEXEC) : -1;
	if (!gs || !ge)
		rc = -1;
	if (fd < 0)
		goto out;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || !gelf_getehdr(e, &eh))
		goto out;
	if (img->kind == CP_KIND_CORE && eh.e_type == ET_DYN) {
		uint64_t entry;

		if (cp_image_auxv(img, AT_ENTRY, &entry) < 0)
			goto out;
		bias = entry - eh.e_entry;
	}
	ng = raw_got_ranges(e, gs, ge, 4);
	for (size_t i = 0; i < ng; i++) {
		gs[i] += bias;
		ge[i] += bias;
	}
	for (size_t i = 0; i < x->roots.n; i++)
		if (x->roots.v[i].kind != AN_ROOT_REGS) {
			gs[ng] = x->roots.v[i].start;
			ge[ng++] = x->roots.v[i].end;
		}
	if (elf_getphdrnum(e, &n) != 0)
		goto out;
	for (size_t i = 0; img->kind == CP_KIND_CORE && img->nfiles && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
			goto out;   /* dynamic: ld.so's link map gave every module's data */
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		GElf_Phdr ph;
		struct an_root r = { 0, 0, AN_ROOT_USER, -1, NULL, 0 };

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_W) || !ph.p_memsz)
			continue;
		r.start = ph.p_vaddr + bias;
		r.end = ph.p_vaddr + bias + ph.p_memsz;
		r.module = x->o->prog;
		rc = raw_root_add_less(x, r, gs, ge, ng);
		x->raw_roots++;
	}
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	free(gs);
	free(ge);
	return rc;
}

static struct cli_datasym *lost_ds(struct lost_ctx *x);

/* Does the word value v point into a live block (its data; a 0-byte block's
 * user address)? */
static int lost_in_live(const struct cp_scan *scan, uint64_t v)
{
	const struct cp_block *b = cp_scan_find(scan, v);

	return b && b->state == CP_LIVE && v >= b->user &&
	       (v < b->user + b->size || v == b->user);
}

/* glibc's malloc state, main_arena in libc's data, is no root: it can keep a
 * pointer to a chunk it has since handed out (seen at main_arena+0x68, inside a
 * live block), which made a lost block "possibly lost"; memcheck replaces malloc
 * and never reads that arena. Its extent comes from the symbols of the module
 * holding it, found by its name, not by the module's file name: libc.so.6, or
 * libc-2.31.so before glibc 2.34, or the program itself when it is linked
 * statically. Looked up only where a word of a module's data points into a live
 * block (so the symbol session opens only then); without symbols it stays a
 * root. */
static int lost_exclude_arena(struct lost_ctx *x)
{
	const struct cp_image *img = x->p->img;
	unsigned w = img->wsize;
	size_t n = x->roots.n;

	for (size_t i = 0; i < n && !x->arena_end; i++) {
		const struct an_root r = x->roots.v[i];

		if (r.kind != AN_ROOT_DATA || !r.module)
			continue;
		for (uint64_t a = r.start; a + w <= r.end && a >= r.start; a += w) {
			struct cli_symref ref;
			struct cli_datasym *ds;
			uint64_t v;

			if (cp_image_read_word(img, a, &v) < 0 || !lost_in_live(&x->p->scan, v))
				continue;
			if (!(ds = lost_ds(x)))
				return 0;
			if (cli_datasym(ds, a, &ref) < 0 || !ref.name || !ref.size)
				continue;
			if (!strcmp(ref.name, "main_arena")) {
				x->arena_start = ref.start;
				x->arena_end = ref.start + ref.size;
				return an_roots_exclude_arena(&x->roots, x->arena_start, x->arena_end);
			}
			/* the rest of this variable names it again: on past its end
			 * (one lookup for a global array of pointers into the heap,
			 * not one a word) */
			if (ref.start <= a && ref.start + ref.size > a + w)
				a += (ref.start + ref.size - a - 1) / w * w;
		}
	}
	return 0;
}

/* The live block or the variable of the image's ELF holding a switched-out
 * task's saved stack pointer SP (d may be NULL): its start and end. Returns 0
 * with *lo and *hi set, or -1 when neither holds SP. */
static int task_stack_holder(const struct cli_profile *p, struct cli_datasym *d, uint64_t sp,
			     uint64_t *lo, uint64_t *hi)
{
	const struct cp_block *b = cp_scan_find(&p->scan, sp);
	struct cli_symref r;

	if (b && b->state == CP_LIVE && sp >= b->user && sp <= b->user + b->size) {
		*lo = b->user;
		*hi = b->user + b->size;
		return 0;
	}
	if (cli_datasym(d, sp, &r) == 0 && r.name && !r.is_func && sp <= r.start + r.size) {
		*lo = r.start;
		*hi = r.start + r.size;
		return 0;
	}
	return -1;
}

/* Where task i's dead stack starts: its LO when given, else the start of the
 * block or variable holding its SP. Returns 0 with *lo set, or -1. */
static int task_stack_start(const struct cli_options *o, const struct cli_profile *p,
			    struct cli_datasym *d, size_t i, uint64_t *lo)
{
	uint64_t hlo, hhi;

	if (o->task_has_lo[i]) {
		*lo = o->task_los[i];
		return 0;
	}
	if (task_stack_holder(p, d, o->task_sps[i], &hlo, &hhi) < 0)
		return -1;
	*lo = hlo;
	return 0;
}

int report_task_sp_check(const struct cli_options *o, const struct cli_profile *p)
{
	struct cp_error err = { 0 };
	struct cli_datasym *d = cli_datasym_open(o, p->img, &err);
	const char *prog = o->prog ? o->prog : "the program";
	int rc = 0;

	for (size_t i = 0; i < o->ntask_sps && rc == 0; i++) {
		uint64_t sp = o->task_sps[i], lo, hi;

		rc = -1;
		if (task_stack_holder(p, d, sp, &lo, &hi) < 0) {
			fprintf(stderr, "mprof-core: %s: --task-sp 0x%" PRIx64 " is in no live block "
				"nor variable of %s\n", p->image_path, sp, prog);
			continue;
		}
		if (o->task_has_lo[i] && (o->task_los[i] > sp || o->task_los[i] < lo)) {
			fprintf(stderr, "mprof-core: %s: --task-sp 0x%" PRIx64 ":0x%" PRIx64 ": the low "
				"end must lie between 0x%" PRIx64 " (the start of the block or variable "
				"holding SP) and SP\n", p->image_path, o->task_los[i], sp, lo);
			continue;
		}
		if (o->task_has_lo[i])
			lo = o->task_los[i];
		rc = 0;
		/* another task's SP in [lo, sp]: its live stack would be left out */
		for (size_t j = 0; j < o->ntask_sps && rc == 0; j++) {
			if (j == i || o->task_sps[j] < lo || o->task_sps[j] > sp)
				continue;
			rc = -1;
			if (o->task_has_lo[i])
				fprintf(stderr, "mprof-core: %s: --task-sp 0x%" PRIx64 ":0x%" PRIx64
					" holds another task's stack pointer 0x%" PRIx64 "\n",
					p->image_path, o->task_los[i], sp, o->task_sps[j]);
			else
				fprintf(stderr, "mprof-core: %s: --task-sp 0x%" PRIx64 " and 0x%" PRIx64
					" are in one variable or block: give each stack's low end "
					"(--task-sp LO:SP)\n", p->image_path, sp, o->task_sps[j]);
		}
	}
	cli_datasym_free(d);
	return rc;
}

/* --task-sp: each task's stack below its saved stack pointer is dead memory. */
static int task_sp_exclude(struct lost_ctx *x)
{
	for (size_t i = 0; i < x->o->ntask_sps; i++) {
		uint64_t lo;

		if (task_stack_start(x->o, x->p, lost_ds(x), i, &lo) == 0 &&
		    an_roots_exclude_stack(&x->roots, lo, x->o->task_sps[i]) < 0)
			return -1;
	}
	return 0;
}

static int lost_ctx_init(struct lost_ctx *x, const struct cli_options *o,
			 const struct cli_profile *p, int parents)
{
	struct an_reach_options ro = { 0 };

	memset(x, 0, sizeof(*x));
	x->o = o;
	x->p = p;
	ro.nthreads = o->threads;
	ro.parents = parents;
	if (an_roots_find(p->img, &p->scan, &x->roots) < 0)
		return -1;
	/* libheapann's statistics region is never a root (an_roots_find excludes it
	 * from a core's roots; a firmware may keep it in the data added here) */
	if (p->img->kind == CP_KIND_RAW &&
	    (raw_roots_add(x) < 0 || an_roots_exclude_stats(p->img, &p->scan, &x->roots) < 0))
		return -1;
	if (p->img->kind == CP_KIND_CORE && raw_roots_add(x) < 0)
		return -1;
	if (p->img->kind == CP_KIND_CORE && lost_exclude_arena(x) < 0)
		return -1;
	if (task_sp_exclude(x) < 0)
		return -1;
	if (an_reach_build(p->img, &p->scan, &x->roots, &ro, &x->reach) < 0)
		return -1;
	return 0;
}

static void lost_ctx_release(struct lost_ctx *x)
{
	an_reach_release(&x->reach);
	an_roots_release(&x->roots);
	cli_datasym_free(x->ds);
}

static struct cli_datasym *lost_ds(struct lost_ctx *x)
{
	return cli_datasym_lazy(x->o, x->p->img, &x->ds, &x->ds_tried, "root names");
}

/* ---- names of roots, registers and places ---- */

static const char *root_kind_name(uint32_t k)
{
	switch (k) {
	case AN_ROOT_DATA: return "data";
	case AN_ROOT_ANON: return "anonymous";
	case AN_ROOT_STACK: return "stack";
	case AN_ROOT_TLS: return "tls";
	case AN_ROOT_REGS: return "register";
	case AN_ROOT_USER: return "data";
	case AN_ROOT_LINKMAP: return "link_map";
	}
	return "other";
}

static const char *const x86_64_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
	"rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
	"gs_base", "ds", "es", "fs", "gs",
};

static const char *reg_name(const struct cp_image *img, unsigned r, char *buf, size_t cap)
{
	if (img->machine == EM_X86_64 && r < sizeof(x86_64_regs) / sizeof(x86_64_regs[0]))
		return x86_64_regs[r];
	if (img->machine == EM_AARCH64 && r <= 33)
		snprintf(buf, cap, r < 31 ? "x%u" : r == 31 ? "sp" : r == 32 ? "pc" : "pstate", r);
	else
		snprintf(buf, cap, "r%u", r);
	return buf;
}

/* Where a referencing word lives. */
struct where {
	const char *kind;       /* block, freed block, data, anonymous, stack, tls, register, other */
	int unused;             /* kind stack: below the thread's stack pointer and its
				 * red zone, no root (--addr's "not in use") */
	const struct cp_block *block;  /* kind block / freed block */
	uint64_t addr;          /* the word's address (not for registers) */
	uint64_t offset;        /* into the block; from sp for a stack */
	long root;              /* root index, or -1 */
	int thread;             /* index into img->threads, or -1 */
	unsigned reg;
	struct cli_symref sym;
	int have_sym;
	struct cli_tlsref tls;  /* kind tls: the variable, when the executable's */
};

static void where_of(struct lost_ctx *x, const struct an_ref *r, struct where *w)
{
	const struct cli_profile *p = x->p;

	memset(w, 0, sizeof(*w));
	w->root = -1;
	w->thread = -1;
	if (r->thread >= 0) {
		w->kind = "register";
		w->thread = r->thread;
		w->reg = (unsigned)r->addr;
		return;
	}
	w->addr = r->addr;
	if (r->block != UINT32_MAX) {
		w->block = &p->scan.blocks[r->block];
		w->kind = w->block->state == CP_LIVE ? "block" : "freed block";
		w->offset = r->addr - w->block->user;
		return;
	}
	w->root = an_roots_locate(&x->roots, r->addr);
	if (w->root >= 0) {
		const struct an_root *rt = &x->roots.v[w->root];

		w->kind = root_kind_name(rt->kind);
		w->thread = rt->thread;
		/* from the thread's stack pointer: negative in the red zone below it */
		if (rt->kind == AN_ROOT_STACK && (size_t)rt->thread < p->img->nthreads)
			w->offset = r->addr - p->img->threads[rt->thread].sp;
		/* a thread's static TLS, as --addr places it: a thread other than
		 * the main one has it at the top of its stack mapping, read with
		 * its stack; the executable's variables named */
		if ((rt->kind == AN_ROOT_STACK || rt->kind == AN_ROOT_TLS) &&
		    cli_datasym_tls(lost_ds(x), p->img, r->addr, &w->tls)) {
			w->kind = "tls";
			w->thread = (int)w->tls.thread;
		}
	} else {
		struct an_addr a;

		/* a dead frame's word: dumped stack memory, not a root */
		an_addr_classify(p->img, &p->scan, r->addr, &a);
		if (a.what == AN_ADDR_STACK && a.below_sp) {
			w->kind = "stack";
			w->unused = 1;
			w->thread = a.thread;
			w->offset = r->addr - p->img->threads[a.thread].sp;
			return;
		}
		w->kind = "other";
	}
	if ((w->root < 0 || x->roots.v[w->root].kind == AN_ROOT_DATA ||
	     x->roots.v[w->root].kind == AN_ROOT_USER || x->roots.v[w->root].kind == AN_ROOT_ANON) &&
	    cli_datasym(lost_ds(x), r->addr, &w->sym) == 0)
		w->have_sym = 1;
}

void cli_thread_text(FILE *f, const struct cp_image *img, int t)
{
	fprintf(f, "thread %d", t + 1);
	if (t >= 0 && (size_t)t < img->nthreads)
		fprintf(f, " (tid %d)", img->threads[t].tid);
}

static void where_text(FILE *f, struct lost_ctx *x, const struct where *w)
{
	const struct cp_image *img = x->p->img;
	char a[32];

	if (!strcmp(w->kind, "register")) {
		char buf[16];

		fprintf(f, "register %s of ", reg_name(img, w->reg, buf, sizeof(buf)));
		cli_thread_text(f, img, w->thread);
		return;
	}
	fprintf(f, "0x%" PRIx64 ", ", w->addr);
	if (w->block) {
		uint32_t bi = (uint32_t)(w->block - x->p->scan.blocks);

		char b[32];

		fprintf(f, "%s bytes into %s 0x%" PRIx64 " (%s bytes", fmt_num(a, w->offset),
			w->kind, w->block->user, fmt_num(b, w->block->size));
		if (w->block->state == CP_LIVE)
			fprintf(f, ", %s", an_reach_cat_name(x->reach.cat[bi]));
		fputc(')', f);
		return;
	}
	if (!strcmp(w->kind, "stack")) {
		fputs("stack of ", f);
		cli_thread_text(f, img, w->thread);
		if ((int64_t)w->offset < 0)
			fprintf(f, ", sp-0x%" PRIx64, -w->offset);
		else
			fprintf(f, ", sp+0x%" PRIx64, w->offset);
		if (w->unused)
			fputs(", below the stack pointer (not in use, not a root)", f);
		return;
	}
	if (!strcmp(w->kind, "tls")) {
		fputs("thread-local storage of ", f);
		cli_thread_text(f, img, w->thread);
		if (w->tls.name)
			fprintf(f, ": %s+0x%" PRIx64 " in %s", w->tls.name, w->tls.offset,
				fmt_base(w->tls.module));
		return;
	}
	if (w->have_sym && w->sym.name)
		fprintf(f, "%s+0x%" PRIx64 " in %s", w->sym.name, w->sym.offset, fmt_base(w->sym.module));
	else if (w->have_sym)
		fprintf(f, "%s+0x%" PRIx64, fmt_base(w->sym.module), w->sym.modoff);
	if (!strcmp(w->kind, "data"))
		fputs(w->have_sym ? " (module data)" : "module data", f);
	else if (!strcmp(w->kind, "anonymous"))
		fputs(w->have_sym ? " (anonymous mapping)" : "anonymous mapping", f);
	else if (!strcmp(w->kind, "link_map"))
		fprintf(f, "l_%s of a link_map of ld.so outside any block",
			(const char *const[]){ "addr", "name", "ld", "next", "prev" }
				[(w->addr - x->roots.v[w->root].start) / img->wsize % 5]);
	else
		fputs(w->have_sym ? " (not a root)" : "not a root (heap or unmapped)", f);
}

static void where_json(struct json *j, struct lost_ctx *x, const struct where *w)
{
	const struct cp_image *img = x->p->img;

	json_obj_begin(j);
	json_key(j, "kind");
	json_str(j, w->kind);
	if (!strcmp(w->kind, "register")) {
		char buf[16];

		json_key(j, "register");
		json_str(j, reg_name(img, w->reg, buf, sizeof(buf)));
	} else {
		json_key(j, "address");
		json_hex(j, w->addr);
	}
	if (w->block) {
		uint32_t bi = (uint32_t)(w->block - x->p->scan.blocks);

		json_key(j, "block");
		json_hex(j, w->block->user);
		json_key(j, "offset");
		json_u64(j, w->offset);
		json_key(j, "size");
		json_u64(j, w->block->size);
		if (w->block->state == CP_LIVE) {
			json_key(j, "category");
			json_str(j, an_reach_cat_name(x->reach.cat[bi]));
		}
	}
	if (w->thread >= 0) {
		json_key(j, "thread");
		json_u64(j, (uint64_t)w->thread + 1);
		if ((size_t)w->thread < img->nthreads) {
			json_key(j, "tid");
			json_i64(j, img->threads[w->thread].tid);
		}
		if (!strcmp(w->kind, "stack")) {
			json_key(j, "sp_offset");
			json_i64(j, (int64_t)w->offset);
			json_key(j, "in_use");   /* false: below sp and its red zone, no root */
			json_bool(j, !w->unused);
		}
	}
	if (w->have_sym) {
		json_key(j, "module");
		json_str(j, w->sym.module);
		json_key(j, "symbol");
		json_str(j, w->sym.name);
		json_opt_u64(j, "symbol_offset", w->sym.name != NULL, w->sym.offset);
	} else if (!strcmp(w->kind, "tls") && w->tls.name) {
		json_key(j, "module");
		json_str(j, w->tls.module);
		json_key(j, "symbol");
		json_str(j, w->tls.name);
		json_key(j, "symbol_offset");
		json_u64(j, w->tls.offset);
	}
	json_obj_end(j);
}

/* ---- the loss records ---- */

struct record {
	uint32_t cluster;
	uint32_t cat;
	uint64_t blocks, bytes;
};

static int record_cmp(const void *pa, const void *pb)
{
	const struct record *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->blocks != b->blocks)
		return a->blocks < b->blocks ? 1 : -1;
	if (a->cat != b->cat)
		return a->cat < b->cat ? 1 : -1;
	return a->cluster < b->cluster ? -1 : a->cluster > b->cluster;
}

/* Loss records of the clusters of st, sorted largest first. Returns the array
 * (caller frees) and sets *n and the totals, or NULL out of memory. */
static struct record *records_build(const struct lost_ctx *x, const struct an_stacks *st, size_t *n,
				    uint64_t tb[AN_REACH_NCATS], uint64_t ty[AN_REACH_NCATS])
{
	const struct cp_scan *sc = &x->p->scan;
	uint64_t (*cnt)[AN_REACH_NCATS][2] = calloc(st->n + 1, sizeof(*cnt));
	struct record *v = NULL;
	size_t k = 0;

	*n = 0;
	memset(tb, 0, AN_REACH_NCATS * sizeof(*tb));
	memset(ty, 0, AN_REACH_NCATS * sizeof(*ty));
	if (!cnt)
		return NULL;
	/* Only the blocks that are not still reachable are counted one by one: a
	 * cluster's reachable blocks are its live blocks (st->v[c], the same
	 * blocks as an_block_cluster says) less those, and less the ones the mark did
	 * not classify (overlapping the block before: counted in slot NONE). Most
	 * blocks are reachable, so most sizes are not read again (a pass over the
	 * scan's blocks, 0.5 GB at 10M: issue 15). */
	for (size_t i = 0; i < sc->nblocks; i++) {
		uint32_t c, cat = x->reach.cat[i];

		if (cat == AN_REACH_REACHABLE)
			continue;   /* before the block is read */
		c = an_block_cluster(st, sc, i);
		if (c == UINT32_MAX || c >= st->n)
			continue;
		cnt[c][cat][0]++;
		cnt[c][cat][1] += sc->blocks[i].size;
	}
	for (size_t c = 0; c < st->n; c++) {
		uint64_t b = st->v[c].blocks, y = st->v[c].bytes;

		for (uint32_t cat = 0; cat < AN_REACH_NCATS; cat++) {
			b -= cnt[c][cat][0];
			y -= cnt[c][cat][1];
		}
		cnt[c][AN_REACH_REACHABLE][0] = b;
		cnt[c][AN_REACH_REACHABLE][1] = y;
		for (uint32_t cat = 1; cat < AN_REACH_NCATS; cat++) {
			tb[cat] += cnt[c][cat][0];
			ty[cat] += cnt[c][cat][1];
		}
	}
	v = malloc((st->n * (AN_REACH_NCATS - 1) + 1) * sizeof(*v));   /* one per cluster and category */
	if (!v) {
		free(cnt);
		return NULL;
	}
	for (size_t c = 0; c < st->n; c++)
		for (uint32_t cat = 1; cat < AN_REACH_NCATS; cat++)
			if (cnt[c][cat][0]) {
				v[k].cluster = (uint32_t)c;
				v[k].cat = cat;
				v[k].blocks = cnt[c][cat][0];
				v[k].bytes = cnt[c][cat][1];
				k++;
			}
	free(cnt);
	qsort(v, k, sizeof(*v), record_cmp);
	*n = k;
	return v;
}

static const uint32_t cat_order[] = {
	AN_REACH_DEFINITE, AN_REACH_INDIRECT, AN_REACH_POSSIBLE, AN_REACH_REACHABLE,
};

static void roots_summary_text(FILE *f, const struct lost_ctx *x)
{
	uint64_t bytes[AN_ROOT_NKINDS] = { 0 }, count[AN_ROOT_NKINDS] = { 0 };
	char a[32], b[32], c[32], d[32], e[32], g[32];

	for (size_t i = 0; i < x->roots.n; i++) {
		const struct an_root *r = &x->roots.v[i];

		count[r->kind]++;
		bytes[r->kind] += r->end - r->start;
	}
	fprintf(f, "roots: %s bytes read: module data %s bytes in %s ranges, stacks of %s threads "
		"%s bytes, registers of %s threads",
		fmt_num(a, x->reach.root_bytes), fmt_num(b, bytes[AN_ROOT_DATA] + bytes[AN_ROOT_USER]),
		fmt_num(c, count[AN_ROOT_DATA] + count[AN_ROOT_USER]), fmt_num(d, count[AN_ROOT_STACK]),
		fmt_num(e, bytes[AN_ROOT_STACK]), fmt_num(g, count[AN_ROOT_REGS]));
	if (count[AN_ROOT_TLS])
		fprintf(f, ", TLS %s bytes", fmt_num(a, bytes[AN_ROOT_TLS]));
	if (count[AN_ROOT_ANON])
		fprintf(f, ", other writable mappings %s bytes in %s ranges", fmt_num(a, bytes[AN_ROOT_ANON]),
			fmt_num(b, count[AN_ROOT_ANON]));
	if (count[AN_ROOT_LINKMAP])
		fprintf(f, ", ld.so's link maps outside blocks %s bytes in %s", fmt_num(a, bytes[AN_ROOT_LINKMAP]),
			fmt_num(b, count[AN_ROOT_LINKMAP]));
	for (size_t i = 0; i < x->roots.nexclude; i++)
		fprintf(f, "; left out: %s at 0x%" PRIx64 " (%s bytes)",
			x->roots.exclude[i].kind == AN_EXCLUDE_STACK ? "a task's stack below its sp" :
			x->roots.exclude[i].kind == AN_EXCLUDE_ARENA ? "glibc's main_arena" :
			x->roots.exclude[i].kind == AN_EXCLUDE_FINISHED ?
			"a finished thread's stack in a block, below its last sp" :
			"libheapann's statistics", x->roots.exclude[i].start,
			fmt_num(a, x->roots.exclude[i].end - x->roots.exclude[i].start));
	if (x->roots.nfinished) {
		uint64_t dead = 0;

		for (size_t i = 0; i < x->roots.nfinished; i++)
			dead += x->roots.finished[i].end - x->roots.finished[i].start;
		fprintf(f, "; left out: the stack%s of %s finished thread%s below %s last sp (%s bytes)",
			x->roots.nfinished == 1 ? "" : "s", fmt_num(a, x->roots.nfinished),
			x->roots.nfinished == 1 ? "" : "s", x->roots.nfinished == 1 ? "its" : "their",
			fmt_num(b, dead));
	}
	fputc('\n', f);
	count[0] = 0;
	for (size_t t = 0; t < x->p->img->nthreads; t++)
		count[0] += (uint64_t)an_regs_partial(x->p->img, t);
	if (count[0])
		fprintf(f, "note: the registers of %s thread%s are only partly known (pc, stack pointer "
			"and system call arguments, as libheapann's snapshots write the threads other "
			"than their own): a block held only in another of their registers shows as lost\n",
			fmt_num(a, count[0]), count[0] == 1 ? "" : "s");
}

static void lost_notes(FILE *f, const struct lost_ctx *x)
{
	char a[32];

	if (x->p->img->kind == CP_KIND_RAW)
		fprintf(f, "note: a raw dump has no threads: the roots are the writable segments of %s "
			"(%d); blocks held only by stacks or registers show as lost\n",
			fmt_base(x->o->prog), x->raw_roots);
	if (x->p->scan.ndamaged)
		fprintf(f, "note: %s damaged headers: their blocks are not classified, and blocks only "
			"they point to may show as lost\n", fmt_num(a, x->p->scan.ndamaged));
	/* only writable memory can hold references: read-only file mappings,
	 * which kernel cores leave out by design, are not worth a warning */
	if (cli_missing_writable(x->p->img, NULL))
		fprintf(f, "note: %s bytes of writable memory are missing from the image: references "
			"held there are not seen, and a block that only they keep reads as lost\n",
			fmt_num(a, cli_missing_writable(x->p->img, NULL)));
}

int report_lost_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_stacks *st)
{
	struct lost_ctx x;
	struct record *v;
	uint64_t tb[AN_REACH_NCATS], ty[AN_REACH_NCATS];
	size_t n, shown;
	long top = o->top >= 0 ? o->top : 25;
	char a[32], b[32];

	if (lost_ctx_init(&x, o, p, 0) < 0 || !(v = records_build(&x, st, &n, tb, ty))) {
		lost_ctx_release(&x);
		return -1;
	}
	fputs("\n== lost: reachability from the roots, by allocation stack (memcheck's categories) ==\n", f);
	roots_summary_text(f, &x);
	lost_notes(f, &x);
	shown = top > 0 && (size_t)top < n ? (size_t)top : n;
	for (size_t i = 0; i < shown; i++) {
		fprintf(f, "\n#%zu: %s bytes in %s blocks are %s\n", i + 1, fmt_num(a, v[i].bytes),
			fmt_num(b, v[i].blocks), an_reach_cat_name(v[i].cat));
		report_stack_text(f, p, st->v[v[i].cluster].stack, "    ");
	}
	if (shown < n)
		fprintf(f, "\n... %zu more loss records (--top 0 shows all)\n", n - shown);
	fputs("\nLEAK SUMMARY:\n", f);
	for (size_t i = 0; i < 4; i++)
		fprintf(f, "   %15s: %s bytes in %s blocks\n", an_reach_cat_name(cat_order[i]),
			fmt_num(a, ty[cat_order[i]]), fmt_num(b, tb[cat_order[i]]));
	free(v);
	lost_ctx_release(&x);
	return 0;
}

int report_lost_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_stacks *st)
{
	struct lost_ctx x;
	struct record *v;
	uint64_t tb[AN_REACH_NCATS], ty[AN_REACH_NCATS];
	size_t n, shown;

	if (lost_ctx_init(&x, o, p, 0) < 0 || !(v = records_build(&x, st, &n, tb, ty))) {
		lost_ctx_release(&x);
		return -1;
	}
	shown = o->top > 0 && (size_t)o->top < n ? (size_t)o->top : n;
	json_key(j, "lost");
	json_obj_begin(j);
	json_key(j, "records");
	json_arr_begin(j);
	for (size_t i = 0; i < shown; i++) {
		json_obj_begin(j);
		json_key(j, "category");
		json_str(j, an_reach_cat_name(v[i].cat));
		json_key(j, "blocks");
		json_u64(j, v[i].blocks);
		json_key(j, "bytes");
		json_u64(j, v[i].bytes);
		json_key(j, "frames");
		report_stack_json(j, p, st->v[v[i].cluster].stack);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "totals");
	json_obj_begin(j);
	for (size_t i = 0; i < 4; i++) {
		json_key(j, an_reach_cat_name(cat_order[i]));
		json_obj_begin(j);
		json_key(j, "blocks");
		json_u64(j, tb[cat_order[i]]);
		json_key(j, "bytes");
		json_u64(j, ty[cat_order[i]]);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_key(j, "roots");
	json_arr_begin(j);
	for (size_t i = 0; i < x.roots.n; i++) {
		const struct an_root *r = &x.roots.v[i];

		json_obj_begin(j);
		json_key(j, "kind");
		json_str(j, root_kind_name(r->kind));
		if (r->kind != AN_ROOT_REGS) {
			json_key(j, "start");
			json_hex(j, r->start);
			json_key(j, "end");
			json_hex(j, r->end);
		}
		if (r->thread >= 0) {
			json_key(j, "thread");
			json_u64(j, (uint64_t)r->thread + 1);
		}
		if (r->kind == AN_ROOT_REGS && an_regs_partial(x.p->img, (size_t)r->thread)) {
			json_key(j, "partial");
			json_bool(j, 1);
		}
		if (r->module) {
			json_key(j, "module");
			json_str(j, r->module);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "excluded");   /* libheapann's statistics region, dead task stacks, main_arena,
				    * finished threads' stacks below their last sp */
	json_arr_begin(j);
	for (size_t i = 0; i < x.roots.nexclude; i++) {
		json_obj_begin(j);
		json_key(j, "what");
		json_str(j, x.roots.exclude[i].kind == AN_EXCLUDE_STACK ? "task stack below sp" :
			 x.roots.exclude[i].kind == AN_EXCLUDE_ARENA ? "main_arena" :
			 x.roots.exclude[i].kind == AN_EXCLUDE_FINISHED ? "finished thread stack below its last sp" :
			 "statistics");
		json_key(j, "start");
		json_hex(j, x.roots.exclude[i].start);
		json_key(j, "end");
		json_hex(j, x.roots.exclude[i].end);
		json_obj_end(j);
	}
	for (size_t i = 0; i < x.roots.nfinished; i++) {
		json_obj_begin(j);
		json_key(j, "what");
		json_str(j, "finished thread stack below its last sp");
		json_key(j, "start");
		json_hex(j, x.roots.finished[i].start);
		json_key(j, "end");
		json_hex(j, x.roots.finished[i].end);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "root_bytes");
	json_u64(j, x.reach.root_bytes);
	json_key(j, "damaged_headers");
	json_u64(j, p->scan.ndamaged);
	json_obj_end(j);
	free(v);
	lost_ctx_release(&x);
	return 0;
}

/* ---- --why and --refs ---- */

/* The live (or, for refs, any) block holding addr, as a scan index, or UINT32_MAX. */
static uint32_t block_of(const struct cli_profile *p, uint64_t addr, int live_only)
{
	const struct cp_block *b = cp_scan_find(&p->scan, addr);

	if (!b || (live_only && b->state != CP_LIVE))
		return UINT32_MAX;
	return (uint32_t)(b - p->scan.blocks);
}

static void block_text(FILE *f, const struct lost_ctx *x, uint32_t bi)
{
	const struct cp_block *b = &x->p->scan.blocks[bi];
	char a[32];

	fprintf(f, "block 0x%" PRIx64 " (%s bytes, seq %" PRIu64 ", %s)", b->user, fmt_num(a, b->size),
		b->seq, b->state == CP_LIVE ? an_reach_cat_name(x->reach.cat[bi]) : "freed");
}

/* One step of a --why chain: the block or root holding the reference to 'to'. */
struct step {
	uint32_t from;          /* AN_REACH_FROM_* encoding */
	uint32_t to;            /* scan index */
	struct an_ref ref;
	int have_ref;
};

/* The links of bi's chain, nearest first: shows the first and the last CHAIN_MAX/2
 * when it is longer than CHAIN_MAX (the root end matters most). Fills s (at most
 * CHAIN_MAX), sets *skipped to the links left out after the first half, and
 * returns how many were filled; -1 out of memory. */
static long chain_walk(struct lost_ctx *x, uint32_t bi, struct step *s, size_t *skipped)
{
	uint32_t *to = NULL, cur = bi;
	size_t n = 0, cap = 0, k = 0;

	*skipped = 0;
	while (n <= x->p->scan.nblocks) {
		uint32_t from = x->reach.from[cur];

		if (from == AN_REACH_FROM_NONE)
			break;
		if (n == cap) {
			uint32_t *t = realloc(to, (cap = cap ? cap * 2 : 64) * sizeof(*t));

			if (!t) {
				free(to);
				return -1;
			}
			to = t;
		}
		to[n++] = cur;
		if (from & AN_REACH_FROM_ROOT)
			break;
		cur = from;
	}
	for (size_t i = 0; i < n; i++) {
		if (n > CHAIN_MAX && i == CHAIN_MAX / 2) {
			*skipped = n - CHAIN_MAX;
			i = n - CHAIN_MAX / 2;
		}
		s[k].to = to[i];
		s[k].from = x->reach.from[to[i]];
		s[k].have_ref = an_reach_link(x->p->img, &x->p->scan, &x->roots, s[k].from, s[k].to,
					      &s[k].ref) == 0;
		k++;
	}
	free(to);
	return (long)k;
}

static uint32_t chain_top(const struct lost_ctx *x, uint32_t bi)
{
	uint32_t cur = bi;

	for (size_t n = 0; n <= x->p->scan.nblocks; n++) {
		uint32_t from = x->reach.from[cur];

		if (from == AN_REACH_FROM_NONE || (from & AN_REACH_FROM_ROOT))
			break;
		cur = from;
	}
	return cur;
}

static const char *why_intro(uint32_t cat)
{
	switch (cat) {
	case AN_REACH_REACHABLE: return "kept alive by this chain of start pointers from a root";
	case AN_REACH_POSSIBLE: return "reached from a root only through an interior pointer on this chain";
	case AN_REACH_INDIRECT: return "not reached from any root; held by this lost structure";
	default: return "not reached from any root nor held by another lost block";
	}
}

static void step_ref_text(FILE *f, struct lost_ctx *x, const struct step *s)
{
	struct where w;
	const struct cp_block *t = &x->p->scan.blocks[s->to];

	if (!s->have_ref) {
		fputs("(the reference could not be read again)\n", f);
		return;
	}
	if (s->ref.value == t->user)
		fputs("start pointer at ", f);
	else
		fprintf(f, "interior pointer (+%" PRIu64 ") at ", s->ref.value - t->user);
	where_of(x, &s->ref, &w);
	where_text(f, x, &w);
	fputc('\n', f);
}

int report_why_text(FILE *f, const struct cli_options *o, const struct cli_profile *p)
{
	struct lost_ctx x;
	struct step s[CHAIN_MAX];

	if (lost_ctx_init(&x, o, p, 1) < 0) {
		lost_ctx_release(&x);
		return -1;
	}
	for (size_t i = 0; i < o->nwhy; i++) {
		uint32_t bi = block_of(p, o->why[i], 1), cat;
		size_t skipped;
		long n;

		fprintf(f, "\nwhy 0x%" PRIx64 ": ", o->why[i]);
		if (bi == UINT32_MAX) {
			fputs("no live block holds this address\n", f);
			continue;
		}
		cat = x.reach.cat[bi];
		block_text(f, &x, bi);
		fputs("\n    allocated at:\n", f);
		report_stack_text(f, p, p->scan.blocks[bi].stack, "        ");
		if (cat == AN_REACH_DEFINITE) {
			fprintf(f, "    %s\n", why_intro(cat));
			continue;
		}
		fprintf(f, "    %s:\n", why_intro(cat));
		n = chain_walk(&x, bi, s, &skipped);
		if (n < 0) {
			lost_ctx_release(&x);
			return -1;
		}
		for (long k = 0; k < n; k++) {
			if (skipped && k == CHAIN_MAX / 2)
				fprintf(f, "      ... %zu more links\n", skipped);
			fputs("      <- ", f);
			step_ref_text(f, &x, &s[k]);
		}
		if (!n)
			fputs("      (none)\n", f);
		if (cat == AN_REACH_INDIRECT) {
			uint32_t top = chain_top(&x, bi);

			fputs("      ", f);
			block_text(f, &x, top);
			fputs(": the root of the lost structure, allocated at:\n", f);
			report_stack_text(f, p, p->scan.blocks[top].stack, "          ");
		}
	}
	lost_ctx_release(&x);
	return 0;
}

static void block_json(struct json *j, const struct lost_ctx *x, uint32_t bi)
{
	const struct cp_block *b = &x->p->scan.blocks[bi];

	json_key(j, "block");
	json_hex(j, b->user);
	json_key(j, "size");
	json_u64(j, b->size);
	json_key(j, "seq");
	json_u64(j, b->seq);
	json_key(j, "category");
	json_str(j, b->state == CP_LIVE ? an_reach_cat_name(x->reach.cat[bi]) : "freed");
}

int report_why_json(struct json *j, const struct cli_options *o, const struct cli_profile *p)
{
	struct lost_ctx x;
	struct step s[CHAIN_MAX];

	if (lost_ctx_init(&x, o, p, 1) < 0) {
		lost_ctx_release(&x);
		return -1;
	}
	json_key(j, "why");
	json_arr_begin(j);
	for (size_t i = 0; i < o->nwhy; i++) {
		uint32_t bi = block_of(p, o->why[i], 1);
		size_t skipped;
		long n;

		json_obj_begin(j);
		json_key(j, "address");
		json_hex(j, o->why[i]);
		if (bi == UINT32_MAX) {
			json_key(j, "error");
			json_str(j, "no live block holds this address");
			json_obj_end(j);
			continue;
		}
		block_json(j, &x, bi);
		json_key(j, "frames");
		report_stack_json(j, p, p->scan.blocks[bi].stack);
		n = chain_walk(&x, bi, s, &skipped);
		if (n < 0)
			n = 0;
		json_key(j, "chain");
		json_arr_begin(j);
		for (long k = 0; k < n; k++) {
			struct where w;

			json_obj_begin(j);
			block_json(j, &x, s[k].to);
			if (s[k].have_ref) {
				const struct cp_block *t = &p->scan.blocks[s[k].to];

				json_key(j, "start_pointer");
				json_bool(j, s[k].ref.value == t->user);
				json_key(j, "value");
				json_hex(j, s[k].ref.value);
				json_key(j, "from");
				where_of(&x, &s[k].ref, &w);
				where_json(j, &x, &w);
			}
			json_obj_end(j);
		}
		json_arr_end(j);
		json_key(j, "links_left_out");   /* after the first CHAIN_MAX/2 links */
		json_u64(j, skipped);
		if (x.reach.cat[bi] == AN_REACH_INDIRECT || x.reach.cat[bi] == AN_REACH_DEFINITE) {
			uint32_t top = chain_top(&x, bi);

			json_key(j, "lost_root");
			json_obj_begin(j);
			block_json(j, &x, top);
			json_key(j, "frames");
			report_stack_json(j, p, p->scan.blocks[top].stack);
			json_obj_end(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	lost_ctx_release(&x);
	return 0;
}

int report_refs_text(FILE *f, const struct cli_options *o, const struct cli_profile *p)
{
	struct lost_ctx x;

	if (lost_ctx_init(&x, o, p, 0) < 0) {
		lost_ctx_release(&x);
		return -1;
	}
	for (size_t i = 0; i < o->nrefs; i++) {
		uint32_t bi = block_of(p, o->refs[i], 0);
		struct an_ref *r = NULL;
		size_t n = 0;

		fprintf(f, "\nrefs 0x%" PRIx64 ": ", o->refs[i]);
		if (bi == UINT32_MAX) {
			fputs("no block holds this address\n", f);
			continue;
		}
		if (an_reach_refs(p->img, &p->scan, &x.roots, bi, &r, &n) < 0) {
			lost_ctx_release(&x);
			return -1;
		}
		block_text(f, &x, bi);
		fprintf(f, ": %zu reference%s\n", n, n == 1 ? "" : "s");
		for (size_t k = 0; k < n; k++) {
			struct where w;

			where_of(&x, &r[k], &w);
			if (r[k].value == p->scan.blocks[bi].user)
				fputs("    start pointer at ", f);
			else
				fprintf(f, "    interior pointer (+%" PRIu64 ") at ",
					r[k].value - p->scan.blocks[bi].user);
			where_text(f, &x, &w);
			fputc('\n', f);
		}
		free(r);
	}
	lost_ctx_release(&x);
	return 0;
}

int report_refs_json(struct json *j, const struct cli_options *o, const struct cli_profile *p)
{
	struct lost_ctx x;

	if (lost_ctx_init(&x, o, p, 0) < 0) {
		lost_ctx_release(&x);
		return -1;
	}
	json_key(j, "refs");
	json_arr_begin(j);
	for (size_t i = 0; i < o->nrefs; i++) {
		uint32_t bi = block_of(p, o->refs[i], 0);
		struct an_ref *r = NULL;
		size_t n = 0;

		json_obj_begin(j);
		json_key(j, "address");
		json_hex(j, o->refs[i]);
		if (bi == UINT32_MAX) {
			json_key(j, "error");
			json_str(j, "no block holds this address");
			json_obj_end(j);
			continue;
		}
		if (an_reach_refs(p->img, &p->scan, &x.roots, bi, &r, &n) < 0) {
			json_obj_end(j);
			break;
		}
		block_json(j, &x, bi);
		json_key(j, "references");
		json_arr_begin(j);
		for (size_t k = 0; k < n; k++) {
			struct where w;

			json_obj_begin(j);
			json_key(j, "value");
			json_hex(j, r[k].value);
			json_key(j, "start_pointer");
			json_bool(j, r[k].value == p->scan.blocks[bi].user);
			json_key(j, "where");
			where_of(&x, &r[k], &w);
			where_json(j, &x, &w);
			json_obj_end(j);
		}
		json_arr_end(j);
		free(r);
		json_obj_end(j);
	}
	json_arr_end(j);
	lost_ctx_release(&x);
	return 0;
}
