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

/* A Fletcher-style sum of 64-bit words (the running sum of running sums also
 * sees the order of the words): it catches a truncated or torn file and flipped
 * bits at about half an instruction per byte, which matters when a warm run's
 * whole cost is reading the file. Not a defence against a file made to deceive:
 * the bounds checks below make such a file harmless, not right. */
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
	return a ^ (b * 0x9e3779b97f4a7c15ull);
}

static int dw_why(char *why, size_t whysz, const char *msg)
{
	if (why && whysz)
		snprintf(why, whysz, "%s", msg);
	return -1;
}

/* Is the array of n elements of elsz bytes at off inside the file, aligned? */
static int dw_span_ok(const struct dw_cache *c, uint64_t off, uint64_t n, size_t elsz)
{
	if (off % 8 || off > c->len || off < c->h->hdrsize)
		return 0;
	if (n > (c->len - off) / elsz)
		return 0;
	return 1;
}

static int dw_str_ok(const struct dw_cache *c, uint32_t off)
{
	return off == DW_CACHE_NONE || off < c->h->strs_size;
}

/* One CU record's arrays. Returns 0 or -1 with why. */
static int dw_ccu_check(const struct dw_cache *c, const struct dw_ccu *cu, char *why, size_t whysz)
{
	if (!dw_span_ok(c, cu->rows_off, cu->nrows, sizeof(struct dw_crow)) ||
	    !dw_span_ok(c, cu->files_off, cu->nfiles, sizeof(uint32_t)) ||
	    !dw_span_ok(c, cu->scopes_off, cu->nscopes, sizeof(struct dw_cscope)) ||
	    !dw_span_ok(c, cu->ranges_off, cu->nranges, sizeof(struct dw_crange)) ||
	    !dw_span_ok(c, cu->sorted_off, cu->nranges, sizeof(struct dw_crange)) ||
	    cu->nscopes >= 0x7fffffff || cu->nfiles >= DW_CACHE_NONE)
		return dw_why(why, whysz, "a CU's array is out of bounds");
	const struct dw_crow *rows = (const void *)(c->base + cu->rows_off);
	for (uint64_t i = 0; i < cu->nrows; i++)
		if ((rows[i].file & ~DW_CROW_END) >= cu->nfiles || (i && rows[i].addr < rows[i - 1].addr))
			return dw_why(why, whysz, "a line row is out of order or names no file");
	const uint32_t *files = (const void *)(c->base + cu->files_off);
	for (uint64_t i = 0; i < cu->nfiles; i++)
		if (!dw_str_ok(c, files[i]))
			return dw_why(why, whysz, "a file name is out of bounds");
	const struct dw_cscope *sc = (const void *)(c->base + cu->scopes_off);
	for (uint64_t i = 0; i < cu->nscopes; i++)
		if (sc[i].parent < -1 || (sc[i].parent >= 0 && (uint64_t)sc[i].parent >= i) ||
		    !dw_str_ok(c, sc[i].name) || !dw_str_ok(c, sc[i].call_file) ||
		    sc[i].first_range > cu->nranges || sc[i].nranges > cu->nranges - sc[i].first_range)
			return dw_why(why, whysz, "a scope is out of bounds");
	const struct dw_crange *r = (const void *)(c->base + cu->ranges_off);
	const struct dw_crange *s = (const void *)(c->base + cu->sorted_off);
	for (uint64_t i = 0; i < cu->nranges; i++)
		if (r[i].scope >= cu->nscopes || s[i].scope >= cu->nscopes || (i && s[i].lo < s[i - 1].lo))
			return dw_why(why, whysz, "a scope range is out of bounds or order");
	return 0;
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
	if (dw_cache_sum(p + h->hdrsize, len - h->hdrsize) != h->sum)
		return dw_why(why, whysz, "bad checksum");
	if (key && memcmp(&h->key, key, sizeof *key) != 0)
		return dw_why(why, whysz, "made for another build of the module");
	c->base = p;
	c->len = len;
	c->h = h;
	if (h->strs_off > len || h->strs_off < h->hdrsize || h->strs_size == 0 || h->strs_size > len - h->strs_off ||
	    h->strs_size > DW_CACHE_NONE || p[h->strs_off + h->strs_size - 1] != '\0')
		goto bad;
	if (!dw_str_ok(c, h->dbg_path) || !dw_span_ok(c, h->syms_off, h->nsyms, sizeof(struct dw_csym)) ||
	    !dw_span_ok(c, h->aranges_off, h->naranges, sizeof(struct dw_carange)) ||
	    !dw_span_ok(c, h->cus_off, h->ncus, sizeof(struct dw_ccu)))
		goto bad;
	const struct dw_csym *sy = (const void *)(p + h->syms_off);
	for (uint64_t i = 0; i < h->nsyms; i++)
		if (!dw_str_ok(c, sy[i].name) || sy[i].name == DW_CACHE_NONE || (i && sy[i].addr < sy[i - 1].addr))
			goto bad;
	const struct dw_carange *ar = (const void *)(p + h->aranges_off);
	for (uint64_t i = 0; i < h->naranges; i++)
		if ((ar[i].cu != DW_CACHE_NONE && ar[i].cu >= h->ncus) || (i && ar[i].addr < ar[i - 1].addr))
			goto bad;
	const struct dw_ccu *cus = (const void *)(p + h->cus_off);
	for (uint64_t i = 0; i < h->ncus; i++)
		if (dw_ccu_check(c, &cus[i], why, whysz) < 0) {
			memset(c, 0, sizeof *c);
			return -1;
		}
	return 0;
bad:
	memset(c, 0, sizeof *c);
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

void dw_cache_unmap(struct dw_cache *c)
{
	if (c->base)
		munmap((void *)c->base, c->len);
	memset(c, 0, sizeof *c);
}

const char *dw_cache_str(const struct dw_cache *c, uint32_t off)
{
	return off == DW_CACHE_NONE ? NULL : (const char *)c->base + c->h->strs_off + off;
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
	if (lo == 0)
		return NULL;
	if (lo == h->naranges && pc > h->last_end)
		return NULL;
	*known = 1;
	uint32_t k = ar[lo - 1].cu;
	if (k == DW_CACHE_NONE)
		return NULL;
	*known = 0;
	return (const struct dw_ccu *)(c->base + h->cus_off) + k;
}

const struct dw_crow *dw_cache_row(const struct dw_cache *c, const struct dw_ccu *cu, uint64_t pc)
{
	const struct dw_crow *rows = (const void *)(c->base + cu->rows_off);
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
	const struct dw_crange *r = (const void *)(c->base + cu->ranges_off);
	for (uint32_t k = 0; k < sc->nranges; k++)
		if (pc >= r[sc->first_range + k].lo && pc < r[sc->first_range + k].hi)
			return 1;
	return 0;
}

int32_t dw_cache_scope(const struct dw_cache *c, const struct dw_ccu *cu, uint64_t pc)
{
	const struct dw_crange *s = (const void *)(c->base + cu->sorted_off);
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

uint32_t dw_cbuf_str(struct dw_cbuf *b, const char *s)
{
	if (!s)
		return DW_CACHE_NONE;
	const void *known = dw_ptrmap_get(&b->soff, s);
	if (known)
		return (uint32_t)((uintptr_t)known - 1);
	size_t n = strlen(s) + 1;
	if (b->failed || b->slen + n >= DW_CACHE_NONE ||
	    dw_cbuf_room((unsigned char **)&b->strs, &b->scap, b->slen + n) < 0) {
		b->failed = 1;
		return DW_CACHE_NONE;
	}
	uint32_t off = (uint32_t)b->slen;
	memcpy(b->strs + b->slen, s, n);
	b->slen += n;
	dw_ptrmap_put(&b->soff, s, (const void *)((uintptr_t)off + 1));  /* a failure costs size only */
	return off;
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
	if (b->len > max) {
		snprintf(why, whysz, "%zu bytes, over the cache's limit of %llu (MPROF_CACHE_MAX)", b->len,
			 (unsigned long long)max);
		return -1;
	}
	memcpy(h->magic, DW_CACHE_MAGIC, 8);
	h->version = DW_CACHE_VERSION;
	h->hdrsize = sizeof *h;
	h->size = b->len;
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
	size_t done = 0;
	while (done < b->len) {
		ssize_t w = write(fd, b->data + done, b->len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;   /* write() made no progress and said nothing */
			break;
		}
		done += (size_t)w;
	}
	int saved = errno;
	if (close(fd) != 0 && done == b->len)
		saved = errno, done = 0;
	if (done != b->len || rename(tmp, path) != 0) {
		if (done == b->len)
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
	dw_ptrmap_release(&b->soff);
	memset(b, 0, sizeof *b);
}
