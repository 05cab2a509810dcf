/* t_symcache.c - the symbol index cache's file code without libdw
 * (sym/dw_cache.c, sym/dw_evict.c): the checksum sees every single-bit flip;
 * a file of two units written through dw_cbuf is read back, and a damaged unit
 * is refused when first used while the other still answers (lazy checks);
 * MPROF_CACHE_MAX's parser; the eviction of least recently used files, with
 * exact files left.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dw_priv.h"

static char dir[64];

/* Every single-bit flip of n pseudo-random bytes: how many leave the sum as it was. */
static unsigned t_sum_misses(size_t n)
{
	unsigned char *p = malloc(n);
	uint64_t x = 0x1234567;
	unsigned misses = 0;
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (unsigned char)(x >> 56);
	}
	uint64_t sum = dw_cache_sum(p, n);
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++) {
			p[i] ^= (unsigned char)(1u << b);
			misses += dw_cache_sum(p, n) == sum;
			p[i] ^= (unsigned char)(1u << b);
		}
	free(p);
	return misses;
}

/* Add one unit for a CU at cuoff: rows at base + 0, + 0x10 (line 7, 8), an end
 * row at + 0x20; one function scope "fn" over [base, base + 0x20). */
static int t_unit(struct dw_cbuf *b, struct dw_ccu *rec, uint64_t cuoff, uint64_t base, const char *fn,
		  const char *file)
{
	size_t room = 8 + 3 * sizeof(struct dw_crow) + sizeof(struct dw_cscope) + 2 * sizeof(struct dw_crange);
	unsigned char *blob = dw_cbuf_unit_begin(b, room);
	if (!blob)
		return -1;
	memset(rec, 0, sizeof *rec);
	rec->cuoff = cuoff;
	uint32_t *files = (uint32_t *)blob;
	files[0] = dw_cbuf_ustr(b, file);
	files[1] = 0;
	struct dw_crow *rows = (struct dw_crow *)(blob + 8);
	rows[0] = (struct dw_crow){ 0, 7, 0, 1 };
	rows[1] = (struct dw_crow){ 0x10, 8, 0, 2 };
	rows[2] = (struct dw_crow){ 0x20, 8, DW_CROW_END, 0 };
	struct dw_cscope *sc = (struct dw_cscope *)(blob + 8 + 3 * sizeof *rows);
	*sc = (struct dw_cscope){ -1, 0, dw_cbuf_ustr(b, fn), DW_CACHE_NONE, 0, 0, 0, 1 };
	struct dw_crange *r = (struct dw_crange *)(sc + 1);
	r[0] = (struct dw_crange){ base, base + 0x20, 0, 0 };
	r[1] = r[0];
	rec->files_off = 0;
	rec->nfiles = 1;
	rec->rows_off = 8;
	rec->nrows = 3;
	rec->rows_base = base;
	rec->scopes_off = 8 + 3 * sizeof *rows;
	rec->nscopes = 1;
	rec->ranges_off = rec->scopes_off + sizeof *sc;
	rec->sorted_off = rec->ranges_off + sizeof *r;
	rec->nranges = 1;
	dw_cbuf_unit_end(b, room, rec);
	return b->failed ? -1 : 0;
}

/* The name and line the file gives for pc ("fn:line"), or "-" / "?" when it
 * has no CU / the unit is refused. */
static const char *t_lookup(struct dw_cache *c, uint64_t pc, char *out, size_t cap)
{
	int known;
	char why[64] = "";
	const struct dw_ccu *cu = dw_cache_cu(c, pc, &known);
	if (!cu)
		return "-";
	if (!dw_cache_unit_ok(c, cu, why, sizeof why)) {
		snprintf(out, cap, "? (%s)", why);
		return out;
	}
	const struct dw_crow *r = dw_cache_row(c, cu, pc);
	int32_t s = dw_cache_scope(c, cu, pc);
	snprintf(out, cap, "%s:%u", s >= 0 ? dw_cache_ustr(c, cu, dw_cache_scopes(c, cu)[s].name) : "none",
		 r ? r->line : 0);
	return out;
}

static void t_file(void)
{
	struct dw_cbuf b = { 0 };
	struct dw_chdr h;
	struct dw_ccu cus[2];
	struct dw_carange ar[2] = { { 0x1000, 11, 0, 0 }, { 0x2000, 22, 1, 0 } };
	char why[256] = "", path[128], out[128];
	memset(&h, 0, sizeof h);
	dw_cbuf_add(&b, &h, sizeof h);
	h.dbg_path = DW_CACHE_NONE;
	CHECK("two units built", t_unit(&b, &cus[0], 11, 0x1000, "alpha", "/src/a.c") == 0 &&
				 t_unit(&b, &cus[1], 22, 0x2000, "beta", "/src/b.c") == 0);
	h.naranges = 2;
	h.last_end = 0x2020;
	h.aranges_off = dw_cbuf_add(&b, ar, sizeof ar);
	h.ncus = 2;
	h.cus_off = dw_cbuf_add(&b, cus, sizeof cus);
	h.curanges_off = dw_cbuf_add(&b, NULL, 0);
	h.syms_off = h.curanges_off;
	CHECK("a limit below the file's size: not written, says why",
	      dw_cbuf_write(&b, &h, dir, "u.symidx", 100, why, sizeof why) < 0 && strstr(why, "over the cache's limit of 100"));
	memset(&h, 0, sizeof h);   /* dw_cbuf_write finished the header in place: start again */
	dw_cbuf_release(&b);
	dw_cbuf_add(&b, &h, sizeof h);
	h.dbg_path = DW_CACHE_NONE;
	t_unit(&b, &cus[0], 11, 0x1000, "alpha", "/src/a.c");
	t_unit(&b, &cus[1], 22, 0x2000, "beta", "/src/b.c");
	h.naranges = 2;
	h.last_end = 0x2020;
	h.aranges_off = dw_cbuf_add(&b, ar, sizeof ar);
	h.ncus = 2;
	h.cus_off = dw_cbuf_add(&b, cus, sizeof cus);
	h.curanges_off = dw_cbuf_add(&b, NULL, 0);
	h.syms_off = h.curanges_off;
	CHECK("written", dw_cbuf_write(&b, &h, dir, "u.symidx", UINT64_MAX, why, sizeof why) == 0);
	dw_cbuf_release(&b);
	snprintf(path, sizeof path, "%s/u.symidx", dir);

	struct dw_cache c;
	CHECK("mapped and checked", dw_cache_map(&c, path, NULL, why, sizeof why) == 0);
	CHECK("0x1005: alpha, line 7", !strcmp(t_lookup(&c, 0x1005, out, sizeof out), "alpha:7"));
	CHECK("0x2013: beta, line 8", !strcmp(t_lookup(&c, 0x2013, out, sizeof out), "beta:8"));
	CHECK("0x2021: past the last arange's end, no CU", !strcmp(t_lookup(&c, 0x2021, out, sizeof out), "-"));
	CHECK("0xfff: before the first arange, no CU", !strcmp(t_lookup(&c, 0xfff, out, sizeof out), "-"));
	dw_cache_unmap(&c);

	/* one byte of the second unit's blob flipped: the map succeeds (units
	 * are not read), the first unit answers, the second is refused when used */
	int fd = open(path, O_RDWR);
	struct stat st;
	fstat(fd, &st);
	unsigned char *p = malloc((size_t)st.st_size);
	CHECK("read back", read(fd, p, (size_t)st.st_size) == st.st_size);
	const struct dw_chdr *fh = (const void *)p;
	const struct dw_ccu *fc = (const void *)(p + fh->cus_off);
	p[fc[1].blob_off + fc[1].blob_size / 2] ^= 0x40;
	CHECK("units lie after the global part, in order",
	      fc[0].blob_off >= fh->glob_end && fc[1].blob_off >= fc[0].blob_off + fc[0].blob_size);
	pwrite(fd, p, (size_t)st.st_size, 0);
	close(fd);
	CHECK("damaged unit: the file still maps", dw_cache_map(&c, path, NULL, why, sizeof why) == 0);
	CHECK("...the good unit answers", !strcmp(t_lookup(&c, 0x1005, out, sizeof out), "alpha:7"));
	CHECK("...the damaged one is refused on first use, for its checksum",
	      !strcmp(t_lookup(&c, 0x2013, out, sizeof out), "? (bad checksum)"));
	CHECK("...and stays refused (no second reason)", !strcmp(t_lookup(&c, 0x2005, out, sizeof out), "? ()"));
	dw_cache_unmap(&c);

	/* a byte of the global part flipped: the whole file is refused at map time */
	p[fc[1].blob_off + fc[1].blob_size / 2] ^= 0x40;
	p[fh->aranges_off + 3] ^= 0x01;
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK("rewritten", write(fd, p, (size_t)st.st_size) == st.st_size);
	close(fd);
	CHECK("damaged global part: refused when mapped",
	      dw_cache_map(&c, path, NULL, why, sizeof why) < 0 && !strcmp(why, "bad checksum"));
	free(p);
	unlink(path);
}

/* make NAME of n bytes with mtime t (seconds) */
static void t_mk(const char *name, size_t n, time_t t)
{
	char path[160];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	for (size_t i = 0; i < n; i++)
		fputc('x', f);
	fclose(f);
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };
	utimensat(AT_FDCWD, path, ts, 0);
}

static int t_has(const char *name)
{
	char path[160];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void t_evict(void)
{
	char why[256] = "";
	time_t now = time(NULL);
	t_mk("a.symidx", 1000, now - 400);
	t_mk("b.symidx", 1000, now - 300);
	t_mk("c.symidx", 1000, now - 200);
	t_mk("d.symidx", 1000, now - 100);
	t_mk("other.txt", 5000, now - 1000);              /* not ours: never counted or removed */
	t_mk(".e.symidx.Xy12Zw", 10, now - 7200);         /* a dead writer's, two hours old */
	t_mk(".f.symidx.Xy12Zw", 10, now - 60);           /* a live writer's */
	CHECK("4000 bytes under a 4000-byte limit: nothing removed but the stale temporary file",
	      dw_cache_evict(dir, "d.symidx", 4000, why, sizeof why) == 1 && t_has("a.symidx") && !t_has(".e.symidx.Xy12Zw") &&
	      t_has(".f.symidx.Xy12Zw") && t_has("other.txt"));
	CHECK("limit 2500: the two least recently used (a, b) removed",
	      dw_cache_evict(dir, "d.symidx", 2500, why, sizeof why) == 2 && !t_has("a.symidx") && !t_has("b.symidx") &&
	      t_has("c.symidx") && t_has("d.symidx"));
	dw_cache_touch(strcat(strcpy((char[160]){ 0 }, dir), "/c.symidx"));   /* c used now: d is older */
	t_mk("e.symidx", 1000, now);
	CHECK("limit 2000 after c was used and e written: d removed (kept: c, e)",
	      dw_cache_evict(dir, "e.symidx", 2000, why, sizeof why) == 1 && !t_has("d.symidx") && t_has("c.symidx") &&
	      t_has("e.symidx"));
	CHECK("limit 0: everything but the file kept",
	      dw_cache_evict(dir, "e.symidx", 0, why, sizeof why) == 1 && !t_has("c.symidx") && t_has("e.symidx"));
	CHECK("a directory that does not exist: -1 and why",
	      dw_cache_evict("/nonexistent/mprof", "x", 0, why, sizeof why) < 0 && strstr(why, "cannot lock"));
	char path[160];
	const char *left[] = { "e.symidx", "other.txt", ".f.symidx.Xy12Zw", ".lock" };
	for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, left[i]);
		unlink(path);
	}
}

static void t_max(void)
{
	uint64_t v = 7;
	CHECK("max: 0", dw_cache_max_parse("0", &v) == 0 && v == 0);
	CHECK("max: 1048576", dw_cache_max_parse("1048576", &v) == 0 && v == 1048576);
	CHECK("max: 5K = 5120", dw_cache_max_parse("5K", &v) == 0 && v == 5120);
	CHECK("max: 3m = 3145728", dw_cache_max_parse("3m", &v) == 0 && v == 3145728);
	CHECK("max: 1G = 1073741824", dw_cache_max_parse("1G", &v) == 0 && v == 1073741824ull);
	CHECK("max: 2T", dw_cache_max_parse("2T", &v) == 0 && v == 2ull << 40);
	v = 7;
	CHECK("max: '', -1, 12X, K, 1.5G, 17179869184G (overflow), 99999999999999999999 refused (value kept)",
	      dw_cache_max_parse("", &v) < 0 && dw_cache_max_parse("-1", &v) < 0 && dw_cache_max_parse("12X", &v) < 0 &&
	      dw_cache_max_parse("K", &v) < 0 && dw_cache_max_parse("1.5G", &v) < 0 &&
	      dw_cache_max_parse("17179869184G", &v) < 0 && dw_cache_max_parse("99999999999999999999", &v) < 0 &&
	      v == 7);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s", "/tmp/t_symcache.XXXXXX");
	if (!mkdtemp(dir))
		return 77;
	CHECK("checksum: all 8192 single-bit flips of 1024 bytes seen", t_sum_misses(1024) == 0);
	CHECK("checksum: all 8136 single-bit flips of 1017 bytes (a tail) seen", t_sum_misses(1017) == 0);
	t_file();
	t_evict();
	t_max();
	rmdir(dir);
	return CHECK_DONE();
}
