/* annot_header.c - proves the preload (or the static kit) is active and that
 * a block's header reads back right: size, depth equal to the real chain length
 * (as glibc's backtrace() sees it, clipped to HEAPANN_DEPTH), frame 0 inside
 * the function that called malloc, the outer frames equal to backtrace()'s,
 * a valid check word, the guard, sequence numbers, and the header rewritten by
 * realloc. `annot_header overflow` writes 3 bytes past a 24-byte block and
 * frees it, `doublefree` frees a block twice, `underflow` breaks a live
 * header's START word and frees the block (run-annotate.sh checks stderr). */
#include <execinfo.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "annot_hdr.h"

#define BT_MAX 300

/* What one allocation site saw: the block and glibc's backtrace() right after. */
struct site {
	void *p;                /* the block */
	void *bt[BT_MAX];       /* backtrace() taken just after the malloc call */
	int nbt;                /* its length */
	uintptr_t fn;           /* address of the allocating function */
};

__attribute__((noinline)) static void leaf(struct site *s, size_t n)
{
	s->p = malloc(n);
	s->nbt = backtrace(s->bt, BT_MAX);
	s->fn = (uintptr_t)leaf;
	__asm__ volatile("");
}

__attribute__((noinline)) static void mid(struct site *s, size_t n)
{
	leaf(s, n);
	__asm__ volatile("");
}

__attribute__((noinline)) static void deep(struct site *s, int levels)
{
	if (levels > 0) {
		deep(s, levels - 1);
		__asm__ volatile("");
		return;
	}
	s->p = malloc(77);
	s->nbt = backtrace(s->bt, BT_MAX);
	s->fn = (uintptr_t)deep;
}

__attribute__((noinline)) static void grow(struct site *s, size_t n)
{
	s->p = realloc(s->p, n);
	s->nbt = backtrace(s->bt, BT_MAX);
	s->fn = (uintptr_t)grow;
	__asm__ volatile("");
}

static unsigned env_uint(const char *name, unsigned def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned)atoi(v) : def;
}

/* Check the frames of site S against its backtrace: frame 0 between the start
 * of the allocating function and the backtrace() call, then equal frames. */
static void check_frames(const char *what, struct site *s, const char *mode, unsigned limit)
{
	uintptr_t *h = header_of(s->p);
	unsigned d, i, want, same = 0;
	char name[128];

	snprintf(name, sizeof(name), "%s: valid header", what);
	CHECK(name, h != NULL);
	if (!h)
		return;
	d = (unsigned)heapann_depth_frames(h[HEAPANN_W_DEPTH]);
	if (strcmp(mode, "none") == 0) {
		snprintf(name, sizeof(name), "%s: no frames with HEAPANN_UNWIND=none", what);
		CHECK(name, d == 0);
		return;
	}
	snprintf(name, sizeof(name), "%s: frame 0 inside the calling function", what);
	CHECK(name, d > 0 && h[HEAPANN_W_FRAMES] > s->fn && h[HEAPANN_W_FRAMES] < (uintptr_t)s->bt[0]);
	if (strcmp(mode, "fp") == 0) {
		/* A frame-pointer walk stops or skips in code without frame pointers
		 * (libc's start-up): only our own frames are certain. */
		want = limit < 3 ? limit : 3;
		for (i = 1; i < want && i < d; i++)
			same += h[HEAPANN_W_FRAMES + i] == (uintptr_t)s->bt[i];
		snprintf(name, sizeof(name), "%s: fp: first %u frames match", what, want);
		CHECK(name, d >= want && same == want - 1);
		return;
	}
	want = (unsigned)s->nbt < limit ? (unsigned)s->nbt : limit;
	snprintf(name, sizeof(name), "%s: depth %u is the chain length (%d) clipped to %u",
		 what, d, s->nbt, limit);
	CHECK(name, d == want);
	/* cut (HEAPANN_DEPTH_CUT) exactly when the chain is longer than the limit */
	snprintf(name, sizeof(name), "%s: %s", what, (unsigned)s->nbt > limit ?
		 "marked cut (the chain is longer than the limit)" : "not marked cut (whole)");
	CHECK(name, heapann_depth_cut(h[HEAPANN_W_DEPTH]) == ((unsigned)s->nbt > limit));
	for (i = 1; i < d && i < (unsigned)s->nbt; i++)
		same += h[HEAPANN_W_FRAMES + i] == (uintptr_t)s->bt[i];
	snprintf(name, sizeof(name), "%s: frames 1..%u equal backtrace()", what, d - 1);
	CHECK(name, d > 0 && same == d - 1);
}

int main(int argc, char **argv)
{
	const char *mode = getenv("HEAPANN_UNWIND") ? getenv("HEAPANN_UNWIND") : "cfi";
	unsigned limit = env_uint("HEAPANN_DEPTH", 32);
	unsigned guard = env_uint("HEAPANN_GUARD", 8);
	static struct site a, b, c;
	uintptr_t *h, seq1;
	unsigned char *u;
	unsigned i, bad;

	if (limit > 256)
		limit = 256;
	if (argc > 1 && strcmp(argv[1], "overflow") == 0) {
		char *p = malloc(24);
		printf("%p\n", (void *)p);
		fflush(stdout);
		memcpy(launder(p), "0123456789abcdefghijklmnopqrstuv", 27);
		free(p);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "doublefree") == 0) {
		/* Under the preload the second free is reported and ignored. */
		char *p = malloc(40);
		printf("%p\n", (void *)p);
		fflush(stdout);
		free(p);
		free(launder(p));
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "underflow") == 0) {
		/* Overwrite the START word of a live block, then free it: reported,
		 * the block is leaked, the program goes on. */
		char *p = malloc(40);
		uintptr_t *u = launder(p);
		unsigned d = u[-1] & HEAPANN_END_DEPTH_MASK;
		printf("%p\n", (void *)p);
		fflush(stdout);
		u[-(long)(7 + d)] = 0;
		free(p);
		p = malloc(10);
		free(p);
		return 0;
	}
	backtrace(a.bt, 1);     /* load backtrace()'s unwinder before the checks */

	mid(&a, 100);
	h = header_of(a.p);
	CHECK("preload active: block has a valid header", h != NULL);
	if (!h)
		return CHECK_DONE();
	CHECK("size 100", h[HEAPANN_W_SIZE] == 100);
	CHECK("version", heapann_info_version(h[HEAPANN_W_INFO]) == HEAPANN_VERSION);
	CHECK("guard length from HEAPANN_GUARD", heapann_info_guard(h[HEAPANN_W_INFO]) == guard);
	u = launder(a.p);
	for (i = 0, bad = 0; i < guard; i++)
		bad += u[100 + i] != HEAPANN_GUARD_BYTE;
	CHECK("guard bytes present", bad == 0);
	CHECK("user pointer 16-aligned", ((uintptr_t)a.p & 15) == 0);
	CHECK("raw block = H - pad words is 16-aligned",
	      (((uintptr_t)h - heapann_info_pad(h[HEAPANN_W_INFO]) * 8) & 15) == 0);
	CHECK("usable size is the requested size with a guard",
	      guard == 0 || malloc_usable_size(a.p) == 100);
	check_frames("malloc via mid/leaf", &a, mode, limit);
	seq1 = h[HEAPANN_W_SEQ];

	deep(&b, 60);
	check_frames("malloc 60 calls deep", &b, mode, limit);
	h = header_of(b.p);
	CHECK("sequence numbers increase", h && h[HEAPANN_W_SEQ] > seq1);

	c.p = a.p;
	grow(&c, 5000);
	h = header_of(c.p);
	CHECK("realloc: header rewritten with the new size", h && h[HEAPANN_W_SIZE] == 5000);
	check_frames("realloc from grow", &c, mode, limit);

	free(c.p);
	free(b.p);
	return CHECK_DONE();
}
