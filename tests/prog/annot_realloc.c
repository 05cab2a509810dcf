/* annot_realloc.c - every realloc and aligned path of libheapann, from stacks of
 * several depths, for tests/run-realloc.sh (issue 14): a block allocated D1 frames
 * deep and reallocated D2 frames deep gets a header of another length, so its
 * header start moves within the same raw block; nothing of the old header may be
 * left where the reader takes it for a header (a damaged one, say).
 *
 * For each depth pair (1..5 x 1..5), each allocator (malloc, calloc, memalign 32,
 * posix_memalign 64 and 128, aligned_alloc 256, valloc, pvalloc) and each resize
 * (shrink in place, grow within the block, grow far, shrink to 1 byte,
 * reallocarray), one block is made and resized; every third is then freed. The
 * program knows its live set: it prints one "ADDR SIZE" line per block it
 * holds and a last line "total N BYTES", all in one write (no stdio: it would
 * allocate), then waits for a line on stdin (tests/lib.sh gcore_waiting).
 * A failed allocation or a lost alignment exits 1 with a line saying so.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

enum alloc_kind { K_MALLOC, K_CALLOC, K_MEMALIGN, K_POSIX64, K_POSIX128, K_ALIGNED, K_VALLOC,
		  K_PVALLOC, NKINDS };
enum resize { R_SHRINK, R_GROW_SMALL, R_GROW_FAR, R_TINY, R_ARRAY, NRESIZES };

#define MAXBLOCKS (5 * 5 * NKINDS * NRESIZES)

static struct { void *p; size_t size; } live[MAXBLOCKS];
static size_t nlive;
static char out[MAXBLOCKS * 48 + 64];

static void die(const char *msg)
{
	(void)!write(2, msg, strlen(msg));
	exit(1);
}

static size_t align_of(enum alloc_kind k)
{
	switch (k) {
	case K_MEMALIGN: return 32;
	case K_POSIX64: return 64;
	case K_POSIX128: return 128;
	case K_ALIGNED: return 256;
	case K_VALLOC: case K_PVALLOC: return (size_t)sysconf(_SC_PAGESIZE);
	default: return 16;
	}
}

static size_t first_size(enum resize r)
{
	return r == R_SHRINK || r == R_TINY ? 600 : r == R_GROW_SMALL ? 100 : 300;
}

/* The allocation, "depth" frames below the caller's. */
static NOINLINE void *alloc_at(int depth, enum alloc_kind k, size_t size)
{
	void *p = NULL;

	if (depth > 1) {
		p = alloc_at(depth - 1, k, size);
		ESCAPE(p);
		return p;
	}
	switch (k) {
	case K_MALLOC: p = malloc(size); break;
	case K_CALLOC: p = calloc(1, size); break;
	case K_MEMALIGN: p = memalign(32, size); break;
	case K_POSIX64: if (posix_memalign(&p, 64, size)) p = NULL; break;
	case K_POSIX128: if (posix_memalign(&p, 128, size)) p = NULL; break;
	case K_ALIGNED: p = aligned_alloc(256, size); break;
	case K_VALLOC: p = valloc(size); break;
	case K_PVALLOC: p = pvalloc(size); break;
	default: break;
	}
	ESCAPE(p);
	return p;
}

/* The resize, "depth" frames below the caller's; *size gets the new size. */
static NOINLINE void *resize_at(int depth, void *p, enum resize r, size_t *size)
{
	void *q;

	if (depth > 1) {
		q = resize_at(depth - 1, p, r, size);
		ESCAPE(q);
		return q;
	}
	switch (r) {
	case R_SHRINK: *size = 400; q = realloc(p, 400); break;
	case R_GROW_SMALL: *size = 104; q = realloc(p, 104); break;
	case R_GROW_FAR: *size = 20000; q = realloc(p, 20000); break;
	case R_TINY: *size = 1; q = realloc(p, 1); break;
	default: *size = 7 * 50; q = reallocarray(p, 7, 50); break;
	}
	ESCAPE(q);
	return q;
}

static char *put_hex(char *o, uintptr_t v)
{
	char tmp[20];
	int n = 0;

	*o++ = '0';
	*o++ = 'x';
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*o++ = tmp[--n];
	return o;
}

static char *put_dec(char *o, size_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*o++ = tmp[--n];
	return o;
}

int main(void)
{
	size_t total = 0, made = 0;
	char *o = out, line[8];

	for (int d1 = 1; d1 <= 5; d1++)
		for (int d2 = 1; d2 <= 5; d2++)
			for (int k = 0; k < NKINDS; k++)
				for (int r = 0; r < NRESIZES; r++) {
					size_t n = first_size((enum resize)r), size;
					unsigned char *p = alloc_at(d1, (enum alloc_kind)k, n);
					unsigned char *q;

					if (!p)
						die("annot_realloc: allocation failed\n");
					if ((uintptr_t)p % align_of((enum alloc_kind)k))
						die("annot_realloc: allocation not aligned\n");
					memset(p, 0x5A, n);
					q = resize_at(d2, p, (enum resize)r, &size);
					if (!q)
						die("annot_realloc: realloc failed\n");
					for (size_t i = 0; i < (size < n ? size : n); i++)
						if (q[i] != 0x5A)
							die("annot_realloc: data lost in realloc\n");
					memset(q, 0xA5, size);
					if (made++ % 3 == 2) {
						free(q);
						continue;
					}
					live[nlive].p = q;
					live[nlive].size = size;
					nlive++;
				}
	for (size_t i = 0; i < nlive; i++) {
		o = put_hex(o + 0, (uintptr_t)live[i].p);
		*o++ = ' ';
		o = put_dec(o, live[i].size);
		*o++ = '\n';
		total += live[i].size;
	}
	memcpy(o, "total ", 6);
	o = put_dec(o + 6, nlive);
	*o++ = ' ';
	o = put_dec(o, total);
	*o++ = '\n';
	/* one write: the test takes the core once the first byte is out */
	if (write(1, out, (size_t)(o - out)) != o - out)
		return 1;
	(void)!read(0, line, sizeof(line));
	return 0;
}
