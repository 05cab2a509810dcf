/* image.c - open an ELF core or a raw dump: libelf reads the ELF and program
 * headers (it translates their byte order), the file itself is mmap'd read-only
 * and never copied. Every segment is bounded by what the file really holds, so a
 * core truncated by a size limit opens fine and says what is missing. A compressed
 * file is decompressed once (zcore.c) and its temporary file is mapped instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_priv.h"

int cp_error_set(struct cp_error *err, int code, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return -1;
	err->code = code;
	n = snprintf(err->msg, sizeof(err->msg), "%s: ", path ? path : "(null)");
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct cp_segment *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int map_cmp(const void *a, const void *b)
{
	const struct cp_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Open path read-only and map it whole. Fills img->path, map, map_size. A regular,
 * non-empty file is required. A compressed file (by its magic) is decompressed
 * first and its temporary file is mapped instead (img->compression, data_fd);
 * want_elf makes a compressed non-ELF fail early, as open_core would fail it.
 * Returns 0 and an open descriptor of the mapped bytes in *fdp (the caller
 * closes it), or -1. */
static int image_map_file(struct cp_image *img, const char *path, int want_elf, int *fdp,
			  struct cp_error *err)
{
	struct stat st;
	unsigned char magic[6];
	uint64_t size;
	ssize_t n;
	int fd;
	void *m;

	*fdp = -1;
	/* O_NONBLOCK: a FIFO given as the image must get its error below, not
	 * wait forever for a writer; a regular file ignores the flag */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return cp_error_set(err, CP_EIO, path, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		cp_error_set(err, CP_EIO, path, "%s", strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		cp_error_set(err, CP_EIO, path, "is a directory");
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		cp_error_set(err, CP_EIO, path, "not a regular file");
		goto fail;
	}
	if (st.st_size == 0) {
		cp_error_set(err, CP_EFORMAT, path, "empty file");
		goto fail;
	}
	img->file_size = (uint64_t)st.st_size;
	size = (uint64_t)st.st_size;
	n = pread(fd, magic, sizeof(magic), 0);
	if (n < 0) {
		cp_error_set(err, CP_EIO, path, "%s", strerror(errno));
		goto fail;
	}
	img->compression = cp_compression_detect(magic, (size_t)n);
	if (img->compression != CP_COMP_NONE) {
		int tfd;

		if (cp_zcore_inflate(fd, path, img->compression, want_elf, &tfd, &size, err) < 0)
			goto fail;
		close(fd);
		img->data_fd = tfd;
		snprintf(img->data_path, sizeof(img->data_path), "/proc/%ld/fd/%d", (long)getpid(), tfd);
		fd = fcntl(tfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return cp_error_set(err, CP_EIO, path, "%s", strerror(errno));
		if (size == 0) {
			cp_error_set(err, CP_EFORMAT, path, "empty file once decompressed (%s)",
				     cp_compression_name(img->compression));
			goto fail;
		}
	}
	if (size > SIZE_MAX) {
		cp_error_set(err, CP_EFORMAT, path, "file too large to map");
		goto fail;
	}
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		cp_error_set(err, errno == ENOMEM ? CP_ENOMEM : CP_EIO, path, "cannot map: %s",
			     strerror(errno));
		goto fail;
	}
	img->map = m;
	img->map_size = (size_t)size;
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

static struct cp_image *image_new(const char *path, struct cp_error *err)
{
	struct cp_image *img = calloc(1, sizeof(*img));

	if (img) {
		img->path = strdup(path);
		img->data_fd = -1;
	}
	if (!img || !img->path) {
		free(img);
		cp_error_set(err, CP_ENOMEM, path, "out of memory");
		return NULL;
	}
	return img;
}

/* Where a process's memory must end: a 32-bit target's at 4 GiB; a 64-bit user
 * address space below 2^47 on x86-64 (4-level paging: 5-level addresses are only
 * handed out on request), 2^52 on AArch64, 2^57 elsewhere. The kernel half (the
 * vsyscall page) holds no mapping larger than 2^47 bytes either. */
static uint64_t image_space_end(const struct cp_image *img, uint64_t vaddr)
{
	if (img->wsize == 4)
		return 1ull << 32;
	if (vaddr >= 1ull << 63)
		return vaddr + (1ull << 47) < vaddr ? UINT64_MAX : vaddr + (1ull << 47);
	switch (img->machine) {
	case EM_X86_64: return 1ull << 47;
	case EM_AARCH64: return 1ull << 52;
	default: return 1ull << 57;
	}
}

/* Add one PT_LOAD, bounded by the file size. A segment that claims memory the file
 * does not hold past the end of the target's address space (only a damaged core
 * has one: p_memsz is anything) is not believed: it is cut to the bytes the file
 * holds and noted in nbogus_segs, so that vaddr + memsz never wraps and no reader
 * walks (per page, per word) memory that cannot exist. */
static void image_add_load(struct cp_image *img, const GElf_Phdr *ph)
{
	struct cp_segment *s;
	uint64_t memsz = ph->p_memsz, filesz = ph->p_filesz, avail, lim;

	if (memsz == 0)
		return;
	if (filesz > memsz)
		filesz = memsz;
	if (ph->p_offset >= img->map_size)
		avail = 0;
	else if (filesz > img->map_size - ph->p_offset)
		avail = img->map_size - ph->p_offset;
	else
		avail = filesz;
	lim = image_space_end(img, ph->p_vaddr);
	if (memsz > UINT64_MAX - ph->p_vaddr ||
	    (memsz > avail && (ph->p_vaddr >= lim || memsz > lim - ph->p_vaddr))) {
		if (!img->nbogus_segs++) {
			img->bogus_vaddr = ph->p_vaddr;
			img->bogus_memsz = ph->p_memsz;
		}
		/* what the file holds, and never past the top of the address space */
		if (avail > UINT64_MAX - ph->p_vaddr)
			avail = UINT64_MAX - ph->p_vaddr;
		if (avail == 0)
			return;
		memsz = filesz = avail;
	}
	if (avail < filesz) {
		img->truncated = 1;
		img->truncated_bytes += filesz - avail;
	}
	if (avail < memsz) {
		img->missing_bytes += memsz - avail;
		img->missing_segs++;
	}
	s = &img->segs[img->nsegs++];
	s->vaddr = ph->p_vaddr;
	s->memsz = memsz;
	s->avail = avail;
	s->offset = ph->p_offset;
	s->flags = ph->p_flags;
}

static const char *etype_name(unsigned t)
{
	switch (t) {
	case ET_EXEC: return "an ELF executable";
	case ET_DYN: return "an ELF shared object or PIE executable";
	case ET_REL: return "an ELF relocatable object";
	default: return "an ELF file of unknown type";
	}
}

struct cp_image *cp_image_open_core(const char *path, struct cp_error *err)
{
	struct cp_image *img;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t phnum = 0, i, nload = 0;
	int fd = -1;
	const unsigned char *id;

	img = image_new(path, err);
	if (!img)
		return NULL;
	img->kind = CP_KIND_CORE;
	if (image_map_file(img, path, 1, &fd, err) < 0)
		goto fail;
	id = img->map;
	if (img->map_size < 4 || memcmp(id, ELFMAG, SELFMAG) != 0) {
		cp_error_set(err, CP_EFORMAT, path, "not an ELF file");
		goto fail;
	}
	if (img->map_size < EI_NIDENT || (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)) {
		cp_error_set(err, CP_EFORMAT, path, img->map_size < EI_NIDENT ?
			     "truncated ELF header" : "unsupported ELF class");
		goto fail;
	}
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB) {
		cp_error_set(err, CP_EFORMAT, path, "unsupported ELF byte order");
		goto fail;
	}
	if (img->map_size < (id[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		cp_error_set(err, CP_EFORMAT, path, "truncated ELF header");
		goto fail;
	}
	img->wsize = id[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	img->big_endian = id[EI_DATA] == ELFDATA2MSB;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		cp_error_set(err, CP_EFORMAT, path, "not a valid ELF file: %s", elf_errmsg(-1));
		goto fail;
	}
	if (eh.e_type != ET_CORE) {
		cp_error_set(err, CP_EFORMAT, path, "not a core file (%s)", etype_name(eh.e_type));
		goto fail;
	}
	img->machine = eh.e_machine;
	if (elf_getphdrnum(elf, &phnum) != 0) {
		cp_error_set(err, CP_EFORMAT, path, "bad program header count: %s", elf_errmsg(-1));
		goto fail;
	}
	if (eh.e_phnum != PN_XNUM && eh.e_phnum > phnum)
		phnum = eh.e_phnum;   /* libelf reports 0 when they are past the end */
	if (phnum == 0) {
		cp_error_set(err, CP_EFORMAT, path, "core file without program headers");
		goto fail;
	}
	if (eh.e_phoff > img->map_size ||
	    (uint64_t)phnum * eh.e_phentsize > img->map_size - eh.e_phoff) {
		cp_error_set(err, CP_EFORMAT, path, "truncated core: program headers past the end of the file");
		goto fail;
	}
	img->segs = calloc(phnum, sizeof(*img->segs));
	if (!img->segs) {
		cp_error_set(err, CP_ENOMEM, path, "out of memory");
		goto fail;
	}
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			cp_error_set(err, CP_EFORMAT, path, "bad program header %zu: %s", i, elf_errmsg(-1));
			goto fail;
		}
		if (ph.p_type == PT_LOAD) {
			image_add_load(img, &ph);
			nload++;
		} else if (ph.p_type == PT_NOTE) {
			uint64_t len = ph.p_filesz;

			if (ph.p_offset >= img->map_size) {
				img->truncated = 1;
				img->notes_cut = 1;
				continue;
			}
			if (len > img->map_size - ph.p_offset) {
				len = img->map_size - ph.p_offset;
				img->truncated = 1;
				img->notes_cut = 1;
			}
			if (cp_notes_parse(img, img->map + ph.p_offset, (size_t)len, err) < 0)
				goto fail;
		}
	}
	if (!nload) {
		/* program headers zeroed (dd) read as PT_NULL: "no block annotated
		 * ... the program ran without libheapann" blamed the wrong thing */
		cp_error_set(err, CP_EFORMAT, path, "damaged core: none of its %zu program headers "
			     "is a memory segment (PT_LOAD): zeroed or overwritten?", phnum);
		goto fail;
	}
	qsort(img->segs, img->nsegs, sizeof(*img->segs), seg_cmp);
	for (i = 1; i < img->nsegs; i++) {
		/* every address has one segment: overlaps would count blocks twice */
		if (img->segs[i].vaddr - img->segs[i - 1].vaddr < img->segs[i - 1].memsz) {
			cp_error_set(err, CP_EFORMAT, path, "damaged core: PT_LOAD segments at 0x%llx "
				     "and 0x%llx overlap", (unsigned long long)img->segs[i - 1].vaddr,
				     (unsigned long long)img->segs[i].vaddr);
			goto fail;
		}
	}
	if (img->nfiles)
		qsort(img->files, img->nfiles, sizeof(*img->files), map_cmp);
	elf_end(elf);
	close(fd);
	return img;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	cp_image_free(img);
	return NULL;
}

struct cp_image *cp_image_open_raw(const char *path, uint64_t base, unsigned wsize,
				   int big_endian, uint16_t machine, struct cp_error *err)
{
	struct cp_image *img;
	int fd = -1;

	if (wsize != 4 && wsize != 8) {
		cp_error_set(err, CP_EARG, path, "pointer size must be 4 or 8, not %u", wsize);
		return NULL;
	}
	img = image_new(path, err);
	if (!img)
		return NULL;
	img->kind = CP_KIND_RAW;
	img->wsize = wsize;
	img->big_endian = !!big_endian;
	img->machine = machine;
	if (image_map_file(img, path, 0, &fd, err) < 0)
		goto fail;
	close(fd);
	if (img->map_size - 1 > UINT64_MAX - base) {
		cp_error_set(err, CP_EARG, path, "dump of %zu bytes at 0x%llx wraps past the end of the address space",
			     img->map_size, (unsigned long long)base);
		goto fail;
	}
	if (wsize == 4 && base + img->map_size - 1 > 0xFFFFFFFFull) {
		cp_error_set(err, CP_EARG, path, "dump of %zu bytes at 0x%llx does not fit a 32-bit address space",
			     img->map_size, (unsigned long long)base);
		goto fail;
	}
	img->segs = calloc(1, sizeof(*img->segs));
	if (!img->segs) {
		cp_error_set(err, CP_ENOMEM, path, "out of memory");
		goto fail;
	}
	img->segs[0].vaddr = base;
	img->segs[0].memsz = img->map_size;
	img->segs[0].avail = img->map_size;
	img->segs[0].offset = 0;
	img->segs[0].flags = 7; /* PF_R | PF_W | PF_X */
	img->nsegs = 1;
	return img;
fail:
	cp_image_free(img);
	return NULL;
}

void cp_image_free(struct cp_image *img)
{
	size_t i;

	if (!img)
		return;
	if (img->map)
		munmap((void *)img->map, img->map_size);
	if (img->compression != CP_COMP_NONE && img->data_fd >= 0)
		close(img->data_fd);
	for (i = 0; i < img->nfiles; i++)
		free((char *)img->files[i].path);
	free(img->files);
	free(img->segs);
	free(img->threads);
	free(img->stack_hints);
	free(img->auxv);
	free(img->path);
	free(img);
}

const char *cp_image_data_path(const struct cp_image *img)
{
	return img->compression != CP_COMP_NONE && img->data_path[0] ? img->data_path : img->path;
}

/* How many of the n elements of v (stride bytes each, sorted by the uint64_t at
 * byte offset key in each) have a key <= addr: the one that may hold addr is the
 * last of them. */
static size_t count_le(const void *v, size_t n, size_t stride, size_t key, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const unsigned char *)v + mid * stride + key, sizeof(k));
		if (k <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct cp_segment *cp_image_segment(const struct cp_image *img, uint64_t addr)
{
	size_t lo = count_le(img->segs, img->nsegs, sizeof(*img->segs),
			     offsetof(struct cp_segment, vaddr), addr);

	if (lo == 0)
		return NULL;
	if (addr - img->segs[lo - 1].vaddr < img->segs[lo - 1].memsz)
		return &img->segs[lo - 1];
	return NULL;
}

const unsigned char *cp_image_ptr(const struct cp_image *img, uint64_t addr, uint64_t len)
{
	const struct cp_segment *s = cp_image_segment(img, addr);
	uint64_t off;

	if (!s)
		return NULL;
	off = addr - s->vaddr;
	if (off > s->avail || len > s->avail - off)
		return NULL;
	return img->map + s->offset + off;
}

uint64_t cp_image_word(const struct cp_image *img, const unsigned char *p)
{
	return cp_decode(p, img->wsize, img->big_endian);
}

int cp_image_read_word(const struct cp_image *img, uint64_t addr, uint64_t *out)
{
	const unsigned char *p = cp_image_ptr(img, addr, img->wsize);

	if (!p)
		return -1;
	*out = cp_decode(p, img->wsize, img->big_endian);
	return 0;
}

const struct cp_mapping *cp_image_mapping(const struct cp_image *img, uint64_t addr)
{
	size_t lo = count_le(img->files, img->nfiles, sizeof(*img->files),
			     offsetof(struct cp_mapping, start), addr);

	if (lo == 0)
		return NULL;
	if (addr < img->files[lo - 1].end)
		return &img->files[lo - 1];
	return NULL;
}
