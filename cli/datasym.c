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
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

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

/* The demangled form of a C++ symbol name, kept until the session ends; other
 * names (and any failure) as they are. */
static const char *ds_demangle(struct cli_datasym *d, const char *raw)
{
	char *out;
	int status = -1;

	if (!d->demangle || raw[0] != '_' || raw[1] != 'Z')
		return raw;
	if (d->nnames == d->capnames) {
		size_t cap = d->capnames ? 2 * d->capnames : 16;
		char **n = realloc(d->names, cap * sizeof(*n));

		if (!n)
			return raw;
		d->names = n;
		d->capnames = cap;
	}
	out = d->demangle(raw, NULL, NULL, &status);
	if (!out || status != 0) {
		free(out);
		return raw;
	}
	d->names[d->nnames++] = out;
	return out;
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
	}
	return 0;
}
