/* grow.h - room for one more element in a caller's array that doubles: the
 * realloc step every table and list of the analyzer repeats. Header-only, so the
 * check on a hot path (the mark's hit list) stays inline.
 */
#ifndef GROW_H
#define GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The array v (n elements of size bytes used, *cap allocated) with room for at
 * least n + 1: v itself when it has room, else v reallocated to twice *cap (first
 * when *cap is 0) with *cap updated. Returns NULL when out of memory or when the
 * size would overflow; v and *cap are then unchanged and still the caller's. */
static inline void *grow_array(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return v;
	size_t ncap = *cap ? *cap * 2 : first;
	if (ncap <= n || ncap > SIZE_MAX / size)
		return NULL;
	void *p = realloc(v, ncap * size);
	if (p)
		*cap = ncap;
	return p;
}

#endif
