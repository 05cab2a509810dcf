/* pagerel.c - release the pages of a mapped core that a walk has read (see
 * pagerel.h): a bitmap of 2 MiB granules noted since the last release, released
 * run by run with MADV_DONTNEED once they exceed a budget.
 *
 * Granules count from the start of the mapping, that is from offset 0 of the file:
 * the page cache's folios are aligned to their size in the file, so one never
 * straddles two granules; the kernel may map all of a folio on one read fault.
 *
 * madvise() failing is not an error here: the pages then stay mapped, which only
 * costs memory (as before this file existed).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pagerel.h"

#define GSHIFT AN_PAGEREL_GRANULE_SHIFT
#define SPILL AN_PAGEREL_SPILL
#define PAGE 4096u

int an_pagerel_init(struct an_pagerel *r, const void *map, size_t size, uint64_t budget)
{
	memset(r, 0, sizeof(*r));
	if (!budget || !size)
		return 0;
	r->lo = (uintptr_t)map;
	r->hi = r->lo + size;
	r->ngran = ((size - 1) >> GSHIFT) + 1;
	r->bits = calloc((r->ngran + 63) / 64, sizeof(*r->bits));
	if (!r->bits) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	r->budget = (size_t)((budget + (1u << GSHIFT) - 1) >> GSHIFT);
	if (r->budget == 0)
		r->budget = 1;
	return 0;
}

void an_pagerel_note(struct an_pagerel *r, const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p, e;
	size_t g, gz;

	if (!r->bits || !len || a >= r->hi)
		return;
	e = len >= r->hi - a ? r->hi : a + (uintptr_t)len;
	if (e <= r->lo)
		return;
	if (a < r->lo)
		a = r->lo;
	g = (a - r->lo) >> GSHIFT;
	gz = (e - 1 - r->lo) >> GSHIFT;
	for (; g <= gz; g++) {
		uint64_t bit = 1ull << (g & 63), *w = &r->bits[g / 64];

		/* a plain look first: consecutive blocks mostly share a granule, and
		 * an atomic write of a shared word on every read would bounce it
		 * between the threads */
		if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit)
			continue;
		if (__atomic_fetch_or(w, bit, __ATOMIC_RELAXED) & bit)
			continue;
		__atomic_fetch_add(&r->noted, 1, __ATOMIC_RELAXED);
	}
}

/* madvise(MADV_DONTNEED) granules [g, g + n) and SPILL bytes either side,
 * clipped to the mapping. */
static void release_run(struct an_pagerel *r, size_t g, size_t n)
{
	uintptr_t a = r->lo + ((uintptr_t)g << GSHIFT), e;

	e = (uintptr_t)(n << GSHIFT) >= r->hi - a ? r->hi : a + ((uintptr_t)n << GSHIFT);
	a = a - r->lo > SPILL ? a - SPILL : r->lo;   /* the mapping starts on a page boundary */
	e = r->hi - e > SPILL ? e + SPILL : r->hi;
	e = (e + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
	if (e > a && madvise((void *)a, e - a, MADV_DONTNEED) == 0)
		r->released += e - a;
}

void an_pagerel_flush(struct an_pagerel *r)
{
	size_t start = 0, run = 0;

	if (!r->bits)
		return;
	__atomic_store_n(&r->noted, 0, __ATOMIC_RELAXED);
	/* every word (one per 4 MiB of mapping: a 1 TB core has 256 Ki of them),
	 * taken and cleared at once, so that a bit set meanwhile by another thread
	 * is either released now or left for the next flush; runs of consecutive
	 * granules are released with one madvise each */
	for (size_t w = 0; w < (r->ngran + 63) / 64; w++) {
		uint64_t v;

		if (!__atomic_load_n(&r->bits[w], __ATOMIC_RELAXED))
			continue;
		v = __atomic_exchange_n(&r->bits[w], 0, __ATOMIC_RELAXED);
		while (v) {
			size_t g = w * 64 + (size_t)__builtin_ctzll(v);

			v &= v - 1;
			if (run && g == start + run) {
				run++;
				continue;
			}
			if (run)
				release_run(r, start, run);
			start = g;
			run = 1;
		}
	}
	if (run)
		release_run(r, start, run);
	r->nreleases++;
}

void an_pagerel_check(struct an_pagerel *r)
{
	if (r->bits && __atomic_load_n(&r->noted, __ATOMIC_RELAXED) >= r->budget)
		an_pagerel_flush(r);
}

void an_pagerel_drop(const void *p, uint64_t len)
{
	uintptr_t a = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
	uintptr_t e = ((uintptr_t)p + (uintptr_t)len) & ~(uintptr_t)(PAGE - 1);

	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

void an_pagerel_release(struct an_pagerel *r)
{
	free(r->bits);
	memset(r, 0, sizeof(*r));
}
