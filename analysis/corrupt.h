/* corrupt.h - heap corruption and address ownership: which blocks overflowed their
 * guard, which headers were damaged and which block just before each one is the
 * suspect (corrupt.c), and what a given address is (addr.c).
 *
 * Pure functions over an image and its scan: they read dumped bytes through
 * cp_image_ptr() but never print, exit or symbolize. Indices returned point into
 * scan->blocks and scan->damaged; results are owned by the result structs.
 */
#ifndef AN_CORRUPT_H
#define AN_CORRUPT_H

#include <stddef.h>
#include <stdint.h>

#include "coreparse.h"

#define AN_NONE SIZE_MAX   /* "no such block / damage record" */
#define AN_LOST_FRAMES 32  /* frames kept of a neighbour found by its END word only */

/* A live block whose guard bytes are broken. */
struct an_guard_hit {
	size_t block;          /* index into scan->blocks */
	uint64_t overrun;      /* bytes past the end of the user data proven written:
				* 1 + last differing guard byte, extended into the next
				* header when the whole guard differs and that header is
				* damaged (see reach) */
	int whole_guard;       /* every guard byte differs: the overflow may go further */
	size_t next_damaged;   /* damaged header right after the guard (no header found
				* between), index into scan->damaged, or AN_NONE */
	uint64_t reach;        /* when next_damaged is set: one past the last byte of that
				* header proven overwritten (start magic, version, depth);
				* 0 otherwise */
	uint64_t next_header;  /* whole_guard only: raw start of the next header found
				* after the guard in the same segment (intact or damaged),
				* 0 if none; bytes in between held nothing recognizable */
	size_t next_block;     /* the block owning next_header when it is intact, or AN_NONE */
	uint64_t nlost;        /* with next_block: sequence numbers between this block's and
				* next_block's that no block or damaged header in the image
				* carries (counted when they differ by at most 4096) */
	uint64_t first_lost;   /* the first of them, 0 if none: perhaps the neighbour whose
				* header the overflow erased entirely */
	/* whole_guard, no damaged header listed after it: a live END word in the gap
	 * up to next_header whose header start is overwritten too far for the scan to
	 * list it (its DEPTH word is gone): the neighbour, identified by its END */
	uint64_t lost_user;    /* its user address, 0 if no such END word */
	uint64_t lost_hdr;     /* where its header started */
	uint32_t nlost_frames; /* its outer frames that are known return addresses */
	uint32_t lost_frame[AN_LOST_FRAMES]; /* those, innermost first: scan->addrs indices */
};

/* What most likely damaged a header. */
enum an_likely {
	AN_LIKELY_UNKNOWN = 0,
	AN_LIKELY_OVERFLOW,  /* the suspect's whole guard differs: it ran into this header */
	AN_LIKELY_UNDERRUN,  /* only the END word or the last frames are wrong (CP_DMG_END)
			      * and the block before has an intact guard: this block's
			      * own user wrote before its start */
};

/* A damaged header and the block just before it. */
struct an_damage_hit {
	size_t damage;         /* index into scan->damaged */
	size_t suspect;        /* nearest block (live or freed) starting before the
				* header in the same segment, index into scan->blocks, or AN_NONE */
	size_t suspect_damage; /* instead of suspect: a partly identified damaged header
				* (user and size known) that is nearer, or AN_NONE */
	int64_t gap;           /* header minus the end of the suspect's guard (negative:
				* the suspect's extent covers the header) */
	int have_size;         /* size and seq below are known */
	uint64_t size, seq;    /* from the scan (CP_KNOWN_SIZE), or recovered */
	int recovered;         /* size and seq proven here although the scan could not:
				* the overflow hit INFO, but the check word matches SIZE,
				* SEQ, the END word's depth and the INFO word of an intact
				* block (all blocks of a process share guard and pad) */
	enum an_likely likely;
};

/* The corruption found in one scan. */
struct an_corrupt {
	struct an_guard_hit *guards;   /* by block address */
	size_t nguards;
	struct an_damage_hit *damaged; /* by header address, one per scan->damaged
					* record (the scan leaves out those on the
					* threads' stacks) */
	size_t ndamaged;
	size_t nstack_copies;          /* damaged "headers" in a thread's stack segment:
					* stale copies of header words spilled there
					* (cp_scan.nstack_copies), not heap damage */
	/* damage libheapann counted while the program ran, from its statistics
	 * region (the caller copies them from struct cp_stats): the blocks went
	 * back to the allocator, so the image shows nothing else of it */
	uint64_t runtime_guards;       /* broken guards found at free or realloc */
	uint64_t runtime_bad_frees;    /* frees/reallocs of a freed or damaged block */
	uint64_t runtime_last_seq;     /* seq of the last block in runtime_guards */
};

/* Find every live block with a broken guard and explain every damaged header of
 * scan (taken from img). Returns 0 and fills *out (release with
 * an_corrupt_release), or -1 when out of memory. */
int an_corrupt_build(const struct cp_image *img, const struct cp_scan *scan,
		     struct an_corrupt *out);

/* Free what an_corrupt_build allocated; *c is zeroed. */
void an_corrupt_release(struct an_corrupt *c);

/* 1 when c holds any broken guard or damaged header, or damage counted at run
 * time. */
static inline int an_corrupt_found(const struct an_corrupt *c)
{
	return c->nguards || c->ndamaged || c->runtime_guards || c->runtime_bad_frees;
}

/* One past the last byte of the damaged header d proven overwritten: bytes of the
 * start magic that differ from the live magic, a version byte no reader takes,
 * and bytes of the DEPTH word that disagree with the depth held by a readable END
 * word (with or without the cut flag, whichever differs less). Returns
 * d->hdr when nothing can be proven (e.g. the header is not dumped). */
uint64_t an_damage_reach(const struct cp_image *img, const struct cp_damage *d);

/* Size and seq of damaged header scan->damaged[k]: as the scan proved them, or
 * recovered through its check word (see an_damage_hit.recovered). Returns 1 and
 * fills both when known, else 0. */
int an_damage_identity(const struct cp_image *img, const struct cp_scan *scan, size_t k,
		       uint64_t *size, uint64_t *seq);

/* ---- address classification (addr.c) ---- */

enum an_addr_what {
	AN_ADDR_BLOCK,      /* user data of a live block (block, or damage when its header is
			     * damaged: up to its size, or to the next header when unknown) */
	AN_ADDR_HEADER,     /* header or pad of a block (block), or a damaged header (damage) */
	AN_ADDR_GUARD,      /* guard bytes after a live block's data */
	AN_ADDR_FREED,      /* anywhere in a freed block found by its header */
	AN_ADDR_BETWEEN,    /* heap memory owned by no block found: prev/next neighbours */
	AN_ADDR_MODULE,     /* a module's data, bss or code (set by the caller from symbols) */
	AN_ADDR_STACK,      /* a thread's stack */
	AN_ADDR_UNMAPPED,   /* in no segment of the image */
	AN_ADDR_NOT_DUMPED, /* in a segment the file does not hold, or in an NT_FILE mapping without one */
	AN_ADDR_OTHER,      /* dumped memory with no block, stack or symbol around */
	AN_ADDR_TLS,        /* a thread's static thread-local storage (set by the caller
			     * from the modules' PT_TLS and the thread pointers) */
};

/* The part of a block an address falls in. */
enum an_addr_part { AN_PART_NONE, AN_PART_PAD, AN_PART_HEADER, AN_PART_DATA, AN_PART_GUARD };

/* What one address is. Pointers borrow from the image. */
struct an_addr {
	uint64_t addr;
	enum an_addr_what what;
	enum an_addr_part part;    /* for BLOCK, HEADER, GUARD, FREED */
	size_t block;              /* scan->blocks index, or AN_NONE */
	size_t damage;             /* scan->damaged index, or AN_NONE */
	uint64_t offset;           /* DATA: addr - user; HEADER/PAD: addr - header start
				    * (negative pads count from the raw block: see part);
				    * GUARD: addr - (user + size) */
	size_t prev, next;         /* BETWEEN: nearest blocks before / after in the same
				    * segment (scan->blocks), AN_NONE when none */
	int have_size;             /* with damage: size and seq below are known */
	uint64_t size, seq;        /* with damage: from an_damage_identity() */
	int thread;                /* STACK: index into img->threads, else -1 */
	int below_sp;              /* STACK: below the thread's stack pointer (and its red zone) */
	const struct cp_segment *seg;     /* holding segment, or NULL */
	const struct cp_mapping *mapping; /* file mapping holding addr, or NULL */
};

/* Classify addr against img and its scan. Never fails; fills *out. */
void an_addr_classify(const struct cp_image *img, const struct cp_scan *scan, uint64_t addr,
		      struct an_addr *out);

/* The name of a what value as used in the JSON report ("block", "not-dumped"...). */
const char *an_addr_what_name(enum an_addr_what w);

#endif /* AN_CORRUPT_H */
