/* t_scanptr.c - the scanner's notes of the words that may be addresses
 * (cp_scan.ptr_words, cp_scan_may_point; issue 15): on a raw 64-bit image with
 * known values, the exact answer for single words and for ranges across the
 * bitmap's 64-bit words, the same notes from the SIMD windows, the word-by-word
 * tail and two threads in tiny chunks, and no notes where the scanner takes
 * none (big-endian, 32-bit images).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coreparse.h"

#define BASE 0x7F0000010000ull   /* upper half 0x7F00: values there may be addresses */
#define NWORDS 1000u

static unsigned char img_bytes[NWORDS * 8];

static void put64(unsigned i, uint64_t v, int big)
{
	for (unsigned k = 0; k < 8; k++)
		img_bytes[8 * i + (big ? 7 - k : k)] = (unsigned char)(v >> (8 * k));
}

/* word i of the image may be an address: a value in [0x7F00 << 32, 0x7F01 << 32) */
static int is_addr(unsigned i)
{
	return i % 97 == 5 || i == 64 || i == 127 || i == 128 || i == 999;
}

static void fill(int big)
{
	for (unsigned i = 0; i < NWORDS; i++) {
		uint64_t v;

		if (is_addr(i))
			v = BASE + 8 * i;                      /* in the image */
		else if (i % 3 == 0)
			v = 0x8080808080808080ull;             /* memset data */
		else if (i % 3 == 1)
			v = (0x7F01ull << 32) | i;             /* just past the range */
		else
			v = i * 7;                             /* a small number */
		put64(i, v, big);
	}
}

static struct cp_image *open_img(const char *path, uint64_t base, unsigned w, int big)
{
	struct cp_error err = { 0 };
	FILE *f = fopen(path, "wb");
	struct cp_image *img;

	if (!f || fwrite(img_bytes, 1, sizeof(img_bytes), f) != sizeof(img_bytes) || fclose(f) != 0)
		return NULL;
	img = cp_image_open_raw(path, base, w, big, w == 8 ? 62 : 8, &err);
	if (!img)
		printf("# %s\n", err.msg);
	return img;
}

/* The answer the notes must give for words [i, j): 1 if one of them is an
 * address, or a small number (upper half 0 is outside [0x7F00, 0x7F00]: no). */
static int want(unsigned i, unsigned j)
{
	for (; i < j; i++)
		if (is_addr(i))
			return 1;
	return 0;
}

static int all_ranges_exact(const struct cp_scan *sc, const struct cp_image *img)
{
	const struct cp_segment *s = &img->segs[0];

	for (unsigned i = 0; i < NWORDS; i++)
		for (unsigned n = 1; n <= 140 && i + n <= NWORDS; n += (n < 70 ? 1 : 13))
			if (cp_scan_may_point(sc, img, s, BASE + 8ull * i, BASE + 8ull * (i + n)) != want(i, i + n)) {
				printf("# words [%u, %u): got %d\n", i, i + n,
				       cp_scan_may_point(sc, img, s, BASE + 8ull * i, BASE + 8ull * (i + n)));
				return 0;
			}
	return 1;
}

int main(void)
{
	char path[] = "/tmp/t_scanptr.XXXXXX";
	int fd = mkstemp(path);
	struct cp_image *img;
	struct cp_scan s1, s2;
	struct cp_scan_options o;
	struct cp_error err = { 0 };

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	fill(0);
	img = open_img(path, BASE, 8, 0);
	CHECK("64-bit little-endian raw image opens", img != NULL);
	if (img && cp_scan_image(img, 1, &s1, &err) == 0) {
		const struct cp_segment *s = &img->segs[0];

		CHECK("notes taken, for the image's 4 GiB step", s1.ptr_words != NULL &&
		      s1.ptr_lo == 0x7F0000000000ull && s1.ptr_hi == 0x7F00FFFFFFFFull);
		CHECK("single words and ranges across bitmap words: exact", all_ranges_exact(&s1, img));
		CHECK("words 103..126 hold none, 102 and 127 do",
		      cp_scan_may_point(&s1, img, s, BASE + 8 * 103, BASE + 8 * 127) == 0 &&
		      cp_scan_may_point(&s1, img, s, BASE + 8 * 102, BASE + 8 * 103) == 1 &&
		      cp_scan_may_point(&s1, img, s, BASE + 8 * 126, BASE + 8 * 128) == 1);
		CHECK("unknown answers 1: no scan, a range past the dump, a misaligned start",
		      cp_scan_may_point(NULL, img, s, BASE + 8 * 65, BASE + 8 * 127) == 1 &&
		      cp_scan_may_point(&s1, img, s, BASE + 8 * 990, BASE + 8 * 1001) == 1 &&
		      cp_scan_may_point(&s1, img, s, BASE + 8 * 65 + 4, BASE + 8 * 127) == 1);
		memset(&o, 0, sizeof(o));
		o.nthreads = 2;
		o.chunk_bytes = 24;   /* every word through the word-by-word tail */
		CHECK("two threads in tiny chunks: the same notes",
		      cp_scan_image_opts(img, &o, &s2, &err) == 0 && s2.ptr_words &&
		      !memcmp(s1.ptr_words, s2.ptr_words, (NWORDS + 63) / 64 * 8));
		cp_scan_free(&s2);
		o.chunk_bytes = 264;  /* one SIMD window and a tail per chunk, windows misaligned */
		CHECK("chunks of 264 bytes: the same notes",
		      cp_scan_image_opts(img, &o, &s2, &err) == 0 && s2.ptr_words &&
		      !memcmp(s1.ptr_words, s2.ptr_words, (NWORDS + 63) / 64 * 8));
		cp_scan_free(&s2);
		cp_scan_free(&s1);
	} else {
		CHECK("scan", 0);
	}
	cp_image_free(img);

	fill(1);
	img = open_img(path, BASE, 8, 1);
	CHECK("big-endian image: no notes, every range may point", img && cp_scan_image(img, 1, &s1, &err) == 0 &&
	      s1.ptr_words == NULL && cp_scan_may_point(&s1, img, &img->segs[0], BASE, BASE + 800) == 1);
	if (img)
		cp_scan_free(&s1);
	cp_image_free(img);
	img = open_img(path, 0x10000, 4, 0);
	CHECK("32-bit image: no notes", img && cp_scan_image(img, 1, &s1, &err) == 0 && s1.ptr_words == NULL);
	if (img)
		cp_scan_free(&s1);
	cp_image_free(img);
	unlink(path);
	return CHECK_DONE();
}
