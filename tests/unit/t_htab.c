/* t_htab.c - the analyzer's hash table (common/htab.h) on its own: insert and
 * find across growths from 16 slots to 2^21, every key colliding under a constant
 * hash, keys that share a hash but differ, a multimap through htab_add, a table
 * that never had an entry, the entry limit and a failed allocation (in a child
 * process with a small address-space limit; not under ASan, which reserves more
 * address space than such a limit allows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grow.h"
#include "htab.h"

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

/* Entries are uint64_t keys in an array the test owns. */
static int key_eq(const void *ctx, uint32_t entry, const void *key)
{
	const uint64_t *keys = ctx;

	return keys[entry] == *(const uint64_t *)key;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* Count of indexed slots, to compare with h->n. */
static size_t used_slots(const struct htab *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->cap; i++)
		n += h->slots[i].entry != HTAB_EMPTY;
	return n;
}

static void test_empty(void)
{
	struct htab h = { 0 };
	uint64_t k = 7;

	CHECK("empty: find in a table never grown is -1", htab_find(&h, 7, key_eq, &k, &k) == -1);
	CHECK("empty: no slots allocated", h.cap == 0 && h.slots == NULL && h.n == 0);
	htab_release(&h);
	CHECK("empty: release of an empty table leaves it empty", h.cap == 0 && h.slots == NULL);
	CHECK("empty: reserve(0) allocates the minimum 16 slots", htab_reserve(&h, 0) == 0 && h.cap == 16);
	CHECK("empty: find after reserve is still -1", htab_find(&h, 7, key_eq, &k, &k) == -1);
	htab_release(&h);
}

static void test_grow(void)
{
	enum { N = 1 << 20 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	struct htab h;
	size_t i, bad_new = 0, bad_again = 0, bad_find = 0, bad_cap = 0;
	int grew_ok = 1;

	htab_init(&h);
	if (!keys) {
		CHECK("grow: test array allocated", 0);
		return;
	}
	for (i = 0; i < N; i++) {
		size_t before = h.cap;
		uint64_t k = i * 0x10001u + 3;

		keys[i] = k;
		if (htab_put(&h, mix(k), (uint32_t)i, key_eq, keys, &k) != (int64_t)i)
			bad_new++;
		/* capacity: 16 slots for up to 8 entries, then doubling at half full */
		if (h.cap < 2 * h.n || (h.cap != before && before && h.cap != 2 * before))
			bad_cap++;
		if (i + 1 == 8 && h.cap != 16)
			grew_ok = 0;
		if (i + 1 == 9 && h.cap != 32)
			grew_ok = 0;
		if (i + 1 == 512 && h.cap != 1024)
			grew_ok = 0;
		if (i + 1 == 513 && h.cap != 2048)
			grew_ok = 0;
	}
	CHECK("grow: 1048576 new keys each returned their own entry number", bad_new == 0);
	CHECK("grow: n is 1048576", h.n == N);
	CHECK("grow: capacity doubled, never more than half full", bad_cap == 0);
	CHECK("grow: 16 slots at 8 entries, 32 at 9, 1024 at 512, 2048 at 513", grew_ok);
	CHECK("grow: 2^21 slots for 2^20 entries", h.cap == (size_t)1 << 21);
	CHECK("grow: 1048576 slots in use", used_slots(&h) == N);
	for (i = 0; i < N; i++) {
		uint64_t k = keys[i];

		if (htab_put(&h, mix(k), N, key_eq, keys, &k) != (int64_t)i)
			bad_again++;
		if (htab_find(&h, mix(k), key_eq, keys, &k) != (int64_t)i)
			bad_find++;
	}
	CHECK("grow: putting every key again returns its first number", bad_again == 0);
	CHECK("grow: every key found after 17 growths", bad_find == 0);
	CHECK("grow: n still 1048576 after the second puts", h.n == N);
	{
		uint64_t k = 2;   /* not i * 0x10001 + 3 for any i */

		CHECK("grow: an absent key is -1", htab_find(&h, mix(k), key_eq, keys, &k) == -1);
	}
	htab_release(&h);
	free(keys);
}

static void test_collisions(void)
{
	enum { N = 1000 };
	uint64_t keys[N];
	struct htab h = { 0 };
	size_t bad = 0;

	/* one constant hash: every key probes the same run of slots */
	for (uint32_t i = 0; i < N; i++) {
		keys[i] = 1000 + i;
		if (htab_put(&h, 42, i, key_eq, keys, &keys[i]) != i)
			bad++;
	}
	CHECK("collisions: 1000 keys under one hash each got a new entry", bad == 0);
	CHECK("collisions: n is 1000, 2048 slots", h.n == N && h.cap == 2048);
	bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		uint64_t k = 1000 + i;

		if (htab_find(&h, 42, key_eq, keys, &k) != i)
			bad++;
	}
	CHECK("collisions: all 1000 found under the same hash", bad == 0);
	{
		uint64_t k = 999;

		CHECK("collisions: key 999 (same hash, no entry) is -1",
		      htab_find(&h, 42, key_eq, keys, &k) == -1);
		k = 1500;
		CHECK("collisions: key 1500 under another hash is -1",
		      htab_find(&h, 43, key_eq, keys, &k) == -1);
	}
	/* hashes equal in their low 32 bits but different: 0x100000000 keeps 0,
	 * like 0 */
	{
		struct htab g = { 0 };
		uint64_t two[2] = { 5, 6 };

		CHECK("low bits: key 5 under hash 0 is entry 0", htab_put(&g, 0, 0, key_eq, two, &two[0]) == 0);
		CHECK("low bits: key 6 under hash 0x100000000 is entry 1",
		      htab_put(&g, 0x100000000ULL, 1, key_eq, two, &two[1]) == 1);
		CHECK("low bits: htab_hash32(0x100000000) == 0", htab_hash32(0x100000000ULL) == 0);
		CHECK("low bits: key 6 found again", htab_find(&g, 0x100000000ULL, key_eq, two, &two[1]) == 1);
		CHECK("low bits: key 5 found again", htab_find(&g, 0, key_eq, two, &two[0]) == 0);
		htab_release(&g);
	}
	htab_release(&h);
}

static void test_multimap(void)
{
	uint64_t keys[6] = { 10, 20, 10, 30, 10, 20 };
	struct htab h = { 0 };
	size_t ten = 0, twenty = 0, thirty = 0;
	int rc = 0;

	for (uint32_t i = 0; i < 6; i++)
		rc |= htab_add(&h, mix(keys[i]), i);
	CHECK("multimap: six adds succeed", rc == 0);
	CHECK("multimap: n is 6 (duplicates kept)", h.n == 6 && used_slots(&h) == 6);
	for (size_t i = 0; i < h.cap; i++) {
		uint32_t e = h.slots[i].entry;

		if (e == HTAB_EMPTY)
			continue;
		ten += keys[e] == 10;
		twenty += keys[e] == 20;
		thirty += keys[e] == 30;
	}
	CHECK("multimap: key 10 three times, 20 twice, 30 once", ten == 3 && twenty == 2 && thirty == 1);
	{
		uint64_t k = 10;

		CHECK("multimap: find of 10 gives the first added (entry 0)",
		      htab_find(&h, mix(k), key_eq, keys, &k) == 0);
		k = 20;
		CHECK("multimap: find of 20 gives entry 1", htab_find(&h, mix(k), key_eq, keys, &k) == 1);
	}
	htab_release(&h);
}

static void test_limits(void)
{
	struct htab h = { 0 };
	uint64_t k = 1;

	CHECK("limit: reserve beyond 2^31 entries is -1", htab_reserve(&h, HTAB_MAX_ENTRIES + 1) == -1);
	CHECK("limit: the table is unchanged (no slots)", h.cap == 0 && h.slots == NULL);
	CHECK("limit: put after the refusal works", htab_put(&h, 1, 0, key_eq, &k, &k) == 0);
	CHECK("limit: reserve beyond 2^31 still -1 with entries", htab_reserve(&h, HTAB_MAX_ENTRIES + 1) == -1);
	CHECK("limit: entry 0 still found", htab_find(&h, 1, key_eq, &k, &k) == 0 && h.cap == 16);
	htab_release(&h);
}

#ifndef T_ASAN
/* In a child: fill a table, cap the address space, ask for 2^24 entries
 * (256 MiB of slots). Exit 0 when reserve said -1 and the table still held
 * every entry. */
static int oom_child(void)
{
	enum { N = 100 };
	uint64_t keys[N];
	struct htab h = { 0 };
	struct rlimit rl;
	size_t ok = 0;

	for (uint32_t i = 0; i < N; i++) {
		keys[i] = i;
		if (htab_put(&h, mix(i), i, key_eq, keys, &keys[i]) != i)
			return 2;
	}
	if (getrlimit(RLIMIT_AS, &rl) < 0)
		return 3;
	rl.rlim_cur = 64u << 20;
	if (setrlimit(RLIMIT_AS, &rl) < 0)
		return 3;
	if (htab_reserve(&h, (size_t)1 << 24) != -1)
		return 4;
	if (h.cap != 256 || h.n != N)
		return 5;
	for (uint32_t i = 0; i < N; i++)
		ok += htab_find(&h, mix(i), key_eq, keys, &keys[i]) == i;
	return ok == N ? 0 : 6;
}
#endif

static void test_oom(void)
{
#ifdef T_ASAN
	printf("# allocation failure: not under ASan (its shadow memory needs the address space)\n");
#else
	int st = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(oom_child());
	CHECK("oom: child ran", pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK("oom: reserve of 2^24 under a 64 MiB limit is -1, table intact",
	      WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		printf("# child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
#endif
}

/* common/grow.h: the doubling array the tables' entries live in */
static void test_grow_array(void)
{
	uint32_t *v = NULL, *p;
	size_t cap = 0, n, grew = 0, caps_ok = 1;

	for (n = 0; n < 1000; n++) {
		size_t before = cap;

		p = grow_array(v, &cap, n, sizeof(*v), 16);
		if (!p)
			break;
		if (cap != before) {
			grew++;
			caps_ok &= cap == (before ? before * 2 : 16);
		}
		v = p;
		v[n] = (uint32_t)n * 3;
	}
	CHECK("grow_array: 1000 elements", n == 1000);
	CHECK("grow_array: 16 then doubling: 7 allocations up to 1024", grew == 7 && caps_ok && cap == 1024);
	size_t sum_ok = 1;
	for (n = 0; n < 1000; n++)
		sum_ok &= v[n] == (uint32_t)n * 3;
	CHECK("grow_array: the elements kept across reallocations", sum_ok);
	CHECK("grow_array: with room, the same array and capacity",
	      grow_array(v, &cap, 1000, sizeof(*v), 16) == v && cap == 1024);
	size_t big = SIZE_MAX / 4;
	CHECK("grow_array: a size that would overflow is refused, the capacity unchanged",
	      grow_array(v, &big, big, 8, 16) == NULL && big == SIZE_MAX / 4);
	free(v);
}

int main(void)
{
	test_empty();
	test_grow();
	test_collisions();
	test_multimap();
	test_limits();
	test_oom();
	test_grow_array();
	return CHECK_DONE();
}
