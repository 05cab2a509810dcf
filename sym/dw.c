/* dw.c - the default symbolizer backend: libdwfl over an ELF core (load map from
 * the core) or over one ELF at its own addresses (raw dumps of static firmware).
 * Names come from DWARF (inline chain expanded, through a per-CU scope index built
 * once: dw_scope.c) or else from a sorted per-module symbol index; never from
 * dwfl_module_addrinfo (a scan of the whole symbol table per call in elfutils
 * 0.188) nor dwarf_getscopes (a walk of the whole CU per call). C++ names are
 * demangled by libstdc++'s __cxa_demangle, dlopen'd so that we link no C++
 * runtime. A module whose file on disk is not the one in the core is shown as
 * module+offset only. Never touches the network (DEBUGINFOD_URLS is unset).
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dw_priv.h"
#include "grow.h"
#include "sym.h"

/* One entry of a module's function index. */
struct dw_fsym {
	uint64_t addr;        /* absolute (bias applied) start */
	uint64_t size;        /* st_size, 0 if unknown */
	const char *name;     /* raw (mangled) name, owned by libelf's string table */
	int rank;             /* GLOBAL 0, WEAK 1, LOCAL 2: lower wins on ties */
};

/* What we learnt about one Dwfl_Module; prepared on the first address in it. */
struct dw_module {
	struct dw_module *next;   /* all modules, for freeing */
	Dwfl_Module *mod;
	const char *name;         /* interned: the path the image gives */
	uint64_t start, end;      /* address range in the image */
	uint64_t bias;            /* load bias (start when the file could not be used) */
	int has_elf;              /* the file on disk was accepted */
	int has_dwarf;            /* DWARF found (in the file or separate debuginfo) */
	int mismatch;             /* build-ids differ: show module+offset only */
	struct dw_fsym *syms;     /* sorted by addr */
	size_t nsyms;
	struct dw_fsym *labels;   /* code labels (dw_module_labels), sorted by addr */
	size_t nlabels;
	int labels_done;          /* labels above looked for */
	struct dw_xsec { uint64_t lo, hi; } *xsecs; /* executable sections (bias applied) */
	size_t nxsecs;
	int xsecs_done;           /* xsecs above looked for */
	struct dw_cutab cus;      /* scope indexes of the CUs used so far */
	struct dw_cutable cutable; /* CUs by their own ranges, for files without .debug_aranges */
	int aranges_state;        /* 0 not known yet, 1 .debug_aranges name every CU with code, -1 not */
	int secs_state;           /* 0 not looked up, 1 secs below found, -1 none */
	struct dw_secs secs;      /* the DWARF sections dw_line.c and dw_die.c read */
	struct dw_ptrmap onames;  /* abstract origin offset + 1 -> name of the scopes it names */
	struct dw_ptrmap olinks;  /* the same -> (void *)1 when that name is a linkage name */
	int ckey_ok;              /* ckey below is set: the module may be cached */
	struct dw_ckey ckey;      /* what its cache file must match */
	struct dw_cache cache;    /* its mapped cache file (cache.base NULL: none) */
	struct dw_ptrmap touched; /* CU offset + 1 -> struct dw_cuidx decoded here (for the cache) */
	int dirty;                /* touched holds CUs the cache file lacks */
	char *cache_path;         /* the mapped cache file's path (for notes), or NULL */
	int cache_unit_noted;     /* a damaged unit of it was noted */
};

struct dw_symbolizer {
	struct symbolizer base;       /* must be first */
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;     /* libdwfl keeps a pointer to this */
	char *debuginfo_path;         /* ":.debug:/usr/lib/debug:DIR..." for libdwfl */
	char *sysroot;                /* NULL or the directory prefixed to module paths */
	int core_fd;
	Elf *core_elf;
	struct dw_module *modules;
	struct dw_arena arena;
	struct dw_ptrmap names;       /* raw name pointer -> interned display name */
	struct sym_table table;       /* the last resolve's result */
	size_t locs_cap, frames_cap;
	char *notes;                  /* '\n'-separated, NUL-terminated */
	size_t notes_len, notes_cap;
	char *exe;                    /* the program as given */
	unsigned char exe_id[64];     /* its build-id */
	int exe_idlen;                /* -1 when it has none */
	Dwfl_Module *main_mod;        /* module holding the core's AT_ENTRY, or NULL */
	unsigned machine;             /* e_machine of the core (or of the exe in raw mode) */
	void *cxx_handle;             /* dlopen'd libstdc++, or NULL */
	char *(*cxa_demangle)(const char *, char *, size_t *, int *);
	char *demangle_buf;           /* reused output buffer of __cxa_demangle */
	size_t demangle_cap;
	int reference;                /* SYM_DW_REFERENCE: every line asked of libdw */
	char *cache_dir;              /* per-module index files, or NULL (dw_cache.c) */
	int cache_write_noted;        /* a failure to write one was noted */
	uint64_t cache_max;           /* the directory's size limit ($MPROF_CACHE_MAX) */
	int cache_evict_noted;        /* a failure to keep it under the limit was noted */
	unsigned nthreads;            /* threads it may use (dw_pool_threads) */
	struct dw_ptrmap dbg_asked;   /* Dwfl_Module -> itself once its debug file was sought */
	struct dw_ptrmap unloaded;    /* Dwfl_Module -> itself for a library unloaded before
				       * the core (sym_unloaded): its build-id was checked
				       * against the record, the core has none of its bytes */
};

/* libdwfl's callbacks carry no user pointer: the symbolizer being driven is
 * found here. Set on entry to every function that calls into libdwfl. */
static _Thread_local struct dw_symbolizer *dw_current;

static int dw_error(struct sym_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int dw_error(struct sym_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Append one line to the notes (dropped silently when out of memory). */
static void dw_note(struct dw_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void dw_note(struct dw_symbolizer *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
	if (s->notes_len + len + 2 > s->notes_cap) {
		size_t ncap = s->notes_cap ? s->notes_cap * 2 : 1024;
		while (ncap < s->notes_len + len + 2)
			ncap *= 2;
		char *p = realloc(s->notes, ncap);
		if (!p)
			return;
		s->notes = p;
		s->notes_cap = ncap;
	}
	memcpy(s->notes + s->notes_len, line, len);
	s->notes_len += len;
	s->notes[s->notes_len++] = '\n';
	s->notes[s->notes_len] = '\0';
}

/* ---- finding files ---------------------------------------------------- */

/* Our find_elf: the program for the main module and build-id links under the
 * debug directories (dwfl_build_id_find_elf), then the module's own path under
 * the sysroot (or as is). libdwfl checks the build-id of what we return. */
static int dw_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct dw_symbolizer *s = dw_current;
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);
	if (fd >= 0 || *elfp)
		return fd;
	return sym_module_open(s ? s->sysroot : NULL, modname, file_name);
}

/* Append ":" and dir (made absolute: libdwfl reads relative entries as relative
 * to each module's own directory) to the path being built in *p. */
static int dw_path_append(char **p, size_t *len, const char *dir, const char *suffix)
{
	char *abs = NULL;
	if (dir[0] != '/') {
		abs = realpath(dir, NULL);
		if (!abs) {
			char cwd[4096];
			if (!getcwd(cwd, sizeof cwd))
				return -1;
			abs = malloc(strlen(cwd) + strlen(dir) + 2);
			if (!abs)
				return -1;
			sprintf(abs, "%s/%s", cwd, dir);
		}
		dir = abs;
	}
	size_t add = 1 + strlen(dir) + strlen(suffix);
	char *q = realloc(*p, *len + add + 1);
	if (!q) {
		free(abs);
		return -1;
	}
	sprintf(q + *len, ":%s%s", dir, suffix);
	*p = q;
	*len += add;
	free(abs);
	return 0;
}

/* debuginfo_path for dwfl_standard_find_debuginfo: next to the file, .debug/,
 * /usr/lib/debug (under the sysroot too), then every --debug-dir. NULL when
 * out of memory. */
static char *dw_debuginfo_path(const struct sym_options *opt)
{
	const char *base = ":.debug:/usr/lib/debug";
	size_t len = strlen(base);
	char *p = strdup(base);
	if (!p)
		return NULL;
	if (opt->sysroot && dw_path_append(&p, &len, opt->sysroot, "/usr/lib/debug") < 0)
		goto fail;
	for (const char *const *d = opt->debug_dirs; d && *d; d++)
		if (dw_path_append(&p, &len, *d, "") < 0)
			goto fail;
	return p;
fail:
	free(p);
	return NULL;
}

/* ---- names ------------------------------------------------------------ */

static const char *dw_name_demangle(struct dw_symbolizer *s, const char *raw);

/* The demangled form of a Rust or C++ symbol, interned; other names interned as is.
 * raw points into a string table that lives as long as the Dwfl, so the result
 * is cached by that pointer: inlined instances share their linkage name. */
static const char *dw_name(struct dw_symbolizer *s, const char *raw)
{
	if (!raw)
		return NULL;
	const char *known = dw_ptrmap_get(&s->names, raw);
	if (known)
		return known;
	const char *name = dw_name_demangle(s, raw);
	if (name)
		dw_ptrmap_put(&s->names, raw, name);  /* a failure only costs speed */
	return name;
}

/* dw_name without the cache. */
static const char *dw_name_demangle(struct dw_symbolizer *s, const char *raw)
{
	char rust[4096];

	/* before __cxa_demangle, which reads a legacy Rust name as C++ (its hash
	 * and "$LT$" escapes kept) and knows no v0 name */
	if (raw[0] == '_' && (raw[1] == 'R' || raw[1] == 'Z') && sym_rust_demangle(raw, rust, sizeof rust) == 0)
		return dw_arena_intern(&s->arena, rust);
	if (s->cxa_demangle && raw[0] == '_' && raw[1] == 'Z') {
		int status = -1;
		size_t cap = s->demangle_cap;
		char *out = s->cxa_demangle(raw, s->demangle_buf, &cap, &status);
		if (out) {
			/* __cxa_demangle may have realloc'd the buffer */
			s->demangle_buf = out;
			s->demangle_cap = cap;
			if (status == 0)
				return dw_arena_intern(&s->arena, out);
		}
	}
	return dw_arena_intern(&s->arena, raw);
}

/* Is the CU of die C++ (where DW_AT_name alone drops namespaces and classes)? */
static int dw_die_is_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return 0;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		return 1;
	default:
		return 0;
	}
}

/* name qualified by the namespaces and classes around decl, the DIE that holds
 * DW_AT_name ("(anonymous namespace)::hidden"), interned; cached by decl. */
static const char *dw_die_qualified(struct dw_symbolizer *s, Dwarf_Die *decl, const char *name)
{
	const char *known = dw_ptrmap_get(&s->names, decl->addr);
	if (known)
		return known;
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(decl, &scopes);
	char buf[1024];
	size_t len = 0;
	buf[0] = '\0';
	for (int i = n - 1; i >= 1; i--) {   /* outermost first; [0] is decl itself */
		int tag = dwarf_tag(&scopes[i]);
		const char *part;
		if (tag == DW_TAG_namespace)
			part = dwarf_diename(&scopes[i]) ? dwarf_diename(&scopes[i]) : "(anonymous namespace)";
		else if (tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type)
			part = dwarf_diename(&scopes[i]) ? dwarf_diename(&scopes[i]) : "(anonymous class)";
		else
			continue;
		int k = snprintf(buf + len, sizeof buf - len, "%s::", part);
		if (k < 0 || (size_t)k >= sizeof buf - len)
			break;
		len += (size_t)k;
	}
	free(scopes);
	const char *q;
	if (len && len + strlen(name) < sizeof buf) {
		memcpy(buf + len, name, strlen(name) + 1);
		q = dw_arena_intern(&s->arena, buf);
	} else {
		q = dw_arena_intern(&s->arena, name);
	}
	if (q)
		dw_ptrmap_put(&s->names, decl->addr, q);
	return q;
}

/* The name of a subprogram or inlined-subroutine DIE: linkage name demangled
 * when there is one, else DW_AT_name (following abstract origins and
 * specifications), qualified by its namespaces and classes in C++. *linkage
 * tells whether a linkage name was found (without one, C++ names lack the
 * parameter list, which the symbol table may still give). */
static const char *dw_die_name(struct dw_symbolizer *s, Dwarf_Die *die, int *linkage)
{
	Dwarf_Attribute attr;
	const char *raw = NULL;
	*linkage = 0;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		raw = dwarf_formstring(&attr);
	if (raw) {
		*linkage = 1;
		return dw_name(s, raw);
	}
	/* find the DIE that carries the name: origins and specifications lead to it */
	Dwarf_Die cur = *die, next;
	for (int hops = 0; hops < 8 && !dwarf_hasattr(&cur, DW_AT_name); hops++) {
		if (dwarf_attr(&cur, DW_AT_abstract_origin, &attr) ||
		    dwarf_attr(&cur, DW_AT_specification, &attr)) {
			if (!dwarf_formref_die(&attr, &next))
				return NULL;
			cur = next;
		} else {
			return NULL;
		}
	}
	raw = dwarf_diename(&cur);
	if (!raw)
		return NULL;
	if (dw_die_is_cxx(&cur))
		return dw_die_qualified(s, &cur, raw);
	return dw_name(s, raw);
}

/* ---- symbol index ----------------------------------------------------- */

static int dw_fsym_cmp(const void *a, const void *b)
{
	const struct dw_fsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->size < y->size) - (x->size > y->size);  /* larger size first */
}

/* Sort the n symbols of a by dw_fsym_cmp, equal ones kept in their order (as
 * glibc's qsort, a merge sort, kept them: the first of equal entries is the
 * one kept below), with tmp as room for n: a bottom-up merge sort whose
 * passes go from one array to the other. qsort copied each 32-byte entry
 * through memcpy and called the comparison through a pointer: 25M
 * instructions for the 26,000 symbols of the generated program. Returns a or
 * tmp, whichever holds the result. */
static struct dw_fsym *dw_fsym_sort(struct dw_fsym *a, struct dw_fsym *tmp, size_t n)
{
	struct dw_fsym *src = a, *dst = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t i = 0; i < n; i += 2 * width) {
			size_t m = n - i > width ? i + width : n;
			size_t e = n - m > width ? m + width : n;
			size_t x = i, y = m, w = i;
			while (x < m && y < e)
				dst[w++] = dw_fsym_cmp(&src[y], &src[x]) < 0 ? src[y++] : src[x++];
			while (x < m)
				dst[w++] = src[x++];
			while (y < e)
				dst[w++] = src[y++];
		}
		struct dw_fsym *t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/* Build the sorted function index of a module from its symbol table, once. */
static void dw_module_index(struct dw_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	if (n <= 1)
		return;
	m->syms = malloc((size_t)n * sizeof *m->syms);
	if (!m->syms)
		return;
	size_t k = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !name[0])
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (shndx == SHN_UNDEF || addr == 0)
			continue;
		int bind = GELF_ST_BIND(sym.st_info);
		m->syms[k].addr = addr;
		m->syms[k].size = sym.st_size;
		m->syms[k].name = name;
		m->syms[k].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		k++;
	}
	struct dw_fsym *tmp = malloc((k ? k : 1) * sizeof *tmp);
	if (!tmp) {
		qsort(m->syms, k, sizeof *m->syms, dw_fsym_cmp);
	} else if (dw_fsym_sort(m->syms, tmp, k) == tmp) {
		free(m->syms);
		m->syms = tmp;
	} else {
		free(tmp);
	}
	/* keep the best entry per address */
	size_t w = 0;
	for (size_t i = 0; i < k; i++)
		if (w == 0 || m->syms[w - 1].addr != m->syms[i].addr)
			m->syms[w++] = m->syms[i];
	m->nsyms = w;
}

static int dw_label_cmp(const void *a, const void *b)
{
	const struct dw_fsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank - y->rank;
}

/* Index m's code labels, once: the untyped (NOTYPE) symbols of its executable
 * sections, which assembly code's entry points are (ld.so's _dl_start_user,
 * which calls the libraries' constructors), each reaching to the next label or
 * its section's end. ARM's mapping symbols ($a, $d, $t, $x) and assembler-local
 * .L names are not labels. Built on the first address no function symbol
 * covers, from the ELF's symbol table (also when the function index came from
 * the cache file, which holds function symbols only). */
static void dw_module_labels(struct dw_module *m)
{
	m->labels_done = 1;
	int n = m->has_elf ? dwfl_module_getsymtab(m->mod) : 0;
	size_t k = 0;
	for (int pass = 0; pass < 2; pass++) {   /* count, then fill */
		k = 0;
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr addr;
			GElf_Word shndx;
			Elf *elf;
			Dwarf_Addr bias;
			GElf_Shdr sh;
			const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &bias);
			if (!name || !name[0] || name[0] == '$' || (name[0] == '.' && name[1] == 'L') ||
			    GELF_ST_TYPE(sym.st_info) != STT_NOTYPE || shndx == SHN_UNDEF ||
			    shndx >= SHN_LORESERVE || addr == 0)
				continue;
			Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
			if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
			    sym.st_value < sh.sh_addr || sym.st_value - sh.sh_addr >= sh.sh_size)
				continue;
			if (pass == 1) {
				int bind = GELF_ST_BIND(sym.st_info);
				m->labels[k] = (struct dw_fsym){ addr, sh.sh_size - (sym.st_value - sh.sh_addr),
								 name, bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2 };
			}
			k++;
		}
		if (pass == 0 && (!k || !(m->labels = malloc(k * sizeof *m->labels))))
			return;
	}
	qsort(m->labels, k, sizeof *m->labels, dw_label_cmp);
	size_t w = 0;
	for (size_t i = 0; i < k; i++)
		if (w == 0 || m->labels[w - 1].addr != m->labels[i].addr)
			m->labels[w++] = m->labels[i];
	for (size_t i = 0; i + 1 < w; i++)
		if (m->labels[i].size > m->labels[i + 1].addr - m->labels[i].addr)
			m->labels[i].size = m->labels[i + 1].addr - m->labels[i].addr;
	m->nlabels = w;
}

/* The entry of the sorted index a of n at pc or the nearest before it, or NULL. */
static const struct dw_fsym *dw_fsym_at(const struct dw_fsym *a, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &a[lo - 1] : NULL;
}

/* Index m's executable sections, once (none without its ELF). */
static void dw_module_xsecs(struct dw_module *m)
{
	m->xsecs_done = 1;
	Dwarf_Addr bias;
	Elf *elf = m->has_elf ? dwfl_module_getelf(m->mod, &bias) : NULL;
	size_t cap = 0;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
		    (SHF_ALLOC | SHF_EXECINSTR) || !sh.sh_size)
			continue;
		if (m->nxsecs == cap) {
			cap = cap ? 2 * cap : 8;
			struct dw_xsec *t = realloc(m->xsecs, cap * sizeof *t);
			if (!t)
				return;
			m->xsecs = t;
		}
		m->xsecs[m->nxsecs++] = (struct dw_xsec){ sh.sh_addr + bias, sh.sh_addr + bias + sh.sh_size };
	}
}

/* Whether a sizeless function symbol at addr may cover pc (pc >= addr): when
 * both lie in one executable section of m, or m's sections are unknown, or the
 * symbol lies in none of them (code in a section not marked executable: a
 * firmware's, or an old -z noseparate-code link's; as before the bound). Past
 * its section's end a sizeless symbol (_fini, the last of a library) names
 * nothing: a return address of a library dlclose'd before the core, where
 * another one was loaded since, lands there ("_fini" for every frame). */
static int dw_sizeless_covers(struct dw_module *m, uint64_t addr, uint64_t pc)
{
	if (!m->xsecs_done)
		dw_module_xsecs(m);
	for (size_t i = 0; i < m->nxsecs; i++)
		if (addr >= m->xsecs[i].lo && addr < m->xsecs[i].hi)
			return pc < m->xsecs[i].hi;
	return 1;
}

/* The function symbol covering pc; else the code label covering it when no
 * function symbol starts between the two or covers the label (gdb's 'info
 * symbol' and eu-addr2line -f name such code so); else NULL. A sizeless
 * function symbol covers up to its section's end (dw_sizeless_covers). */
static const struct dw_fsym *dw_module_lookup(struct dw_module *m, uint64_t pc)
{
	const struct dw_fsym *f = dw_fsym_at(m->syms, m->nsyms, pc);
	if (f && (f->size ? pc < f->addr + f->size : dw_sizeless_covers(m, f->addr, pc)))
		return f;
	if (!m->labels_done)
		dw_module_labels(m);
	const struct dw_fsym *l = dw_fsym_at(m->labels, m->nlabels, pc);
	if (!l || pc >= l->addr + l->size)
		return NULL;
	if (f && (f->addr >= l->addr || l->addr < f->addr + f->size))
		return NULL;
	return l;
}

/* ---- modules ---------------------------------------------------------- */

static void dw_hex(char *out, size_t outsz, const unsigned char *p, int len)
{
	size_t o = 0;
	out[0] = '\0';
	for (int i = 0; i < len && o + 3 <= outsz; i++)
		o += (size_t)snprintf(out + o, outsz - o, "%02x", p[i]);
}

/* The GNU build-id of the ELF file at path into buf; its length, or -1.
 * *machine (if not NULL) gets e_machine, or stays as is. */
static int dw_file_build_id(const char *path, unsigned char *buf, size_t cap, unsigned *machine)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int len = -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		GElf_Ehdr eh;
		if (machine && gelf_getehdr(elf, &eh))
			*machine = eh.e_machine;
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
		if (n > 0 && (size_t)n <= cap) {
			memcpy(buf, id, (size_t)n);
			len = (int)n;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return len;
}

/* The core's bytes at [addr, addr+len), or NULL unless all are in the file. */
static const unsigned char *dw_core_bytes(struct dw_symbolizer *s, uint64_t addr, size_t len)
{
	size_t nph;
	if (elf_getphdrnum(s->core_elf, &nph) != 0)
		return NULL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(s->core_elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (addr - ph.p_vaddr) < len)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(s->core_elf, ph.p_offset + (addr - ph.p_vaddr), len, ELF_T_BYTE);
		return d ? d->d_buf : NULL;
	}
	return NULL;
}

/* The build-id as the core holds it in memory: find the file's GNU build-id
 * note, and read idlen bytes at its loaded address (file address + bias).
 * Returns idlen with out filled, 0 when the core does not hold those bytes,
 * -1 when the file has no such note. */
static int dw_core_build_id(struct dw_symbolizer *s, Elf *elf, uint64_t bias, size_t idlen,
			    unsigned char *out)
{
	size_t nph;
	if (idlen > 64 || elf_getphdrnum(elf, &nph) != 0)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz != idlen ||
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) != 0)
				continue;
			const unsigned char *mem = dw_core_bytes(s, ph.p_vaddr + desc_off + bias, idlen);
			if (!mem)
				return 0;
			memcpy(out, mem, idlen);
			return (int)idlen;
		}
	}
	return -1;
}

/* What the kernel appends in NT_FILE to the path of a file removed while mapped. */
#define DW_DELETED " (deleted)"

/* The file on disk that stands for mod: the program for the main module, else
 * the module's path under the sysroot (without DW_DELETED). Returns 0 with path
 * filled, or -1. */

static int dw_module_disk_path(const struct dw_symbolizer *s, Dwfl_Module *mod, const char *name,
			       char *path, size_t cap)
{
	int n;
	size_t len = name ? strlen(name) : 0, del = sizeof(DW_DELETED) - 1;
	if (mod == s->main_mod && s->exe)
		n = snprintf(path, cap, "%s", s->exe);
	else if (name && name[0] == '/')
		/* "PATH (deleted)": the file replaced since it was mapped (an
		 * upgrade): the one at PATH now is what the user has */
		n = snprintf(path, cap, "%s%.*s", s->sysroot ? s->sysroot : "",
			     (int)(len > del && !strcmp(name + len - del, DW_DELETED) ? len - del : len), name);
	else
		return -1;
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int dw_module_cache_open(struct dw_symbolizer *s, struct dw_module *m, Elf *elf);

/* The file at path was modified after the core was written (both times from
 * stat; a compressed core's copy is newer than anything, so never). Without a
 * build-id this is all that tells a rebuilt program from the one in the core. */
static int dw_newer_than_core(const struct dw_symbolizer *s, const char *path)
{
	struct stat f, c;

	if (s->core_fd < 0 || fstat(s->core_fd, &c) != 0 || stat(path, &f) != 0)
		return 0;
	return f.st_mtim.tv_sec > c.st_mtim.tv_sec ||
	       (f.st_mtim.tv_sec == c.st_mtim.tv_sec && f.st_mtim.tv_nsec > c.st_mtim.tv_nsec);
}

/* Our record for mod, prepared on first use: file, build-id check, index. */
static struct dw_module *dw_module_get(struct dw_symbolizer *s, Dwfl_Module *mod)
{
	void **userdata;
	Dwarf_Addr start, end;
	const char *mainfile = NULL;
	const char *name = dwfl_module_info(mod, &userdata, &start, &end, NULL, NULL, &mainfile, NULL);
	if (*userdata)
		return *userdata;
	struct dw_module *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->mod = mod;
	m->start = start;
	m->end = end;
	m->bias = start;
	m->name = dw_arena_intern(&s->arena, name ? name : "?");

	/* The build-id libdwfl read from the image (before any file is opened it
	 * can only come from the core's memory). */
	const unsigned char *core_id = NULL;
	GElf_Addr id_vaddr;
	int core_idlen = dwfl_module_build_id(mod, &core_id, &id_vaddr);
	unsigned char core_copy[64];
	if (core_idlen > 0) {
		if (core_idlen > (int)sizeof core_copy)
			core_idlen = sizeof core_copy;
		memcpy(core_copy, core_id, (size_t)core_idlen);
	}

	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	/* libdwfl shortens the name of a module whose file it found to a basename;
	 * the path of the file used (under the sysroot, if any) says more */
	if (elf) {
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
		if (mainfile)
			m->name = dw_arena_intern(&s->arena, mainfile);
	}
	if (!elf) {
		const char *why = dwfl_errmsg(dwfl_errno());
		/* Read the build-id of the file the user means for this module ourselves:
		 * libdwfl only says that it found nothing usable. */
		char path[4096];
		unsigned char disk_id[64];
		int disk_idlen = -1;
		if (dw_module_disk_path(s, mod, name, path, sizeof path) == 0)
			disk_idlen = dw_file_build_id(path, disk_id, sizeof disk_id, NULL);
		char h1[130], h2[130];
		if (core_idlen > 0 && disk_idlen > 0 &&
		    (disk_idlen != core_idlen || memcmp(disk_id, core_copy, (size_t)core_idlen) != 0)) {
			m->mismatch = 1;
			dw_hex(h1, sizeof h1, core_copy, core_idlen);
			dw_hex(h2, sizeof h2, disk_id, disk_idlen);
			dw_note(s, "%s: build-id in core %s differs from file on disk %s (%s%s); showing "
				"module+offset", m->name, h1, h2, path, strstr(m->name, DW_DELETED) ?
				", which replaced the one the process had mapped: an upgrade?" : "");
		} else if (core_idlen > 0 && why && strstr(why, "build ID")) {
			m->mismatch = 1;
			dw_hex(h1, sizeof h1, core_copy, core_idlen);
			dw_note(s, "%s: build-id in core %s differs from the file on disk; showing module+offset",
				m->name, h1);
		} else if (m->name[0] == '[' && core_idlen > 0) {
			/* "[dso]", "[exe]": libdwfl found an ELF header in the core's
			 * memory but no file list names it */
			dw_hex(h1, sizeof h1, core_copy, core_idlen);
			dw_note(s, "%s: a module at 0x%llx that the core names no file for (no NT_FILE "
				"note), build-id %s: no file with it under the debug directories; "
				"showing module+offset", m->name, (unsigned long long)start, h1);
		} else {
			dw_note(s, "%s: no usable file (%s); showing module+offset", m->name,
				disk_idlen < 0 ? "not found" : why ? why : "unreadable");
		}
	} else {
		m->has_elf = 1;
		m->bias = bias;
		const void *file_id;
		ssize_t file_idlen = dwelf_elf_gnu_build_id(elf, &file_id);
		/* What libdwfl reports may have come from the file itself when the
		 * core lacks the note's page: read the core's bytes where the file's
		 * note would be loaded and compare those. */
		unsigned char mem_id[64];
		int mem_idlen = s->core_elf && file_idlen > 0 && !dw_ptrmap_get(&s->unloaded, mod) ?
			dw_core_build_id(s, elf, bias, (size_t)file_idlen, mem_id) : -1;
		int lib_differs = core_idlen > 0 && file_idlen > 0 &&
			(file_idlen != core_idlen || memcmp(file_id, core_copy, (size_t)core_idlen) != 0);
		if (mem_idlen > 0 && !lib_differs) {
			/* (an id from libdwfl that differs from the file's can only have come
			 * from the core: keep it, it is the right one to show) */
			core_idlen = mem_idlen;
			memcpy(core_copy, mem_id, (size_t)mem_idlen);
		}
		if (core_idlen > 0 && file_idlen > 0 &&
		    (file_idlen != core_idlen || memcmp(file_id, core_copy, (size_t)core_idlen) != 0)) {
			char h1[130], h2[130];
			dw_hex(h1, sizeof h1, core_copy, core_idlen);
			dw_hex(h2, sizeof h2, file_id, (int)file_idlen);
			dw_note(s, "%s: build-id in core %s differs from file on disk %s; showing module+offset",
				m->name, h1, h2);
			m->mismatch = 1;
			m->has_elf = 0;
		} else if (s->core_elf && mem_idlen == 0) {
			dw_note(s, "%s: build-id not in the core; the file on disk could not be checked", m->name);
		}
		if (file_idlen <= 0 && mainfile && dw_newer_than_core(s, mainfile))
			dw_note(s, "%s: no build-id, and modified after the core was written: "
				"its frames may be named from another build", m->name);
		if (m->has_elf && mod == s->main_mod && s->exe_idlen > 0 && core_idlen > 0 &&
		    (s->exe_idlen != core_idlen || memcmp(s->exe_id, core_copy, (size_t)core_idlen) != 0)) {
			char h1[130], h2[130];
			dw_hex(h1, sizeof h1, s->exe_id, s->exe_idlen);
			dw_hex(h2, sizeof h2, core_copy, core_idlen);
			dw_note(s, "%s: build-id %s is not the one of the core's program (%s); using %s, named by the core, instead",
				s->exe, h1, h2, m->name);
		}
	}
	if (m->has_elf && dw_module_cache_open(s, m, elf) == 0) {
		/* names and lines come from the cache file: libdw (and the
		 * inflating of compressed debug sections) only for CUs it lacks */
		m->has_dwarf = 1;
	} else if (m->has_elf) {
		Dwarf_Addr dwbias;
		if (dwfl_module_getdwarf(mod, &dwbias))
			m->has_dwarf = 1;
		dw_module_index(m);
		/* a stripped program has no function symbol of its own either */
		if (!m->has_dwarf && m->nsyms)
			dw_note(s, "%s: no debug info; function names from the symbol table", m->name);
		else if (!m->has_dwarf)
			dw_note(s, "%s: no debug info and no function symbols (stripped); showing module+offset",
				m->name);
	}
	m->next = s->modules;
	s->modules = m;
	*userdata = m;
	return m;
}

/* ---- resolving -------------------------------------------------------- */

static struct sym_frame *dw_frame_new(struct dw_symbolizer *s)
{
	struct sym_table *t = &s->table;
	if (t->nframes == s->frames_cap) {
		size_t ncap = s->frames_cap ? s->frames_cap * 2 : 256;
		struct sym_frame *p = realloc(t->frames, ncap * sizeof *p);
		if (!p)
			return NULL;
		t->frames = p;
		s->frames_cap = ncap;
	}
	struct sym_frame *f = &t->frames[t->nframes++];
	memset(f, 0, sizeof *f);
	return f;
}

/* A new frame at file:line:column named function (NULL: unnamed), or NULL
 * when out of memory. */
static struct sym_frame *dw_frame_at(struct dw_symbolizer *s, const char *function,
				     const char *file, unsigned line, unsigned column)
{
	struct sym_frame *f = dw_frame_new(s);
	if (f) {
		f->function = function;
		f->file = file;
		f->line = line;
		f->column = column;
	}
	return f;
}

/* pc has a line (file non-NULL, from the line-table row at row_addr) but no
 * function DIE: one frame named from the symbol table. A row that starts before
 * the function symbol covering pc is not this function's: libdw takes an
 * address past the end of a CU's code for the CU's (its aranges reach to the
 * next one's start) and the row at the end of a sequence for the address,
 * which made _start, after gcc's main in .text.startup, read main's last line.
 * Such a pc gets no DWARF frame (the caller names it from the symbol table).
 * Returns the number of frames added (0 without a file), or -1 when out of
 * memory. */
static int dw_frame_symbol_only(struct dw_symbolizer *s, struct dw_module *m, uint64_t pc,
				const char *file, unsigned line, unsigned column, uint64_t row_addr)
{
	if (!file)
		return 0;
	const struct dw_fsym *fs = dw_module_lookup(m, pc);
	if (fs && row_addr < fs->addr)
		return 0;
	return dw_frame_at(s, fs ? dw_name(s, fs->name) : NULL, file, line, column) ? 1 : -1;
}

/* The outermost frame of pc's chain just added is the real function even if
 * DWARF lost its parent: not inlined, and named from the symbol table when its
 * DIE has no name, or when cxx_unlinked (a C++ function without a linkage name,
 * internal linkage: the symbol table still holds the mangled name with its
 * parameters, as gdb shows it). */
static void dw_frame_outer(struct dw_symbolizer *s, struct dw_module *m, uint64_t pc,
			   int cxx_unlinked)
{
	struct sym_frame *outer = &s->table.frames[s->table.nframes - 1];
	outer->inlined = 0;
	if (!outer->function || cxx_unlinked) {
		const struct dw_fsym *fs = dw_module_lookup(m, pc);
		if (fs && (!outer->function || (fs->name[0] == '_' && fs->name[1] == 'Z')))
			outer->function = dw_name(s, fs->name);
	}
}

/* A source path from the CU's tables made absolute the way gdb shows it
 * (relative names are relative to DW_AT_comp_dir), interned, or NULL. */
static const char *dw_cu_path_in(struct dw_symbolizer *s, const char *dir, const char *name);

static const char *dw_cu_path(struct dw_symbolizer *s, Dwarf_Die *cu, const char *name)
{
	if (!name)
		return NULL;
	if (name[0] == '/')
		return dw_arena_intern(&s->arena, name);
	Dwarf_Attribute attr;
	return dw_cu_path_in(s, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)), name);
}

/* dw_cu_path with the unit's DW_AT_comp_dir (dir, or NULL) already known. */
static const char *dw_cu_path_in(struct dw_symbolizer *s, const char *dir, const char *name)
{
	if (!name)
		return NULL;
	if (name[0] == '/')
		return dw_arena_intern(&s->arena, name);
	if (!dir || dir[0] != '/')
		return dw_arena_intern(&s->arena, name);
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	size_t dl = strlen(dir), nl = strlen(name);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	char buf[4096];
	if (dl + 1 + nl + 1 > sizeof buf)
		return dw_arena_intern(&s->arena, name);
	memcpy(buf, dir, dl);
	buf[dl] = '/';
	memcpy(buf + dl + 1, name, nl + 1);
	return dw_arena_intern(&s->arena, buf);
}

/* The file name of index idx in the CU's file table, interned, or NULL. */
static const char *dw_cu_file(struct dw_symbolizer *s, Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dw_cu_path(s, cu, dwarf_filesrc(files, idx, NULL, NULL));
}

/* Find the sections dw_line.c decodes in the ELF file behind the module's
 * Dwarf (decompressed by libdw when it opened them), once. Returns 1 when
 * .debug_line is there, else -1. */
static int dw_module_secs(struct dw_module *m)
{
	if (m->secs_state)
		return m->secs_state;
	m->secs_state = -1;
	Dwarf_Addr dwbias;
	Dwarf *dbg = dwfl_module_getdwarf(m->mod, &dwbias);
	Elf *elf = dbg ? dwarf_getelf(dbg) : NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0 || !gelf_getehdr(elf, &eh))
		return -1;
	m->secs.little_endian = eh.e_ident[EI_DATA] == ELFDATA2LSB;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		struct dw_sec *sec = !name ? NULL : !strcmp(name, ".debug_line") ? &m->secs.line :
			!strcmp(name, ".debug_line_str") ? &m->secs.line_str :
			!strcmp(name, ".debug_str") ? &m->secs.str :
			!strcmp(name, ".debug_info") ? &m->secs.info :
			!strcmp(name, ".debug_abbrev") ? &m->secs.abbrev :
			!strcmp(name, ".debug_ranges") ? &m->secs.ranges :
			!strcmp(name, ".debug_rnglists") ? &m->secs.rnglists :
			!strcmp(name, ".debug_addr") ? &m->secs.addr : NULL;
		if (!sec)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_buf) {
			sec->data = d->d_buf;
			sec->size = d->d_size;
		}
	}
	if (m->secs.line.data || m->secs.info.data)
		m->secs_state = 1;
	return m->secs_state;
}

/* What dw_lines_read needs to decode c's line table, from libdw: the
 * table's offset, the unit's DW_AT_comp_dir (or NULL) and address size.
 * Returns 0, or -1 when libdw must answer (no table, no sections). */
static int dw_cuidx_lines_args(struct dw_symbolizer *s, struct dw_module *m, struct dw_cuidx *c,
			       uint64_t *off, const char **comp_dir, uint8_t *addrsz)
{
	if (s->reference || dw_module_secs(m) < 0)
		return -1;
	Dwarf_Attribute attr;
	Dwarf_Word w;
	if (c->ca_ok) {
		/* read from the CU DIE's bytes (dw_unit_cu_read), as libdw would */
		if (!c->ca.has_stmt_list)
			return -1;
		*off = c->ca.stmt_list;
		*comp_dir = c->ca.comp_dir;
	} else {
		if (!dwarf_attr(&c->cu, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &w) != 0)
			return -1;
		*off = w;
		*comp_dir = dwarf_formstring(dwarf_attr(&c->cu, DW_AT_comp_dir, &attr));
	}
	Dwarf_Die cudie;
	*addrsz = 0;
	if (!c->cu.cu || !dwarf_cu_die(c->cu.cu, &cudie, NULL, NULL, addrsz, NULL, NULL, NULL))
		return -1;
	return 0;
}

/* Decode c's line table on first use. Returns 1 when c->lines can answer,
 * -1 when libdw must (no table, or one dw_line.c does not read). */
static int dw_cuidx_lines(struct dw_symbolizer *s, struct dw_module *m, struct dw_cuidx *c)
{
	if (c->lines_state)
		return c->lines_state;
	c->lines_state = -1;
	uint64_t off;
	const char *comp_dir;
	uint8_t addrsz;
	if (dw_cuidx_lines_args(s, m, c, &off, &comp_dir, &addrsz) < 0)
		return -1;
	if (dw_lines_read(&c->lines, &m->secs, off, comp_dir, addrsz) == 0)
		c->lines_state = 1;
	return c->lines_state;
}

/* The path of file idx of c's decoded line table, made absolute and interned
 * once, or NULL. */
static const char *dw_cuidx_file(struct dw_symbolizer *s, struct dw_cuidx *c, uint64_t idx)
{
	if (idx >= c->lines.nfiles)
		return NULL;
	if (!c->lines.paths[idx])
		c->lines.paths[idx] = c->ca_ok ? dw_cu_path_in(s, c->ca.comp_dir, c->lines.files[idx])
					       : dw_cu_path(s, &c->cu, c->lines.files[idx]);
	return c->lines.paths[idx];
}

/* The name of scope i of c, looked up once. Inlined instances without a name
 * of their own are named by their abstract origin: that name is cached per
 * origin, since one inline function has many instances. */
static const char *dw_scope_name(struct dw_symbolizer *s, struct dw_module *m, struct dw_cuidx *c, int32_t i)
{
	struct dw_scope *sc = &c->scopes[i];
	if (sc->named)
		return sc->name;
	if (c->is_cxx < 0 && sc->own_name)
		c->is_cxx = dw_die_is_cxx(dw_cuidx_top(c));
	const void *key = (const void *)(uintptr_t)(sc->origin + 1);
	const char *known = sc->origin ? dw_ptrmap_get(&m->onames, key) : NULL, *oname;
	int olink;
	if (known) {
		sc->name = known;
		sc->linkage = dw_ptrmap_get(&m->olinks, key) != NULL;
	} else if (sc->origin && c->ca_ok && m->secs_state > 0 &&
		   (oname = dw_die_origin_name(&c->u, &m->secs, sc->origin, &olink)) && (olink || c->is_cxx == 0)) {
		/* the origin's linkage name, or its DW_AT_name in a C unit, read
		 * from its bytes: what dw_die_name gives, without libdw */
		sc->name = dw_name(s, oname);
		sc->linkage = olink;
		/* failures to cache only cost speed */
		if (sc->name && dw_ptrmap_put(&m->onames, key, sc->name) == 0 && sc->linkage)
			dw_ptrmap_put(&m->olinks, key, (const void *)1);
	} else if (sc->origin) {
		Dwarf_Die odie;
		Dwarf *dbg = dwarf_cu_getdwarf(dw_cuidx_top(c)->cu);
		if (dbg && dwarf_offdie(dbg, sc->origin, &odie)) {
			sc->name = dw_die_name(s, &odie, &sc->linkage);
			/* failures to cache only cost speed */
			if (sc->name && dw_ptrmap_put(&m->onames, key, sc->name) == 0 && sc->linkage)
				dw_ptrmap_put(&m->olinks, key, (const void *)1);
		} else {
			sc->name = NULL;
		}
	} else if (sc->own_linkage) {
		/* its own linkage name, read by the DIE decoder (libc's
		 * __GI_ aliases): dw_die_name's first choice */
		sc->name = dw_name(s, sc->own_linkage);
		sc->linkage = 1;
	} else if (sc->own_name && c->is_cxx == 0) {
		/* a C function's own DW_AT_name, read by the DIE decoder: what
		 * dw_die_name finds without asking libdw */
		sc->name = dw_name(s, sc->own_name);
		sc->linkage = 0;
	} else {
		Dwarf_Die *die = dw_cuidx_die(c, i);
		sc->name = die ? dw_die_name(s, die, &sc->linkage) : NULL;
	}
	sc->named = 1;
	return sc->name;
}

/* Where inlined scope i of c was called: DW_AT_call_file (a path from the
 * decoded line table when own_lines, else from libdw's), _line and _column,
 * NULL and 0 when absent. */
static void dw_scope_call(struct dw_symbolizer *s, struct dw_cuidx *c, int32_t i, int own_lines,
			  const char **file, unsigned *line, unsigned *column)
{
	const struct dw_scope *sc = &c->scopes[i];
	if (sc->have_call && own_lines) {
		/* read by the DIE decoder: no libdw lookup of the DIE */
		*file = sc->has_call_file ? dw_cuidx_file(s, c, sc->call_file) : NULL;
		*line = sc->call_line;
		*column = sc->call_col;
		return;
	}
	Dwarf_Die *die = dw_cuidx_die(c, i);
	Dwarf_Attribute attr;
	Dwarf_Word w;
	*file = NULL;
	*line = *column = 0;
	if (die && dwarf_attr(die, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0)
		*file = own_lines ? dw_cuidx_file(s, c, w) : dw_cu_file(s, &c->cu, w);
	if (die && dwarf_attr(die, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0)
		*line = (unsigned)w;
	if (die && dwarf_attr(die, DW_AT_call_column, &attr) && dwarf_formudata(&attr, &w) == 0)
		*column = (unsigned)w;
}

/* The CU DIE holding pc (an address in the image) as libdwfl chooses it, or
 * NULL; *dwbias gets the module's DWARF bias. */
static Dwarf_Die *dw_module_cu(struct dw_module *m, uint64_t pc, Dwarf_Addr *dwbias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, pc, dwbias);
	/* no .debug_aranges (clang's default): the CUs' own ranges */
	if (!cu && dwfl_module_getdwarf(m->mod, dwbias))
		cu = dw_cutable_find(&m->cutable, m->mod, pc - *dwbias);
	return cu;
}

/* Frames from DWARF for pc (an address in the image): innermost inlined frame
 * first, the containing function last. The innermost line comes from the line
 * table; each outer frame's line is the DW_AT_call_line of the inlined instance
 * inside it. Returns the number of frames added (0 when DWARF does not cover
 * pc), or -1 when out of memory. */
static int dw_aranges_complete(struct dw_module *m, const struct dw_ptrmap *seen);

/* Whether m's .debug_aranges name every CU that has code (1), or not (0):
 * looked up once. */
static int dw_module_aranges_complete(struct dw_module *m)
{
	if (!m->aranges_state) {
		Dwarf_Addr dwbias;
		Dwarf *dbg = dwfl_module_getdwarf(m->mod, &dwbias);
		Dwarf_Aranges *ar = NULL;
		size_t nar = 0;
		struct dw_ptrmap seen = { 0 };
		int ok = dbg != NULL;
		if (ok && dwarf_getaranges(dbg, &ar, &nar) != 0)
			nar = 0;
		for (size_t i = 0; ok && i < nar; i++) {
			Dwarf_Addr addr;
			Dwarf_Word len;
			Dwarf_Off cuoff;
			ok = dwarf_getarangeinfo(dwarf_onearange(ar, i), &addr, &len, &cuoff) == 0 &&
			     dw_ptrmap_put(&seen, (const void *)(uintptr_t)(cuoff + 1), &seen) == 0;
		}
		/* a failure reads as complete: libdwfl's choice, as before */
		m->aranges_state = !ok || dw_aranges_complete(m, &seen) ? 1 : -1;
		dw_ptrmap_release(&seen);
	}
	return m->aranges_state > 0;
}

static int dw_frames_dwarf_cu(struct dw_symbolizer *s, struct dw_module *m, uint64_t pc, Dwarf_Die *cu,
			      Dwarf_Addr dwbias, int retry);

static int dw_frames_dwarf(struct dw_symbolizer *s, struct dw_module *m, uint64_t pc)
{
	Dwarf_Addr dwbias;
	Dwarf_Die *cu = dw_module_cu(m, pc, &dwbias);
	if (!cu)
		return 0;
	return dw_frames_dwarf_cu(s, m, pc, cu, dwbias, 1);
}

/* dw_frames_dwarf in cu. When no scope of cu holds pc and retry is set, a
 * module whose .debug_aranges miss CUs (a Go program: gcc's C CUs are named,
 * Go's are not, and libdwfl gives an address in Go's code the C CU before it,
 * whose last line row then seems to hold it) tries the CU whose own ranges
 * hold pc, as dw_cutable finds it (the cache: dw_cache_cu_own). */
static int dw_frames_dwarf_cu(struct dw_symbolizer *s, struct dw_module *m, uint64_t pc, Dwarf_Die *cu,
			      Dwarf_Addr dwbias, int retry)
{
	const struct dw_secs *secs = !s->reference && dw_module_secs(m) > 0 ? &m->secs : NULL;
	struct dw_cuidx *c = dw_cutab_get(&m->cus, cu, secs);
	if (!c)
		return -1;
	if (m->ckey_ok) {
		const void *key = (const void *)(uintptr_t)(c->off + 1);
		if (!dw_ptrmap_get(&m->touched, key) && dw_ptrmap_put(&m->touched, key, c) == 0)
			m->dirty = 1;
	}
	Dwfl_Line *l;

	const char *file = NULL;
	unsigned line = 0, column = 0;
	uint64_t row_addr = 0;
	int own_lines = dw_cuidx_lines(s, m, c) > 0;
	if (own_lines) {
		const struct dw_lrow *r = dw_lines_find(&c->lines, pc - dwbias);
		if (r) {
			/* as from dwfl_lineinfo's int results below */
			file = dw_cuidx_file(s, c, r->file);
			line = (int)r->line > 0 ? r->line : 0;
			column = (int)r->col > 0 ? r->col : 0;
			row_addr = r->addr + dwbias;
		}
	} else if ((l = dwfl_module_getsrc(m->mod, pc))) {
		int ln = 0, col = 0;
		Dwarf_Addr la = 0;
		const char *src = dwfl_lineinfo(l, &la, &ln, &col, NULL, NULL);
		row_addr = la;
		file = dw_cu_path(s, &c->cu, src);
		line = ln > 0 ? (unsigned)ln : 0;
		column = col > 0 ? (unsigned)col : 0;
	}

	int32_t i = dw_cuidx_find(c, pc - dwbias);
	if (i < 0 && retry && !dw_module_aranges_complete(m)) {
		Dwarf_Die *own = dw_cutable_find(&m->cutable, m->mod, pc - dwbias);
		if (own && dwarf_dieoffset(own) != dwarf_dieoffset(cu))
			return dw_frames_dwarf_cu(s, m, pc, own, dwbias, 0);
	}
	if (i < 0)
		return dw_frame_symbol_only(s, m, pc, file, line, column, row_addr);
	int added = 0;
	for (; i >= 0; i = c->scopes[i].parent) {
		struct sym_frame *f = dw_frame_at(s, dw_scope_name(s, m, c, i), file, line, column);
		if (!f)
			return -1;
		added++;
		f->inlined = c->scopes[i].inlined;
		if (!c->scopes[i].inlined)
			break;
		/* the caller's position is where this instance was inlined */
		dw_scope_call(s, c, i, own_lines, &file, &line, &column);
	}
	if (c->is_cxx < 0)
		c->is_cxx = dw_die_is_cxx(dw_cuidx_top(c));
	dw_frame_outer(s, m, pc, i >= 0 && !c->scopes[i].linkage && c->is_cxx);
	return added;
}

/* ---- the index cache (dw_cache.c) -------------------------------------- */

/* path of m's cache file: "<build-id in hex>.symidx" */
static void dw_cache_name(const struct dw_module *m, char *name, size_t cap)
{
	dw_hex(name, cap, m->ckey.id, (int)m->ckey.idlen);
	strncat(name, ".symidx", cap - strlen(name) - 1);
}

/* Set m's cache key (file with a build-id only) and map its cache file when it
 * matches: symbols from it then. Returns 0 when the cache is in use, else -1
 * (with a note when a file was there but could not be used). */
static int dw_module_cache_open(struct dw_symbolizer *s, struct dw_module *m, Elf *elf)
{
	const void *id;
	const char *mainfile = NULL;
	struct stat st;
	if (!s->cache_dir)
		return -1;
	ssize_t idlen = dwelf_elf_gnu_build_id(elf, &id);
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	if (idlen <= 0 || (size_t)idlen > sizeof m->ckey.id || !mainfile || stat(mainfile, &st) != 0)
		return -1;
	memcpy(m->ckey.id, id, (size_t)idlen);
	m->ckey.idlen = (uint32_t)idlen;
	m->ckey.flags = (s->cxa_demangle ? DW_CKEY_DEMANGLE : 0) | DW_CKEY_RUST;
	m->ckey.size = (uint64_t)st.st_size;
	m->ckey.mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	m->ckey_ok = 1;

	char name[160], path[4096], why[256] = "";
	dw_cache_name(m, name, sizeof name);
	int n = snprintf(path, sizeof path, "%s/%s", s->cache_dir, name);
	if (n < 0 || (size_t)n >= sizeof path)
		return -1;
	int rc = dw_cache_map(&m->cache, path, &m->ckey, why, sizeof why);
	if (rc == 0) {
		dw_cache_touch(path);   /* recently used: evicted last */
		free(m->cache_path);
		m->cache_path = strdup(path);   /* NULL only costs the note its path */
		/* the separate debug file it was made from must be the same too */
		const struct dw_chdr *h = m->cache.h;
		const char *dbg = dw_cache_str(&m->cache, h->dbg_path);
		if (dbg && (stat(dbg, &st) != 0 || (uint64_t)st.st_size != h->dbg_size ||
			    (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec != h->dbg_mtime)) {
			dw_cache_unmap(&m->cache);
			return -1;
		}
		const struct dw_csym *cs = (const void *)(m->cache.base + h->syms_off);
		if (h->nsyms && !(m->syms = malloc(h->nsyms * sizeof *m->syms))) {
			dw_cache_unmap(&m->cache);
			return -1;
		}
		for (uint64_t i = 0; i < h->nsyms; i++) {
			m->syms[i].addr = cs[i].addr + m->bias;
			m->syms[i].size = cs[i].size;
			m->syms[i].name = dw_cache_str(&m->cache, cs[i].name);
			m->syms[i].rank = cs[i].rank;
		}
		m->nsyms = h->nsyms;
		return 0;
	}
	/* a file made for another build of the same build-id (copied, touched) is
	 * simply rewritten; a damaged one is worth a line */
	if (rc < 0 && !strstr(why, "another build"))
		dw_note(s, "%s: symbol cache %s ignored (%s); it will be rewritten", m->name, path, why);
	return -1;
}

/* dw_frames_dwarf from m's cache file. Returns the number of frames added, -1
 * out of memory, or -2 when the file lacks pc's CU (ask libdw). */
static int dw_frames_cached(struct dw_symbolizer *s, struct dw_module *m, uint64_t pc)
{
	struct dw_cache *k = &m->cache;
	uint64_t dpc = pc - (m->bias + (uint64_t)k->h->dwdelta);
	int known;
	char why[128] = "";
	const struct dw_ccu *cu = dw_cache_cu(k, dpc, &known);
	int retry = 1;
	if (!cu)
		return known ? -2 : 0;
again:
	if (!dw_cache_unit_ok(k, cu, why, sizeof why)) {
		/* a damaged unit: libdw names its addresses, and the file is
		 * rewritten with the unit decoded again (one note per module) */
		if (why[0] && !m->cache_unit_noted) {
			m->cache_unit_noted = 1;
			dw_note(s, "%s: symbol cache: a unit of %s ignored (%s); it will be rewritten", m->name,
				m->cache_path ? m->cache_path : "the file", why);
		}
		return -2;
	}
	const uint32_t *files = dw_cache_files(k, cu);
	const struct dw_cscope *sc = dw_cache_scopes(k, cu);
	const char *file = NULL;
	unsigned line = 0, column = 0;
	uint64_t row_addr = 0;
	const struct dw_crow *r = dw_cache_row(k, cu, dpc);
	if (r) {
		file = dw_cache_ustr(k, cu, files[r->file & ~DW_CROW_END]);
		line = (int)r->line > 0 ? r->line : 0;
		column = (int)r->col > 0 ? r->col : 0;
		row_addr = pc - dpc + cu->rows_base + r->addr;
	}
	int32_t i = dw_cache_scope(k, cu, dpc);
	if (i < 0 && retry) {
		/* dw_frames_dwarf_cu's second choice: curanges are kept exactly
		 * when the aranges miss a CU with code */
		const struct dw_ccu *own = dw_cache_cu_own(k, dpc, &known);
		if (!own && known)
			return -2;
		if (own && own != cu) {
			cu = own;
			retry = 0;
			goto again;
		}
	}
	if (i < 0)
		return dw_frame_symbol_only(s, m, pc, file, line, column, row_addr);
	int added = 0;
	for (; i >= 0; i = sc[i].parent) {
		struct sym_frame *f = dw_frame_at(s, dw_cache_ustr(k, cu, sc[i].name), file, line, column);
		if (!f)
			return -1;
		added++;
		f->inlined = (sc[i].flags & DW_CSCOPE_INLINED) != 0;
		if (!f->inlined)
			break;
		file = sc[i].call_file == DW_CACHE_NONE ? NULL : dw_cache_ustr(k, cu, files[sc[i].call_file]);
		line = sc[i].call_line;
		column = sc[i].call_col;
	}
	dw_frame_outer(s, m, pc, i >= 0 && !(sc[i].flags & DW_CSCOPE_LINKAGE) && cu->is_cxx);
	return added;
}

/* Where inlined scope i of c was called, as an index into c's file table
 * (what dw_scope_call names with own_lines): *file DW_CACHE_NONE when absent
 * or not a file of the table. */
static void dw_scope_call_idx(struct dw_cuidx *c, int32_t i, uint32_t *file, unsigned *line, unsigned *column)
{
	const struct dw_scope *sc = &c->scopes[i];
	*file = DW_CACHE_NONE;
	if (sc->have_call) {
		if (sc->has_call_file && sc->call_file < c->lines.nfiles)
			*file = (uint32_t)sc->call_file;
		*line = sc->call_line;
		*column = sc->call_col;
		return;
	}
	Dwarf_Die *die = dw_cuidx_die(c, i);
	Dwarf_Attribute attr;
	Dwarf_Word w;
	*line = *column = 0;
	if (die && dwarf_attr(die, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0 && w < c->lines.nfiles)
		*file = (uint32_t)w;
	if (die && dwarf_attr(die, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0)
		*line = (unsigned)w;
	if (die && dwarf_attr(die, DW_AT_call_column, &attr) && dwarf_formudata(&attr, &w) == 0)
		*column = (unsigned)w;
}

/* Write CU c (decoded here) into b as a unit: its record in *rec. The arrays
 * are written in place in the unit's blob, in one pass over the rows, scopes
 * and ranges. Returns 0, or -1 when its lines are not decoded by dw_line.c or
 * do not fit the file's rows (the CU is then left to libdw). */
static int dw_cache_put_live(struct dw_symbolizer *s, struct dw_module *m, struct dw_cuidx *c,
			     struct dw_cbuf *b, struct dw_ccu *rec)
{
	if (dw_cuidx_lines(s, m, c) <= 0)
		return -1;
	if (c->is_cxx < 0)
		c->is_cxx = dw_die_is_cxx(dw_cuidx_top(c));
	memset(rec, 0, sizeof *rec);
	rec->cuoff = c->off;
	rec->is_cxx = (uint32_t)c->is_cxx;
	size_t nf = c->lines.nfiles, nrow = c->lines.nrows;
	/* layout: files (padded to 8), rows, scopes, ranges, sorted; strings after */
	size_t files_sz = (nf + (nf & 1)) * sizeof(uint32_t);
	size_t off_rows = files_sz, off_scopes = off_rows + nrow * sizeof(struct dw_crow);
	size_t off_ranges = off_scopes + c->nscopes * sizeof(struct dw_cscope);
	size_t off_sorted = off_ranges + c->nranges * sizeof(struct dw_crange);
	size_t room = off_sorted + c->nranges * sizeof(struct dw_crange);
	unsigned char *blob = dw_cbuf_unit_begin(b, room);
	if (!blob)
		return -1;
	uint32_t *files = (uint32_t *)blob;
	/* the files a kept row or an inline call site names; the others (headers
	 * with no code here: most of a libc unit's) are stored as none, which
	 * spares composing and storing their paths */
	unsigned char *used = calloc(nf + 1, 1);
	if (!used) {
		b->failed = 1;
		return -1;
	}
	/* Rows that can never be the answer are left out: one followed by a row at
	 * the same address (dw_lines_find takes the last row at or before pc), and
	 * one that says what the row kept before it says. Two thirds of the rows of
	 * gcc -O2 code, and most of the file. */
	struct dw_crow *rows = (struct dw_crow *)(blob + off_rows);
	size_t nr = 0;
	const struct dw_lrow *lr = c->lines.rows;
	uint64_t rbase = nrow ? lr[0].addr : 0;
	/* Rows the decoder already chose (c->lines.filtered) need the rules
	 * only where a sequence ends and the next starts at the same address:
	 * the end is left out, and the next row when it says what the row kept
	 * before the end says */
	const int chosen = c->lines.filtered && nf < DW_CROW_END &&
		(!nrow || lr[nrow - 1].addr - rbase <= UINT32_MAX);   /* sorted: every row fits */
	int after_end = 0;
	for (size_t i = 0; i < nrow; i++) {
		if (i + 1 < nrow && lr[i + 1].addr == lr[i].addr && (!chosen || lr[i].end)) {
			after_end = 1;
			continue;
		}
		if (chosen && !after_end) {
			rows[nr++] = (struct dw_crow){ (uint32_t)(lr[i].addr - rbase), lr[i].line,
						       lr[i].file | (lr[i].end ? DW_CROW_END : 0u), lr[i].col };
			used[lr[i].file] = 1;   /* below nf: the decoder checked it */
			continue;
		}
		after_end = 0;
		uint32_t file = lr[i].file | (lr[i].end ? DW_CROW_END : 0u);
		if (nr && !lr[i].end && rows[nr - 1].file == file && rows[nr - 1].line == lr[i].line &&
		    rows[nr - 1].col == lr[i].col)
			continue;
		if (lr[i].addr - rbase > UINT32_MAX || lr[i].file >= DW_CROW_END || lr[i].addr < rbase) {
			free(used);
			return -1;   /* does not fit the file's rows: left to libdw (the unit is dropped) */
		}
		rows[nr++] = (struct dw_crow){ (uint32_t)(lr[i].addr - rbase), lr[i].line, file, lr[i].col };
		if (lr[i].file < nf)
			used[lr[i].file] = 1;
	}
	/* the scopes follow the rows kept */
	size_t shift = (nrow - nr) * sizeof(struct dw_crow);
	off_scopes -= shift;
	off_ranges -= shift;
	off_sorted -= shift;
	struct dw_cscope *scopes = (struct dw_cscope *)(blob + off_scopes);
	for (size_t i = 0; i < c->nscopes; i++) {
		const struct dw_scope *sc = &c->scopes[i];
		/* A C function's own DW_AT_name is its display name as it is
		 * (dw_scope_name would intern it, demangling only "_Z" names):
		 * stored without the lookup, which was half the writer's cost */
		const char *name = !sc->named && !sc->origin && sc->own_name && c->is_cxx == 0 &&
			!(sc->own_name[0] == '_' && sc->own_name[1] == 'Z') ? sc->own_name
									: dw_scope_name(s, m, c, (int32_t)i);
		uint32_t cfile = DW_CACHE_NONE;
		unsigned cline = 0, ccol = 0;
		if (sc->inlined)
			dw_scope_call_idx(c, (int32_t)i, &cfile, &cline, &ccol);
		if (cfile != DW_CACHE_NONE)
			used[cfile] = 1;
		scopes[i] = (struct dw_cscope){ sc->parent,
			(sc->inlined ? DW_CSCOPE_INLINED : 0u) | (sc->linkage ? DW_CSCOPE_LINKAGE : 0u),
			dw_cbuf_ustr(b, name), cfile, cline, ccol, sc->first_range, sc->nranges };
	}
	if (nf & 1)
		files[nf] = 0;   /* the pad */
	for (size_t i = 0; i < nf; i++)
		files[i] = used[i] ? dw_cbuf_ustr(b, dw_cuidx_file(s, c, i)) : DW_CACHE_NONE;
	free(used);
	struct dw_crange *ranges = (struct dw_crange *)(blob + off_ranges);
	struct dw_crange *sorted = (struct dw_crange *)(blob + off_sorted);
	for (size_t i = 0; i < c->nranges; i++) {
		const struct dw_range *r = &c->ranges[i], *q = &c->sorted[i];
		ranges[i] = (struct dw_crange){ r->lo, r->hi, r->scope, r->depth };
		sorted[i] = (struct dw_crange){ q->lo, q->hi, q->scope, q->depth };
	}
	rec->nfiles = nf;
	rec->files_off = 0;
	rec->nrows = nr;
	rec->rows_base = rbase;
	rec->rows_off = off_rows;
	rec->nscopes = c->nscopes;
	rec->scopes_off = off_scopes;
	rec->nranges = c->nranges;
	rec->ranges_off = off_ranges;
	rec->sorted_off = off_sorted;
	dw_cbuf_unit_end(b, off_sorted + c->nranges * sizeof(struct dw_crange), rec);
	return b->failed ? -1 : 0;
}

/* Whether every CU of m with an address range is in seen (CU offset + 1 of
 * each CU that .debug_aranges names). Returns 1 when all are, else 0. */
static int dw_aranges_complete(struct dw_module *m, const struct dw_ptrmap *seen)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(m->mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		/* a CU the aranges name first: libdw's dwarf_ranges reads the
		 * CU's whole abbreviation table, which dw_unit_cu_read spared */
		if (dw_ptrmap_get(seen, (const void *)(uintptr_t)(dwarf_dieoffset(cu) + 1)))
			continue;
		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
			if (hi > lo)
				break;
		if (off > 0)
			return 0;
	}
	return 1;
}

/* The record index (+ 1) in the file being written of the CU at cuoff, putting
 * it there first when it was decoded here (touched) or is in the mapped file;
 * 0 when neither (the CU is left to libdw). */
static uint32_t dw_cache_unit_for(struct dw_symbolizer *s, struct dw_module *m, uint64_t cuoff,
				  struct dw_cbuf *b, struct dw_ptrmap *newcu, const struct dw_ptrmap *oldcu,
				  struct dw_ccu *cus, size_t *ncus)
{
	const void *key = (const void *)(uintptr_t)(cuoff + 1);
	const void *known = dw_ptrmap_get(newcu, key);
	if (known)
		return (uint32_t)(uintptr_t)known;
	struct dw_cuidx *c = (struct dw_cuidx *)dw_ptrmap_get(&m->touched, key);
	const void *o = dw_ptrmap_get(oldcu, key);
	int put = -1;
	if (c) {
		put = dw_cache_put_live(s, m, c, b, &cus[*ncus]);
	} else if (o && m->cache.ustate[(uintptr_t)o - 1] >= 0) {
		/* copied as it is, unchecked when no lookup used it: a damaged
		 * unit stays damaged and is caught (and decoded again) when a
		 * lookup first uses it; one found damaged is left out */
		dw_cbuf_unit_copy(b, &m->cache,
				  (const struct dw_ccu *)(m->cache.base + m->cache.h->cus_off) + ((uintptr_t)o - 1),
				  &cus[*ncus]);
		put = b->failed ? -1 : 0;
	}
	if (put != 0 || dw_ptrmap_put(newcu, key, (const void *)(uintptr_t)(*ncus + 1)) < 0)
		return 0;
	return (uint32_t)++*ncus;
}

/* Write m's cache file: the CU lookup tables, every CU decoded in this process
 * or in the file already mapped, and the symbols. Failures become one note. */
static void dw_module_cache_write(struct dw_symbolizer *s, struct dw_module *m)
{
	m->dirty = 0;
	Dwarf_Addr dwbias;
	Dwarf *dbg = dwfl_module_getdwarf(m->mod, &dwbias);
	Dwarf_Aranges *ar = NULL;
	size_t nar = 0;
	if (!dbg || dwarf_getaranges(dbg, &ar, &nar) != 0)
		nar = 0;   /* none at all (clang): the CUs' own ranges below */
	if (!dbg)
		return;
	struct dw_cbuf b = { 0 };
	struct dw_chdr h;
	struct dw_carange *runs = calloc(nar + 1, sizeof *runs);
	struct dw_ccurange *cur = NULL;
	size_t ncus_cap = 64, ncus = 0;
	struct dw_ccu *cus = calloc(ncus_cap, sizeof *cus);
	struct dw_ptrmap oldcu = { 0 }, newcu = { 0 }, seen = { 0 };
	char why[512] = "";
	if (!runs || !cus)
		goto out;
	memset(&h, 0, sizeof h);
	dw_cbuf_add(&b, &h, sizeof h);
	h.key = m->ckey;
	h.dwdelta = (int64_t)(dwbias - m->bias);
	h.dbg_path = DW_CACHE_NONE;
	const char *mainfile = NULL, *debugfile = NULL;
	struct stat st;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (debugfile && (!mainfile || strcmp(debugfile, mainfile) != 0)) {
		if (stat(debugfile, &st) != 0)
			goto out;
		h.dbg_size = (uint64_t)st.st_size;
		h.dbg_mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
		h.dbg_path = dw_cbuf_str(&b, debugfile);
	}
	if (m->cache.base) {
		const struct dw_chdr *oh = m->cache.h;
		const struct dw_ccu *ocu = (const void *)(m->cache.base + oh->cus_off);
		for (uint64_t i = 0; i < oh->ncus; i++)
			dw_ptrmap_put(&oldcu, (const void *)(uintptr_t)(ocu[i].cuoff + 1), (const void *)(uintptr_t)(i + 1));
	}
	/* at most one record per CU: room for every CU decoded here or before */
	size_t most = m->touched.count + (m->cache.base ? m->cache.h->ncus : 0) + 1;
	if (most > ncus_cap) {
		struct dw_ccu *p = realloc(cus, most * sizeof *cus);
		if (!p)
			goto out;
		cus = p;
		ncus_cap = most;
	}
	/* libdwfl keeps the first arange of each run of one CU */
	size_t nruns = 0;
	Dwarf_Off last = 0;
	for (size_t i = 0; i < nar; i++) {
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off cuoff;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &addr, &len, &cuoff) != 0)
			goto out;
		h.last_end = addr + len;
		if (dw_ptrmap_put(&seen, (const void *)(uintptr_t)(cuoff + 1), &seen) < 0)
			goto out;
		if (nruns && cuoff == last)
			continue;
		last = cuoff;
		uint32_t k = dw_cache_unit_for(s, m, cuoff, &b, &newcu, &oldcu, cus, &ncus);
		runs[nruns++] = (struct dw_carange){ addr, cuoff, k ? k - 1 : DW_CACHE_NONE, 0 };
	}
	/* A module whose .debug_aranges miss a CU that has code (clang's default:
	 * no such section) finds CUs by their own ranges (dw_cutable) for the
	 * addresses the aranges do not cover: the file keeps that table too. */
	size_t ncur = 0;
	if (!dw_aranges_complete(m, &seen)) {
		size_t cap = 0;
		uint64_t lo, hi;
		Dwarf_Die *cu;
		int r;
		for (size_t i = 0; (r = dw_cutable_range(&m->cutable, m->mod, i, &lo, &hi, &cu)) > 0; i++) {
			if (ncur == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct dw_ccurange *p = realloc(cur, ncap * sizeof *cur);
				if (!p)
					goto out;
				cur = p;
				cap = ncap;
			}
			uint64_t cuoff = dwarf_dieoffset(cu);
			uint32_t k = dw_cache_unit_for(s, m, cuoff, &b, &newcu, &oldcu, cus, &ncus);
			cur[ncur++] = (struct dw_ccurange){ lo, hi, cuoff, k ? k - 1 : DW_CACHE_NONE, 0 };
		}
		if (r < 0)
			goto out;
	}
	h.naranges = nruns;
	h.aranges_off = dw_cbuf_add(&b, runs, nruns * sizeof *runs);
	h.ncuranges = ncur;
	h.curanges_off = dw_cbuf_add(&b, cur, ncur * sizeof *cur);
	h.ncus = ncus;
	h.cus_off = dw_cbuf_add(&b, cus, ncus * sizeof *cus);
	struct dw_csym *cs = calloc(m->nsyms + 1, sizeof *cs);
	if (!cs)
		goto out;
	for (size_t i = 0; i < m->nsyms; i++)
		cs[i] = (struct dw_csym){ m->syms[i].addr - m->bias, m->syms[i].size,
					  dw_cbuf_str(&b, m->syms[i].name), m->syms[i].rank };
	h.nsyms = m->nsyms;
	h.syms_off = dw_cbuf_add(&b, cs, m->nsyms * sizeof *cs);
	free(cs);
	char name[160];
	dw_cache_name(m, name, sizeof name);
	if (dw_cbuf_write(&b, &h, s->cache_dir, name, s->cache_max, why, sizeof why) < 0) {
		if (!s->cache_write_noted)
			dw_note(s, "symbol cache not written (%s); names are right, only later runs are not faster",
				why);
		s->cache_write_noted = 1;
	} else if (dw_cache_evict(s->cache_dir, name, s->cache_max, why, sizeof why) < 0 && !s->cache_evict_noted) {
		s->cache_evict_noted = 1;
		dw_note(s, "symbol cache directory not trimmed (%s)", why);
	}
out:
	dw_cbuf_release(&b);
	dw_ptrmap_release(&oldcu);
	dw_ptrmap_release(&newcu);
	dw_ptrmap_release(&seen);
	free(runs);
	free(cur);
	free(cus);
}

static int dw_resolve_one(struct dw_symbolizer *s, uint64_t addr, struct sym_loc *loc)
{
	memset(loc, 0, sizeof *loc);
	loc->addr = addr;
	loc->modoff = addr;
	loc->first = (uint32_t)s->table.nframes;
	/* A return address points after the call: look up the byte before it. On
	 * ARM a Thumb return address has bit 0 set; clear it first, as gdb does. */
	uint64_t pc = addr;
	if (s->machine == EM_ARM)
		pc &= ~(uint64_t)1;
	pc = pc ? pc - 1 : 0;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod) {
		loc->flags = SYM_NO_MODULE;
		return 0;
	}
	struct dw_module *m = dw_module_get(s, mod);
	if (!m)
		return -1;
	loc->module = m->name;
	loc->modoff = addr - m->bias;
	if (m->mismatch) {
		loc->flags = SYM_BUILDID_MISMATCH;
		return 0;
	}
	if (!m->has_elf) {
		loc->flags = SYM_NO_DEBUG;
		return 0;
	}
	if (m->has_dwarf) {
		int k = m->cache.base ? dw_frames_cached(s, m, pc) : -2;
		if (k == -2)
			k = dw_frames_dwarf(s, m, pc);
		if (k < 0)
			return -1;
		loc->nframes = (uint32_t)k;
	}
	if (loc->nframes == 0) {
		if (!m->has_dwarf)
			loc->flags |= SYM_NO_DEBUG;
		const struct dw_fsym *fs = dw_module_lookup(m, pc);
		/* Not a return address but the first instruction of a function
		 * "returned" to: a signal frame's __restore_rt, the __start_context
		 * of makecontext. The byte before is in no function. */
		if (!fs && (fs = dw_module_lookup(m, pc + 1)) && fs->addr != pc + 1)
			fs = NULL;
		if (fs) {
			struct sym_frame *f = dw_frame_new(s);
			if (!f)
				return -1;
			f->function = dw_name(s, fs->name);
			loc->nframes = 1;
		}
	}
	return 0;
}

/* One unit dw_resolve_prepare decodes: its index (not in the module's table
 * yet) and what the decoders need, read from libdw beforehand. */
struct dw_prep {
	struct dw_module *m;
	struct dw_cuidx *c;
	struct dw_unit u;
	size_t first;             /* the index of its first address */
	int unit_ok;              /* u is set: the scopes can be decoded from bytes */
	int scopes_ok;            /* they were */
	int lines_ok;             /* off, comp_dir, addrsz set; then: the table was decoded */
	int lines_rc;
	uint64_t off;
	const char *comp_dir;
	uint8_t addrsz;
};

/* The units dw_resolve_prepare hands to the pool, in the order of their
 * first address; v has room for one per address, so it never moves while
 * the pool reads it. */
struct dw_prepq {
	struct dw_pipe *pipe;
	struct dw_prep **v;
	size_t nv;                /* units prepared (jobs 2nv published) */
	size_t ins;               /* units before it are in their tables (or dropped) */
};

/* Job 2i decodes unit i's scopes, job 2i+1 its line table: nothing in libdw,
 * nothing shared but the sections read. */
static void dw_prep_run(void *arg, size_t i)
{
	struct dw_prep *p = ((struct dw_prepq *)arg)->v[i / 2];
	if (i % 2 == 0)
		p->scopes_ok = p->unit_ok && dw_cuidx_decode(p->c, &p->m->secs, &p->u) == 0;
	else if (p->lines_ok)
		p->lines_rc = dw_lines_read(&p->c->lines, &p->m->secs, p->off, p->comp_dir, p->addrsz);
}

/* Put into their modules' tables, in order, the prepared units whose first
 * address comes before address index upto (all: SIZE_MAX), once their two
 * jobs have run (on this thread when no helper has taken them). Returns 0,
 * or -1 when out of memory. */
static int dw_prep_insert(struct dw_prepq *q, size_t upto)
{
	for (; q->ins < q->nv && q->v[q->ins]->first < upto; q->ins++) {
		struct dw_prep *p = q->v[q->ins];
		dw_pipe_wait(q->pipe, 2 * q->ins);
		dw_pipe_wait(q->pipe, 2 * q->ins + 1);
		/* as dw_cutab_get: libdw's walk where the decoder gave up */
		if (!p->scopes_ok && dw_cuidx_build_libdw(p->c) < 0)
			continue;   /* the loop tries again, and fails alike */
		p->c->lines_state = p->lines_ok && p->lines_rc == 0 ? 1 : -1;
		if (dw_cutab_insert(&p->m->cus, p->c) < 0)
			return -1;
		p->c = NULL;
	}
	return 0;
}

/* End q: the pool stopped, the units not inserted discarded. */
static void dw_prep_end(struct dw_prepq *q)
{
	dw_pipe_end(q->pipe);
	for (size_t k = 0; k < q->nv; k++) {
		if (q->v[k]->c)
			dw_cuidx_discard(q->v[k]->c);
		free(q->v[k]);
	}
	free(q->v);
	memset(q, 0, sizeof *q);
}

/* Before the addresses are named one by one: find the units they fall in
 * that are not decoded yet, in modules named through libdw without a cache
 * file, and hand each to a pool of s->nthreads threads as soon as libdw has
 * said where it is (its scopes and its line table: two jobs), so that the
 * helpers decode while this thread asks libdw for the next ones and later
 * names the addresses (dw_prep_insert puts a unit in its table before the
 * first address in it is named). The modules are met in the order the loop
 * would meet them (so their notes come out alike), every libdw call stays on
 * this thread, and each unit enters its module's table in the order of its
 * first address, with what dw_cutab_get and dw_cuidx_lines would have given
 * it: the names are then the same byte for byte, on any number of threads.
 * Returns 0 (q->pipe NULL when there is nothing to decode this way), or -1
 * when out of memory. */
static int dw_resolve_prepare(struct dw_symbolizer *s, const uint64_t *addrs, size_t n, struct dw_prepq *q)
{
	memset(q, 0, sizeof *q);
	if (s->nthreads <= 1 || s->reference || !n)
		return 0;
	struct dw_ptrmap seen = { 0 };   /* a CU DIE's bytes -> (void *)1 */
	int rc = -1;
	struct dw_module *last = NULL;   /* the module of the address before */
	if (!(q->v = calloc(n, sizeof *q->v)) ||
	    !(q->pipe = dw_pipe_start(s->nthreads, 2 * n, dw_prep_run, q)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t pc = addrs[i];
		if (s->machine == EM_ARM)
			pc &= ~(uint64_t)1;
		pc = pc ? pc - 1 : 0;
		struct dw_module *m = last;
		/* addresses come sorted, mostly: the same module as the one before
		 * costs no lookup (a warm run is left with nothing else to do here) */
		if (!m || pc < m->start || pc >= m->end) {
			Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
			if (!mod)
				continue;
			if (!(m = dw_module_get(s, mod)))
				goto out;
			last = m;
		}
		if (m->mismatch || !m->has_elf || !m->has_dwarf || m->cache.base || dw_module_secs(m) < 0)
			continue;
		Dwarf_Addr dwbias;
		Dwarf_Die *cu = dw_module_cu(m, pc, &dwbias);
		if (!cu || !cu->addr || dw_ptrmap_get(&seen, cu->addr) ||
		    dw_cutab_find(&m->cus, dwarf_dieoffset(cu)))
			continue;
		if (dw_ptrmap_put(&seen, cu->addr, (const void *)1) < 0)
			goto out;
		struct dw_prep *p = calloc(1, sizeof *p);
		if (!p)
			goto out;
		q->v[q->nv] = p;
		p->m = m;
		p->first = i;
		if (!(p->c = dw_cuidx_new(cu))) {
			free(p);
			q->v[q->nv] = NULL;
			goto out;
		}
		p->unit_ok = dw_cuidx_unit(p->c, &m->secs, &p->u) == 0;
		p->lines_ok = dw_cuidx_lines_args(s, m, p->c, &p->off, &p->comp_dir, &p->addrsz) == 0;
		q->nv++;
		dw_pipe_publish(q->pipe, 2 * q->nv);
	}
	rc = 0;
out:
	dw_ptrmap_release(&seen);
	if (rc < 0 || !q->nv)
		dw_prep_end(q);
	return rc;
}

static int dw_resolve(struct symbolizer *base, const uint64_t *addrs, size_t n,
		      const struct sym_table **out, struct sym_error *err)
{
	struct dw_symbolizer *s = (struct dw_symbolizer *)base;
	struct dw_prepq q;
	dw_current = s;
	s->table.nlocs = 0;
	s->table.nframes = 0;
	if (n > s->locs_cap) {
		struct sym_loc *p = realloc(s->table.locs, n * sizeof *p);
		if (!p)
			return dw_error(err, SYM_ENOMEM, "symbolizer: out of memory for %zu addresses", n);
		s->table.locs = p;
		s->locs_cap = n;
	}
	if (dw_resolve_prepare(s, addrs, n, &q) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		if ((q.pipe && dw_prep_insert(&q, i + 1) < 0) || dw_resolve_one(s, addrs[i], &s->table.locs[i]) < 0)
			goto nomem;
		s->table.nlocs = i + 1;
	}
	if (q.pipe)
		dw_prep_end(&q);
	for (struct dw_module *m = s->modules; m; m = m->next)
		if (m->dirty)
			dw_module_cache_write(s, m);
	*out = &s->table;
	dw_current = NULL;
	return 0;
nomem:
	if (q.pipe)
		dw_prep_end(&q);
	dw_current = NULL;
	return dw_error(err, SYM_ENOMEM, "symbolizer: out of memory");
}

static const char *dw_notes(const struct symbolizer *base)
{
	const struct dw_symbolizer *s = (const struct dw_symbolizer *)base;
	return s->notes_len ? s->notes : NULL;
}

static void dw_free(struct symbolizer *base)
{
	struct dw_symbolizer *s = (struct dw_symbolizer *)base;
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	if (s->core_elf)
		elf_end(s->core_elf);
	if (s->core_fd >= 0)
		close(s->core_fd);
	struct dw_module *m = s->modules;
	while (m) {
		struct dw_module *next = m->next;
		free(m->syms);
		free(m->labels);
		free(m->xsecs);
		dw_cutab_release(&m->cus);
		dw_cutable_release(&m->cutable);
		dw_ptrmap_release(&m->onames);
		dw_ptrmap_release(&m->olinks);
		dw_ptrmap_release(&m->touched);
		free(m->cache_path);
		dw_cache_unmap(&m->cache);
		free(m);
		m = next;
	}
	dw_arena_release(&s->arena);
	dw_ptrmap_release(&s->names);
	dw_ptrmap_release(&s->dbg_asked);
	dw_ptrmap_release(&s->unloaded);
	free(s->table.locs);
	free(s->table.frames);
	free(s->notes);
	free(s->debuginfo_path);
	free(s->sysroot);
	free(s->exe);
	free(s->cache_dir);
	free(s->demangle_buf);
	if (s->cxx_handle)
		dlclose(s->cxx_handle);
	free(s);
}

static const struct sym_backend_ops dw_ops = {
	.resolve = dw_resolve,
	.notes = dw_notes,
	.free = dw_free,
};

/* Make the C++ demangler available if libstdc++ is installed: names are then
 * shown as gdb shows them ("ns::Foo::bar(int)"); without it they stay mangled. */
static void dw_demangler_load(struct dw_symbolizer *s)
{
	s->cxx_handle = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (!s->cxx_handle)
		return;
	void *fn = dlsym(s->cxx_handle, "__cxa_demangle");
	if (!fn) {
		dlclose(s->cxx_handle);
		s->cxx_handle = NULL;
		return;
	}
	memcpy(&s->cxa_demangle, &fn, sizeof fn);
}

/* A separate debug file for mod found by its build-id under the absolute
 * entries of s->debuginfo_path (where libdwfl's standard search looks first,
 * DIR/.build-id/xx/rest.debug) whose compressed DWARF sections dw_inflate.c
 * could prepare: the descriptor of that copy, with *debuginfo_file_name set to
 * the file's real path (malloc'd, libdwfl frees it). -1 in every other case
 * (nothing found, another build-id, nothing compressed): the standard search
 * then runs as before. */
static int dw_debuginfo_inflated(struct dw_symbolizer *s, Dwfl_Module *mod, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len < 2 || len > 64 || !s->debuginfo_path)
		return -1;
	char hex[130];
	dw_hex(hex, sizeof hex, bits, len);
	for (const char *e = s->debuginfo_path; *e; ) {
		const char *end = strchr(e, ':');
		size_t el = end ? (size_t)(end - e) : strlen(e);
		/* one leading '+' or '-' (check the CRC or not) is no part of the
		 * directory, as in libdwfl */
		size_t skip = el && (e[0] == '+' || e[0] == '-');
		char path[4096];
		if (e[skip] == '/' && el + 160 < sizeof path) {
			snprintf(path, sizeof path, "%.*s/.build-id/%.2s/%s.debug", (int)(el - skip), e + skip,
				 hex, hex + 2);
			unsigned char id[64];
			int idlen = dw_file_build_id(path, id, sizeof id, NULL);
			if (idlen >= 0) {
				/* the first file there decides, as in libdwfl */
				if (idlen != len || memcmp(id, bits, (size_t)len) != 0)
					return -1;
				int fd = open(path, O_RDONLY | O_CLOEXEC);
				int copy = fd >= 0 ? dw_inflate_debug(fd, s->nthreads) : -1;
				if (fd >= 0)
					close(fd);
				char *real = copy >= 0 ? realpath(path, NULL) : NULL;
				if (!real) {
					if (copy >= 0)
						close(copy);
					return -1;
				}
				free(*debuginfo_file_name);
				*debuginfo_file_name = real;
				return copy;
			}
		}
		e += el + (end != NULL);
	}
	return -1;
}

/* Whether a find_debuginfo call for the main file main_path asks for a dwz
 * alternate file rather than the module's own debug file: 1 when main_path
 * already has .debug_info (libdw reads its DWARF there and only seeks the alt)
 * or a .gnu_debugaltlink naming debuglink_file; 0 otherwise or unreadable. */
static int dw_call_is_for_alt(const char *main_path, const char *debuglink_file)
{
	if (!main_path)
		return 0;
	int fd = open(main_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int alt = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		for (Elf_Scn *scn = NULL; !alt && elf_getshdrstrndx(elf, &shstrndx) == 0 &&
		     (scn = elf_nextscn(elf, scn)) != NULL; ) {
			GElf_Shdr sh;
			const char *name;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
			    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (strcmp(name, ".debug_info") == 0) {
				alt = 1;
			} else if (debuglink_file && strcmp(name, ".gnu_debugaltlink") == 0) {
				/* the alt file's name, NUL-terminated, then its build-id */
				Elf_Data *d = elf_getdata(scn, NULL);
				if (d && d->d_buf && memchr(d->d_buf, 0, d->d_size) &&
				    strcmp(d->d_buf, debuglink_file) == 0)
					alt = 1;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return alt;
}

/* Our find_debuginfo: a module's first call tries dw_debuginfo_inflated, whose
 * copy libdw then opens instead of inflating the file's sections itself, when
 * it asks for the module's own debug file (not for a dwz alternate file: that
 * is a second call, or the first when the main file has DWARF itself); else,
 * and always on the reference path, libdwfl's standard search. */
static int dw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct dw_symbolizer *s = dw_current;
	/* libdwfl 0.188 asks again after a debug file it was given failed to open
	 * as ELF, into the same field (mod->debug.name), without freeing the
	 * name of that failed file: it is ours to free, or it leaks */
	if (*debuginfo_file_name) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
	}
	if (s && !s->reference && !dw_ptrmap_get(&s->dbg_asked, mod) &&
	    dw_ptrmap_put(&s->dbg_asked, mod, mod) == 0 && !dw_call_is_for_alt(file_name, debuglink_file)) {
		int fd = dw_debuginfo_inflated(s, mod, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

/* Report the exe alone at its own link addresses (raw dumps). */
static int dw_open_raw(struct dw_symbolizer *s, const struct sym_options *opt, struct sym_error *err)
{
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dw_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl)
		return dw_error(err, SYM_EBACKEND, "%s: libdwfl: %s", opt->exe, dwfl_errmsg(-1));
	dwfl_report_begin(s->dwfl);
	Dwfl_Module *mod = dwfl_report_elf(s->dwfl, opt->exe, opt->exe, -1, 0, true);
	if (!mod)
		return dw_error(err, SYM_EFORMAT, "%s: cannot use as ELF: %s", opt->exe, dwfl_errmsg(-1));
	dwfl_report_end(s->dwfl, NULL, NULL);
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	if (elf && gelf_getehdr(elf, &eh) && eh.e_type == ET_CORE)
		return dw_error(err, SYM_EARG, "%s: is a core file, not the program", opt->exe);
	return 0;
}

/* AT_ENTRY from the core's NT_AUXV: the program's entry point, which tells
 * which module is the main program. Returns 0, or -1 when absent. */
static int dw_core_entry(Elf *core, uint64_t *entry)
{
	size_t nph;
	if (elf_getphdrnum(core, &nph) != 0)
		return -1;
	int is64 = gelf_getclass(core) == ELFCLASS64;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *data = elf_getdata_rawchunk(core, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!data)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (off < data->d_size && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_AUXV)
				continue;
			Elf_Data *auxv = elf_getdata_rawchunk(core, ph.p_offset + desc_off, nh.n_descsz,
							      ELF_T_AUXV);
			if (!auxv)
				return -1;
			size_t n = auxv->d_size / (is64 ? sizeof(Elf64_auxv_t) : sizeof(Elf32_auxv_t));
			for (size_t k = 0; k < n; k++) {
				GElf_auxv_t av;
				if (!gelf_getauxv(auxv, (int)k, &av))
					break;
				if (av.a_type == AT_ENTRY) {
					*entry = av.a_un.a_val;
					return 0;
				}
			}
			return -1;
		}
	}
	return -1;
}

/* A core with no load map (qemu-user writes no NT_FILE; a static program has no
 * link map): report the program alone, placed so that its e_entry is the core's
 * AT_ENTRY (bias 0 for ET_EXEC). HAVE_ENTRY 0: the core has no NT_AUXV either
 * (qemu-system's dump-guest-memory of a board: firmware), and only an ET_EXEC,
 * at its link addresses, can be placed. Returns 0, or -1 when it does not fit. */
static int dw_report_exe_at_entry(Dwfl *dwfl, const char *exe, int have_entry, uint64_t entry)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	int ok = elf && gelf_getehdr(elf, &eh) &&
		 (have_entry ? eh.e_type == ET_DYN || (eh.e_type == ET_EXEC && eh.e_entry == entry)
			     : eh.e_type == ET_EXEC);
	uint64_t bias = ok && have_entry ? entry - eh.e_entry : 0;
	if (elf)
		elf_end(elf);
	close(fd);
	if (!ok || !dwfl_report_elf(dwfl, exe, exe, -1, bias, true))
		return -1;
	return 0;
}

int sym_dwfl_report_exe_at_entry(struct Dwfl *dwfl, struct Elf *core, const char *exe)
{
	uint64_t entry = 0;
	int have_entry = dw_core_entry(core, &entry) == 0;

	return dw_report_exe_at_entry(dwfl, exe, have_entry, entry);
}

/* dwfl_getmodules callback: does the module overlap the span arg points at
 * (two words, [lo, hi))? Stops at the first that does. */
static int dw_overlap_cb(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			 void *arg)
{
	uint64_t *span = arg;
	Dwarf_Addr lo, hi;

	(void)userdata;
	(void)name;
	(void)start;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	if (lo < span[1] && span[0] < hi) {
		span[2] = 1;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* After the core's modules: report each library unloaded before the core
 * (opt->unloaded, in the order given: the latest unload first) whose span no
 * module has, nor an unload reported before it, when its file is
 * there with the recorded build-id; else a note says why its frames stay
 * addresses. A span that a module covers (a library loaded there since, or
 * the same one again) is left to that module. Returns 0, or -1 with err filled
 * when libdwfl fails. */
static int dw_report_unloaded(struct dw_symbolizer *s, const struct sym_options *opt,
			      struct sym_error *err)
{
	int began = 0;

	for (size_t k = 0; k < opt->nunloaded; k++) {
		const struct sym_unloaded *u = &opt->unloaded[k];
		uint64_t span[3] = { u->lo, u->hi, 0 };
		const char *base = strrchr(u->path, '/') ? strrchr(u->path, '/') + 1 : u->path;
		unsigned char id[64];
		char *host = NULL;
		int fd, idlen;

		if (began && dwfl_report_end(s->dwfl, NULL, NULL) != 0)
			return dw_error(err, SYM_EBACKEND, "%s: libdwfl: %s", opt->core, dwfl_errmsg(-1));
		began = 0;
		dwfl_getmodules(s->dwfl, dw_overlap_cb, span, 0);
		if (span[2])
			continue;   /* named after what is there now */
		if (!u->idlen) {
			dw_note(s, "%s: library unloaded before the core, without a build-id to check "
				"its file against: its frames stay addresses", base);
			continue;
		}
		fd = sym_module_open(s->sysroot, u->path, &host);
		if (fd < 0) {
			dw_note(s, "%s: library unloaded before the core, and its file %s%s is gone: "
				"its frames stay addresses", base, s->sysroot ? s->sysroot : "", u->path);
			continue;
		}
		close(fd);
		idlen = dw_file_build_id(host, id, sizeof id, NULL);
		if (idlen < 0 || (size_t)idlen != u->idlen || memcmp(id, u->build_id, u->idlen)) {
			dw_note(s, "%s: library unloaded before the core: file changed since (%s), "
				"its frames stay addresses", base, host);
			free(host);
			continue;
		}
		dwfl_report_begin_add(s->dwfl);
		began = 1;
		Dwfl_Module *mod = dwfl_report_elf(s->dwfl, u->path, host, -1, u->bias, true);
		if (!mod || dw_ptrmap_put(&s->unloaded, mod, mod) != 0)
			dw_note(s, "%s: library unloaded before the core: libdwfl cannot place it (%s), "
				"its frames stay addresses", base, mod ? "out of memory" : dwfl_errmsg(-1));
		free(host);
	}
	if (began && dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		return dw_error(err, SYM_EBACKEND, "%s: libdwfl: %s", opt->core, dwfl_errmsg(-1));
	return 0;
}

/* Report the modules of a core (load map from the core, program from opt->exe). */
static int dw_open_core(struct dw_symbolizer *s, const struct sym_options *opt, struct sym_error *err)
{
	s->core_fd = open(opt->core, O_RDONLY | O_CLOEXEC);
	if (s->core_fd < 0)
		return dw_error(err, SYM_EIO, "%s: %s", opt->core, strerror(errno));
	s->core_elf = elf_begin(s->core_fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr ehdr;
	if (!s->core_elf || elf_kind(s->core_elf) != ELF_K_ELF || !gelf_getehdr(s->core_elf, &ehdr))
		return dw_error(err, SYM_EFORMAT, "%s: not an ELF file", opt->core);
	if (ehdr.e_type != ET_CORE)
		return dw_error(err, SYM_EFORMAT, "%s: not a core file (ELF type %u)", opt->core,
				(unsigned)ehdr.e_type);
	s->machine = ehdr.e_machine;
	size_t nph = 0;
	GElf_Phdr ph;
	if (elf_getphdrnum(s->core_elf, &nph) != 0 || nph == 0 ||
	    !gelf_getphdr(s->core_elf, (int)nph - 1, &ph))
		return dw_error(err, SYM_EFORMAT, "%s: truncated core: no readable program headers",
				opt->core);
	s->callbacks.find_elf = dw_find_elf;
	s->callbacks.find_debuginfo = dw_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl)
		return dw_error(err, SYM_EBACKEND, "%s: libdwfl: %s", opt->core, dwfl_errmsg(-1));
	dwfl_report_begin(s->dwfl);
	int n = dwfl_core_file_report(s->dwfl, s->core_elf, opt->exe);
	if (n < 0)
		return dw_error(err, SYM_EFORMAT, "%s: cannot read the load map: %s", opt->core,
				dwfl_errmsg(-1));
	uint64_t entry = 0;
	int have_entry = dw_core_entry(s->core_elf, &entry) == 0;
	if (n == 0 && dw_report_exe_at_entry(s->dwfl, opt->exe, have_entry, entry) == 0)
		n = 1;
	if (n == 0)
		dw_note(s, "%s: no modules found in the core's load map; no address can be named",
			opt->core);
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		return dw_error(err, SYM_EBACKEND, "%s: libdwfl: %s", opt->core, dwfl_errmsg(-1));
	if (have_entry)
		s->main_mod = dwfl_addrmodule(s->dwfl, entry);
	return dw_report_unloaded(s, opt, err);
}

struct symbolizer *sym_dw_open(const struct sym_options *opt, struct sym_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (!opt || !opt->exe) {
		dw_error(err, SYM_EARG, "symbolizer: no program given");
		return NULL;
	}
	struct stat st;
	if (stat(opt->exe, &st) != 0) {
		dw_error(err, SYM_EIO, "%s: %s", opt->exe, strerror(errno));
		return NULL;
	}
	if (opt->sysroot && (stat(opt->sysroot, &st) != 0 || !S_ISDIR(st.st_mode))) {
		dw_error(err, SYM_EIO, "%s: sysroot is not a directory", opt->sysroot);
		return NULL;
	}
	struct dw_symbolizer *s = calloc(1, sizeof *s);
	if (!s) {
		dw_error(err, SYM_ENOMEM, "symbolizer: out of memory");
		return NULL;
	}
	s->base.ops = &dw_ops;
	s->core_fd = -1;
	s->debuginfo_path = dw_debuginfo_path(opt);
	if (opt->sysroot) {
		s->sysroot = strdup(opt->sysroot);
		/* "DIR/" + "/lib/x" would still work, but keep paths tidy */
		size_t len = s->sysroot ? strlen(s->sysroot) : 0;
		while (len > 1 && s->sysroot[len - 1] == '/')
			s->sysroot[--len] = '\0';
	}
	s->exe = strdup(opt->exe);
	s->exe_idlen = -1;
	s->reference = (opt->flags & SYM_DW_REFERENCE) != 0;
	const char *bad_threads;
	s->nthreads = dw_pool_threads(opt->nthreads, &bad_threads);
	if (bad_threads)
		dw_note(s, "MPROF_THREADS=%s is not a number of threads; the symbolizer uses every usable "
			"CPU (%u)", bad_threads, s->nthreads);
	/* the reference path is what the cache is tested against: never cached */
	if (opt->cache_dir && opt->cache_dir[0] && !s->reference && !(s->cache_dir = strdup(opt->cache_dir))) {
		dw_error(err, SYM_ENOMEM, "symbolizer: out of memory");
		goto fail;
	}
	s->cache_max = DW_CACHE_MAX_DEFAULT;
	const char *max = getenv("MPROF_CACHE_MAX");
	if (s->cache_dir && max && dw_cache_max_parse(max, &s->cache_max) < 0)
		dw_note(s, "MPROF_CACHE_MAX=%s is not a size (bytes, or with K, M, G); the symbol cache keeps "
			"its default limit of 1 GiB", max);
	if (!s->debuginfo_path || (opt->sysroot && !s->sysroot) || !s->exe) {
		dw_error(err, SYM_ENOMEM, "symbolizer: out of memory");
		goto fail;
	}
	/* never ask a debuginfod server: symbolizing must work offline */
	unsetenv("DEBUGINFOD_URLS");
	elf_version(EV_CURRENT);
	dw_demangler_load(s);
	s->machine = ~0u;
	s->exe_idlen = dw_file_build_id(opt->exe, s->exe_id, sizeof s->exe_id, &s->machine);
	if (s->machine == ~0u) {
		dw_error(err, SYM_EFORMAT, "%s: not an ELF file", opt->exe);
		goto fail;
	}
	dw_current = s;
	int rc = opt->core ? dw_open_core(s, opt, err) : dw_open_raw(s, opt, err);
	dw_current = NULL;
	if (rc < 0)
		goto fail;
	return &s->base;
fail:
	dw_current = NULL;
	dw_free(&s->base);
	return NULL;
}
