/* hdr.h - write, find and retire the block header of include/heapann_block.h in
 * the running process (native word size). Header-only and pure: it is compiled
 * into malloc itself and into tests/unit/t_block.c, so it must not allocate,
 * lock or call libc beyond memset. */
#ifndef HA_HDR_H
#define HA_HDR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "heapann_block.h"

#define HA_W ((unsigned)sizeof(uintptr_t))

/* The alignment the real allocator gives every block and that the user pointer
 * keeps: glibc's MALLOC_ALIGNMENT (16 on x86-64, i386 and aarch64; 8 on arm). */
#if defined(__arm__) || defined(__mips__)
#define HA_MIN_ALIGN 8u
#else
#define HA_MIN_ALIGN 16u
#endif

/* Results of ha_hdr_find(). */
enum ha_hdr_state {
	HA_HDR_LIVE = 0,        /* a valid live header: ours */
	HA_HDR_FOREIGN = -1,    /* no END marker: not made by us */
	HA_HDR_FREED = -2,      /* END says freed: a second free of our block */
	HA_HDR_DAMAGED = -3,    /* END is ours but START/INFO/DEPTH/CHECK disagree */
};

/* A decoded live header. Points into the block; valid while the block lives. */
struct ha_hdr_view {
	uintptr_t *hdr;         /* H: word 0 of the header */
	void *raw;              /* what the real allocator returned (H - pad words) */
	size_t size;            /* the user's requested size */
	unsigned depth;         /* number of return addresses (the cut flag of DEPTH is not
				 * kept: free and realloc have no use for it) */
	unsigned guard;         /* guard bytes after the user's size */
	size_t offset;          /* bytes from raw to the user pointer */
	uintptr_t seq;          /* allocation sequence number */
};

/* Bytes from the raw block to the user pointer for DEPTH frames when the user
 * pointer must be aligned to ALIGN (a power of two >= HA_MIN_ALIGN) and the raw
 * block is aligned to ALIGN too: the header rounded up to ALIGN. */
static inline size_t ha_hdr_offset(unsigned depth, size_t align)
{
	size_t h = (size_t)heapann_header_bytes(depth, HA_W);
	return (h + align - 1) & ~(align - 1);
}

/* START's live magic for the last store of ha_hdr_write(), made in a register at
 * that point. As a plain constant the compiler may keep it across the memcpy and
 * memset calls in a callee-saved register, which those calls push: copies of the
 * magic then stay in dead stack memory, and a core reader takes them for damaged
 * headers (seen on ARM). A volatile read of its complement cannot be hoisted, and
 * the complement stored in our data is no magic a reader looks for. */
static const volatile uintptr_t ha_start_live_inv = ~(uintptr_t)(sizeof(uintptr_t) == 8 ?
	(uintptr_t)HEAPANN_START_LIVE64 : (uintptr_t)HEAPANN_START_LIVE32);

static inline uintptr_t ha_start_live_late(void)
{
	return ~ha_start_live_inv;
}

/* Eight guard bytes as one word (HEAPANN_GUARD_BYTE repeated). */
#define HA_GUARD_WORD (0x0101010101010101ULL * HEAPANN_GUARD_BYTE)

/* Fill GUARD guard bytes at G (not aligned: right after the user's size). Whole
 * words first: the default guard of 8 bytes is one unaligned store, where a call
 * to memset cost some 20 instructions per allocation. */
static inline void ha_hdr_guard_fill(unsigned char *g, unsigned guard)
{
	const uint64_t w = HA_GUARD_WORD;
	unsigned i = 0;

	if (__builtin_expect(guard == 8, 1)) {   /* the default: one store, no loop */
		memcpy(g, &w, 8);
		return;
	}
	for (; i + 8 <= guard; i += 8)
		memcpy(g + i, &w, 8);
	for (; i < guard; i++)
		g[i] = HEAPANN_GUARD_BYTE;
}

/* Write a live header for a block whose user data starts at USER and whose raw
 * block starts OFFSET bytes earlier (OFFSET >= the header size for DEPTH), then
 * fill GUARD guard bytes after USER + SIZE. FRAMES holds DEPTH return addresses,
 * innermost first; they are copied. CUT (0 or 1) says the stack went on past
 * them: DEPTH gets HEAPANN_DEPTH_CUT. Returns the header address H. */
static inline uintptr_t *ha_hdr_write(void *user, size_t offset, size_t size,
				      unsigned depth, int cut, const uintptr_t *frames,
				      uintptr_t seq, unsigned guard)
{
	uintptr_t dword = depth | (cut ? (uintptr_t)HEAPANN_DEPTH_CUT : 0);
	size_t hbytes = (size_t)heapann_header_bytes(depth, HA_W);
	uintptr_t *h = (uintptr_t *)((char *)user - hbytes);
	uintptr_t info = (uintptr_t)heapann_info_make(guard, (offset - hbytes) / HA_W);

	/* START goes last: a core taken while this thread is here (a snapshot clones
	 * the process while other threads run; gcore and the kernel stop threads at
	 * any instruction) then holds no header at H rather than a damaged one. The
	 * zero clears a START a previous use of this memory may have left. */
	h[HEAPANN_W_START] = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h[HEAPANN_W_INFO] = info;
	h[HEAPANN_W_SIZE] = size;
	h[HEAPANN_W_DEPTH] = dword;
	h[HEAPANN_W_SEQ] = seq;
	h[HEAPANN_W_CHECK] = (uintptr_t)heapann_check((uintptr_t)h, size, dword, seq, info, HA_W);
	/* libc's vector copy: it neither allocates nor locks */
	memcpy(&h[HEAPANN_W_FRAMES], frames, depth * sizeof(uintptr_t));
	h[HEAPANN_W_FRAMES + depth] = (uintptr_t)heapann_end_live(HA_W) | depth;
	ha_hdr_guard_fill((unsigned char *)user + size, guard);
	__atomic_store_n(&h[HEAPANN_W_START], ha_start_live_late(), __ATOMIC_RELEASE);
	return h;
}

/* Decide whether USER was made by us. Reads the word at USER - W first (for a
 * glibc pointer it is the chunk's size field, always readable) and only when it
 * carries our END magic reads the rest of the header, checking START, INFO,
 * DEPTH and CHECK before believing anything. Fills *V for HA_HDR_LIVE. */
static inline int ha_hdr_find(const void *user, struct ha_hdr_view *v)
{
	const uintptr_t *u = (const uintptr_t *)user;
	uintptr_t end = u[-1];
	uintptr_t magic = end & ~(uintptr_t)HEAPANN_END_DEPTH_MASK;
	unsigned depth = (unsigned)(end & HEAPANN_END_DEPTH_MASK);
	uintptr_t *h;
	uintptr_t info, dword;
	size_t hbytes;

	if (magic == (uintptr_t)heapann_end_freed(HA_W))
		return depth <= HEAPANN_MAX_DEPTH ? HA_HDR_FREED : HA_HDR_FOREIGN;
	if (magic != (uintptr_t)heapann_end_live(HA_W) || depth > HEAPANN_MAX_DEPTH)
		return HA_HDR_FOREIGN;
	hbytes = (size_t)heapann_header_bytes(depth, HA_W);
	h = (uintptr_t *)((uintptr_t)user - hbytes);
	info = h[HEAPANN_W_INFO];
	dword = h[HEAPANN_W_DEPTH];
	if (h[HEAPANN_W_START] != (uintptr_t)heapann_start_live(HA_W) ||
	    heapann_info_version(info) != HEAPANN_VERSION ||
	    (dword & ~(uintptr_t)HEAPANN_DEPTH_CUT) != depth ||
	    h[HEAPANN_W_CHECK] != (uintptr_t)heapann_check((uintptr_t)h, h[HEAPANN_W_SIZE],
							   dword, h[HEAPANN_W_SEQ], info, HA_W))
		return HA_HDR_DAMAGED;
	v->hdr = h;
	v->size = h[HEAPANN_W_SIZE];
	v->depth = depth;
	v->guard = heapann_info_guard(info);
	v->offset = hbytes + (size_t)heapann_info_pad(info) * HA_W;
	v->raw = (char *)user - v->offset;
	v->seq = h[HEAPANN_W_SEQ];
	return HA_HDR_LIVE;
}

/* Count the guard bytes after the user's data that no longer hold
 * HEAPANN_GUARD_BYTE (0 when the guard is intact or absent). */
static inline unsigned ha_hdr_guard_damage(const void *user, const struct ha_hdr_view *v)
{
	const unsigned char *g = (const unsigned char *)user + v->size;
	unsigned i = 0, bad = 0, end = v->guard;

	if (__builtin_expect(end == 8, 1)) {   /* the default: one load and compare */
		uint64_t w;

		memcpy(&w, g, 8);
		if (__builtin_expect(w == HA_GUARD_WORD, 1))
			return 0;
	}

	/* a word at a time while intact (every free checks the guard); a damaged
	 * word, and the bytes past the last whole word, byte by byte */
	for (; i + 8 <= end; i += 8) {
		uint64_t w;

		memcpy(&w, g + i, 8);
		if (__builtin_expect(w != HA_GUARD_WORD, 0))
			break;
	}
	for (; i < end; i++)
		bad += g[i] != HEAPANN_GUARD_BYTE;
	return bad;
}

/* Mark a live block freed (START and END get the freed magics) just before the
 * memory goes back to the real allocator. START first: a core taken in between
 * sees a freed block, not a damaged live one. */
static inline void ha_hdr_mark_freed(void *user, const struct ha_hdr_view *v)
{
	v->hdr[HEAPANN_W_START] = (uintptr_t)heapann_start_freed(HA_W);
	((uintptr_t *)user)[-1] = (uintptr_t)heapann_end_freed(HA_W) | v->depth;
}

#endif /* HA_HDR_H */
