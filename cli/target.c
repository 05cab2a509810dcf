/* target.c - word size, byte order and machine of a program or firmware ELF, for
 * reading a raw dump that carries none of them itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <inttypes.h>

#include "cli.h"
#include "heapann_block.h"

static int fail(struct cp_error *err, int code, const char *path, const char *what)
{
	err->code = code;
	snprintf(err->msg, sizeof(err->msg), "%s: %s", path, what);
	return -1;
}

static int ro_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Sort t->ro by start and merge the runs that overlap or touch. */
static void ro_merge(struct cli_target *t)
{
	unsigned n = 0;

	qsort(t->ro, t->nro, 2 * sizeof(t->ro[0]), ro_cmp);
	for (unsigned k = 0; k < t->nro; k++) {
		if (n && t->ro[2 * k] <= t->ro[2 * n - 1]) {
			if (t->ro[2 * k + 1] > t->ro[2 * n - 1])
				t->ro[2 * n - 1] = t->ro[2 * k + 1];
			continue;
		}
		t->ro[2 * n] = t->ro[2 * k];
		t->ro[2 * n + 1] = t->ro[2 * k + 1];
		n++;
	}
	t->nro = n;
}

/* Add [lo, hi) to t->ro, merging the list when it is full; counted in
 * t->ro_dropped when merging leaves no room. */
static void ro_add(struct cli_target *t, uint64_t lo, uint64_t hi)
{
	if (t->nro == CLI_MAX_RO)
		ro_merge(t);
	if (t->nro == CLI_MAX_RO) {
		t->ro_dropped++;
		return;
	}
	t->ro[2 * t->nro] = lo;
	t->ro[2 * t->nro + 1] = hi;
	t->nro++;
}

/* Whether the bytes of [addr, addr + len) that img holds equal file's bytes at
 * off, off + len (bytes img does not hold are not compared). */
static int ro_same(const struct cp_image *img, uint64_t addr, uint64_t len,
		   const unsigned char *file)
{
	if (len > UINT64_MAX - addr)
		return 0;   /* past the address space: no such bytes, scanned */
	for (size_t k = 0; k < img->nsegs; k++) {
		const struct cp_segment *g = &img->segs[k];
		uint64_t lo = addr > g->vaddr ? addr : g->vaddr;
		uint64_t hi = addr + len < g->vaddr + g->avail ? addr + len : g->vaddr + g->avail;

		if (lo < hi && memcmp(img->map + g->offset + (lo - g->vaddr), file + (lo - addr),
				      hi - lo))
			return 0;
	}
	return 1;
}

int cli_target_ro_verify(const char *path, struct cli_target *t, const struct cp_image *img,
			 char *first, size_t cap, struct cp_error *err)
{
	struct stat sb;
	Elf *e = NULL;
	size_t shstrndx = 0, fsize = 0;
	const unsigned char *raw;
	int fd, ndiff = 0;

	if (cap)
		first[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fail(err, CP_EIO, path, strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return fail(err, CP_EIO, path, "not a regular file, not an ELF file");
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	raw = e ? (const unsigned char *)elf_rawfile(e, &fsize) : NULL;
	if (!raw) {
		if (e)
			elf_end(e);
		close(fd);
		return fail(err, CP_EFORMAT, path, "not an ELF file");
	}
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		shstrndx = 0;   /* a damaged index (SHN_XINDEX, no sections): names read "?" */
	t->nro = 0;
	t->ro_dropped = 0;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & SHF_WRITE) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		/* a non-NOBITS section's bytes are at sh_offset in the file */
		if (sh.sh_offset <= fsize && sh.sh_size <= fsize - sh.sh_offset &&
		    ro_same(img, sh.sh_addr, sh.sh_size, raw + sh.sh_offset)) {
			ro_add(t, sh.sh_addr, sh.sh_addr + sh.sh_size);
			continue;
		}
		if (!ndiff++ && cap) {
			const char *name = elf_strptr(e, shstrndx, sh.sh_name);

			snprintf(first, cap, "%s at 0x%llx", name && *name ? name : "?",
				 (unsigned long long)sh.sh_addr);
		}
	}
	ro_merge(t);
	elf_end(e);
	close(fd);
	return ndiff;
}

int cli_target_read(const char *path, struct cli_target *t, struct cp_error *err)
{
	struct stat sb;
	Elf *e = NULL;
	GElf_Ehdr eh;
	int fd, rc = -1;

	/* O_NONBLOCK: a FIFO named as the ELF is refused, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fail(err, CP_EIO, path, strerror(errno));
	if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fail(err, CP_EIO, path, "is a directory, not an ELF file");
		goto out;
	}
	if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		fail(err, CP_EIO, path, "not a regular file, not an ELF file");
		goto out;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		fail(err, CP_EFORMAT, path, "not an ELF file");
		goto out;
	}
	if (eh.e_type == ET_CORE) {
		fail(err, CP_EFORMAT, path, "is a core file; --elf wants the program's ELF");
		goto out;
	}
	{
		uint64_t need;
		char what[96];

		if (cp_elf_file_cut(fd, (uint64_t)sb.st_size, &need)) {
			snprintf(what, sizeof(what), "truncated ELF file: %llu bytes, its headers describe %llu",
				 (unsigned long long)sb.st_size, (unsigned long long)need);
			fail(err, CP_EFORMAT, path, what);
			goto out;
		}
	}
	t->wsize = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	t->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	t->machine = eh.e_machine;
	t->type = eh.e_type;
	t->entry = eh.e_entry;
	t->ntext = 0;
	{
		size_t nph = 0;

		elf_getphdrnum(e, &nph);
		for (size_t i = 0; i < nph && t->ntext < CLI_MAX_TEXT; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
				continue;
			t->text[t->ntext].start = ph.p_vaddr;
			t->text[t->ntext].end = ph.p_vaddr + ph.p_memsz;
			t->ntext++;
		}
	}
	t->nro = 0;
	t->ro_dropped = 0;
	{
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
			    (sh.sh_flags & SHF_WRITE) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
				continue;
			ro_add(t, sh.sh_addr, sh.sh_addr + sh.sh_size);
		}
		ro_merge(t);
	}
	rc = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* Count aligned words of the dump equal to one of the start magics of width w in
 * byte order be. */
static uint64_t count_magics(const struct cp_image *img, unsigned w, int be)
{
	uint64_t n = 0, live = heapann_start_live(w), freed = heapann_start_freed(w);

	for (size_t s = 0; s < img->nsegs; s++) {
		const unsigned char *p = img->map + img->segs[s].offset;
		uint64_t len = img->segs[s].avail;

		for (uint64_t off = 0; off + w <= len; off += w) {
			uint64_t v = 0;

			for (unsigned k = 0; k < w; k++)
				v |= (uint64_t)p[off + k] << (be ? 8 * (w - 1 - k) : 8 * k);
			n += v == live || v == freed;
		}
	}
	return n;
}

int cli_raw_diagnose(const struct cp_image *img, const struct cp_scan *scan,
		     const struct cli_target *t, const char *elf_path, char *msg, size_t cap)
{
	const char *path = img->path;
	uint64_t n, outside = 0;

	msg[0] = '\0';
	/* freed headers carry no address-tied check word: they pass at any base,
	 * so they say nothing about it */
	if (scan->nlive == 0 && scan->ndamaged) {
		snprintf(msg, cap, "%s: no valid block found: %zu headers fail their check word, "
			 "which ties each header to its address: is --base 0x%" PRIx64 " the "
			 "address of the dump's first byte?", path, scan->ndamaged, img->segs[0].vaddr);
		return -1;
	}
	if (scan->nblocks == 0) {
		if ((n = count_magics(img, img->wsize, !img->big_endian)) > 0) {
			snprintf(msg, cap, "%s: no valid block found, but %" PRIu64 " headers in the other "
				 "byte order: try --endian %s", path, n, img->big_endian ? "little" : "big");
			return -1;
		}
		for (int be = 0; be < 2; be++)
			if ((n = count_magics(img, 12 - img->wsize, be)) > 0) {
				snprintf(msg, cap, "%s: no valid block found, but %" PRIu64 " headers of "
					 "%u-byte words: try --ptr-size %u%s", path, n, 12 - img->wsize,
					 12 - img->wsize, be != img->big_endian ?
					 (be ? " --endian big" : " --endian little") : "");
				return -1;
			}
		snprintf(msg, cap, "%s: no valid block found: is it memory of a program linked with "
			 "libheapann (its heap), and %s its ELF?", path, elf_path);
		return -1;
	}
	/* Blocks are there; do their return addresses fall in the ELF's code? */
	for (size_t i = 0; i < scan->naddrs; i++) {
		unsigned k;

		for (k = 0; k < t->ntext; k++)
			if (scan->addrs[i] >= t->text[k].start && scan->addrs[i] < t->text[k].end)
				break;
		outside += k == t->ntext;
	}
	if (t->ntext && scan->naddrs && outside == scan->naddrs) {
		snprintf(msg, cap, "%s: none of the %zu return addresses falls in the code of %s: "
			 "is --elf the program that made this dump?", path, scan->naddrs, elf_path);
		return -1;
	}
	if (outside)
		snprintf(msg, cap, "%s: %" PRIu64 " of %zu return addresses fall outside the code "
			 "of %s (shared libraries, or another build of it)", path, outside,
			 scan->naddrs, elf_path);
	return 0;
}
