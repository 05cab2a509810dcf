/* gdb.c - the symbolizer backend that asks gdb over MI (mi/), without Python.
 * gdb loads the program and the core (or the firmware ELF alone for a raw dump);
 * we ask, for address minus one, "-data-disassemble -- 4" (source-centric: file,
 * line, function from debug info) and "info symbol" (the symbol table's name),
 * pipelined. gdb has no inline chains without Python: one frame per address (the
 * containing function, the line of the innermost inlined code). gdb loads a
 * rebuilt library without a word, so build-ids are checked here against the core
 * and such modules are only shown as module+offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "coreparse.h"
#include "mi.h"
#include "sym.h"

#define GDB_BATCH 512           /* addresses per pipelined batch */
#define GDB_DEFAULT_TIMEOUT 30000

enum gdb_module_state {
	GM_OK = 0,          /* the file on disk is the one in the core (or nothing to compare) */
	GM_MISMATCH = 1,    /* build-ids differ: module+offset only */
	GM_MISSING = 2,     /* no file on disk: module+offset only */
};

/* One module of the image: the union of its NT_FILE mappings. */
struct gdb_module {
	const char *path;    /* as the image names it (owned by the symbolizer's strings) */
	const char *file;    /* the file gdb loads for it (sysroot applied, or the exe) */
	uint64_t start, end; /* address range in the image */
	uint64_t bias;       /* load bias: modoff = addr - bias */
	int state;           /* enum gdb_module_state */
};

/* A chunk of interned strings. */
struct gdb_chunk {
	struct gdb_chunk *next;
	size_t used, cap;
	char data[];
};

struct gdb_symbolizer {
	struct symbolizer base;      /* must be first */
	struct mi_client *mi;
	struct gdb_module *mods;     /* sorted by start */
	size_t nmods;
	struct gdb_chunk *chunks;    /* every string we hand out */
	struct sym_table table;      /* the last resolve's result */
	size_t locs_cap, frames_cap;
	char *notes;                 /* '\n'-separated, NUL-terminated, or NULL */
	size_t notes_len;
	unsigned timeout_ms;
};

static int gdb_error(struct sym_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A copy of len bytes at p that lives until the symbolizer is freed, or NULL. */
static const char *gdb_str_len(struct gdb_symbolizer *s, const char *p, size_t len)
{
	struct gdb_chunk *c = s->chunks;
	char *out;

	if (!p)
		return NULL;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;

		c = malloc(sizeof *c + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = s->chunks;
		s->chunks = c;
	}
	out = c->data + c->used;
	memcpy(out, p, len);
	out[len] = '\0';
	c->used += len + 1;
	return out;
}

static const char *gdb_str(struct gdb_symbolizer *s, const char *p)
{
	return p ? gdb_str_len(s, p, strlen(p)) : NULL;
}

/* Append one line to the notes (dropped when out of memory). */
static void gdb_note(struct gdb_symbolizer *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t len;
	char *p;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	len = strlen(line);
	p = realloc(s->notes, s->notes_len + len + 2);
	if (!p)
		return;
	s->notes = p;
	memcpy(p + s->notes_len, line, len);
	s->notes_len += len;
	p[s->notes_len++] = '\n';
	p[s->notes_len] = '\0';
}

static void gdb_hex(char *out, size_t n, const unsigned char *id, size_t len)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < len && 2 * i + 3 <= n; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* What we read from an ELF file on disk: its build-id and where its first
 * PT_LOAD wants to be (to turn a mapping address into a load bias). */
struct gdb_file_info {
	unsigned char id[64];
	size_t idlen;          /* 0: no build-id note */
	uint64_t first_vaddr;  /* p_vaddr - p_offset of the first PT_LOAD, page-aligned */
	int has_load;
	int is_exec;           /* ET_EXEC: the bias is 0 */
	uint16_t machine;
};

/* Read path's build-id and first PT_LOAD. Returns 0, or -1 when the file cannot
 * be opened or is not ELF (errno-like text in why). */
static int gdb_file_read(const char *path, struct gdb_file_info *fi, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t nph = 0, i;
	const void *id;
	ssize_t idlen;
	int ret = -1;

	memset(fi, 0, sizeof *fi);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		*why = "not an ELF file";
		goto out;
	}
	fi->is_exec = eh.e_type == ET_EXEC;
	fi->machine = eh.e_machine;
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen > 0) {
		fi->idlen = (size_t)idlen > sizeof fi->id ? sizeof fi->id : (size_t)idlen;
		memcpy(fi->id, id, fi->idlen);
	}
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				fi->first_vaddr = (ph.p_vaddr - ph.p_offset) & ~(uint64_t)0xfff;
				fi->has_load = 1;
				break;
			}
		}
	}
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* Check one module: read its file (sysroot applied), compare build-ids, set the
 * bias. Problems become notes and a state, never an error. */
static void gdb_module_check(struct gdb_symbolizer *s, const struct cp_image *img,
			     const struct cp_mapping *first, struct gdb_module *m)
{
	unsigned char cid[64];
	size_t clen = 0;
	struct gdb_file_info fi;
	const char *why = NULL;
	int have_cid = cp_image_module_buildid(img, first, cid, sizeof cid, &clen) == 0 && clen > 0;

	if (clen > sizeof cid)
		clen = sizeof cid;
	m->bias = first->start;
	if (gdb_file_read(m->file, &fi, &why) < 0) {
		m->state = GM_MISSING;
		gdb_note(s, "%s: cannot read %s (%s); showing module+offset", m->path, m->file, why);
		return;
	}
	if (fi.has_load)
		m->bias = fi.is_exec ? 0 : first->start - fi.first_vaddr;
	if (have_cid && fi.idlen && (fi.idlen != clen || memcmp(fi.id, cid, clen) != 0)) {
		char h1[130], h2[130];

		gdb_hex(h1, sizeof h1, cid, clen);
		gdb_hex(h2, sizeof h2, fi.id, fi.idlen);
		m->state = GM_MISMATCH;
		gdb_note(s, "%s: build-id in core %s differs from %s %s; showing module+offset "
			 "(gdb would have named it from the wrong file)", m->path, h1, m->file, h2);
	} else if (!have_cid) {
		gdb_note(s, "%s: build-id not in the core; %s used unchecked", m->path, m->file);
	} else if (!fi.idlen) {
		gdb_note(s, "%s: %s has no build-id; used unchecked", m->path, m->file);
	}
	if (m->state != GM_MISMATCH && (!have_cid || !fi.idlen)) {
		/* nothing else tells a rebuilt file from the core's (gdb warns of the
		 * program only) */
		struct stat f, c;

		if (img->path && stat(m->file, &f) == 0 && stat(img->path, &c) == 0 &&
		    (f.st_mtim.tv_sec > c.st_mtim.tv_sec ||
		     (f.st_mtim.tv_sec == c.st_mtim.tv_sec && f.st_mtim.tv_nsec > c.st_mtim.tv_nsec)))
			gdb_note(s, "%s: no build-id, and %s was modified after the core was written: "
				 "its frames may be named from another build", m->path, m->file);
	}
}

/* The separate debug file of the module file exe by its .gnu_debuglink NAME
 * where libdwfl finds it but gdb does not: DIR/NAME for a --debug-dir DIR (gdb
 * looks in DIR/<the file's directory>/NAME, next to the file, in its .debug/ and
 * by build-id, which it is left to). Into buf; 0 when found with the link's CRC,
 * -1 when not (or when the file has DWARF of its own, or no link). */
static int gdb_debuglink_find(const char *exe, const char *const *dirs, char *buf, size_t cap)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC), ret = -1, have_dwarf = 0;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	char name[256] = "", dir[4096];
	uint32_t crc = 0;
	const char *slash;
	struct stat st;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sn;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sn = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(sn, ".debug_info") == 0 && sh.sh_type != SHT_NOBITS)
			have_dwarf = 1;
		if (strcmp(sn, ".gnu_debuglink") == 0 && (d = elf_rawdata(scn, NULL)) && d->d_size >= 8) {
			size_t n = strnlen(d->d_buf, d->d_size), at = (n + 4) & ~(size_t)3;

			if (n && n < sizeof name && at + 4 <= d->d_size) {
				memcpy(name, d->d_buf, n);
				name[n] = 0;
				memcpy(&crc, (const char *)d->d_buf + at, 4);
				if (elf_getident(elf, NULL)[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
									ELFDATA2LSB : ELFDATA2MSB))
					crc = __builtin_bswap32(crc);
			}
		}
	}
	if (have_dwarf || !name[0] || strchr(name, '/'))
		goto out;
	{
		/* found by its build-id under a debug directory: gdb does that itself */
		const unsigned char *id;
		ssize_t idlen = dwelf_elf_gnu_build_id(elf, (const void **)&id);
		const char *const *d = dirs;
		const char *dir0 = "/usr/lib/debug";

		for (const char *dd = dir0; idlen > 1 && dd; dd = d && *d ? *d++ : NULL) {
			size_t len = (size_t)snprintf(buf, cap, "%s/.build-id/%02x/", dd, id[0]);

			for (ssize_t k = 1; k < idlen && len + 3 < cap; k++)
				len += (size_t)snprintf(buf + len, cap - len, "%02x", id[k]);
			if (len + 7 < cap && (strcpy(buf + len, ".debug"), stat(buf, &st) == 0))
				goto out;
		}
	}
	/* where gdb looks by itself: next to the program, and in its .debug/ */
	slash = strrchr(exe, '/');
	if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - exe) : 1,
			     slash ? exe : ".") >= sizeof dir ||
	    (size_t)snprintf(buf, cap, "%s/%s", dir, name) >= cap || stat(buf, &st) == 0 ||
	    (size_t)snprintf(buf, cap, "%s/.debug/%s", dir, name) >= cap || stat(buf, &st) == 0)
		goto out;
	for (; dirs && *dirs && ret < 0; dirs++) {
		unsigned char b[65536];
		ssize_t got;
		uLong c = crc32(0L, Z_NULL, 0);
		int dfd;

		if ((size_t)snprintf(buf, cap, "%s/%s", *dirs, name) >= cap)
			continue;
		dfd = open(buf, O_RDONLY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		while ((got = read(dfd, b, sizeof b)) > 0)
			c = crc32(c, b, (uInt)got);
		close(dfd);
		if (got == 0 && (uint32_t)c == crc)
			ret = 0;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* Load each module's separate debug file that gdb does not find by itself
 * (gdb_debuglink_find) beside its symbols, at the module's load bias (symbol-file
 * would replace the program, and gdb then finds no shared library in a core).
 * Problems become notes. */
static void gdb_debuglink_load(struct gdb_symbolizer *s, const struct sym_options *opt)
{
	char path[4096], cmd[8800], q[8600];
	struct mi_reply r;
	struct mi_error me;
	const char *msg;

	for (size_t i = 0; i < s->nmods; i++) {
		const struct gdb_module *m = &s->mods[i];

		if (!m->file || m->state != GM_OK ||
		    gdb_debuglink_find(m->file, opt->debug_dirs, path, sizeof path) < 0)
			continue;
		if (strpbrk(path, " \t\n'\"\\")) {   /* add-symbol-file splits its arguments */
			gdb_note(s, "%s: gdb cannot be given its debug file %s (a space or quote in the path)",
				 m->file, path);
			continue;
		}
		snprintf(cmd, sizeof cmd, "add-symbol-file %s -o 0x%" PRIx64, path, m->bias);
		if (mi_quote(q, sizeof q, cmd) >= sizeof q)
			continue;
		snprintf(cmd, sizeof cmd, "-interpreter-exec console %s", q);
		if (mi_client_exec(s->mi, cmd, s->timeout_ms, &r, &me) < 0) {
			gdb_note(s, "%s: debug file %s not loaded: %s", m->file, path, me.msg);
			continue;
		}
		msg = mi_reply_error(&r);
		if (msg)
			gdb_note(s, "%s: debug file %s not loaded: gdb: %s", m->file, path, msg);
		mi_reply_release(&r);
	}
}

static int gdb_module_cmp(const void *a, const void *b)
{
	const struct gdb_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Build the module list from the core's NT_FILE mappings (grouped by path); the
 * module holding AT_ENTRY is the program, which gdb loads from opt->exe. */
static int gdb_modules_from_core(struct gdb_symbolizer *s, const struct cp_image *img,
				 const struct sym_options *opt, struct sym_error *err)
{
	uint64_t entry = 0;
	const struct cp_mapping *emap;
	const char *exe_image_path = NULL;
	size_t i, j;

	(void)cp_image_auxv(img, AT_ENTRY, &entry);
	emap = entry ? cp_image_mapping(img, entry) : NULL;
	if (emap)
		exe_image_path = emap->path;
	s->mods = calloc(img->nfiles ? img->nfiles : 1, sizeof *s->mods);
	if (!s->mods)
		return gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
	for (i = 0; i < img->nfiles; i++) {
		const struct cp_mapping *mp = &img->files[i];
		struct gdb_module *m = NULL;

		if (!mp->path || !mp->path[0])
			continue;
		for (j = 0; j < s->nmods; j++)
			if (strcmp(s->mods[j].path, mp->path) == 0)
				m = &s->mods[j];
		if (m) {
			if (mp->start < m->start)
				m->start = mp->start;
			if (mp->end > m->end)
				m->end = mp->end;
			continue;
		}
		m = &s->mods[s->nmods];
		m->path = gdb_str(s, mp->path);
		if (!m->path)   /* before the next path compares with it */
			return gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
		s->nmods++;
		m->start = mp->start;
		m->end = mp->end;
	}
	for (j = 0; j < s->nmods; j++) {
		struct gdb_module *m = &s->mods[j];
		const struct cp_mapping *first = NULL;
		char buf[4096];

		for (i = 0; i < img->nfiles; i++)
			if (img->files[i].file_offset == 0 && img->files[i].path &&
			    strcmp(img->files[i].path, m->path) == 0) {
				first = &img->files[i];
				break;
			}
		size_t plen = strlen(m->path), dlen = sizeof(" (deleted)") - 1;

		/* "PATH (deleted)": replaced since it was mapped (an upgrade); the
		 * file at PATH is what there is, and its build-id is checked below */
		if (plen > dlen && !strcmp(m->path + plen - dlen, " (deleted)"))
			plen -= dlen;
		if (exe_image_path && strcmp(m->path, exe_image_path) == 0) {
			m->file = gdb_str(s, opt->exe);
		} else {
			snprintf(buf, sizeof buf, "%s%.*s", opt->sysroot ? opt->sysroot : "", (int)plen,
				 m->path);
			m->file = gdb_str(s, buf);
		}
		if (!m->file)
			return gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
		if (!first) {
			/* no header mapping (a data file mapped into memory): nothing to check */
			m->bias = m->start;
			continue;
		}
		gdb_module_check(s, img, first, m);
	}
	qsort(s->mods, s->nmods, sizeof *s->mods, gdb_module_cmp);
	return 0;
}

/* A raw dump: the one module is the ELF, at its own addresses. */
static int gdb_modules_from_elf(struct gdb_symbolizer *s, const struct sym_options *opt,
				struct sym_error *err)
{
	int fd = open(opt->exe, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t nph = 0, i;
	uint64_t lo = UINT64_MAX, hi = 0;

	if (fd < 0)
		return gdb_error(err, SYM_EIO, "%s: %s", opt->exe, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) != 0) {
		if (elf)
			elf_end(elf);
		close(fd);
		return gdb_error(err, SYM_EFORMAT, "%s: not an ELF file", opt->exe);
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_memsz) {
			if (ph.p_vaddr < lo)
				lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > hi)
				hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	elf_end(elf);
	close(fd);
	s->mods = calloc(1, sizeof *s->mods);
	if (!s->mods)
		return gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
	if (hi > lo) {
		s->mods[0].path = gdb_str(s, opt->exe);
		s->mods[0].file = s->mods[0].path;
		s->mods[0].start = lo;
		s->mods[0].end = hi;
		s->mods[0].bias = 0;
		s->nmods = 1;
	}
	return 0;
}

static struct gdb_module *gdb_module_find(struct gdb_symbolizer *s, uint64_t pc)
{
	size_t lo = 0, hi = s->nmods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < s->mods[mid].start)
			hi = mid;
		else if (pc >= s->mods[mid].end)
			lo = mid + 1;
		else
			return &s->mods[mid];
	}
	return NULL;
}

/* Run one command; on ^error fill err with what gdb said about what. */
static int gdb_exec_ok(struct gdb_symbolizer *s, const char *cmd, const char *what,
		       struct sym_error *err)
{
	struct mi_reply r;
	struct mi_error me;
	const char *msg;

	if (mi_client_exec(s->mi, cmd, s->timeout_ms, &r, &me) < 0)
		return gdb_error(err, SYM_EBACKEND, "%s: %s", what, me.msg);
	msg = mi_reply_error(&r);
	if (msg) {
		gdb_error(err, SYM_EBACKEND, "%s: gdb: %s", what, msg);
		mi_reply_release(&r);
		return -1;
	}
	/* gdb's warnings while loading ("Could not load shared library symbols",
	 * "core file may not match") become notes. */
	{
		const char *p = r.log, *nl;

		while (p && *p) {
			nl = strchr(p, '\n');
			if (strncmp(p, "warning: ", 9) == 0)
				gdb_note(s, "gdb: %.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
			p = nl ? nl + 1 : NULL;
		}
	}
	mi_reply_release(&r);
	return 0;
}

/* Compare what gdb really loaded for each shared library (its host-name, after
 * sysroot and solib-search-path) with the module we checked; re-check when it is
 * another file. */
static void gdb_check_loaded(struct gdb_symbolizer *s, const struct cp_image *img)
{
	struct mi_reply r;
	struct mi_error me;
	const struct mi_value *libs;
	size_t i;

	if (mi_client_exec(s->mi, "-file-list-shared-libraries", s->timeout_ms, &r, &me) < 0)
		return;
	libs = mi_value_get(r.result.results, "shared-libraries");
	for (i = 0; libs && libs->kind == MI_LIST && i < libs->nitems; i++) {
		const struct mi_value *lib = libs->items[i].value;
		const char *host = mi_value_str(lib, "host-name");
		const struct mi_value *ranges = mi_value_get(lib, "ranges");
		const char *from = NULL;
		struct gdb_module *m;
		const struct cp_mapping *first = NULL;
		size_t k;

		if (ranges && ranges->kind == MI_LIST && ranges->nitems)
			from = mi_value_str(ranges->items[0].value, "from");
		if (!host || !from)
			continue;
		m = gdb_module_find(s, strtoull(from, NULL, 0));
		if (!m || m->state != GM_OK || strcmp(m->file, host) == 0)
			continue;
		{
			/* the same file under another name (/lib -> /usr/lib) is fine */
			struct stat a, b;

			if (stat(m->file, &a) == 0 && stat(host, &b) == 0 &&
			    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
				continue;
		}
		for (k = 0; k < img->nfiles; k++)
			if (img->files[k].file_offset == 0 && strcmp(img->files[k].path, m->path) == 0)
				first = &img->files[k];
		m->file = gdb_str(s, host);
		if (first && m->file)
			gdb_module_check(s, img, first, m);
	}
	mi_reply_release(&r);
}

/* Libraries unloaded before the core (opt->unloaded, in the order given: the
 * latest unload first) whose span no module has, nor one added before it:
 * loaded into gdb with add-symbol-file at their bias, and added to the module
 * list, when the file has the recorded build-id; else a note.
 * Failures are notes, never errors. Once one is added, gdb reads read-only
 * sections from the files (trust-readonly-sections), the core's copy of them
 * no more. */
static void gdb_add_unloaded(struct gdb_symbolizer *s, const struct sym_options *opt)
{
	int trusted = 0;

	for (size_t k = 0; k < opt->nunloaded; k++) {
		const struct sym_unloaded *u = &opt->unloaded[k];
		const char *base = strrchr(u->path, '/') ? strrchr(u->path, '/') + 1 : u->path;
		struct gdb_file_info fi;
		struct gdb_module *m;
		const char *why = NULL;
		char file[4096], cmd[8192 + 64], q[8192];
		int taken = 0;

		for (size_t i = 0; i < s->nmods; i++)
			if (s->mods[i].start < u->hi && u->lo < s->mods[i].end)
				taken = 1;
		if (taken)
			continue;   /* named after what is there now */
		if ((size_t)snprintf(file, sizeof file, "%s%s", opt->sysroot ? opt->sysroot : "",
				     u->path) >= sizeof file)
			continue;
		if (!u->idlen) {
			gdb_note(s, "%s: library unloaded before the core, without a build-id to check "
				 "its file against: its frames stay addresses", base);
			continue;
		}
		if (gdb_file_read(file, &fi, &why) < 0) {
			gdb_note(s, "%s: library unloaded before the core, and its file %s is gone: "
				 "its frames stay addresses", base, file);
			continue;
		}
		if (fi.idlen != u->idlen || memcmp(fi.id, u->build_id, u->idlen) != 0) {
			gdb_note(s, "%s: library unloaded before the core: file changed since (%s), "
				 "its frames stay addresses", base, file);
			continue;
		}
		if (strpbrk(file, " \t\n'\"\\")) {   /* add-symbol-file splits its arguments */
			gdb_note(s, "%s: library unloaded before the core: gdb cannot be given its file %s "
				 "(a space or quote in the path), its frames stay addresses", base, file);
			continue;
		}
		snprintf(cmd, sizeof cmd, "add-symbol-file %s -o 0x%llx", file, (unsigned long long)u->bias);
		m = realloc(s->mods, (s->nmods + 1) * sizeof *s->mods);
		if (!m || mi_quote(q, sizeof q, cmd) >= sizeof q) {
			if (m)
				s->mods = m;
			continue;
		}
		s->mods = m;
		/* the library's code is in no memory of the core: gdb's line lookup
		 * (a disassembly) reads it from the file's read-only sections */
		if (!trusted && gdb_exec_ok(s, "-gdb-set trust-readonly-sections on", file, NULL) == 0)
			trusted = 1;
		snprintf(cmd, sizeof cmd, "-interpreter-exec console %s", q);
		if (gdb_exec_ok(s, cmd, file, NULL) < 0) {
			gdb_note(s, "%s: library unloaded before the core: gdb cannot load %s, "
				 "its frames stay addresses", base, file);
			continue;
		}
		m = &s->mods[s->nmods];
		memset(m, 0, sizeof *m);
		m->path = gdb_str(s, u->path);
		m->file = gdb_str(s, file);
		m->start = u->lo;
		m->end = u->hi;
		m->bias = u->bias;
		m->state = GM_OK;
		if (m->path && m->file)
			s->nmods++;
		qsort(s->mods, s->nmods, sizeof *s->mods, gdb_module_cmp);
	}
}

static void gdb_free(struct symbolizer *base)
{
	struct gdb_symbolizer *s = (struct gdb_symbolizer *)base;

	if (!s)
		return;
	mi_client_close(s->mi);
	while (s->chunks) {
		struct gdb_chunk *n = s->chunks->next;

		free(s->chunks);
		s->chunks = n;
	}
	free(s->mods);
	free(s->table.locs);
	free(s->table.frames);
	free(s->notes);
	free(s);
}

static const char *gdb_notes(const struct symbolizer *base)
{
	const struct gdb_symbolizer *s = (const struct gdb_symbolizer *)base;

	return s->notes_len ? s->notes : NULL;
}

/* The name "info symbol" printed: "NAME + OFF in section SEC[ of FILE]", or NULL
 * for "No symbol matches ...". Returns a pointer into text, length in *len. */
static const char *gdb_parse_info_symbol(const char *text, size_t *len)
{
	const char *in, *end;

	if (!text || strncmp(text, "No symbol", 9) == 0)
		return NULL;
	in = strstr(text, " in section ");
	if (!in || in == text)
		return NULL;
	end = in;
	/* strip " + DIGITS" */
	{
		const char *p = end;

		while (p > text && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p < end && p - text > 3 && memcmp(p - 3, " + ", 3) == 0)
			end = p - 3;
	}
	*len = (size_t)(end - text);
	return text;
}

/* Is name a compiler clone ("foo.cold", "foo.constprop.0", "foo.part.1")? */
static int gdb_is_clone(const char *name, size_t len)
{
	const char *dot = memchr(name, '.', len);

	return dot && dot > name && !memchr(name, '(', len);
}

/* Does gdb's debug-info name F need the symbol table's? C++ names with their
 * parameters (below), and Rust's methods of an impl, which gdb names by the
 * impl's DWARF namespace ("ga::{impl#0}::alloc"): the symbol table's demangled
 * name says which trait for which type ("<ga::Counting as
 * core::alloc::global::GlobalAlloc>::alloc"), as the libdw backend names it; a
 * program's GlobalAlloc impl is then known for the allocator. */
static int gdb_needs_symbol(const char *f)
{
	return strchr(f, '(') != NULL || strstr(f, "::{impl#") != NULL;
}

/* Choose the function name like the libdw backend does (the DWARF linkage name
 * demangled, else DW_AT_name). gdb's debug-info name f is DW_AT_name for C; for
 * C++ it is gdb's own spelling, which adds parameters to names that have none
 * (main, extern "C") and drops the return type of template functions, so there
 * the symbol table's demangled name m (that same linkage name) is better, unless
 * m is a compiler clone ("foo.cold", "foo.constprop.0") that f sees through. */
static const char *gdb_pick_name_raw(struct gdb_symbolizer *s, const char *m, size_t mlen, const char *f)
{
	if (f && !gdb_needs_symbol(f))
		return gdb_str(s, f);
	if (m && (!f || !gdb_is_clone(m, mlen)))
		return gdb_str_len(s, m, mlen);
	return gdb_str(s, f);
}

static int gdb_is_hex16(const char *p)
{
	for (int i = 0; i < 16; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

/* A Rust name as gdb's demangler writes it, in the form the libdw backend
 * gives (sym_rust_demangle's, rustc's backtraces'): without the crate
 * disambiguators of v0 names ("alloc[fdfd2bd8633a6659]::raw_vec") and the
 * hash of legacy ones ("std::rt::lang_start::{{closure}}::h2e75b40f6e08f4f6").
 * Other names are returned as they are. */
static const char *gdb_rust_tidy(struct gdb_symbolizer *s, const char *name)
{
	char buf[4096];
	size_t n, o = 0;

	if (!name || (n = strlen(name)) >= sizeof buf)
		return name;
	for (size_t i = 0; i < n;) {
		char prev = o ? buf[o - 1] : '\0';
		int ident = (prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z') ||
			    (prev >= '0' && prev <= '9') || prev == '_';

		if (name[i] == '[' && ident && i + 18 <= n && name[i + 17] == ']' && gdb_is_hex16(name + i + 1)) {
			i += 18;
			continue;
		}
		if (i + 19 == n && !memcmp(name + i, "::h", 3) && gdb_is_hex16(name + i + 3))
			break;
		buf[o++] = name[i++];
	}
	if (o == n)
		return name;
	buf[o] = '\0';
	return gdb_str(s, buf);
}

static const char *gdb_pick_name(struct gdb_symbolizer *s, const char *m, size_t mlen, const char *f)
{
	return gdb_rust_tidy(s, gdb_pick_name_raw(s, m, mlen, f));
}

/* What the source-centric disassembly of one address said. Strings are the
 * symbolizer's. */
struct gdb_answer {
	const char *f;      /* gdb's function name from debug info (or a symbol) */
	const char *file;
	unsigned line;
	int ask_symbol;     /* the symbol table's name is needed too (C++, or no name) */
};

static void gdb_parse_disasm(struct gdb_symbolizer *s, const struct mi_reply *dis,
			     struct gdb_answer *a)
{
	const struct mi_value *insns;
	size_t i;

	memset(a, 0, sizeof *a);
	insns = mi_reply_error(dis) ? NULL : mi_value_get(dis->result.results, "asm_insns");
	for (i = 0; insns && insns->kind == MI_LIST && i < insns->nitems; i++) {
		const struct mi_item *it = &insns->items[i];
		const struct mi_value *li;
		const char *file, *line;

		if (it->name && strcmp(it->name, "src_and_asm_line") == 0) {
			li = mi_value_get(it->value, "line_asm_insn");
			if (!li || li->kind != MI_LIST || li->nitems == 0)
				continue;
			/* The DWARF name when it is absolute; else gdb's full name when
			 * that is absolute (an absolute DW_AT_comp_dir joined); else the
			 * DWARF name as it is: gdb joins relative compilation directories
			 * into names like "./libio/./libio/x.c" that exist nowhere. */
			file = mi_value_str(it->value, "file");
			if (!file || file[0] != '/') {
				const char *full = mi_value_str(it->value, "fullname");

				if (full && full[0] == '/')
					file = full;
			}
			line = mi_value_str(it->value, "line");
			a->line = line ? (unsigned)strtoul(line, NULL, 10) : 0;
			a->file = a->line ? gdb_str(s, file) : NULL;
			a->f = gdb_str(s, mi_value_str(li->items[0].value, "func-name"));
			break;
		}
		if (!it->name && it->value->kind == MI_TUPLE) {
			a->f = gdb_str(s, mi_value_str(it->value, "func-name"));
			break;
		}
	}
	a->ask_symbol = !a->f || gdb_needs_symbol(a->f);
}

/* Fill one loc: a (disassembly) and sym (the reply to "info symbol", or NULL
 * when it was not needed). */
static int gdb_fill_loc(struct gdb_symbolizer *s, struct sym_loc *loc,
			const struct gdb_answer *a, const struct mi_reply *sym)
{
	const char *m = NULL;
	size_t mlen = 0;
	struct sym_frame *fr;

	if (sym && !mi_reply_error(sym))
		m = gdb_parse_info_symbol(sym->console, &mlen);
	if (!m && !a->f && !a->file)
		return 0;
	if (s->table.nframes == s->frames_cap) {
		size_t ncap = s->frames_cap ? s->frames_cap * 2 : 256;
		struct sym_frame *p = realloc(s->table.frames, ncap * sizeof *p);

		if (!p)
			return -1;
		s->table.frames = p;
		s->frames_cap = ncap;
	}
	fr = &s->table.frames[s->table.nframes];
	memset(fr, 0, sizeof *fr);
	fr->function = gdb_pick_name(s, m, mlen, a->f);
	if (a->file && a->line) {
		fr->file = a->file;
		fr->line = a->line;
	} else {
		loc->flags |= SYM_NO_DEBUG;
	}
	loc->first = (uint32_t)s->table.nframes;
	loc->nframes = 1;
	s->table.nframes++;
	return 0;
}

/* Did "info symbol ADDR" name a symbol that starts at ADDR ("NAME in section
 * SEC", no " + OFF")? */
static int gdb_symbol_starts_here(const struct mi_reply *sym)
{
	const char *t = sym->console, *in, *plus;

	if (mi_reply_error(sym) || !t || strncmp(t, "No symbol", 9) == 0)
		return 0;
	in = strstr(t, " in section ");
	plus = strstr(t, " + ");
	return in && in != t && (!plus || plus > in);
}

static void gdb_replies_release(struct mi_reply *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		mi_reply_release(&r[i]);
}

static int gdb_resolve(struct symbolizer *base, const uint64_t *addrs, size_t n,
		       const struct sym_table **out, struct sym_error *err)
{
	struct gdb_symbolizer *s = (struct gdb_symbolizer *)base;
	size_t *ask = NULL, nask = 0, i, b;
	char (*cmdbuf)[96] = NULL;
	const char **cmds = NULL;
	struct mi_reply *replies = NULL, *symr = NULL;
	struct gdb_answer *ans = NULL;
	size_t *symidx = NULL;
	int ret = -1;

	s->table.nlocs = 0;
	s->table.nframes = 0;
	if (n > s->locs_cap) {
		struct sym_loc *p = realloc(s->table.locs, n * sizeof *p);

		if (!p)
			return gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory for %zu addresses", n);
		s->table.locs = p;
		s->locs_cap = n;
	}
	ask = malloc((n ? n : 1) * sizeof *ask);
	cmdbuf = malloc(GDB_BATCH * sizeof *cmdbuf);
	cmds = malloc(GDB_BATCH * sizeof *cmds);
	replies = calloc(GDB_BATCH, sizeof *replies);
	symr = calloc(GDB_BATCH, sizeof *symr);
	ans = calloc(GDB_BATCH, sizeof *ans);
	symidx = calloc(GDB_BATCH, sizeof *symidx);
	if (!ask || !cmdbuf || !cmds || !replies || !symr || !ans || !symidx) {
		gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory for %zu addresses", n);
		goto out;
	}
	/* Module, offset and flags from our own checks; gdb is asked only about
	 * addresses in modules whose file is the one in the image. */
	for (i = 0; i < n; i++) {
		struct sym_loc *loc = &s->table.locs[i];
		uint64_t pc = addrs[i] ? addrs[i] - 1 : 0;
		struct gdb_module *m = gdb_module_find(s, pc);

		memset(loc, 0, sizeof *loc);
		loc->addr = addrs[i];
		loc->modoff = addrs[i];
		if (!m) {
			loc->flags = SYM_NO_MODULE;
			continue;
		}
		/* the file used, as the libdw backend names it (the program as given,
		 * a library under the sysroot); the image's name when none is */
		loc->module = m->state == GM_OK ? m->file : m->path;
		loc->modoff = addrs[i] - m->bias;
		if (m->state == GM_MISMATCH) {
			loc->flags = SYM_BUILDID_MISMATCH;
			continue;
		}
		if (m->state == GM_MISSING) {
			loc->flags = SYM_NO_DEBUG;
			continue;
		}
		ask[nask++] = i;
	}
	s->table.nlocs = n;
	/* Per batch: the disassembly of every address, pipelined; then "info
	 * symbol" only where the name must come from the symbol table (C++). */
	for (b = 0; b < nask; b += GDB_BATCH) {
		size_t k, cnt = nask - b < GDB_BATCH ? nask - b : GDB_BATCH, nsym = 0;
		struct mi_error me;

		for (k = 0; k < cnt; k++) {
			uint64_t pc = addrs[ask[b + k]] - 1;

			snprintf(cmdbuf[k], sizeof cmdbuf[0],
				 "-data-disassemble -s 0x%" PRIx64 " -e 0x%" PRIx64 " -- 4", pc, pc + 1);
			cmds[k] = cmdbuf[k];
		}
		if (mi_client_exec_batch(s->mi, cmds, cnt, s->timeout_ms, replies, &me) < 0) {
			gdb_error(err, SYM_EBACKEND, "gdb symbolizer: %s", me.msg);
			goto out;
		}
		for (k = 0; k < cnt; k++) {
			gdb_parse_disasm(s, &replies[k], &ans[k]);
			if (ans[k].ask_symbol) {
				snprintf(cmdbuf[nsym], sizeof cmdbuf[0],
					 "-interpreter-exec console \"info symbol 0x%" PRIx64 "\"",
					 addrs[ask[b + k]] - 1);
				cmds[nsym] = cmdbuf[nsym];
				symidx[k] = nsym++;
			}
		}
		gdb_replies_release(replies, cnt);
		if (nsym && mi_client_exec_batch(s->mi, cmds, nsym, s->timeout_ms, symr, &me) < 0) {
			gdb_error(err, SYM_EBACKEND, "gdb symbolizer: %s", me.msg);
			goto out;
		}
		for (k = 0; k < cnt; k++) {
			if (gdb_fill_loc(s, &s->table.locs[ask[b + k]], &ans[k],
					 ans[k].ask_symbol ? &symr[symidx[k]] : NULL) < 0) {
				gdb_replies_release(symr, nsym);
				gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
				goto out;
			}
		}
		gdb_replies_release(symr, nsym);
	}
	/* An address that names nothing may not be a return address but the first
	 * instruction of a function "returned" to (a signal frame's __restore_rt,
	 * makecontext's __start_context), the byte before it in no function: the
	 * symbol starting at the address names it, as in the libdw backend. */
	for (b = 0; b < nask; b += GDB_BATCH) {
		size_t k, cnt = nask - b < GDB_BATCH ? nask - b : GDB_BATCH, nsym = 0;
		struct mi_error me;
		struct gdb_answer none = { NULL, NULL, 0, 1 };

		for (k = 0; k < cnt; k++) {
			if (s->table.locs[ask[b + k]].nframes)
				continue;
			snprintf(cmdbuf[nsym], sizeof cmdbuf[0],
				 "-interpreter-exec console \"info symbol 0x%" PRIx64 "\"", addrs[ask[b + k]]);
			cmds[nsym] = cmdbuf[nsym];
			symidx[nsym++] = ask[b + k];
		}
		if (!nsym)
			continue;
		if (mi_client_exec_batch(s->mi, cmds, nsym, s->timeout_ms, symr, &me) < 0) {
			gdb_error(err, SYM_EBACKEND, "gdb symbolizer: %s", me.msg);
			goto out;
		}
		for (k = 0; k < nsym; k++) {
			if (gdb_symbol_starts_here(&symr[k]) &&
			    gdb_fill_loc(s, &s->table.locs[symidx[k]], &none, &symr[k]) < 0) {
				gdb_replies_release(symr, nsym);
				gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
				goto out;
			}
		}
		gdb_replies_release(symr, nsym);
	}
	*out = &s->table;
	ret = 0;
out:
	if (ret < 0)
		s->table.nlocs = s->table.nframes = 0;
	free(ask);
	free(cmdbuf);
	free(cmds);
	free(replies);
	free(symr);
	free(ans);
	free(symidx);
	return ret;
}

static const struct sym_backend_ops gdb_ops = {
	.resolve = gdb_resolve,
	.notes = gdb_notes,
	.free = gdb_free,
};

/* Is the ELF at path for another machine than ours (then gdb-multiarch is needed)? */
static int gdb_foreign_machine(const char *path)
{
	struct gdb_file_info fi;
	const char *why;

	if (gdb_file_read(path, &fi, &why) < 0)
		return 0;
#if defined(__x86_64__)
	return fi.machine != EM_X86_64 && fi.machine != EM_386;
#elif defined(__aarch64__)
	return fi.machine != EM_AARCH64;
#else
	return 0;
#endif
}

struct symbolizer *sym_gdb_open(const struct sym_options *opt, struct sym_error *err)
{
	struct gdb_symbolizer *s = NULL;
	struct cp_image *img = NULL;
	struct cp_error cerr;
	struct mi_settings set;
	struct mi_error me;
	char *dbg = NULL;
	char cmd[8192], q[4200];
	struct stat st;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (!opt || !opt->exe) {
		gdb_error(err, SYM_EARG, "symbolizer: no program given");
		return NULL;
	}
	if (access(opt->exe, R_OK) != 0) {
		gdb_error(err, SYM_EIO, "%s: %s", opt->exe, strerror(errno));
		return NULL;
	}
	if (opt->sysroot && (stat(opt->sysroot, &st) != 0 || !S_ISDIR(st.st_mode))) {
		gdb_error(err, SYM_EIO, "%s: sysroot is not a directory", opt->sysroot);
		return NULL;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
		return NULL;
	}
	s->base.ops = &gdb_ops;
	s->timeout_ms = opt->timeout_ms ? opt->timeout_ms : GDB_DEFAULT_TIMEOUT;
	if (opt->core) {
		img = cp_image_open_core(opt->core, &cerr);
		if (!img) {
			gdb_error(err, cerr.code == CP_EIO ? SYM_EIO : cerr.code == CP_ENOMEM ?
				  SYM_ENOMEM : SYM_EFORMAT, "%s", cerr.msg);
			goto fail;
		}
		if (gdb_modules_from_core(s, img, opt, err) < 0)
			goto fail;
		if (s->nmods == 0) {
			/* no load map (qemu-user's core of a static program): the
			 * program at its own addresses, as for a raw dump */
			free(s->mods);
			s->mods = NULL;
			if (gdb_modules_from_elf(s, opt, err) < 0)
				goto fail;
		}
	} else if (gdb_modules_from_elf(s, opt, err) < 0) {
		goto fail;
	}

	/* gdb's own default first, then the user's directories */
	{
		size_t len = 32;
		const char *const *d;

		for (d = opt->debug_dirs; d && *d; d++)
			len += strlen(*d) + 1;
		dbg = malloc(len);
		if (!dbg) {
			gdb_error(err, SYM_ENOMEM, "symbolizer: out of memory");
			goto fail;
		}
		strcpy(dbg, "/usr/lib/debug");
		for (d = opt->debug_dirs; d && *d; d++) {
			strcat(dbg, ":");
			strcat(dbg, *d);
		}
	}
	memset(&set, 0, sizeof set);
	set.gdb = opt->gdb;
	if (!set.gdb && gdb_foreign_machine(opt->exe))   /* a raw dump or a core */
		set.gdb = "gdb-multiarch";
	set.sysroot = opt->sysroot;
	set.debug_file_directory = dbg;
	s->mi = mi_client_start(&set, &me);
	if (!s->mi) {
		gdb_error(err, SYM_EBACKEND, "gdb symbolizer: %s", me.msg);
		goto fail;
	}
	if (mi_quote(q, sizeof q, opt->exe) >= sizeof q) {
		gdb_error(err, SYM_EARG, "%s: path too long", opt->exe);
		goto fail;
	}
	snprintf(cmd, sizeof cmd, "-file-exec-and-symbols %s", q);
	if (gdb_exec_ok(s, cmd, opt->exe, err) < 0)
		goto fail;
	if (opt->core) {
		/* -target-select passes its quotes on to "target core"; core-file takes
		 * the rest of its line as the name: send it as one MI c-string. */
		snprintf(cmd, sizeof cmd, "core-file %s", opt->core);
		if (mi_quote(q, sizeof q, cmd) >= sizeof q) {
			gdb_error(err, SYM_EARG, "%s: path too long", opt->core);
			goto fail;
		}
		snprintf(cmd, sizeof cmd, "-interpreter-exec console %s", q);
		if (gdb_exec_ok(s, cmd, opt->core, err) < 0)
			goto fail;
		gdb_check_loaded(s, img);
		gdb_add_unloaded(s, opt);
	}
	gdb_debuglink_load(s, opt);
	free(dbg);
	cp_image_free(img);
	return &s->base;
fail:
	free(dbg);
	cp_image_free(img);
	gdb_free(&s->base);
	return NULL;
}
