/* t_coreparse.c - coreparse on synthetic images: tiny ELF32/ELF64 cores of either
 * byte order and raw dumps, written here into temp files, with notes and memory
 * holding headers made by the heapann_block.h helpers. Every expected number comes
 * from what the test itself wrote. Also: the bad-input list with exact messages,
 * and mutated cores that must never crash the reader.
 */
#include <elf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "check.h"
#include "heapann_note.h"
#include "coreparse.h"
#include "heapann_block.h"
#include "heapann_stats.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

static char tmpdir[] = "/tmp/t_coreparse.XXXXXX";

/* ---- byte buffers and target encoding ---- */

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void buf_room(struct buf *b, size_t len)
{
	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
}

static void buf_put(struct buf *b, const void *src, size_t len)
{
	buf_room(b, len);
	if (src)
		memcpy(b->p + b->n, src, len);
	else
		memset(b->p + b->n, 0, len);
	b->n += len;
}

static void buf_align(struct buf *b, size_t a)
{
	while (b->n % a)
		buf_put(b, NULL, 1);
}

static void enc(unsigned char *p, uint64_t v, unsigned nbytes, int big)
{
	unsigned i;

	for (i = 0; i < nbytes; i++)
		p[big ? nbytes - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static void buf_int(struct buf *b, uint64_t v, unsigned nbytes, int big)
{
	buf_room(b, nbytes);
	enc(b->p + b->n, v, nbytes, big);
	b->n += nbytes;
}

/* ---- target memory with headers ---- */

struct mem {
	uint64_t base;
	unsigned char *p;
	size_t size;
	unsigned w;
	int big;
};

static void mem_init(struct mem *m, uint64_t base, size_t size, unsigned w, int big)
{
	m->base = base;
	m->size = size;
	m->w = w;
	m->big = big;
	m->p = calloc(1, size);
}

static void mem_word(struct mem *m, uint64_t addr, uint64_t v)
{
	enc(m->p + (addr - m->base), v, m->w, m->big);
}

/* Write a header at hdr as annotate/ does, user data 0xAB and the guard; returns
 * the user address. Bytes past the region are not written. */
static uint64_t mem_block(struct mem *m, uint64_t hdr, uint64_t size, unsigned depth, uint64_t seq,
			  const uint64_t *frames, unsigned guard, unsigned pad, int freed)
{
	unsigned w = m->w, i;
	uint64_t info = heapann_info_make(guard, pad);
	uint64_t user = hdr + heapann_header_bytes(depth, w), a;

	mem_word(m, hdr, freed ? heapann_start_freed(w) : heapann_start_live(w));
	mem_word(m, hdr + HEAPANN_W_INFO * w, info);
	mem_word(m, hdr + HEAPANN_W_SIZE * w, size);
	mem_word(m, hdr + HEAPANN_W_DEPTH * w, depth);
	mem_word(m, hdr + HEAPANN_W_SEQ * w, seq);
	mem_word(m, hdr + HEAPANN_W_CHECK * w, heapann_check(hdr, size, depth, seq, info, w));
	for (i = 0; i < depth; i++)
		mem_word(m, hdr + (HEAPANN_W_FRAMES + i) * w, frames[i]);
	mem_word(m, user - w, (freed ? heapann_end_freed(w) : heapann_end_live(w)) | depth);
	for (a = user; a < user + size + guard && a < m->base + m->size; a++)
		m->p[a - m->base] = a < user + size ? 0xAB : HEAPANN_GUARD_BYTE;
	return user;
}

/* ---- ELF writer ---- */

struct seg {
	uint64_t vaddr;
	const unsigned char *data;
	uint64_t filesz, memsz;
	uint32_t flags;
};

struct nt {
	const char *name;
	uint32_t type;
	const unsigned char *desc;
	uint32_t descsz;
};

/* An ELF file image: ELF header, program headers (one PT_NOTE when there are
 * notes, then one PT_LOAD per segment), the notes, the segments' file bytes. */
static void elf_build(struct buf *out, unsigned w, int big, uint16_t type, uint16_t machine,
		      const struct nt *notes, size_t nnotes, const struct seg *segs, size_t nsegs)
{
	size_t ehsz = w == 8 ? 64 : 52, phsz = w == 8 ? 56 : 32;
	size_t nph = nsegs + (nnotes ? 1 : 0), i, noteoff, notelen = 0;
	uint64_t off;
	struct buf nb = { 0 };
	unsigned char id[EI_NIDENT] = { 0x7f, 'E', 'L', 'F' };

	for (i = 0; i < nnotes; i++) {
		size_t nl = strlen(notes[i].name) + 1;

		buf_int(&nb, nl, 4, big);
		buf_int(&nb, notes[i].descsz, 4, big);
		buf_int(&nb, notes[i].type, 4, big);
		buf_put(&nb, notes[i].name, nl);
		buf_align(&nb, 4);
		buf_put(&nb, notes[i].desc, notes[i].descsz);
		buf_align(&nb, 4);
	}
	notelen = nb.n;
	noteoff = ehsz + nph * phsz;
	out->n = 0;
	id[EI_CLASS] = w == 8 ? ELFCLASS64 : ELFCLASS32;
	id[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
	id[EI_VERSION] = EV_CURRENT;
	buf_put(out, id, EI_NIDENT);
	buf_int(out, type, 2, big);
	buf_int(out, machine, 2, big);
	buf_int(out, EV_CURRENT, 4, big);
	buf_int(out, 0, w, big);              /* e_entry */
	buf_int(out, nph ? ehsz : 0, w, big); /* e_phoff */
	buf_int(out, 0, w, big);              /* e_shoff */
	buf_int(out, 0, 4, big);              /* e_flags */
	buf_int(out, ehsz, 2, big);
	buf_int(out, phsz, 2, big);
	buf_int(out, nph, 2, big);
	buf_int(out, w == 8 ? 64 : 40, 2, big);
	buf_int(out, 0, 2, big);
	buf_int(out, 0, 2, big);
	off = (noteoff + notelen + 63) & ~(uint64_t)63;
	for (i = 0; i < nph; i++) {
		int isnote = nnotes && i == 0;
		const struct seg *s = isnote ? NULL : &segs[i - (nnotes ? 1 : 0)];
		uint64_t o = isnote ? noteoff : off, va = isnote ? 0 : s->vaddr;
		uint64_t fsz = isnote ? notelen : s->filesz, msz = isnote ? 0 : s->memsz;
		uint32_t pt = isnote ? PT_NOTE : PT_LOAD, fl = isnote ? PF_R : s->flags;

		if (w == 8) {
			buf_int(out, pt, 4, big);
			buf_int(out, fl, 4, big);
			buf_int(out, o, 8, big);
			buf_int(out, va, 8, big);
			buf_int(out, 0, 8, big);
			buf_int(out, fsz, 8, big);
			buf_int(out, msz, 8, big);
			buf_int(out, isnote ? 4 : 64, 8, big);
		} else {
			buf_int(out, pt, 4, big);
			buf_int(out, o, 4, big);
			buf_int(out, va, 4, big);
			buf_int(out, 0, 4, big);
			buf_int(out, fsz, 4, big);
			buf_int(out, msz, 4, big);
			buf_int(out, fl, 4, big);
			buf_int(out, isnote ? 4 : 64, 4, big);
		}
		if (!isnote)
			off = (off + s->filesz + 63) & ~(uint64_t)63;
	}
	buf_put(out, nb.p, notelen);
	for (i = 0; i < nsegs; i++) {
		buf_align(out, 64);
		buf_put(out, segs[i].data, segs[i].filesz);
	}
	free(nb.p);
}

static char *tpath(const char *name)
{
	static char p[8][256];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || (len && fwrite(data, 1, len, f) != len))
		abort();
	fclose(f);
}

/* ---- note payloads ---- */

/* struct elf_prstatus: cursig at 12, pid at 32/24, pr_reg at 112/72, then pr_fpvalid. */
static void nt_prstatus(struct buf *b, unsigned w, int big, int pid, int sig, const uint64_t *regs,
			unsigned nregs)
{
	size_t regoff = w == 8 ? 112 : 72, i;

	b->n = 0;
	buf_put(b, NULL, regoff + nregs * w + w);
	enc(b->p + 0, (uint64_t)sig, 4, big);
	enc(b->p + 12, (uint64_t)sig, 2, big);
	enc(b->p + (w == 8 ? 32 : 24), (uint64_t)pid, 4, big);
	for (i = 0; i < nregs; i++)
		enc(b->p + regoff + i * w, regs[i], w, big);
}

/* struct elf_prpsinfo: fname[16] then psargs[80] end the structure. */
static void nt_prpsinfo(struct buf *b, size_t total, const char *fname, const char *args)
{
	b->n = 0;
	buf_put(b, NULL, total);
	memcpy(b->p + total - 96, fname, strlen(fname));
	memcpy(b->p + total - 80, args, strlen(args));
}

struct file_map {
	uint64_t start, end, pgoff;
	const char *path;
};

static void nt_file(struct buf *b, unsigned w, int big, const struct file_map *f, size_t n, uint64_t page)
{
	size_t i;

	b->n = 0;
	buf_int(b, n, w, big);
	buf_int(b, page, w, big);
	for (i = 0; i < n; i++) {
		buf_int(b, f[i].start, w, big);
		buf_int(b, f[i].end, w, big);
		buf_int(b, f[i].pgoff, w, big);
	}
	for (i = 0; i < n; i++)
		buf_put(b, f[i].path, strlen(f[i].path) + 1);
}

static void nt_auxv(struct buf *b, unsigned w, int big, const uint64_t *pairs, size_t n)
{
	size_t i;

	b->n = 0;
	for (i = 0; i < 2 * n; i++)
		buf_int(b, pairs[i], w, big);
}

/* ---- scan helpers ---- */

static const struct cp_block *block_at(const struct cp_scan *s, uint64_t user)
{
	size_t i;

	for (i = 0; i < s->nblocks; i++)
		if (s->blocks[i].user == user)
			return &s->blocks[i];
	return NULL;
}

static const struct cp_damage *damage_at(const struct cp_scan *s, uint64_t hdr)
{
	size_t i;

	for (i = 0; i < s->ndamaged; i++)
		if (s->damaged[i].hdr == hdr)
			return &s->damaged[i];
	return NULL;
}

/* The stack's frames equal f[0..n). */
static int stack_is(const struct cp_scan *s, uint32_t st, const uint64_t *f, unsigned n)
{
	unsigned i;

	if (st >= s->nstacks || s->stacks[st].depth != n)
		return 0;
	for (i = 0; i < n; i++)
		if (s->addrs[s->stack_frames[s->stacks[st].first + i]] != f[i])
			return 0;
	return 1;
}

static int addrs_sorted_unique(const struct cp_scan *s)
{
	size_t i;

	for (i = 1; i < s->naddrs; i++)
		if (s->addrs[i - 1] >= s->addrs[i])
			return 0;
	return 1;
}

static int blocks_sorted(const struct cp_scan *s)
{
	size_t i;

	for (i = 1; i < s->nblocks; i++)
		if (s->blocks[i - 1].user > s->blocks[i].user)
			return 0;
	return 1;
}

/* The two scans of img noted the same words as possible addresses (or neither
 * noted any). */
static int ptr_notes_equal(const struct cp_image *img, const struct cp_scan *a, const struct cp_scan *b)
{
	uint64_t nbits = 0;
	size_t i;

	if (!a->ptr_words || !b->ptr_words)
		return !a->ptr_words && !b->ptr_words;
	for (i = 0; i < img->nsegs; i++) {
		const struct cp_segment *sg = &img->segs[i];
		uint64_t off0 = (8 - sg->vaddr % 8) % 8;

		if (a->ptr_seg_bit[i] != b->ptr_seg_bit[i])
			return 0;
		if (sg->avail >= off0 + 8)
			nbits = a->ptr_seg_bit[i] + ((sg->avail - off0) / 8 + 63) / 64 * 64;
	}
	return a->ptr_lo == b->ptr_lo && a->ptr_hi == b->ptr_hi &&
	       memcmp(a->ptr_words, b->ptr_words, (nbits / 64 + 1) * sizeof(uint64_t)) == 0;
}

/* Two scans hold the same result (stack numbers included, and the (stack,
 * size) counts slot for slot: the blocks come to the table in one order). */
static int scans_equal(const struct cp_scan *a, const struct cp_scan *b)
{
	return a->nblocks == b->nblocks && a->ndamaged == b->ndamaged && a->nstacks == b->nstacks &&
	       a->naddrs == b->naddrs && a->nstale == b->nstale && a->nstack_frames == b->nstack_frames &&
	       memcmp(a->blocks, b->blocks, a->nblocks * sizeof(*a->blocks)) == 0 &&
	       memcmp(a->damaged, b->damaged, a->ndamaged * sizeof(*a->damaged)) == 0 &&
	       memcmp(a->stacks, b->stacks, a->nstacks * sizeof(*a->stacks)) == 0 &&
	       memcmp(a->stack_frames, b->stack_frames, a->nstack_frames * sizeof(uint32_t)) == 0 &&
	       memcmp(a->addrs, b->addrs, a->naddrs * sizeof(uint64_t)) == 0 &&
	       a->live_bytes == b->live_bytes && a->live_overhead == b->live_overhead &&
	       a->nstray == b->nstray && a->ncut == b->ncut && a->nwriting == b->nwriting &&
	       a->nguard_broken == b->nguard_broken && a->lead_max == b->lead_max &&
	       a->nstack_live == b->nstack_live && !a->stack_live == !b->stack_live &&
	       (!a->stack_live || memcmp(a->stack_live, b->stack_live,
					 a->nstack_live * sizeof(*a->stack_live)) == 0) &&
	       a->nstack_sizes == b->nstack_sizes && !a->stack_sizes == !b->stack_sizes &&
	       (!a->stack_sizes || memcmp(a->stack_sizes, b->stack_sizes,
					  a->nstack_sizes * sizeof(*a->stack_sizes)) == 0);
}

/* cp_scan_image_opts(img, base, out, err), then the same image scanned again
 * with base's options and without the fast path for intact headers
 * (check_start8), without AVX2, and without both. Returns what the first scan
 * returned (*out is the caller's to free when 0); *same is 1 when all four hold
 * the same result and the same notes of possible addresses. */
static int scan_four(const struct cp_image *img, const struct cp_scan_options *base,
		     struct cp_scan *out, struct cp_error *err, int *same)
{
	*same = 1;
	if (cp_scan_image_opts(img, base, out, err) != 0)
		return -1;
	for (int k = 1; k < 4; k++) {
		struct cp_scan_options o = *base;
		struct cp_scan t;
		struct cp_error e = { 0 };

		o.no_fast = k & 1;
		o.no_avx2 = (k & 2) != 0;
		if (cp_scan_image_opts(img, &o, &t, &e) != 0) {
			*same = 0;
			continue;
		}
		if (!scans_equal(out, &t) || !ptr_notes_equal(img, out, &t))
			*same = 0;
		cp_scan_free(&t);
	}
	return 0;
}

/* scan_four with base's options (NULL: cp_scan_image's, nthreads threads),
 * and one check named after what that all four agree. Returns what the first
 * scan returned; *out is the caller's to free when 0. */
static int scan_cmp_opts(const char *what, const struct cp_image *img,
			 const struct cp_scan_options *base, unsigned nthreads,
			 struct cp_scan *out, struct cp_error *err)
{
	struct cp_scan_options o;
	char name[200];
	int same;

	if (base) {
		o = *base;
	} else {
		memset(&o, 0, sizeof(o));
		o.nthreads = nthreads;
	}
	if (scan_four(img, &o, out, err, &same) != 0)
		return -1;
	snprintf(name, sizeof(name), "%s: the same scan without the fast path, without AVX2", what);
	CHECK(name, same);
	return 0;
}

/* scan_cmp_opts with cp_scan_image's options on nthreads threads. */
static int scan_cmp(const char *what, const struct cp_image *img, unsigned nthreads,
		    struct cp_scan *out, struct cp_error *err)
{
	return scan_cmp_opts(what, img, NULL, nthreads, out, err);
}

static unsigned progress_calls, progress_elsewhere;
static uint64_t progress_last, progress_total;

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
	if (!pthread_equal(pthread_self(), *(const pthread_t *)arg))
		progress_elsewhere++;
	progress_calls++;
	progress_last = done;
	progress_total = total;
}

/* ---- the main synthetic heap, for any word size and byte order ---- */

/* Expected facts about the heap built by heap_build(). */
struct heap_expect {
	uint64_t a, b, c, d, e, k, m, u, big_user, sig;       /* user addresses of blocks */
	uint64_t f_hdr, g_hdr, h_hdr, i_hdr, j_hdr, l_hdr, o_hdr, p_hdr; /* damaged headers */
	uint64_t live_bytes, live_overhead;
	uint64_t s1[3], s2[2], s3[1], s4[1], s5[1];
};

#define HEAP1 0x10000u
#define HEAP1_SIZE 0x2000u
#define HEAP2 0x20000u       /* memsz 0x1000, only 0x100 in the file */
#define HEAP3 0x30000u       /* 0x40 bytes: an END whose header would start before it */
#define TEXT0 0x40000u       /* memsz 0x1000, nothing in the file */

static void heap_build(unsigned w, int big, struct mem *m1, struct mem *m2, struct mem *m3,
		       struct heap_expect *x)
{
	static const uint64_t s1[3] = { 0x401000, 0x401100, 0x401200 };
	static const uint64_t s2[2] = { 0x401000, 0x402000 };
	static const uint64_t s3[1] = { 0x403000 };
	static const uint64_t s4[1] = { 0x404000 };
	static const uint64_t s5[1] = { 0x405000 };
	uint64_t h, u;

	memcpy(x->s1, s1, sizeof(s1));
	memcpy(x->s2, s2, sizeof(s2));
	memcpy(x->s3, s3, sizeof(s3));
	memcpy(x->s4, s4, sizeof(s4));
	memcpy(x->s5, s5, sizeof(s5));
	mem_init(m1, HEAP1, HEAP1_SIZE, w, big);
	mem_init(m2, HEAP2, 0x100, w, big);
	mem_init(m3, HEAP3, 0x40, w, big);
	x->live_bytes = x->live_overhead = 0;

	/* A: live, 100 bytes, guard 8 */
	x->a = mem_block(m1, HEAP1 + 0x10, 100, 3, 1, s1, 8, 0, 0);
	x->live_bytes += 100;
	x->live_overhead += heapann_header_bytes(3, w) + 8;
	/* B: live, same stack as A */
	x->b = mem_block(m1, HEAP1 + 0x100, 24, 3, 2, s1, 8, 0, 0);
	x->live_bytes += 24;
	x->live_overhead += heapann_header_bytes(3, w) + 8;
	/* C: live, guard 16 with bytes 0, 1, 2 and 5 overwritten */
	x->c = mem_block(m1, HEAP1 + 0x200, 40, 2, 3, s2, 16, 0, 0);
	m1->p[x->c + 40 + 0 - HEAP1] = 0;
	m1->p[x->c + 40 + 1 - HEAP1] = 'x';
	m1->p[x->c + 40 + 2 - HEAP1] = 'y';
	m1->p[x->c + 40 + 5 - HEAP1] = 0;
	x->live_bytes += 40;
	x->live_overhead += heapann_header_bytes(2, w) + 16;
	/* D: freed, intact */
	x->d = mem_block(m1, HEAP1 + 0x300, 64, 1, 4, s3, 8, 0, 1);
	/* E: freed; the allocator's free list took START and INFO (tcache next/key) */
	h = HEAP1 + 0x400;
	x->e = mem_block(m1, h, 48, 3, 5, s1, 8, 0, 1);
	mem_word(m1, h, HEAP1 + 0x410);
	mem_word(m1, h + w, 0x5A5A5A5A);
	/* F: start magic, SEQ changed after the check word was made (END intact) */
	x->f_hdr = HEAP1 + 0x500;
	mem_block(m1, x->f_hdr, 32, 1, 6, s5, 8, 0, 0);
	mem_word(m1, x->f_hdr + HEAPANN_W_SEQ * w, 666);
	/* G: END overwritten (an underrun from the user data) */
	x->g_hdr = HEAP1 + 0x600;
	u = mem_block(m1, x->g_hdr, 56, 2, 7, s2, 8, 0, 0);
	mem_word(m1, u - w, 0x4141414141414141ull);
	/* H: START overwritten (an overrun from the block before) */
	x->h_hdr = HEAP1 + 0x700;
	mem_block(m1, x->h_hdr, 72, 1, 8, s3, 8, 0, 0);
	mem_word(m1, x->h_hdr, 0x4242424242424242ull);
	/* I: unknown version */
	x->i_hdr = HEAP1 + 0x800;
	mem_block(m1, x->i_hdr, 8, 1, 9, s3, 8, 0, 0);
	mem_word(m1, x->i_hdr + HEAPANN_W_INFO * w, heapann_info_make(8, 0) + 1);
	/* J: depth out of bounds (nothing else written) */
	x->j_hdr = HEAP1 + 0x900;
	mem_word(m1, x->j_hdr, heapann_start_live(w));
	mem_word(m1, x->j_hdr + HEAPANN_W_INFO * w, heapann_info_make(0, 0));
	mem_word(m1, x->j_hdr + HEAPANN_W_DEPTH * w, 300);
	/* K: live, pad 2 words, no guard, depth 0 */
	x->k = mem_block(m1, HEAP1 + 0xA00, 16, 0, 10, NULL, 0, 2, 0);
	x->live_bytes += 16;
	x->live_overhead += heapann_header_bytes(0, w) + 2 * w;
	/* L: a valid header whose size runs past the mapping */
	x->l_hdr = HEAP1 + 0xB00;
	mem_block(m1, x->l_hdr, 0x100000, 1, 11, s3, 8, 0, 0);
	/* a freed header found by its END, START/INFO reused, SIZE past the mapping
	 * and the check word gone too: stale (nothing proves a size), not a freed
	 * block (with the check word intact the scan would try the sizes the word
	 * before the header allows as glibc's chunk size) */
	h = HEAP1 + 0x1600;
	mem_block(m1, h, 8, 1, 16, s3, 8, 0, 1);
	mem_word(m1, h, 0);
	mem_word(m1, h + w, 0);
	mem_word(m1, h + HEAPANN_W_SIZE * w, 0x7FFFFFF0u);
	mem_word(m1, h + HEAPANN_W_CHECK * w, 0x5A5A5A5Au);
	/* U: freed, START/INFO reused, and no valid header had its INFO (guard 24):
	 * a freed block whose size and seq are as read, flagged unverified */
	h = HEAP1 + 0x1700;
	x->u = mem_block(m1, h, 24, 1, 17, s3, 24, 0, 1);
	mem_word(m1, h, 0);
	mem_word(m1, h + w, 0);
	/* a header malloc was writing when the core was taken: complete, check word
	 * right, START not yet stored (libheapann stores it last): not a block, not
	 * damage */
	h = HEAP1 + 0x1900;
	mem_block(m1, h, 32, 2, 18, s2, 8, 0, 0);
	mem_word(m1, h, 0);
	/* a freed header reused after free: stale, counted, not listed */
	h = HEAP1 + 0xC00;
	mem_block(m1, h, 8, 1, 12, s3, 8, 0, 1);
	mem_word(m1, h + HEAPANN_W_SIZE * w, 12345);
	/* big: a live block straddling many small chunks (for the chunked scan) */
	x->big_user = mem_block(m1, HEAP1 + 0xD00, 0x300, 3, 13, s1, 8, 0, 0);
	/* in its data, three stale freed headers (memory reused without clearing) */
	for (h = x->big_user + 0x40; h < x->big_user + 0x40 + 3 * 0x60; h += 0x60)
		mem_block(m1, h, 8, 0, 100 + h % 7, NULL, 0, 0, 1);
	x->live_bytes += 0x300;
	x->live_overhead += heapann_header_bytes(3, w) + 8;
	/* P: START and INFO overwritten: DEPTH still agrees with the END, check fails */
	x->p_hdr = HEAP1 + 0x1100;
	mem_block(m1, x->p_hdr, 8, 1, 15, s3, 8, 0, 0);
	mem_word(m1, x->p_hdr, 0x4343434343434343ull);
	mem_word(m1, x->p_hdr + w, 0x4343434343434343ull);
	/* a lone END_LIVE|4 value (in the 0xAB bytes of L): no header agrees, stray */
	mem_word(m1, HEAP1 + 0x1300, heapann_end_live(w) | 4);
	/* a statistics region's signature (MAGIC0 MAGIC1), and a MAGIC0 alone */
	x->sig = HEAP1 + 0x1400;
	mem_word(m1, x->sig, heapann_stats_magic0(w));
	mem_word(m1, x->sig + w, heapann_stats_magic1(w));
	mem_word(m1, HEAP1 + 0x1500, heapann_stats_magic0(w));
	/* M: second segment: the user data runs past the dumped 0x100 bytes */
	x->m = mem_block(m2, HEAP2 + (w == 8 ? 0xA0 : 0xD0), 0x40, 1, 14, s4, 8, 0, 0);
	x->live_bytes += 0x40;
	x->live_overhead += heapann_header_bytes(1, w) + 8;
	/* O: third segment: an END_LIVE|2 whose header would start before the segment */
	mem_word(m3, HEAP3 + w, heapann_end_live(w) | 2);
	x->o_hdr = HEAP3 + 2 * w - heapann_header_bytes(2, w);
}

/* 1 when the scan's stack_live holds, per stack, its live blocks, their bytes
 * per statistics size class, overhead and smallest and largest sizes, and its
 * stack_sizes the live blocks of each (stack, size), as counted from the
 * blocks. */
static int stack_live_right(const struct cp_scan *s)
{
	int same = s->stack_live && s->nstack_live == s->nstacks && s->stack_sizes;
	size_t pairs = 0, used = 0;

	for (size_t k = 0; same && k < s->nstack_live; k++) {
		struct cp_stack_live want = { 0, { 0 }, 0, 0, 0 };

		for (size_t i = 0; i < s->nblocks; i++) {
			const struct cp_block *b = &s->blocks[i];

			if (b->state != CP_LIVE || b->stack != k)
				continue;
			if (!want.n || b->size < want.min_size)
				want.min_size = b->size;
			if (b->size > want.max_size)
				want.max_size = b->size;
			want.n++;
			want.cls_bytes[heapann_stats_class(b->size)] += b->size;
			want.overhead += b->user - cp_block_start(b) + b->guard_len;
		}
		same = !memcmp(&want, &s->stack_live[k], sizeof(want));
	}
	/* each used slot: the count of its pair; and one slot for each pair */
	for (size_t j = 0; same && j < s->nstack_sizes; j++) {
		const struct cp_stack_size *e = &s->stack_sizes[j];
		uint64_t n = 0;

		if (!e->n)
			continue;
		used++;
		for (size_t i = 0; i < s->nblocks; i++)
			n += s->blocks[i].state == CP_LIVE && s->blocks[i].stack == e->stack &&
			     s->blocks[i].size == e->size;
		same = n == e->n && e->spare == 0;
	}
	for (size_t i = 0; same && i < s->nblocks; i++) {
		size_t k;

		if (s->blocks[i].state != CP_LIVE)
			continue;
		for (k = 0; k < i; k++)
			if (s->blocks[k].state == CP_LIVE && s->blocks[k].stack == s->blocks[i].stack &&
			    s->blocks[k].size == s->blocks[i].size)
				break;
		pairs += k == i;
	}
	return same && used == pairs;
}

/* Check a scan of the heap above. */
static void heap_check(const char *what, unsigned w, const struct cp_scan *s, const struct heap_expect *x)
{
	const struct cp_block *b;
	const struct cp_damage *d;
	char name[400];

#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	CHECK(NAME("6 live, 6 freed"), s->nlive == 6 && s->nfreed == 6 && s->nblocks == 12);
	CHECK(NAME("7 damaged, 2 stale, 2 stray, 1 being written"),
	      s->ndamaged == 7 && s->nstale == 2 && s->nstray == 2 && s->nwriting == 1);
	CHECK(NAME("live bytes and overhead"), s->live_bytes == x->live_bytes && s->live_overhead == x->live_overhead);
	{
		size_t broken = 0, lead = 0;

		for (size_t i = 0; i < s->nblocks; i++) {
			broken += s->blocks[i].state == CP_LIVE && (s->blocks[i].flags & CP_GUARD_BROKEN);
			if (s->blocks[i].user - cp_block_start(&s->blocks[i]) > lead)
				lead = s->blocks[i].user - cp_block_start(&s->blocks[i]);
		}
		CHECK(NAME("broken guards counted (1: C), lead_max the largest user - start"),
		      s->guards_counted && s->nguard_broken == 1 && broken == 1 && s->lead_max == lead);
	}
	CHECK(NAME("live blocks and bytes per stack and size class"), stack_live_right(s));
	CHECK(NAME("blocks sorted by user address"), blocks_sorted(s));
	CHECK(NAME("6 distinct stacks, 7 distinct addresses, sorted"),
	      s->nstacks == 6 && s->naddrs == 7 && addrs_sorted_unique(s));
	b = block_at(s, x->a);
	CHECK(NAME("A: size, seq, depth, guard intact"), b && b->state == CP_LIVE && b->size == 100 && b->seq == 1 &&
	      b->depth == 3 && b->guard_len == 8 && b->guard_diff == 0 && b->overrun == 0 && b->flags == 0 &&
	      cp_block_hdr(b) == HEAP1 + 0x10 && b->pad == 0);
	CHECK(NAME("A: frames innermost first"), b && stack_is(s, b->stack, x->s1, 3));
	CHECK(NAME("B shares A's stack"), b && block_at(s, x->b) && block_at(s, x->b)->stack == b->stack &&
	      block_at(s, x->b)->seq == 2);
	b = block_at(s, x->c);
	CHECK(NAME("C: guard_diff 4, overrun 6"), b && b->guard_len == 16 && b->guard_diff == 4 && b->overrun == 6 &&
	      (b->flags & CP_GUARD_BROKEN) && stack_is(s, b->stack, x->s2, 2));
	b = block_at(s, x->d);
	CHECK(NAME("D: freed"), b && b->state == CP_FREED && b->size == 64 && b->seq == 4 && b->flags == 0);
	b = block_at(s, x->e);
	CHECK(NAME("E: freed with START/INFO reused, found by its END and verified"), b && b->state == CP_FREED &&
	      b->size == 48 && b->seq == 5 && cp_block_hdr(b) == HEAP1 + 0x400 && b->guard_len == 8 &&
	      !(b->flags & CP_HDR_UNVERIFIED) && stack_is(s, b->stack, x->s1, 3));
	b = block_at(s, x->u);
	CHECK(NAME("U: freed, unverified: size and seq as read, no guard"), b && b->state == CP_FREED &&
	      b->size == 24 && b->seq == 17 && b->flags == CP_HDR_UNVERIFIED && b->guard_len == 0);
	b = block_at(s, x->k);
	CHECK(NAME("K: pad 2 words, depth 0"), b && b->pad == 2 * w && b->depth == 0 && b->guard_len == 0 &&
	      b->size == 16 && s->stacks[b->stack].depth == 0);
	b = block_at(s, x->big_user);
	CHECK(NAME("big block across chunks"), b && b->size == 0x300 && b->seq == 13 && b->guard_diff == 0);
	b = block_at(s, x->m);
	CHECK(NAME("M: data and guard not dumped"), b && b->size == 0x40 && b->seq == 14 &&
	      (b->flags & CP_DATA_MISSING) && (b->flags & CP_GUARD_MISSING) && !(b->flags & CP_GUARD_BROKEN));
	d = damage_at(s, x->f_hdr);
	CHECK(NAME("F: check damage, frames known from a matching END"), d && d->kind == CP_DMG_CHECK &&
	      d->known == (CP_KNOWN_USER | CP_KNOWN_FRAMES) && d->user == x->f_hdr + heapann_header_bytes(1, w) &&
	      stack_is(s, d->stack, x->s5, 1));
	d = damage_at(s, x->g_hdr);
	CHECK(NAME("G: end damage keeps size, seq, frames"), d && d->kind == CP_DMG_END && d->size == 56 &&
	      d->seq == 7 && (d->known & (CP_KNOWN_SIZE | CP_KNOWN_SEQ | CP_KNOWN_FRAMES | CP_KNOWN_USER)) ==
	      (CP_KNOWN_SIZE | CP_KNOWN_SEQ | CP_KNOWN_FRAMES | CP_KNOWN_USER) && d->first_bad == 8 &&
	      stack_is(s, d->stack, x->s2, 2));
	d = damage_at(s, x->h_hdr);
	CHECK(NAME("H: start damage found by END, size/seq proven"), d && d->kind == CP_DMG_START && d->size == 72 &&
	      d->seq == 8 && d->first_bad == 0 && (d->known & CP_KNOWN_SIZE) && stack_is(s, d->stack, x->s3, 1));
	d = damage_at(s, x->p_hdr);
	CHECK(NAME("P: start damage, only user and frames known"), d && d->kind == CP_DMG_START &&
	      d->known == (CP_KNOWN_USER | CP_KNOWN_FRAMES) && stack_is(s, d->stack, x->s3, 1));
	d = damage_at(s, x->i_hdr);
	CHECK(NAME("I: version damage"), d && d->kind == CP_DMG_VERSION && d->first_bad == HEAPANN_W_INFO);
	d = damage_at(s, x->j_hdr);
	CHECK(NAME("J: depth out of bounds"), d && d->kind == CP_DMG_BOUNDS && d->first_bad == HEAPANN_W_DEPTH);
	d = damage_at(s, x->l_hdr);
	CHECK(NAME("L: size past the mapping"), d && d->kind == CP_DMG_BOUNDS && d->size == 0x100000 &&
	      d->seq == 11 && d->first_bad == HEAPANN_W_SIZE);
	CHECK(NAME("O: an END with its header before the segment is stray"), damage_at(s, x->o_hdr) == NULL);
	CHECK(NAME("statistics signature listed, a lone MAGIC0 not"), s->sigs && s->nsigs == 1 && s->sigs[0] == x->sig);
	CHECK(NAME("find: a live block's data past stale freed headers in it"),
	      cp_scan_find(s, x->big_user + 0x2F0) == block_at(s, x->big_user) &&
	      cp_scan_find(s, x->big_user + 0x40) == block_at(s, x->big_user));
	CHECK(NAME("find: user data"), cp_scan_find(s, x->a + 50) == block_at(s, x->a));
	CHECK(NAME("find: header and guard"), cp_scan_find(s, HEAP1 + 0x10) == block_at(s, x->a) &&
	      cp_scan_find(s, x->a + 107) == block_at(s, x->a) && cp_scan_find(s, x->a + 108) == NULL);
	CHECK(NAME("find: freed block, nothing outside"), cp_scan_find(s, x->d) == block_at(s, x->d) &&
	      cp_scan_find(s, HEAP1 + 0x8) == NULL && cp_scan_find(s, 0x5000) == NULL);
#undef NAME
}

/* Build the notes and segments of the heap into a core; returns expected facts. */
static void core_heap(const char *path, unsigned w, int big, uint16_t machine, struct heap_expect *x,
		      struct buf *file)
{
	struct mem m1, m2, m3;
	struct buf prs = { 0 }, psi = { 0 }, fil = { 0 }, aux = { 0 };
	uint64_t regs[45];
	unsigned nregs = machine == EM_X86_64 ? 27 : machine == EM_ARM ? 18 : 45, i;
	struct file_map fm[2] = {
		{ 0x400000, 0x401000, 0, "/usr/bin/heapprog" },
		{ 0x401000, 0x406000, 1, "/usr/bin/heapprog" },
	};
	uint64_t av[3][2] = { { AT_PAGESZ, 4096 }, { AT_ENTRY, 0x401234 }, { AT_NULL, 0 } };
	struct nt notes[4];
	struct seg segs[4];

	heap_build(w, big, &m1, &m2, &m3, x);
	for (i = 0; i < 45; i++)
		regs[i] = 0x1000 + i;
	nt_prstatus(&prs, w, big, 4242, 6, regs, nregs);
	nt_prpsinfo(&psi, w == 8 ? 136 : machine == EM_MIPS ? 128 : 124, "heapprog", "heapprog --leak 3");
	nt_file(&fil, w, big, fm, 2, 4096);
	nt_auxv(&aux, w, big, &av[0][0], 3);
	notes[0] = (struct nt){ "CORE", NT_PRSTATUS, prs.p, (uint32_t)prs.n };
	notes[1] = (struct nt){ "CORE", NT_PRPSINFO, psi.p, (uint32_t)psi.n };
	notes[2] = (struct nt){ "CORE", NT_FILE, fil.p, (uint32_t)fil.n };
	notes[3] = (struct nt){ "CORE", NT_AUXV, aux.p, (uint32_t)aux.n };
	/* listed out of address order: the image sorts them */
	segs[0] = (struct seg){ HEAP2, m2.p, 0x100, 0x1000, PF_R | PF_W };
	segs[1] = (struct seg){ HEAP1, m1.p, HEAP1_SIZE, HEAP1_SIZE, PF_R | PF_W };
	segs[2] = (struct seg){ HEAP3, m3.p, 0x40, 0x40, PF_R | PF_W };
	/* p_filesz 0: code the kernel leaves out of the core */
	segs[3] = (struct seg){ TEXT0, NULL, 0, 0x1000, PF_R | PF_X };
	elf_build(file, w, big, ET_CORE, machine, notes, 4, segs, 4);
	write_file(path, file->p, file->n);
	free(m1.p);
	free(m2.p);
	free(m3.p);
	free(prs.p);
	free(psi.p);
	free(fil.p);
	free(aux.p);
}

static void test_core(const char *what, unsigned w, int big, uint16_t machine, int sp_idx, int pc_idx)
{
	struct heap_expect x;
	struct buf file = { 0 };
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s1, s2;
	struct cp_scan_options o;
	char name[160], fn[64];
	const char *path;
	uint64_t v;
	pthread_t self;

#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	snprintf(fn, sizeof(fn), "core-%s", what);
	path = tpath(fn);
	core_heap(path, w, big, machine, &x, &file);
	img = cp_image_open_core(path, &err);
	CHECK(NAME("opens"), img != NULL);
	if (!img) {
		printf("# %s\n", err.msg);
		free(file.p);
		return;
	}
	CHECK(NAME("word size, byte order, machine"), img->wsize == w && img->big_endian == big &&
	      img->machine == machine && img->kind == CP_KIND_CORE);
	CHECK(NAME("4 segments sorted, missing memory counted"), img->nsegs == 4 && img->segs[0].vaddr == HEAP1 &&
	      img->segs[1].vaddr == HEAP2 && img->segs[1].avail == 0x100 && img->segs[3].avail == 0 &&
	      img->missing_bytes == 0xF00 + 0x1000 && img->missing_segs == 2 && img->truncated == 0 &&
	      img->truncated_bytes == 0);
	CHECK(NAME("NT_PRSTATUS: tid, signal"), img->nthreads == 1 && img->threads[0].tid == 4242 &&
	      img->threads[0].signo == 6);
	CHECK(NAME("NT_PRSTATUS: sp and pc"), img->nthreads == 1 && img->threads[0].sp == 0x1000u + sp_idx &&
	      img->threads[0].pc == 0x1000u + pc_idx);
	CHECK(NAME("NT_PRPSINFO: fname, args"), strcmp(img->prpsinfo_fname, "heapprog") == 0 &&
	      strcmp(img->prpsinfo_args, "heapprog --leak 3") == 0);
	CHECK(NAME("NT_FILE"), img->nfiles == 2 && img->files[1].start == 0x401000 && img->files[1].end == 0x406000 &&
	      img->files[1].file_offset == 4096 && strcmp(img->files[1].path, "/usr/bin/heapprog") == 0);
	CHECK(NAME("NT_AUXV"), img->nauxv == 3 && img->auxv[2] == AT_ENTRY && img->auxv[3] == 0x401234);
	CHECK(NAME("main module holds AT_ENTRY"), cp_image_main_module(img) == &img->files[1]);
	CHECK(NAME("mapping lookup"), cp_image_mapping(img, 0x401fff) == &img->files[1] &&
	      cp_image_mapping(img, 0x406000) == NULL);
	CHECK(NAME("read_word decodes the target order"), cp_image_read_word(img, x.a - w, &v) == 0 &&
	      v == (heapann_end_live(w) | 3));
	CHECK(NAME("read_word: undumped and unmapped"), cp_image_read_word(img, HEAP2 + 0x100, &v) == -1 &&
	      cp_image_read_word(img, 0x50000, &v) == -1 && cp_image_ptr(img, HEAP2 + 0xF8, 8) != NULL &&
	      cp_image_ptr(img, HEAP2 + 0xF8, 9) == NULL);
	CHECK(NAME("segment lookup"), cp_image_segment(img, HEAP2 + 0xFFF) == &img->segs[1] &&
	      cp_image_segment(img, HEAP2 + 0x1000) == NULL && cp_image_segment(img, TEXT0 + 5) == &img->segs[3] &&
	      cp_image_ptr(img, TEXT0 + 5, 1) == NULL);
	CHECK(NAME("scan, 1 thread"), scan_cmp(what, img, 1, &s1, &err) == 0);
	heap_check(NAME("1 thread"), w, &s1, &x);
	memset(&o, 0, sizeof(o));
	o.nthreads = 2;
	o.chunk_bytes = 24;   /* headers straddle chunk boundaries everywhere */
	o.progress = on_progress;
	self = pthread_self();
	o.progress_arg = &self;
	progress_calls = progress_elsewhere = 0;
	CHECK(NAME("scan, 2 threads, tiny chunks"), cp_scan_image_opts(img, &o, &s2, &err) == 0);
	CHECK(NAME("same result in tiny chunks"), scans_equal(&s1, &s2));
	CHECK(NAME("progress reaches the total, on the calling thread"), progress_calls > 0 &&
	      progress_elsewhere == 0 && progress_last == progress_total &&
	      progress_total == s2.scanned_bytes && s2.scanned_bytes == HEAP1_SIZE + 0x100 + 0x40);
	cp_scan_free(&s1);
	cp_scan_free(&s2);
	cp_image_free(img);

	/* the same file cut in the middle of the first heap segment */
	{
		size_t off = 0, cut;
		struct cp_image *t;

		img = cp_image_open_core(path, &err);
		off = img ? img->segs[0].offset : 0;
		cp_image_free(img);
		cut = off + (x.a - HEAP1) + 50;   /* in A's user data */
		snprintf(fn, sizeof(fn), "cut-%s", what);
		write_file(tpath(fn), file.p, cut);
		t = cp_image_open_core(tpath(fn), &err);
		CHECK(NAME("truncated: opens, says what is missing"), t && t->truncated == 1 &&
		      t->truncated_bytes == (HEAP1_SIZE - (cut - off)) + 0x40 &&
		      t->segs[0].avail == cut - off && t->segs[2].avail == 0 && t->missing_segs == 4 &&
		      t->missing_bytes == (HEAP1_SIZE - (cut - off)) + 0xF00 + 0x40 + 0x1000);
		if (t && scan_cmp(__func__, t, 0, &s1, &err) == 0) {
			const struct cp_block *b = block_at(&s1, x.a);

			CHECK(NAME("truncated: A and M found, A's data and guard missing"), s1.nblocks == 2 &&
			      s1.nlive == 2 && s1.ndamaged == 0 && block_at(&s1, x.m) && b &&
			      b->size == 100 && (b->flags & CP_DATA_MISSING) && (b->flags & CP_GUARD_MISSING));
			cp_scan_free(&s1);
		} else {
			CHECK(NAME("truncated: scan"), 0);
		}
		cp_image_free(t);
	}
	free(file.p);
#undef NAME
}

/* ---- header words on thread stacks ---- */

/* A would-be damaged header: END_LIVE|0 with zeros where its START and DEPTH
 * would be (what a spilled register leaves on a stack); its header would start
 * at hdr. */
static void mem_stray_end0(struct mem *m, uint64_t hdr)
{
	uint64_t a;

	for (a = hdr; a < hdr + heapann_header_bytes(0, m->w); a += m->w)
		mem_word(m, a, 0);
	mem_word(m, hdr + heapann_header_bytes(0, m->w) - m->w, heapann_end_live(m->w));
}

/* A core with a heap and a thread stack (the segment holding the thread's stack
 * pointer), the heap with one valid block and one would-be damaged header, the
 * stack with two would-be damaged headers, below and above the pointer: those on
 * the stack are counted in nstack_copies, the heap's is damage. The same with the
 * thread named only by libheapann's HEAPANN_NT_STACKS note (a snapshot's running
 * thread: no NT_PRSTATUS). The same core without NT_FILE (not a Linux process's:
 * firmware RAM may hold stack and heap in one segment) and the same stack bytes
 * as a raw dump (no threads) report the stack ones as damage. */
static void test_stack_copies(unsigned w, int big, uint16_t machine, int sp_idx)
{
	const uint64_t heap = 0x600000, stack = 0x7f0000, sp = stack + 0x800;
	struct mem mh, ms;
	struct buf prs = { 0 }, fil = { 0 }, hint = { 0 }, file = { 0 };
	struct file_map fm[1] = { { 0x400000, 0x401000, 0, "/usr/bin/stackprog" } };
	uint64_t regs[45] = { 0 }, f[2] = { 0x401111, 0x402222 }, hu;
	unsigned nregs = machine == EM_X86_64 ? 27 : machine == EM_ARM ? 18 : 45;
	struct nt notes[2];
	struct seg segs[2];
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	char name[160], what[48];

	snprintf(what, sizeof(what), "stack copies W=%u %s", w, big ? "big" : "little");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&mh, heap, 0x1000, w, big);
	mem_init(&ms, stack, 0x1000, w, big);
	hu = mem_block(&mh, heap + 0x40, 24, 2, 7, f, 8, 0, 0);
	mem_stray_end0(&mh, heap + 0x200);
	mem_stray_end0(&ms, stack + 0x400);   /* below the stack pointer: dead */
	mem_stray_end0(&ms, stack + 0xC00);   /* above it: a live frame */
	regs[sp_idx] = sp;
	nt_prstatus(&prs, w, big, 4343, 11, regs, nregs);
	nt_file(&fil, w, big, fm, 1, 4096);
	buf_int(&hint, 4344, w, big);
	buf_int(&hint, sp + 0x100, w, big);
	segs[0] = (struct seg){ heap, mh.p, 0x1000, 0x1000, PF_R | PF_W };
	segs[1] = (struct seg){ stack, ms.p, 0x1000, 0x1000, PF_R | PF_W };
	/* 0: NT_FILE and NT_PRSTATUS; 1: NT_FILE and the HEAPANN note; 2: NT_PRSTATUS only */
	for (unsigned mode = 0; mode < 3; mode++) {
		notes[0] = (struct nt){ "CORE", NT_FILE, fil.p, (uint32_t)fil.n };
		notes[1] = mode == 1 ? (struct nt){ HEAPANN_NOTE_NAME, HEAPANN_NT_STACKS, hint.p, (uint32_t)hint.n }
				     : (struct nt){ "CORE", NT_PRSTATUS, prs.p, (uint32_t)prs.n };
		file.n = 0;
		elf_build(&file, w, big, ET_CORE, machine, notes + (mode == 2), 2 - (mode == 2), segs, 2);
		write_file(tpath("core-stack"), file.p, file.n);
		img = cp_image_open_core(tpath("core-stack"), &err);
		if (mode == 1)
			CHECK(NAME("core opens, no thread, the note's stack address"), img &&
			      img->nthreads == 0 && img->nstack_hints == 1 &&
			      img->stack_hints[0] == sp + 0x100 && img->nfiles == 1);
		else
			CHECK(NAME("core opens, the thread's sp in the stack segment"), img &&
			      img->nthreads == 1 && img->threads[0].sp == sp &&
			      img->nfiles == (mode == 0) && img->nstack_hints == 0);
		if (img && scan_cmp(__func__, img, 1, &s, &err) == 0) {
			if (mode < 2)
				CHECK(NAME(mode ? "core, HEAPANN note: the heap's damage only, 2 stack copies"
						: "core: the heap's damage only, 2 stack copies"),
				      s.nlive == 1 && block_at(&s, hu) && s.ndamaged == 1 &&
				      s.damaged[0].hdr == heap + 0x200 && s.damaged[0].kind == CP_DMG_START &&
				      s.nstack_copies == 2);
			else
				CHECK(NAME("core without NT_FILE: all 3 are damage"),
				      s.nlive == 1 && s.ndamaged == 3 && s.nstack_copies == 0 &&
				      s.damaged[0].hdr == heap + 0x200 && s.damaged[1].hdr == stack + 0x400 &&
				      s.damaged[2].hdr == stack + 0xC00);
			cp_scan_free(&s);
		} else {
			CHECK(NAME("core: scan"), 0);
		}
		cp_image_free(img);
	}
	write_file(tpath("raw-stack"), ms.p, ms.size);
	img = cp_image_open_raw(tpath("raw-stack"), stack, w, big, machine, &err);
	if (img && scan_cmp(__func__, img, 1, &s, &err) == 0) {
		CHECK(NAME("raw dump of the same bytes: no threads, both are damage"),
		      s.nlive == 0 && s.ndamaged == 2 && s.nstack_copies == 0 &&
		      s.damaged[0].hdr == stack + 0x400 && s.damaged[1].hdr == stack + 0xC00);
		cp_scan_free(&s);
	} else {
		CHECK(NAME("raw: opens and scans"), 0);
	}
	cp_image_free(img);
	free(mh.p);
	free(ms.p);
	free(prs.p);
	free(fil.p);
	free(hint.p);
	free(file.p);
#undef NAME
}

/* A thread's stack inside a live block of the heap (a coroutine's, or one made
 * with pthread_attr_setstack, its memory still holding a freed header from an
 * earlier use): would-be damaged headers inside that block, below and above the
 * stack pointer, are stack copies; one elsewhere in the heap is
 * damage, and so are all three when the stack pointer lies outside every block
 * (the segment holds blocks: it is no stack as a whole). */
static void test_stack_in_block(unsigned w, int big, uint16_t machine, int sp_idx)
{
	const uint64_t heap = 0x600000;
	struct mem mh;
	struct buf prs = { 0 }, fil = { 0 }, file = { 0 };
	struct file_map fm[1] = { { 0x400000, 0x401000, 0, "/usr/bin/stackprog" } };
	uint64_t regs[45] = { 0 }, f[2] = { 0x401111, 0x402222 }, bu, other;
	unsigned nregs = machine == EM_X86_64 ? 27 : machine == EM_ARM ? 18 : 45;
	struct nt notes[2];
	struct seg segs[1];
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	char name[160], what[48];

	snprintf(what, sizeof(what), "stack in a block W=%u %s", w, big ? "big" : "little");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&mh, heap, 0x2000, w, big);
	bu = mem_block(&mh, heap + 0x40, 0x1000, 2, 7, f, 8, 0, 0);   /* the stack */
	other = mem_block(&mh, heap + 0x1400, 32, 2, 8, f, 8, 0, 0);
	/* a freed header the stack block's memory still holds from before, below
	 * the pointer: the live block around it is still the stack */
	mem_block(&mh, bu + 0x600, 16, 2, 5, f, 8, 0, 1);
	mem_stray_end0(&mh, bu + 0x100);    /* in the stack block, below the pointer */
	mem_stray_end0(&mh, bu + 0xC00);    /* above it */
	mem_stray_end0(&mh, heap + 0x1800); /* in the heap, past the blocks */
	nt_file(&fil, w, big, fm, 1, 4096);
	segs[0] = (struct seg){ heap, mh.p, 0x2000, 0x2000, PF_R | PF_W };
	for (unsigned inside = 1; inside <= 1; inside--) {
		regs[sp_idx] = inside ? bu + 0x800 : heap + 0x1300;
		prs.n = 0;
		nt_prstatus(&prs, w, big, 4343, 11, regs, nregs);
		notes[0] = (struct nt){ "CORE", NT_PRSTATUS, prs.p, (uint32_t)prs.n };
		notes[1] = (struct nt){ "CORE", NT_FILE, fil.p, (uint32_t)fil.n };
		file.n = 0;
		elf_build(&file, w, big, ET_CORE, machine, notes, 2, segs, 1);
		write_file(tpath("core-stackblk"), file.p, file.n);
		img = cp_image_open_core(tpath("core-stackblk"), &err);
		if (img && scan_cmp(__func__, img, 1, &s, &err) == 0) {
			if (inside)
				CHECK(NAME("sp in the block: 2 stack copies, the heap's damage only"),
				      s.nlive == 2 && block_at(&s, bu) && block_at(&s, other) &&
				      s.ndamaged == 1 && s.damaged[0].hdr == heap + 0x1800 &&
				      s.nstack_copies == 2);
			else
				CHECK(NAME("sp outside every block: all 3 are damage"),
				      s.nlive == 2 && s.ndamaged == 3 && s.nstack_copies == 0 &&
				      s.damaged[0].hdr == bu + 0x100 && s.damaged[1].hdr == bu + 0xC00 &&
				      s.damaged[2].hdr == heap + 0x1800);
			cp_scan_free(&s);
		} else {
			CHECK(NAME("core: opens and scans"), 0);
		}
		cp_image_free(img);
	}
	free(mh.p);
	free(prs.p);
	free(fil.p);
	free(file.p);
#undef NAME
}

/* ---- a board's core (qemu-system's dump-guest-memory): RAM seen twice, flash ---- */

/* No NT_FILE: a segment that repeats an earlier one byte for byte is the same
 * memory at another address (its copies of headers fail their check words)
 * and is left out, whether the alias lies above or below the real RAM (the
 * copy kept is the one whose headers pass); cp_scan_options.skip leaves out the firmware's code, whose
 * literals look like headers. With NT_FILE a repeat is scanned as before. */
static void test_board(unsigned w, int big, int below)
{
	const uint64_t ram = 0x20000000, alias = below ? 0x1FC00000 : 0x20400000, flash = 0x1000;
	struct mem mr, mf;
	struct buf prs = { 0 }, fil = { 0 }, file = { 0 };
	struct file_map fm[1] = { { 0x400000, 0x401000, 0, "/usr/bin/boardprog" } };
	uint64_t regs[18] = { 0 }, f[2] = { 0x1111, 0x2222 }, u, skip[2] = { flash, flash + 0x1000 };
	struct nt notes[2];
	struct seg segs[3];
	struct cp_error err = { 0 };
	struct cp_scan_options o = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	char name[160], what[48];

	snprintf(what, sizeof(what), "board W=%u %s alias %s", w, big ? "big" : "little",
		 below ? "below" : "above");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&mr, ram, 0x1000, w, big);
	mem_init(&mf, flash, 0x1000, w, big);
	u = mem_block(&mr, ram + 0x40, 24, 2, 7, f, 8, 0, 0);
	mem_stray_end0(&mr, ram + 0x200);   /* real damage */
	mem_stray_end0(&mf, flash + 0x300); /* a literal in code */
	regs[13] = 0x30000000;   /* in no segment: no stack copies here */
	nt_prstatus(&prs, w, big, 1, 5, regs, 18);
	nt_file(&fil, w, big, fm, 1, 4096);
	notes[0] = (struct nt){ "CORE", NT_PRSTATUS, prs.p, (uint32_t)prs.n };
	notes[1] = (struct nt){ "CORE", NT_FILE, fil.p, (uint32_t)fil.n };
	segs[0] = (struct seg){ flash, mf.p, 0x1000, 0x1000, 0 };
	/* the alias first when it lies below: the copy kept is the one whose
	 * headers pass their check words, not the lower one */
	segs[below ? 2 : 1] = (struct seg){ ram, mr.p, 0x1000, 0x1000, 0 };
	segs[below ? 1 : 2] = (struct seg){ alias, mr.p, 0x1000, 0x1000, 0 };
	for (unsigned nn = 1; nn <= 2; nn++) {
		file.n = 0;
		elf_build(&file, w, big, ET_CORE, EM_ARM, notes, nn, segs, 3);
		write_file(tpath("core-board"), file.p, file.n);
		img = cp_image_open_core(tpath("core-board"), &err);
		o.skip = nn == 1 ? skip : NULL;
		o.nskip = nn == 1 ? 1 : 0;
		if (img && scan_cmp_opts(NAME(nn == 1 ? "no NT_FILE" : "NT_FILE"), img, &o, 0, &s,
					 &err) == 0) {
			if (nn == 1)
				CHECK(NAME("no NT_FILE, code skipped: the block once, the RAM's damage only"),
				      s.nlive == 1 && block_at(&s, u) && s.ndamaged == 1 &&
				      s.damaged[0].hdr == ram + 0x200);
			else
				CHECK(NAME("NT_FILE, nothing skipped: the repeat and the code are scanned"),
				      s.nlive == 1 && block_at(&s, u) && s.ndamaged == 4 &&
				      s.damaged[0].hdr == flash + 0x300);
			cp_scan_free(&s);
		} else {
			CHECK(NAME("core: opens and scans"), 0);
		}
		cp_image_free(img);
	}
	free(mr.p);
	free(mf.p);
	free(prs.p);
	free(fil.p);
	free(file.p);
#undef NAME
}

/* Many segments of one size in a core without NT_FILE: the repeated-segment
 * rule hashes each once and compares in full only segments of one (size,
 * hash) bucket, at most CP_REPEAT_CMP_CAP bytes; a core with NT_AUXV (a
 * qemu-user or Linux core whose NT_FILE was dropped) does not get the rule. */
#define BM_SEGS 300
#define BM_SIZE 0x10000u
static void test_board_many(void)
{
	struct mem m;
	struct buf prs = { 0 }, aux = { 0 }, file = { 0 };
	uint64_t regs[18] = { 0 }, av[1][2] = { { AT_ENTRY, 0x1234 } };
	struct nt notes[2];
	struct seg *segs = calloc(BM_SEGS, sizeof(*segs));
	unsigned char *distinct = calloc(BM_SEGS, BM_SIZE);
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;

	mem_init(&m, 0x20000000, BM_SIZE, 4, 0);
	mem_stray_end0(&m, 0x20000200);   /* one damaged header in each copy */
	nt_prstatus(&prs, 4, 0, 1, 5, regs, 18);
	nt_auxv(&aux, 4, 0, &av[0][0], 1);
	notes[0] = (struct nt){ "CORE", NT_PRSTATUS, prs.p, (uint32_t)prs.n };
	notes[1] = (struct nt){ "CORE", NT_AUXV, aux.p, (uint32_t)aux.n };
	for (unsigned i = 0; i < BM_SEGS; i++) {
		distinct[(size_t)i * BM_SIZE] = (unsigned char)(i + 1);
		distinct[(size_t)i * BM_SIZE + 1] = (unsigned char)(i >> 8);
	}
	for (unsigned nn = 1; nn <= 2; nn++) {
		for (unsigned same = 0; same < 2; same++) {
			for (unsigned i = 0; i < BM_SEGS; i++)
				segs[i] = (struct seg){ 0x20000000 + (uint64_t)i * 2 * BM_SIZE,
							same ? m.p : distinct + (size_t)i * BM_SIZE, BM_SIZE, BM_SIZE, 0 };
			file.n = 0;
			elf_build(&file, 4, 0, ET_CORE, EM_ARM, notes, nn, segs, BM_SEGS);
			write_file(tpath("core-many"), file.p, file.n);
			img = cp_image_open_core(tpath("core-many"), &err);
			if (!img || scan_cmp(__func__, img, 1, &s, &err) != 0) {
				CHECK("board many: opens and scans", 0);
				cp_image_free(img);
				continue;
			}
			if (nn == 2)
				CHECK(same ? "board many, NT_AUXV, identical: no rule, every copy's damage" :
				      "board many, NT_AUXV, distinct: no rule, nothing read",
				      s.repeat_read_bytes == 0 && s.repeat_cmp_bytes == 0 &&
				      s.ndamaged == (same ? BM_SEGS : 0));
			else if (same)
				CHECK("board many, identical: each compared once with the first, kept once",
				      s.repeat_cmp_bytes == (uint64_t)(BM_SEGS - 1) * BM_SIZE &&
				      s.repeat_cmp_bytes <= CP_REPEAT_CMP_CAP && s.ndamaged == 1 &&
				      s.scanned_bytes == BM_SIZE);
			else
				CHECK("board many, distinct in their first page: sampled only, none compared",
				      s.repeat_cmp_bytes == 0 && s.repeat_read_bytes <= (uint64_t)BM_SEGS * 10 * 4096 &&
				      s.scanned_bytes == (uint64_t)BM_SEGS * BM_SIZE);
			cp_scan_free(&s);
			cp_image_free(img);
		}
	}
	free(m.p);
	free(segs);
	free(distinct);
	free(prs.p);
	free(aux.p);
	free(file.p);
}

/* ---- guards read by the scanner's fast path ---- */

/* A 64-bit little-endian core, whose intact headers take the scanner's fast path
 * (check_start8: guards of up to 16 bytes compared as two masked words when 16
 * bytes are dumped from the guard's start; else guard_check). For each guard
 * length 1..20: a block with the guard intact, one with each guard byte changed
 * in turn, one with the byte just past the guard changed (still intact); and at
 * the segment's end a block whose guard ends 3 bytes before it, intact and with
 * its last guard byte changed. */
#define GF_SEG 0x10000u
static void test_guards_fast(void)
{
	struct mem m;
	struct buf prs = { 0 }, file = { 0 };
	uint64_t regs[27] = { 0 }, frames[2] = { 0x401000, 0x402000 }, hdr = 0x7f0000010000, user;
	struct nt notes[1];
	struct seg segs[1];
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	uint64_t users[20][22], tail[2];
	unsigned bad = 0, seq = 1, g, k, nblocks = 0;

	mem_init(&m, hdr, GF_SEG, 8, 0);
	for (g = 1; g <= 20; g++) {
		for (k = 0; k <= g + 1; k++, hdr += 160) {
			/* k 0: intact; 1..g: guard byte k-1 changed; g+1: the byte past it */
			user = mem_block(&m, hdr, 13 + g, 2, seq++, frames, g, 0, 0);
			if (k)
				m.p[user + 13 + g + (k - 1) - m.base] = 0x00;
			users[g - 1][k] = user;
			nblocks++;
		}
	}
	for (k = 0; k < 2; k++) {
		/* the guard (8 bytes) ends 3 bytes before the segment's end on the
		 * second; the first is 256 bytes lower */
		uint64_t end = m.base + GF_SEG - 3 - (k ? 0 : 256);

		hdr = end - 8 - 13 - heapann_header_bytes(2, 8);
		user = mem_block(&m, hdr, 13, 2, seq++, frames, 8, 0, 0);
		if (k)
			m.p[end - 1 - m.base] = 0x00;
		tail[k] = user;
		nblocks++;
	}
	nt_prstatus(&prs, 8, 0, 1, 6, regs, 27);
	notes[0] = (struct nt){ "CORE", NT_PRSTATUS, prs.p, (uint32_t)prs.n };
	segs[0] = (struct seg){ m.base, m.p, GF_SEG, GF_SEG, PF_R | PF_W };
	elf_build(&file, 8, 0, ET_CORE, EM_X86_64, notes, 1, segs, 1);
	write_file(tpath("core-guards"), file.p, file.n);
	img = cp_image_open_core(tpath("core-guards"), &err);
	if (!img || scan_cmp(__func__, img, 1, &s, &err) != 0) {
		CHECK("guards, fast path: opens and scans", 0);
		cp_image_free(img);
		goto out;
	}
	CHECK("guards, fast path: every block found, none damaged", s.nlive == nblocks && s.ndamaged == 0);
	for (g = 1; g <= 20; g++) {
		for (k = 0; k <= g + 1; k++) {
			const struct cp_block *b = block_at(&s, users[g - 1][k]);
			int broken = k >= 1 && k <= g;

			if (!b || b->guard_len != g || b->size != 13 + g ||
			    b->guard_diff != (broken ? 1 : 0) || b->overrun != (broken ? k : 0) ||
			    !(b->flags & CP_GUARD_BROKEN) != !broken) {
				printf("# guard %u, byte %u changed: %s\n", g, k, b ? "wrong" : "no block");
				bad++;
			}
		}
	}
	CHECK("guards 1..20 bytes: each changed byte found (diff 1, overrun its index + 1), the byte past intact",
	      bad == 0);
	{
		const struct cp_block *a = block_at(&s, tail[0]), *b = block_at(&s, tail[1]);

		CHECK("guard ending 3 bytes before the segment's end: intact, and its last byte changed found",
		      a && b && a->guard_diff == 0 && !(a->flags & CP_GUARD_BROKEN) && b->guard_diff == 1 &&
		      b->overrun == 8 && (b->flags & CP_GUARD_BROKEN) && s.nguard_broken == 210 + 1);
	}
	cp_scan_free(&s);
	cp_image_free(img);
out:
	free(m.p);
	free(prs.p);
	free(file.p);
}

/* ---- raw dumps ---- */

static void test_raw(unsigned w, int big)
{
	struct heap_expect x;
	struct mem m1, m2, m3;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	char name[160], what[32];
	const char *path = tpath("raw.bin");

	snprintf(what, sizeof(what), "raw W=%u %s", w, big ? "big" : "little");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	heap_build(w, big, &m1, &m2, &m3, &x);
	write_file(path, m1.p, m1.size);
	img = cp_image_open_raw(path, HEAP1, w, big, EM_ARM, &err);
	CHECK(NAME("opens"), img && img->nsegs == 1 && img->segs[0].vaddr == HEAP1 &&
	      img->segs[0].avail == HEAP1_SIZE && img->wsize == w && img->big_endian == big);
	if (img && scan_cmp(__func__, img, 0, &s, &err) == 0) {
		const struct cp_block *b = block_at(&s, x.a);

		/* M and O live in other segments; without them: 5 live, 2 freed, 6 damaged.
		 * L's 1 MiB runs past the dump: a raw dump is not a whole mapping, so
		 * its proven header makes a live block whose data was not dumped */
		CHECK(NAME("6 live, 6 freed, 6 damaged, 2 stale, 1 stray, 1 being written"),
		      s.nlive == 6 && s.nfreed == 6 && s.ndamaged == 6 && s.nstale == 2 && s.nstray == 1 &&
		      s.nwriting == 1);
		b = block_at(&s, x.l_hdr + heapann_header_bytes(1, w));
		CHECK(NAME("L: live, its data past the dump's end"), b && b->size == 0x100000 &&
		      (b->flags & CP_DATA_MISSING) && !damage_at(&s, x.l_hdr));
		b = block_at(&s, x.a);
		CHECK(NAME("A"), b && b->size == 100 && b->seq == 1 && stack_is(&s, b->stack, x.s1, 3));
		b = block_at(&s, x.c);
		CHECK(NAME("C overrun"), b && b->guard_diff == 4 && b->overrun == 6);
		CHECK(NAME("G end damage"), damage_at(&s, x.g_hdr) && damage_at(&s, x.g_hdr)->kind == CP_DMG_END);
		cp_scan_free(&s);
	} else {
		CHECK(NAME("scan"), 0);
	}
	cp_image_free(img);
	free(m1.p);
	free(m2.p);
	free(m3.p);
#undef NAME
}

/* ---- many stacks: the scan's recent-stack cache ---- */

/* The frames of test stack k (of MS_STACKS): depth 4 + k % 3; the first three
 * frames take few values, so many stacks share the depth and the first three
 * frames (the recent-stack cache's key) and differ only further down. */
#define MS_STACKS 150
#define MS_BLOCKS 900
static unsigned ms_frames(unsigned k, uint64_t *f)
{
	unsigned depth = 4 + k % 3, i;

	f[0] = 0x401000 + 16 * (k % 2);
	f[1] = 0x402000 + 8 * (k % 2);
	f[2] = 0x402800 + 8 * (k % 4 / 2);
	for (i = 3; i < depth; i++)
		f[i] = 0x403000 + 8 * k + i;
	return depth;
}

/* Which stack block i uses: runs of the same stack, then jumps across the set,
 * so a slot is reused by stacks that collide in it. */
static unsigned ms_pick(unsigned i)
{
	return i % 7 < 3 ? (i / 7 * 11) % MS_STACKS : (i * 37 + i / 3) % MS_STACKS;
}

static void test_many_stacks(unsigned w, int big)
{
	struct mem m;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s, s2;
	struct cp_scan_options o = { 0 };
	uint64_t f[8], hdr, users[MS_BLOCKS];
	uint32_t first_use[MS_STACKS], nused = 0;
	unsigned i, bad_frames = 0, bad_ids = 0, depth;
	char name[160], what[40];
	const char *path = tpath("many-stacks.bin");

	snprintf(what, sizeof(what), "many stacks W=%u %s", w, big ? "big" : "little");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&m, HEAP1, MS_BLOCKS * 128, w, big);
	hdr = HEAP1;
	for (i = 0; i < MS_BLOCKS; i++) {
		depth = ms_frames(ms_pick(i), f);
		users[i] = mem_block(&m, hdr, 8 + i % 16, depth, i + 1, f, 8, 0, 0);
		hdr = (users[i] + 8 + i % 16 + 8 + 15) & ~(uint64_t)15;
	}
	write_file(path, m.p, m.size);
	memset(first_use, 0xFF, sizeof(first_use));
	img = cp_image_open_raw(path, HEAP1, w, big, EM_ARM, &err);
	if (img && scan_cmp(__func__, img, 1, &s, &err) == 0) {
		for (i = 0; i < MS_BLOCKS; i++) {
			const struct cp_block *b = i < s.nblocks ? &s.blocks[i] : NULL;
			unsigned k = ms_pick(i);

			depth = ms_frames(k, f);
			if (first_use[k] == UINT32_MAX)
				first_use[k] = nused++;
			if (!b || b->user != users[i] || !stack_is(&s, b->stack, f, depth))
				bad_frames++;
			else if (b->stack != first_use[k])
				bad_ids++;
		}
		CHECK(NAME("900 live blocks, 150 stacks"), s.nlive == MS_BLOCKS && s.nblocks == MS_BLOCKS &&
		      s.nstacks == MS_STACKS && nused == MS_STACKS && s.ndamaged == 0);
		CHECK(NAME("every block's chain as written"), bad_frames == 0);
		CHECK(NAME("stacks numbered by first use"), bad_ids == 0);
		o.nthreads = 2;
		o.chunk_bytes = 4096;
		CHECK(NAME("2 threads, 4 KiB chunks: the same scan"),
		      cp_scan_image_opts(img, &o, &s2, &err) == 0 && scans_equal(&s, &s2));
		cp_scan_free(&s2);
		cp_scan_free(&s);
	} else {
		CHECK(NAME("scan"), 0);
	}
	cp_image_free(img);
	free(m.p);
#undef NAME
}

/* ---- more (stack, size) pairs than the scan counts (CP_STACK_SIZES_MAX) ---- */

/* A raw dump (W=8, little-endian) of nst stacks of one frame each, each with one
 * live block of every size 1..nsz (nst * nsz pairs, more than
 * CP_STACK_SIZES_MAX). With more than 2,048 stacks every pair goes to the
 * scan's table, which is abandoned during the scan; with at most 2,048 the sizes
 * (all below 512) are counted in place and overflow the table when moved into
 * it at the end. Either way the scan has no stack_sizes, and an_stacks_build
 * reads the blocks: each stack its own cluster of nsz blocks, sizes 1..nsz. */
static struct cp_image *mem_open(const char *path, const struct mem *m, size_t len, int core,
				 struct cp_error *err);

static void test_size_overflow(const char *what, uint32_t nst, uint32_t nsz)
{
	const unsigned w = 8;
	const uint64_t hb = heapann_header_bytes(1, w);
	uint64_t nb = (uint64_t)nst * nsz, hdr = HEAP1, f, bytes = 0;
	size_t len = (size_t)(nb * (hb + 8 + 16) + (uint64_t)nst * nsz * (nsz + 1) / 2 + 4096);
	struct cp_scan_options o = { 0 };
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	struct mem m;
	char name[160];
	unsigned bad = 0;

#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&m, HEAP1, len, w, 0);
	/* sizes in the outer loop: every stack's pairs arrive throughout the scan */
	for (uint32_t j = 1; j <= nsz; j++)
		for (uint32_t k = 0; k < nst; k++) {
			uint64_t user;

			f = 0x400000 + 16 * (uint64_t)k;
			user = mem_block(&m, hdr, j, 1, (uint64_t)j * nst + k, &f, 8, 0, 0);
			hdr = (user + j + 8 + 15) & ~(uint64_t)15;
			bytes += j;
		}
	img = mem_open(tpath("size-overflow.bin"), &m, (size_t)(hdr - HEAP1), 0, &err);
	if (img && cp_scan_image_opts(img, &o, &s, &err) == 0) {
		struct an_input in = { 0 };
		struct an_filter fl = { 0 };
		struct an_stacks st;

		CHECK(NAME("every block live, one stack each"), s.nlive == nb && s.live_bytes == bytes &&
		      s.ndamaged == 0 && s.nstacks == nst);
		CHECK(NAME("more than CP_STACK_SIZES_MAX pairs: no stack_sizes"),
		      nb > CP_STACK_SIZES_MAX && s.stack_sizes == NULL && s.nstack_sizes == 0);
		in.scan = &s;
		if (an_stacks_build(&in, &fl, &st) == 0) {
			for (size_t i = 0; i < st.n; i++) {
				const struct an_stack *c = &st.v[i];

				bad += c->blocks != nsz || c->bytes != (uint64_t)nsz * (nsz + 1) / 2 ||
				       c->min_size != 1 || c->max_size != nsz || c->ndistinct_sizes != nsz ||
				       c->ncommon != 3 || c->common[0].size != nsz || c->common[0].count != 1 ||
				       c->common[2].size != nsz - 2;
			}
			CHECK(NAME("an_stacks_build from the blocks: each stack nsz blocks, sizes 1..nsz"),
			      st.n == nst && st.blocks == nb && st.bytes == bytes && bad == 0);
			an_stacks_release(&st);
		} else {
			CHECK(NAME("an_stacks_build"), 0);
		}
		cp_scan_free(&s);
	} else {
		CHECK(NAME("scan"), 0);
	}
	cp_image_free(img);
	free(m.p);
#undef NAME
}

/* ---- stacks cut at HEAPANN_DEPTH (block format 2) ---- */

/* Rewrite the header at hdr (written by mem_block with DEPTH frames) as format
 * VERSION with DEPTH word DWORD, its check word over that word. */
static void mem_reformat(struct mem *m, uint64_t hdr, uint64_t size, uint64_t dword, uint64_t seq,
			 unsigned version)
{
	unsigned w = m->w;
	uint64_t info = (heapann_info_make(8, 0) & ~(uint64_t)0xFF) | version;

	mem_word(m, hdr + HEAPANN_W_INFO * w, info);
	mem_word(m, hdr + HEAPANN_W_DEPTH * w, dword);
	mem_word(m, hdr + HEAPANN_W_CHECK * w, heapann_check(hdr, size, dword, seq, info, w));
}

/* A: format 2, cut; B: format 2, whole, the same frames; C: format 1 (an older
 * core), the same frames; D: format 1 with the cut bit, which that format does
 * not have (a DEPTH out of bounds); E: format 2, cut, START overwritten (found
 * by its END, verified by the check word over the cut DEPTH). */
/* The first len bytes of m as an image: a raw dump (core 0), or an ET_CORE of one
 * writable segment, no notes (core 1: for W=8 little-endian, the fast path's
 * images). NULL with *err set when it does not open; the caller frees it. */
static struct cp_image *mem_open(const char *path, const struct mem *m, size_t len, int core,
				 struct cp_error *err)
{
	struct buf f = { 0 };
	struct seg sg = { m->base, m->p, len, len, PF_R | PF_W };
	struct cp_image *img;

	if (!core) {
		write_file(path, m->p, len);
		return cp_image_open_raw(path, m->base, m->w, m->big, EM_ARM, err);
	}
	elf_build(&f, m->w, m->big, ET_CORE, m->w == 8 ? EM_X86_64 : EM_ARM, NULL, 0, &sg, 1);
	write_file(path, f.p, f.n);
	free(f.p);
	img = cp_image_open_core(path, err);
	return img;
}

/* Headers check_start8() must leave as check_start() reads them, in a core and
 * in a raw dump: a live START with a freed END (a free() caught half-way) and a
 * guard running past the mapping, both with a right check word. */
static void test_fast_edges(unsigned w, int big, int core)
{
	struct mem m;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	const uint64_t f[1] = { 0x401000 };
	uint64_t q, r_hdr, a_hdr, a, fake, fa[7], n;
	char name[160], what[60];
	const char *path = tpath("edges.bin");

	snprintf(what, sizeof(what), "fast path edges W=%u %s %s", w, big ? "big" : "little",
		 core ? "core" : "raw");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&m, HEAP1, 0x300, w, big);
	/* Q: START live, END freed */
	q = mem_block(&m, HEAP1, 40, 1, 1, f, 8, 0, 0);
	mem_word(&m, q - w, heapann_end_freed(w) | 1);
	/* R: 36 bytes ending 4 bytes before the image's end, guard 8 (written into the
	 * bytes the image leaves out) */
	r_hdr = HEAP1 + 0x200 - 4 - 36 - heapann_header_bytes(1, w);
	mem_block(&m, r_hdr, 36, 1, 2, f, 8, 0, 0);
	/* A: live, its 7 frames a whole live header of depth 0 (F) whose user
	 * address comes before A's: pushed after A, the chunk's blocks out of order */
	a_hdr = HEAP1 + 0x80;
	fake = a_hdr + HEAPANN_W_FRAMES * w + heapann_header_bytes(0, w);
	fa[HEAPANN_W_START] = heapann_start_live(w);
	fa[HEAPANN_W_INFO] = heapann_info_make(0, 0);
	fa[HEAPANN_W_SIZE] = 4;
	fa[HEAPANN_W_DEPTH] = 0;
	fa[HEAPANN_W_SEQ] = 9;
	fa[HEAPANN_W_CHECK] = heapann_check(a_hdr + HEAPANN_W_FRAMES * w, 4, 0, 9, fa[HEAPANN_W_INFO], w);
	fa[HEAPANN_W_FRAMES] = heapann_end_live(w);
	a = mem_block(&m, a_hdr, 16, 7, 3, fa, 8, 0, 0);
	/* N: freed, its guard overwritten (memory reused): not checked */
	n = mem_block(&m, HEAP1 + 0x110, 16, 1, 4, f, 8, 0, 1);
	m.p[n + 16 - HEAP1] = 'x';
	img = mem_open(path, &m, 0x200, core, &err);
	if (img && scan_cmp(what, img, 1, &s, &err) == 0) {
		const struct cp_block *b = block_at(&s, q);
		const struct cp_damage *d = damage_at(&s, r_hdr);

		CHECK(NAME("Q: a freed block (a free() caught half-way)"), b && b->state == CP_FREED &&
		      b->size == 40 && b->seq == 1 && s.nfreed == 2 && s.nlive == (core ? 2u : 3u));
		CHECK(NAME("A and F: both live, sorted by user address"), fake < a && block_at(&s, a) &&
		      block_at(&s, a)->state == CP_LIVE && block_at(&s, fake) &&
		      block_at(&s, fake)->state == CP_LIVE && block_at(&s, fake)->size == 4 &&
		      blocks_sorted(&s));
		CHECK(NAME("N: freed, its guard not checked"), block_at(&s, n) &&
		      block_at(&s, n)->state == CP_FREED && !(block_at(&s, n)->flags & CP_GUARD_BROKEN) &&
		      s.nguard_broken == 0);
		if (core)
			CHECK(NAME("R: its guard past the mapping, damaged (bounds)"), s.ndamaged == 1 && d &&
			      d->kind == CP_DMG_BOUNDS && d->first_bad == HEAPANN_W_SIZE);
		else
			CHECK(NAME("R: a raw dump is not the whole mapping: live, no damage"), s.ndamaged == 0 &&
			      block_at(&s, r_hdr + heapann_header_bytes(1, w)) &&
			      block_at(&s, r_hdr + heapann_header_bytes(1, w))->state == CP_LIVE);
		cp_scan_free(&s);
	} else {
		CHECK(NAME("scan"), 0);
	}
	cp_image_free(img);
	free(m.p);
#undef NAME
}

static void test_cut(unsigned w, int big, int core)
{
	struct mem m;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	uint64_t f[3] = { 0x1111, 0x2222, 0x3333 }, hdr[5], user[5];
	unsigned i;
	char name[160], what[40];
	const char *path = tpath("cut.bin");

	snprintf(what, sizeof(what), "cut stacks W=%u %s %s", w, big ? "big" : "little",
		 core ? "core" : "raw");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&m, HEAP1, 5 * 256, w, big);
	for (i = 0; i < 5; i++) {
		hdr[i] = HEAP1 + i * 256;
		user[i] = mem_block(&m, hdr[i], 40, 3, i + 1, f, 8, 0, 0);
	}
	mem_reformat(&m, hdr[0], 40, 3 | HEAPANN_DEPTH_CUT, 1, 2);
	mem_reformat(&m, hdr[2], 40, 3, 3, 1);
	mem_reformat(&m, hdr[3], 40, 3 | HEAPANN_DEPTH_CUT, 4, 1);
	mem_reformat(&m, hdr[4], 40, 3 | HEAPANN_DEPTH_CUT, 5, 2);
	mem_word(&m, hdr[4], 0x5A5A5A5A);
	img = mem_open(path, &m, m.size, core, &err);
	if (img && scan_cmp(what, img, 1, &s, &err) == 0) {
		const struct cp_block *b = s.blocks;
		const struct cp_damage *d = s.damaged;

		CHECK(NAME("3 live blocks, 2 damaged headers"), s.nlive == 3 && s.nblocks == 3 &&
		      s.ndamaged == 2);
		CHECK(NAME("A (format 2, cut): its stack is cut"), s.nblocks == 3 && b[0].user == user[0] &&
		      stack_is(&s, b[0].stack, f, 3) && s.stacks[b[0].stack].cut == 1 && b[0].depth == 3);
		CHECK(NAME("B (format 2, whole): another stack, not cut"), s.nblocks == 3 &&
		      b[1].user == user[1] && stack_is(&s, b[1].stack, f, 3) &&
		      b[1].stack != b[0].stack && s.stacks[b[1].stack].cut == 0);
		CHECK(NAME("C (format 1): read, B's stack"), s.nblocks == 3 && b[2].user == user[2] &&
		      b[2].stack == b[1].stack);
		CHECK(NAME("D (format 1 with the cut bit): depth out of bounds"), s.ndamaged == 2 &&
		      d[0].hdr == hdr[3] && d[0].kind == CP_DMG_BOUNDS && d[0].first_bad == HEAPANN_W_DEPTH);
		CHECK(NAME("E (START overwritten): verified over the cut DEPTH, its stack cut"),
		      s.ndamaged == 2 && d[1].hdr == hdr[4] && d[1].kind == CP_DMG_START &&
		      (d[1].known & CP_KNOWN_SIZE) && d[1].size == 40 && (d[1].known & CP_KNOWN_FRAMES) &&
		      d[1].stack == b[0].stack);
		cp_scan_free(&s);
	} else {
		CHECK(NAME("scan"), 0);
	}
	cp_image_free(img);
	free(m.p);
#undef NAME
}

/* ---- blocks found out of address order ---- */

/* Block A's frames hold a freed header of depth 1 (its DEPTH word 1, its END
 * word END_FREED | 1), as any values may: the scan finds A by its START, then
 * the freed block by that END inside A's header. Its user address comes before
 * A's, so the scan must sort the blocks and number the stacks by first use in
 * the sorted order, the same for any threads and chunks. */
static void test_unsorted(unsigned w, int big, int core)
{
	struct mem m;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s, s2;
	struct cp_scan_options o = { 0 };
	const uint64_t s1[2] = { 0x401000, 0x402000 }, inner[1] = { 0x405000 };
	uint64_t fa[8], x, y, a_hdr, a, fake;
	char name[160], what[40];
	const char *path = tpath("unsorted.bin");

	snprintf(what, sizeof(what), "unsorted W=%u %s %s", w, big ? "big" : "little",
		 core ? "core" : "raw");
#define NAME(t) (snprintf(name, sizeof(name), "%s: %s", what, t), name)
	mem_init(&m, HEAP1, 0x400, w, big);
	x = mem_block(&m, HEAP1, 24, 2, 1, s1, 8, 0, 0);
	a_hdr = (x + 24 + 8 + 15) & ~(uint64_t)15;
	fa[0] = 0x403000;                      /* the fake header's START: not a magic */
	fa[1] = 0;                             /* INFO */
	fa[2] = 16;                            /* SIZE */
	fa[3] = 1;                             /* DEPTH */
	fa[4] = 9;                             /* SEQ */
	fa[5] = 0;                             /* CHECK: wrong, so unverified */
	fa[6] = inner[0];                      /* its one frame */
	fa[7] = heapann_end_freed(w) | 1;      /* its END */
	a = mem_block(&m, a_hdr, 32, 8, 2, fa, 8, 0, 0);
	fake = a_hdr + HEAPANN_W_FRAMES * w + heapann_header_bytes(1, w);
	y = mem_block(&m, (a + 32 + 8 + 15) & ~(uint64_t)15, 40, 2, 3, s1, 8, 0, 0);
	img = mem_open(path, &m, m.size, core, &err);
	if (img && scan_cmp(what, img, 1, &s, &err) == 0) {
		const struct cp_block *bf = block_at(&s, fake), *ba = block_at(&s, a);

		CHECK(NAME("3 live, 1 freed, sorted"), s.nlive == 3 && s.nfreed == 1 && s.nblocks == 4 &&
		      blocks_sorted(&s) && fake < a && s.ndamaged == 0);
		CHECK(NAME("the freed one from A's frames: unverified, 16 bytes"),
		      bf && bf == &s.blocks[1] && bf->state == CP_FREED && bf->size == 16 && bf->seq == 9 &&
		      (bf->flags & CP_HDR_UNVERIFIED));
		CHECK(NAME("stacks by first use in address order: X 0, the freed one 1, A 2, Y 0"),
		      s.nstacks == 3 && s.blocks[0].stack == 0 && stack_is(&s, 0, s1, 2) &&
		      bf && bf->stack == 1 && stack_is(&s, 1, inner, 1) && ba && ba->stack == 2 &&
		      stack_is(&s, 2, fa, 8) && block_at(&s, y) && block_at(&s, y)->stack == 0);
		CHECK(NAME("live blocks per stack counted after the sort: X and Y under 0, A under 2"),
		      stack_live_right(&s) && s.stack_live[0].n == 2 && s.stack_live[1].n == 0 &&
		      s.stack_live[2].n == 1);
		o.nthreads = 2;
		o.chunk_bytes = 64;
		CHECK(NAME("2 threads, 64-byte chunks: the same scan"),
		      cp_scan_image_opts(img, &o, &s2, &err) == 0 && scans_equal(&s, &s2));
		cp_scan_free(&s2);
		cp_scan_free(&s);
	} else {
		CHECK(NAME("scan"), 0);
	}
	cp_image_free(img);
	free(m.p);
#undef NAME
}

/* A freed 32-bit block in a glibc chunk merged since (64 KiB), START, INFO and
 * SIZE reused (fd, fd_nextsize and bk_nextsize with a pad word before the
 * header): its size is proven by the check word among the sizes the chunk
 * holds. 32 bits are too few for every size: at H 0xa1b2cc, seq 1,234, depth
 * 8, guard 8, pad 1, sizes 46,088 and 54,300 give the same check word. The
 * block's 54,300 must be found (its guard is intact after it), not 46,088,
 * the first of the two counting up. */
static void test_recover_w4(void)
{
	struct mem m;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	const uint64_t H = 0xa1b2cc, f[8] = { 0x401000, 0x401100, 0x401200, 0x401300,
					      0x401400, 0x401500, 0x401600, 0x401700 };
	const uint64_t info = heapann_info_make(8, 1);
	uint64_t user;
	const struct cp_block *b;

	CHECK("recover w4: 46,088 and 54,300 share a check word (the premise)",
	      heapann_check(H, 46088, 8, 1234, info, 4) == heapann_check(H, 54300, 8, 1234, info, 4));
	mem_init(&m, 0xa10000, 0x20000, 4, 0);
	mem_block(&m, 0xa10008, 16, 1, 1, f, 8, 1, 0);        /* a valid header with that INFO */
	user = mem_block(&m, H, 54300, 8, 1234, f, 8, 1, 1);
	mem_word(&m, H - 8, 0x10000 | 1);                     /* glibc's chunk size, merged */
	mem_word(&m, H - 4, 0xa00100);                        /* fd, bk, fd_nextsize, bk_nextsize */
	mem_word(&m, H, 0xa00100);
	mem_word(&m, H + 4, 0);
	mem_word(&m, H + 8, 0);
	img = mem_open(tpath("recover4.bin"), &m, m.size, 1, &err);
	if (img && cp_scan_image(img, 1, &s, &err) == 0) {
		b = block_at(&s, user);
		CHECK("recover w4: the freed block proven at 54,300 bytes, not 46,088",
		      b && b->state == CP_FREED && !(b->flags & CP_HDR_UNVERIFIED) && b->size == 54300 &&
		      b->seq == 1234 && b->guard_len == 8 && b->pad == 4);
		cp_scan_free(&s);
	} else {
		CHECK("recover w4: scan", 0);
	}
	cp_image_free(img);
	free(m.p);
}

/* Freed 64-bit blocks in glibc chunks merged since, whose size only the
 * search of every size the chunk holds proves (recover_freed_size's last pass,
 * 64-bit only): START, INFO and SIZE reused, the chunk's size word a merged 64
 * KiB (none of its 48 requests is the block's), no prev_size word naming the
 * old chunk, the guard written over. A: 3,000 bytes, depth 8 with a pad word
 * (fd over the pad, bk, fd_nextsize, bk_nextsize over START, INFO, SIZE).
 * B: 5,000 bytes, depth 3, no pad, its chain cut (DEPTH 3 | HEAPANN_DEPTH_CUT
 * in the check word), fd to bk_nextsize over START, INFO, SIZE and DEPTH: its
 * stack must come out cut, the frames A's three first. */
static void test_recover_w8(void)
{
	struct mem m;
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan s;
	const uint64_t f[8] = { 0x401000, 0x401100, 0x401200, 0x401300,
				0x401400, 0x401500, 0x401600, 0x401700 };
	const uint64_t ha = 0xa10108, hb = 0xa28000;
	const uint64_t infob = heapann_info_make(8, 0);
	uint64_t ua, ub;
	const struct cp_block *a, *b;

	mem_init(&m, 0xa10000, 0x30000, 8, 0);
	mem_block(&m, 0xa10008, 16, 1, 1, f, 8, 1, 0);        /* valid headers with both INFOs */
	mem_block(&m, 0xa10070, 16, 1, 2, f, 8, 0, 0);
	ua = mem_block(&m, ha, 3000, 8, 1234, f, 8, 1, 1);
	mem_word(&m, ha - 16, 0x10000 | 1);                   /* glibc's chunk size, merged */
	mem_word(&m, ha - 8, 0xa00100);                       /* fd, bk, fd_nextsize, bk_nextsize */
	mem_word(&m, ha, 0xa00100);
	mem_word(&m, ha + 8, 0);
	mem_word(&m, ha + 16, 0);
	mem_word(&m, ua + 3000, 0);                           /* the guard, written over */
	ub = mem_block(&m, hb, 5000, 3, 4321, f, 8, 0, 1);
	mem_word(&m, hb + HEAPANN_W_CHECK * 8,
		 heapann_check(hb, 5000, 3 | HEAPANN_DEPTH_CUT, 4321, infob, 8));
	mem_word(&m, hb - 8, 0x8000 | 1);
	mem_word(&m, hb, 0xa00100);
	mem_word(&m, hb + 8, 0xa00100);
	mem_word(&m, hb + 16, 0);
	mem_word(&m, hb + 24, 0);
	mem_word(&m, ub + 5000, 0);
	CHECK("recover w8: no request of a 64 KiB or 32 KiB chunk is 3,000 or 5,000 (the premise)",
	      0x10000 - 8 - 47 > ua - (ha - 8) + 3000 + 8 && 0x8000 - 8 - 47 > ub - hb + 5000 + 8);
	img = mem_open(tpath("recover8.bin"), &m, m.size, 1, &err);
	if (img && cp_scan_image(img, 1, &s, &err) == 0) {
		a = block_at(&s, ua);
		b = block_at(&s, ub);
		CHECK("recover w8: A proven at 3,000 bytes by the search of every size",
		      a && a->state == CP_FREED && !(a->flags & CP_HDR_UNVERIFIED) && a->size == 3000 &&
		      a->seq == 1234 && a->depth == 8 && a->guard_len == 8 && a->pad == 8 &&
		      stack_is(&s, a->stack, f, 8) && s.stacks[a->stack].cut == 0);
		CHECK("recover w8: B proven at 5,000 bytes, its stack cut",
		      b && b->state == CP_FREED && !(b->flags & CP_HDR_UNVERIFIED) && b->size == 5000 &&
		      b->seq == 4321 && b->depth == 3 && b->guard_len == 8 && b->pad == 0 &&
		      stack_is(&s, b->stack, f, 3) && s.stacks[b->stack].cut == 1);
		CHECK("recover w8: 2 live, 2 freed", s.nlive == 2 && s.nfreed == 2 && s.ndamaged == 0);
		/* the proof's move of B to its cut stack, in the worker table of the
		 * chunk that found it: 2 threads, chunks of 24 bytes, 20 times */
		struct cp_scan_options o;
		int same = 1;

		memset(&o, 0, sizeof(o));
		o.nthreads = 2;
		o.chunk_bytes = 24;
		for (int k = 0; k < 20 && same; k++) {
			struct cp_scan s2;

			if (cp_scan_image_opts(img, &o, &s2, &err) < 0) {
				same = 0;
				break;
			}
			same = scans_equal(&s, &s2);
			cp_scan_free(&s2);
		}
		CHECK("recover w8: the same in tiny chunks on 2 threads (20 scans)", same);
		cp_scan_free(&s);
	} else {
		CHECK("recover w8: scan", 0);
	}
	cp_image_free(img);
	free(m.p);
}

/* ---- build-ids and the exe check ---- */

static void exe_build(struct buf *out, const unsigned char *id, size_t n)
{
	struct nt note = { "GNU", NT_GNU_BUILD_ID, id, (uint32_t)n };

	elf_build(out, 8, 0, ET_EXEC, EM_X86_64, &note, 1, NULL, 0);
}

static void test_buildid(void)
{
	static const unsigned char id1[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	static const unsigned char id2[20] = { 0xca, 0xfe, 1 };
	struct buf exe1 = { 0 }, exe2 = { 0 }, core = { 0 }, fil = { 0 }, aux = { 0 };
	struct file_map fm[1] = { { 0x400000, 0x401000, 0, "/opt/app/prog" } };
	uint64_t av[2][2] = { { AT_ENTRY, 0x400100 }, { AT_NULL, 0 } };
	struct nt notes[2];
	struct seg seg;
	unsigned char page[4096] = { 0 }, out[64];
	size_t len = 0;
	struct cp_error err = { 0 };
	struct cp_image *img;

	exe_build(&exe1, id1, sizeof(id1));
	exe_build(&exe2, id2, sizeof(id2));
	memcpy(page, exe1.p, exe1.n);   /* the module's first page, as the kernel dumps it */
	nt_file(&fil, 8, 0, fm, 1, 4096);
	nt_auxv(&aux, 8, 0, &av[0][0], 2);
	notes[0] = (struct nt){ "CORE", NT_FILE, fil.p, (uint32_t)fil.n };
	notes[1] = (struct nt){ "CORE", NT_AUXV, aux.p, (uint32_t)aux.n };
	seg = (struct seg){ 0x400000, page, sizeof(page), 0x1000, PF_R };
	elf_build(&core, 8, 0, ET_CORE, EM_X86_64, notes, 2, &seg, 1);
	write_file(tpath("core-bid"), core.p, core.n);
	mkdir(tpath("a"), 0700);
	mkdir(tpath("b"), 0700);
	write_file(tpath("a/prog"), exe1.p, exe1.n);
	write_file(tpath("b/prog"), exe2.p, exe2.n);
	write_file(tpath("b/other"), exe2.p, exe2.n);
	img = cp_image_open_core(tpath("core-bid"), &err);
	CHECK("build-id: core opens", img != NULL);
	if (!img)
		goto out;
	CHECK("build-id: read from the module's first page", cp_image_module_buildid(img, &img->files[0], out,
	      sizeof(out), &len) == 0 && len == 20 && memcmp(out, id1, 20) == 0);
	CHECK("build-id: short buffer gets the full length", cp_image_module_buildid(img, &img->files[0], out, 4,
	      &len) == 0 && len == 20 && memcmp(out, id1, 4) == 0);
	CHECK("exe check: same build-id", cp_image_check_exe(img, tpath("a/prog"), &err) == 0);
	CHECK("exe check: same name, rebuilt", cp_image_check_exe(img, tpath("b/prog"), &err) == -1 &&
	      err.code == CP_EMISMATCH && strstr(err.msg, "rebuilt") && strncmp(err.msg, tpath("core-bid"),
	      strlen(tpath("core-bid"))) == 0);
	CHECK("exe check: another program", cp_image_check_exe(img, tpath("b/other"), &err) == -1 &&
	      err.code == CP_EMISMATCH && strstr(err.msg, "core of another program: /opt/app/prog"));
	{
		/* no build-id in the core: the names decide, " (deleted)" aside */
		struct buf c2 = { 0 }, f2 = { 0 };
		struct file_map fm2[1] = { { 0x400000, 0x401000, 0, "/opt/app/prog (deleted)" } };
		struct nt n2[2];
		struct seg s2 = { 0x400000, page, 16, 0x1000, PF_R };   /* ELF header cut short */
		struct cp_image *i2;

		nt_file(&f2, 8, 0, fm2, 1, 4096);
		n2[0] = (struct nt){ "CORE", NT_FILE, f2.p, (uint32_t)f2.n };
		n2[1] = notes[1];
		elf_build(&c2, 8, 0, ET_CORE, EM_X86_64, n2, 2, &s2, 1);
		write_file(tpath("core-noid"), c2.p, c2.n);
		i2 = cp_image_open_core(tpath("core-noid"), &err);
		CHECK("exe check without build-id: same name, file deleted since", i2 &&
		      cp_image_module_buildid(i2, &i2->files[0], out, sizeof(out), &len) == -1 &&
		      cp_image_check_exe(i2, tpath("b/prog"), &err) == 0);
		CHECK("exe check without build-id: other name", i2 &&
		      cp_image_check_exe(i2, tpath("b/other"), &err) == -1 && err.code == CP_EMISMATCH &&
		      strstr(err.msg, "core of another program: /opt/app/prog (deleted), not "));
		cp_image_free(i2);
		free(c2.p);
		free(f2.p);
	}
	CHECK("exe check: missing exe", cp_image_check_exe(img, tpath("nope"), &err) == -1 && err.code == CP_EIO);
	CHECK("exe check: a directory", cp_image_check_exe(img, tpath("a"), &err) == -1 && err.code == CP_EIO &&
	      strstr(err.msg, ": is a directory"));
	write_file(tpath("b/script"), "#!/bin/sh\n", 10);
	CHECK("exe check: a script is said to be one", cp_image_check_exe(img, tpath("b/script"), &err) == -1 &&
	      err.code == CP_EFORMAT && strstr(err.msg, "/b/script: a script, not an ELF file"));
	write_file(tpath("b/text"), "hello, world\n", 13);
	CHECK("exe check: not an ELF", cp_image_check_exe(img, tpath("b/text"), &err) == -1 &&
	      err.code == CP_EFORMAT && strstr(err.msg, "/b/text: not an ELF file"));
	cp_image_free(img);
out:
	free(exe1.p);
	free(exe2.p);
	free(core.p);
	free(fil.p);
	free(aux.p);
}

/* ---- bad input ---- */

static void expect_error(const char *name, const char *path, int code, const char *problem)
{
	struct cp_error err = { 0 };
	struct cp_image *img = cp_image_open_core(path, &err);
	char want[600];

	snprintf(want, sizeof(want), "%s: %s", path, problem);
	CHECK(name, img == NULL && err.code == code && strcmp(err.msg, want) == 0);
	if (img || strcmp(err.msg, want) != 0)
		printf("#   got '%s' code %d\n", err.msg, err.code);
	cp_image_free(img);
}

static void test_bad_input(void)
{
	unsigned char rnd[4096];
	struct buf b = { 0 };
	size_t i;
	struct cp_error err = { 0 };
	struct cp_image *img;

	expect_error("missing file", tpath("missing"), CP_EIO, "No such file or directory");
	expect_error("directory", tmpdir, CP_EIO, "is a directory");
	write_file(tpath("empty"), "", 0);
	expect_error("empty file", tpath("empty"), CP_EFORMAT, "empty file");
	srand(7);
	for (i = 0; i < sizeof(rnd); i++)
		rnd[i] = (unsigned char)rand();
	rnd[0] = 0x12;
	write_file(tpath("random"), rnd, sizeof(rnd));
	expect_error("random bytes", tpath("random"), CP_EFORMAT, "not an ELF file");
	write_file(tpath("text"), "#!/bin/sh\necho hi\n", 18);
	expect_error("a script", tpath("text"), CP_EFORMAT, "not an ELF file");
	elf_build(&b, 8, 0, ET_EXEC, EM_X86_64, NULL, 0, NULL, 0);
	write_file(tpath("exec"), b.p, b.n);
	expect_error("ELF executable", tpath("exec"), CP_EFORMAT, "not a core file (an ELF executable)");
	elf_build(&b, 4, 1, ET_DYN, EM_MIPS, NULL, 0, NULL, 0);
	write_file(tpath("dyn"), b.p, b.n);
	expect_error("ELF shared object", tpath("dyn"), CP_EFORMAT,
		     "not a core file (an ELF shared object or PIE executable)");
	elf_build(&b, 8, 0, ET_REL, EM_X86_64, NULL, 0, NULL, 0);
	write_file(tpath("rel"), b.p, b.n);
	expect_error("ELF object", tpath("rel"), CP_EFORMAT, "not a core file (an ELF relocatable object)");
	elf_build(&b, 8, 0, ET_CORE, EM_X86_64, NULL, 0, NULL, 0);
	write_file(tpath("ehdr-cut"), b.p, 40);
	expect_error("truncated ELF header", tpath("ehdr-cut"), CP_EFORMAT, "truncated ELF header");
	{
		struct seg s = { 0x1000, rnd, 64, 64, PF_R | PF_W };

		elf_build(&b, 8, 0, ET_CORE, EM_X86_64, NULL, 0, &s, 1);
		write_file(tpath("phdr-cut"), b.p, 64 + 20);
		expect_error("program headers cut", tpath("phdr-cut"), CP_EFORMAT,
			     "truncated core: program headers past the end of the file");
	}
	b.p[EI_CLASS] = 7;
	write_file(tpath("class"), b.p, b.n);
	expect_error("bad class", tpath("class"), CP_EFORMAT, "unsupported ELF class");
	elf_build(&b, 8, 0, ET_CORE, EM_X86_64, NULL, 0, NULL, 0);
	write_file(tpath("nophdr"), b.p, b.n);
	expect_error("core without program headers", tpath("nophdr"), CP_EFORMAT, "core file without program headers");
	img = cp_image_open_raw(tpath("random"), 0, 3, 0, 0, &err);
	CHECK("raw: word size 3", img == NULL && err.code == CP_EARG &&
	      strstr(err.msg, ": pointer size must be 4 or 8, not 3"));
	img = cp_image_open_raw(tpath("random"), 0xFFFFF001u, 4, 0, 0, &err);
	CHECK("raw: past a 32-bit address space", img == NULL && err.code == CP_EARG);
	img = cp_image_open_raw(tpath("empty"), 0, 4, 0, 0, &err);
	CHECK("raw: empty file", img == NULL && err.code == CP_EFORMAT);
	img = cp_image_open_raw(tpath("missing"), 0, 8, 0, 0, &err);
	CHECK("raw: missing file", img == NULL && err.code == CP_EIO);
	free(b.p);
}

/* Mutated cores: whatever the bytes, open and scan return cleanly. */
static void test_mutations(void)
{
	struct heap_expect x;
	struct buf file = { 0 };
	unsigned char *mut;
	unsigned round, opened = 0, scanned = 0, fails = 0, differ = 0;
	const char *path = tpath("mut");

	core_heap(tpath("mut-src"), 8, 0, EM_X86_64, &x, &file);
	mut = malloc(file.n);
	srand(42);
	for (round = 0; round < 600; round++) {
		struct cp_error err = { 0 };
		struct cp_image *img;
		struct cp_scan s;
		size_t len = file.n, k, nflip = 1 + rand() % 8;

		memcpy(mut, file.p, file.n);
		for (k = 0; k < nflip; k++) {
			/* mostly the headers and notes, sometimes anywhere */
			size_t at = rand() % 4 ? (size_t)rand() % 1024 : (size_t)rand() % file.n;

			mut[at % file.n] = (unsigned char)rand();
		}
		if (round % 5 == 0)
			len = (size_t)rand() % file.n + 1;
		write_file(path, mut, len);
		img = cp_image_open_core(path, &err);
		if (!img) {
			fails += err.msg[0] == 0 || strncmp(err.msg, path, strlen(path)) != 0;
			continue;
		}
		opened++;
		/* one thread, as cp_scan_image(img, 1, ...) */
		{
			struct cp_scan_options o = { 0 };
			int same;

			o.nthreads = 1;
			if (scan_four(img, &o, &s, &err, &same) == 0) {
				scanned++;
				differ += !same;
				cp_scan_free(&s);
			}
		}
		cp_image_free(img);
	}
	CHECK("mutations: no crash, every failure names the file", fails == 0 && opened > 0 && scanned == opened);
	CHECK("mutations: every scan the same without the fast path, without AVX2", differ == 0);
	free(mut);
	free(file.p);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* whether scan_cmp's AVX2 against SSE2 comparison compared anything */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(CP_NO_AVX2) && !defined(CP_NO_SIMD)
	printf("# AVX2: %s\n", __builtin_cpu_supports("avx2") ? "yes" : "no");
#else
	printf("# AVX2: no (not built)\n");
#endif
	test_core("ELF64 LE x86_64", 8, 0, EM_X86_64, 19, 16);
	test_core("ELF64 BE aarch64", 8, 1, EM_AARCH64, 31, 32);
	test_core("ELF32 LE ARM", 4, 0, EM_ARM, 13, 15);
	test_core("ELF32 LE i386", 4, 0, EM_386, 15, 12);
	test_core("ELF32 BE MIPS", 4, 1, EM_MIPS, 35, 40);
	test_raw(8, 0);
	test_raw(4, 1);
	test_stack_copies(8, 0, EM_X86_64, 19);
	test_stack_copies(4, 1, EM_MIPS, 35);
	test_stack_in_block(8, 0, EM_X86_64, 19);
	test_stack_in_block(4, 1, EM_MIPS, 35);
	test_board(4, 0, 0);
	test_board(8, 1, 0);
	test_board(4, 0, 1);
	test_board(8, 1, 1);
	test_board_many();
	test_guards_fast();
	test_many_stacks(8, 0);
	test_many_stacks(4, 1);
	test_size_overflow("2,100 stacks x 126 sizes (abandoned during the scan)", 2100, 126);
	test_size_overflow("2,048 stacks x 129 sizes (overflow when the in-place counts move in)", 2048, 129);
	test_unsorted(8, 0, 0);
	test_unsorted(4, 1, 0);
	test_unsorted(8, 0, 1);
	test_recover_w4();
	test_recover_w8();
	test_cut(8, 0, 0);
	test_cut(4, 1, 0);
	test_cut(8, 0, 1);
	test_fast_edges(8, 0, 1);
	test_fast_edges(8, 0, 0);
	test_fast_edges(4, 1, 1);
	test_buildid();
	test_bad_input();
	test_mutations();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return CHECK_DONE();
}
