/* dw_cache.c - the libdw symbolizer's per-module index file: checking and
 * reading one (mapped read-only, every offset and index checked once before
 * anything is followed: a truncated, foreign or damaged file is refused, never
 * believed) and writing one (built in memory, then a temporary file renamed
 * over the old one, so that a reader sees a whole file or none and two writers
 * cannot mix their bytes). The layout is in dw_priv.h; dw.c decides what goes in.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dw_priv.h"

/* Spread every bit of x over the whole word (xor-shift-multiply rounds). */
static uint64_t dw_cache_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xea8ff5f8d837115full;
	x ^= x >> 29;
	x *= 0x50a74cff026f4c85ull;
	x ^= x >> 32;
	return x;
}

/* A Fletcher-style sum of 64-bit words (the running sum of running sums also
 * sees the order of the words): it catches a truncated or torn file and flipped
 * bits at about half an instruction per byte, which matters when a warm run's
 * whole cost is reading the file. The two sums are mixed before they are
 * combined: a plain a ^ b * K let a flip of bit 62 cancel out (it moved a and
 * b * K by the same 2^62; run-symcache's flipped unit found it). Not a defence
 * against a file made to deceive: the bounds checks below make such a file
 * harmless, not right. */
uint64_t dw_cache_sum(const unsigned char *p, size_t n)
{
	uint64_t a = 0x6a09e667f3bcc909ull ^ n, b = 0x9e3779b97f4a7c15ull;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		uint64_t w[4];
		memcpy(w, p + i, 32);
		a += w[0];
		b += a;
		a += w[1];
		b += a;
		a += w[2];
		b += a;
		a += w[3];
		b += a;
	}
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		a += w;
		b += a;
	}
	for (; i < n; i++) {
		a += p[i];
		b += a;
	}
	return dw_cache_mix(a ^ dw_cache_mix(b));
}

static int dw_why(char *why, size_t whysz, const char *msg)
{
	if (why && whysz)
		snprintf(why, whysz, "%s", msg);
	return -1;
}

/* Is the array of n elements of elsz bytes at off inside [lo, end), aligned? */
static int dw_span_in(uint64_t lo, uint64_t end, uint64_t off, uint64_t n, size_t elsz)
{
	if (off % 8 || off > end || off < lo)
		return 0;
	if (n > (end - off) / elsz)
		return 0;
	return 1;
}

/* Is [off, off + size) inside [lo, end) a string table ending with a NUL? */
static int dw_strs_in(const unsigned char *base, uint64_t lo, uint64_t end, uint64_t off, uint64_t size)
{
	return off >= lo && off <= end && size != 0 && size <= end - off && size <= DW_CACHE_NONE &&
	       base[off + size - 1] == '\0';
}

static int dw_ustr_ok(const struct dw_ccu *cu, uint32_t off)
{
	return off == DW_CACHE_NONE || off < cu->strs_size;
}

/* One unit's blob: checksum, arrays, records. Returns 0 or -1 with why. */
static int dw_unit_check(const struct dw_cache *c, const struct dw_ccu *cu, char *why, size_t whysz)
{
	const unsigned char *blob = c->base + cu->blob_off;
	uint64_t bs = cu->blob_size;
	if (dw_cache_sum(blob, bs) != cu->blob_sum)
		return dw_why(why, whysz, "bad checksum");
	if (!dw_span_in(0, bs, cu->rows_off, cu->nrows, sizeof(struct dw_crow)) ||
	    !dw_span_in(0, bs, cu->files_off, cu->nfiles, sizeof(uint32_t)) ||
	    !dw_span_in(0, bs, cu->scopes_off, cu->nscopes, sizeof(struct dw_cscope)) ||
	    !dw_span_in(0, bs, cu->ranges_off, cu->nranges, sizeof(struct dw_crange)) ||
	    !dw_span_in(0, bs, cu->sorted_off, cu->nranges, sizeof(struct dw_crange)) ||
	    !dw_strs_in(blob, 0, bs, cu->strs_off, cu->strs_size) ||
	    cu->nscopes >= 0x7fffffff || cu->nfiles >= DW_CACHE_NONE)
		return dw_why(why, whysz, "a CU's array is out of bounds");
	const struct dw_crow *rows = (const void *)(blob + cu->rows_off);
	for (uint64_t i = 0; i < cu->nrows; i++)
		if ((rows[i].file & ~DW_CROW_END) >= cu->nfiles || (i && rows[i].addr < rows[i - 1].addr))
			return dw_why(why, whysz, "a line row is out of order or names no file");
	const uint32_t *files = (const void *)(blob + cu->files_off);
	for (uint64_t i = 0; i < cu->nfiles; i++)
		if (!dw_ustr_ok(cu, files[i]))
			return dw_why(why, whysz, "a file name is out of bounds");
	const struct dw_cscope *sc = (const void *)(blob + cu->scopes_off);
	for (uint64_t i = 0; i < cu->nscopes; i++)
		if (sc[i].parent < -1 || (sc[i].parent >= 0 && (uint64_t)sc[i].parent >= i) ||
		    !dw_ustr_ok(cu, sc[i].name) || (sc[i].call_file != DW_CACHE_NONE && sc[i].call_file >= cu->nfiles) ||
		    sc[i].first_range > cu->nranges || sc[i].nranges > cu->nranges - sc[i].first_range)
			return dw_why(why, whysz, "a scope is out of bounds");
	const struct dw_crange *r = (const void *)(blob + cu->ranges_off);
	const struct dw_crange *s = (const void *)(blob + cu->sorted_off);
	for (uint64_t i = 0; i < cu->nranges; i++)
		if (r[i].scope >= cu->nscopes || s[i].scope >= cu->nscopes || (i && s[i].lo < s[i - 1].lo))
			return dw_why(why, whysz, "a scope range is out of bounds or order");
	return 0;
}

int dw_cache_unit_ok(struct dw_cache *c, const struct dw_ccu *cu, char *why, size_t whysz)
{
	size_t i = (size_t)(cu - (const struct dw_ccu *)(c->base + c->h->cus_off));
	if (c->ustate[i] == 0)
		c->ustate[i] = dw_unit_check(c, cu, why, whysz) == 0 ? 1 : -1;
	return c->ustate[i] > 0;
}

int dw_cache_check(struct dw_cache *c, const unsigned char *p, size_t len, const struct dw_ckey *key,
		   char *why, size_t whysz)
{
	memset(c, 0, sizeof *c);
	if (len < sizeof(struct dw_chdr))
		return dw_why(why, whysz, "truncated header");
	const struct dw_chdr *h = (const void *)p;
	if (memcmp(h->magic, DW_CACHE_MAGIC, 8) != 0)
		return dw_why(why, whysz, "not a symbol cache file");
	if (h->version != DW_CACHE_VERSION || h->hdrsize != sizeof *h)
		return dw_why(why, whysz, "another version of the cache format");
	if (h->size != len)
		return dw_why(why, whysz, "truncated or extended");
	uint64_t g = h->glob_end;
	if (g < h->hdrsize || g > len || g % 8)
		return dw_why(why, whysz, "an offset or index is out of bounds");
	if (dw_cache_sum(p + h->hdrsize, g - h->hdrsize) != h->sum)
		return dw_why(why, whysz, "bad checksum");
	if (key && memcmp(&h->key, key, sizeof *key) != 0)
		return dw_why(why, whysz, "made for another build of the module");
	if (!dw_strs_in(p, h->hdrsize, g, h->strs_off, h->strs_size) ||
	    (h->dbg_path != DW_CACHE_NONE && h->dbg_path >= h->strs_size) ||
	    !dw_span_in(h->hdrsize, g, h->syms_off, h->nsyms, sizeof(struct dw_csym)) ||
	    !dw_span_in(h->hdrsize, g, h->aranges_off, h->naranges, sizeof(struct dw_carange)) ||
	    !dw_span_in(h->hdrsize, g, h->curanges_off, h->ncuranges, sizeof(struct dw_ccurange)) ||
	    !dw_span_in(h->hdrsize, g, h->cus_off, h->ncus, sizeof(struct dw_ccu)))
		goto bad;
	const struct dw_csym *sy = (const void *)(p + h->syms_off);
	for (uint64_t i = 0; i < h->nsyms; i++)
		if (sy[i].name >= h->strs_size || (i && sy[i].addr < sy[i - 1].addr))
			goto bad;
	const struct dw_carange *ar = (const void *)(p + h->aranges_off);
	for (uint64_t i = 0; i < h->naranges; i++)
		if ((ar[i].cu != DW_CACHE_NONE && ar[i].cu >= h->ncus) || (i && ar[i].addr < ar[i - 1].addr))
			goto bad;
	const struct dw_ccurange *cr = (const void *)(p + h->curanges_off);
	for (uint64_t i = 0; i < h->ncuranges; i++)
		if ((cr[i].cu != DW_CACHE_NONE && cr[i].cu >= h->ncus) || cr[i].lo >= cr[i].hi ||
		    (i && cr[i].lo < cr[i - 1].lo))
			goto bad;
	const struct dw_ccu *cus = (const void *)(p + h->cus_off);
	for (uint64_t i = 0; i < h->ncus; i++)
		if (cus[i].blob_off % 8 || cus[i].blob_off < g || cus[i].blob_off > len ||
		    cus[i].blob_size > len - cus[i].blob_off)
			goto bad;
	if (!(c->ustate = calloc(h->ncus + 1, 1)))
		return dw_why(why, whysz, "out of memory");
	c->base = p;
	c->len = len;
	c->h = h;
	return 0;
bad:
	return dw_why(why, whysz, "an offset or index is out of bounds");
}

int dw_cache_map(struct dw_cache *c, const char *path, const struct dw_ckey *key, char *why, size_t whysz)
{
	memset(c, 0, sizeof *c);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		return dw_why(why, whysz, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return dw_why(why, whysz, "not a regular file");
	}
	if ((uint64_t)st.st_size < sizeof(struct dw_chdr)) {
		close(fd);
		return dw_why(why, whysz, "truncated header");
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return dw_why(why, whysz, strerror(errno));
	if (dw_cache_check(c, p, (size_t)st.st_size, key, why, whysz) < 0) {
		munmap(p, (size_t)st.st_size);
		return -1;
	}
	return 0;
}

void dw_cache_release(struct dw_cache *c)
{
	free(c->ustate);
	memset(c, 0, sizeof *c);
}

void dw_cache_unmap(struct dw_cache *c)
{
	if (c->base)
		munmap((void *)c->base, c->len);
	dw_cache_release(c);
}

const char *dw_cache_str(const struct dw_cache *c, uint32_t off)
{
	return off == DW_CACHE_NONE ? NULL : (const char *)c->base + c->h->strs_off + off;
}

/* dw_cutable_find's choice: among the last 8 ranges starting at or before pc,
 * the nearest that holds it. */
static const struct dw_ccu *dw_cache_cu_ranges(const struct dw_cache *c, uint64_t pc, int *known)
{
	const struct dw_chdr *h = c->h;
	const struct dw_ccurange *r = (const void *)(c->base + h->curanges_off);
	size_t lo = 0, hi = h->ncuranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
		if (pc >= r[i].lo && pc < r[i].hi) {
			if (r[i].cu == DW_CACHE_NONE) {
				*known = 1;
				return NULL;
			}
			return (const struct dw_ccu *)(c->base + h->cus_off) + r[i].cu;
		}
	return NULL;
}

const struct dw_ccu *dw_cache_cu_own(const struct dw_cache *c, uint64_t pc, int *known)
{
	*known = 0;
	return c->h->ncuranges ? dw_cache_cu_ranges(c, pc, known) : NULL;
}

/* libdwfl's choice (addrarange in its cu.c, as read from its behaviour): the
 * last run starting at or before pc; a gap between runs belongs to the run
 * before it; past the last run only up to the end of the last arange. */
const struct dw_ccu *dw_cache_cu(const struct dw_cache *c, uint64_t pc, int *known)
{
	const struct dw_chdr *h = c->h;
	const struct dw_carange *ar = (const void *)(c->base + h->aranges_off);
	size_t lo = 0, hi = h->naranges;
	*known = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ar[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || (lo == h->naranges && pc > h->last_end))
		return dw_cache_cu_ranges(c, pc, known);
	*known = 1;
	uint32_t k = ar[lo - 1].cu;
	if (k == DW_CACHE_NONE)
		return NULL;
	*known = 0;
	return (const struct dw_ccu *)(c->base + h->cus_off) + k;
}

const struct dw_crow *dw_cache_row(const struct dw_cache *c, const struct dw_ccu *cu, uint64_t pc)
{
	const struct dw_crow *rows = dw_cache_rows(c, cu);
	if (cu->nrows == 0 || pc < cu->rows_base)
		return NULL;
	uint64_t rel = pc - cu->rows_base;
	size_t lo = 0, hi = cu->nrows - 1;
	while (lo < hi) {
		size_t mid = hi - (hi - lo) / 2;
		if (rel < rows[mid].addr)
			hi = mid - 1;
		else
			lo = mid;
	}
	const struct dw_crow *r = &rows[lo];
	if ((r->file & DW_CROW_END) || r->addr > rel)
		return NULL;
	return r;
}

static int dw_cscope_holds(const struct dw_cache *c, const struct dw_ccu *cu, int32_t i, uint64_t pc)
{
	const struct dw_cscope *sc = dw_cache_scopes(c, cu) + i;
	const struct dw_crange *r = (const void *)(c->base + cu->blob_off + cu->ranges_off);
	for (uint32_t k = 0; k < sc->nranges; k++)
		if (pc >= r[sc->first_range + k].lo && pc < r[sc->first_range + k].hi)
			return 1;
	return 0;
}

int32_t dw_cache_scope(const struct dw_cache *c, const struct dw_ccu *cu, uint64_t pc)
{
	const struct dw_crange *s = (const void *)(c->base + cu->blob_off + cu->sorted_off);
	const struct dw_cscope *sc = dw_cache_scopes(c, cu);
	size_t lo = 0, hi = cu->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const struct dw_crange *r = &s[lo - 1];
	if (pc < r->hi)
		return (int32_t)r->scope;
	for (int32_t i = sc[r->scope].parent; i >= 0; i = sc[i].parent)
		if (dw_cscope_holds(c, cu, i, pc))
			return i;
	for (size_t k = lo - 1; k-- > 0;)
		if (pc >= s[k].lo && pc < s[k].hi)
			return (int32_t)s[k].scope;
	return -1;
}

/* ---- writing ---------------------------------------------------------- */

static int dw_cbuf_room(unsigned char **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 4096;
	while (ncap < need)
		ncap *= 2;
	unsigned char *q = realloc(*p, ncap);
	if (!q)
		return -1;
	*p = q;
	*cap = ncap;
	return 0;
}

uint64_t dw_cbuf_add(struct dw_cbuf *b, const void *p, size_t n)
{
	size_t at = (b->len + 7) & ~(size_t)7;
	if (b->failed || dw_cbuf_room(&b->data, &b->cap, at + n) < 0) {
		b->failed = 1;
		return 0;
	}
	memset(b->data + b->len, 0, at - b->len);
	if (n)
		memcpy(b->data + at, p, n);
	b->len = at + n;
	return at;
}

/* Append s to a string table; its offset, or DW_CACHE_NONE. */
static uint32_t dw_strs_add(struct dw_cbuf *b, char **strs, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;
	if (b->failed || *len + n >= DW_CACHE_NONE || dw_cbuf_room((unsigned char **)strs, cap, *len + n) < 0) {
		b->failed = 1;
		return DW_CACHE_NONE;
	}
	uint32_t off = (uint32_t)*len;
	memcpy(*strs + *len, s, n);
	*len += n;
	return off;
}

uint32_t dw_cbuf_str(struct dw_cbuf *b, const char *s)
{
	return s ? dw_strs_add(b, &b->strs, &b->slen, &b->scap, s) : DW_CACHE_NONE;
}

unsigned char *dw_cbuf_unit_begin(struct dw_cbuf *b, size_t room)
{
	b->ustart = (b->ulen + 7) & ~(size_t)7;
	if (b->failed || dw_cbuf_room(&b->units, &b->ucap, b->ustart + room) < 0) {
		b->failed = 1;
		return NULL;
	}
	memset(b->units + b->ulen, 0, b->ustart - b->ulen);
	b->uslen = 0;
	b->ugen++;   /* forget the last unit's strings */
	return b->units + b->ustart;
}

uint32_t dw_cbuf_ustr(struct dw_cbuf *b, const char *s)
{
	if (!s)
		return DW_CACHE_NONE;
	/* Names are interned, so one pointer is one string: a small direct-mapped
	 * table finds the repeats (an inline function's instances) without a
	 * hash map; a miss only costs a duplicate. */
	size_t k = ((uintptr_t)s >> 3) % (sizeof b->ucache / sizeof b->ucache[0]);
	if (b->ucache[k].s == s && b->ucache[k].gen == b->ugen)
		return b->ucache[k].off;
	uint32_t off = dw_strs_add(b, &b->ustrs, &b->uslen, &b->uscap, s);
	b->ucache[k].s = s;
	b->ucache[k].off = off;
	b->ucache[k].gen = b->ugen;
	return off;
}

void dw_cbuf_unit_end(struct dw_cbuf *b, size_t used, struct dw_ccu *rec)
{
	if (b->uslen == 0)
		dw_strs_add(b, &b->ustrs, &b->uslen, &b->uscap, "");
	size_t at = (used + 7) & ~(size_t)7;
	if (b->failed || dw_cbuf_room(&b->units, &b->ucap, b->ustart + at + b->uslen) < 0) {
		b->failed = 1;
		return;
	}
	unsigned char *blob = b->units + b->ustart;
	memset(blob + used, 0, at - used);
	memcpy(blob + at, b->ustrs, b->uslen);
	rec->strs_off = at;
	rec->strs_size = b->uslen;
	rec->blob_off = b->ustart;
	rec->blob_size = at + b->uslen;
	rec->blob_sum = dw_cache_sum(blob, rec->blob_size);
	b->ulen = b->ustart + rec->blob_size;
}

void dw_cbuf_unit_copy(struct dw_cbuf *b, const struct dw_cache *k, const struct dw_ccu *o, struct dw_ccu *rec)
{
	unsigned char *blob = dw_cbuf_unit_begin(b, o->blob_size);
	if (!blob)
		return;
	memcpy(blob, k->base + o->blob_off, o->blob_size);
	*rec = *o;
	rec->blob_off = b->ustart;
	b->ulen = b->ustart + o->blob_size;
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int dw_mkdirs(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		buf[i] = c;
	}
	return 0;
}

/* Write n bytes at p to fd. Returns 0, or -1 with errno set. */
static int dw_write_all(int fd, const unsigned char *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;   /* write() made no progress and said nothing */
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

int dw_cbuf_write(struct dw_cbuf *b, struct dw_chdr *h, const char *dir, const char *name, uint64_t max,
		  char *why, size_t whysz)
{
	if (b->slen == 0)
		dw_cbuf_str(b, "");
	h->strs_size = b->slen;
	h->strs_off = dw_cbuf_add(b, b->strs, b->slen);
	dw_cbuf_add(b, "", 0);
	if (b->failed || b->len < sizeof *h)
		return dw_why(why, whysz, "out of memory");
	h->glob_end = b->len;
	uint64_t total = b->len + b->ulen;
	if (total > max) {
		snprintf(why, whysz, "%llu bytes, over the cache's limit of %llu (MPROF_CACHE_MAX)",
			 (unsigned long long)total, (unsigned long long)max);
		return -1;
	}
	/* the units go right after the global part */
	struct dw_ccu *cus = (struct dw_ccu *)(b->data + h->cus_off);
	for (uint64_t i = 0; i < h->ncus; i++)
		cus[i].blob_off += h->glob_end;
	memcpy(h->magic, DW_CACHE_MAGIC, 8);
	h->version = DW_CACHE_VERSION;
	h->hdrsize = sizeof *h;
	h->size = total;
	h->sum = dw_cache_sum(b->data + sizeof *h, b->len - sizeof *h);
	memcpy(b->data, h, sizeof *h);

	char tmp[4096], path[4096];
	if (dw_mkdirs(dir) < 0) {
		snprintf(why, whysz, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	int n1 = snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, name);
	int n2 = snprintf(path, sizeof path, "%s/%s", dir, name);
	if (n1 < 0 || (size_t)n1 >= sizeof tmp || n2 < 0 || (size_t)n2 >= sizeof path)
		return dw_why(why, whysz, "cache path too long");
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whysz, "cannot write in %s: %s", dir, strerror(errno));
		return -1;
	}
	int ok = dw_write_all(fd, b->data, b->len) == 0 && dw_write_all(fd, b->units, b->ulen) == 0;
	int saved = errno;
	if (close(fd) != 0 && ok)
		saved = errno, ok = 0;
	if (!ok || rename(tmp, path) != 0) {
		if (ok)
			saved = errno;
		unlink(tmp);
		snprintf(why, whysz, "cannot write %s: %s", path, strerror(saved));
		return -1;
	}
	return 0;
}

void dw_cbuf_release(struct dw_cbuf *b)
{
	free(b->data);
	free(b->strs);
	free(b->units);
	free(b->ustrs);
	memset(b, 0, sizeof *b);
}
