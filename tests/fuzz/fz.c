/* fz.c - one input through the analyzer's readers (see fz.h): the libFuzzer
 * targets and tests/tools/fzrun share this code, so a regression input replays the
 * very calls that found it. The input is handed to the readers through a memfd
 * (they take paths), closed before returning; nothing is written to disk and
 * everything allocated is released, so a leak is the reader's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis.h"
#include "corrupt.h"
#include "coreparse.h"
#include "cp_stats.h"
#include "mi.h"
#include "reach.h"
#include "sym.h"
#include "tables.h"
#include "dw_priv.h"
#include "fz.h"

/* A memfd holding data, and its /proc path. Returns the descriptor, or -1. */
static int fz_memfd(const uint8_t *data, size_t size, char *path, size_t cap)
{
	int fd = memfd_create("fz-input", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The tables from the region (when there is one) and from the scan. */
static void fz_tables(struct cp_scan *scan, const struct cp_stats *st, int have_stats)
{
	struct an_input in = { scan, NULL };
	struct an_filter f = { 0 };
	struct an_stacks stacks = { 0 };

	if (an_stacks_build(&in, &f, &stacks) == 0)
		an_stacks_release(&stacks);
	for (int from_stats = 0; from_stats <= have_stats; from_stats++) {
		struct an_usage u = { 0 };
		struct an_leaks l = { 0 };
		struct an_directs d = { 0 };
		struct an_graph g = { 0 };
		struct an_tree t = { 0 };
		int rc = from_stats ? an_usage_from_stats(&in, &f, st, &u) : an_usage_from_scan(&in, &f, &u);

		if (rc < 0)
			continue;
		if (an_leaks_build(&in, &u, 5, from_stats, &l) == 0)
			an_leaks_release(&l);
		if (an_direct_build(&in, &u, &d) == 0)
			an_directs_release(&d);
		if (an_graph_build(&in, &u, &g) == 0)
			an_graph_release(&g);
		if (an_tree_build(&in, &u, &t) == 0)
			an_tree_release(&t);
		an_usage_release(&u);
	}
}

/* Classify the edges of the first 16 blocks and damaged headers and up to 16
 * addresses read from the input's last bytes. (Each classification near a damaged
 * header costs a pass over the blocks: more would make a slow harness, not find
 * more in the reader.) */
static void fz_addr(const struct cp_image *img, const struct cp_scan *scan, const uint8_t *data,
		    size_t size)
{
	struct an_addr a;

	for (size_t k = 0; k < scan->nblocks && k < 16; k++) {
		const struct cp_block *b = &scan->blocks[k];
		uint64_t at[] = { cp_block_start(b), cp_block_hdr(b), b->user - 1, b->user, b->user + b->size,
				  cp_block_end(b) - 1, cp_block_end(b) };

		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
			an_addr_classify(img, scan, at[i], &a);
	}
	for (size_t k = 0; k < scan->ndamaged && k < 16; k++) {
		an_addr_classify(img, scan, scan->damaged[k].hdr, &a);
		an_addr_classify(img, scan, scan->damaged[k].hdr + 8 * img->wsize, &a);
	}
	for (size_t off = size >= 128 ? size - 128 : 0; off + 8 <= size; off += 8)
		an_addr_classify(img, scan, le64(data + off), &a);
	for (size_t s = 0; s < img->nsegs; s++) {
		an_addr_classify(img, scan, img->segs[s].vaddr, &a);
		an_addr_classify(img, scan, img->segs[s].vaddr + img->segs[s].avail, &a);
	}
}

static void fz_corrupt(const struct cp_image *img, const struct cp_scan *scan)
{
	struct an_corrupt c = { 0 };

	if (an_corrupt_build(img, scan, &c) == 0)
		an_corrupt_release(&c);
	for (size_t k = 0; k < scan->ndamaged; k++) {
		uint64_t size, seq;

		(void)an_damage_reach(img, &scan->damaged[k]);
		(void)an_damage_identity(img, scan, k, &size, &seq);
	}
}

/* Roots (a raw dump gets its first 4 KiB as a user root, as the CLI adds the
 * ELF's data), the mark with parents, then the links of the first 16 live blocks
 * and the refs of the first 2. */
static void fz_lost(const struct cp_image *img, const struct cp_scan *scan, struct fz_result *res)
{
	struct an_roots roots = { 0 };
	struct an_reach reach = { 0 };
	struct an_reach_options ro = { .nthreads = 1, .parents = 1 };

	if (an_roots_find(img, scan, &roots) < 0)
		goto out;
	if (img->kind == CP_KIND_RAW && img->nsegs) {
		struct an_root r = { img->segs[0].vaddr, img->segs[0].vaddr + (img->segs[0].memsz < 4096 ?
							    img->segs[0].memsz : 4096), AN_ROOT_USER, -1, NULL, 0 };

		if (an_roots_add(&roots, &r) < 0 || an_roots_exclude_stats(img, scan, &roots) < 0)
			goto out;
	}
	res->nroots = roots.n;
	if (an_reach_build(img, scan, &roots, &ro, &reach) < 0)
		goto out;
	res->nlost = (size_t)(reach.blocks[AN_REACH_DEFINITE] + reach.blocks[AN_REACH_INDIRECT]);
	for (size_t k = 0, done = 0; k < scan->nblocks && done < 16; k++) {
		struct an_ref *refs = NULL, link;
		size_t n = 0;

		if (scan->blocks[k].state != CP_LIVE)
			continue;
		done++;
		/* each --refs walk reads the whole image: two keep an input well under
		 * the fuzzer's one second (its instrumentation costs ~30x) */
		if (done <= 2 && an_reach_refs(img, scan, &roots, (uint32_t)k, &refs, &n) == 0)
			free(refs);
		(void)an_roots_locate(&roots, scan->blocks[k].user);
		if (reach.from[k] != AN_REACH_FROM_NONE)
			(void)an_reach_link(img, scan, &roots, reach.from[k], (uint32_t)k, &link);
	}
	an_reach_release(&reach);
out:
	an_roots_release(&roots);
}

static void fz_open_facts(struct cp_image *img)
{
	struct cp_error err = { 0 };
	unsigned char id[64];
	size_t n;

	(void)cp_image_main_module(img);
	for (size_t k = 0; k < img->nfiles; k++)
		(void)cp_image_module_buildid(img, &img->files[k], id, sizeof(id), &n);
	(void)cp_image_check_exe(img, "/proc/self/exe", &err);
}

int fz_image_run(const uint8_t *data, size_t size, unsigned parts, struct fz_result *res)
{
	struct fz_result dummy;
	struct cp_error err = { 0 };
	struct cp_image *img = NULL;
	struct cp_scan scan;
	struct cp_scan_options so = { 0 };
	struct cp_stats st;
	char path[64];
	int fd, raw, have_stats = 0;
	size_t skip;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (size < 1)
		return 0;
	raw = (data[0] & 0x0f) == 3;
	skip = raw ? 10 : 1;
	if (size <= skip)
		return 0;
	fd = fz_memfd(data + skip, size - skip, path, sizeof(path));
	if (fd < 0)
		return -1;   /* the targets abort: a leak of descriptors must not pass silently */
	if (raw)
		img = cp_image_open_raw(path, le64(data + 2), (data[1] & 0x0f) == 4 ? 4 : 8,
					!!(data[1] & 0x80), 0, &err);
	else
		img = cp_image_open_core(path, &err);
	close(fd);
	if (!img) {
		res->failed = 1;
		snprintf(res->msg, sizeof(res->msg), "%s", err.msg);
		return 0;
	}
	res->nsegs = img->nsegs;
	if (img->nbogus_segs)
		snprintf(res->msg, sizeof(res->msg), "segment at 0x%llx claims 0x%llx bytes, cut to "
			 "the file (%zu such)", (unsigned long long)img->bogus_vaddr,
			 (unsigned long long)img->bogus_memsz, img->nbogus_segs);
	fz_open_facts(img);
	if (!(parts & ~FZ_OPEN))
		goto out;
	so.nthreads = 1;
	so.chunk_bytes = (data[0] & 0x20) ? 4096 : 0;
	if (cp_scan_image_opts(img, &so, &scan, &err) < 0) {
		res->failed = 1;
		snprintf(res->msg, sizeof(res->msg), "%s", err.msg);
		goto out;
	}
	res->nblocks = scan.nblocks;
	res->nlive = scan.nlive;
	res->ndamaged = scan.ndamaged;
	for (size_t k = 0; k < scan.nblocks && k < 64; k++)
		(void)cp_scan_find(&scan, scan.blocks[k].user + scan.blocks[k].size / 2);
	if (parts & FZ_STATS) {
		int rc = cp_stats_read(img, &scan, &st, &err);

		have_stats = rc > 0;
		res->have_stats = have_stats;
		fz_tables(&scan, &st, have_stats);
		cp_stats_free(&st);
	}
	if (parts & FZ_CORRUPT)
		fz_corrupt(img, &scan);
	if (parts & FZ_ADDR)
		fz_addr(img, &scan, data, size);
	if (parts & FZ_LOST)
		fz_lost(img, &scan, res);
	cp_scan_free(&scan);
out:
	cp_image_free(img);
	return 0;
}

/* Walk a value tree the way the MI symbolizer reads replies: by name, by index. */
static void fz_mi_walk(const struct mi_value *v, unsigned depth)
{
	if (!v || depth > 300)
		return;
	(void)mi_value_get(v, "frame");
	(void)mi_value_str(v, "func");
	for (size_t i = 0; v->kind != MI_CONST && i < v->nitems; i++)
		fz_mi_walk(v->items[i].value, depth + 1);
}

void fz_mi_run(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		struct mi_record rec;
		struct mi_error err;

		if (mi_parse_line(p, len, &rec, &err) == 0) {
			fz_mi_walk(rec.results, 0);
			mi_record_release(&rec);
		}
		p += len;
	}
	if (size) {
		char q[256];

		/* the quoting used for commands: any bytes, a bounded buffer */
		char *s = strndup((const char *)data, size < 100 ? size : 100);

		if (s) {
			(void)mi_quote(q, sizeof(q), s);
			free(s);
		}
	}
}

void fz_symdw_run(const uint8_t *data, size_t size)
{
	struct sym_options so = { 0 };
	struct sym_error err;
	struct symbolizer *s;
	const struct sym_table *tab;
	uint64_t addrs[20];
	size_t n = 0;
	char path[64];
	int fd;

	if (size < 64)
		return;
	fd = fz_memfd(data, size, path, sizeof(path));
	if (fd < 0)
		abort();   /* out of descriptors: something leaks them; never a silent no-op */
	so.exe = path;
	s = sym_dw_open(&so, &err);
	if (s) {
		uint64_t entry = le64(data + 24);   /* e_entry of an ELF64 header */

		for (unsigned k = 0; k < 4; k++)
			addrs[n++] = entry + 1 + 16 * k;
		for (size_t off = size >= 128 ? size - 128 : 0; off + 8 <= size && n < 20; off += 8)
			addrs[n++] = le64(data + off);
		(void)sym_resolve(s, addrs, n, &tab, &err);
		(void)sym_notes(s);
		sym_free(s);
	}
	close(fd);
}

/* Every lookup of the cache at pc, reading each string it leads to; a unit
 * is checked first, as the symbolizer does (a damaged one is not used). */
static size_t fz_symcache_probe(struct dw_cache *c, uint64_t pc)
{
	int known;
	size_t n = 0;
	char why[128];
	const struct dw_ccu *cu = dw_cache_cu(c, pc, &known);

	if (!cu || !dw_cache_unit_ok(c, cu, why, sizeof(why)))
		return 0;
	const uint32_t *files = dw_cache_files(c, cu);
	const struct dw_crow *r = dw_cache_row(c, cu, pc);
	if (r) {
		const char *f = dw_cache_ustr(c, cu, files[r->file & ~DW_CROW_END]);
		n += f ? strlen(f) : 0;
	}
	for (int32_t i = dw_cache_scope(c, cu, pc); i >= 0; i = dw_cache_scopes(c, cu)[i].parent) {
		const struct dw_cscope *sc = &dw_cache_scopes(c, cu)[i];
		const char *nm = dw_cache_ustr(c, cu, sc->name);
		const char *cf = sc->call_file == DW_CACHE_NONE ? NULL : dw_cache_ustr(c, cu, files[sc->call_file]);
		n += (nm ? strlen(nm) : 0) + (cf ? strlen(cf) : 0) + 1;
	}
	return n;
}

/* Store the right checksums in a copy of a file: each unit's whose blob lies
 * in the file, then the global part's, so that mutations reach the checks
 * behind them. */
static void fz_symcache_fix(unsigned char *p, size_t size)
{
	struct dw_chdr h;
	size_t hs, g;

	if (size < sizeof(h))
		return;
	memcpy(&h, p, sizeof(h));
	h.size = size;
	hs = h.hdrsize <= size ? h.hdrsize : size;
	g = h.glob_end >= hs && h.glob_end <= size ? h.glob_end : size;
	if (h.cus_off >= hs && h.cus_off % 8 == 0 && h.cus_off <= g && h.ncus <= (g - h.cus_off) / sizeof(struct dw_ccu)) {
		struct dw_ccu *cus = (struct dw_ccu *)(p + h.cus_off);

		for (uint64_t i = 0; i < h.ncus; i++)
			if (cus[i].blob_off <= size && cus[i].blob_size <= size - cus[i].blob_off)
				cus[i].blob_sum = dw_cache_sum(p + cus[i].blob_off, cus[i].blob_size);
	}
	h.sum = dw_cache_sum(p + hs, g - hs);
	memcpy(p, &h, sizeof(h));
}

int fz_symcache_run(const uint8_t *data, size_t size, char *why, size_t whysz)
{
	struct dw_cache c;
	unsigned char *p = malloc(size ? size : 1);   /* 8-byte aligned, as mmap's */
	int rc;

	if (!p)
		abort();
	memcpy(p, data, size);
	fz_symcache_fix(p, size);
	rc = dw_cache_check(&c, p, size, NULL, why, whysz);
	if (rc == 0) {
		const struct dw_chdr *h = c.h;
		const struct dw_carange *ar = (const void *)(c.base + h->aranges_off);
		const struct dw_ccurange *cr = (const void *)(c.base + h->curanges_off);
		const struct dw_ccu *cus = (const void *)(c.base + h->cus_off);
		size_t sum = 0;

		/* every unit checked as a lookup would: the first damaged one refuses */
		for (uint64_t k = 0; k < h->ncus && rc == 0; k++)
			if (!dw_cache_unit_ok(&c, &cus[k], why, whysz))
				rc = -1;
		for (uint64_t i = 0; i < h->naranges && i < 64; i++)
			sum += fz_symcache_probe(&c, ar[i].addr) + fz_symcache_probe(&c, ar[i].addr + 17) +
			       fz_symcache_probe(&c, ar[i].addr - 1);
		for (uint64_t i = 0; i < h->ncuranges && i < 64; i++)
			sum += fz_symcache_probe(&c, cr[i].lo) + fz_symcache_probe(&c, cr[i].hi - 1) +
			       fz_symcache_probe(&c, cr[i].hi);
		for (uint64_t k = 0; k < h->ncus && k < 16; k++) {
			if (!dw_cache_unit_ok(&c, &cus[k], NULL, 0))
				continue;
			const struct dw_crow *rows = dw_cache_rows(&c, &cus[k]);

			for (uint64_t i = 0; i < cus[k].nrows && i < 64; i++)
				sum += fz_symcache_probe(&c, cus[k].rows_base + rows[i].addr + 1);
		}
		sum += fz_symcache_probe(&c, h->last_end) + fz_symcache_probe(&c, h->last_end + 1);
		if (rc == 0)
			snprintf(why, whysz, "accepted: %" PRIu64 " CUs, %zu bytes of names", h->ncus, sum);
		dw_cache_release(&c);
	}
	free(p);
	return rc;
}
