/* pagerel.h - give pages of a mapped core back to the system while a walk reads it
 * in no particular order (the mark phase of reach.c), so that the process does not
 * end up holding the whole core resident (ru_maxrss counts the page cache pages a
 * mapping holds). The image is a read-only private file mapping (cp_image.map):
 * MADV_DONTNEED there only drops this process's page table entries; a later read
 * faults the same bytes back from the page cache, so releasing too much costs time,
 * never correctness.
 *
 * Reads are noted per 2 MiB granule of the file (a read fault maps the page cache
 * folio it lands in, up to 2 MiB, aligned as much in the file, and the pages of
 * its fault-around window, 64 KiB aligned in memory); once the granules noted
 * since the last release exceed a budget, they are all released, with 64 KiB more
 * either side for a mapping that does not start on a 64 KiB boundary.
 */
#ifndef PAGEREL_H
#define PAGEREL_H

#include <stddef.h>
#include <stdint.h>

#define AN_PAGEREL_GRANULE_SHIFT 21   /* 2 MiB: the largest page cache folio (x86-64) */
#define AN_PAGEREL_SPILL (64u << 10)  /* the kernel's fault-around window */

/* The tracker of one mapping. Zero-initialized it does nothing (an_pagerel_note
 * and _check are then no-ops): that is the state for small images. */
struct an_pagerel {
	uintptr_t lo, hi;      /* the mapping [lo, hi) */
	uint64_t *bits;        /* one bit per granule noted since the last release */
	size_t ngran;
	size_t budget;         /* granules noted before a release */
	size_t noted;          /* granules noted since the last release (may miss a
				* few noted during a flush by another thread) */
	uint64_t released;     /* bytes given back so far (madvise lengths, summed) */
	unsigned nreleases;    /* times the noted granules were released */
};

/* Track the mapping [map, map + size) (map on a page boundary) and release what
 * was read once more than budget bytes of it (rounded up to whole granules, at
 * least one) have been read since the last release. budget 0 leaves *r inert (nothing is ever released).
 * Returns 0, or -1 out of memory (*r is then inert too). */
int an_pagerel_init(struct an_pagerel *r, const void *map, size_t size, uint64_t budget);

/* Note that [p, p + len) was read. Safe to call from several threads at once
 * (bits are set atomically); bytes outside the mapping are ignored. */
void an_pagerel_note(struct an_pagerel *r, const void *p, uint64_t len);

/* Release the noted granules when they exceed the budget. Call from one thread
 * at a time; other threads may go on noting and reading meanwhile (a read of a
 * page being released faults it back; a bit noted during the flush is released
 * by this one or the next). */
void an_pagerel_check(struct an_pagerel *r);

/* Release every noted granule now (same rule as an_pagerel_check). */
void an_pagerel_flush(struct an_pagerel *r);

/* Release the whole pages inside [p, p + len) at once, without noting them: for
 * bytes read once, in order (roots, --refs). Any thread; nothing to set up. */
void an_pagerel_drop(const void *p, uint64_t len);

/* Free the bitmap; nothing is released. *r is zeroed. */
void an_pagerel_release(struct an_pagerel *r);

#endif /* PAGEREL_H */
