/* cli.h - what the parts of the command line tool share: parsed options, the
 * loaded profile (image, scan, names), and the output helpers. Private to cli/. */
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "coreparse.h"
#include "sym.h"

enum cli_format { FMT_TEXT, FMT_JSON };

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
};

#define CLI_MAX_LIST 64

/* Everything the command line said. Strings point into argv. */
struct cli_options {
	const char *prog;          /* program or firmware ELF */
	const char *core;          /* ELF core, or NULL with --raw */
	const char *raw;           /* raw dump path */
	uint64_t base;             /* --base */
	int have_base;
	unsigned ptr_size;         /* --ptr-size, 0: from the ELF */
	int endian;                /* --endian: -1 from the ELF, 0 little, 1 big */
	enum cli_format format;
	unsigned reports;          /* enum cli_report bits */
	int reports_given;
	const char *symbolizer;    /* "dw" or "gdb" */
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
	const char *sysroot;
	const char *debug_dirs[CLI_MAX_LIST + 1];
	size_t ndebug_dirs;
	unsigned threads;
	unsigned leak_depth;
	int call_sites;
	int quiet;
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
};

/* The target of a program or firmware ELF (target.c). */
struct cli_target {
	unsigned wsize;     /* 4 or 8 */
	int big_endian;
	uint16_t machine;   /* e_machine */
	int type;           /* e_type */
};

/* Read the ELF header of path into *t. Returns 0, or -1 with err filled ("PATH:
 * problem") when it is missing, not an ELF, or a core rather than a program. */
int cli_target_read(const char *path, struct cli_target *t, struct cp_error *err);

/* ---- output helpers (out.c) ---- */

/* Format n with thousands separators into buf (at least 32 bytes); returns buf. */
const char *fmt_num(char *buf, uint64_t n);

/* The last path component of path (borrowed). */
const char *fmt_base(const char *path);

/* JSON writer state: commas and nesting handled for the caller. */
struct json {
	FILE *f;
	int depth;
	int first[64];   /* no element written yet at this depth */
	int pending_key; /* a key was written; next value follows it */
};

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

/* ---- reports ---- */

/* Print one symbolized frame in the text format "function (file:line) [module]". */
void report_frame_text(FILE *f, const struct an_frame *fr);

/* Write one frame as a JSON object. */
void report_frame_json(struct json *j, const struct an_frame *fr);

/* The stacks report (report_stacks.c). Returns 0 or -1 (out of memory). */
int report_stacks_text(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st);
int report_stacks_json(struct json *j, const struct cli_options *o, const struct cli_profile *p,
		       const struct an_stacks *st);

#endif
