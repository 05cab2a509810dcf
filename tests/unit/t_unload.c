/* t_unload.c - cp_unload_decode, the reader of libheapann's table of unloaded
 * libraries (include/heapann_unload.h), on tables written here in 32-bit and
 * 64-bit words of both byte orders: the records it keeps, the ones it skips,
 * and garbage, truncated tables, a wrong signature and huge counts refused
 * without a crash. Every expected value is one the test wrote. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cp_stats.h"

#define U_ADDR 0x7f0012345000ull

/* Store v as a word of w bytes, byte order big, at p. */
static void put(unsigned char *p, unsigned w, int big, uint64_t v)
{
	for (unsigned i = 0; i < w; i++)
		p[big ? w - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/* A table of cap records at U_ADDR into buf (zeroed first); returns its size. */
static size_t table(unsigned char *buf, size_t cap, unsigned w, int big, uint64_t claimed)
{
	uint64_t rb = heapann_unload_rec_bytes(w);
	size_t total = HEAPANN_UNLOAD_HDR_WORDS * w + cap * rb;

	memset(buf, 0, total);
	put(buf + HEAPANN_UH_MAGIC * w, w, big, heapann_unload_magic(w));
	put(buf + HEAPANN_UH_VERSION * w, w, big, HEAPANN_UNLOAD_VERSION);
	put(buf + HEAPANN_UH_CAP * w, w, big, cap);
	put(buf + HEAPANN_UH_REC_BYTES * w, w, big, rb);
	put(buf + HEAPANN_UH_CLAIMED * w, w, big, claimed);
	put(buf + HEAPANN_UH_DROPPED * w, w, big, 3);
	put(buf + HEAPANN_UH_CHECK * w, w, big, heapann_unload_check(U_ADDR, cap, rb, w));
	return total;
}

/* Fill record i: READY, SEQ 100+i, BIAS, LO, HI, an id of idlen bytes (i+1
 * repeated) and path. */
static void rec(unsigned char *buf, size_t i, unsigned w, int big, uint64_t ready, uint64_t bias,
		uint64_t lo, uint64_t hi, uint64_t idlen, const char *path)
{
	unsigned char *r = buf + HEAPANN_UNLOAD_HDR_WORDS * w + i * heapann_unload_rec_bytes(w);
	unsigned char *id = r + HEAPANN_UNLOAD_REC_WORDS * w;

	put(r + HEAPANN_UR_READY * w, w, big, ready);
	put(r + HEAPANN_UR_SEQ * w, w, big, 100 + i);
	put(r + HEAPANN_UR_BIAS * w, w, big, bias);
	put(r + HEAPANN_UR_LO * w, w, big, lo);
	put(r + HEAPANN_UR_HI * w, w, big, hi);
	put(r + HEAPANN_UR_IDLEN * w, w, big, idlen);
	memset(id, (int)(i + 1), idlen <= HEAPANN_UNLOAD_ID_MAX ? idlen : HEAPANN_UNLOAD_ID_MAX);
	if (path)
		memcpy(id + HEAPANN_UNLOAD_ID_MAX, path, strlen(path) + 1);
}

static void test_layout(unsigned w, int big)
{
	unsigned char *buf = calloc(1, 1 << 16);
	struct cp_unload_table t;
	char why[160], name[96];
	size_t total;
	int rc;

	if (!buf)
		return;
	/* 6 claimed of 8: a good one, one being written, one whose path has no
	 * NUL, one relative, one with an empty span, one with a 20-byte id */
	total = table(buf, 8, w, big, 6);
	rec(buf, 0, w, big, 1, 0x10000, 0x10000, 0x14000, 0, "/lib/a.so");
	rec(buf, 1, w, big, 0, 0x20000, 0x20000, 0x24000, 0, "/lib/b.so");
	rec(buf, 2, w, big, 1, 0x30000, 0x30000, 0x34000, 0, NULL);
	memset(buf + HEAPANN_UNLOAD_HDR_WORDS * w + 2 * heapann_unload_rec_bytes(w) +
	       HEAPANN_UNLOAD_REC_WORDS * w + HEAPANN_UNLOAD_ID_MAX, 'x', HEAPANN_UNLOAD_PATH_MAX);
	rec(buf, 3, w, big, 1, 0x40000, 0x40000, 0x44000, 0, "lib/d.so");
	rec(buf, 4, w, big, 1, 0x50000, 0x54000, 0x54000, 0, "/lib/e.so");
	rec(buf, 5, w, big, 1, 0x60000, 0x61000, 0x68000, 20, "/usr/lib/f.so");
	rc = cp_unload_decode(buf, total, U_ADDR, w, big, &t, why, sizeof(why));
	snprintf(name, sizeof(name), "w=%u %s: 2 records kept, 4 skipped, 3 dropped", w, big ? "big" : "little");
	CHECK(name, rc == 0 && t.n == 2 && t.skipped == 4 && t.dropped == 3);
	snprintf(name, sizeof(name), "w=%u %s: the first record's fields", w, big ? "big" : "little");
	CHECK(name, t.n == 2 && t.v[0].seq == 100 && t.v[0].bias == 0x10000 && t.v[0].lo == 0x10000 &&
	      t.v[0].hi == 0x14000 && t.v[0].idlen == 0 && !strcmp(t.v[0].path, "/lib/a.so"));
	snprintf(name, sizeof(name), "w=%u %s: the build-id of record 5", w, big ? "big" : "little");
	CHECK(name, t.n == 2 && t.v[1].seq == 105 && t.v[1].idlen == 20 && t.v[1].id[0] == 6 &&
	      t.v[1].id[19] == 6 && t.v[1].lo == 0x61000 && !strcmp(t.v[1].path, "/usr/lib/f.so"));
	free(t.v);

	/* the same table one byte short of its last claimed record: refused */
	rc = cp_unload_decode(buf, total - 2 * heapann_unload_rec_bytes(w) - 1, U_ADDR, w, big, &t,
			      why, sizeof(why));
	snprintf(name, sizeof(name), "w=%u %s: truncated table refused", w, big ? "big" : "little");
	CHECK(name, rc == -1 && t.v == NULL && t.n == 0 && strstr(why, "not all in the image"));
	/* the table at another address: the check word fails */
	rc = cp_unload_decode(buf, total, U_ADDR + 64, w, big, &t, why, sizeof(why));
	snprintf(name, sizeof(name), "w=%u %s: moved table refused (check word)", w, big ? "big" : "little");
	CHECK(name, rc == -1 && t.n == 0 && strstr(why, "damaged"));
	/* the other byte order: no signature */
	rc = cp_unload_decode(buf, total, U_ADDR, w, !big, &t, why, sizeof(why));
	snprintf(name, sizeof(name), "w=%u %s: read in the other byte order: no table", w, big ? "big" : "little");
	CHECK(name, rc == -1 && t.n == 0 && strstr(why, "wrong signature"));
	free(buf);
}

static void test_garbage(void)
{
	unsigned char *buf = calloc(1, 1 << 20);
	struct cp_unload_table t;
	char why[160];
	size_t total;
	int rc, crashed = 0;
	uint64_t rb = heapann_unload_rec_bytes(8);

	if (!buf)
		return;
	rc = cp_unload_decode(buf, 4096, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("zeros: no table", rc == -1 && strstr(why, "wrong signature"));
	rc = cp_unload_decode(buf, 16, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("shorter than a header: refused", rc == -1 && strstr(why, "header is not in the image"));
	rc = cp_unload_decode(NULL, 0, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("no bytes at all: refused", rc == -1);
	total = table(buf, 4, 8, 0, 0);
	rc = cp_unload_decode(buf, total, U_ADDR, 3, 0, &t, why, sizeof(why));
	CHECK("a word size of 3: refused", rc == -1);
	put(buf + HEAPANN_UH_MAGIC * 8, 8, 0, HEAPANN_UNLOAD_MAGIC_64 ^ 1);
	rc = cp_unload_decode(buf, total, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("wrong magic: refused", rc == -1 && strstr(why, "wrong signature"));
	total = table(buf, 4, 8, 0, 0);
	put(buf + HEAPANN_UH_VERSION * 8, 8, 0, 2);
	rc = cp_unload_decode(buf, total, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("unknown version: refused", rc == -1 && strstr(why, "version"));
	/* capacities past the limit, with a check word that matches them */
	put(buf + HEAPANN_UH_VERSION * 8, 8, 0, HEAPANN_UNLOAD_VERSION);
	put(buf + HEAPANN_UH_CAP * 8, 8, 0, 1ull << 40);
	put(buf + HEAPANN_UH_CHECK * 8, 8, 0, heapann_unload_check(U_ADDR, 1ull << 40, rb, 8));
	rc = cp_unload_decode(buf, 1 << 20, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("a capacity of 2^40: refused", rc == -1 && strstr(why, "damaged"));
	put(buf + HEAPANN_UH_CAP * 8, 8, 0, 0);
	put(buf + HEAPANN_UH_CHECK * 8, 8, 0, heapann_unload_check(U_ADDR, 0, rb, 8));
	rc = cp_unload_decode(buf, 1 << 20, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("a capacity of 0: refused", rc == -1);
	/* a record size that is not this layout's */
	total = table(buf, 4, 8, 0, 1);
	put(buf + HEAPANN_UH_REC_BYTES * 8, 8, 0, rb + 8);
	put(buf + HEAPANN_UH_CHECK * 8, 8, 0, heapann_unload_check(U_ADDR, 4, rb + 8, 8));
	rc = cp_unload_decode(buf, 1 << 20, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("another record size: refused", rc == -1 && strstr(why, "damaged"));
	/* a huge CLAIMED: only the capacity is read */
	total = table(buf, 4, 8, 0, UINT64_MAX);
	for (size_t i = 0; i < 4; i++)
		rec(buf, i, 8, 0, 1, 0x1000 * (i + 1), 0x1000 * (i + 1), 0x1000 * (i + 2), 0, "/x.so");
	rc = cp_unload_decode(buf, total, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("CLAIMED 2^64-1: the 4 records of the capacity", rc == 0 && t.n == 4 && t.v[3].seq == 103);
	free(t.v);
	/* an id length past ID_MAX: skipped */
	rec(buf, 0, 8, 0, 1, 0x1000, 0x1000, 0x2000, HEAPANN_UNLOAD_ID_MAX + 1, "/x.so");
	rec(buf, 1, 8, 0, 1, 0x1000, 0x1000, 0x2000, UINT64_MAX, "/x.so");
	rec(buf, 2, 8, 0, 7, 0x1000, 0x1000, 0x2000, 0, "/x.so");
	rc = cp_unload_decode(buf, total, U_ADDR, 8, 0, &t, why, sizeof(why));
	CHECK("ids too long and a READY of 7: skipped", rc == 0 && t.n == 1 && t.skipped == 3);
	free(t.v);
	/* random records under a valid header: never a crash, never more than
	 * the capacity, every path kept NUL-terminated and absolute */
	srand(7);
	for (int round = 0; round < 200; round++) {
		total = table(buf, 16, 8, 0, (uint64_t)rand() % 40);
		for (size_t k = HEAPANN_UNLOAD_HDR_WORDS * 8; k < total; k++)
			buf[k] = (unsigned char)(rand() % 3 ? rand() : 0);
		for (size_t i = 0; i < 16; i += 3)
			rec(buf, i, 8, 0, 1, 0x1000, 0x1000 + (uint64_t)rand() % 0x3000, 0x3000,
			    (uint64_t)rand() % 40, "/r.so");
		rc = cp_unload_decode(buf, total - (size_t)(rand() % 2) * (size_t)(rand() % total), U_ADDR,
				      8, 0, &t, why, sizeof(why));
		if (rc == 0)
			for (size_t i = 0; i < t.n; i++)
				if (t.v[i].path[0] != '/' || strlen(t.v[i].path) >= HEAPANN_UNLOAD_PATH_MAX ||
				    t.v[i].idlen > HEAPANN_UNLOAD_ID_MAX || t.v[i].lo >= t.v[i].hi)
					crashed++;
		if (rc == 0 && t.n > 16)
			crashed++;
		free(t.v);
	}
	CHECK("200 random tables: every record kept is well-formed", crashed == 0);
	free(buf);
}

int main(void)
{
	test_layout(8, 0);
	test_layout(8, 1);
	test_layout(4, 0);
	test_layout(4, 1);
	test_garbage();
	return CHECK_DONE();
}
