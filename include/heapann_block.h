/* heapann_block.h - the block header: the contract between annotate/ and coreparse/.
 *
 * libheapann writes one of these in front of every block it hands out; the core
 * reader finds them again in a core or a raw dump. Everything here is pure and
 * header-only so that it can be compiled inside malloc (no allocation, no libc
 * calls) and by the reader for any target word size and byte order.
 *
 * Layout, in target pointer-size words (W = 4 or 8) and target byte order:
 *
 *   raw block from the real allocator
 *   |<- pad ->|<-------------------- header: (7 + depth) words ------------------>|<- user data ->|<- guard ->|
 *   +---------+-------+------+------+-------+-----+-------+--------+ .. +--------+---------------+-----------+
 *   | (align) | START | INFO | SIZE | DEPTH | SEQ | CHECK | ret[0] | .. | END    | size bytes    | guard_len |
 *   +---------+-------+------+------+-------+-----+-------+--------+ .. +--------+---------------+-----------+
 *             ^ header address (H)                         innermost  ^ END is at user - W
 *                                                                                ^ user pointer (16-aligned,
 *                                                                                  or the requested alignment)
 *   word 0 START  HEAPANN_START_LIVE while the block is live, HEAPANN_START_FREED after free().
 *                 Written last (after END and the guard), and first on free(): a core
 *                 taken while another thread writes a header holds no live START there
 *                 (or a freed one), never a half-written live header.
 *   word 1 INFO   bits 0-7: format version (HEAPANN_VERSION, 2; a reader takes 1 too, whose
 *                 DEPTH never has HEAPANN_DEPTH_CUT); bits 8-15: guard length in
 *                 bytes; bits 16 and up: pad, the bytes between the raw block and H, in
 *                 units of W (so raw = H - pad * W).
 *   word 2 SIZE   the size the user asked for.
 *   word 3 DEPTH  bits 0-14: how many return addresses follow (0..HEAPANN_MAX_DEPTH), no
 *                 stale slots; bit 15 (HEAPANN_DEPTH_CUT, version 2): the stack went on
 *                 past them (the walk stopped at HEAPANN_DEPTH, not at the outermost
 *                 frame), like gdb's "(More stack frames follow...)".
 *   word 4 SEQ    global allocation sequence number (starts at 1).
 *   word 5 CHECK  heapann_check(H, SIZE, DEPTH, SEQ, INFO), DEPTH the whole word (its cut
 *                 flag included): ties the header to its own address, so a copy of a
 *                 header elsewhere, or a partly overwritten one, fails validation.
 *   words 6..     return addresses, innermost (the caller of malloc) first.
 *   last word END HEAPANN_END_LIVE | DEPTH while live (DEPTH: the frame count, without
 *                 HEAPANN_DEPTH_CUT, here and after free), HEAPANN_END_FREED | DEPTH after
 *                 free(): free() reads it at user - W to find H. The allocator may reuse
 *                 the first words of a freed block for its free lists, so a freed block
 *                 is still recognized (and not taken for a damaged live one) by its END.
 *   guard         guard_len bytes of HEAPANN_GUARD_BYTE right after the user's size.
 *
 * The header holds no heap pointers: a reachability scan may read it without
 * mistaking it for a reference (the address enters only through the check word).
 */
#ifndef HEAPANN_BLOCK_H
#define HEAPANN_BLOCK_H

#include <stdint.h>

#define HEAPANN_VERSION 2u            /* 2: DEPTH may carry HEAPANN_DEPTH_CUT */
#define HEAPANN_VERSION_MIN 1u        /* the oldest a reader takes */
#define HEAPANN_DEPTH_CUT 0x8000u     /* in the DEPTH word: more frames followed */
#define HEAPANN_MAX_DEPTH 256u
#define HEAPANN_FIXED_WORDS 6u            /* START INFO SIZE DEPTH SEQ CHECK */
#define HEAPANN_GUARD_BYTE 0xFDu
#define HEAPANN_MAX_GUARD 255u

/* Word indices of the fixed fields. */
enum heapann_word {
	HEAPANN_W_START = 0,
	HEAPANN_W_INFO = 1,
	HEAPANN_W_SIZE = 2,
	HEAPANN_W_DEPTH = 3,
	HEAPANN_W_SEQ = 4,
	HEAPANN_W_CHECK = 5,
	HEAPANN_W_FRAMES = 6,
};

/* Magic values for 64-bit and for 32-bit targets. The END magics have their low
 * 9 bits clear: they hold DEPTH. */
#define HEAPANN_START_LIVE64  0xA110CA7E5EEDB10CULL
#define HEAPANN_START_FREED64 0xF4EEDB10C0DEADDFULL
#define HEAPANN_END_LIVE64    0xE4DB10C7A11E0000ULL
#define HEAPANN_END_FREED64   0xE4DFEEDB10C00000ULL
#define HEAPANN_START_LIVE32  0xA110CB1Cu
#define HEAPANN_START_FREED32 0xF4EED0DFu
#define HEAPANN_END_LIVE32    0xE4DB1000u
#define HEAPANN_END_FREED32   0xE4DFE000u
#define HEAPANN_END_DEPTH_MASK 0x1FFu

/* Magic values for a target word size W (4 or 8). */
static inline uint64_t heapann_start_live(unsigned w)
{
	return w == 8 ? HEAPANN_START_LIVE64 : HEAPANN_START_LIVE32;
}

static inline uint64_t heapann_start_freed(unsigned w)
{
	return w == 8 ? HEAPANN_START_FREED64 : HEAPANN_START_FREED32;
}

static inline uint64_t heapann_end_live(unsigned w)
{
	return w == 8 ? HEAPANN_END_LIVE64 : HEAPANN_END_LIVE32;
}

static inline uint64_t heapann_end_freed(unsigned w)
{
	return w == 8 ? HEAPANN_END_FREED64 : HEAPANN_END_FREED32;
}

/* INFO word packing and unpacking. */
static inline uint64_t heapann_info_make(unsigned guard_len, uint64_t pad_words)
{
	return HEAPANN_VERSION | ((uint64_t)(guard_len & 0xFFu) << 8) | (pad_words << 16);
}

static inline unsigned heapann_info_version(uint64_t info) { return (unsigned)(info & 0xFFu); }
static inline unsigned heapann_info_guard(uint64_t info) { return (unsigned)((info >> 8) & 0xFFu); }
static inline uint64_t heapann_info_pad(uint64_t info) { return info >> 16; }

/* A DEPTH word's frame count and its cut flag (HEAPANN_DEPTH_CUT). */
static inline uint64_t heapann_depth_frames(uint64_t dword)
{
	return dword & ~(uint64_t)HEAPANN_DEPTH_CUT;
}

static inline int heapann_depth_cut(uint64_t dword)
{
	return (dword & HEAPANN_DEPTH_CUT) != 0;
}

/* Header size in bytes for a given depth and word size (START .. END inclusive). */
static inline uint64_t heapann_header_bytes(uint64_t depth, unsigned w)
{
	return (HEAPANN_FIXED_WORDS + depth + 1u) * w;
}

/* The check word: a mix of the header's own address H and its fields, truncated to
 * the word size W. Same result on every host for the same target values. */
static inline uint64_t heapann_check(uint64_t hdr_addr, uint64_t size, uint64_t depth,
				     uint64_t seq, uint64_t info, unsigned w)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ hdr_addr;
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= size + 0x94D049BB133111EBULL;
	h ^= h >> 29;
	h *= 0x94D049BB133111EBULL;
	h ^= (depth << 48) ^ info;
	h ^= h >> 32;
	h *= 0xD6E8FEB86659FD93ULL;
	h ^= seq;
	h ^= h >> 32;
	h *= 0xD6E8FEB86659FD93ULL;
	h ^= h >> 32;
	return w == 8 ? h : (h & 0xFFFFFFFFu);
}

#endif /* HEAPANN_BLOCK_H */
