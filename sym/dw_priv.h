/* dw_priv.h - private to the libdw symbolizer backend (sym/dw*.c): the string
 * arena and the growable notes buffer. Other modules use sym.h only.
 */
#ifndef DW_PRIV_H
#define DW_PRIV_H

#include <stddef.h>
#include <stdint.h>

/* Interned strings: chunks of bytes plus an open-addressing set of pointers. */
struct dw_arena {
	struct dw_chunk *chunks; /* newest first */
	const char **slots;      /* hash set of interned strings, cap a power of two */
	size_t cap;
	size_t count;
};

/* The one copy of s (or of len bytes at p) in the arena, or NULL when out of
 * memory (or s is NULL). The string lives until dw_arena_release(). */
const char *dw_arena_intern(struct dw_arena *a, const char *s);
const char *dw_arena_intern_len(struct dw_arena *a, const char *p, size_t len);

/* Free every string of the arena and reset it to empty. */
void dw_arena_release(struct dw_arena *a);

#endif /* DW_PRIV_H */
