/* annot_fwalloc.c - firmware with its own allocator under the static kit: it
 * defines the seven ha_real_* functions (a bump allocator over a static arena,
 * sizes kept in a word before each block), so libheapann.a annotates on top of
 * it and real_wrap.o is never linked. Checks that every block is annotated,
 * that its header reads back, and that the firmware allocator did the work. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "heapann_block.h"

static _Alignas(4096) unsigned char arena[8 << 20];
static size_t used;
static unsigned long n_alloc, n_free;

/* Bump-allocate SIZE bytes aligned to ALIGN (>= 16), with the size in the word
 * before the block. */
static void *fw_alloc(size_t align, size_t size)
{
	size_t start = (used + sizeof(size_t) + align - 1) & ~(align - 1);

	if (start + size > sizeof(arena))
		return NULL;
	used = start + size;
	((size_t *)(arena + start))[-1] = size;
	n_alloc++;
	return arena + start;
}

void *ha_real_malloc(size_t size) { return fw_alloc(16, size); }
void ha_real_free(void *p) { if (p) n_free++; }
void *ha_real_calloc(size_t n, size_t size)
{
	void *p = n && size > SIZE_MAX / n ? NULL : fw_alloc(16, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}
size_t ha_real_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
void *ha_real_realloc(void *p, size_t size)
{
	void *q = fw_alloc(16, size);
	size_t old = ha_real_usable_size(p);
	if (q && p)
		memcpy(q, p, old < size ? old : size);
	ha_real_free(p);
	return q;
}
void *ha_real_memalign(size_t align, size_t size) { return fw_alloc(align, size); }
void ha_real_init(void) { }

static int annotated(const void *p, size_t size)
{
	uintptr_t a = (uintptr_t)p;
	const uintptr_t *u;
	unsigned d;

	__asm__("" : "+r"(a));
	u = (const uintptr_t *)a;
	d = u[-1] & HEAPANN_END_DEPTH_MASK;
	return (u[-1] & ~(uintptr_t)HEAPANN_END_DEPTH_MASK) == HEAPANN_END_LIVE64 &&
	       u[-(long)(7 + d)] == HEAPANN_START_LIVE64 && u[-(long)(7 + d) + HEAPANN_W_SIZE] == size &&
	       (unsigned char *)p > arena && (unsigned char *)p < arena + sizeof(arena);
}

int main(void)
{
	unsigned long before = n_alloc;
	char *a = malloc(100), *b = calloc(10, 10), *c = aligned_alloc(256, 10), *s;

	CHECK("malloc annotated, in the firmware arena", a && annotated(a, 100));
	CHECK("calloc annotated, zeroed", b && annotated(b, 100) && b[0] == 0 && b[99] == 0);
	CHECK("aligned_alloc annotated, 256-aligned", c && annotated(c, 10) && ((uintptr_t)c & 255) == 0);
	strcpy(a, "firmware");
	a = realloc(a, 5000);
	CHECK("realloc annotated, content kept", a && annotated(a, 5000) && strcmp(a, "firmware") == 0);
	s = strdup("libc calls are wrapped too");
	CHECK("strdup inside libc annotated", s && annotated(s, 27));
	CHECK("the firmware allocator made them", n_alloc - before >= 5);
	free(a);
	free(b);
	free(c);
	free(s);
	CHECK("frees reached the firmware allocator", n_free >= 4);
	return CHECK_DONE();
}
