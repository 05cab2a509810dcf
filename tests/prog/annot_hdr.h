/* annot_hdr.h - what the preload test programs share to read a block's header
 * back from inside the process (64-bit targets): the pointer laundering that
 * keeps the compiler from reasoning about malloc's result, and the header
 * finder. */
#ifndef ANNOT_HDR_H
#define ANNOT_HDR_H

#include <stdint.h>

#include "heapann_block.h"

/* P, with the compiler's knowledge of where it came from removed. */
static inline void *launder(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	__asm__("" : "+r"(a));
	return (void *)a;
}

/* The header in front of user pointer P (START, INFO, SIZE, DEPTH, SEQ,
 * CHECK, frames, END all consistent), or NULL when P has no valid one. Its
 * DEPTH word may carry HEAPANN_DEPTH_CUT (heapann_depth_frames() is the count). */
static inline uintptr_t *header_of(void *p)
{
	uintptr_t *u = launder(p);
	uintptr_t end = u[-1];
	unsigned d = end & HEAPANN_END_DEPTH_MASK;
	uintptr_t *h;

	if ((end & ~(uintptr_t)HEAPANN_END_DEPTH_MASK) != HEAPANN_END_LIVE64 || d > HEAPANN_MAX_DEPTH)
		return NULL;
	h = u - (7 + d);
	if (h[HEAPANN_W_START] != HEAPANN_START_LIVE64 || heapann_depth_frames(h[HEAPANN_W_DEPTH]) != d ||
	    h[HEAPANN_W_CHECK] != heapann_check((uintptr_t)h, h[HEAPANN_W_SIZE], h[HEAPANN_W_DEPTH],
						 h[HEAPANN_W_SEQ], h[HEAPANN_W_INFO], 8))
		return NULL;
	return h;
}

#endif
