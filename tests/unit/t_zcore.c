/* t_zcore.c - compressed images (coreparse/zcore.c): a 24 MiB image of data and
 * zero runs, compressed here with libzstd, zlib and liblzma (one frame, and two
 * frames/members/streams in a row), must map back byte for byte, with its zero
 * pages left as holes in an unlinked temporary file under $TMPDIR that is gone
 * with the image. Cut or damaged files fail with CP_EFORMAT and a message naming
 * the file and the format, never a partial image. */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "check.h"
#include "cp_priv.h"   /* cp_compression_detect */

#define MIB (1u << 20)
#define N (24 * MIB + 1234)   /* not a whole number of pages: the last one is partial */
#define BASE 0x10000000ull

static unsigned char *data;
static size_t nonzero;        /* bytes in pages that are not all zero */
static char dir[256];

/* 1 MiB of counting words (compressible, like a heap of small structs), then
 * 2 MiB of zeros, again and again; the file ends with a partial nonzero page. */
static void make_data(void)
{
	data = calloc(1, N);
	for (size_t off = 0; off < N; off += 3 * MIB) {
		size_t end = off + MIB < N ? off + MIB : N;

		for (size_t i = off; i + 8 <= end; i += 8) {
			uint64_t w = 0x5000000000ull + (i / 64) * 48 + (i & 63);

			memcpy(data + i, &w, 8);
		}
	}
	memset(data + N - 1234, 0x5a, 1234);
	for (size_t p = 0; p < N; p += 4096) {
		size_t n = N - p < 4096 ? N - p : 4096;
		size_t k;

		for (k = 0; k < n && !data[p + k]; k++)
			;
		if (k < n)
			nonzero += n;
	}
}

/* Compress src[0..n) as fmt into a malloc'd buffer; *len its size. */
static unsigned char *pack(enum cp_compression fmt, const unsigned char *src, size_t n, size_t *len)
{
	unsigned char *out = NULL;

	if (fmt == CP_COMP_ZSTD) {
		ZSTD_CCtx *c = ZSTD_createCCtx();
		size_t cap = ZSTD_compressBound(n);

		out = malloc(cap);
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);   /* as the zstd CLI */
		*len = ZSTD_compress2(c, out, cap, src, n);
		ZSTD_freeCCtx(c);
		if (ZSTD_isError(*len))
			*len = 0;
	} else if (fmt == CP_COMP_GZIP) {
		z_stream z;

		memset(&z, 0, sizeof(z));
		deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
		*len = deflateBound(&z, n);
		out = malloc(*len);
		z.next_in = (unsigned char *)src;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = (uInt)*len;
		*len = deflate(&z, Z_FINISH) == Z_STREAM_END ? z.total_out : 0;
		deflateEnd(&z);
	} else {
		size_t cap = lzma_stream_buffer_bound(n), pos = 0;

		out = malloc(cap);
		*len = lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, src, n, out, &pos, cap) == LZMA_OK ?
		       pos : 0;
	}
	return out;
}

static void write_file(const char *path, const unsigned char *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* Entries in the temporary directory other than . and .. */
static int dir_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void check_image(const char *what, const char *path, enum cp_compression fmt, size_t clen)
{
	struct cp_error err = { 0 };
	struct cp_image *img = cp_image_open_raw(path, BASE, 8, 0, EM_X86_64, &err);
	char name[160];
	struct stat st;

#define C(label, expr) do { snprintf(name, sizeof name, "%s: %s", what, label); CHECK(name, expr); } while (0)
	C("opens", img != NULL);
	if (!img) {
		printf("    # %s\n", err.msg);
		return;
	}
	C("compression found by the magic", img->compression == fmt);
	C("24 MiB + 1234 bytes uncompressed", img->map_size == N);
	C("compressed size on disk", img->file_size == clen);
	C("every byte as compressed", img->map_size == N && !memcmp(img->map, data, N));
	C("one segment at the base", img->nsegs == 1 && img->segs[0].vaddr == BASE && img->segs[0].avail == N);
	C("the temporary file has no name", fstat(img->data_fd, &st) == 0 && st.st_nlink == 0);
	C("and the image's size", st.st_size == (off_t)N);
	/* 16 MiB of the 24 are zero pages: holes, not blocks on disk (slack for
	 * file system metadata blocks) */
	C("zero pages are holes", (uint64_t)st.st_blocks * 512 <= nonzero + 256 * 1024);
	C("nothing left in $TMPDIR while open", dir_entries() == 0);
	{
		int fd = open(cp_image_data_path(img), O_RDONLY);
		unsigned char b[8];

		C("data path opens the same bytes", fd >= 0 && pread(fd, b, 8, 8 * MIB + 64) == 8 &&
		  !memcmp(b, data + 8 * MIB + 64, 8));
		if (fd >= 0)
			close(fd);
	}
	cp_image_free(img);
#undef C
}

/* A cut or damaged file: no image, CP_EFORMAT, and the message names the file and
 * starts with want (after "PATH: "). */
static int fails_with(const char *path, const char *want)
{
	struct cp_error err = { 0 };
	struct cp_image *img = cp_image_open_raw(path, BASE, 8, 0, EM_X86_64, &err);
	size_t pl = strlen(path);
	int ok;

	ok = !img && err.code == CP_EFORMAT && !strncmp(err.msg, path, pl) &&
	     !strncmp(err.msg + pl, ": ", 2) && !strncmp(err.msg + pl + 2, want, strlen(want)) &&
	     !strchr(err.msg, '\n');
	if (!ok)
		printf("    # got: %s (code %d)\n", err.msg, err.code);
	cp_image_free(img);
	return ok;
}

int main(void)
{
	static const enum cp_compression fmts[] = { CP_COMP_ZSTD, CP_COMP_GZIP, CP_COMP_XZ };
	const char *top = getenv("TMPDIR");
	char path[300], name[200];

	snprintf(dir, sizeof dir, "%s/t_zcore.XXXXXX", top && *top ? top : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 77;
	}
	setenv("TMPDIR", dir, 1);
	snprintf(path, sizeof path, "%s.in", dir);   /* the compressed inputs live beside it */
	make_data();
	CHECK("test data: 8 MiB + 1234 bytes in nonzero pages", nonzero == 8 * MIB + 1234);

	{
		static const unsigned char zs[] = { 0x28, 0xb5, 0x2f, 0xfd, 0 }, gz[] = { 0x1f, 0x8b, 8 },
			gz9[] = { 0x1f, 0x8b, 9 }, xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 };

		CHECK("detect: zstd magic", cp_compression_detect(zs, 4) == CP_COMP_ZSTD);
		CHECK("detect: gzip magic with deflate", cp_compression_detect(gz, 3) == CP_COMP_GZIP);
		CHECK("detect: 1f 8b without deflate is not gzip", cp_compression_detect(gz9, 3) == CP_COMP_NONE);
		CHECK("detect: xz magic", cp_compression_detect(xz, 6) == CP_COMP_XZ);
		CHECK("detect: 5 bytes of xz's 6 are not xz", cp_compression_detect(xz, 5) == CP_COMP_NONE);
		CHECK("detect: ELF is not compressed", cp_compression_detect((const unsigned char *)ELFMAG, 4) == CP_COMP_NONE);
	}

	for (size_t f = 0; f < 3; f++) {
		enum cp_compression fmt = fmts[f];
		const char *fn = cp_compression_name(fmt);
		size_t len, len1, len2;
		unsigned char *z = pack(fmt, data, N, &len);
		unsigned char *z1 = pack(fmt, data, 10 * MIB + 7, &len1);
		unsigned char *z2 = pack(fmt, data + 10 * MIB + 7, N - 10 * MIB - 7, &len2);
		char want[128];

		snprintf(name, sizeof name, "%s: compressed here", fn);
		CHECK(name, len && len1 && len2);
		if (!len || !len1 || !len2)
			continue;
		write_file(path, z, len);
		snprintf(name, sizeof name, "%s, one %s", fn, fmt == CP_COMP_ZSTD ? "frame" :
			 fmt == CP_COMP_GZIP ? "member" : "stream");
		check_image(name, path, fmt, len);

		/* two in a row, cut at an odd place (zstd -T, cat a.gz b.gz, xz of parts) */
		{
			unsigned char *two = malloc(len1 + len2);

			memcpy(two, z1, len1);
			memcpy(two + len1, z2, len2);
			write_file(path, two, len1 + len2);
			snprintf(name, sizeof name, "%s, two in a row", fn);
			check_image(name, path, fmt, len1 + len2);
			free(two);
		}

		/* cut anywhere after the magic: truncated after exactly that many bytes */
		{
			const size_t cuts[] = { 6, 7, 20, len / 3, len / 2, len - 9, len - 1 };

			for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
				write_file(path, z, cuts[c]);
				snprintf(want, sizeof want, "%s data truncated after %zu bytes (", fn, cuts[c]);
				snprintf(name, sizeof name, "%s cut after %zu of %zu bytes: \"%s...\"", fn, cuts[c],
					 len, want);
				CHECK(name, fails_with(path, want));
			}
		}
		/* damage in the middle: the decoder or the checksum notices it */
		{
			unsigned char *bad = malloc(len);

			memcpy(bad, z, len);
			for (size_t i = 0; i < 8; i++)
				bad[len / 2 + i] ^= 0x55;
			write_file(path, bad, len);
			snprintf(want, sizeof want, "%s data corrupt: ", fn);
			snprintf(name, sizeof name, "%s with 8 bytes flipped in the middle: \"%s...\"", fn, want);
			CHECK(name, fails_with(path, want));
			free(bad);
		}
		/* something else after the data */
		if (fmt == CP_COMP_GZIP) {
			unsigned char *tail = malloc(len + 7);

			memcpy(tail, z, len);
			memcpy(tail + len, "garbage", 7);
			write_file(path, tail, len + 7);
			snprintf(want, sizeof want, "gzip data ends at byte %zu of %zu: the bytes after it are not gzip",
				 len, len + 7);
			CHECK("gzip followed by garbage", fails_with(path, want));
			free(tail);
		}
		/* a core reader wants an ELF: the same message as for a plain file */
		write_file(path, z, len);
		{
			struct cp_error err = { 0 };
			struct cp_image *img = cp_image_open_core(path, &err);
			char exp[400];

			snprintf(exp, sizeof exp, "%s: not an ELF file", path);
			snprintf(name, sizeof name, "%s of a non-ELF as a core: \"not an ELF file\"", fn);
			CHECK(name, !img && err.code == CP_EFORMAT && !strcmp(err.msg, exp));
			cp_image_free(img);
		}
		free(z);
		free(z1);
		free(z2);
	}

	/* nowhere to put the decompressed bytes */
	{
		size_t len;
		unsigned char *z = pack(CP_COMP_ZSTD, data, MIB, &len);
		struct cp_error err = { 0 };
		struct cp_image *img;
		char exp[400];

		write_file(path, z, len);
		setenv("TMPDIR", "/nonexistent-mprof-dir", 1);
		img = cp_image_open_raw(path, BASE, 8, 0, EM_X86_64, &err);
		snprintf(exp, sizeof exp, "%s: cannot create a temporary file in /nonexistent-mprof-dir: "
			 "No such file or directory", path);
		CHECK("$TMPDIR missing: CP_EIO naming the file and the directory",
		      !img && err.code == CP_EIO && !strcmp(err.msg, exp));
		if (strcmp(err.msg, exp))
			printf("    # got: %s\n", err.msg);
		cp_image_free(img);
		setenv("TMPDIR", dir, 1);
		free(z);
	}

	CHECK("$TMPDIR empty at the end", dir_entries() == 0);
	unlink(path);
	rmdir(dir);
	free(data);
	return CHECK_DONE();
}
