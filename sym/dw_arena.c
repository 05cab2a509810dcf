/* dw_arena.c - one string arena for the libdw symbolizer: every name and path
 * handed out in a sym_table is interned here, so equal strings share storage and
 * all of them are released at once by dw_arena_release(). Not thread-safe.
 */
#include <stdlib.h>
#include <string.h>

#include "dw_priv.h"
#include "grow.h"

enum { DW_CHUNK_SIZE = 64 * 1024 };

struct dw_chunk {
	struct dw_chunk *next;  /* older chunk */
	size_t used;            /* bytes used in data */
	size_t size;            /* bytes available in data */
	char data[];
};

/* FNV-1a over len bytes. */
static uint64_t dw_arena_hash(const char *p, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static char *dw_arena_copy(struct dw_arena *a, const char *p, size_t len)
{
	struct dw_chunk *c = a->chunks;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > DW_CHUNK_SIZE ? len + 1 : DW_CHUNK_SIZE;
		c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->next = a->chunks;
		c->used = 0;
		c->size = size;
		a->chunks = c;
	}
	char *dst = c->data + c->used;
	memcpy(dst, p, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

/* key: len bytes at p */
struct dw_strkey {
	const char *p;
	size_t len;
};

static int dw_arena_eq(const void *ctx, uint32_t i, const void *key)
{
	const char *s = ((const struct dw_arena *)ctx)->strs[i];
	const struct dw_strkey *k = key;

	return strncmp(s, k->p, k->len) == 0 && s[k->len] == '\0';
}

const char *dw_arena_intern_len(struct dw_arena *a, const char *p, size_t len)
{
	if (!p)
		return NULL;
	struct dw_strkey key = { p, len };
	uint64_t h = dw_arena_hash(p, len);
	int64_t i = htab_find(&a->idx, h, dw_arena_eq, a, &key);
	if (i >= 0)
		return a->strs[i];
	const char **strs = grow_array(a->strs, &a->cap, a->count, sizeof *strs, 1024);
	if (!strs)
		return NULL;
	a->strs = strs;
	char *copy = dw_arena_copy(a, p, len);
	if (!copy || htab_add(&a->idx, h, (uint32_t)a->count) < 0)
		return NULL;
	a->strs[a->count++] = copy;
	return copy;
}

const char *dw_arena_intern(struct dw_arena *a, const char *s)
{
	return s ? dw_arena_intern_len(a, s, strlen(s)) : NULL;
}

void dw_arena_release(struct dw_arena *a)
{
	struct dw_chunk *c = a->chunks;
	while (c) {
		struct dw_chunk *next = c->next;
		free(c);
		c = next;
	}
	htab_release(&a->idx);
	free(a->strs);
	memset(a, 0, sizeof *a);
}

/* The table probes from the low bits: the multiply's high half is folded in. */
static uint64_t dw_ptr_hash(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

static int dw_ptr_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const struct dw_ptrmap *)ctx)->keys[i] == key;
}

const void *dw_ptrmap_get(const struct dw_ptrmap *m, const void *key)
{
	int64_t i = htab_find(&m->idx, dw_ptr_hash(key), dw_ptr_eq, m, key);
	return i < 0 ? NULL : m->vals[i];
}

int dw_ptrmap_put(struct dw_ptrmap *m, const void *key, const void *val)
{
	if (m->count == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		const void **keys = realloc(m->keys, ncap * sizeof *keys);
		if (!keys)
			return -1;
		m->keys = keys;
		const void **vals = realloc(m->vals, ncap * sizeof *vals);
		if (!vals)
			return -1;
		m->vals = vals;
		m->cap = ncap;
	}
	int64_t i = htab_put(&m->idx, dw_ptr_hash(key), (uint32_t)m->count, dw_ptr_eq, m, key);
	if (i < 0)
		return -1;
	if ((size_t)i == m->count) {
		m->keys[i] = key;
		m->count++;
	}
	m->vals[i] = val;
	return 0;
}

void dw_ptrmap_release(struct dw_ptrmap *m)
{
	htab_release(&m->idx);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}
