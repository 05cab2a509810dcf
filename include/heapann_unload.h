/* heapann_unload.h - the table of unloaded libraries: the third contract between
 * annotate/ and coreparse/ (after heapann_block.h and heapann_stats.h).
 *
 * A block allocated by code of a library that was dlopen'ed and then dlclose'd
 * keeps return addresses into that library, but the core's load map no longer
 * names it. libheapann.so wraps dlclose: every object the call unloads (the
 * library and any dependency that goes with it) gets a record in a fixed table in
 * libheapann's own memory, and the statistics region's counter word
 * HEAPANN_SC_UNLOAD_TABLE holds the table's address (0: no library was unloaded).
 * The reader names those frames with the file the record names, when its
 * build-id is still the record's. Only the LD_PRELOAD build has the table (the
 * static kit has no dlclose wrapper).
 *
 * Layout, in target words (W = 4 or 8) and target byte order, from the table
 * address U (W aligned). All offsets in bytes from U.
 *
 *   +--------------------+ U
 *   | header, 8 words    |  MAGIC CHECK VERSION CAP REC_BYTES CLAIMED DROPPED (0)
 *   +--------------------+ U + 8 W
 *   | record 0           |  REC_BYTES bytes each: READY SEQ BIAS LO HI IDLEN
 *   | record 1           |  (6 words), BUILD_ID (ID_MAX bytes), PATH (PATH_MAX
 *   | ...                |  bytes, NUL-terminated)
 *   +--------------------+ U + 8 W + CAP x REC_BYTES
 *
 *   MAGIC     HEAPANN_UNLOAD_MAGIC_{64,32}.
 *   CHECK     heapann_check(U, CAP, REC_BYTES, 0, VERSION, W): the header tied to
 *             its own address, so a copy elsewhere or garbage is refused.
 *   CLAIMED   records claimed so far (an atomic add): records 0 .. min(CLAIMED,
 *             CAP) - 1 may be read; once the table is full, further unloads
 *             are counted in DROPPED only (the oldest are kept).
 *   READY     1 once every other word of the record is written (a release
 *             store, the last one); 0: being written (or its writer died).
 *   SEQ       the last allocation sequence number handed out when the dlclose
 *             that unloaded the library returned: blocks with a higher SEQ were
 *             allocated after (those of its destructors are below). The
 *             same file unloaded again from the same place (same BIAS, LO, HI,
 *             build-id and path) updates SEQ instead of taking a record.
 *   BIAS      the library's load bias (l_addr); LO HI its PT_LOAD span [LO, HI).
 *   IDLEN     bytes of its GNU build-id in BUILD_ID (0: none; <= ID_MAX).
 *   PATH      the file as ld.so named it (made absolute with the working
 *             directory of the dlclose when it was relative); a path that does
 *             not fit has no record (it is counted in DROPPED).
 *
 * An object that two threads' dlclose calls see unloaded at the same time may get
 * two records; a reader takes one of each span.
 */
#ifndef HEAPANN_UNLOAD_H
#define HEAPANN_UNLOAD_H

#include <stdint.h>

#include "heapann_block.h"

#define HEAPANN_UNLOAD_VERSION 1u
#define HEAPANN_UNLOAD_HDR_WORDS 8u
#define HEAPANN_UNLOAD_REC_WORDS 6u
#define HEAPANN_UNLOAD_ID_MAX 32u
#define HEAPANN_UNLOAD_PATH_MAX 512u
#define HEAPANN_UNLOAD_MAX_CAP 4096u   /* the most records a reader accepts */

#define HEAPANN_UNLOAD_MAGIC_64 0xD1C105EDB1B5A7EDULL
#define HEAPANN_UNLOAD_MAGIC_32 0xD1C105EDu

/* Header word indices. */
enum heapann_unload_hdr {
	HEAPANN_UH_MAGIC = 0,
	HEAPANN_UH_CHECK = 1,
	HEAPANN_UH_VERSION = 2,
	HEAPANN_UH_CAP = 3,
	HEAPANN_UH_REC_BYTES = 4,
	HEAPANN_UH_CLAIMED = 5,
	HEAPANN_UH_DROPPED = 6,
};

/* Record word indices. */
enum heapann_unload_rec {
	HEAPANN_UR_READY = 0,
	HEAPANN_UR_SEQ = 1,
	HEAPANN_UR_BIAS = 2,
	HEAPANN_UR_LO = 3,
	HEAPANN_UR_HI = 4,
	HEAPANN_UR_IDLEN = 5,
};

static inline uint64_t heapann_unload_magic(unsigned w)
{
	return w == 8 ? HEAPANN_UNLOAD_MAGIC_64 : HEAPANN_UNLOAD_MAGIC_32;
}

/* Bytes of one record for target words of W bytes. */
static inline uint64_t heapann_unload_rec_bytes(unsigned w)
{
	return (uint64_t)HEAPANN_UNLOAD_REC_WORDS * w + HEAPANN_UNLOAD_ID_MAX + HEAPANN_UNLOAD_PATH_MAX;
}

/* The header's CHECK word for a table at address u. */
static inline uint64_t heapann_unload_check(uint64_t u, uint64_t cap, uint64_t rec_bytes, unsigned w)
{
	return heapann_check(u, cap, rec_bytes, 0, HEAPANN_UNLOAD_VERSION, w);
}

#endif /* HEAPANN_UNLOAD_H */
