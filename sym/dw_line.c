/* dw_line.c - one CU's DWARF line table decoded once into a sorted array of
 * rows and a table of file names, for the libdw symbolizer. libdw 0.188 builds
 * the same table with a malloc per row and a qsort of all rows (half the time of
 * a whole symbolization run on a big program); here the rows go into one array
 * and are sorted only when the sequences are not already in address order.
 * The answers must be libdw's exactly: the same row is chosen for an address
 * (dwfl_module_getsrc's rule) and file names are composed as libdw composes
 * them. The bytes come from a file and are not trusted: every read is bounds-
 * checked, and anything unexpected makes dw_lines_read fail, after which the
 * caller asks libdw for that CU as before. Pure functions over byte buffers:
 * nothing here touches libdw's state, so CUs may be decoded in parallel.
 */
#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dw_priv.h"

/* A cursor over [p, end). Every read checks the bounds and sets bad instead of
 * running past the end. */
struct dw_cur {
	const unsigned char *p, *end;
	int bad;
};

static inline __attribute__((always_inline)) uint64_t dw_cur_fixed(struct dw_cur *c, unsigned n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)   /* little-endian only: see dw_lines_read */
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static inline __attribute__((always_inline)) uint64_t dw_cur_uleb(struct dw_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (!c->bad) {
		if (c->p >= c->end) {
			c->bad = 1;
			break;
		}
		unsigned char b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* dw_cur_uleb with the one-byte case (most operands of a line program) inline. */
static inline __attribute__((always_inline)) uint64_t dw_cur_uleb1(struct dw_cur *c)
{
	if (__builtin_expect(!c->bad && c->p < c->end && *c->p < 0x80, 1))
		return *c->p++;
	return dw_cur_uleb(c);
}

static inline __attribute__((always_inline)) int64_t dw_cur_sleb(struct dw_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0;
	while (!c->bad) {
		if (c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A NUL-terminated string at the cursor, or NULL. */
static const char *dw_cur_str(struct dw_cur *c)
{
	if (c->bad)
		return NULL;
	const unsigned char *z = memchr(c->p, '\0', (size_t)(c->end - c->p));
	if (!z) {
		c->bad = 1;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = z + 1;
	return s;
}

/* The string at off in a string section, or NULL. */
static const char *dw_sec_str(const struct dw_sec *sec, uint64_t off)
{
	if (!sec->data || off >= sec->size)
		return NULL;
	if (!memchr(sec->data + off, '\0', sec->size - off))
		return NULL;
	return (const char *)sec->data + off;
}

/* One entry of a DWARF 5 directory or file table: its path and directory
 * index. Returns 0, or -1 on a form we do not read. */
static int dw_entry_read(struct dw_cur *c, const uint64_t (*fmt)[2], unsigned nfmt, unsigned offsz,
			 const struct dw_secs *secs, const char **path, uint64_t *dir)
{
	*path = NULL;
	*dir = 0;
	for (unsigned k = 0; k < nfmt; k++) {
		uint64_t type = fmt[k][0], form = fmt[k][1], v = 0;
		const char *s = NULL;
		switch (form) {
		case DW_FORM_string: s = dw_cur_str(c); break;
		case DW_FORM_line_strp: s = dw_sec_str(&secs->line_str, dw_cur_fixed(c, offsz)); break;
		case DW_FORM_strp: s = dw_sec_str(&secs->str, dw_cur_fixed(c, offsz)); break;
		case DW_FORM_udata: v = dw_cur_uleb(c); break;
		case DW_FORM_data1: v = dw_cur_fixed(c, 1); break;
		case DW_FORM_data2: v = dw_cur_fixed(c, 2); break;
		case DW_FORM_data4: v = dw_cur_fixed(c, 4); break;
		case DW_FORM_data8: v = dw_cur_fixed(c, 8); break;
		case DW_FORM_data16: dw_cur_fixed(c, 8); dw_cur_fixed(c, 8); break;
		case DW_FORM_block: {
			uint64_t n = dw_cur_uleb(c);
			if (n > (uint64_t)(c->end - c->p))
				return -1;
			c->p += n;
			break;
		}
		default:
			return -1;
		}
		if (c->bad)
			return -1;
		if (type == DW_LNCT_path) {
			if (!s)
				return -1;
			*path = s;
		} else if (type == DW_LNCT_directory_index) {
			*dir = v;
		}
	}
	return *path ? 0 : -1;
}

/* Does the entry format list name the content type a (and b, when nonzero)?
 * libdw refuses a table whose formats lack them. */
static int dw_fmt_has(const uint64_t (*fmt)[2], unsigned nfmt, uint64_t a, uint64_t b)
{
	int has_a = 0, has_b = b == 0;
	for (unsigned k = 0; k < nfmt; k++) {
		has_a |= fmt[k][0] == a;
		has_b |= b && fmt[k][0] == b;
	}
	return has_a && has_b;
}

/* Double the room for rows (the caller found it full). Returns 0, or -1. */
static int dw_lines_grow(struct dw_lines *l, size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 256;
	struct dw_lrow *p = realloc(l->rows, ncap * sizeof *p);
	if (!p)
		return -1;
	l->rows = p;
	*cap = ncap;
	return 0;
}

/* The filter meets an end of sequence at the address A of the sequence's last
 * row (l->rows[l->nrows - 1] is its last row kept; end is the end's row).
 * libdw sorts an end before a row at its address, so the last row decoded at
 * A answers for the addresses past the end: when it was kept (at A), the end
 * goes before it; when it was left out for repeating the row kept before it,
 * it is put back after the end, with that row's file, line and column. Off
 * the decoder's loop, so that its registers are not spent on this. Returns 0,
 * or -1 when out of memory. */
static __attribute__((noinline, cold)) int dw_lines_end_at_last(struct dw_lines *l, size_t *cap,
								 struct dw_lrow end)
{
	while (l->nrows + 2 > *cap)
		if (dw_lines_grow(l, cap) < 0)
			return -1;
	struct dw_lrow last = l->rows[l->nrows - 1];
	if (last.addr == end.addr) {
		l->rows[l->nrows - 1] = end;
	} else {
		l->rows[l->nrows++] = end;
		last.addr = end.addr;
	}
	l->rows[l->nrows++] = last;
	return 0;
}

/* Append name (dir + "/" + name for a relative name with a directory, as libdw
 * composes it) to the file table. */
static int dw_file_add(struct dw_lines *l, size_t *cap, const char *dir, const char *name)
{
	if (l->nfiles == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		char **p = realloc(l->files, ncap * sizeof *p);
		if (!p)
			return -1;
		l->files = p;
		*cap = ncap;
	}
	char *s;
	if (name[0] == '/' || !dir) {
		s = strdup(name);
	} else {
		size_t dl = strlen(dir), nl = strlen(name);
		s = malloc(dl + 1 + nl + 1);
		if (s) {
			memcpy(s, dir, dl);
			s[dl] = '/';
			memcpy(s + dl + 1, name, nl + 1);
		}
	}
	if (!s)
		return -1;
	l->files[l->nfiles++] = s;
	return 0;
}

/* The order libdw gives the rows: by address, an end of sequence before a row
 * at the same address, else in the order of the program. */
static int dw_lrow_cmp(const void *a, const void *b)
{
	const struct dw_lrow *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return (int)y->end - (int)x->end;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sequences [start, end) of the row array, to be put in address order. */
struct dw_seq {
	size_t first, n;
};

static int dw_seq_cmp(const void *a, const void *b, void *rows_)
{
	const struct dw_lrow *rows = rows_;
	const struct dw_seq *x = a, *y = b;
	return dw_lrow_cmp(&rows[x->first], &rows[y->first]);
}

/* Put the rows in libdw's order: sort the sequences by their first row, then
 * check the whole array; only overlapping sequences need a sort of every row.
 * Returns 0, 1 when every row had to be sorted (sequences overlap), or -1
 * when out of memory. */
static int dw_lines_sort(struct dw_lines *l)
{
	size_t nseq = 0;
	int sorted = 1;
	/* seq is 0 in every row here: ties of address and end are in order */
	for (size_t i = 1; i < l->nrows && sorted; i++)
		if (dw_lrow_cmp(&l->rows[i - 1], &l->rows[i]) > 0)
			sorted = 0;
	if (sorted)
		return 0;
	/* a row right after an end at its address (dw_lines_end_at_last) is a
	 * sequence of its own: it belongs to the sequence before, not with the
	 * rows decoded after it */
#define DW_SEQ_CUT(i) (l->rows[i].end || \
		       ((i) + 1 < l->nrows && l->rows[(i) + 1].end == 0 && (i) > 0 && l->rows[(i) - 1].end && \
			l->rows[(i) - 1].addr == l->rows[i].addr))
	for (size_t i = 0; i < l->nrows; i++) {
		l->rows[i].seq = (uint32_t)i;   /* the decoder's order, for the sorts' ties */
		if (DW_SEQ_CUT(i))
			nseq++;
	}
	/* rows after the last end (a table whose last sequence does not end)
	 * are a sequence too: they were dropped, and the array's tail left
	 * uninitialised */
	struct dw_seq *seq = malloc((nseq + 1) * sizeof *seq);
	struct dw_lrow *out = malloc(l->nrows * sizeof *out);
	if (!seq || !out) {
		free(seq);
		free(out);
		return -1;
	}
	size_t k = 0, start = 0;
	for (size_t i = 0; i < l->nrows; i++)
		if (DW_SEQ_CUT(i)) {
			seq[k++] = (struct dw_seq){ start, i + 1 - start };
			start = i + 1;
		}
#undef DW_SEQ_CUT
	if (start < l->nrows)
		seq[k++] = (struct dw_seq){ start, l->nrows - start };
	qsort_r(seq, k, sizeof *seq, dw_seq_cmp, l->rows);
	size_t w = 0;
	for (size_t i = 0; i < k; i++) {
		memcpy(out + w, l->rows + seq[i].first, seq[i].n * sizeof *out);
		w += seq[i].n;
	}
	free(seq);
	free(l->rows);
	l->rows = out;
	for (size_t i = 1; i < w; i++)
		if (dw_lrow_cmp(&l->rows[i - 1], &l->rows[i]) > 0) {
			qsort(l->rows, w, sizeof *l->rows, dw_lrow_cmp);
			return 1;
		}
	return 0;
}

/* dw_lines_read's work. With filter, rows that can never be an answer are
 * left out as they are decoded (see dw_lines_read), which holds only when each
 * sequence's addresses rise, sequences do not overlap and the last one ends
 * (an end at the address of its sequence's last row, which libdw sorts before
 * that row, is put in libdw's order by dw_lines_end_at_last): returns 1 (l
 * released) as soon as the table breaks one of those,
 * and the caller decodes it again without filter. Returns 0, or -1 (l
 * released). */
static int dw_lines_decode(struct dw_lines *l, const struct dw_secs *secs, uint64_t off, const char *comp_dir,
			   unsigned cu_addrsz, int filter)
{
	size_t rows_cap = 0, files_cap = 0;
	if (!secs->line.data || off >= secs->line.size || !secs->little_endian ||
	    (cu_addrsz != 4 && cu_addrsz != 8))
		return -1;
	struct dw_cur c = { secs->line.data + off, secs->line.data + secs->line.size, 0 };
	uint64_t len = dw_cur_fixed(&c, 4);
	unsigned offsz = 4;
	if (len == 0xffffffffu) {
		len = dw_cur_fixed(&c, 8);
		offsz = 8;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -1;
	c.end = c.p + len;
	unsigned version = (unsigned)dw_cur_fixed(&c, 2);
	if (version < 2 || version > 5)
		return -1;
	if (version >= 5) {
		unsigned addrsz = (unsigned)dw_cur_fixed(&c, 1);
		unsigned segsz = (unsigned)dw_cur_fixed(&c, 1);
		if (addrsz != cu_addrsz || segsz != 0)
			return -1;
	}
	uint64_t hlen = dw_cur_fixed(&c, offsz);
	if (c.bad || hlen > (uint64_t)(c.end - c.p))
		return -1;
	const unsigned char *prog = c.p + hlen;
	unsigned min_insn = (unsigned)dw_cur_fixed(&c, 1);
	unsigned max_ops = version >= 4 ? (unsigned)dw_cur_fixed(&c, 1) : 1;
	dw_cur_fixed(&c, 1);   /* default_is_stmt: rows here keep no is_stmt */
	int line_base = (int)(signed char)dw_cur_fixed(&c, 1);
	unsigned line_range = (unsigned)dw_cur_fixed(&c, 1);
	unsigned opcode_base = (unsigned)dw_cur_fixed(&c, 1);
	if (c.bad || max_ops == 0 || line_range == 0 || opcode_base == 0)
		return -1;
	unsigned char oplen[256] = {0};
	for (unsigned i = 1; i < opcode_base; i++)
		oplen[i] = (unsigned char)dw_cur_fixed(&c, 1);

	if (version < 5) {
		/* directory 0 is the CU's compilation directory; file 0 is unused */
		const char *dirs[1024];
		size_t ndirs = 0;
		dirs[ndirs++] = comp_dir;
		for (;;) {
			const char *d = dw_cur_str(&c);
			if (!d)
				goto fail;
			if (!d[0])
				break;
			if (ndirs == sizeof dirs / sizeof dirs[0])
				goto fail;
			dirs[ndirs++] = d;
		}
		if (dw_file_add(l, &files_cap, NULL, "???") < 0)
			goto fail;
		for (;;) {
			const char *f = dw_cur_str(&c);
			if (!f)
				goto fail;
			if (!f[0])
				break;
			uint64_t di = dw_cur_uleb(&c);
			dw_cur_uleb(&c);
			dw_cur_uleb(&c);
			if (c.bad || di >= ndirs || dw_file_add(l, &files_cap, dirs[di], f) < 0)
				goto fail;
		}
	} else {
		uint64_t fmt[256][2];
		unsigned nfmt = (unsigned)dw_cur_fixed(&c, 1);
		for (unsigned k = 0; k < nfmt; k++) {
			fmt[k][0] = dw_cur_uleb(&c);
			fmt[k][1] = dw_cur_uleb(&c);
		}
		if (!dw_fmt_has(fmt, nfmt, DW_LNCT_path, 0))
			goto fail;
		uint64_t ndirs = dw_cur_uleb(&c);
		if (c.bad || ndirs > 1024)
			goto fail;
		const char *dirs[1024];
		for (uint64_t k = 0; k < ndirs; k++) {
			uint64_t unused;
			if (dw_entry_read(&c, (const uint64_t (*)[2])fmt, nfmt, offsz, secs, &dirs[k], &unused) < 0)
				goto fail;
		}
		nfmt = (unsigned)dw_cur_fixed(&c, 1);
		for (unsigned k = 0; k < nfmt; k++) {
			fmt[k][0] = dw_cur_uleb(&c);
			fmt[k][1] = dw_cur_uleb(&c);
		}
		if (!dw_fmt_has(fmt, nfmt, DW_LNCT_path, DW_LNCT_directory_index))
			goto fail;
		uint64_t nfiles = dw_cur_uleb(&c);
		if (c.bad)
			goto fail;
		for (uint64_t k = 0; k < nfiles; k++) {
			const char *f;
			uint64_t di;
			if (dw_entry_read(&c, (const uint64_t (*)[2])fmt, nfmt, offsz, secs, &f, &di) < 0 ||
			    di >= ndirs || dw_file_add(l, &files_cap, dirs[di], f) < 0)
				goto fail;
		}
	}
	if (c.bad || c.p != prog)
		goto fail;   /* libdw insists that the header ends where it says */

	/* the line program, with libdw's rules for what makes a table invalid:
	 * where libdw would refuse the table (or misread it), refuse it too, so
	 * that the caller asks libdw and gets libdw's answer */
	c.p = prog;
	/* one row takes at least one byte and usually two to four: size the array
	 * once for the common case instead of growing it many times */
	rows_cap = (size_t)(c.end - prog) / 3 + 16;
	l->rows = malloc(rows_cap * sizeof *l->rows);
	if (!l->rows)
		goto fail;
	static const unsigned char std_len[DW_LNS_set_isa + 1] = {
		[DW_LNS_advance_pc] = 1, [DW_LNS_advance_line] = 1, [DW_LNS_set_file] = 1,
		[DW_LNS_set_column] = 1, [DW_LNS_fixed_advance_pc] = 1, [DW_LNS_set_isa] = 1,
	};
	/* the lengths of the standard opcodes are checked per opcode only when
	 * the header gives one that is not the standard's (libdw then refuses a
	 * table that uses it) */
	int odd_len = 0;
	for (unsigned i = 1; i <= DW_LNS_set_isa; i++)
		odd_len |= oplen[i] != std_len[i];
	/* what each special opcode adds to the address (in operations) and the
	 * line, worked out once: two divisions a row otherwise, 542k rows at 10k
	 * addresses of the generated program */
	unsigned char sp_adv[256];
	signed short sp_line[256];
	for (unsigned op = opcode_base; op < 256; op++) {
		unsigned adj = op - opcode_base, adv = adj / line_range;
		sp_adv[op] = (unsigned char)adv;
		sp_line[op] = (signed short)(line_base + (int)(adj - adv * line_range));
	}
	uint64_t addr, file, col, isa, disc;
	int64_t line;
	unsigned op_index;
	/* col, isa, disc and file checked when set: odd is set when one does
	 * not fit what libdw stores (or a row could name a file not in the
	 * table), and only then is each row checked for all of them, to refuse
	 * the table at the row where libdw would */
	int odd = l->nfiles <= 1;
	size_t in_seq = 0;        /* rows kept of the sequence being decoded */
	uint64_t last = 0;        /* address of its last row decoded (kept or not), 0 before its first */
	uint32_t endrow = 0;      /* the last row decoded ended a sequence */
#define DW_LRESET() do { addr = 0; op_index = 0; file = 1; line = 1; col = 0; isa = 0; disc = 0; } while (0)
#define DW_ADVANCE(adv) do { \
		uint64_t a_ = (adv); \
		if (max_ops == 1) { \
			addr += (uint64_t)min_insn * a_;  /* op_index stays 0: no division */ \
		} else { \
			addr += (uint64_t)min_insn * ((op_index + a_) / max_ops); \
			op_index = (unsigned)((op_index + a_) % max_ops); \
		} \
	} while (0)
	/* a row as libdw stores it: int line, unsigned short column, 8-bit isa,
	 * 24-bit discriminator; a value that does not fit makes libdw refuse */
	/* With filter, as the cache writer chose rows (dw_cache_put_live): a
	 * row followed by one at the same address is dropped (dw_lines_find takes
	 * the last), and so is one saying what the row kept before it says */
#define DW_EMIT(endseq) do { \
		if (line < INT32_MIN || line > INT32_MAX) \
			goto fail; \
		if (__builtin_expect(odd, 0) && \
		    (col > 0xffff || isa > 0xff || disc >= (1u << 24) || file >= nfiles)) \
			goto fail; \
		endrow = (endseq); \
		if (filter) { \
			if (__builtin_expect(addr < last || (endrow && addr == last), 0)) { \
				/* backwards, or an end at 0 after no row (taken \
				 * for one at the last row's address): decoded \
				 * again at once, keeping every row */ \
				if (addr < last || !in_seq) \
					goto unsafe; \
				/* an end sorted before the last row */ \
				l->nrows = nrows; \
				if (dw_lines_end_at_last(l, &rows_cap, (struct dw_lrow){ addr, (uint32_t)file, \
						(uint32_t)(int32_t)line, (uint32_t)col, 1, 0 }) < 0) \
					goto fail; \
				rows = l->rows; \
				nrows = l->nrows; \
				last = 0; \
				in_seq = 0; \
				break; \
			} \
			last = endrow ? 0 : addr; \
			if (!endrow && in_seq && rows[nrows - 1].addr == addr) { \
				nrows--; \
				in_seq--; \
			} \
			if (!endrow && in_seq) { \
				const struct dw_lrow *t_ = &rows[nrows - 1]; \
				if (t_->file == file && t_->line == (uint32_t)(int32_t)line && t_->col == col) \
					break;  /* out of the do-while: not kept */ \
			} \
			in_seq = endrow ? 0 : in_seq + 1; \
		} \
		if (__builtin_expect(nrows == rows_cap, 0)) { \
			l->nrows = nrows; \
			if (dw_lines_grow(l, &rows_cap) < 0) \
				goto fail; \
			rows = l->rows; \
		} \
		rows[nrows++] = (struct dw_lrow){ addr, (uint32_t)file, (uint32_t)(int32_t)line, \
						  (uint32_t)col, endrow, 0 }; \
	} while (0)
	/* the rows being written and the number of files in locals: through l,
	 * every row stored made the compiler load l->rows and l->nrows again */
	struct dw_lrow *rows = l->rows;
	size_t nrows = 0;
	const size_t nfiles = l->nfiles;
	/* the program read through a cursor of its own: the header's is passed
	 * to functions that are not inlined, which kept it in memory */
	struct dw_cur pc = c;
	DW_LRESET();
	while (pc.p < pc.end) {
		unsigned op = *pc.p++;   /* in bounds: pc.p < pc.end */
		if (op >= opcode_base) {
			line += sp_line[op];
			DW_ADVANCE(sp_adv[op]);
			DW_EMIT(0);
			disc = 0;
			continue;
		}
		if (op == 0) {
			/* libdw reads the length as one byte, not as a ULEB128 */
			if (pc.end - pc.p < 2)
				goto fail;
			unsigned n = *pc.p++;
			if (n == 0 || (size_t)(pc.end - pc.p) < n)
				goto fail;
			const unsigned char *next = pc.p + n;
			unsigned sub = *pc.p++;
			if (sub == DW_LNE_end_sequence) {
				DW_EMIT(1);
				DW_LRESET();
			} else if (sub == DW_LNE_set_address) {
				if (n - 1 != cu_addrsz)
					goto fail;
				addr = dw_cur_fixed(&pc, cu_addrsz);
				op_index = 0;
			} else if (sub == DW_LNE_set_discriminator) {
				if (oplen[DW_LNE_set_discriminator] != 1)
					goto fail;
				disc = dw_cur_uleb(&pc);
				odd |= disc >= (1u << 24);
			} else if (sub == DW_LNE_define_file) {
				goto fail;   /* never seen from gcc or clang: leave it to libdw */
			} else {
				pc.p = next;
			}
			if (pc.bad || pc.p != next)
				goto fail;   /* libdw would read on from where the operands end */
			continue;
		}
		if (odd_len && op <= DW_LNS_set_isa && oplen[op] != std_len[op])
			goto fail;
		uint64_t u;
		int64_t sv;
		switch (op) {
		case DW_LNS_copy:
			DW_EMIT(0);
			disc = 0;
			break;
		case DW_LNS_advance_pc:
			u = dw_cur_uleb1(&pc);
			if (u > UINT32_MAX)
				goto fail;
			DW_ADVANCE(u);
			break;
		case DW_LNS_advance_line:
			sv = dw_cur_sleb(&pc);
			if (sv < INT32_MIN || sv > INT32_MAX)
				goto fail;
			line += sv;
			break;
		case DW_LNS_set_file:
			file = dw_cur_uleb1(&pc);
			odd |= file >= nfiles;
			if (file > UINT32_MAX)
				goto fail;
			break;
		case DW_LNS_set_column:
			col = dw_cur_uleb1(&pc);
			odd |= col > 0xffff;
			if (col > UINT32_MAX)
				goto fail;
			break;
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		case DW_LNS_const_add_pc:
			DW_ADVANCE((255 - opcode_base) / line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			addr += dw_cur_fixed(&pc, 2);
			op_index = 0;
			break;
		case DW_LNS_set_isa:
			isa = dw_cur_uleb(&pc);
			odd |= isa > 0xff;
			if (isa > UINT32_MAX)
				goto fail;
			break;
		default:
			for (unsigned k = 0; k < oplen[op]; k++)
				dw_cur_uleb(&pc);
			break;
		}
		if (pc.bad)
			goto fail;
	}
#undef DW_LRESET
#undef DW_ADVANCE
#undef DW_EMIT
	l->nrows = nrows;
	if (filter && l->nrows && !endrow)
		goto unsafe;   /* the last row is made an end below: it may have been dropped */
	int sorted = dw_lines_sort(l);
	if (sorted < 0)
		goto fail;
	if (filter && sorted == 1)
		goto unsafe;
	if (l->nrows && l->nrows < rows_cap / 2) {
		/* the room sized for every row of the program, given back */
		struct dw_lrow *p = realloc(l->rows, l->nrows * sizeof *p);
		if (p)
			l->rows = p;
	}
	l->filtered = filter;
	/* as libdw: the highest row ends a sequence, whatever the table says */
	if (l->nrows)
		l->rows[l->nrows - 1].end = 1;
	l->paths = calloc(l->nfiles ? l->nfiles : 1, sizeof *l->paths);
	if (!l->paths)
		goto fail;
	return 0;
fail:
	dw_lines_release(l);
	return -1;
unsafe:
	dw_lines_release(l);
	return 1;
}

int dw_lines_read(struct dw_lines *l, const struct dw_secs *secs, uint64_t off, const char *comp_dir,
		  unsigned cu_addrsz)
{
	int rc = dw_lines_decode(l, secs, off, comp_dir, cu_addrsz, 1);
	if (rc == 1)
		rc = dw_lines_decode(l, secs, off, comp_dir, cu_addrsz, 0);
	return rc;
}

int dw_lines_read_all(struct dw_lines *l, const struct dw_secs *secs, uint64_t off, const char *comp_dir,
		      unsigned cu_addrsz)
{
	return dw_lines_decode(l, secs, off, comp_dir, cu_addrsz, 0);
}

const struct dw_lrow *dw_lines_find(const struct dw_lines *l, uint64_t pc)
{
	if (l->nrows == 0)
		return NULL;
	/* the last row at or before pc, unless it ends a sequence */
	size_t lo = 0, hi = l->nrows - 1;
	while (lo < hi) {
		size_t mid = hi - (hi - lo) / 2;
		if (pc < l->rows[mid].addr)
			hi = mid - 1;
		else
			lo = mid;
	}
	const struct dw_lrow *r = &l->rows[lo];
	if (r->end || r->addr > pc)
		return NULL;
	return r;
}

void dw_lines_release(struct dw_lines *l)
{
	for (size_t i = 0; i < l->nfiles; i++)
		free(l->files[i]);
	free(l->files);
	free(l->rows);
	free(l->paths);
	memset(l, 0, sizeof *l);
}
