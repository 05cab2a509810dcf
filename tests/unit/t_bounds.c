/* t_bounds.c - what coreparse believes of a PT_LOAD's size (issue 14), on tiny
 * ELF64 and ELF32 cores written here: a claim past the target's address space is
 * cut to the bytes the file holds and counted in nbogus_segs; a believable claim
 * the file does not hold stays, as missing memory; and the lost report's roots
 * and mark over a 16 EiB claim read only the dumped bytes. Every expected number
 * comes from what the test wrote.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coreparse.h"
#include "reach.h"

static char path[] = "/tmp/t_bounds.XXXXXX";

/* One PT_LOAD to write: vaddr, p_filesz, p_memsz; its data (filesz bytes of 0x11)
 * is written after the headers, unless filesz is larger than 'in_file'. */
struct load {
	uint64_t vaddr, filesz, memsz, in_file;
};

/* Write an ET_CORE with no notes and the given loads; class 64 or 32 (x86-64 or
 * i386, little-endian). Returns 0, or -1 on an I/O error. */
static int write_core(int cls, const struct load *l, size_t n)
{
	unsigned char buf[1 << 16];
	size_t ehsz = cls == 64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsz = cls == 64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t off = ehsz + n * phsz;
	FILE *f;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = cls == 64 ? ELFCLASS64 : ELFCLASS32;
	buf[EI_DATA] = ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	if (cls == 64) {
		Elf64_Ehdr *e = (Elf64_Ehdr *)buf;

		e->e_type = ET_CORE;
		e->e_machine = EM_X86_64;
		e->e_version = EV_CURRENT;
		e->e_phoff = ehsz;
		e->e_ehsize = (uint16_t)ehsz;
		e->e_phentsize = (uint16_t)phsz;
		e->e_phnum = (uint16_t)n;
	} else {
		Elf32_Ehdr *e = (Elf32_Ehdr *)buf;

		e->e_type = ET_CORE;
		e->e_machine = EM_386;
		e->e_version = EV_CURRENT;
		e->e_phoff = (uint32_t)ehsz;
		e->e_ehsize = (uint16_t)ehsz;
		e->e_phentsize = (uint16_t)phsz;
		e->e_phnum = (uint16_t)n;
	}
	for (size_t i = 0; i < n; i++) {
		if (cls == 64) {
			Elf64_Phdr *p = (Elf64_Phdr *)(buf + ehsz + i * phsz);

			p->p_type = PT_LOAD;
			p->p_flags = PF_R | PF_W;
			p->p_offset = off;
			p->p_vaddr = l[i].vaddr;
			p->p_filesz = l[i].filesz;
			p->p_memsz = l[i].memsz;
			p->p_align = 4096;
		} else {
			Elf32_Phdr *p = (Elf32_Phdr *)(buf + ehsz + i * phsz);

			p->p_type = PT_LOAD;
			p->p_flags = PF_R | PF_W;
			p->p_offset = (uint32_t)off;
			p->p_vaddr = (uint32_t)l[i].vaddr;
			p->p_filesz = (uint32_t)l[i].filesz;
			p->p_memsz = (uint32_t)l[i].memsz;
			p->p_align = 4096;
		}
		memset(buf + off, 0x11, l[i].in_file);
		off += l[i].in_file;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, off, f) != off) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

static struct cp_image *open_core(int cls, const struct load *l, size_t n, struct cp_error *err)
{
	if (write_core(cls, l, n) < 0)
		return NULL;
	return cp_image_open_core(path, err);
}

int main(void)
{
	struct cp_error err = { 0 };
	struct cp_image *img;
	int fd = mkstemp(path);

	if (fd < 0)
		return 77;
	close(fd);

	/* x86-64: a stack page whose p_memsz says 16 EiB; a heap page claiming 64 TiB
	 * at 0x55..: 0x555555554000 + 2^46 ends above 2^47; a 1 TiB reservation the
	 * core does not hold, below 2^47: believed (missing memory) */
	{
		struct load l[] = {
			{ 0x555555554000ull, 4096, 1ull << 46, 4096 },
			{ 0x600000000000ull, 0, 1ull << 40, 0 },
			{ 0x7ffff7ff0000ull, 8192, UINT64_MAX, 8192 },
		};

		img = open_core(64, l, 3, &err);
		CHECK("x86-64: the core opens", img != NULL);
		if (img) {
			CHECK("x86-64: 3 segments", img->nsegs == 3);
			CHECK("x86-64: 2 claims not believed", img->nbogus_segs == 2);
			CHECK("x86-64: the first of them at 0x555555554000", img->bogus_vaddr == 0x555555554000ull);
			CHECK("x86-64: ... claiming 2^46 bytes", img->bogus_memsz == 1ull << 46);
			CHECK("x86-64: the heap page cut to its 4096 bytes", img->segs[0].memsz == 4096 &&
			      img->segs[0].avail == 4096);
			CHECK("x86-64: the reservation kept whole (2^40)", img->segs[1].memsz == 1ull << 40 &&
			      img->segs[1].avail == 0);
			CHECK("x86-64: the stack cut to its 8192 bytes", img->segs[2].memsz == 8192 &&
			      img->segs[2].avail == 8192);
			CHECK("x86-64: missing bytes: the reservation only", img->missing_bytes == 1ull << 40 &&
			      img->missing_segs == 1);
			CHECK("x86-64: not a truncated core", img->truncated == 0);
			cp_image_free(img);
		}
	}

	/* the lost report over a segment claiming 16 EiB - 1 ... read only what the
	 * file holds (the claim is cut here; the walks step through dumped bytes
	 * whatever a segment claims: with 2^40 missing bytes in the reservation they
	 * would otherwise take 2^28 steps) */
	{
		struct load l[] = {
			{ 0x600000000000ull, 4096, 1ull << 40, 4096 },
			{ 0x7ffff7ff0000ull, 8192, UINT64_MAX, 8192 },
		};
		struct cp_scan scan;
		struct an_roots roots;
		struct an_reach reach;
		struct an_reach_options ro = { .nthreads = 1 };

		img = open_core(64, l, 2, &err);
		CHECK("roots: the core opens", img != NULL);
		if (img && cp_scan_image(img, 1, &scan, &err) == 0) {
			CHECK("roots: the scan read the 12288 dumped bytes", scan.scanned_bytes == 12288);
			CHECK("roots: found", an_roots_find(img, &scan, &roots) == 0);
			CHECK("roots: the two writable segments", roots.n == 2);
			CHECK("roots: the statistics-region search ends", an_roots_exclude_stats(img, NULL, &roots) == 0);
			CHECK("roots: nothing excluded", roots.nexclude == 0);
			CHECK("mark: done", an_reach_build(img, &scan, &roots, &ro, &reach) == 0);
			CHECK("mark: read the 12288 dumped root bytes", reach.root_bytes == 12288);
			an_reach_release(&reach);
			an_roots_release(&roots);
			cp_scan_free(&scan);
		} else {
			CHECK("roots: scanned", 0);
		}
		cp_image_free(img);
	}

	/* i386: a segment running past 4 GiB is cut; one ending at 4 GiB is fine */
	{
		struct load l[] = {
			{ 0x08048000ull, 4096, 4096, 4096 },
			{ 0xbfff0000ull, 4096, 0x10000, 4096 },
			{ 0xfffff000ull, 4096, 0x2000, 4096 },
		};

		img = open_core(32, l, 3, &err);
		CHECK("i386: the core opens", img != NULL);
		if (img) {
			CHECK("i386: 1 claim not believed, at 0xfffff000",
			      img->nbogus_segs == 1 && img->bogus_vaddr == 0xfffff000ull && img->bogus_memsz == 0x2000);
			CHECK("i386: it is cut to its 4096 bytes", img->nsegs == 3 && img->segs[2].memsz == 4096);
			CHECK("i386: the stack's 60 KiB not dumped are believed", img->segs[1].memsz == 0x10000 &&
			      img->missing_bytes == 0x10000 - 4096);
			cp_image_free(img);
		}
	}

	/* a fully dumped segment whose end wraps past 2^64 (its claim cannot be met
	 * either way): cut at the top, no wrap for the readers */
	{
		struct load l[] = {
			{ 0xfffffffffffff000ull, 8192, 8192, 8192 },
		};

		img = open_core(64, l, 1, &err);
		CHECK("wrap: the core opens", img != NULL);
		if (img) {
			CHECK("wrap: noted", img->nbogus_segs == 1);
			CHECK("wrap: cut to the last 4095 bytes below 2^64",
			      img->nsegs == 1 && img->segs[0].memsz == 4095 && img->segs[0].avail == 4095);
			cp_image_free(img);
		}
	}
	unlink(path);
	return CHECK_DONE();
}
