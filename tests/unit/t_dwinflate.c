/* t_dwinflate.c - dw_inflate_debug (sym/dw_inflate.c) on this test's own
 * executable compressed by objcopy (--compress-debug-sections=zlib): every
 * DWARF section the symbolizer reads comes out byte for byte as in the
 * uncompressed file, the ones it never reads are SHT_NOBITS, every other
 * section is untouched; 1 and 4 threads give the same bytes; an uncompressed
 * file, a damaged stream and a section that claims more bytes than the file
 * has are refused (-1, libdw then reads the file as before); no descriptor is
 * left open. Skips (77) without objcopy.
 */
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "dw_priv.h"

/* The whole content of fd (mapped), its size in *len; NULL when unreadable. */
static unsigned char *map_fd(int fd, size_t *len)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
		return NULL;
	*len = (size_t)st.st_size;
	void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int is_unread(const char *name)
{
	return !strcmp(name, ".debug_loc") || !strcmp(name, ".debug_loclists") ||
	       !strcmp(name, ".debug_frame") || !strcmp(name, ".debug_macro") ||
	       !strcmp(name, ".debug_macinfo") || !strcmp(name, ".debug_pubnames") ||
	       !strcmp(name, ".debug_pubtypes") || !strcmp(name, ".debug_gnu_pubnames") ||
	       !strcmp(name, ".debug_gnu_pubtypes");
}

/* Compare the copy (cbytes) section by section with the uncompressed file
 * (pbytes). Counts the sections found inflated and hidden. Returns the number
 * of sections that differ. */
static int compare(const unsigned char *pbytes, size_t plen, const unsigned char *cbytes, size_t clen,
		   int *inflated, int *hidden)
{
	Elf *pe = elf_memory((char *)pbytes, plen), *ce = elf_memory((char *)cbytes, clen);
	size_t pn = 0, cn = 0, pstr, cstr;
	int bad = 0;
	*inflated = *hidden = 0;
	if (!pe || !ce || elf_getshdrnum(pe, &pn) || elf_getshdrnum(ce, &cn) || pn != cn ||
	    elf_getshdrstrndx(pe, &pstr) || elf_getshdrstrndx(ce, &cstr)) {
		bad = 1000;
		goto out;
	}
	for (size_t i = 1; i < pn; i++) {
		GElf_Shdr ps, cs;
		if (!gelf_getshdr(elf_getscn(pe, i), &ps) || !gelf_getshdr(elf_getscn(ce, i), &cs)) {
			bad++;
			continue;
		}
		const char *name = elf_strptr(pe, pstr, ps.sh_name);
		const char *cname = elf_strptr(ce, cstr, cs.sh_name);
		if (!name || !cname || strcmp(name, cname)) {
			bad++;
			continue;
		}
		if (!strncmp(name, ".debug_", 7) && is_unread(name)) {
			*hidden += cs.sh_type == SHT_NOBITS;
			bad += cs.sh_type != SHT_NOBITS;
			continue;
		}
		if (cs.sh_flags & SHF_COMPRESSED) {
			bad += !strncmp(name, ".debug_", 7);   /* a .debug_ one must be inflated */
			continue;
		}
		if (ps.sh_type == SHT_NOBITS) {
			bad += cs.sh_type != SHT_NOBITS || cs.sh_size != ps.sh_size;
			continue;
		}
		if (cs.sh_type != ps.sh_type || cs.sh_size != ps.sh_size || cs.sh_flags != ps.sh_flags ||
		    ps.sh_offset + ps.sh_size > plen || cs.sh_offset + cs.sh_size > clen ||
		    memcmp(pbytes + ps.sh_offset, cbytes + cs.sh_offset, ps.sh_size) != 0) {
			bad++;
			continue;
		}
		*inflated += !strncmp(name, ".debug_", 7);
	}
out:
	if (pe)
		elf_end(pe);
	if (ce)
		elf_end(ce);
	return bad;
}

/* Offset and size of section name's bytes in the file at path, or -1. */
static int section_at(const char *path, const char *want, uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t str;
	int rc = -1;
	if (e && elf_getshdrstrndx(e, &str) == 0)
		for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
			GElf_Shdr sh;
			const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, str, sh.sh_name) : NULL;
			if (name && !strcmp(name, want)) {
				*off = sh.sh_offset;
				*size = sh.sh_size;
				rc = 0;
			}
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Copy src to dst with the len bytes at off replaced by bytes. */
static int copy_patched(const char *src, const char *dst, uint64_t off, const void *bytes, size_t len)
{
	char cmd[9000];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
	if (system(cmd) != 0)
		return -1;
	int fd = open(dst, O_WRONLY);
	if (fd < 0)
		return -1;
	int rc = pwrite(fd, bytes, len, (off_t)off) == (ssize_t)len ? 0 : -1;
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	(void)argc;
	elf_version(EV_CURRENT);
	char self[4096], dir[] = "/tmp/t_dwinflate.XXXXXX", plain[4200], zfile[4200], bad[4200], cmd[20000];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0 || !mkdtemp(dir)) {
		printf("cannot find the test's executable or make a directory\n");
		return 1;
	}
	self[sl] = '\0';
	(void)argv;
	snprintf(plain, sizeof plain, "%s/plain", dir);
	snprintf(zfile, sizeof zfile, "%s/z", dir);
	snprintf(bad, sizeof bad, "%s/bad", dir);
	/* the uncompressed reference and the compressed file, both made by objcopy
	 * so that they differ only in the compression */
	snprintf(cmd, sizeof cmd, "objcopy --decompress-debug-sections '%s' '%s' 2>/dev/null && "
		 "objcopy --compress-debug-sections=zlib '%s' '%s' 2>/dev/null", self, plain, plain, zfile);
	if (system(cmd) != 0) {
		printf("objcopy missing or failed: skipped\n");
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		(void)!system(cmd);
		return 77;
	}
	int fds0 = check_count_fds();

	int pfd = open(plain, O_RDONLY), zfd = open(zfile, O_RDONLY);
	size_t plen = 0, c1len = 0, c4len = 0;
	unsigned char *pbytes = map_fd(pfd, &plen);
	CHECK("the uncompressed copy is refused: nothing to inflate", dw_inflate_debug(pfd, 2) == -1);

	int c1 = dw_inflate_debug(zfd, 1), c4 = dw_inflate_debug(zfd, 4);
	CHECK("the compressed file gives a copy (1 thread)", c1 >= 0);
	CHECK("the compressed file gives a copy (4 threads)", c4 >= 0);
	unsigned char *b1 = map_fd(c1, &c1len), *b4 = map_fd(c4, &c4len);
	CHECK("the copies are mapped", pbytes && b1 && b4);
	if (pbytes && b1 && b4) {
		int inflated = 0, hidden = 0;
		int nbad = compare(pbytes, plen, b1, c1len, &inflated, &hidden);
		printf("# %d DWARF sections inflated, %d hidden\n", inflated, hidden);
		CHECK("every section of the copy is the uncompressed file's, or hidden", nbad == 0);
		CHECK(".debug_info, .debug_abbrev, .debug_line and .debug_str at least are inflated", inflated >= 4);
		CHECK("1 and 4 threads: the same bytes", c1len == c4len && memcmp(b1, b4, c1len) == 0);
		/* the compressed .debug_info stays behind: its place in the copy is
		 * a hole of zeros (the section now lies after the file's bytes) */
		uint64_t zo = 0, zs = 0;
		size_t nonzero = 0;
		if (section_at(zfile, ".debug_info", &zo, &zs) == 0 && zo + zs <= c1len)
			for (uint64_t k = 0; k < zs; k++)
				nonzero += b1[zo + k] != 0;
		printf("# compressed .debug_info: %llu bytes at %llu, %zu of them non-zero in the copy\n",
		       (unsigned long long)zs, (unsigned long long)zo, nonzero);
		CHECK("the compressed bytes of an inflated section are not copied", zs > 64 && nonzero == 0);
		/* what libdw reads from the copy: the units and line rows it reads
		 * from the uncompressed file */
		size_t units[2] = { 0, 0 }, rows[2] = { 0, 0 };
		for (int k = 0; k < 2; k++) {
			Elf *e = elf_memory((char *)(k ? b1 : pbytes), k ? c1len : plen);
			Dwarf *dbg = e ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
			Dwarf_Off off = 0, next;
			size_t hsz;
			while (dbg && dwarf_nextcu(dbg, off, &next, &hsz, NULL, NULL, NULL) == 0) {
				Dwarf_Die cu;
				Dwarf_Lines *lines;
				size_t nl;
				if (dwarf_offdie(dbg, off + hsz, &cu)) {
					units[k]++;
					if (dwarf_getsrclines(&cu, &lines, &nl) == 0)
						rows[k] += nl;
				}
				off = next;
			}
			if (dbg)
				dwarf_end(dbg);
			if (e)
				elf_end(e);
		}
		printf("# libdw: %zu units, %zu line rows in the uncompressed file; %zu, %zu in the copy\n",
		       units[0], rows[0], units[1], rows[1]);
		CHECK("libdw reads the same units and line rows from the copy", units[0] > 0 && rows[0] > 0 &&
		      units[1] == units[0] && rows[1] == rows[0]);
	}
	if (b1)
		munmap(b1, c1len);
	if (b4)
		munmap(b4, c4len);
	if (pbytes)
		munmap(pbytes, plen);

	/* damage: a byte in the middle of the compressed .debug_info, and a
	 * .debug_info section that claims more bytes than the file has */
	uint64_t ioff = 0, isize = 0;
	CHECK("the compressed file has .debug_info", section_at(zfile, ".debug_info", &ioff, &isize) == 0 && isize > 64);
	unsigned char junk[16];
	memset(junk, 0xa5, sizeof junk);
	int bfd = copy_patched(zfile, bad, ioff + isize / 2, junk, sizeof junk) == 0 ? open(bad, O_RDONLY) : -1;
	CHECK("a damaged .debug_info stream is refused", bfd >= 0 && dw_inflate_debug(bfd, 2) == -1);
	if (bfd >= 0)
		close(bfd);
	/* the Chdr's size (after its type and reserved words) made one byte too big */
	Elf64_Chdr ch;
	int zr = open(zfile, O_RDONLY);
	int got = zr >= 0 && pread(zr, &ch, sizeof ch, (off_t)ioff) == (ssize_t)sizeof ch;
	if (zr >= 0)
		close(zr);
	ch.ch_size += 1;
	bfd = got && copy_patched(zfile, bad, ioff, &ch, sizeof ch) == 0 ? open(bad, O_RDONLY) : -1;
	CHECK("a stream shorter than its header says is refused", bfd >= 0 && dw_inflate_debug(bfd, 2) == -1);
	if (bfd >= 0)
		close(bfd);
	/* a stream followed by bytes it does not use (libelf refuses the
	 * section): .debug_info recompressed at the zlib level that gives the
	 * fewest bytes, written over the old stream, the old bytes left after it */
	uint64_t poff = 0, psize = 0;
	unsigned char *raw = NULL, *best = NULL;
	uLongf bestlen = 0;
	if (got && section_at(plain, ".debug_info", &poff, &psize) == 0 && psize > 0 &&
	    (raw = malloc(psize)) != NULL && (zr = open(plain, O_RDONLY)) >= 0) {
		if (pread(zr, raw, psize, (off_t)poff) == (ssize_t)psize) {
			uLongf cap = compressBound(psize);
			unsigned char *buf = malloc(sizeof ch + cap);
			best = malloc(sizeof ch + cap);
			for (int level = 1; buf && best && level <= 9; level++) {
				uLongf n = cap;
				if (compress2(buf + sizeof ch, &n, raw, psize, level) == Z_OK && (!bestlen || n < bestlen)) {
					bestlen = n;
					memcpy(best + sizeof ch, buf + sizeof ch, n);
				}
			}
			free(buf);
		}
		close(zr);
	}
	int shorter = best && bestlen && sizeof ch + bestlen < isize;
	printf("# .debug_info: %llu bytes compressed by objcopy, %lu by zlib at its best level\n",
	       (unsigned long long)(isize - sizeof ch), (unsigned long)bestlen);
	CHECK("a shorter stream of the same .debug_info can be made", shorter);
	if (shorter) {
		ch.ch_size -= 1;   /* back to the true size */
		memcpy(best, &ch, sizeof ch);
		bfd = copy_patched(zfile, bad, ioff, best, sizeof ch + bestlen) == 0 ? open(bad, O_RDONLY) : -1;
		int tc = bfd >= 0 ? dw_inflate_debug(bfd, 2) : -2;
		CHECK("a stream with bytes after its end is refused", tc == -1);
		if (tc >= 0)
			close(tc);
		if (bfd >= 0)
			close(bfd);
	}
	free(raw);
	free(best);

	/* the copy's layout: no wrap of size_t, no ELFCLASS32 copy past 4 GiB
	 * (its section headers would be truncated silently) */
	size_t cs = 100;
	uint64_t at = 0;
	CHECK("place: 5 bytes after 100 go at 100, the copy ends at 112",
	      dw_inflate_place(&cs, 5, 0, &at) == 0 && at == 100 && cs == 112);
	cs = (size_t)UINT32_MAX - 31;
	CHECK("place: a 32-bit copy that reaches 4 GiB is refused, unchanged",
	      dw_inflate_place(&cs, 64, 0, &at) == -1 && cs == (size_t)UINT32_MAX - 31 && at == 100);
	CHECK("place: a 32-bit copy just under 4 GiB is fine",
	      dw_inflate_place(&cs, 16, 0, &at) == 0 && at == (size_t)UINT32_MAX - 31 && cs == (size_t)UINT32_MAX - 15);
	cs = SIZE_MAX - 100;
	CHECK("place: a sum that would wrap size_t is refused (64-bit file)",
	      dw_inflate_place(&cs, 90, 1, &at) == -1 && cs == SIZE_MAX - 100);
	cs = 4096;
	CHECK("place: a size beyond SIZE_MAX - 15 is refused", dw_inflate_place(&cs, UINT64_MAX, 1, &at) == -1);
	if (sizeof(size_t) == 8) {
		cs = 4096;
		CHECK("place: a 64-bit copy may pass 4 GiB",
		      dw_inflate_place(&cs, 1ull << 33, 1, &at) == 0 && at == 4096 && cs == 4096 + (1ull << 33));
	}

	if (c1 >= 0)
		close(c1);
	if (c4 >= 0)
		close(c4);
	if (pfd >= 0)
		close(pfd);
	if (zfd >= 0)
		close(zfd);
	int fds1 = check_count_fds();
	printf("# descriptors: %d before, %d after\n", fds0, fds1);
	CHECK("no descriptor left open", fds1 == fds0);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)!system(cmd);
	return CHECK_DONE();
}
