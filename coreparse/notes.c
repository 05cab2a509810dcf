/* notes.c - core notes (NT_FILE, NT_PRSTATUS, NT_PRPSINFO, NT_AUXV), module
 * build-ids read from the core's memory, and the check that a core belongs to a
 * given program. Note payloads are decoded here by word size and byte order; every
 * length read from a note is bounded by the note before it is used.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_priv.h"
#include "heapann_note.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* One note of a PT_NOTE segment; name and desc point into the segment. */
struct note {
	uint32_t type;
	const char *name;      /* not NUL-terminated: namesz bytes */
	uint32_t namesz;
	const unsigned char *desc;
	uint32_t descsz;
};

/* Step through notes: returns 1 and fills *n for the note at *off, advancing *off;
 * 0 at the end or on a malformed note (the rest is ignored). */
static int note_next(const unsigned char *p, size_t len, int big, size_t *off, struct note *n)
{
	size_t o = *off, namepad, descpad;

	if (o > len || len - o < 12)
		return 0;
	n->namesz = cp_decode32(p + o, big);
	n->descsz = cp_decode32(p + o + 4, big);
	n->type = cp_decode32(p + o + 8, big);
	o += 12;
	namepad = ((size_t)n->namesz + 3) & ~(size_t)3;
	descpad = ((size_t)n->descsz + 3) & ~(size_t)3;
	if (namepad > len - o)
		return 0;
	n->name = (const char *)p + o;
	o += namepad;
	if (n->descsz > len - o)
		return 0;
	n->desc = p + o;
	o += descpad > len - o ? len - o : descpad;
	*off = o;
	return 1;
}

static int note_named(const struct note *n, const char *name)
{
	size_t l = strlen(name);

	/* namesz counts the NUL; tolerate a missing one */
	return (n->namesz == l + 1 || n->namesz == l) && memcmp(n->name, name, l) == 0;
}

/* NT_FILE: count, page size, count (start, end, pgoff) triples, then the names. */
static int parse_nt_file(struct cp_image *img, const struct note *n, struct cp_error *err)
{
	unsigned w = img->wsize;
	int big = img->big_endian;
	uint64_t count, page, i;
	const unsigned char *names, *end = n->desc + n->descsz;
	struct cp_mapping *files;

	if (img->files || n->descsz < 2 * w)
		return 0;
	count = cp_decode(n->desc, w, big);
	page = cp_decode(n->desc + w, w, big);
	if (count > (n->descsz - 2 * w) / (3 * w))
		return 0;
	names = n->desc + 2 * w + count * 3 * w;
	files = calloc(count ? count : 1, sizeof(*files));
	if (!files)
		return cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
	img->files = files;
	for (i = 0; i < count; i++) {
		const unsigned char *t = n->desc + 2 * w + i * 3 * w;
		const unsigned char *nul;
		struct cp_mapping *m = &files[img->nfiles];

		if (names >= end)
			break;
		nul = memchr(names, 0, (size_t)(end - names));
		if (!nul)
			nul = end;
		m->start = cp_decode(t, w, big);
		m->end = cp_decode(t + w, w, big);
		m->file_offset = cp_decode(t + 2 * w, w, big) * page;
		m->path = strndup((const char *)names, (size_t)(nul - names));
		if (!m->path)
			return cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
		img->nfiles++;
		names = nul + 1;
	}
	return 0;
}

/* Where the stack pointer and program counter are in pr_reg, per machine. */
static void thread_regs_layout(uint16_t machine, unsigned w, unsigned *nregs, int *sp, int *pc)
{
	*sp = *pc = -1;
	switch (machine) {
	case EM_X86_64:
		*nregs = 27; *sp = 19; *pc = 16; break;   /* user_regs_struct: rsp, rip */
	case EM_386:
		*nregs = 17; *sp = 15; *pc = 12; break;   /* esp (uesp), eip */
	case EM_ARM:
		*nregs = 18; *sp = 13; *pc = 15; break;   /* r13, r15 */
	case EM_AARCH64:
		*nregs = 34; *sp = 31; *pc = 32; break;   /* x0..x30, sp, pc, pstate */
	case EM_MIPS:
		if (w == 4) {   /* o32: six pad words, then r0..r31, lo, hi, epc */
			*nregs = 45; *sp = 6 + 29; *pc = 40;
		} else {        /* n64: r0..r31, lo, hi, epc */
			*nregs = 45; *sp = 29; *pc = 34;
		}
		break;
	default:
		*nregs = 0;
	}
}

/* NT_PRSTATUS: struct elf_prstatus. Offsets: cursig at 12 in both classes; pid at
 * 32 (ELF64) or 24 (ELF32); pr_reg at 112 (ELF64) or 72 (ELF32). */
static int parse_prstatus(struct cp_image *img, const struct note *n, struct cp_error *err)
{
	unsigned w = img->wsize, nregs, i;
	int big = img->big_endian, sp, pc;
	size_t regoff = w == 8 ? 112 : 72, pidoff = w == 8 ? 32 : 24;
	struct cp_thread *t;

	if (n->descsz < regoff)
		return 0;
	/* capacity doubles at each power of two: a core with many notes (or a damaged
	 * one repeating a note) costs linear time, not one copy of the array per note */
	if ((img->nthreads & (img->nthreads - 1)) == 0) {
		t = realloc(img->threads, (img->nthreads ? 2 * img->nthreads : 1) * sizeof(*t));
		if (!t)
			return cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
		img->threads = t;
	}
	t = &img->threads[img->nthreads++];
	memset(t, 0, sizeof(*t));
	t->signo = cp_decode16(n->desc + 12, big);
	t->tid = (int32_t)cp_decode32(n->desc + pidoff, big);
	thread_regs_layout(img->machine, w, &nregs, &sp, &pc);
	if (nregs == 0 || regoff + (size_t)nregs * w > n->descsz) {
		/* unknown machine: whatever fits before pr_fpvalid */
		size_t room = n->descsz - regoff;

		nregs = (unsigned)(room >= w ? (room - w) / w : 0);
		sp = pc = -1;
	}
	if (nregs > 64)
		nregs = 64;
	t->nregs = nregs;
	for (i = 0; i < nregs; i++)
		t->regs[i] = cp_decode(n->desc + regoff + (size_t)i * w, w, big);
	if (sp >= 0 && (unsigned)sp < nregs)
		t->sp = t->regs[sp];
	if (pc >= 0 && (unsigned)pc < nregs)
		t->pc = t->regs[pc];
	return 0;
}

/* NT_PRPSINFO: pr_fname[16] and pr_psargs[80] are the last 96 bytes in every
 * layout (ELF64 136 bytes: fname at 40; ELF32 124 or 128 bytes: at 28 or 32,
 * depending on the width of the uid fields), so they are found from the end. */
static void parse_prpsinfo(struct cp_image *img, const struct note *n)
{
	size_t i;
	char *a = img->prpsinfo_args;

	if (n->descsz < 96 + 12)
		return;
	memcpy(img->prpsinfo_fname, n->desc + n->descsz - 96, 16);
	img->prpsinfo_fname[16] = 0;
	memcpy(a, n->desc + n->descsz - 80, 80);
	a[80] = 0;
	/* the kernel turns argv's NULs into spaces and may leave a trailing one */
	for (i = strlen(a); i > 0 && a[i - 1] == ' '; i--)
		a[i - 1] = 0;
}

static int parse_auxv(struct cp_image *img, const struct note *n, struct cp_error *err)
{
	unsigned w = img->wsize;
	size_t i, count = n->descsz / (2 * w);

	if (img->auxv || count == 0)
		return 0;
	img->auxv = calloc(count * 2, sizeof(uint64_t));
	if (!img->auxv)
		return cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
	for (i = 0; i < count; i++) {
		img->auxv[2 * i] = cp_decode(n->desc + 2 * i * w, w, img->big_endian);
		img->auxv[2 * i + 1] = cp_decode(n->desc + (2 * i + 1) * w, w, img->big_endian);
		img->nauxv = i + 1;
		if (img->auxv[2 * i] == AT_NULL)
			break;
	}
	return 0;
}

/* HEAPANN_NT_STACKS: (tid, address in its stack) word pairs; the addresses are
 * kept (a core with several such notes, which libheapann never writes, keeps
 * its first). */
static int parse_stacks(struct cp_image *img, const struct note *n, struct cp_error *err)
{
	unsigned w = img->wsize;
	size_t i, count = n->descsz / (2 * w);

	if (img->stack_hints || count == 0)
		return 0;
	img->stack_hints = calloc(count, sizeof(uint64_t));
	if (!img->stack_hints)
		return cp_error_set(err, CP_ENOMEM, img->path, "out of memory");
	for (i = 0; i < count; i++)
		img->stack_hints[i] = cp_decode(n->desc + (2 * i + 1) * w, w, img->big_endian);
	img->nstack_hints = count;
	return 0;
}

int cp_notes_parse(struct cp_image *img, const unsigned char *p, size_t len, struct cp_error *err)
{
	size_t off = 0;
	struct note n;

	while (note_next(p, len, img->big_endian, &off, &n)) {
		int rc = 0;

		if (n.type == HEAPANN_NT_STACKS && note_named(&n, HEAPANN_NOTE_NAME)) {
			if (parse_stacks(img, &n, err) < 0)
				return -1;
			continue;
		}
		if (!note_named(&n, "CORE"))
			continue;
		switch (n.type) {
		case NT_FILE: rc = parse_nt_file(img, &n, err); break;
		case NT_PRSTATUS: rc = parse_prstatus(img, &n, err); break;
		case NT_PRPSINFO: parse_prpsinfo(img, &n); break;
		case NT_AUXV: rc = parse_auxv(img, &n, err); break;
		default: break;
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

int cp_notes_buildid(const unsigned char *p, size_t len, int big, unsigned char *out,
		     size_t cap, size_t *outlen)
{
	size_t off = 0;
	struct note n;

	while (note_next(p, len, big, &off, &n)) {
		if (n.type == NT_GNU_BUILD_ID && note_named(&n, "GNU") && n.descsz > 0) {
			memcpy(out, n.desc, n.descsz < cap ? n.descsz : cap);
			*outlen = n.descsz;
			return 0;
		}
	}
	return -1;
}

/* An ELF header as read from memory or a file: just what the build-id search needs. */
struct elf_view {
	int big;
	unsigned w;
	uint64_t phoff;
	unsigned phentsize, phnum;
};

static int elf_view_parse(const unsigned char *e, size_t len, struct elf_view *v)
{
	if (len < 52 || memcmp(e, ELFMAG, SELFMAG) != 0)
		return -1;
	if (e[EI_CLASS] != ELFCLASS32 && e[EI_CLASS] != ELFCLASS64)
		return -1;
	v->w = e[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	v->big = e[EI_DATA] == ELFDATA2MSB;
	if (v->w == 8) {
		if (len < 64)
			return -1;
		v->phoff = cp_decode(e + 32, 8, v->big);
		v->phentsize = cp_decode16(e + 54, v->big);
		v->phnum = cp_decode16(e + 56, v->big);
	} else {
		v->phoff = cp_decode32(e + 28, v->big);
		v->phentsize = cp_decode16(e + 42, v->big);
		v->phnum = cp_decode16(e + 44, v->big);
	}
	if (v->phentsize < (v->w == 8 ? 56u : 32u))
		return -1;
	return 0;
}

/* p_type, p_offset, p_filesz of one program header. */
static void elf_view_phdr(const struct elf_view *v, const unsigned char *ph, uint32_t *type,
			  uint64_t *offset, uint64_t *filesz)
{
	*type = cp_decode32(ph, v->big);
	if (v->w == 8) {
		*offset = cp_decode(ph + 8, 8, v->big);
		*filesz = cp_decode(ph + 32, 8, v->big);
	} else {
		*offset = cp_decode32(ph + 4, v->big);
		*filesz = cp_decode32(ph + 16, v->big);
	}
}

int cp_image_module_buildid(const struct cp_image *img, const struct cp_mapping *m,
			    unsigned char *out, size_t cap, size_t *len)
{
	const struct cp_mapping *first = NULL;
	const unsigned char *e, *phs;
	struct elf_view v;
	uint64_t size;
	size_t i;

	if (!img || !m || !m->path)
		return -1;
	/* the module's mapping of file offset 0 holds its ELF and program headers */
	for (i = 0; i < img->nfiles; i++) {
		if (img->files[i].file_offset == 0 && strcmp(img->files[i].path, m->path) == 0) {
			first = &img->files[i];
			break;
		}
	}
	if (!first || first->end <= first->start)
		return -1;
	size = first->end - first->start;
	/* an ELF32 header is 52 bytes, an ELF64 one 64 */
	e = cp_image_ptr(img, first->start, 64);
	if (e ? elf_view_parse(e, 64, &v) < 0 :
	    (!(e = cp_image_ptr(img, first->start, 52)) || elf_view_parse(e, 52, &v) < 0))
		return -1;
	if (v.phoff >= size || (uint64_t)v.phnum * v.phentsize > size - v.phoff)
		return -1;
	phs = cp_image_ptr(img, first->start + v.phoff, (uint64_t)v.phnum * v.phentsize);
	if (!phs)
		return -1;
	for (i = 0; i < v.phnum; i++) {
		uint32_t type;
		uint64_t off, fsz;
		const unsigned char *np;

		elf_view_phdr(&v, phs + i * v.phentsize, &type, &off, &fsz);
		if (type != PT_NOTE || off >= size || fsz > size - off || fsz > 65536)
			continue;
		/* file offset off lies in the first mapping, at start + off */
		np = cp_image_ptr(img, first->start + off, fsz);
		if (np && cp_notes_buildid(np, (size_t)fsz, v.big, out, cap, len) == 0)
			return 0;
	}
	return -1;
}

int cp_image_auxv(const struct cp_image *img, uint64_t type, uint64_t *val)
{
	for (size_t i = 0; i < img->nauxv; i++)
		if (img->auxv[2 * i] == type) {
			*val = img->auxv[2 * i + 1];
			return 0;
		}
	return -1;
}

/* The build-id of an ELF file on disk, from its PT_NOTE segments. */
static int file_buildid(const char *path, unsigned char *out, size_t cap, size_t *len)
{
	Elf *elf = NULL;
	size_t phnum = 0, i;
	int fd, rc = -1;
	unsigned char *buf = NULL;
	GElf_Ehdr eh;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &phnum) != 0)
		goto out;
	for (i = 0; i < phnum && rc < 0; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz > 65536)
			continue;
		free(buf);
		buf = malloc(ph.p_filesz ? ph.p_filesz : 1);
		if (!buf)
			goto out;
		if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			continue;
		rc = cp_notes_buildid(buf, ph.p_filesz, eh.e_ident[EI_DATA] == ELFDATA2MSB, out, cap, len);
	}
out:
	free(buf);
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

const struct cp_mapping *cp_image_main_module(const struct cp_image *img)
{
	size_t i;
	const struct cp_mapping *m;

	for (i = 0; i < img->nauxv; i++) {
		if (img->auxv[2 * i] == AT_ENTRY || img->auxv[2 * i] == AT_PHDR) {
			m = cp_image_mapping(img, img->auxv[2 * i + 1]);
			if (m)
				return m;
		}
	}
	return img->nfiles ? &img->files[0] : NULL;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The file names of a (core's) mapping path and a path on disk are the same; the
 * kernel appends " (deleted)" to the path of a file removed while mapped. */
static int same_base(const char *mapped, const char *path)
{
	const char *a = base_name(mapped), *b = base_name(path);
	size_t la = strlen(a), lb = strlen(b), ld = strlen(" (deleted)");

	if (la > ld && strcmp(a + la - ld, " (deleted)") == 0)
		la -= ld;
	return la == lb && memcmp(a, b, la) == 0;
}

static void hex_id(char *dst, size_t cap, const unsigned char *id, size_t n)
{
	size_t i;

	dst[0] = 0;
	for (i = 0; i < n && 2 * i + 2 < cap; i++)
		snprintf(dst + 2 * i, 3, "%02x", id[i]);
}

int cp_elf_file_cut(int fd, uint64_t size, uint64_t *need)
{
	Elf *e;
	GElf_Ehdr eh;
	size_t nph = 0;
	uint64_t end = 0;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh)) {
		if (eh.e_shoff && eh.e_shnum)
			end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
		if (elf_getphdrnum(e, &nph) != 0)
			nph = 0;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_offset + ph.p_filesz > end && ph.p_offset + ph.p_filesz >= ph.p_offset)
				end = ph.p_offset + ph.p_filesz;
		}
	}
	if (e)
		elf_end(e);
	*need = end;
	return end > size;
}

int cp_image_check_exe(const struct cp_image *img, const char *exe_path, struct cp_error *err)
{
	const struct cp_mapping *mm;
	unsigned char cid[64], eid[64];
	size_t clen = 0, elen = 0;
	int fd;
	char ch[130], eh[130];
	unsigned char magic[SELFMAG];
	struct stat st;

	/* O_NONBLOCK: a FIFO named as the program is refused, not waited on */
	fd = open(exe_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return cp_error_set(err, CP_EIO, exe_path, "%s", strerror(errno));
	if (fstat(fd, &st) != 0)
		st.st_mode = 0;   /* neither regular nor a directory: "not a regular file" */
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return cp_error_set(err, CP_EIO, exe_path, S_ISDIR(st.st_mode) ? "is a directory" :
				    "not a regular file");
	}
	if (S_ISREG(st.st_mode) && st.st_size == 0) {
		close(fd);
		return cp_error_set(err, CP_EFORMAT, exe_path, "empty file, not an ELF file");
	}
	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, ELFMAG, SELFMAG) != 0) {
		close(fd);
		/* a libtool wrapper, or a script that execs the program: name the
		 * program the core is of, when it says */
		mm = img->kind == CP_KIND_CORE ? cp_image_main_module(img) : NULL;
		if (magic[0] == '#' && magic[1] == '!' && mm)
			return cp_error_set(err, CP_EFORMAT, exe_path, "a script, not an ELF file (a "
					    "wrapper, such as libtool's?): give the program it runs; "
					    "the core is of %s", mm->path);
		if (magic[0] == '#' && magic[1] == '!')
			return cp_error_set(err, CP_EFORMAT, exe_path, "a script, not an ELF file (a "
					    "wrapper, such as libtool's?): give the program it runs");
		return cp_error_set(err, CP_EFORMAT, exe_path, "not an ELF file");
	}
	{
		/* a program cut short (a copy interrupted) has its symbols and debug
		 * info past the end: every frame would read "no debug info" */
		uint64_t need;

		if (cp_elf_file_cut(fd, (uint64_t)st.st_size, &need)) {
			close(fd);
			return cp_error_set(err, CP_EFORMAT, exe_path,
					    "truncated ELF file: %llu bytes, its headers describe %llu",
					    (unsigned long long)st.st_size, (unsigned long long)need);
		}
	}
	close(fd);
	if (img->kind != CP_KIND_CORE)
		return 0;
	mm = cp_image_main_module(img);
	if (mm && cp_image_module_buildid(img, mm, cid, sizeof(cid), &clen) == 0 &&
	    file_buildid(exe_path, eid, sizeof(eid), &elen) == 0) {
		if (clen == elen && memcmp(cid, eid, clen < sizeof(cid) ? clen : sizeof(cid)) == 0)
			return 0;
		hex_id(ch, sizeof(ch), cid, clen < sizeof(cid) ? clen : sizeof(cid));
		hex_id(eh, sizeof(eh), eid, elen < sizeof(eid) ? elen : sizeof(eid));
		if (same_base(mm->path, exe_path))
			return cp_error_set(err, CP_EMISMATCH, img->path,
					    "core of %s with build-id %s, but %s has build-id %s (rebuilt since the core was made?)",
					    mm->path, ch, exe_path, eh);
		return cp_error_set(err, CP_EMISMATCH, img->path,
				    "core of another program: %s (build-id %s), not %s (build-id %s)",
				    mm->path, ch, exe_path, eh);
	}
	if (mm) {
		char *real;
		int same;

		if (same_base(mm->path, exe_path))
			return 0;
		/* a symlink to the program (bin/tool -> ../prog): the core names the
		 * file the kernel resolved; without build-ids only names tell, so
		 * the link's target is compared too */
		real = realpath(exe_path, NULL);
		same = real && same_base(mm->path, real);
		free(real);
		if (same)
			return 0;
		return cp_error_set(err, CP_EMISMATCH, img->path, "core of another program: %s, not %s",
				    mm->path, exe_path);
	}
	if (img->prpsinfo_fname[0]) {
		/* pr_fname holds the first 15 bytes of the program's name */
		if (strncmp(img->prpsinfo_fname, base_name(exe_path), 15) == 0)
			return 0;
		return cp_error_set(err, CP_EMISMATCH, img->path, "core of another program: %s, not %s",
				    img->prpsinfo_fname, exe_path);
	}
	return 0;
}
