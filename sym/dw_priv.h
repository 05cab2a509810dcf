/* dw_priv.h - private to the libdw symbolizer backend (sym/dw*.c): the string
 * arena and pointer map, the per-CU scope index, and the decoders that read
 * line tables (dw_line.c) and DIEs (dw_die.c) from the section bytes. Other
 * modules use sym.h only.
 */
#ifndef DW_PRIV_H
#define DW_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "htab.h"

/* Interned strings: chunks of bytes plus a set of pointers (common/htab). */
struct dw_arena {
	struct dw_chunk *chunks; /* newest first */
	struct htab idx;         /* strs by content */
	const char **strs;       /* every interned string */
	size_t cap;              /* of strs */
	size_t count;            /* strings in strs */
};

/* The one copy of s (or of len bytes at p) in the arena, or NULL when out of
 * memory (or s is NULL). The string lives until dw_arena_release(). */
const char *dw_arena_intern(struct dw_arena *a, const char *s);
const char *dw_arena_intern_len(struct dw_arena *a, const char *p, size_t len);

/* Free every string of the arena and reset it to empty. */
void dw_arena_release(struct dw_arena *a);

/* A pointer -> pointer hash map (common/htab; NULL keys not allowed). */
struct dw_ptrmap {
	struct htab idx;         /* keys by pointer */
	const void **keys;       /* per entry */
	const void **vals;       /* per entry */
	size_t cap, count;       /* of keys and vals; entries */
};

/* The value stored for key, or NULL. */
const void *dw_ptrmap_get(const struct dw_ptrmap *m, const void *key);

/* Store val for key (replacing any). Returns 0, or -1 when out of memory. */
int dw_ptrmap_put(struct dw_ptrmap *m, const void *key, const void *val);

/* Free the map's tables and reset it to empty. */
void dw_ptrmap_release(struct dw_ptrmap *m);

/* ---- per-CU index of code scopes (dw_scope.c) ----
 * dwarf_getscopes walks the CU's DIE tree on every call, far too slow for
 * thousands of addresses in big CUs; instead each CU is walked once and its
 * subprograms and inlined subroutines are kept with their PC ranges. */

/* A subprogram or inlined subroutine that has code. */
struct dw_scope {
	Dwarf_Die die;          /* valid as long as the module's Dwarf, once have_die */
	uint64_t off;           /* the DIE's offset in .debug_info */
	int have_die;           /* die above is set (else looked up by off on first use) */
	uint64_t origin;        /* nonzero: named as the DIE at this offset (its abstract origin) */
	int32_t parent;         /* enclosing scope in the same CU, -1 at the top */
	uint32_t depth;         /* 0 at the top */
	int inlined;            /* DW_TAG_inlined_subroutine */
	int named;              /* name below has been looked up */
	int linkage;            /* the name came from a linkage name */
	const char *name;       /* interned demangled name, NULL if none */
	const char *own_name;   /* the DW_AT_name the decoder read when the DIE has no linkage
				 * name, specification or origin (its name in a C CU), or NULL */
	const char *own_linkage;  /* its own linkage name as the decoder read it (dw_sattrs), or NULL */
	int have_call;          /* call_* below were read by the decoder (else ask libdw) */
	int has_call_file;      /* DW_AT_call_file present */
	uint32_t call_file, call_line, call_col;  /* DW_AT_call_*, 0 when absent */
	uint32_t first_range;   /* this scope's ranges: cu->ranges[first_range..+nranges) */
	uint32_t nranges;
};

/* One PC range [lo, hi) of a scope, in DWARF addresses (no load bias). */
struct dw_range {
	uint64_t lo, hi;
	uint32_t scope;
	uint32_t depth;
};

/* Put the N ranges of SRC in the one order the lookups use (lo rising, then
 * depth rising, then hi falling; equal ones keep SRC's order), with A and B
 * (room for N each, the caller's) as buffers: a radix sort for large units,
 * a merge sort otherwise or when many ranges share one lo. SRC is not
 * changed. Returns A or B, whichever holds the result; *RADIX (if RADIX is
 * not NULL) says whether the radix sort did it. */
struct dw_range *dw_ranges_order(const struct dw_range *src, struct dw_range *a, struct dw_range *b,
				 size_t n, int *radix);

/* ---- line tables decoded once per CU (dw_line.c) ---- */

/* One section's bytes (as libelf holds them, decompressed), or NULL. */
struct dw_sec {
	const unsigned char *data;
	size_t size;
};

/* The DWARF sections dw_line.c and dw_die.c read, found once per module. */
struct dw_secs {
	struct dw_sec line, line_str, str;
	struct dw_sec info, abbrev, ranges, rnglists, addr;
	int little_endian;   /* the decoder reads little-endian files only */
};

/* One row of a line table, in DWARF addresses. */
struct dw_lrow {
	uint64_t addr;
	uint32_t file;        /* index into dw_lines.files */
	uint32_t line;
	uint32_t col;
	uint32_t end;         /* 1: DW_LNE_end_sequence (the address after the sequence), or the last row */
	uint32_t seq;         /* position in the program: libdw's order for ties */
};

/* One CU's line table: rows in libdw's order and file names as libdw composes
 * them (relative names joined to their directory). Rows that can never be an
 * answer of dw_lines_find are mostly left out (see dw_lines_read), so rows are
 * not libdw's rows one for one. */
struct dw_lines {
	struct dw_lrow *rows;
	size_t nrows;
	char **files;         /* malloc'd names */
	size_t nfiles;
	const char **paths;   /* per file: the interned absolute path, filled on first use */
	int filtered;         /* rows were left out as decoded: no two rows of a sequence at one
			       * address, none repeating the row before it */
};

/* Decode the line table at offset off of .debug_line (DW_AT_stmt_list of a CU
 * whose DW_AT_comp_dir is comp_dir, or NULL, and whose addresses are cu_addrsz
 * bytes) into l, which must be zeroed. A row followed by another at the same
 * address, and one saying what the row before it says, are left out as they
 * are decoded (the index cache's choice of rows, two thirds of gcc -O2's),
 * unless a sequence goes backwards, sequences overlap or the last one does not
 * end: then the table is decoded again keeping every row.
 * Returns 0, or -1 (l released) when the table is malformed, uses something
 * this decoder does not read, or memory runs out: the caller then asks libdw.
 * Borrows secs' bytes, which must outlive l. */
int dw_lines_read(struct dw_lines *l, const struct dw_secs *secs, uint64_t off, const char *comp_dir,
		  unsigned cu_addrsz);

/* dw_lines_read keeping every row, libdw's rows one for one (l->filtered 0):
 * for the tests that check that the rows left out change no answer. */
int dw_lines_read_all(struct dw_lines *l, const struct dw_secs *secs, uint64_t off, const char *comp_dir,
		      unsigned cu_addrsz);

/* The row that names DWARF address pc (dwfl_module_getsrc's choice: the last
 * row at or before pc unless it ends a sequence), or NULL. */
const struct dw_lrow *dw_lines_find(const struct dw_lines *l, uint64_t pc);

/* Free the table's memory and zero it. */
void dw_lines_release(struct dw_lines *l);

/* ---- scopes read from the bytes of .debug_info (dw_die.c) ---- */

/* One compilation unit as dw_die.c needs it (header fields from libdw). */
struct dw_unit {
	uint64_t unit_start, unit_end;  /* the unit in .debug_info, header included */
	uint64_t die_off;               /* the CU DIE */
	uint64_t abbrev_off;
	unsigned version, addrsz, offsz;
	uint64_t base;                  /* base address for ranges (as libdw finds it) */
	uint64_t addr_base, rnglists_base;
	int has_addr_base, has_rnglists_base;
};

/* Attributes of a scope DIE the decoder read besides its ranges (for names and
 * inline call sites without libdw). */
struct dw_sattrs {
	const char *name;       /* DW_AT_name's string when the DIE has no linkage name,
				 * specification or abstract origin, else NULL */
	int have_call;          /* the DW_AT_call_* below are known (absent ones 0) */
	int has_call_file;      /* DW_AT_call_file is present (file 0 is a file in DWARF 5) */
	uint64_t call_file, call_line, call_col;
	const char *linkage;      /* the DIE's own linkage name when it has one and neither
				   * specification nor origin, else NULL */
};

/* What the symbolizer reads of a CU DIE, as libdw gives it. */
struct dw_cuattrs {
	int has_stmt_list;      /* DW_AT_stmt_list is there: stmt_list set */
	uint64_t stmt_list;
	const char *comp_dir;   /* DW_AT_comp_dir's string, NULL when absent */
	int lang;               /* DW_AT_language, -1 when absent (dwarf_srclang) */
};

/* Read unit u's CU DIE from the section bytes (u's header fields set: unit
 * bounds, die_off, abbrev_off, version, addrsz, offsz): u's base, addr_base
 * and rnglists_base as dw_scope.c took them from libdw, and *ca. Only the
 * CU DIE's own abbreviation is looked for, so libdw never reads the unit's
 * abbreviations for these (a whole table per unit: gcc puts the CU's last).
 * Returns 0, or -1 when an attribute is in a form this does not read, or
 * the bytes are not what it expects (the caller then asks libdw). */
int dw_unit_cu_read(struct dw_unit *u, const struct dw_secs *secs, struct dw_cuattrs *ca);

/* The name dw_die_name (dw.c) gives the subprogram DIE at .debug_info offset
 * off of unit u (set by dw_unit_cu_read) when the DIE has neither
 * specification nor origin: its linkage name (then *linkage is 1), else its
 * DW_AT_name (the name only in a C unit: the caller checks). NULL when the
 * DIE is elsewhere, is something else, or a name is in a form not read here
 * (the caller then asks libdw). The unit's abbreviation table is read up to
 * the DIE's code, nothing kept. */
const char *dw_die_origin_name(const struct dw_unit *u, const struct dw_secs *secs, uint64_t off, int *linkage);

/* Walk the CU's DIEs as dw_scope.c's libdw walk does. For each subprogram or
 * inlined subroutine with code, range(arg, lo, hi) is called for each of its
 * ranges and then scope(arg, die_offset, parent, inlined, nranges, origin, attrs), which
 * returns the new scope's index (the parent of the scopes below it) or -1 to
 * stop; origin is the offset of the DIE's DW_AT_abstract_origin when the DIE
 * has no name or linkage name of its own (its name is then the origin's), else
 * 0. Returns 0, or -1 on anything unexpected (the caller then falls back to
 * libdw) or when a callback failed. */
int dw_cuidx_scan(const struct dw_unit *u, const struct dw_secs *secs,
		  int (*scope)(void *, uint64_t, int32_t, int, int, uint64_t, const struct dw_sattrs *),
		  int (*range)(void *, uint64_t, uint64_t), void *arg);

/* Entry idx of .debug_addr for unit u into *out. Returns 0, or -1. */
int dw_addrx(const struct dw_unit *u, const struct dw_secs *secs, uint64_t idx, uint64_t *out);

struct dw_cuidx {
	Dwarf_Off off;              /* CU DIE offset: the key */
	Dwarf_Die cu;
	Dwarf_Die sub;              /* a skeleton's split unit (.dwo, -gsplit-dwarf): its DIEs hold the scopes */
	int has_sub;                /* sub above is set */
	int lines_state;            /* 0 not read yet, 1 lines below valid, -1 ask libdw */
	int is_cxx;                 /* the CU is C++: -1 not known yet, 0, 1 */
	int ca_ok;                  /* ca and u below were read by dw_unit_cu_read */
	struct dw_cuattrs ca;
	struct dw_unit u;
	struct dw_lines lines;
	struct dw_scope *scopes;
	size_t nscopes;
	struct dw_range *ranges;    /* grouped per scope */
	struct dw_range *sorted;    /* same, sorted by lo, then outer before inner */
	size_t nranges;
};

/* CU indexes of one module, hashed by CU offset. */
struct dw_cutab {
	struct htab idx;         /* v by CU offset */
	struct dw_cuidx **v;     /* every index built */
	size_t cap, count;       /* of v; indexes in v */
};

/* The index of cu (built on first use: from the bytes of the sections in secs
 * when not NULL and they can be read, else with libdw), or NULL when out of
 * memory. */
struct dw_cuidx *dw_cutab_get(struct dw_cutab *t, Dwarf_Die *cu, const struct dw_secs *secs);

/* Building indexes in parts, for decoding units on several threads
 * (dw_cutab_get does all of it at once): */
/* The index of the unit at CU DIE offset off if t has one, else NULL. */
struct dw_cuidx *dw_cutab_find(struct dw_cutab *t, Dwarf_Off off);
/* A new, empty index of cu (not in any table; the caller owns it and frees it
 * with dw_cuidx_discard unless dw_cutab_insert takes it), or NULL. */
struct dw_cuidx *dw_cuidx_new(Dwarf_Die *cu);
/* The header fields of c's unit that dw_cuidx_decode needs, from libdw (so on
 * the thread that drives libdw). Returns 0, or -1 for a unit the decoder does
 * not read. */
int dw_cuidx_unit(struct dw_cuidx *c, const struct dw_secs *secs, struct dw_unit *u);
/* Fill c's scopes and ranges from the section bytes of unit u: calls nothing
 * in libdw and touches nothing but c, so units can be decoded in parallel.
 * Returns 0, or -1 (c left empty: build it with dw_cuidx_build_libdw). */
int dw_cuidx_decode(struct dw_cuidx *c, const struct dw_secs *secs, const struct dw_unit *u);
/* Fill c's scopes and ranges through libdw. Returns 0, or -1. */
int dw_cuidx_build_libdw(struct dw_cuidx *c);
/* Free an index no table holds. */
void dw_cuidx_discard(struct dw_cuidx *c);
/* Add the built index c (not already there) to t, which then owns it.
 * Returns 0, or -1 when out of memory (c is still the caller's). */
int dw_cutab_insert(struct dw_cutab *t, struct dw_cuidx *c);

/* The DIE of scope i of c, or NULL when libdw cannot find it. */
Dwarf_Die *dw_cuidx_die(struct dw_cuidx *c, int32_t i);
/* The unit DIE whose tree holds c's scopes (and its language): the split unit
 * of a skeleton (-gsplit-dwarf, found by libdw from DW_AT_dwo_name), else c's
 * CU DIE itself. The line table stays the skeleton's (c->cu). Owned by c. */
Dwarf_Die *dw_cuidx_top(struct dw_cuidx *c);

/* The innermost scope of c whose ranges hold DWARF address pc, or -1. */
int32_t dw_cuidx_find(const struct dw_cuidx *c, uint64_t pc);

/* Free every index of the table and reset it to empty. */
void dw_cutab_release(struct dw_cutab *t);

/* ---- CUs by address without .debug_aranges (dw_curange.c) ---- */

/* Every CU range of one module, sorted; built on first use. */
struct dw_cutable {
	struct dw_curange *r;
	size_t n;
	int state;            /* 0 not built, 1 built, -1 out of memory */
};

/* The CU DIE (libdwfl's, valid as long as mod) whose DW_AT_low_pc/high_pc or
 * DW_AT_ranges hold pc (a DWARF address, without the load bias), or NULL. For
 * modules without .debug_aranges, where dwfl_module_addrdie finds nothing. */
Dwarf_Die *dw_cutable_find(struct dw_cutable *t, Dwfl_Module *mod, uint64_t pc);

/* Range i of the table (built on first use) in its sorted order: *lo, *hi and
 * its CU DIE. Returns 1, 0 past the last range, or -1 when the table could
 * not be built. For the index cache, which stores the table as it is. */
int dw_cutable_range(struct dw_cutable *t, Dwfl_Module *mod, size_t i, uint64_t *lo, uint64_t *hi,
		     Dwarf_Die **cu);

/* Free the table and reset it to empty. */
void dw_cutable_release(struct dw_cutable *t);

/* Tags whose children may hold code scopes: the one rule of both walks, libdw's
 * (dw_scope.c) and the byte decoder's (dw_die.c), so they find the same scopes. */
static inline int dw_tag_descend(unsigned tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_module:
		return 1;
	default:
		return 0;
	}
}


/* ---- the per-module index cache (dw_cache.c) ----
 * A file per module, named by its build-id, that answers addresses without
 * libdw: the collapsed address ranges of the CUs (libdwfl's choice of CU for
 * an address) and, for modules whose .debug_aranges miss CUs (clang), every
 * CU's own ranges (dw_cutable's choice); for each CU that was decoded, a unit:
 * its line rows, file paths and scopes already named, with its own strings and
 * checksum; plus the module's function symbols. Little-endian fixed-size
 * records. The header and the global part (symbols, CU lookup tables, unit
 * directory, global strings) are checked when the file is mapped; a unit when
 * a lookup first uses it (dw_cache_unit_ok), so that a warm run on a few
 * addresses does not read the whole file. */

#define DW_CACHE_MAGIC "MPRFSYMC"
#define DW_CACHE_VERSION 3u
#define DW_CACHE_NONE 0xffffffffu   /* no string, or a CU that was not decoded */

/* What must match for a cache file to be used. */
struct dw_ckey {
	unsigned char id[64];    /* the module file's GNU build-id */
	uint32_t idlen;
	uint32_t flags;          /* DW_CKEY_DEMANGLE, DW_CKEY_RUST */
	uint64_t size, mtime;    /* the module file's st_size and st_mtime in ns */
};
enum {
	DW_CKEY_DEMANGLE = 1u << 0,  /* C++ names were demangled */
	DW_CKEY_RUST = 1u << 1,      /* Rust names by sym_rust_demangle (before: as C++'s, or raw) */
};

/* File layout: this header, the global part up to glob_end (covered by sum),
 * then the units' blobs (each covered by its own blob_sum). */
struct dw_chdr {
	char magic[8];
	uint32_t version, hdrsize;
	uint64_t size;           /* the whole file */
	uint64_t sum;            /* dw_cache_sum of bytes [hdrsize, glob_end) */
	struct dw_ckey key;
	int64_t dwdelta;         /* DWARF bias minus the module's load bias */
	uint64_t dbg_size, dbg_mtime;  /* the separate debug file, when dbg_path is set */
	uint32_t dbg_path;       /* global string: that file's path, or DW_CACHE_NONE */
	uint32_t pad;
	uint64_t syms_off, nsyms;       /* struct dw_csym, sorted by addr */
	uint64_t aranges_off, naranges; /* struct dw_carange, sorted by addr */
	uint64_t last_end;              /* end of the last arange before collapsing */
	uint64_t cus_off, ncus;         /* struct dw_ccu: the unit directory */
	uint64_t strs_off, strs_size;   /* global strings (NUL-terminated; ends with a NUL) */
	uint64_t curanges_off, ncuranges; /* struct dw_ccurange sorted by lo (dw_cutable's
					 * order); none when .debug_aranges name every CU */
	uint64_t glob_end;              /* end of the global part, start of the units */
};

struct dw_csym {
	uint64_t addr;           /* minus the load bias */
	uint64_t size;
	uint32_t name;           /* global string (raw symbol name) */
	int32_t rank;
};

/* The first arange of a run of one CU (as libdwfl collapses them). */
struct dw_carange {
	uint64_t addr;           /* DWARF address */
	uint64_t cuoff;          /* the CU DIE's offset */
	uint32_t cu;             /* index into the CU records, or DW_CACHE_NONE */
	uint32_t pad;
};

/* One range of a CU's own DW_AT_low_pc/high_pc or DW_AT_ranges. */
struct dw_ccurange {
	uint64_t lo, hi;         /* DWARF addresses, lo < hi */
	uint64_t cuoff;
	uint32_t cu;             /* index into the CU records, or DW_CACHE_NONE */
	uint32_t pad;
};

/* A unit: a decoded CU. Its arrays' offsets are relative to its blob. */
struct dw_ccu {
	uint64_t cuoff;
	uint32_t is_cxx, pad;
	uint64_t blob_off, blob_size;   /* in the file, after glob_end */
	uint64_t blob_sum;              /* dw_cache_sum of the blob */
	uint64_t rows_off, nrows;       /* struct dw_crow, libdw's order, rows that can
					 * never be the answer left out */
	uint64_t files_off, nfiles;     /* uint32_t unit strings: absolute paths */
	uint64_t scopes_off, nscopes;   /* struct dw_cscope, parents first */
	uint64_t ranges_off, nranges;   /* struct dw_crange grouped per scope */
	uint64_t sorted_off;            /* the same ranges sorted (dw_cuidx.sorted) */
	uint64_t rows_base;             /* DWARF address the rows' addr are relative to */
	uint64_t strs_off, strs_size;   /* the unit's strings; ends with a NUL */
};

struct dw_crow {
	uint32_t addr;           /* minus the CU's rows_base */
	uint32_t line;
	uint32_t file;           /* index into the CU's files; DW_CROW_END set: ends a sequence */
	uint32_t col;
};
#define DW_CROW_END 0x80000000u

enum { DW_CSCOPE_INLINED = 1u, DW_CSCOPE_LINKAGE = 2u };

struct dw_cscope {
	int32_t parent;          /* -1 or an earlier scope */
	uint32_t flags;          /* DW_CSCOPE_* */
	uint32_t name;           /* unit string: the display name, or DW_CACHE_NONE */
	uint32_t call_file;      /* index into the unit's files, or DW_CACHE_NONE */
	uint32_t call_line, call_col;
	uint32_t first_range, nranges;
};

struct dw_crange {
	uint64_t lo, hi;
	uint32_t scope, depth;
};

/* A mapped cache file whose global part passed dw_cache_check. */
struct dw_cache {
	const unsigned char *base;
	size_t len;
	const struct dw_chdr *h;
	signed char *ustate;     /* per unit: 0 not checked yet, 1 good, -1 damaged */
};

/* The checksum stored in the header and in each unit. */
uint64_t dw_cache_sum(const unsigned char *p, size_t n);

/* Check len bytes at p as a cache file for key (NULL: any key): header,
 * checksum of the global part, its offsets and indexes in bounds, order of
 * its sorted arrays, each unit's blob inside the file. Units are checked by
 * dw_cache_unit_ok. Returns 0 (c filled, borrowing p; dw_cache_release frees
 * what c holds), or -1 with why filled (one phrase). */
int dw_cache_check(struct dw_cache *c, const unsigned char *p, size_t len, const struct dw_ckey *key,
		   char *why, size_t whysz);

/* Whether unit cu of c may be used: its checksum, offsets and indexes, checked
 * on the first call (the answer is kept). Returns 1, or 0 with why filled on
 * the call that found it damaged (left alone on later calls). */
int dw_cache_unit_ok(struct dw_cache *c, const struct dw_ccu *cu, char *why, size_t whysz);

/* Map and check the file at path. Returns 0, 1 when there is no such file, or
 * -1 with why filled. Release with dw_cache_unmap(). */
int dw_cache_map(struct dw_cache *c, const char *path, const struct dw_ckey *key, char *why, size_t whysz);
void dw_cache_unmap(struct dw_cache *c);
/* Free what dw_cache_check allocated (not the bytes) and zero c. */
void dw_cache_release(struct dw_cache *c);

/* The global string at off, or NULL for DW_CACHE_NONE (offsets were checked). */
const char *dw_cache_str(const struct dw_cache *c, uint32_t off);

/* The string at off of a checked unit, or NULL for DW_CACHE_NONE. */
static inline const char *dw_cache_ustr(const struct dw_cache *c, const struct dw_ccu *cu, uint32_t off)
{
	return off == DW_CACHE_NONE ? NULL : (const char *)c->base + cu->blob_off + cu->strs_off + off;
}

/* The CU libdwfl (then dw_cutable) would pick for DWARF address pc: its
 * record (not checked yet: see dw_cache_unit_ok), or NULL with *known 0 when
 * no CU covers pc, or NULL with *known 1 when the CU was not decoded into the
 * file (ask libdw). */
const struct dw_ccu *dw_cache_cu(const struct dw_cache *c, uint64_t pc, int *known);

/* The CU whose own ranges hold DWARF address pc (dw_cutable_find's choice),
 * from the table the file keeps when .debug_aranges miss a CU with code: its
 * record, or NULL with *known 0 when there is no table or no CU holds pc, or
 * NULL with *known 1 when that CU was not decoded into the file (ask libdw). */
const struct dw_ccu *dw_cache_cu_own(const struct dw_cache *c, uint64_t pc, int *known);

/* The row of a checked unit that names pc (dw_lines_find's rule), or NULL. */
const struct dw_crow *dw_cache_row(const struct dw_cache *c, const struct dw_ccu *cu, uint64_t pc);

/* The innermost scope of a checked unit holding pc (dw_cuidx_find's rule), or -1. */
int32_t dw_cache_scope(const struct dw_cache *c, const struct dw_ccu *cu, uint64_t pc);

/* Arrays of a checked unit. */
static inline const struct dw_cscope *dw_cache_scopes(const struct dw_cache *c, const struct dw_ccu *cu)
{
	return (const struct dw_cscope *)(c->base + cu->blob_off + cu->scopes_off);
}
static inline const uint32_t *dw_cache_files(const struct dw_cache *c, const struct dw_ccu *cu)
{
	return (const uint32_t *)(c->base + cu->blob_off + cu->files_off);
}
static inline const struct dw_crow *dw_cache_rows(const struct dw_cache *c, const struct dw_ccu *cu)
{
	return (const struct dw_crow *)(c->base + cu->blob_off + cu->rows_off);
}

/* A cache file being built: the header and global part in data, global
 * strings in strs, the units' blobs in units (placed after the global part
 * when written; a unit record's blob_off is relative to units until then). */
struct dw_cbuf {
	unsigned char *data;
	size_t len, cap;
	char *strs;
	size_t slen, scap;
	unsigned char *units;
	size_t ulen, ucap;
	size_t ustart;           /* the unit being built: its blob's start in units */
	char *ustrs;             /* its strings */
	size_t uslen, uscap;
	struct { const char *s; uint32_t off, gen; } ucache[256];  /* its strings by pointer */
	uint32_t ugen;           /* generation of ucache's entries that are valid */
	int failed;              /* out of memory (or a string table over 4 GiB) */
};

/* Append n bytes (8-byte aligned) to the global part; returns their offset. */
uint64_t dw_cbuf_add(struct dw_cbuf *b, const void *p, size_t n);

/* Append s to the global strings; its offset, or DW_CACHE_NONE for NULL. */
uint32_t dw_cbuf_str(struct dw_cbuf *b, const char *s);

/* Start a unit whose arrays take at most room bytes: returns where to write
 * them (valid until dw_cbuf_unit_end), or NULL when out of memory. */
unsigned char *dw_cbuf_unit_begin(struct dw_cbuf *b, size_t room);

/* The offset of s among the unit's strings (a string added once per pointer,
 * mostly), or DW_CACHE_NONE for NULL. */
uint32_t dw_cbuf_ustr(struct dw_cbuf *b, const char *s);

/* Finish the unit: its arrays took used bytes (their offsets in rec are
 * relative to the blob); its strings go after them; rec's blob and strings
 * fields and checksum are set. */
void dw_cbuf_unit_end(struct dw_cbuf *b, size_t used, struct dw_ccu *rec);

/* Append a unit of a mapped file as it is (its blob copied; rec from o). */
void dw_cbuf_unit_copy(struct dw_cbuf *b, const struct dw_cache *k, const struct dw_ccu *o, struct dw_ccu *rec);

/* Finish the header (h, whose offsets are set; global strings go last), the
 * unit records' places and the checksum, and write the file dir/name
 * atomically (a temporary file renamed over it; dir created when missing),
 * unless the file would be over max bytes. Returns 0, or -1 with why filled. */
int dw_cbuf_write(struct dw_cbuf *b, struct dw_chdr *h, const char *dir, const char *name, uint64_t max,
		  char *why, size_t whysz);

void dw_cbuf_release(struct dw_cbuf *b);

/* ---- the cache directory's size limit (dw_evict.c) ---- */

#define DW_CACHE_MAX_DEFAULT (1024ull << 20)   /* 1 GiB, when $MPROF_CACHE_MAX is unset */

/* Remove the least recently used *.symidx files of dir (oldest mtime first,
 * never the one named keep) until its *.symidx files total at most max bytes;
 * temporary files of writers that died over an hour ago go too. Serialised
 * with other processes by an flock on dir/.lock. Returns the number of files
 * removed, or -1 with why filled. */
int dw_cache_evict(const char *dir, const char *keep, uint64_t max, char *why, size_t whysz);

/* Mark the cache file at path as used now (its mtime), for dw_cache_evict;
 * failures are ignored. */
void dw_cache_touch(const char *path);

/* Parse a size in bytes with an optional K, M, G or T suffix (powers of 1024)
 * into *out. Returns 0, or -1 when s is not such a size. */
int dw_cache_max_parse(const char *s, uint64_t *out);

/* ---- threads (dw_pool.c) and separate debug files (dw_inflate.c) ---- */

/* How many threads the symbolizer may use: requested when not 0, else
 * $MPROF_THREADS (a positive decimal number), else the CPUs it may run on (ncpu_usable);
 * at most 64. When MPROF_THREADS is set to something else (empty aside: "-1",
 * "0", "4x", a number past ULONG_MAX) and bad_env is not NULL, *bad_env
 * points at that value (the environment's string) for the caller to report;
 * else *bad_env is NULL. */
unsigned dw_pool_threads(unsigned requested, const char **bad_env);

/* Call fn(arg, i) once for every i in [0, n), on up to nthreads threads of
 * which the caller is one (1: all on the caller, in order). Returns when every
 * job has run. fn must write only what job i owns; a thread that cannot be
 * started only leaves its share to the others. */
void dw_pool_run(unsigned nthreads, size_t n, void (*fn)(void *arg, size_t i), void *arg);

/* A pool fed while it runs: jobs 0, 1, 2... of fn(arg, i) become runnable as
 * the caller publishes them, and run on nthreads - 1 helper threads started
 * here, and on the caller while it waits for one. Returns the pool (to end
 * with dw_pipe_end), or NULL when out of memory. At most max jobs. */
struct dw_pipe;
struct dw_pipe *dw_pipe_start(unsigned nthreads, size_t max, void (*fn)(void *arg, size_t i), void *arg);

/* Jobs [0, n) may run (n at most the pool's max; never fewer than before).
 * What they read must be written before this call. */
void dw_pipe_publish(struct dw_pipe *p, size_t n);

/* Return once published job i has run (at once for one not published), its
 * results visible to the caller; published jobs nobody has claimed run on
 * the caller meanwhile. */
void dw_pipe_wait(struct dw_pipe *p, size_t i);

/* Run or wait for every published job, stop the helpers and free p (NULL:
 * nothing). */
void dw_pipe_end(struct dw_pipe *p);

/* For a separate debug file open on fd whose DWARF sections are compressed
 * (SHF_COMPRESSED, zlib): a copy in an anonymous memory file where the
 * sections the symbolizer reads are already inflated (on up to nthreads
 * threads, one section per job) and the ones it never reads (location lists,
 * call frames, macros, pubnames) are marked SHT_NOBITS, so that libdw neither
 * inflates them nor inflates the others one by one. Returns the new
 * descriptor (the caller owns it; fd is left open and unchanged), or -1 when
 * the file has nothing to inflate or cannot be copied (then use fd as is:
 * libdw does what it always did, errors included). */
int dw_inflate_debug(int fd, unsigned nthreads);

/* Place a section of size bytes at the 16-byte-aligned end *copy_size of
 * dw_inflate_debug's copy: stores its offset in *off, grows *copy_size past
 * it and returns 0; returns -1 (nothing changed) when the sum would wrap a
 * size_t or, for an ELFCLASS32 file (is64 0), the copy would outgrow the
 * 32-bit offsets and sizes of its section headers. */
int dw_inflate_place(size_t *copy_size, uint64_t size, int is64, uint64_t *off);

#endif /* DW_PRIV_H */
