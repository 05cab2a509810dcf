/* htab.c - growth and the out-of-line parts of the analyzer's hash table (the
 * probe loops are inline in htab.h). Growth rehashes from the 32 bits of hash
 * kept in each slot, so it never calls back into the caller.
 */
#include <stdlib.h>
#include <string.h>

#include "htab.h"

enum { HTAB_MIN_CAP = 16 };

void htab_init(struct htab *h)
{
	memset(h, 0, sizeof(*h));
}

void htab_release(struct htab *h)
{
	free(h->slots);
	htab_init(h);
}

int htab_reserve(struct htab *h, size_t n)
{
	size_t cap = h->cap ? h->cap : HTAB_MIN_CAP;
	struct htab_slot *s;

	if (n > HTAB_MAX_ENTRIES)
		return -1;
	while (cap < n * 2)
		cap *= 2;
	if (cap == h->cap)
		return 0;
	s = malloc(cap * sizeof(*s));
	if (!s)
		return -1;
	memset(s, 0xFF, cap * sizeof(*s));   /* every entry HTAB_EMPTY */
	for (size_t i = 0; i < h->cap; i++) {
		size_t j;

		if (h->slots[i].entry == HTAB_EMPTY)
			continue;
		for (j = h->slots[i].hash & (cap - 1); s[j].entry != HTAB_EMPTY; j = (j + 1) & (cap - 1))
			;
		s[j] = h->slots[i];
	}
	free(h->slots);
	h->slots = s;
	h->cap = cap;
	return 0;
}

int htab_add(struct htab *h, uint64_t hash, uint32_t entry)
{
	uint32_t h32 = htab_hash32(hash);
	size_t j;

	if ((h->n + 1) * 2 > h->cap && htab_reserve(h, h->n + 1) < 0)
		return -1;
	for (j = h32 & (h->cap - 1); h->slots[j].entry != HTAB_EMPTY; j = (j + 1) & (h->cap - 1))
		;
	h->slots[j].entry = entry;
	h->slots[j].hash = h32;
	h->n++;
	return 0;
}
