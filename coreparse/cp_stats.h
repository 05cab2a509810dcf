/* cp_stats.h - find libheapann's statistics region (include/heapann_stats.h) in an
 * image and decode it into plain host structs.
 *
 * The region is a claim like any header: its signature, version, sizes and check
 * word are validated before anything in it is believed. Its stacks' frames are
 * interned into the scan's addrs and stacks tables, so that one symbolizer pass
 * names both (call cp_stats_read() after cp_scan_image() and before sym_resolve()).
 */
#ifndef CP_STATS_H
#define CP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "coreparse.h"
#include "heapann_stats.h"
#include "heapann_unload.h"

/* A library libheapann saw dlclose unload (include/heapann_unload.h). */
struct cp_unloaded {
	uint64_t seq;                    /* last allocation sequence number before it */
	uint64_t bias, lo, hi;           /* load bias, PT_LOAD span [lo, hi) */
	unsigned idlen;                  /* bytes of build-id in id (0: none) */
	unsigned char id[HEAPANN_UNLOAD_ID_MAX];
	char path[HEAPANN_UNLOAD_PATH_MAX]; /* absolute, NUL-terminated */
};

/* The decoded table of unloaded libraries. v is owned (free() it, or
 * cp_stats_free() for the one in struct cp_stats). */
struct cp_unload_table {
	struct cp_unloaded *v;           /* the READY, well-formed records, in table order */
	size_t n;
	size_t skipped;                  /* records being written or malformed */
	uint64_t dropped;                /* unloads the full table had no room for */
};

/* One stack of the region's table. frees, bytes_freed and cls_freed are derived
 * by cp_stats_read() (allocations minus the scan's live blocks under the stack):
 * libheapann does not count them (heapann_stats.h). */
struct cp_stats_stack {
	uint32_t stack;                  /* index into cp_scan.stacks */
	uint64_t allocs, frees, bytes, bytes_freed;
	uint64_t temp;                   /* temporary allocations (heapann_stats.h TEMP;
					  * 0 when !cp_stats.temp_counted) */
	uint64_t cls_bytes[HEAPANN_STATS_NCLASSES];
	uint64_t cls_freed[HEAPANN_STATS_NCLASSES];
};

struct cp_stats_bin {
	uint64_t allocs, bytes, frees, bytes_freed;
};

struct cp_stats_sample {
	uint64_t time;                   /* bytes allocated + freed so far */
	uint64_t live;                   /* live requested bytes then */
};

/* The decoded region. Arrays are owned by the struct; release with cp_stats_free(). */
struct cp_stats {
	uint64_t addr;                   /* where the region is in the target */
	uint64_t allocs, frees, bytes, bytes_freed, live_bytes;
	uint64_t peak_live, peak_time, time;
	uint64_t unrecorded_allocs, unrecorded_bytes;
	uint64_t unrecorded_frees;       /* derived: unrecorded allocs minus the live
					  * blocks whose stack has no entry */
	uint64_t calls[HEAPANN_NCALLS];  /* per entry point, enum heapann_call */
	uint64_t guard_breaks;           /* broken guards libheapann found at free or
					  * realloc (those blocks are gone) */
	uint64_t bad_frees;              /* frees/reallocs of a freed or damaged block */
	uint64_t last_guard_seq;         /* seq of the last block in guard_breaks */
	int temp_counted;                /* the region counts temporary allocations
					  * (version 3 on) */
	uint64_t temp;                   /* their sum over the stacks, with
					  * unrecorded_temp */
	uint64_t unrecorded_temp;        /* those of stacks that found no slot */
	struct cp_stats_bin bins[HEAPANN_STATS_NBINS];
	struct cp_stats_stack *stacks;   /* entries that were complete */
	size_t nstacks;
	uint64_t stack_cap;              /* slots in the region's table */
	struct cp_stats_sample *samples; /* in time order */
	size_t nsamples;
	uint64_t tl_interval;            /* time between samples when the core was taken */
	size_t skipped_entries;          /* slots being written, or with bad depth */
	struct cp_unload_table unload;   /* libraries unloaded before the core */
	char unload_err[256];            /* "" or one line: why the table was refused
					  * (its libraries' frames stay addresses) */
};

/* Look for the statistics region in every dumped byte of img (word-aligned) and
 * decode the first valid one into *out, appending the frames of its stacks to
 * scan->addrs (kept sorted and distinct; scan->stack_frames is renumbered) and its
 * distinct chains to scan->stacks. Per-stack frees are derived from scan's live
 * blocks, so scan must be the scan of the same img (every live block in the
 * image is assumed to be there: one not dumped counts as freed). Returns 1 when found, 0 when the image holds no
 * region (out is zeroed), or -1 with err filled: CP_ENOMEM, or CP_EFORMAT when a
 * region has a valid signature and check word but is not fully dumped or its
 * fields are out of bounds. Release *out with cp_stats_free() in every case. */
int cp_stats_read(const struct cp_image *img, struct cp_scan *scan, struct cp_stats *out,
		  struct cp_error *err);

/* Decode the table of unloaded libraries at target address addr, whose first
 * avail bytes (words of w bytes, byte order big) are at p. A pure function: the
 * header's signature, version, capacity, record size and check word are
 * checked, then each of the min(CLAIMED, CAP) records: taken when READY, its
 * path NUL-terminated, absolute and non-empty, its build-id no longer than
 * ID_MAX and its span not empty; counted in out->skipped otherwise. Returns 0
 * with *out filled (owned by the caller), -1 with why (one line, no file
 * name) when the table is garbage or not all of it is within avail, -2 when out
 * of memory. *out is zeroed on failure. */
int cp_unload_decode(const unsigned char *p, uint64_t avail, uint64_t addr, unsigned w, int big,
		     struct cp_unload_table *out, char *why, size_t whycap);

/* Release what cp_stats_read() allocated; *st is zeroed. */
void cp_stats_free(struct cp_stats *st);

#endif /* CP_STATS_H */
