/* datasym.c - name any address of the image as module+offset and symbol+offset:
 * global variables in a module's data or bss, functions in its code. For
 * --addr (issue 6) and the roots of the reachability report.
 *
 * Its own libdwfl session over the core (or the firmware ELF of a raw dump), kept
 * apart from the frame symbolizer so that both can be used at once and neither
 * depends on the other's backend (the gdb backend has no Dwfl). Opened lazily by
 * the caller, only when an address needs a name.
 */
#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "reach.h"

struct cli_datasym {
	Dwfl *dwfl;
	Dwfl_Callbacks cb;        /* libdwfl keeps a pointer to it */
	char *debuginfo_path;
	int core_fd;
	Elf *core_elf;
	void *cxx;                /* dlopen'd libstdc++ for __cxa_demangle, or NULL */
	char *(*demangle)(const char *, char *, size_t *, int *);
	char **names;             /* demangled names handed out, freed with the session */
	size_t nnames, capnames;
	int tls_done;             /* the TLS layout below was looked for */
	Dwfl_Module *exe;         /* the executable (the module holding AT_ENTRY), or NULL */
	uint64_t exe_tls_off;     /* its TLS block is at tp - this (0: it has none) */
	uint64_t exe_tls_memsz;
};

/* The sysroot for ds_find_elf (libdwfl's callback has no user argument). */
static const char *ds_sysroot;

/* Build-id links first, then the module's own path (under the sysroot). */
static int ds_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);

	if (fd >= 0 || *elfp)
		return fd;
	return sym_module_open(ds_sysroot, modname, file_name);
}

static void ds_error(struct cp_error *err, int code, const char *fmt, const char *a, const char *b)
{
	err->code = code;
	snprintf(err->msg, sizeof(err->msg), fmt, a, b);
}

struct cli_datasym *cli_datasym_lazy(const struct cli_options *o, const struct cp_image *img,
				     struct cli_datasym **ds, int *tried, const char *what)
{
	if (!*tried) {
		struct cp_error err = { 0 };

		*tried = 1;
		*ds = cli_datasym_open(o, img, &err);
		if (!*ds && !o->quiet)
			fprintf(stderr, "mprof-core: note: no symbols for %s: %s\n", what, err.msg);
	}
	return *ds;
}

void cli_datasym_free(struct cli_datasym *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	if (d->core_elf)
		elf_end(d->core_elf);
	if (d->core_fd >= 0)
		close(d->core_fd);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	if (d->cxx)
		dlclose(d->cxx);
	free(d->debuginfo_path);
	free(d);
}

struct cli_datasym *cli_datasym_open(const struct cli_options *o, const struct cp_image *img,
				     struct cp_error *err)
{
	struct cli_datasym *d = calloc(1, sizeof(*d));
	const char *what = o->core ? o->core : o->prog;
	int code = CP_ENOMEM;   /* what a failure below means; CP_EFORMAT: ask libdwfl */
	size_t len = 64;
	int n;

	if (!d)
		goto fail;
	d->core_fd = -1;
	ds_sysroot = o->sysroot;
	for (size_t i = 0; i < o->ndebug_dirs; i++)
		len += strlen(o->debug_dirs[i]) + 1;
	if (!(d->debuginfo_path = malloc(len)))
		goto fail;
	strcpy(d->debuginfo_path, "-.debug:/usr/lib/debug");
	for (size_t i = 0; i < o->ndebug_dirs; i++) {
		strcat(d->debuginfo_path, ":");
		strcat(d->debuginfo_path, o->debug_dirs[i]);
	}
	d->cb.find_elf = o->core ? ds_find_elf : dwfl_build_id_find_elf;
	d->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	d->cb.section_address = dwfl_offline_section_address;
	d->cb.debuginfo_path = &d->debuginfo_path;
	elf_version(EV_CURRENT);
	code = CP_EFORMAT;
	if (!(d->dwfl = dwfl_begin(&d->cb)))
		goto fail;
	dwfl_report_begin(d->dwfl);
	if (o->core) {
		d->core_fd = open(img ? cp_image_data_path(img) : o->core, O_RDONLY | O_CLOEXEC);
		if (d->core_fd < 0) {
			code = CP_EIO;
			goto fail;
		}
		d->core_elf = elf_begin(d->core_fd, ELF_C_READ_MMAP, NULL);
		n = d->core_elf ? dwfl_core_file_report(d->dwfl, d->core_elf, o->prog) : -1;
		if (n < 0)
			goto fail;
		/* a qemu-user core (no NT_FILE) of a static program: the program alone,
		 * where the symbolizer puts it, or no address would be named */
		if (n == 0)
			(void)sym_dwfl_report_exe_at_entry(d->dwfl, d->core_elf, o->prog);
	} else if (!dwfl_report_elf(d->dwfl, o->prog, o->prog, -1, 0, false)) {
		goto fail;
	}
	if (dwfl_report_end(d->dwfl, NULL, NULL) != 0)
		goto fail;
	/* C++ names: libstdc++'s demangler when it is installed (we link no C++) */
	d->cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (d->cxx) {
		void *fn = dlsym(d->cxx, "__cxa_demangle");

		memcpy(&d->demangle, &fn, sizeof(fn));
	}
	return d;
fail:
	if (code == CP_EFORMAT)
		ds_error(err, code, "%s: libdwfl: %s", what, dwfl_errmsg(-1));
	else
		ds_error(err, code, "%s: %s", what, code == CP_EIO ? "cannot open" : "out of memory");
	cli_datasym_free(d);
	return NULL;
}

/* The demangled form of a Rust or C++ symbol name, kept until the session ends; other
 * names (and any failure) as they are. */
static const char *ds_demangle(struct cli_datasym *d, const char *raw)
{
	char *out;
	char rust[4096];
	int status = -1;
	int is_rust = raw[0] == '_' && (raw[1] == 'R' || raw[1] == 'Z') &&
		      sym_rust_demangle(raw, rust, sizeof rust) == 0;

	if (!is_rust && (!d->demangle || raw[0] != '_' || raw[1] != 'Z'))
		return raw;
	if (d->nnames == d->capnames) {
		size_t cap = d->capnames ? 2 * d->capnames : 16;
		char **n = realloc(d->names, cap * sizeof(*n));

		if (!n)
			return raw;
		d->names = n;
		d->capnames = cap;
	}
	if (is_rust) {
		out = strdup(rust);
		status = out ? 0 : -1;
	} else {
		out = d->demangle(raw, NULL, NULL, &status);
	}
	if (!out || status != 0) {
		free(out);
		return raw;
	}
	d->names[d->nnames++] = out;
	return out;
}

/* May sym name an address in a section as gdb's minimal symbols do: a
 * function, variable or label with a name, not a section, file or TLS symbol,
 * nor ARM's mapping symbols ($a, $d, $t, $x)? */
static int ds_sym_names(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && name[0] != '$' && sym->st_shndx != SHN_UNDEF &&
	       (type == STT_NOTYPE || type == STT_OBJECT || type == STT_FUNC ||
		type == STT_GNU_IFUNC || type == STT_COMMON);
}

/* addr is in mod but in no symbol's extent: fill out's section, the symbol
 * before addr in that section and the span no symbol covers. */
static void ds_section(struct cli_datasym *d, Dwfl_Module *mod, uint64_t addr, struct cli_symref *out)
{
	Dwarf_Addr off = addr, bias = 0, lo, hi;
	Elf_Scn *scn = dwfl_module_address_section(mod, &off, &bias);
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Shdr sh;
	size_t shstrndx;
	int n;

	if (!scn || !elf || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	out->section = elf_strptr(elf, shstrndx, sh.sh_name);
	if (!out->section)
		return;
	out->sec_offset = off;
	lo = addr - off;             /* the section's start and end */
	hi = lo + sh.sh_size;
	out->gap_lo = lo;
	out->gap_hi = hi;
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr sa;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &sa, NULL, NULL, NULL);

		if (!ds_sym_names(name, &sym) || sa < lo || sa >= hi)
			continue;
		if (sa > addr) {
			if (sa < out->gap_hi)
				out->gap_hi = sa;
			continue;
		}
		if (sa + sym.st_size > out->gap_lo)
			out->gap_lo = sa + sym.st_size <= addr ? sa + sym.st_size : addr;
		/* the nearest before; at one address the first, as gdb */
		if (!out->before || addr - sa < out->before_offset) {
			out->before = ds_demangle(d, name);
			out->before_offset = addr - sa;
			out->before_size = sym.st_size;
			out->before_is_func = GELF_ST_TYPE(sym.st_info) == STT_FUNC;
			out->before_is_label = GELF_ST_TYPE(sym.st_info) == STT_NOTYPE || !sym.st_size;
		}
	}
}

/* Limits on a module's PT_TLS beyond which glibc's loader would not have placed
 * it (a crafted p_align of 2^40 or 2^63 would otherwise stretch a thread's TLS
 * over other threads' stacks), and on the DTV entries read. */
#define DS_TLS_ALIGN_MAX (1u << 20)
#define DS_TLS_SIZE_MAX (1u << 30)
#define DS_DTV_MAX 4096u

/* The executable's PT_TLS into d->exe_tls_off and d->exe_tls_memsz, placed as
 * glibc's _dl_determine_tlsoffset places the first module (module id 1):
 * off = round_up(memsz - firstbyte, align) + firstbyte, modulo 2^64 as glibc
 * computes it, where firstbyte keeps the block's p_vaddr alignment. A block
 * whose alignment or size break the caps above is left out. */
static void ds_tls_exe(struct cli_datasym *d)
{
	GElf_Addr bias;
	Elf *elf = d->exe ? dwfl_module_getelf(d->exe, &bias) : NULL;
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t align, first, off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_TLS || !ph.p_memsz)
			continue;
		align = ph.p_align > 1 && !(ph.p_align & (ph.p_align - 1)) ? ph.p_align : 1;
		if (align > DS_TLS_ALIGN_MAX || ph.p_memsz > DS_TLS_SIZE_MAX)
			return;   /* not a TLS block glibc would have loaded */
		first = -(ph.p_vaddr & (align - 1)) & (align - 1);
		off = ((ph.p_memsz - first + align - 1) & ~(align - 1)) + first;
		if (!off || off > DS_TLS_SIZE_MAX + DS_TLS_ALIGN_MAX)
			return;
		d->exe_tls_off = off;
		d->exe_tls_memsz = ph.p_memsz;
		return;
	}
}

/* Are a and b in one run of adjacent segments with the same flags (one mapping,
 * which a gcore may split)? */
static int ds_same_run(const struct cp_image *img, uint64_t a, uint64_t b)
{
	const struct cp_segment *sa = cp_image_segment(img, a), *sb = cp_image_segment(img, b), *s;

	if (!sa || !sb)
		return 0;
	if (sa > sb) {
		s = sa;
		sa = sb;
		sb = s;
	}
	for (s = sa; s < sb; s++)
		if (s->vaddr + s->memsz != s[1].vaddr || s->flags != s[1].flags)
			return 0;
	return 1;
}

/* The lowest static TLS block of the thread whose thread pointer is tp, as its
 * DTV lists them, into *lo. glibc's x86-64 TCB holds the DTV pointer at tp + 8;
 * the DTV is an array of 16-byte entries whose entry -1 holds its length and
 * entry i (i >= 1) module i's block (-1: not allocated yet). Static blocks lie
 * below tp in tp's own mapping, above the stack pointer sp when the thread's
 * stack shares that mapping (a thread glibc created); a dlopen'd module's block
 * is elsewhere (malloc'd) and is not counted. Returns 0, or -1 when the core
 * does not hold the DTV (*lo is tp when it lists no static block). */
static int ds_dtv_static(const struct cp_image *img, uint64_t tp, uint64_t sp, uint64_t *lo)
{
	int stack_below = sp < tp && ds_same_run(img, sp, tp - 1);

	uint64_t dtv, len, val;

	*lo = tp;
	if (tp > UINT64_MAX - 16 || cp_image_read_word(img, tp + 8, &dtv) < 0 || dtv < 16 ||
	    cp_image_read_word(img, dtv - 16, &len) < 0)
		return -1;
	if (len > DS_DTV_MAX)
		len = DS_DTV_MAX;
	if (dtv > UINT64_MAX - 16 * (len + 1))
		return -1;
	for (uint64_t i = 1; i <= len; i++) {
		if (cp_image_read_word(img, dtv + 16 * i, &val) < 0)
			break;
		if (!val || val >= tp || tp - val > DS_TLS_SIZE_MAX || (stack_below && val <= sp) ||
		    !ds_same_run(img, val, tp - 1))
			continue;
		if (val < *lo)
			*lo = val;
	}
	return 0;
}

/* The executable's TLS variable at offset off of its TLS block into out. */
static void ds_tls_symbol(struct cli_datasym *d, uint64_t off, struct cli_tlsref *out)
{
	int n = dwfl_module_getsymtab(d->exe);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr sa;
		const char *name = dwfl_module_getsym_info(d->exe, i, &sym, &sa, NULL, NULL, NULL);

		/* an STT_TLS symbol's value is its offset in the TLS segment */
		if (!name || !name[0] || GELF_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF ||
		    off < sym.st_value || off - sym.st_value >= (sym.st_size ? sym.st_size : 1))
			continue;
		out->module = dwfl_module_info(d->exe, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		out->name = ds_demangle(d, name);
		out->offset = off - sym.st_value;
		out->size = sym.st_size;
		return;
	}
}

int cli_datasym_tls(struct cli_datasym *d, const struct cp_image *img, uint64_t addr,
		    struct cli_tlsref *out)
{
	uint64_t tp, entry, lo, sp;
	size_t partial = SIZE_MAX;

	memset(out, 0, sizeof(*out));
	if (!d || img->kind != CP_KIND_CORE)
		return 0;
	if (!d->tls_done) {
		d->tls_done = 1;
		if (cp_image_auxv(img, AT_ENTRY, &entry) == 0)
			d->exe = dwfl_addrmodule(d->dwfl, entry);
		ds_tls_exe(d);
	}
	/* a snapshot's thread with partial registers has its TCB, and the static
	 * TLS below it, on its stack above its stack pointer, in one run of
	 * segments: only the one with the highest stack pointer at or below addr
	 * can hold it, when that pointer is in addr's run (finding a TCB on a
	 * stack costs reads: with 1,000 threads in one merged mapping, every
	 * one of them per address) */
	for (size_t t = 0; t < img->nthreads; t++) {
		sp = img->threads[t].sp;
		if (an_regs_partial(img, t) && sp <= addr && (partial == SIZE_MAX || sp > img->threads[partial].sp))
			partial = t;
	}
	if (partial != SIZE_MAX && !ds_same_run(img, img->threads[partial].sp, addr))
		partial = SIZE_MAX;
	for (size_t t = 0; t < img->nthreads; t++) {
		if ((an_regs_partial(img, t) && t != partial) || an_thread_pointer(img, t, &tp) < 0 ||
		    addr >= tp || !ds_same_run(img, addr, tp - 1))
			continue;
		/* the static blocks the DTV lists; without it the executable's alone */
		sp = img->threads[t].sp;
		if (ds_dtv_static(img, tp, sp, &lo) == 0 ? addr < lo :
		    !d->exe_tls_off || tp - addr > d->exe_tls_off ||
		    (sp < tp && addr <= sp && ds_same_run(img, sp, tp - 1)))
			continue;
		out->thread = t;
		out->tp = tp;
		if (d->exe_tls_off && addr >= tp - d->exe_tls_off &&
		    addr - (tp - d->exe_tls_off) < d->exe_tls_memsz)
			ds_tls_symbol(d, addr - (tp - d->exe_tls_off), out);
		return 1;
	}
	return 0;
}

/* 1 when MOD is 32-bit ARM code, whose Thumb functions have bit 0 set in their
 * symbol values. */
static int ds_thumb(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;

	return e && gelf_getehdr(e, &eh) && eh.e_machine == EM_ARM;
}

/* A Thumb function's code starts at its symbol value less 1 (f_leak at 0x1c0 has
 * the value 0x1c1): the lookup of its first byte found the function before it,
 * and an offset into it was one short. Returns the name for ADDR with *OFF from
 * the code's first byte (NAME as found when no Thumb function is involved). */
static const char *ds_thumb_fix(Dwfl_Module *mod, uint64_t addr, const char *name, GElf_Off *off,
				GElf_Sym *sym)
{
	GElf_Off off1 = 0;
	GElf_Sym sym1;
	const char *n1;

	if (!(addr & 1)) {
		n1 = dwfl_module_addrinfo(mod, addr | 1, &off1, &sym1, NULL, NULL, NULL);
		if (n1 && GELF_ST_TYPE(sym1.st_info) == STT_FUNC && off1 == 0 && (sym1.st_value & 1)) {
			*sym = sym1;
			*off = 0;
			return n1;
		}
	}
	if (name && GELF_ST_TYPE(sym->st_info) == STT_FUNC && (sym->st_value & 1))
		*off += 1;   /* the lookup counted from the symbol's value */
	return name;
}

int cli_datasym(struct cli_datasym *d, uint64_t addr, struct cli_symref *out)
{
	Dwfl_Module *mod;
	GElf_Sym sym;
	GElf_Off off = 0;
	GElf_Addr bias = 0;
	Dwarf_Addr start = 0;
	const char *name, *modname;

	memset(out, 0, sizeof(*out));
	if (!d || !(mod = dwfl_addrmodule(d->dwfl, addr)))
		return -1;
	modname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	out->module = modname;
	if (dwfl_module_getelf(mod, &bias))
		out->modoff = addr - bias;
	else
		out->modoff = addr - start;
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (ds_thumb(mod))
		name = ds_thumb_fix(mod, addr, name, &off, &sym);
	if (name && *name && (off < sym.st_size || (sym.st_size == 0 && off == 0))) {
		out->name = ds_demangle(d, name);
		out->offset = off;
		out->start = addr - off;
		out->size = sym.st_size;
		out->is_func = GELF_ST_TYPE(sym.st_info) == STT_FUNC;
	} else {
		ds_section(d, mod, addr, out);
	}
	return 0;
}
