/* dw_inflate.c - inflate a separate debug file's compressed DWARF sections
 * ahead of libdw. libdw 0.188 inflates every DWARF section it knows when it
 * opens a file (dwarf_begin_elf), one after the other, the location lists of
 * Debian's libc (about a sixth of its compressed bytes) included, which the
 * symbolizer never reads. Here the file is copied into a memfd with the
 * sections the symbolizer needs inflated in place, in parallel, and the
 * others hidden as SHT_NOBITS (libdw skips those). The section contents libdw
 * then reads are byte for byte what its own inflating would have given.
 * Only zlib (ELFCOMPRESS_ZLIB) sections of a file in the host's byte order
 * are handled; anything else leaves the file to libdw unchanged. The streams
 * are inflated with libdeflate, which takes the whole stream and its known
 * size at once (the section's Chdr gives it) and does so in well under half
 * zlib's time (libc's .debug_info: 19 ms against 43 ms); it checks the
 * Adler-32 as zlib does.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>

#include "dw_priv.h"

/* Sections the symbolizer (its decoders and the libdw calls it makes for
 * names, units and ranges) never reads. */
static const char *const dw_unread[] = {
	".debug_loc", ".debug_loclists", ".debug_frame", ".debug_macro", ".debug_macinfo",
	".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
};

struct dw_zsec {
	size_t ndx;                /* section index */
	const unsigned char *src;  /* the compressed bytes after the Chdr */
	size_t srclen;
	uint64_t out_off, out_size, align;  /* where it goes in the copy */
	int ok;                    /* inflated to exactly out_size bytes */
};

struct dw_zjob {
	struct dw_zsec *secs;
	unsigned char *out;        /* the copy's mapping */
};

static void dw_inflate_one(void *arg, size_t i)
{
	struct dw_zjob *j = arg;
	struct dw_zsec *z = &j->secs[i];
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (!d)
		return;
	size_t in_used = 0, out_got = 0;
	enum libdeflate_result r = libdeflate_zlib_decompress_ex(d, z->src, z->srclen, j->out + z->out_off,
								 (size_t)z->out_size, &in_used, &out_got);
	/* a stream that ends early, fills more than out_size, fails its
	 * Adler-32 or is followed by other bytes (libelf refuses those) is
	 * damaged: left to libdw, which says so */
	z->ok = r == LIBDEFLATE_SUCCESS && in_used == z->srclen && out_got == z->out_size;
	libdeflate_free_decompressor(d);
}

/* libdeflate picks its decoder and checksum for the CPU on first use and
 * keeps the choice in globals; every thread would write the same pointers,
 * but make the first use one on this thread, before the pool's threads
 * start (helgrind saw the writes race). */
static void dw_inflate_warm(void)
{
	static const unsigned char a[] = { 0x78, 0x9c, 0x4b, 0x04, 0x00, 0x00, 0x62, 0x00, 0x62 };   /* "a" */
	unsigned char out[1];
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (d) {
		(void)libdeflate_zlib_decompress(d, a, sizeof a, out, sizeof out, NULL);
		libdeflate_free_decompressor(d);
	}
}

/* Write header field values of section ndx in the copy (64- or 32-bit). */
static void dw_shdr_patch(unsigned char *shdr, int is64, const struct dw_zsec *z, int nobits)
{
	if (is64) {
		Elf64_Shdr h;
		memcpy(&h, shdr, sizeof h);
		if (nobits) {
			h.sh_type = SHT_NOBITS;
		} else {
			h.sh_offset = z->out_off;
			h.sh_size = z->out_size;
			h.sh_flags &= ~(Elf64_Xword)SHF_COMPRESSED;
			h.sh_addralign = z->align;
		}
		memcpy(shdr, &h, sizeof h);
	} else {
		Elf32_Shdr h;
		memcpy(&h, shdr, sizeof h);
		if (nobits) {
			h.sh_type = SHT_NOBITS;
		} else {
			h.sh_offset = (Elf32_Off)z->out_off;
			h.sh_size = (Elf32_Word)z->out_size;
			h.sh_flags &= ~(Elf32_Word)SHF_COMPRESSED;
			h.sh_addralign = (Elf32_Word)z->align;
		}
		memcpy(shdr, &h, sizeof h);
	}
}

/* Copy into out the parts of the file in (in_size bytes) that the copy keeps:
 * the ELF header, the program and section header tables and every section
 * with content whose hide[] is 0. Returns 0, or -1 (out partly written) when
 * one of them lies outside the file. */
static int dw_copy_kept(unsigned char *out, const unsigned char *in, size_t in_size, Elf *elf,
			const GElf_Ehdr *eh, size_t nsec, const unsigned char *hide)
{
	size_t nph;
	if (eh->e_ehsize > in_size || elf_getphdrnum(elf, &nph) != 0)
		return -1;
	memcpy(out, in, eh->e_ehsize);
	uint64_t phbytes = (uint64_t)nph * eh->e_phentsize, shbytes = (uint64_t)nsec * eh->e_shentsize;
	if (nph && (eh->e_phoff > in_size || phbytes > in_size - eh->e_phoff))
		return -1;
	if (nph)
		memcpy(out + eh->e_phoff, in + eh->e_phoff, (size_t)phbytes);
	if (eh->e_shoff > in_size || shbytes > in_size - eh->e_shoff)
		return -1;
	memcpy(out + eh->e_shoff, in + eh->e_shoff, (size_t)shbytes);
	for (size_t i = 1; i < nsec; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return -1;
		if (hide[i] || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (sh.sh_offset > in_size || sh.sh_size > in_size - sh.sh_offset)
			return -1;
		memcpy(out + sh.sh_offset, in + sh.sh_offset, (size_t)sh.sh_size);
	}
	return 0;
}

int dw_inflate_place(size_t *copy_size, uint64_t size, int is64, uint64_t *off)
{
	if (*copy_size > SIZE_MAX - 15 || size > SIZE_MAX - 15 - *copy_size)
		return -1;
	size_t end = (*copy_size + (size_t)size + 15) & ~(size_t)15;
	if (!is64 && end > UINT32_MAX)
		return -1;
	*off = *copy_size;
	*copy_size = end;
	return 0;
}

int dw_inflate_debug(int fd, unsigned nthreads)
{
	int out_fd = -1, rc = -1;
	unsigned char *in = MAP_FAILED, *out = MAP_FAILED;
	size_t in_size = 0, out_size = 0, nsec = 0, nz = 0;
	struct dw_zsec *zs = NULL;
	unsigned char *hide = NULL;   /* per section: 1 hide as NOBITS, 2 inflated */
	struct stat st;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		goto out;
	in_size = (size_t)st.st_size;
	in = mmap(NULL, in_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (in == MAP_FAILED)
		goto out;
	elf = elf_memory((char *)in, in_size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getshdrnum(elf, &nsec) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0 || nsec == 0)
		goto out;
	int is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	int host_le = 1;
	host_le = *(unsigned char *)&host_le;
	if ((eh.e_ident[EI_DATA] == ELFDATA2LSB) != host_le ||
	    eh.e_shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    eh.e_shoff > in_size || (in_size - eh.e_shoff) / eh.e_shentsize < nsec)
		goto out;
	zs = calloc(nsec, sizeof *zs);
	hide = calloc(nsec, 1);
	if (!zs || !hide)
		goto out;
	if (in_size > SIZE_MAX - 15)
		goto out;
	out_size = (in_size + 15) & ~(size_t)15;
	size_t nhide = 0;
	for (size_t i = 1; i < nsec; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			goto out;
		if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7) != 0)
			continue;
		int unread = 0;
		for (size_t k = 0; k < sizeof dw_unread / sizeof dw_unread[0]; k++)
			unread |= !strcmp(name, dw_unread[k]);
		if (unread) {
			hide[i] = 1;
			nhide++;
			continue;
		}
		size_t chsz = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
		if (sh.sh_offset > in_size || sh.sh_size > in_size - sh.sh_offset || sh.sh_size < chsz)
			goto out;
		uint64_t type, size, align;
		if (is64) {
			Elf64_Chdr ch;
			memcpy(&ch, in + sh.sh_offset, sizeof ch);
			type = ch.ch_type, size = ch.ch_size, align = ch.ch_addralign;
		} else {
			Elf32_Chdr ch;
			memcpy(&ch, in + sh.sh_offset, sizeof ch);
			type = ch.ch_type, size = ch.ch_size, align = ch.ch_addralign;
		}
		/* a size no file of ours comes near: leave it to libdw's checks */
		if (type != ELFCOMPRESS_ZLIB || size > (1ull << 40) || (align & (align - 1)))
			goto out;
		struct dw_zsec *z = &zs[nz++];
		hide[i] = 2;   /* inflated: its compressed bytes are not copied */
		z->ndx = i;
		z->src = in + sh.sh_offset + chsz;
		z->srclen = sh.sh_size - chsz;
		if (dw_inflate_place(&out_size, size, is64, &z->out_off) != 0)
			goto out;   /* too big for this host or for 32-bit headers */
		z->out_size = size;
		z->align = align ? align : 1;
	}
	if (!nz && !nhide)
		goto out;
	out_fd = memfd_create("mprof-debuginfo", MFD_CLOEXEC);
	if (out_fd < 0 || ftruncate(out_fd, (off_t)out_size) != 0)
		goto out;
	out = mmap(NULL, out_size, PROT_READ | PROT_WRITE, MAP_SHARED, out_fd, 0);
	if (out == MAP_FAILED)
		goto out;
	/* the ELF header, program headers, section headers and the bytes of the
	 * sections kept as they are; not the compressed bytes of the inflated
	 * sections nor those of the hidden ones (the memfd stays sparse there) */
	if (dw_copy_kept(out, in, in_size, elf, &eh, nsec, hide) != 0)
		memcpy(out, in, in_size);   /* a layout we do not follow: all of it */
	/* the biggest sections first, so that the last job to start is short */
	for (size_t a = 1; a < nz; a++)
		for (size_t b = a; b > 0 && zs[b - 1].out_size < zs[b].out_size; b--) {
			struct dw_zsec t = zs[b];
			zs[b] = zs[b - 1];
			zs[b - 1] = t;
		}
	struct dw_zjob job = { .secs = zs, .out = out };
	dw_inflate_warm();
	dw_pool_run(nthreads, nz, dw_inflate_one, &job);
	for (size_t k = 0; k < nz; k++)
		if (!zs[k].ok)
			goto out;   /* damaged: libdw says so as it always did */
	unsigned char *shdrs = out + eh.e_shoff;
	for (size_t k = 0; k < nz; k++)
		dw_shdr_patch(shdrs + zs[k].ndx * eh.e_shentsize, is64, &zs[k], 0);
	for (size_t i = 1; i < nsec; i++)
		if (hide[i] == 1)
			dw_shdr_patch(shdrs + i * eh.e_shentsize, is64, NULL, 1);
	rc = 0;
out:
	if (elf)
		elf_end(elf);
	if (out != MAP_FAILED)
		munmap(out, out_size);
	if (in != MAP_FAILED)
		munmap(in, in_size);
	free(zs);
	free(hide);
	if (rc != 0 && out_fd >= 0) {
		close(out_fd);
		out_fd = -1;
	}
	return out_fd;
}
