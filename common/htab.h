/* htab.h - the analyzer's one hash table: an open-addressing index of uint32_t
 * entry numbers over an array of entries that the caller owns. The caller hashes
 * its keys and says when an entry equals a key; the table keeps each entry's
 * number and 32 bits of its hash, so it grows without calling back and skips most
 * unequal entries without touching them. Linear probing, power-of-two capacity,
 * at most half full. The probe loops are static inline so a constant equality
 * callback is inlined at each call site (the block scan's stack table is hot).
 * Not thread-safe; annotate/ keeps its own malloc-free table.
 */
#ifndef HTAB_H
#define HTAB_H

#include <stddef.h>
#include <stdint.h>

#define HTAB_EMPTY UINT32_MAX

/* At most this many entries (2^31: positions come from 32 bits of the hash). */
#define HTAB_MAX_ENTRIES ((size_t)1 << 31)

struct htab_slot {
	uint32_t entry;  /* the caller's entry number, HTAB_EMPTY when free */
	uint32_t hash;   /* 32 bits of the entry's hash (see htab_hash32) */
};

struct htab {
	struct htab_slot *slots;  /* cap slots, owned by the table; NULL when cap is 0 */
	size_t cap;               /* 0 or a power of two >= 2 * n */
	size_t n;                 /* entries indexed */
};

/* Is entry number 'entry' (in the caller's array, reached through ctx) equal to
 * 'key'? Nonzero when equal. ctx and key are whatever the caller passed. */
typedef int htab_eq_fn(const void *ctx, uint32_t entry, const void *key);

/* An empty table ({0} works too); allocates nothing. */
void htab_init(struct htab *h);

/* Frees the slots; the table is empty and reusable afterwards. The caller's
 * entries are untouched. */
void htab_release(struct htab *h);

/* Make room for n entries in all (at most half full), so the next n - h->n
 * inserts cannot fail. Returns 0, or -1 when out of memory or n exceeds
 * HTAB_MAX_ENTRIES (the table is unchanged then). */
int htab_reserve(struct htab *h, size_t n);

/* Index entry 'entry' under 'hash' without looking for an equal one (rebuilding
 * an index of distinct entries, or a multimap). Returns 0, or -1 when out of
 * memory (nothing added). */
int htab_add(struct htab *h, uint64_t hash, uint32_t entry);

/* The 32 bits of a caller's 64-bit hash that the table keeps and probes from:
 * the low ones, so a caller's hash must mix into its low bits (an FNV or a
 * multiply-xorshift finisher does; a bare multiply by a constant does not). */
static inline uint32_t htab_hash32(uint64_t hash)
{
	return (uint32_t)hash;
}

/* The slot holding an entry equal to key, or the free slot where it would go.
 * The table must have cap > 0. */
static inline struct htab_slot *htab_probe(const struct htab *h, uint64_t hash,
					   htab_eq_fn *eq, const void *ctx, const void *key)
{
	uint32_t h32 = htab_hash32(hash);
	size_t mask = h->cap - 1, j = h32 & mask;

	for (;; j = (j + 1) & mask) {
		struct htab_slot *s = &h->slots[j];

		if (s->entry == HTAB_EMPTY || (s->hash == h32 && eq(ctx, s->entry, key)))
			return s;
	}
}

/* The number of the entry equal to key (hash is key's hash), or -1 when none. */
static inline int64_t htab_find(const struct htab *h, uint64_t hash, htab_eq_fn *eq,
				const void *ctx, const void *key)
{
	if (!h->cap)
		return -1;
	const struct htab_slot *s = htab_probe(h, hash, eq, ctx, key);
	return s->entry == HTAB_EMPTY ? -1 : (int64_t)s->entry;
}

/* Insert-or-find: the number of the entry equal to key if there is one; else
 * 'next' is indexed under hash and returned, and the caller must make entry
 * 'next' valid before its eq callback can see it (the next find or put). Returns
 * -1 when out of memory (nothing added; the caller reports). A caller tells a new
 * entry by the result being 'next'. */
static inline int64_t htab_put(struct htab *h, uint64_t hash, uint32_t next,
			       htab_eq_fn *eq, const void *ctx, const void *key)
{
	if ((h->n + 1) * 2 > h->cap && htab_reserve(h, h->n + 1) < 0)
		return -1;
	struct htab_slot *s = htab_probe(h, hash, eq, ctx, key);
	if (s->entry != HTAB_EMPTY)
		return s->entry;
	s->entry = next;
	s->hash = htab_hash32(hash);
	h->n++;
	return next;
}

#endif
