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

/* Interned strings: chunks of bytes plus an open-addressing set of pointers. */
struct dw_arena {
	struct dw_chunk *chunks; /* newest first */
	const char **slots;      /* hash set of interned strings, cap a power of two */
	size_t cap;
	size_t count;
};

/* The one copy of s (or of len bytes at p) in the arena, or NULL when out of
 * memory (or s is NULL). The string lives until dw_arena_release(). */
const char *dw_arena_intern(struct dw_arena *a, const char *s);
const char *dw_arena_intern_len(struct dw_arena *a, const char *p, size_t len);

/* Free every string of the arena and reset it to empty. */
void dw_arena_release(struct dw_arena *a);

/* A pointer -> pointer hash map (open addressing; NULL keys not allowed). */
struct dw_ptrmap {
	const void **keys;
	const void **vals;
	size_t cap, count;
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
	uint32_t first_range;   /* this scope's ranges: cu->ranges[first_range..+nranges) */
	uint32_t nranges;
};

/* One PC range [lo, hi) of a scope, in DWARF addresses (no load bias). */
struct dw_range {
	uint64_t lo, hi;
	uint32_t scope;
	uint32_t depth;
};

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
 * them (relative names joined to their directory). */
struct dw_lines {
	struct dw_lrow *rows;
	size_t nrows;
	char **files;         /* malloc'd names */
	size_t nfiles;
	const char **paths;   /* per file: the interned absolute path, filled on first use */
};

/* Decode the line table at offset off of .debug_line (DW_AT_stmt_list of a CU
 * whose DW_AT_comp_dir is comp_dir, or NULL, and whose addresses are cu_addrsz
 * bytes) into l, which must be zeroed.
 * Returns 0, or -1 (l released) when the table is malformed, uses something
 * this decoder does not read, or memory runs out: the caller then asks libdw.
 * Borrows secs' bytes, which must outlive l. */
int dw_lines_read(struct dw_lines *l, const struct dw_secs *secs, uint64_t off, const char *comp_dir,
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

/* Walk the CU's DIEs as dw_scope.c's libdw walk does. For each subprogram or
 * inlined subroutine with code, range(arg, lo, hi) is called for each of its
 * ranges and then scope(arg, die_offset, parent, inlined, nranges, origin), which
 * returns the new scope's index (the parent of the scopes below it) or -1 to
 * stop; origin is the offset of the DIE's DW_AT_abstract_origin when the DIE
 * has no name or linkage name of its own (its name is then the origin's), else
 * 0. Returns 0, or -1 on anything unexpected (the caller then falls back to
 * libdw) or when a callback failed. */
int dw_cuidx_scan(const struct dw_unit *u, const struct dw_secs *secs,
		  int (*scope)(void *, uint64_t, int32_t, int, int, uint64_t),
		  int (*range)(void *, uint64_t, uint64_t), void *arg);

/* Entry idx of .debug_addr for unit u into *out. Returns 0, or -1. */
int dw_addrx(const struct dw_unit *u, const struct dw_secs *secs, uint64_t idx, uint64_t *out);

struct dw_cuidx {
	Dwarf_Off off;              /* CU DIE offset: the key */
	Dwarf_Die cu;
	int lines_state;            /* 0 not read yet, 1 lines below valid, -1 ask libdw */
	int is_cxx;                 /* the CU is C++: -1 not known yet, 0, 1 */
	struct dw_lines lines;
	struct dw_scope *scopes;
	size_t nscopes;
	struct dw_range *ranges;    /* grouped per scope */
	struct dw_range *sorted;    /* same, sorted by lo, then outer before inner */
	size_t nranges;
};

/* CU indexes of one module, hashed by CU offset. */
struct dw_cutab {
	struct dw_cuidx **slots;
	size_t cap, count;
};

/* The index of cu (built on first use: from the bytes of the sections in secs
 * when not NULL and they can be read, else with libdw), or NULL when out of
 * memory. */
struct dw_cuidx *dw_cutab_get(struct dw_cutab *t, Dwarf_Die *cu, const struct dw_secs *secs);

/* The DIE of scope i of c, or NULL when libdw cannot find it. */
Dwarf_Die *dw_cuidx_die(struct dw_cuidx *c, int32_t i);

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

#endif /* DW_PRIV_H */
