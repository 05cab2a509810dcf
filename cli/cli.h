/* cli.h - what the parts of the command line tool share: parsed options, the
 * loaded profile (image, scan, names), and the output helpers. Private to cli/. */
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "coreparse.h"
#include "sym.h"
#include "cp_stats.h"
#include "tables.h"

/* Output formats (--format). Text and JSON print the reports; the others export
 * the live heap for another tool (export_*.c, issue 12). */
enum cli_format { FMT_TEXT, FMT_JSON, FMT_FOLDED, FMT_PPROF, FMT_MASSIF, FMT_HTML, FMT_SVG };

/* Reports a run can produce (--report=LIST). */
enum cli_report {
	REP_STACKS = 1u << 0,
	REP_TREE = 1u << 1,
	REP_LEAKS = 1u << 2,
	REP_BINS = 1u << 3,
	REP_DIRECT = 1u << 4,
	REP_GRAPH = 1u << 5,
	REP_TIMELINE = 1u << 6,
	REP_CORRUPTION = 1u << 7,
	REP_LOST = 1u << 8,
	REP_TYPES = 1u << 9,
	REP_TEMP = 1u << 10,
};

#define CLI_MAX_LIST 64

/* Everything the command line said. Strings point into argv. */
struct cli_options {
	const char *prog;          /* program or firmware ELF */
	const char *core;          /* ELF core, or NULL with --raw */
	const char *raw;           /* raw dump path */
	const char *raw2;          /* a second --raw: diff's NEW dump */
	uint64_t base;             /* --base */
	int have_base;
	unsigned ptr_size;         /* --ptr-size, 0: from the ELF */
	int endian;                /* --endian: -1 from the ELF, 0 little, 1 big */
	enum cli_format format;
	unsigned reports;          /* enum cli_report bits */
	int reports_given;
	const char *symbolizer;    /* "dw" or "gdb" */
	int no_cache;              /* --no-cache: no per-module symbol index files */
	long top;                  /* -1: default */
	double threshold;          /* percent, 0: none */
	int threshold_given;
	int blocks;                /* --blocks */
	const char *alloc_fns[CLI_MAX_LIST];
	size_t nalloc_fns;
	const char *ignore_fns[CLI_MAX_LIST];
	size_t nignore_fns;
	uint64_t addrs[CLI_MAX_LIST];   /* --addr */
	size_t naddrs;
	uint64_t why[CLI_MAX_LIST];     /* --why (issue 7) */
	size_t nwhy;
	uint64_t refs[CLI_MAX_LIST];    /* --refs (issue 7) */
	size_t nrefs;
	uint64_t task_sps[CLI_MAX_LIST]; /* --task-sp: switched-out tasks' saved stack pointers */
	uint64_t task_los[CLI_MAX_LIST]; /* --task-sp LO:SP: the stack's lowest byte */
	unsigned char task_has_lo[CLI_MAX_LIST]; /* 1: task_los[i] given (LO:SP form) */
	size_t ntask_sps;
	const char *sysroot;
	const char *debug_dirs[CLI_MAX_LIST + 1];
	size_t ndebug_dirs;
	unsigned threads;
	unsigned leak_depth;
	int call_sites;
	int quiet;
	const char *output;        /* -o FILE, NULL: standard output */
	int weight_blocks;         /* --weight blocks (folded, svg): count blocks, not bytes */
	int folded_lines;          /* --folded-lines: frames as "function (file:line)" */
};

/* A loaded profile: owns the image, the scan and the symbolizer. */
struct cli_profile {
	struct cp_image *img;
	struct cp_scan scan;
	struct symbolizer *sym;
	const struct sym_table *names;   /* owned by sym */
	struct an_input in;
	struct an_filter filter;
	const char *image_path;          /* core or raw dump path */
	struct cp_stats stats;           /* libheapann's statistics region (report_tables.c) */
	int have_stats;                  /* 1 when the image holds one */
};

/* Load o's image (core or raw dump), scan it, read its statistics region and name
 * its return addresses into *p. Returns 0, or -1 after printing the one-line error
 * (main.c). Release *p with cli_profile_release() either way. */
int cli_profile_load(const struct cli_options *o, struct cli_profile *p);
void cli_profile_release(struct cli_profile *p);

/* The target of a program or firmware ELF (target.c). */
#define CLI_MAX_TEXT 16
#define CLI_MAX_RO 256

struct cli_target {
	unsigned wsize;     /* 4 or 8 */
	int big_endian;
	uint16_t machine;   /* e_machine */
	int type;           /* e_type */
	uint64_t entry;     /* e_entry */
	struct { uint64_t start, end; } text[CLI_MAX_TEXT]; /* executable PT_LOADs */
	unsigned ntext;
	/* the allocated sections that are neither writable nor NOBITS (code,
	 * constants, unwind tables) as [start, end) pairs, sorted by address,
	 * overlapping or touching ones merged: never heap, though the kit's code
	 * holds the header magics as literals. At most CLI_MAX_RO runs: the
	 * sections past them are counted in ro_dropped (and scanned) */
	uint64_t ro[2 * CLI_MAX_RO];
	unsigned nro;
	unsigned ro_dropped;
};

/* Read the ELF header of path into *t. Returns 0, or -1 with err filled ("PATH:
 * problem") when it is missing, not an ELF, or a core rather than a program. */
int cli_target_read(const char *path, struct cli_target *t, struct cp_error *err);

/* Rebuild t->ro from the read-only sections of the ET_EXEC path (as
 * cli_target_read() lists them) whose bytes img holds equal the file's at the
 * same addresses (an ET_EXEC is not moved; bytes img does not hold are not
 * compared): those are the program's own code and constants, never heap,
 * whichever build was named. A section that differs (another build of the
 * program, memory written over) is left out, so scanned. Writes "NAME at 0xADDR"
 * of the first that differs into first (cap bytes, "" when none). Returns the
 * number of sections that differ, or -1 with err filled ("PATH: problem") when
 * path cannot be read; t->ro is left alone then. img is only read. */
int cli_target_ro_verify(const char *path, struct cli_target *t, const struct cp_image *img,
			 char *first, size_t cap, struct cp_error *err);

/* Why a core holds no annotated block, no damaged header and no statistics region
 * (the program ran without libheapann): fills msg with one line, "CORE: no block
 * annotated ...: CAUSE", the likely cause found in the core (an LD_PRELOAD that was
 * not loaded, a static program, or the list of causes), and returns -1; returns 0
 * with msg empty when the core has something of libheapann's (issue 13). A core
 * of a program that had libheapann loaded (or a static one) and lacks writable
 * memory or is truncated gets -1 too, with the missing memory and its likely
 * cause (coredump_filter, a size limit) in msg: nothing found there is no answer;
 * so does a core without a file list that lacks memory. */
int cli_core_diagnose_empty(const struct cli_profile *p, const char *prog, char *msg, size_t cap);

/* Why a raw dump gave no valid block, or why its stacks do not fit the ELF: fills
 * msg with one line ("DUMP: no valid block found: ...") naming the likely wrong
 * option (--endian, --ptr-size, --base, --elf) and returns -1 when the dump should
 * be rejected; returns 0 when it looks right. A warning that does not reject
 * (some return addresses outside the ELF's code) is put in msg with 0 returned. */
int cli_raw_diagnose(const struct cp_image *img, const struct cp_scan *scan,
		     const struct cli_target *t, const char *elf_path, char *msg, size_t cap);

/* ---- output helpers (out.c) ---- */

/* Format n with thousands separators into buf (at least 32 bytes); returns buf. */
const char *fmt_num(char *buf, uint64_t n);

/* The last path component of path (borrowed). */
const char *fmt_base(const char *path);

/* What follows a frame's file name: ":LINE" into buf (at least 16 bytes), or ""
 * for line 0 (no line: clang's line-0 rows, gdb's 'No line number information'),
 * as addr2line prints the file alone. Returns buf or a static "". */
const char *fmt_line(char *buf, unsigned line);

/* The e_type and e_machine of the ELF file at path (read from its header, either
 * class and byte order) into *type and *machine. Returns 0, or -1 when it cannot
 * be read or is no ELF file. */
int cli_elf_file_kind(const char *path, unsigned *type, unsigned *machine);

/* The name of ELF machine m ("x86-64", "ARM", ...; "unknown machine"): static. */
const char *cli_machine_name(uint16_t m);

/* Bytes of writable segments that img does not hold (blocks may hide there), and
 * in how many segments (into *nsegs unless NULL). Kernels and gcore leave
 * read-only file mappings (code) out of a core by design: those are not counted. */
uint64_t cli_missing_writable(const struct cp_image *img, size_t *nsegs);

/* Of the bytes of non-writable segments that img does not hold, those of no file
 * mapping in its NT_FILE list: PROT_NONE reservations and guard pages, which the
 * kernel does not dump (a 64 GiB reservation counted as "read-only file
 * mappings" misnamed them). 0 when img has no file list. */
uint64_t cli_missing_anon_ro(const struct cp_image *img);

/* How many live blocks (and requested bytes) the statistics region counts beyond
 * those the scan found: blocks in memory not dumped (MADV_DONTDUMP, a raw dump
 * that stops inside the heap), behind damaged or cut-off headers, or in memory
 * zeroed since. 0 and 0 without a region. Their stacks' frees are over-counted
 * by the tables. */
void cli_stats_shortfall(const struct cli_profile *p, uint64_t *blocks, uint64_t *bytes);

/* How many of st's clusters a stacks listing shows: the first --top (o->top, or
 * default_top when not given; 0 means all), cut further at --threshold percent. */
size_t cli_stacks_shown(const struct cli_options *o, const struct an_stacks *st, long default_top);

/* The hint of a listing's "... N more" line: which options show every row
 * (--top 0, and --threshold 0 when a --threshold was given, since --top 0
 * alone brings back none of the rows it left out). A static string. */
const char *cli_rest_hint(const struct cli_options *o);

/* JSON writer state: commas and nesting handled for the caller. */
struct json {
	FILE *f;
	int depth;
	int first[64];   /* no element written yet at this depth */
	int pending_key; /* a key was written; next value follows it */
};

/* Start writing one JSON document to f (borrowed: never closed here). The
 * _begin/_end calls open and close an object or array; json_key writes a key of
 * the open object and the next call writes its value; every other call writes
 * one value (after a key, or as an element of the open array). Output goes
 * straight to f: write errors show in ferror(f), which the caller checks. */
void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);   /* NULL writes null */
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_dbl(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
void json_hex(struct json *j, uint64_t v);       /* "0x..." string */
/* Key, then v (as json_hex / json_u64) when have is non-zero, else null. */
void json_opt_hex(struct json *j, const char *key, int have, uint64_t v);
void json_opt_u64(struct json *j, const char *key, int have, uint64_t v);

/* ---- reports ---- */

/* Print one symbolized frame in the text format "function (file:line) [module]". */
void report_frame_text(FILE *f, const struct an_frame *fr);

/* Write one frame as a JSON object. */
void report_frame_json(struct json *j, const struct an_frame *fr);

/* Write fr[0..n) as a JSON array of frame objects. */
void report_frames_json(struct json *j, const struct an_frame *fr, size_t n);

/* The stacks report (report_stacks.c). Returns 0 or -1 (out of memory). */
int report_stacks_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st);
int report_stacks_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st);

/* ---- corruption and --addr (issue 6: report_corruption.c, report_addr.c) ---- */
#include "corrupt.h"

/* ---- exports for other tools (issue 12: export_*.c) ----
 * Each writes the live heap of p (clusters st, corruption findings c) in one
 * format to f, which the caller opened (o->output or standard output) and closes.
 * Return 0, or -1 after printing a one-line error on stderr. */
int export_folded(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		  const struct an_stacks *st, const struct an_corrupt *c);
int export_svg(FILE *f, const struct cli_options *o, const struct cli_profile *p,
	       const struct an_stacks *st, const struct an_corrupt *c);
int export_pprof(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		 const struct an_stacks *st, const struct an_corrupt *c);
int export_massif(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		  const struct an_stacks *st, const struct an_corrupt *c);
int export_html(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		const struct an_stacks *st, const struct an_corrupt *c);

/* The frames of cp stack 'stack' with the allocator's frames stripped, one per line
 * after indent; "(no frames recorded)" when there are none; report_cut_text's
 * line after them when the stack is cut. */
void report_stack_text(FILE *f, const struct cli_profile *p, uint32_t stack, const char *indent);

/* The same frames as a JSON array (the value of the key "frames" already
 * written), then the key "cut" (report_cut_json) in the object the caller has
 * open. */
void report_stack_json(struct json *j, const struct cli_profile *p, uint32_t stack);

/* 1 when cp stack 'stack' went on past its frames: the capture stopped at
 * HEAPANN_DEPTH (cp_stack.cut), so the outer frames are not known. */
static inline int cli_stack_cut(const struct cli_profile *p, uint32_t stack)
{
	return stack < p->scan.nstacks && p->scan.stacks[stack].cut;
}

/* After the frames of a cut stack (nothing for a whole one), gdb's way: the line
 * "(More stack frames follow: cut at HEAPANN_DEPTH=N)" after indent. */
void report_cut_text(FILE *f, const struct cli_profile *p, uint32_t stack, const char *indent);

/* The key "cut" (true or false) in the JSON object the caller has open. */
void report_cut_json(struct json *j, const struct cli_profile *p, uint32_t stack);

/* Block b's identity as keys of the JSON object the caller has open: address,
 * header, size, seq, state ("live" or "freed"). */
void report_block_json_id(struct json *j, const struct cp_block *b);

/* The corruption report: broken guards, damaged headers and their suspects. c was
 * built by an_corrupt_build over p's scan. Return 0, or -1 when out of memory. */
int report_corruption_text(FILE *f, const struct cli_profile *p, const struct an_corrupt *c);
int report_corruption_json(struct json *j, const struct cli_profile *p, const struct an_corrupt *c);

/* What each --addr address is (o->addrs), with allocation stacks. Return 0, or -1
 * when out of memory. */
int report_addr_text(FILE *f, const struct cli_options *o, const struct cli_profile *p);
int report_addr_json(struct json *j, const struct cli_options *o, const struct cli_profile *p);

/* ---- reachability (issue 7: report_lost.c) ---- */

/* --report=lost: loss records (category x allocation stack, clusters of st),
 * largest first, and the totals per category. Return 0, or -1 out of memory. */
int report_lost_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_stacks *st);
int report_lost_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_stacks *st);

/* --task-sp [LO:]SP (o->task_sps, o->task_los): where each switched-out task's
 * stack starts, LO when given, else the start of the live block or the variable
 * of the ELF holding SP; the lost report does not read [that start, SP).
 * Returns 0 when every SP is in one, each LO is in the same one and not above
 * its SP, and no range [start, SP] holds another given SP (the plain form with
 * several stacks in one variable or block); else prints a one-line error naming
 * the first bad one and returns -1. */
int report_task_sp_check(const struct cli_options *o, const struct cli_profile *p);

/* --why ADDR (o->why): the chain of references from a root to each block, or the
 * lost block holding it. Return 0, or -1 out of memory. */
int report_why_text(FILE *f, const struct cli_options *o, const struct cli_profile *p);
int report_why_json(struct json *j, const struct cli_options *o, const struct cli_profile *p);

/* --refs ADDR (o->refs): every word of the image pointing into each block, and
 * where it lives. Return 0, or -1 out of memory. */
int report_refs_text(FILE *f, const struct cli_options *o, const struct cli_profile *p);
int report_refs_json(struct json *j, const struct cli_options *o, const struct cli_profile *p);

/* --report=types (report_types.c): the live blocks by C++ dynamic type, named
 * from the vtable pointer at each block's start (or after new[]'s array
 * cookie). Return 0, or -1 after printing why (out of memory). */
int report_types_text(FILE *f, const struct cli_options *o, const struct cli_profile *p);
int report_types_json(struct json *j, const struct cli_options *o, const struct cli_profile *p);

/* ---- symbol+offset for any address of the image (datasym.c) ---- */

/* One address named: the module holding it and the symbol (variable or function)
 * whose extent holds it. Strings are owned by the cli_datasym. */
struct cli_symref {
	const char *module;   /* module path, NULL when no module holds the address */
	uint64_t modoff;      /* address minus the module's load bias */
	const char *name;     /* symbol name, NULL when no symbol's extent holds it */
	uint64_t offset;      /* address minus the symbol's value */
	uint64_t start, size; /* the symbol's address and size */
	int is_func;          /* 1 for a function symbol */
	/* when no symbol's extent holds it (name NULL): the module's section that
	 * does, and the symbol before it in that section, as gdb's 'info symbol'
	 * names such an address */
	const char *section;  /* section name (".data", ".bss"), NULL when none */
	uint64_t sec_offset;  /* address minus the section's start */
	uint64_t gap_lo, gap_hi; /* [lo, hi): the span of the section around the
				  * address that no symbol covers */
	const char *before;   /* the nearest symbol starting before it in the
			       * section, NULL when none */
	uint64_t before_offset, before_size; /* address minus its value; its size */
	int before_is_func;
	int before_is_label;   /* a NOTYPE symbol or one of size 0: no extent to be past */
};

struct cli_datasym;

/* Open a naming session for the image of o (its core with o->prog as the main
 * module, or the firmware ELF o->prog of a raw dump). img (borrowed, may be NULL)
 * is the core's open image: its bytes are read through cp_image_data_path(), so a
 * compressed core is not decompressed again. Returns it, or NULL with err filled;
 * release with cli_datasym_free(). */
struct cli_datasym *cli_datasym_open(const struct cli_options *o, const struct cp_image *img,
				     struct cp_error *err);

/* Name addr into *out. Returns 0 when a module holds it (out->name may still be
 * NULL: then out->section, out->before and the gap say where it is), -1 when
 * none does (or d is NULL). Names are the session's. */
int cli_datasym(struct cli_datasym *d, uint64_t addr, struct cli_symref *out);

/* Where an address in a thread's static thread-local storage is. */
struct cli_tlsref {
	size_t thread;         /* index into img->threads */
	uint64_t tp;           /* that thread's thread pointer (the address is below) */
	const char *module;    /* the executable, when one of its variables holds it */
	const char *name;      /* that variable (its STT_TLS symbol), else NULL */
	uint64_t offset, size; /* address minus the variable's; the variable's size */
};

/* Name thread index t of img as the reports do: "thread N (tid T)", N = t + 1
 * (the tid left out when t is not one of img's threads). Prints to f. */
void cli_thread_text(FILE *f, const struct cp_image *img, int t);

/* Is addr in the static TLS of one of img's threads (a core's; on x86-64, where
 * an_thread_pointer() is known)? glibc puts the static TLS blocks right below
 * the thread pointer, the executable's first, at tp - round_up(p_memsz, p_align):
 * the span counted runs from the lowest static block the thread's DTV lists
 * (tp + 8) to tp, in tp's own mapping; without the DTV, the executable's block
 * alone. The executable's variables are named. Returns 1 with *out filled
 * (names are the session's), 0 when not (or d is NULL). */
int cli_datasym_tls(struct cli_datasym *d, const struct cp_image *img, uint64_t addr,
		    struct cli_tlsref *out);

/* Release d. NULL is accepted. */
void cli_datasym_free(struct cli_datasym *d);

/* A session opened on first use: the first call (*tried 0) opens one into *ds
 * and, when there is none, writes "mprof-core: note: no symbols for WHAT: why"
 * (unless o->quiet); every call returns *ds (NULL when none). The caller owns
 * *ds (cli_datasym_free). */
struct cli_datasym *cli_datasym_lazy(const struct cli_options *o, const struct cp_image *img,
				     struct cli_datasym **ds, int *tried, const char *what);

/* One block's C++ dynamic type at a time (--addr), named as --report=types
 * names it. cli_typer_new borrows ds (a naming session of p's image, which
 * must outlive the typer) and returns NULL when ds is NULL or out of memory;
 * cli_typer_block returns the type of live block b ("Circle", "Circle[]"),
 * owned by t until cli_typer_free, or NULL when it has none (an untyped or
 * freed block, t NULL, out of memory); cli_typer_free accepts NULL. */
struct cli_typer;
struct cli_typer *cli_typer_new(const struct cli_profile *p, struct cli_datasym *ds);
const char *cli_typer_block(struct cli_typer *t, const struct cp_block *b);
void cli_typer_free(struct cli_typer *t);

/* ---- mprof's tables, Massif's tree, the timeline (report_tables.c, report_tree.c,
 * types.c) ---- */

/* Read the statistics region of p->img into p->stats, interning its stacks into
 * p->scan (call after the scan, before symbolizing). Returns 0 whether or not
 * there is one (a damaged region is noted on stderr unless -q), -1 after printing
 * the error when out of memory. p->stats is released by cp_stats_free(). */
int cli_stats_load(const struct cli_options *o, struct cli_profile *p);

/* Print the reports among tree, leaks, bins, direct, graph, timeline that
 * o->reports asks for, built from the statistics when p has them, else from the
 * live blocks. Returns 0 or -1 (out of memory). */
int report_tables_text(FILE *f, const struct cli_options *o, const struct cli_profile *p);
int report_tables_json(struct json *j, const struct cli_options *o, const struct cli_profile *p);

/* Massif's tree of u's kept bytes (threshold: --threshold, default 1%). */
int report_tree_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u);
int report_tree_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		     const struct an_usage *u);

/* Struct, union and class names by byte size from the DWARF of elf_path, or NULL
 * (no file, no debug info, out of memory). Free with cli_types_free(). */
struct cli_types *cli_types_load(const char *elf_path);
/* The names of size 'size' joined by ", " into buf ("" for none or t NULL). */
const char *cli_types_names(const struct cli_types *t, uint64_t size, char *buf, size_t cap);
/* The names of size 'size' as JSON strings (inside an array the caller opened). */
void cli_types_json(const struct cli_types *t, uint64_t size, struct json *j);
void cli_types_free(struct cli_types *t);

/* ---- folded stacks: the key of --format folded, svg and diff (fold.c) ---- */

/* A growing string; s is NUL-terminated once anything was added. After a failed
 * allocation oom is set and further adds do nothing. Free with cli_buf_release(). */
struct cli_buf {
	char *s;
	size_t len, cap;
	int oom;
};
int cli_buf_add(struct cli_buf *b, const char *s, size_t n);   /* 0, or -1 out of memory */
int cli_buf_str(struct cli_buf *b, const char *s);
void cli_buf_release(struct cli_buf *b);

/* How a frame is written: the function name (an unnamed frame: module+0xOFFSET,
 * or 0xADDR without a module), with ';' written as ':' and control characters as
 * '?'; FOLD_LINES appends " (file:line)", FOLD_SPLIT "\x1f" "file:line" (internal:
 * the SVG splits name and place there); without a line, "file" alone. */
enum cli_fold_mode { FOLD_NAMES, FOLD_LINES, FOLD_SPLIT };

/* The text of a stack without frames. */
#define CLI_FOLD_NO_FRAMES "[no frames recorded]"
/* The label of the tree's cut node (an_tnode.cut) in --report=tree and massif. */
#define CLI_TREE_CUT "(More stack frames follow: cut at HEAPANN_DEPTH)"
/* The root frame of a stack cut at HEAPANN_DEPTH (its outer frames unknown). */
#define CLI_FOLD_CUT "[more frames: cut at HEAPANN_DEPTH]"

/* One folded stack. key is owned by the entry. */
struct cli_fold_entry {
	char *key;              /* frames root first, joined by ';' */
	uint64_t bytes, blocks; /* live */
	uint64_t allocs, frees; /* diff: from the statistics region */
	uint64_t unrecorded;    /* diff: live blocks of stacks the region's full table
				 * did not record (their allocs and frees are not known) */
	uint32_t stack, skip;   /* a cp stack folding to key, and its allocator frames */
};

/* Folded stacks, sorted by cli_fold_cmp once built. Owns v and its keys. */
struct cli_fold {
	struct cli_fold_entry *v;
	size_t n, cap;
};

/* Append fr's text (see enum cli_fold_mode) to b. */
void cli_fold_frame(struct cli_buf *b, const struct an_frame *fr, enum cli_fold_mode mode);

/* The folded text of cp stack 'stack' after 'skip' allocator frames into b (b->s;
 * CLI_FOLD_NO_FRAMES when none are left). fr is scratch room from
 * cli_fold_frames_alloc() (the caller frees it). Returns 0, or -1 out of memory. */
int cli_fold_key(const struct cli_profile *p, uint32_t stack, uint32_t skip,
		 enum cli_fold_mode mode, struct an_frame *fr, struct cli_buf *b);
struct an_frame *cli_fold_frames_alloc(void);

/* strcmp, except that ';' sorts before any other byte (a frame's callees stay
 * right after it). */
int cli_fold_cmp(const char *a, const char *b);

/* The clusters of st folded into *out (zeroed first): one entry per distinct text
 * with the live bytes and blocks of every cluster folding to it, sorted by
 * cli_fold_cmp. Returns 0, or -1 out of memory (*out released). */
int cli_fold_build(const struct cli_profile *p, const struct an_stacks *st,
		   enum cli_fold_mode mode, struct cli_fold *out);

/* Append an entry with a copy of key and zero counts; cli_fold_sort() sorts the
 * entries and merges equal keys (adding their counts). push returns 0 or -1. */
int cli_fold_push(struct cli_fold *f, const char *key, uint32_t stack, uint32_t skip);
void cli_fold_sort(struct cli_fold *f);

/* The entry of key in sorted f, or NULL (borrowed). */
struct cli_fold_entry *cli_fold_find(const struct cli_fold *f, const char *key);
void cli_fold_release(struct cli_fold *f);

/* On stderr (unless -q): what an export of p leaves out, damaged headers and
 * --ignore-fn blocks. what names the export ("--format folded"). */
void cli_export_note_skipped(const struct cli_options *o, const struct cli_profile *p,
			     const struct an_stacks *st, const char *what);

/* ---- mprof-core diff (diff.c) ---- */

/* Parse the command line into *o (main.c; exits with status 2 on bad usage). With
 * third NULL the positional arguments are PROG CORE; otherwise PROG OLD NEW, NEW
 * stored in *third and OLD in o->core. */
void cli_parse_args(int argc, char **argv, struct cli_options *o, const char **third);

/* mprof-core diff [OPTIONS] PROG OLD NEW (argv[1] is "diff"). Returns the exit
 * status: 0, 1 bad input (different builds, unreadable cores), 2 bad usage. */
int cli_diff_main(int argc, char **argv);

#endif
