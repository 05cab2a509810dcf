/* t_dwbytes.c - the libdw symbolizer's own DWARF decoders on hand-made bytes:
 * dw_lines_read/dw_lines_find (sym/dw_line.c) on a DWARF 4 and a DWARF 5 line
 * table (rows, libdw's choice among rows, file names as libdw composes them,
 * the rows left out as decoded: against the decode keeping every row on
 * random tables),
 * dw_cuidx_scan (sym/dw_die.c) on a DWARF 5 unit (scopes, parents, ranges from
 * low/high pc and from .debug_rnglists, sibling jumps, no descent into a
 * declaration), dw_unit_cu_read and dw_die_origin_name (a unit's own
 * attributes and an origin's name from the bytes, the CU's abbreviation last
 * in its table), and all on every truncation and on single-byte corruptions:
 * they must fail cleanly or succeed, never read out of bounds (run it under
 * SANITIZE=1 to have that checked).
 */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dw_priv.h"

/* A byte buffer to build sections in. */
struct buf {
	unsigned char b[1024];
	size_t n;
};

static void put(struct buf *o, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		o->b[o->n++] = (unsigned char)(v >> (8 * i));
}

static void uleb(struct buf *o, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		o->b[o->n++] = (unsigned char)(c | (v ? 0x80 : 0));
	} while (v);
}

static void sleb(struct buf *o, int64_t v)
{
	for (;;) {
		unsigned char c = v & 0x7f;
		v >>= 7;
		int done = (v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40));
		o->b[o->n++] = (unsigned char)(c | (done ? 0 : 0x80));
		if (done)
			break;
	}
}

static void str(struct buf *o, const char *s)
{
	size_t len = strlen(s) + 1;
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void patch32(struct buf *o, size_t at, uint64_t v)
{
	for (unsigned i = 0; i < 4; i++)
		o->b[at + i] = (unsigned char)(v >> (8 * i));
}

static void set_address(struct buf *o, uint64_t a)
{
	put(o, 0, 1);
	uleb(o, 9);
	put(o, DW_LNE_set_address, 1);
	put(o, a, 8);
}

static void end_sequence(struct buf *o)
{
	put(o, 0, 1);
	uleb(o, 1);
	put(o, DW_LNE_end_sequence, 1);
}

/* The DWARF 4 table: two sequences, the second at lower addresses. */
static void line_table_v4(struct buf *o)
{
	static const unsigned char std[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	o->n = 0;
	put(o, 0, 4);                /* unit_length, patched */
	put(o, 4, 2);
	size_t hl = o->n;
	put(o, 0, 4);                /* header_length, patched */
	put(o, 1, 1);                /* min_inst_length */
	put(o, 1, 1);                /* max_ops_per_insn */
	put(o, 1, 1);                /* default_is_stmt */
	put(o, (uint64_t)(unsigned char)-5, 1);
	put(o, 14, 1);
	put(o, 13, 1);
	memcpy(o->b + o->n, std, sizeof std);
	o->n += sizeof std;
	str(o, "inc");
	str(o, "");
	str(o, "a.c"); uleb(o, 0); uleb(o, 0); uleb(o, 0);
	str(o, "/abs/b.h"); uleb(o, 0); uleb(o, 0); uleb(o, 0);
	str(o, "c.h"); uleb(o, 1); uleb(o, 0); uleb(o, 0);
	str(o, "");
	patch32(o, hl, o->n - hl - 4);
	set_address(o, 0x1000);
	put(o, DW_LNS_advance_line, 1); sleb(o, 9);
	put(o, DW_LNS_copy, 1);                      /* 0x1000 a.c:10 */
	put(o, 13 + (1 + 5) + 14 * 4, 1);            /* 0x1004 a.c:11 */
	put(o, DW_LNS_set_file, 1); uleb(o, 3);
	put(o, DW_LNS_set_column, 1); uleb(o, 7);
	put(o, 13 + (0 + 5) + 14 * 2, 1);            /* 0x1006 c.h:11 */
	put(o, DW_LNS_advance_line, 1); sleb(o, 2);
	put(o, DW_LNS_copy, 1);                      /* 0x1006 c.h:13 (the one chosen) */
	put(o, DW_LNS_advance_pc, 1); uleb(o, 10);
	end_sequence(o);                             /* 0x1010 */
	set_address(o, 0x800);
	put(o, DW_LNS_set_file, 1); uleb(o, 2);
	put(o, DW_LNS_copy, 1);                      /* 0x800 /abs/b.h:1 */
	put(o, DW_LNS_advance_pc, 1); uleb(o, 0x10);
	end_sequence(o);                             /* 0x810 */
	patch32(o, 0, o->n - 4);
}

/* The DWARF 5 table: paths inline (DW_FORM_string), directory index udata. */
static void line_table_v5(struct buf *o)
{
	static const unsigned char std[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	o->n = 0;
	put(o, 0, 4);
	put(o, 5, 2);
	put(o, 8, 1);                /* address_size */
	put(o, 0, 1);                /* segment selector size */
	size_t hl = o->n;
	put(o, 0, 4);
	put(o, 1, 1); put(o, 1, 1); put(o, 1, 1);
	put(o, (uint64_t)(unsigned char)-5, 1);
	put(o, 14, 1);
	put(o, 13, 1);
	memcpy(o->b + o->n, std, sizeof std);
	o->n += sizeof std;
	put(o, 1, 1); uleb(o, DW_LNCT_path); uleb(o, DW_FORM_string);
	uleb(o, 2); str(o, "/comp5"); str(o, "sub");
	put(o, 2, 1); uleb(o, DW_LNCT_path); uleb(o, DW_FORM_string);
	uleb(o, DW_LNCT_directory_index); uleb(o, DW_FORM_udata);
	uleb(o, 2); str(o, "m.c"); uleb(o, 0); str(o, "x.h"); uleb(o, 1);
	patch32(o, hl, o->n - hl - 4);
	set_address(o, 0x400);
	put(o, DW_LNS_copy, 1);                      /* 0x400 file 1 sub/x.h:1 */
	put(o, DW_LNS_set_file, 1); uleb(o, 0);
	put(o, 13 + (1 + 5) + 14 * 2, 1);            /* 0x402 /comp5/m.c:2 */
	put(o, DW_LNS_advance_pc, 1); uleb(o, 2);
	end_sequence(o);                             /* 0x404 */
	patch32(o, 0, o->n - 4);
}

static const char *name_at(const struct dw_lines *l, uint64_t pc, unsigned *line, unsigned *col)
{
	const struct dw_lrow *r = dw_lines_find(l, pc);
	if (!r)
		return NULL;
	*line = r->line;
	*col = r->col;
	return r->file < l->nfiles ? l->files[r->file] : "(bad index)";
}

static int line_is(const struct dw_lines *l, uint64_t pc, const char *file, unsigned line)
{
	unsigned ln = 0, col = 0;
	const char *f = name_at(l, pc, &ln, &col);
	if (!file)
		return f == NULL;
	return f && !strcmp(f, file) && ln == line;
}

/* A line table with the v4 header and a random program (seeded): sequences
 * at overlapping or falling addresses, repeated rows, rows at one address,
 * ends at the address of the last row, addresses set backwards, an end left
 * out; what dw_lines_read's row filter must follow or refuse. */
static void line_table_random(struct buf *o, uint32_t *seed)
{
#define RND(n) ((*seed = *seed * 1103515245u + 12345u) >> 16) % (n)
	line_table_v4(o);
	o->n = 10 + (o->b[6] | (size_t)o->b[7] << 8 | (size_t)o->b[8] << 16 | (size_t)o->b[9] << 24);
	unsigned nseq = 1 + RND(4);
	for (unsigned q = 0; q < nseq && o->n < 900; q++) {
		/* mostly sequences one after the other, else anywhere */
		set_address(o, RND(3) ? 0x1000 + 0x80 * q : 0x1000 + 0x40 * RND(6));
		unsigned nops = 1 + RND(14);
		for (unsigned k = 0; k < nops && o->n < 900; k++) {
			switch (RND(9)) {
			case 0: case 1: case 2:
				put(o, 13 + RND(243), 1);   /* special opcode */
				break;
			case 3:
				put(o, DW_LNS_copy, 1);
				break;
			case 4:
				put(o, DW_LNS_advance_pc, 1); uleb(o, RND(3) ? RND(6) : 0);
				break;
			case 5:
				put(o, DW_LNS_advance_line, 1); sleb(o, (int64_t)RND(7) - 3);
				break;
			case 6:
				put(o, DW_LNS_set_file, 1); uleb(o, 1 + RND(3));
				break;
			case 7:
				put(o, DW_LNS_set_column, 1); uleb(o, RND(3));
				break;
			default:
				if (RND(6) == 0)
					set_address(o, 0x1000 + 0x10 * RND(24));   /* maybe backwards */
				else
					put(o, DW_LNS_copy, 1);
				break;
			}
		}
		if (RND(4)) {
			put(o, DW_LNS_advance_pc, 1); uleb(o, 1 + RND(4));   /* else a zero-length end */
		}
		if (q + 1 < nseq || RND(8))
			end_sequence(o);
	}
	patch32(o, 0, o->n - 4);
#undef RND
}

/* ---- .debug_info ---- */

struct scopes {
	uint64_t off[16], origin[16];
	int32_t parent[16];
	int inlined[16], nranges[16];
	const char *linkage[16];   /* the scope's own linkage name as the scan read it */
	uint64_t lo[32], hi[32];
	int n, nr;
};

static int on_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct scopes *s = arg;
	if (s->nr == 32)
		return -1;
	s->lo[s->nr] = lo;
	s->hi[s->nr] = hi;
	s->nr++;
	return 0;
}

static int on_scope(void *arg, uint64_t off, int32_t parent, int inlined, int nranges, uint64_t origin,
		    const struct dw_sattrs *x)
{
	struct scopes *s = arg;
	if (s->n == 16)
		return -1;
	s->linkage[s->n] = x ? x->linkage : NULL;
	s->off[s->n] = off;
	s->parent[s->n] = parent;
	s->inlined[s->n] = inlined;
	s->nranges[s->n] = nranges;
	s->origin[s->n] = origin;
	return s->n++;
}

/* Offsets of the DIEs the checks name. */
static size_t die_f, die_c, die_g, die_decl;

static void abbrevs(struct buf *a)
{
	a->n = 0;
	uleb(a, 1); uleb(a, DW_TAG_compile_unit); put(a, DW_CHILDREN_yes, 1);
	uleb(a, DW_AT_name); uleb(a, DW_FORM_string); uleb(a, DW_AT_low_pc); uleb(a, DW_FORM_addr);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 2); uleb(a, DW_TAG_subprogram); put(a, DW_CHILDREN_yes, 1);
	uleb(a, DW_AT_name); uleb(a, DW_FORM_string); uleb(a, DW_AT_low_pc); uleb(a, DW_FORM_addr);
	uleb(a, DW_AT_high_pc); uleb(a, DW_FORM_data4); uleb(a, DW_AT_sibling); uleb(a, DW_FORM_ref4);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 3); uleb(a, DW_TAG_inlined_subroutine); put(a, DW_CHILDREN_no, 1);
	uleb(a, DW_AT_abstract_origin); uleb(a, DW_FORM_ref4); uleb(a, DW_AT_low_pc); uleb(a, DW_FORM_addr);
	uleb(a, DW_AT_high_pc); uleb(a, DW_FORM_data1);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 4); uleb(a, DW_TAG_variable); put(a, DW_CHILDREN_no, 1);
	uleb(a, DW_AT_name); uleb(a, DW_FORM_string); uleb(a, DW_AT_location); uleb(a, DW_FORM_exprloc);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 5); uleb(a, DW_TAG_subprogram); put(a, DW_CHILDREN_yes, 1);
	uleb(a, DW_AT_name); uleb(a, DW_FORM_string); uleb(a, DW_AT_ranges); uleb(a, DW_FORM_sec_offset);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 6); uleb(a, DW_TAG_subprogram); put(a, DW_CHILDREN_yes, 1);
	uleb(a, DW_AT_name); uleb(a, DW_FORM_string); uleb(a, DW_AT_declaration); uleb(a, DW_FORM_flag_present);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 7); uleb(a, DW_TAG_lexical_block); put(a, DW_CHILDREN_yes, 1);
	uleb(a, DW_AT_low_pc); uleb(a, DW_FORM_addr); uleb(a, DW_AT_high_pc); uleb(a, DW_FORM_data4);
	uleb(a, 0); uleb(a, 0);
	uleb(a, 0);
}

static void info(struct buf *o)
{
	size_t sib_f, sib_inner, org1, org2;
	o->n = 0;
	put(o, 0, 4);
	put(o, 5, 2);
	put(o, DW_UT_compile, 1);
	put(o, 8, 1);
	put(o, 0, 4);
	uleb(o, 1); str(o, "cu"); put(o, 0x1000, 8);
	die_f = o->n;
	uleb(o, 2); str(o, "f"); put(o, 0x1000, 8); put(o, 0x100, 4); sib_f = o->n; put(o, 0, 4);
	uleb(o, 4); str(o, "v"); uleb(o, 2); put(o, 0x91, 1); put(o, 0, 1);
	uleb(o, 7); put(o, 0x1010, 8); put(o, 0x20, 4);
	die_c = o->n;
	uleb(o, 3); org1 = o->n; put(o, 0, 4); put(o, 0x1018, 8); put(o, 8, 1);
	put(o, 0, 1);                       /* end of the block's children */
	put(o, 0, 1);                       /* end of f's children */
	die_g = o->n;
	patch32(o, sib_f, die_g);
	uleb(o, 5); str(o, "g"); put(o, 12, 4);
	uleb(o, 3); org2 = o->n; put(o, 0, 4); put(o, 0x2010, 8); put(o, 4, 1);
	put(o, 0, 1);
	die_decl = o->n;
	patch32(o, org1, die_decl);
	patch32(o, org2, die_decl);
	uleb(o, 6); str(o, "decl");
	uleb(o, 2); str(o, "inner"); put(o, 0x3000, 8); put(o, 0x10, 4); sib_inner = o->n; put(o, 0, 4);
	put(o, 0, 1);                       /* inner has no children */
	patch32(o, sib_inner, o->n);
	put(o, 0, 1);                       /* end of decl's children */
	put(o, 0, 1);                       /* end of the CU's children */
	patch32(o, 0, o->n - 4);
}

static void rnglists(struct buf *o)
{
	o->n = 0;
	put(o, 0, 4); put(o, 5, 2); put(o, 8, 1); put(o, 0, 1); put(o, 0, 4);
	put(o, DW_RLE_base_address, 1); put(o, 0x2000, 8);
	put(o, DW_RLE_offset_pair, 1); uleb(o, 0x10); uleb(o, 0x20);
	put(o, DW_RLE_start_length, 1); put(o, 0x2100, 8); uleb(o, 8);
	put(o, DW_RLE_end_of_list, 1);
	patch32(o, 0, o->n - 4);
}

/* ranges_ordered: R (N of them) is SRC's ranges in the lookups' order (lo
 * rising, depth rising, hi falling), equal ones in SRC's order, checked
 * against an insertion sort of SRC (quadratic: for small N only) */
static int ranges_ordered(const struct dw_range *src, const struct dw_range *r, size_t n)
{
	struct dw_range *ref = malloc(n * sizeof *ref);
	if (!ref)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct dw_range x = src[i];
		size_t j = i;
		while (j > 0 && (ref[j - 1].lo > x.lo ||
				 (ref[j - 1].lo == x.lo && (ref[j - 1].depth > x.depth ||
							    (ref[j - 1].depth == x.depth && ref[j - 1].hi < x.hi))))) {
			ref[j] = ref[j - 1];
			j--;
		}
		ref[j] = x;
	}
	int same = !memcmp(ref, r, n * sizeof *ref);
	free(ref);
	return same;
}

int main(void)
{
	struct buf lt;
	struct dw_secs secs;
	struct dw_lines l;

	/* ---- DWARF 4 line table ---- */
	line_table_v4(&lt);
	memset(&secs, 0, sizeof secs);
	secs.little_endian = 1;
	secs.line.data = lt.b;
	secs.line.size = lt.n;
	memset(&l, 0, sizeof l);
	CHECK("v4: decoded", dw_lines_read(&l, &secs, 0, "/comp", 8) == 0);
	CHECK("v4: 6 rows (4 + 2 in two sequences; the first of the two at 0x1006 left out)", l.nrows == 6);
	CHECK("v4: 4 files (file 0 unused)", l.nfiles == 4);
	CHECK("v4: file 0 is ??? as libdw names it", l.nfiles == 4 && !strcmp(l.files[0], "???"));
	CHECK("v4: directory 0 is the compilation directory", l.nfiles == 4 && !strcmp(l.files[1], "/comp/a.c"));
	CHECK("v4: absolute name kept", l.nfiles == 4 && !strcmp(l.files[2], "/abs/b.h"));
	CHECK("v4: relative directory joined", l.nfiles == 4 && !strcmp(l.files[3], "inc/c.h"));
	CHECK("v4: rows in address order (second sequence first)", l.nrows == 6 && l.rows[0].addr == 0x800 &&
	      l.rows[1].addr == 0x810 && l.rows[1].end && l.rows[2].addr == 0x1000);
	CHECK("v4: before every row: nothing", line_is(&l, 0x7ff, NULL, 0));
	CHECK("v4: 0x800 is /abs/b.h:1", line_is(&l, 0x800, "/abs/b.h", 1));
	CHECK("v4: 0x80f is /abs/b.h:1", line_is(&l, 0x80f, "/abs/b.h", 1));
	CHECK("v4: at an end of sequence: nothing", line_is(&l, 0x810, NULL, 0));
	CHECK("v4: between sequences: nothing", line_is(&l, 0xfff, NULL, 0));
	CHECK("v4: 0x1000 is a.c:10", line_is(&l, 0x1000, "/comp/a.c", 10));
	CHECK("v4: 0x1005 is a.c:11 (special opcode)", line_is(&l, 0x1005, "/comp/a.c", 11));
	CHECK("v4: two rows at 0x1006: the last one, c.h:13", line_is(&l, 0x1006, "inc/c.h", 13));
	unsigned ln = 0, col = 0;
	name_at(&l, 0x100f, &ln, &col);
	CHECK("v4: column 7 kept", col == 7 && ln == 13);
	CHECK("v4: 0x1010 (end) and after: nothing", line_is(&l, 0x1010, NULL, 0) && line_is(&l, 0x9999, NULL, 0));
	dw_lines_release(&l);
	memset(&l, 0, sizeof l);
	CHECK("v4: no compilation directory: names stay relative",
	      dw_lines_read(&l, &secs, 0, NULL, 8) == 0 && l.nfiles == 4 && !strcmp(l.files[1], "a.c"));
	dw_lines_release(&l);
	memset(&l, 0, sizeof l);
	CHECK("offset past the section: fails", dw_lines_read(&l, &secs, lt.n, "/comp", 8) == -1);
	secs.little_endian = 0;
	CHECK("big-endian file: left to libdw", dw_lines_read(&l, &secs, 0, "/comp", 8) == -1);
	secs.little_endian = 1;

	/* a last sequence whose last row sits at its end address (seen in gcc's ARM
	 * output): sorted after the end, it is made the end, as libdw does */
	{
		struct buf z = lt;
		size_t at = z.n;
		set_address(&z, 0x2000);
		put(&z, DW_LNS_advance_line, 1); sleb(&z, 4);
		put(&z, DW_LNS_copy, 1);                 /* 0x2000 line 5 */
		put(&z, DW_LNS_advance_pc, 1); uleb(&z, 2);
		put(&z, DW_LNS_copy, 1);                 /* 0x2002 line 5, zero length */
		end_sequence(&z);                        /* 0x2002 */
		patch32(&z, 0, z.n - 4);
		(void)at;
		struct dw_secs t = secs;
		t.line.data = z.b;
		t.line.size = z.n;
		memset(&l, 0, sizeof l);
		CHECK("zero-length last row: decoded", dw_lines_read(&l, &t, 0, "/comp", 8) == 0);
		CHECK("zero-length last row: 0x2001 is line 5", line_is(&l, 0x2001, "/comp/a.c", 5));
		CHECK("zero-length last row: made the end, so 0x2002 and after have no line",
		      line_is(&l, 0x2002, NULL, 0) && line_is(&l, 0x2003, NULL, 0));
		dw_lines_release(&l);
	}
	/* rows that can never be the answer are left out as they are decoded,
	 * unless a sequence goes backwards (then every row is kept, as libdw) */
	{
		struct buf z = lt;
		set_address(&z, 0x3000);
		put(&z, DW_LNS_copy, 1);                 /* 0x3000 a.c:1 */
		put(&z, DW_LNS_advance_pc, 1); uleb(&z, 4);
		put(&z, DW_LNS_copy, 1);                 /* 0x3004 a.c:1 again: left out */
		put(&z, DW_LNS_advance_pc, 1); uleb(&z, 4);
		put(&z, DW_LNS_advance_line, 1); sleb(&z, 1);
		put(&z, DW_LNS_copy, 1);                 /* 0x3008 a.c:2 */
		put(&z, DW_LNS_advance_pc, 1); uleb(&z, 4);
		end_sequence(&z);                        /* 0x300c */
		patch32(&z, 0, z.n - 4);
		struct dw_secs t = secs;
		t.line.data = z.b;
		t.line.size = z.n;
		memset(&l, 0, sizeof l);
		CHECK("repeated row: decoded", dw_lines_read(&l, &t, 0, "/comp", 8) == 0);
		CHECK("repeated row: left out (6 + 3 rows)", l.nrows == 9);
		CHECK("repeated row: 0x3003 and 0x3007 are a.c:1, 0x3008 a.c:2, 0x300c nothing",
		      line_is(&l, 0x3003, "/comp/a.c", 1) && line_is(&l, 0x3007, "/comp/a.c", 1) &&
		      line_is(&l, 0x3008, "/comp/a.c", 2) && line_is(&l, 0x300c, NULL, 0));
		dw_lines_release(&l);
		z = lt;
		set_address(&z, 0x3000);
		put(&z, DW_LNS_copy, 1);                 /* 0x3000 a.c:1 */
		put(&z, DW_LNS_advance_pc, 1); uleb(&z, 4);
		put(&z, DW_LNS_copy, 1);                 /* 0x3004 a.c:1 again: kept here */
		set_address(&z, 0x2ff0);                 /* backwards in the same sequence */
		put(&z, DW_LNS_copy, 1);                 /* 0x2ff0 a.c:1 */
		put(&z, DW_LNS_advance_pc, 1); uleb(&z, 4);
		end_sequence(&z);                        /* 0x2ff4 */
		patch32(&z, 0, z.n - 4);
		t.line.data = z.b;
		t.line.size = z.n;
		memset(&l, 0, sizeof l);
		CHECK("sequence going backwards: decoded", dw_lines_read(&l, &t, 0, "/comp", 8) == 0);
		CHECK("sequence going backwards: every row kept (7 + 4)", l.nrows == 11);
		CHECK("sequence going backwards: 0x2ff1 and 0x3002 are a.c:1, 0x2ff4 nothing",
		      line_is(&l, 0x2ff1, "/comp/a.c", 1) && line_is(&l, 0x3002, "/comp/a.c", 1) &&
		      line_is(&l, 0x2ff4, NULL, 0));
		dw_lines_release(&l);
	}
	{
		struct buf z = lt;
		z.b[z.n - 2] = 2;   /* end_sequence with a length of 2: libdw would misread what follows */
		struct dw_secs t = secs;
		t.line.data = z.b;
		memset(&l, 0, sizeof l);
		CHECK("extended opcode longer than its operands: left to libdw", dw_lines_read(&l, &t, 0, "/comp", 8) == -1);
		dw_lines_release(&l);
	}
	memset(&l, 0, sizeof l);
	CHECK("DW_LNE_set_address of another size than the unit's: left to libdw",
	      dw_lines_read(&l, &secs, 0, "/comp", 4) == -1);
	dw_lines_release(&l);

	/* every truncation, then every single-byte corruption: 0 or -1, never a crash */
	size_t ok = 0, failed = 0;
	for (size_t cut = 0; cut < lt.n; cut++) {
		struct dw_secs t = secs;
		t.line.size = cut;
		memset(&l, 0, sizeof l);
		if (dw_lines_read(&l, &t, 0, "/comp", 8) == 0)
			ok++;
		else
			failed++;
		dw_lines_release(&l);
	}
	CHECK("v4: every truncation fails cleanly", failed == lt.n && ok == 0);
	size_t flips = 0;
	for (size_t at = 0; at < lt.n; at++) {
		struct buf c = lt;
		c.b[at] ^= 0x5a;
		struct dw_secs t = secs;
		t.line.data = c.b;
		memset(&l, 0, sizeof l);
		int rc = dw_lines_read(&l, &t, 0, "/comp", 8);
		if (rc == 0)
			for (uint64_t pc = 0x7f0; pc < 0x1020; pc += 3)
				(void)dw_lines_find(&l, pc);
		dw_lines_release(&l);
		flips++;
	}
	CHECK("v4: every single-byte corruption decoded or refused, no crash", flips == lt.n);

	/* the rows left out as decoded change no answer: random tables decoded
	 * with the filter and keeping every row name every address alike */
	{
		uint32_t seed = 1;
		size_t tables = 0, both = 0, filtered = 0, differ = 0;
		for (int t = 0; t < 4000; t++) {
			struct buf z;
			line_table_random(&z, &seed);
			struct dw_secs rs = secs;
			rs.line.data = z.b;
			rs.line.size = z.n;
			struct dw_lines a, b;
			memset(&a, 0, sizeof a);
			memset(&b, 0, sizeof b);
			int ra = dw_lines_read(&a, &rs, 0, "/comp", 8), rb = dw_lines_read_all(&b, &rs, 0, "/comp", 8);
			tables++;
			if (ra != rb) {
				differ++;
			} else if (ra == 0) {
				both++;
				filtered += a.filtered != 0;
				for (uint64_t pc = 0xff0; pc < 0x1300; pc++) {
					const struct dw_lrow *x = dw_lines_find(&a, pc), *y = dw_lines_find(&b, pc);
					if (!x != !y || (x && (x->file != y->file || x->line != y->line || x->col != y->col))) {
						differ++;
						break;
					}
				}
			}
			dw_lines_release(&a);
			dw_lines_release(&b);
		}
		printf("# random line tables: %zu, decoded %zu, with rows left out %zu\n", tables, both, filtered);
		CHECK("random tables: rows left out change no answer (4000 tables)", differ == 0);
		CHECK("random tables: most decoded, and with rows left out", both > tables / 2 && filtered > both / 4 &&
		      filtered < both);
	}

	/* ---- DWARF 5 line table ---- */
	line_table_v5(&lt);
	secs.line.data = lt.b;
	secs.line.size = lt.n;
	memset(&l, 0, sizeof l);
	CHECK("v5: decoded", dw_lines_read(&l, &secs, 0, "/ignored", 8) == 0);
	CHECK("v5: 2 files, numbered from 0", l.nfiles == 2);
	CHECK("v5: directory 0 from the table", l.nfiles == 2 && !strcmp(l.files[0], "/comp5/m.c"));
	CHECK("v5: directory 1 joined", l.nfiles == 2 && !strcmp(l.files[1], "sub/x.h"));
	CHECK("v5: 0x400 is file 1 (the initial file register)", line_is(&l, 0x400, "sub/x.h", 1));
	CHECK("v5: 0x403 is m.c:2", line_is(&l, 0x403, "/comp5/m.c", 2));
	CHECK("v5: 0x404 (end): nothing", line_is(&l, 0x404, NULL, 0));
	dw_lines_release(&l);
	failed = 0;
	for (size_t cut = 0; cut < lt.n; cut++) {
		struct dw_secs t = secs;
		t.line.size = cut;
		memset(&l, 0, sizeof l);
		if (dw_lines_read(&l, &t, 0, NULL, 8) != 0)
			failed++;
		dw_lines_release(&l);
	}
	CHECK("v5: every truncation fails cleanly", failed == lt.n);

	/* ---- .debug_info scan ---- */
	struct buf ab, in, rl;
	abbrevs(&ab);
	info(&in);
	rnglists(&rl);
	memset(&secs, 0, sizeof secs);
	secs.little_endian = 1;
	secs.info.data = in.b;
	secs.info.size = in.n;
	secs.abbrev.data = ab.b;
	secs.abbrev.size = ab.n;
	secs.rnglists.data = rl.b;
	secs.rnglists.size = rl.n;
	struct dw_unit u = { 0 };
	u.unit_start = 0;
	u.unit_end = in.n;
	u.die_off = 12;
	u.abbrev_off = 0;
	u.version = 5;
	u.addrsz = 8;
	u.offsz = 4;
	u.base = 0x1000;
	struct scopes sc;
	memset(&sc, 0, sizeof sc);
	CHECK("scan: succeeds", dw_cuidx_scan(&u, &secs, on_scope, on_range, &sc) == 0);
	CHECK("scan: 4 scopes (the declaration and what it holds left out)", sc.n == 4);
	CHECK("scan: 5 ranges", sc.nr == 5);
	CHECK("scan: f first, at the top, [0x1000, 0x1100)", sc.n == 4 && sc.off[0] == die_f && sc.parent[0] == -1 &&
	      !sc.inlined[0] && sc.lo[0] == 0x1000 && sc.hi[0] == 0x1100);
	CHECK("scan: the inlined call inside f's lexical block has f as parent, named by its origin",
	      sc.n == 4 && sc.off[1] == die_c && sc.parent[1] == 0 && sc.inlined[1] && sc.origin[1] == die_decl &&
	      sc.lo[1] == 0x1018 && sc.hi[1] == 0x1020);
	CHECK("scan: g reached through f's DW_AT_sibling, ranges from .debug_rnglists",
	      sc.n == 4 && sc.off[2] == die_g && sc.parent[2] == -1 && sc.nranges[2] == 2 &&
	      sc.lo[2] == 0x2010 && sc.hi[2] == 0x2020 && sc.lo[3] == 0x2100 && sc.hi[3] == 0x2108);
	CHECK("scan: g's inlined call", sc.n == 4 && sc.parent[3] == 2 && sc.lo[4] == 0x2010 && sc.hi[4] == 0x2014);
	/* ---- the CU DIE and origins read without libdw (dw_unit_cu_read,
	 * dw_die_origin_name) ---- */
	struct dw_cuattrs ca;
	struct dw_unit cu_u = u;
	cu_u.base = 0;
	CHECK("cu: read", dw_unit_cu_read(&cu_u, &secs, &ca) == 0);
	CHECK("cu: base = DW_AT_low_pc 0x1000, no stmt_list, comp_dir or language",
	      cu_u.base == 0x1000 && !ca.has_stmt_list && !ca.comp_dir && ca.lang == -1 && !cu_u.has_addr_base &&
	      !cu_u.has_rnglists_base);
	int lk = -1;
	const char *on = dw_die_origin_name(&u, &secs, die_decl, &lk);
	CHECK("origin: the declaration's DW_AT_name, no linkage name", on && !strcmp(on, "decl") && lk == 0);
	on = dw_die_origin_name(&u, &secs, die_f, &lk);
	CHECK("origin: a subprogram with code is named too", on && !strcmp(on, "f") && lk == 0);
	CHECK("origin: an inlined subroutine is not an origin", !dw_die_origin_name(&u, &secs, die_c, &lk));
	CHECK("origin: the CU DIE and an offset past the unit are not either",
	      !dw_die_origin_name(&u, &secs, u.die_off, &lk) && !dw_die_origin_name(&u, &secs, in.n, &lk));
	{
		/* the CU's abbreviation last (gcc's order), DWARF 5 forms */
		struct buf a2, i2;
		a2.n = 0;
		uleb(&a2, 1); uleb(&a2, DW_TAG_subprogram); put(&a2, DW_CHILDREN_no, 1);
		uleb(&a2, DW_AT_MIPS_linkage_name); uleb(&a2, DW_FORM_string);
		uleb(&a2, DW_AT_name); uleb(&a2, DW_FORM_string);
		uleb(&a2, DW_AT_linkage_name); uleb(&a2, DW_FORM_string);
		uleb(&a2, DW_AT_inline); uleb(&a2, DW_FORM_implicit_const); uleb(&a2, 3);
		uleb(&a2, 0); uleb(&a2, 0);
		uleb(&a2, 2); uleb(&a2, DW_TAG_subprogram); put(&a2, DW_CHILDREN_no, 1);
		uleb(&a2, DW_AT_specification); uleb(&a2, DW_FORM_ref4); uleb(&a2, DW_AT_name); uleb(&a2, DW_FORM_string);
		uleb(&a2, 0); uleb(&a2, 0);
		uleb(&a2, 3); uleb(&a2, DW_TAG_compile_unit); put(&a2, DW_CHILDREN_yes, 1);
		uleb(&a2, DW_AT_producer); uleb(&a2, DW_FORM_string);
		uleb(&a2, DW_AT_language); uleb(&a2, DW_FORM_data1);
		uleb(&a2, DW_AT_comp_dir); size_t cd_form = a2.n; uleb(&a2, DW_FORM_string);
		uleb(&a2, DW_AT_stmt_list); uleb(&a2, DW_FORM_sec_offset);
		uleb(&a2, DW_AT_low_pc); uleb(&a2, DW_FORM_addr);
		uleb(&a2, DW_AT_rnglists_base); uleb(&a2, DW_FORM_sec_offset);
		uleb(&a2, DW_AT_addr_base); uleb(&a2, DW_FORM_sec_offset);
		uleb(&a2, 0); uleb(&a2, 0);
		uleb(&a2, 0);
		i2.n = 0;
		put(&i2, 0, 4); put(&i2, 5, 2); put(&i2, DW_UT_compile, 1); put(&i2, 8, 1); put(&i2, 0, 4);
		uleb(&i2, 3); str(&i2, "gcc"); put(&i2, DW_LANG_C11, 1); str(&i2, "/build"); put(&i2, 0x40, 4);
		put(&i2, 0x5000, 8); put(&i2, 0x0c, 4); put(&i2, 0x08, 4);
		size_t d_inl = i2.n;
		uleb(&i2, 1); str(&i2, "__mips_inl"); str(&i2, "inl"); str(&i2, "__GI_inl");
		size_t d_spec = i2.n;
		uleb(&i2, 2); put(&i2, (uint32_t)d_inl, 4); str(&i2, "spec");
		put(&i2, 0, 1);
		patch32(&i2, 0, i2.n - 4);
		struct dw_secs s2 = secs;
		s2.info.data = i2.b;
		s2.info.size = i2.n;
		s2.abbrev.data = a2.b;
		s2.abbrev.size = a2.n;
		struct dw_unit u2 = u;
		u2.unit_end = i2.n;
		CHECK("cu last in its table: read", dw_unit_cu_read(&u2, &s2, &ca) == 0);
		CHECK("cu last: language, comp_dir, stmt_list as written",
		      ca.lang == DW_LANG_C11 && ca.comp_dir && !strcmp(ca.comp_dir, "/build") && ca.has_stmt_list &&
		      ca.stmt_list == 0x40);
		CHECK("cu last: base 0x5000, rnglists_base 0x0c, addr_base 8",
		      u2.base == 0x5000 && u2.has_rnglists_base && u2.rnglists_base == 0x0c && u2.has_addr_base &&
		      u2.addr_base == 8);
		on = dw_die_origin_name(&u2, &s2, d_inl, &lk);
		CHECK("origin: DW_AT_linkage_name before DW_AT_MIPS_linkage_name and DW_AT_name",
		      on && !strcmp(on, "__GI_inl") && lk == 1);
		CHECK("origin: one with a specification is left to libdw", !dw_die_origin_name(&u2, &s2, d_spec, &lk));
		failed = 0;
		for (size_t cut = 0; cut < i2.n; cut++) {
			struct dw_unit t = u2;
			t.unit_end = cut;
			if (dw_unit_cu_read(&t, &s2, &ca) == 0 && cut < d_inl)
				failed++;
			(void)dw_die_origin_name(&t, &s2, d_inl, &lk);
		}
		CHECK("cu: every truncation of the unit before the CU DIE's end fails cleanly", failed == 0);
		failed = 0;
		for (size_t cut = 0; cut + 1 < a2.n; cut++) {   /* the table's last 0 aside */
			struct dw_secs t = s2;
			t.abbrev.size = cut;
			if (dw_unit_cu_read(&u2, &t, &ca) == 0)
				failed++;
		}
		CHECK("cu: every truncation of the abbreviations before the CU's end fails cleanly", failed == 0);
		/* DW_FORM_strx1 for comp_dir (needs .debug_str_offsets): left to libdw */
		a2.b[cd_form] = DW_FORM_strx1;
		CHECK("cu: a comp_dir form it does not read: left to libdw", dw_unit_cu_read(&u2, &s2, &ca) == -1);
	}
	{
		/* a subprogram with DW_AT_MIPS_linkage_name and DW_AT_linkage_name
		 * twice (damaged DWARF): libdw's dwarf_attr gives the first
		 * DW_AT_linkage_name, to the scan and to the origin reader alike;
		 * then the CU's abbreviation after a code defined twice, which
		 * libdw refuses (the whole table invalid) */
		struct buf a3, i3;
		a3.n = 0;
		uleb(&a3, 1); uleb(&a3, DW_TAG_compile_unit); put(&a3, DW_CHILDREN_yes, 1);
		uleb(&a3, DW_AT_name); uleb(&a3, DW_FORM_string); uleb(&a3, DW_AT_low_pc); uleb(&a3, DW_FORM_addr);
		uleb(&a3, 0); uleb(&a3, 0);
		uleb(&a3, 2); uleb(&a3, DW_TAG_subprogram); put(&a3, DW_CHILDREN_no, 1);
		uleb(&a3, DW_AT_MIPS_linkage_name); uleb(&a3, DW_FORM_string);
		uleb(&a3, DW_AT_linkage_name); uleb(&a3, DW_FORM_string);
		uleb(&a3, DW_AT_linkage_name); uleb(&a3, DW_FORM_string);
		uleb(&a3, DW_AT_low_pc); uleb(&a3, DW_FORM_addr); uleb(&a3, DW_AT_high_pc); uleb(&a3, DW_FORM_data4);
		uleb(&a3, 0); uleb(&a3, 0);
		uleb(&a3, 0);
		i3.n = 0;
		put(&i3, 0, 4); put(&i3, 5, 2); put(&i3, DW_UT_compile, 1); put(&i3, 8, 1); put(&i3, 0, 4);
		uleb(&i3, 1); str(&i3, "cu3"); put(&i3, 0x6000, 8);
		size_t d_two = i3.n;
		uleb(&i3, 2); str(&i3, "_Z4mipsv"); str(&i3, "_Z5firstv"); str(&i3, "_Z6secondv");
		put(&i3, 0x6000, 8); put(&i3, 0x40, 4);
		put(&i3, 0, 1);
		patch32(&i3, 0, i3.n - 4);
		struct dw_secs s3 = secs;
		s3.info.data = i3.b;
		s3.info.size = i3.n;
		s3.abbrev.data = a3.b;
		s3.abbrev.size = a3.n;
		struct dw_unit u3 = u;
		u3.unit_end = i3.n;
		u3.base = 0;
		memset(&sc, 0, sizeof sc);
		CHECK("linkage twice: the scan finds the subprogram [0x6000, 0x6040)",
		      dw_cuidx_scan(&u3, &s3, on_scope, on_range, &sc) == 0 && sc.n == 1 && sc.off[0] == d_two &&
		      sc.nr == 1 && sc.lo[0] == 0x6000 && sc.hi[0] == 0x6040);
		CHECK("linkage twice: the scan takes the first DW_AT_linkage_name (not the MIPS one, not the last)",
		      sc.n == 1 && sc.linkage[0] && !strcmp(sc.linkage[0], "_Z5firstv"));
		on = dw_die_origin_name(&u3, &s3, d_two, &lk);
		CHECK("linkage twice: the origin reader takes the first DW_AT_linkage_name too",
		      on && !strcmp(on, "_Z5firstv") && lk == 1);
		/* the CU's code after a code defined twice */
		struct buf a4;
		a4.n = 0;
		for (int k = 0; k < 2; k++) {   /* code 2, twice */
			uleb(&a4, 2); uleb(&a4, DW_TAG_variable); put(&a4, DW_CHILDREN_no, 1);
			uleb(&a4, DW_AT_name); uleb(&a4, DW_FORM_string);
			uleb(&a4, 0); uleb(&a4, 0);
		}
		size_t cu_code = a4.n;
		uleb(&a4, 3); uleb(&a4, DW_TAG_compile_unit); put(&a4, DW_CHILDREN_no, 1);
		uleb(&a4, DW_AT_name); uleb(&a4, DW_FORM_string); uleb(&a4, DW_AT_low_pc); uleb(&a4, DW_FORM_addr);
		uleb(&a4, 0); uleb(&a4, 0);
		uleb(&a4, 0);
		struct buf i4;
		i4.n = 0;
		put(&i4, 0, 4); put(&i4, 5, 2); put(&i4, DW_UT_compile, 1); put(&i4, 8, 1); put(&i4, 0, 4);
		uleb(&i4, 3); str(&i4, "cu4"); put(&i4, 0x7000, 8);
		patch32(&i4, 0, i4.n - 4);
		struct dw_secs s4 = secs;
		s4.info.data = i4.b;
		s4.info.size = i4.n;
		s4.abbrev.data = a4.b;
		s4.abbrev.size = a4.n;
		struct dw_unit u4 = u;
		u4.unit_end = i4.n;
		u4.base = 0;
		CHECK("abbrev: the CU's code after a code defined twice: left to libdw",
		      dw_unit_cu_read(&u4, &s4, &ca) == -1 && u4.base == 0);
		a4.b[0] = 4;   /* the first code 2 becomes code 4: no code twice */
		u4.base = 0;
		CHECK("abbrev: the same table with the codes apart: read, base 0x7000",
		      dw_unit_cu_read(&u4, &s4, &ca) == 0 && u4.base == 0x7000);
		a4.b[cu_code + 1] = 0;   /* the CU's tag 0, which dw_abbrevs refuses */
		CHECK("abbrev: a tag 0: left to libdw", dw_unit_cu_read(&u4, &s4, &ca) == -1);
	}

	struct dw_unit v4 = u;
	v4.version = 4;
	memset(&sc, 0, sizeof sc);
	CHECK("scan: DW_AT_ranges of a DWARF 4 unit without .debug_ranges: left to libdw",
	      dw_cuidx_scan(&v4, &secs, on_scope, on_range, &sc) == -1);

	failed = 0;
	size_t n_ok = 0;
	for (size_t cut = 13; cut < in.n; cut++) {
		struct dw_unit t = u;
		t.unit_end = cut;
		memset(&sc, 0, sizeof sc);
		if (dw_cuidx_scan(&t, &secs, on_scope, on_range, &sc) == 0)
			n_ok++;
		else
			failed++;
	}
	CHECK("scan: every truncated unit handled (decoded or refused)", failed + n_ok == in.n - 13 && failed > 0);
	flips = 0;
	for (size_t at = 12; at < in.n; at++) {
		struct buf c = in;
		c.b[at] ^= 0xa5;
		struct dw_secs t = secs;
		t.info.data = c.b;
		memset(&sc, 0, sizeof sc);
		(void)dw_cuidx_scan(&u, &t, on_scope, on_range, &sc);
		flips++;
	}
	for (size_t at = 0; at < ab.n; at++) {
		struct buf c = ab;
		c.b[at] ^= 0xa5;
		struct dw_secs t = secs;
		t.abbrev.data = c.b;
		memset(&sc, 0, sizeof sc);
		(void)dw_cuidx_scan(&u, &t, on_scope, on_range, &sc);
		flips++;
	}
	CHECK("scan: every single-byte corruption of .debug_info and .debug_abbrev handled",
	      flips == in.n - 12 + ab.n);
	/* the range order: the radix sort (units of 1024 ranges or more) gives the
	 * merge sort's order, runs of one lo included; a long run of one lo (the
	 * functions --gc-sections leaves at 0, or a crafted unit) goes to the
	 * merge sort, whose cost does not grow with the square of the run */
	{
		enum { N = 6000, BIG = 200000 };
		struct dw_range *src = malloc(BIG * sizeof *src);
		struct dw_range *a = malloc(BIG * sizeof *a);
		struct dw_range *b = malloc(BIG * sizeof *b);
		uint64_t rng = 42;
		int radix = -1, ready = src && a && b;
		for (size_t i = 0; ready && i < N; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t r = rng >> 33;
			/* lo from a few hundred values: runs of one lo up to about 40 */
			src[i].lo = 0x400000 + (r % 300) * 16;
			src[i].hi = src[i].lo + 1 + (r >> 9) % 64;
			src[i].depth = (uint32_t)((r >> 16) % 3);
			src[i].scope = (uint32_t)i;
		}
		struct dw_range *r = ready ? dw_ranges_order(src, a, b, N, &radix) : NULL;
		CHECK("ranges: 6,000 with runs of one lo: the radix sort, the merge sort's order",
		      r && radix == 1 && ranges_ordered(src, r, N));
		for (size_t i = 0; ready && i < N; i++)
			src[i].lo = i < 100 ? 0 : 0x400000 + i * 16; /* a run of 100 at lo 0 */
		r = ready ? dw_ranges_order(src, a, b, N, &radix) : NULL;
		CHECK("ranges: a run of 100 at one lo: left to the merge sort, the same order",
		      r && radix == 0 && ranges_ordered(src, r, N));
		for (size_t i = 0; ready && i < BIG; i++) {
			src[i].lo = 0;                   /* one lo, hi rising: the worst case */
			src[i].hi = i + 1;
			src[i].depth = 1;
			src[i].scope = (uint32_t)i;
		}
		r = ready ? dw_ranges_order(src, a, b, BIG, &radix) : NULL;
		int falling = r != NULL;
		for (size_t i = 0; falling && i < BIG; i++)
			falling = r[i].hi == BIG - i && r[i].scope == BIG - 1 - i;
		CHECK("ranges: 200,000 at one lo: the merge sort, hi falling", r && radix == 0 && falling);
		free(src);
		free(a);
		free(b);
	}
	return CHECK_DONE();
}
