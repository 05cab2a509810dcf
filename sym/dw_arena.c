/* dw_arena.c - one string arena for the libdw symbolizer: every name and path
 * handed out in a sym_table is interned here, so equal strings share storage and
 * all of them are released at once by dw_arena_release(). Not thread-safe.
 */
#include <stdlib.h>
#include <string.h>

#include "dw_priv.h"

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

static int dw_arena_grow(struct dw_arena *a)
{
	size_t ncap = a->cap ? a->cap * 2 : 1024;
	const char **slots = calloc(ncap, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < a->cap; i++) {
		const char *s = a->slots[i];
		if (!s)
			continue;
		size_t j = dw_arena_hash(s, strlen(s)) & (ncap - 1);
		while (slots[j])
			j = (j + 1) & (ncap - 1);
		slots[j] = s;
	}
	free(a->slots);
	a->slots = slots;
	a->cap = ncap;
	return 0;
}

const char *dw_arena_intern_len(struct dw_arena *a, const char *p, size_t len)
{
	if (!p)
		return NULL;
	if ((a->count + 1) * 2 > a->cap && dw_arena_grow(a) < 0)
		return NULL;
	size_t j = dw_arena_hash(p, len) & (a->cap - 1);
	while (a->slots[j]) {
		const char *s = a->slots[j];
		if (strncmp(s, p, len) == 0 && s[len] == '\0')
			return s;
		j = (j + 1) & (a->cap - 1);
	}
	char *copy = dw_arena_copy(a, p, len);
	if (!copy)
		return NULL;
	a->slots[j] = copy;
	a->count++;
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
	free(a->slots);
	memset(a, 0, sizeof *a);
}

static size_t dw_ptr_hash(const void *p, size_t cap)
{
	return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

const void *dw_ptrmap_get(const struct dw_ptrmap *m, const void *key)
{
	if (!m->cap)
		return NULL;
	for (size_t j = dw_ptr_hash(key, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return m->vals[j];
	return NULL;
}

int dw_ptrmap_put(struct dw_ptrmap *m, const void *key, const void *val)
{
	if ((m->count + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		const void **keys = calloc(ncap, sizeof *keys);
		const void **vals = calloc(ncap, sizeof *vals);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			size_t j = dw_ptr_hash(m->keys[i], ncap);
			while (keys[j])
				j = (j + 1) & (ncap - 1);
			keys[j] = m->keys[i];
			vals[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = ncap;
	}
	size_t j = dw_ptr_hash(key, m->cap);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->count++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

void dw_ptrmap_release(struct dw_ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}
