/* cp_priv.h - coreparse internals shared by image.c, notes.c, scan.c and zcore.c; not for
 * other modules. Helpers here are small and inline because the scanner calls them
 * for every candidate header.
 */
#ifndef CP_PRIV_H
#define CP_PRIV_H

#include <stdarg.h>
#include <string.h>

#include "coreparse.h"

/* Fill err with "PATH: message" and the code; returns -1 for convenience. */
int cp_error_set(struct cp_error *err, int code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Decode a word of w bytes (4 or 8) in the given byte order. */
static inline uint64_t cp_decode(const unsigned char *p, unsigned w, int big)
{
	if (w == 8) {
		uint64_t v;
		memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		return big ? __builtin_bswap64(v) : v;
#else
		return big ? v : __builtin_bswap64(v);
#endif
	} else {
		uint32_t v;
		memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		return big ? __builtin_bswap32(v) : v;
#else
		return big ? v : __builtin_bswap32(v);
#endif
	}
}

/* Decode a 16-bit or 32-bit field of a note payload. */
static inline uint32_t cp_decode32(const unsigned char *p, int big)
{
	return (uint32_t)cp_decode(p, 4, big);
}

static inline uint16_t cp_decode16(const unsigned char *p, int big)
{
	return big ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

/* Parse the notes of one PT_NOTE segment held in [p, p+len) into img. Returns 0, or
 * -1 with err filled on a fatal problem (out of memory); malformed notes are skipped. */
int cp_notes_parse(struct cp_image *img, const unsigned char *p, size_t len, struct cp_error *err);

/* Find an NT_GNU_BUILD_ID note in the notes at [p, p+len) (byte order big). On
 * success copies up to cap bytes to out, sets *outlen to the full id length and
 * returns 0; -1 when there is none. */
int cp_notes_buildid(const unsigned char *p, size_t len, int big, unsigned char *out,
		     size_t cap, size_t *outlen);

/* The compression of a file that starts with the n bytes at p, by their magic:
 * zstd 28 b5 2f fd, gzip 1f 8b 08, xz fd 37 7a 58 5a 00 (zcore.c). */
enum cp_compression cp_compression_detect(const unsigned char *p, size_t n);

/* Decompress the whole file open on fd (compressed as c; path names it in
 * messages) into a new unlinked temporary file under $TMPDIR (else /tmp), zero
 * pages left as holes. With want_elf, data that does not start with the ELF
 * magic fails early with "PATH: not an ELF file", as a plain file would. Returns
 * 0 with *out_fd (the caller's, close-on-exec, positioned anywhere) and
 * *out_size, or -1 with err filled: CP_EFORMAT for truncated or corrupt data,
 * CP_EIO for the temporary file (no space...), CP_ENOMEM. fd stays the caller's. */
int cp_zcore_inflate(int fd, const char *path, enum cp_compression c, int want_elf,
		     int *out_fd, uint64_t *out_size, struct cp_error *err);

#endif /* CP_PRIV_H */
