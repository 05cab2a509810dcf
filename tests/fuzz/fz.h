/* fz.h - one input through the analyzer's readers, for the libFuzzer targets in
 * tests/fuzz/fuzz_*.c and for tests/tools/fzrun (which replays the regression
 * inputs of tests/fuzz/regress/ in make check, with gcc and under ASan+UBSan).
 *
 * Input format of the image targets (the first bytes choose how the rest is read):
 *   byte 0    low nibble 3: a raw dump follows; anything else: an ELF core follows
 *             bit 5 (0x20): scan in 4 KiB chunks (headers across chunk boundaries)
 *             (bits 4, 6, 7 are free: the repro corpus sets bit 4)
 *   raw only: byte 1: word size in the low nibble (4, else 8), bit 7 big-endian;
 *             bytes 2..9: the dump's base address, little-endian; the dump follows.
 * Nothing here writes a file: the bytes go to a memfd that is closed before return.
 */
#ifndef FZ_H
#define FZ_H

#include <stddef.h>
#include <stdint.h>

/* What fz_image_run() exercises, cumulative from OPEN. */
enum fz_part {
	FZ_OPEN = 1u << 0,    /* open the image, its notes, main module, build-ids, check_exe */
	FZ_SCAN = 1u << 1,    /* cp_scan_image, cp_scan_find */
	FZ_STATS = 1u << 2,   /* cp_stats_read, then the tables from the region and the scan */
	FZ_CORRUPT = 1u << 3, /* an_corrupt_build, an_damage_reach/identity */
	FZ_ADDR = 1u << 4,    /* an_addr_classify on block edges and input-chosen addresses */
	FZ_LOST = 1u << 5,    /* roots, the mark phase with parents, refs and links */
	FZ_ALL = 0x3f,
};

/* What one run found, for fzrun's output line. */
struct fz_result {
	int failed;           /* the image did not open, or a step returned an error */
	char msg[600];        /* that error, or notes of the image ("" when none) */
	size_t nsegs, nblocks, nlive, ndamaged, nroots, nlost;
	int have_stats;
};

/* Run the parts in 'parts' over one input (format above). Never fails on bad input:
 * errors end up in res (may be NULL). Returns 0, or -1 only when a memfd cannot be
 * made (the host, not the input). */
int fz_image_run(const uint8_t *data, size_t size, unsigned parts, struct fz_result *res);

/* Parse every line of data as gdb MI output and walk each value tree. */
void fz_mi_run(const uint8_t *data, size_t size);

/* Open data as a program ELF with the libdw symbolizer (no core) and resolve a few
 * addresses taken from its header and from the input's last bytes. Aborts when no
 * memfd can be made (descriptors leaking). */
void fz_symdw_run(const uint8_t *data, size_t size);

/* Check data as a libdw symbolizer cache file (sym/dw_cache.c) after storing its
 * real size and checksum in its header (so that mutations reach the structure
 * checks), then look up addresses from its own ranges and rows and read every
 * string a lookup returns. Returns 0 when the file was accepted, -1 with why
 * filled when refused. */
int fz_symcache_run(const uint8_t *data, size_t size, char *why, size_t whysz);

#endif /* FZ_H */
