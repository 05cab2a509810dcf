/* main.c - mprof-core: read a core or a raw dump, find every annotated block,
 * name the stacks, and print the reports. The only place that prints to the user
 * or decides the exit status: 0 fine, 1 bad input, 2 bad usage, 3 corruption found. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mi.h"

#define EXIT_BADINPUT 1
#define EXIT_USAGE 2
#define EXIT_CORRUPTION 3

#ifndef HA_PACKAGE_VERSION
#define HA_PACKAGE_VERSION "unknown"   /* the Makefile passes VERSION */
#endif

static const char usage_text[] =
"usage: mprof-core [OPTIONS] PROG CORE\n"
"       mprof-core [OPTIONS] --raw DUMP --elf ELF --base ADDR\n"
"       mprof-core snapshot [--prog FILE] PID [-o FILE] [--no-report] [OPTIONS]\n"
"       mprof-core diff [OPTIONS] PROG OLD NEW\n"
"       mprof-core diff [OPTIONS] --elf ELF --base ADDR --raw OLD NEW\n"
"Find every block annotated by libheapann in a core or a raw memory dump and\n"
"report them by allocation stack.\n"
"CORE and DUMP may be compressed with zstd, gzip or xz (decompressed under $TMPDIR).\n"
"\n"
"input:\n"
"  --raw DUMP          a raw memory dump (with --elf and --base)\n"
"  --elf ELF           the program or firmware ELF of a raw dump\n"
"  --base ADDR         address of the dump's first byte\n"
"  --ptr-size 4|8      override the ELF's pointer size\n"
"  --endian little|big override the ELF's byte order\n"
"  --sysroot DIR       look for the core's modules under DIR\n"
"  --debug-dir DIR     another place for separate debug info (repeatable)\n"
"  --symbolizer dw|gdb name frames with libdw (default) or gdb's MI\n"
"  --no-cache          libdw: neither read nor write the per-module index cache\n"
"                      ($MPROF_CACHE_DIR, else $XDG_CACHE_HOME/mprof-core, else\n"
"                      ~/.cache/mprof-core; MPROF_CACHE_DIR=off disables it too)\n"
"                      (at most $MPROF_CACHE_MAX bytes, default 1G: least\n"
"                      recently used files removed)\n"
"  --threads N         scan and symbolize with N threads (default: all usable cores;\n"
"                      the symbolizer alone: $MPROF_THREADS if set)\n"
"reports:\n"
"  --report LIST       comma-separated: stacks (default), corruption (also by\n"
"                      default whenever some is found), tree, leaks, bins,\n"
"                      direct, graph, timeline, temporary (blocks freed before\n"
"                      their thread allocated again), lost, types (C++\n"
"                      dynamic types by vtable pointer), all\n"
"  --leak-depth N      leaks: partial call paths of N functions (default 5)\n"
"  --call-sites        leaks: tell call sites in one function apart\n"
"  --addr ADDR         what ADDR is: block, header, guard, freed, heap between\n"
"                      blocks, module symbol, thread stack (repeatable; alone\n"
"                      it replaces the default stacks report)\n"
"  --why ADDR          lost: the references from a root that keep the block at\n"
"                      ADDR alive, or the lost block holding it (repeatable)\n"
"  --refs ADDR         lost: every word pointing into the block at ADDR, and\n"
"                      where it lives (repeatable)\n"
"  --task-sp [LO:]SP   lost: the saved stack pointer of a switched-out RTOS task:\n"
"                      its stack below SP (down to LO, else to the start of the\n"
"                      variable or block holding SP) is dead, not read\n"
"                      (repeatable; LO:SP where stacks share one variable)\n"
"  --format FMT        text (default), json, or an export for another tool:\n"
"                      folded, pprof, massif, html, svg\n"
"  -o, --output FILE   write the report or export to FILE, not standard output\n"
"  --weight bytes|blocks  folded, svg: what a stack weighs (default bytes)\n"
"  --folded-lines      folded: frames as \"function (file:line)\"\n"
"  --format html       one self-contained page (no network): summary, icicle,\n"
"                      timeline, --top stacks (default 50), corruption; the\n"
"                      lost summary only with --report=lost\n"
"  --top N             show the N largest stacks (text default 25; 0: all)\n"
"  --threshold PCT     leave out stacks below PCT percent of the bytes\n"
"                      (massif: tree entries below PCT of heap + extra, default 1%)\n"
"  --alloc-fn NAME     treat NAME as part of the allocator (repeatable)\n"
"  --ignore-fn NAME    leave out blocks allocated under NAME (repeatable)\n"
"  --blocks            JSON: list every live block\n"
"  -q, --quiet         no notes on stderr\n"
"  -h, --help          this text\n"
"  --version           the version\n"
"snapshot: attach gdb to the running process PID, write its core to FILE\n"
"  (default core.PID; FILE.zst: zstd-compressed), detach (the process goes\n"
"  on), then report the core;\n"
"  --no-report only writes it; --prog FILE: the program file, when the\n"
"  process's own was rebuilt or deleted since it started.\n"
"diff: the live heap of two cores of one build (two moments of one run), or of\n"
"  two raw dumps of one firmware, per stack, largest growth first; --format json\n"
"  or folded (\"stack OLD NEW\");\n"
"  allocations and frees in between when both have the statistics region.\n"
"exit status: 0 done, 1 bad input (also: a core without any annotated block),\n"
"  2 bad usage, 3 heap corruption found\n";

static void usage_error(const char *fmt, const char *arg)
{
	fputs("mprof-core: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see mprof-core --help)\n", stderr);
	exit(EXIT_USAGE);
}

static uint64_t parse_u64(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	/* strtoull takes "-1" as the largest value: a negative number is an error */
	if (s[strspn(s, " \t")] == '-')
		usage_error("bad number for %s", opt);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end) {
		/* an address copied without its 0x (from /proc/PID/maps, a hex dump) */
		if (!errno && *s && strspn(s, "0123456789abcdefABCDEF") == strlen(s) &&
		    (!strcmp(opt, "--addr") || !strcmp(opt, "--base") || !strcmp(opt, "--why") ||
		     !strcmp(opt, "--refs"))) {
			fprintf(stderr, "mprof-core: bad number for %s: %s is hexadecimal: write 0x%s "
				"(see mprof-core --help)\n", opt, s, s);
			exit(EXIT_USAGE);
		}
		usage_error("bad number for %s", opt);
	}
	return v;
}

/* -o naming one of the inputs would truncate it before it is read (the core,
 * often the only one there is): a usage error. a, b, c: the inputs (c may be NULL).
 * Only a regular file can be truncated: -o /dev/null (or a terminal) is never an
 * input, even when an input names the same device (heapann's option check). */
static void output_check(const char *out, const char *a, const char *b, const char *c)
{
	const char *in[3] = { a, b, c };
	struct stat so, si;

	if (!out || stat(out, &so) != 0 || !S_ISREG(so.st_mode))
		return;
	for (int i = 0; i < 3; i++)
		if (in[i] && stat(in[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			usage_error("-o %s is an input of this run: it would be overwritten", out);
}

static unsigned parse_reports(const char *list)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "stacks", REP_STACKS },
		{ "corruption", REP_CORRUPTION },
		{ "lost", REP_LOST },
		{ "types", REP_TYPES },
		/* issue 5 and the tree of issue 3 (report_tables.c, report_tree.c) */
		{ "tree", REP_TREE }, { "leaks", REP_LEAKS }, { "bins", REP_BINS },
		{ "direct", REP_DIRECT }, { "graph", REP_GRAPH }, { "timeline", REP_TIMELINE },
		{ "temporary", REP_TEMP },
	};
	unsigned bits = 0;
	const char *p = list;

	/* an empty list selected nothing: the header alone, exit 0, as if it were a report */
	if (!*p)
		usage_error("unknown report '%s'", "");
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i;

		if (len == 3 && !strncmp(p, "all", 3)) {
			for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				bits |= names[i].bit;
		} else {
			for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
					break;
			if (i == sizeof(names) / sizeof(names[0])) {
				char bad[64];

				snprintf(bad, sizeof(bad), "%.*s", (int)(len < 60 ? len : 60), p);
				usage_error("unknown report '%s'", bad);
			}
			bits |= names[i].bit;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return bits;
}

enum {
	OPT_RAW = 256, OPT_ELF, OPT_BASE, OPT_PTR, OPT_ENDIAN, OPT_SYSROOT, OPT_DEBUGDIR,
	OPT_SYMBOLIZER, OPT_THREADS, OPT_REPORT, OPT_FORMAT, OPT_TOP, OPT_THRESHOLD,
	OPT_ALLOCFN, OPT_IGNOREFN, OPT_BLOCKS,
	OPT_ADDR,
	OPT_WHY, OPT_REFS, OPT_TASKSP,
	OPT_LEAKDEPTH, OPT_CALLSITES,
	OPT_WEIGHT, OPT_FOLDEDLINES,
	OPT_VERSION,
	OPT_NOCACHE,
};

/* diff compares the live stacks of two images: the options of the other
 * reports (and --blocks, --threshold) would be ignored there, so they are
 * refused (exit 2) rather than dropped without a word. */
static void diff_options_check(const struct cli_options *o)
{
	const char *bad = o->reports_given ? "--report" : o->threshold_given ? "--threshold" :
			  o->blocks ? "--blocks" : o->leak_depth ? "--leak-depth" :
			  o->call_sites ? "--call-sites" : o->naddrs ? "--addr" : o->nwhy ? "--why" :
			  o->nrefs ? "--refs" : o->ntask_sps ? "--task-sp" : NULL;

	if (bad)
		usage_error("diff does not take %s: it compares the stacks of two images "
			    "(--top, --weight, --folded-lines, --alloc-fn, --ignore-fn apply)", bad);
}

void cli_parse_args(int argc, char **argv, struct cli_options *o, const char **third)
{
	static const struct option longopts[] = {
		{ "raw", required_argument, 0, OPT_RAW },
		{ "elf", required_argument, 0, OPT_ELF },
		{ "base", required_argument, 0, OPT_BASE },
		{ "ptr-size", required_argument, 0, OPT_PTR },
		{ "endian", required_argument, 0, OPT_ENDIAN },
		{ "sysroot", required_argument, 0, OPT_SYSROOT },
		{ "debug-dir", required_argument, 0, OPT_DEBUGDIR },
		{ "symbolizer", required_argument, 0, OPT_SYMBOLIZER },
		{ "threads", required_argument, 0, OPT_THREADS },
		{ "report", required_argument, 0, OPT_REPORT },
		{ "format", required_argument, 0, OPT_FORMAT },
		{ "top", required_argument, 0, OPT_TOP },
		{ "threshold", required_argument, 0, OPT_THRESHOLD },
		{ "alloc-fn", required_argument, 0, OPT_ALLOCFN },
		{ "ignore-fn", required_argument, 0, OPT_IGNOREFN },
		{ "blocks", no_argument, 0, OPT_BLOCKS },
		{ "addr", required_argument, 0, OPT_ADDR },
		{ "why", required_argument, 0, OPT_WHY },
		{ "refs", required_argument, 0, OPT_REFS },
		{ "task-sp", required_argument, 0, OPT_TASKSP },
		{ "leak-depth", required_argument, 0, OPT_LEAKDEPTH },
		{ "call-sites", no_argument, 0, OPT_CALLSITES },
		{ "output", required_argument, 0, 'o' },
		{ "weight", required_argument, 0, OPT_WEIGHT },
		{ "folded-lines", no_argument, 0, OPT_FOLDEDLINES },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, OPT_VERSION },
		{ "no-cache", no_argument, 0, OPT_NOCACHE },
		{ 0, 0, 0, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->endian = -1;
	o->top = -1;
	o->symbolizer = "dw";
	o->reports = REP_STACKS;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qho:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_RAW:
			if (o->raw && o->raw2)
				usage_error("%s", "--raw given three times: one image, or two for diff");
			*(o->raw ? &o->raw2 : &o->raw) = optarg;
			break;
		case OPT_ELF: o->prog = optarg; break;
		case OPT_BASE: o->base = parse_u64(optarg, "--base"); o->have_base = 1; break;
		case OPT_PTR: {
			/* compared before the cast: 4294967300 is not 4 */
			uint64_t v = parse_u64(optarg, "--ptr-size");

			if (v != 4 && v != 8)
				usage_error("--ptr-size must be 4 or 8, not %s", optarg);
			o->ptr_size = (unsigned)v;
			break;
		}
		case OPT_ENDIAN:
			if (!strcmp(optarg, "little"))
				o->endian = 0;
			else if (!strcmp(optarg, "big"))
				o->endian = 1;
			else
				usage_error("--endian must be little or big, not %s", optarg);
			break;
		case OPT_SYSROOT: o->sysroot = optarg; break;
		case OPT_DEBUGDIR:
			if (o->ndebug_dirs == CLI_MAX_LIST)
				usage_error("too many %s", "--debug-dir");
			o->debug_dirs[o->ndebug_dirs++] = optarg;
			break;
		case OPT_SYMBOLIZER:
			if (strcmp(optarg, "dw") && strcmp(optarg, "gdb"))
				usage_error("--symbolizer must be dw or gdb, not %s", optarg);
			o->symbolizer = optarg;
			break;
		case OPT_THREADS: {
			uint64_t v = parse_u64(optarg, "--threads");

			/* more than the scan can use is all it can use, not v mod 2^32 */
			o->threads = v > UINT_MAX ? UINT_MAX : (unsigned)v;
			break;
		}
		case OPT_NOCACHE: o->no_cache = 1; break;
		case OPT_REPORT:
			o->reports = parse_reports(optarg);
			o->reports_given = 1;
			break;
		case OPT_FORMAT: {
			static const char *const fmts[] = {
				[FMT_TEXT] = "text", [FMT_JSON] = "json", [FMT_FOLDED] = "folded",
				[FMT_PPROF] = "pprof", [FMT_MASSIF] = "massif", [FMT_HTML] = "html",
				[FMT_SVG] = "svg",
			};
			size_t i;

			for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
				if (!strcmp(optarg, fmts[i]))
					break;
			if (i == sizeof(fmts) / sizeof(fmts[0]))
				usage_error("--format must be text, json, folded, pprof, massif, html or svg, not %s",
					    optarg);
			o->format = (enum cli_format)i;
			break;
		}
		case 'o': o->output = optarg; break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "bytes"))
				o->weight_blocks = 0;
			else if (!strcmp(optarg, "blocks"))
				o->weight_blocks = 1;
			else
				usage_error("--weight must be bytes or blocks, not %s", optarg);
			break;
		case OPT_FOLDEDLINES: o->folded_lines = 1; break;
		case OPT_TOP: {
			uint64_t v = parse_u64(optarg, "--top");

			/* a huge N is every stack; cast, 2^63 and up read as negative: the default 25 */
			o->top = v > LONG_MAX ? LONG_MAX : (long)v;
			break;
		}
		case OPT_THRESHOLD: {
			char *end;

			o->threshold = strtod(optarg, &end);
			if (end == optarg || *end || o->threshold < 0 || o->threshold > 100)
				usage_error("--threshold takes a percentage, not %s", optarg);
			o->threshold_given = 1;
			break;
		}
		case OPT_ALLOCFN:
			if (o->nalloc_fns == CLI_MAX_LIST)
				usage_error("too many %s", "--alloc-fn");
			o->alloc_fns[o->nalloc_fns++] = optarg;
			break;
		case OPT_IGNOREFN:
			if (o->nignore_fns == CLI_MAX_LIST)
				usage_error("too many %s", "--ignore-fn");
			o->ignore_fns[o->nignore_fns++] = optarg;
			break;
		case OPT_BLOCKS: o->blocks = 1; break;
		case OPT_ADDR:   /* issue 6: what an address is */
			if (o->naddrs == CLI_MAX_LIST)
				usage_error("too many %s", "--addr");
			o->addrs[o->naddrs++] = parse_u64(optarg, "--addr");
			break;
		case OPT_WHY:    /* issue 7: what keeps a block alive */
			if (o->nwhy == CLI_MAX_LIST)
				usage_error("too many %s", "--why");
			o->why[o->nwhy++] = parse_u64(optarg, "--why");
			break;
		case OPT_REFS:   /* issue 7: every word pointing into a block */
			if (o->nrefs == CLI_MAX_LIST)
				usage_error("too many %s", "--refs");
			o->refs[o->nrefs++] = parse_u64(optarg, "--refs");
			break;
		case OPT_TASKSP:   /* rtos9: a task's dead stack is no root */
			if (o->ntask_sps == CLI_MAX_LIST)
				usage_error("too many %s", "--task-sp");
			{
				/* LO:SP: the stack's low end given, for stacks
				 * that share one variable or block */
				const char *colon = strchr(optarg, ':');
				char lo[64];

				o->task_has_lo[o->ntask_sps] = colon != NULL;
				if (colon) {
					if ((size_t)(colon - optarg) >= sizeof(lo))
						usage_error("bad number for %s", "--task-sp");
					memcpy(lo, optarg, (size_t)(colon - optarg));
					lo[colon - optarg] = 0;
					o->task_los[o->ntask_sps] = parse_u64(lo, "--task-sp");
				}
				o->task_sps[o->ntask_sps++] = parse_u64(colon ? colon + 1 : optarg, "--task-sp");
			}
			break;
		case OPT_LEAKDEPTH: {   /* issue 5: the leak table */
			uint64_t v = parse_u64(optarg, "--leak-depth");

			if (v < 1 || v > 256)   /* before the cast: 4294967297 is not 1 */
				usage_error("--leak-depth takes 1 to 256, not %s", optarg);
			o->leak_depth = (unsigned)v;
			break;
		}
		case OPT_CALLSITES: o->call_sites = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case OPT_VERSION: printf("mprof-core %s\n", HA_PACKAGE_VERSION); exit(0);
		default: usage_error("bad option or missing argument: %s", argv[optind - 1]);
		}
	}
	if (third)
		diff_options_check(o);
	if (o->raw) {
		if (!o->prog)
			usage_error("%s needs --elf ELF", "--raw");
		if (!o->have_base)
			usage_error("%s needs --base ADDR", "--raw");
		/* diff of two dumps of one firmware: --raw OLD NEW, or --raw OLD
		 * --raw NEW; both at --base, read as --elf's */
		if (third && !o->raw2 && optind < argc)
			o->raw2 = argv[optind++];
		if (third && !o->raw2)
			usage_error("%s", "diff of raw dumps needs two: mprof-core diff --elf ELF "
				    "--base ADDR --raw OLD NEW");
		if (!third && o->raw2)
			usage_error("%s", "--raw given twice: one image (diff compares two)");
		if (optind != argc)
			usage_error("unexpected argument '%s' with --raw", argv[optind]);
		if (third)
			*third = o->raw2;
		output_check(o->output, o->raw, o->prog, o->raw2);
		return;
	}
	if (third) {   /* diff PROG OLD NEW */
		if (argc - optind != 3)
			usage_error("%s needs PROG OLD NEW", "diff");
		*third = argv[optind + 2];
	} else if (argc - optind == 4 && !strcmp(argv[optind], "diff")) {
		/* options before the command: getopt moved 'diff' among the operands */
		usage_error("%s", "options go after diff: mprof-core diff [OPTIONS] PROG OLD NEW");
	} else if (argc - optind == 2 && !strcmp(argv[optind], "snapshot") && access("snapshot", F_OK) != 0) {
		usage_error("%s", "options go after snapshot: mprof-core snapshot [OPTIONS] PID");
	} else if (argc - optind != 2)
		usage_error("%s", argc - optind < 2 ? "need PROG and CORE" : "too many arguments");
	o->prog = argv[optind];
	o->core = argv[optind + 1];
	output_check(o->output, o->prog, o->core, third ? *third : NULL);
}

/* Progress of a long scan on a terminal: percent of the dumped bytes, in place. */
static void scan_progress(void *arg, uint64_t done, uint64_t total)
{
	(void)arg;
	if (total)
		fprintf(stderr, "\rscanning: %3u%% of %" PRIu64 " MiB", (unsigned)(100 * done / total),
			total >> 20);
}

/* A damaged core's PT_LOAD that claims more than the address space (issue 14):
 * coreparse cut it to what the file holds; say so, with the size claimed. */
static void note_bogus_segments(const struct cp_image *img, const char *path)
{
	static const char units[][4] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t v = img->bogus_memsz;
	unsigned u = 0;

	while (u < 6 && v >= 1024) {
		v = v / 1024 + (v % 1024 >= 512);
		u++;
	}
	fprintf(stderr, "mprof-core: %s: segment at 0x%" PRIx64 " claims %" PRIu64 " %s (p_memsz), more "
		"than the address space holds: only the bytes the file holds are read", path,
		img->bogus_vaddr, v, units[u]);
	if (img->nbogus_segs > 1)
		fprintf(stderr, " (and %zu more such segments)", img->nbogus_segs - 1);
	fputc('\n', stderr);
}

/* 1 when path is an ELF core file. */
static int elf_file_is_core(const char *path)
{
	unsigned type, machine;

	return cli_elf_file_kind(path, &type, &machine) == 0 && type == ET_CORE;
}

/* qsort order of pointers to unload records: the latest unload (highest SEQ)
 * first, records of one dlclose in table order. */
static int cli_unload_cmp(const void *a, const void *b)
{
	const struct cp_unloaded *x = *(const struct cp_unloaded *const *)a;
	const struct cp_unloaded *y = *(const struct cp_unloaded *const *)b;

	if (x->seq != y->seq)
		return x->seq > y->seq ? -1 : 1;
	return x < y ? -1 : x > y;
}

int cli_profile_load(const struct cli_options *o, struct cli_profile *p)
{
	struct cp_error cerr = { 0 };
	struct sym_error serr = { 0 };
	struct sym_options so = { 0 };
	struct cli_target t;

	memset(p, 0, sizeof(*p));
	/* a mistyped --debug-dir was ignored without a word: names stayed missing
	 * and nothing said why (--sysroot is refused the same way) */
	for (size_t i = 0; i < o->ndebug_dirs; i++) {
		struct stat sb;

		if (stat(o->debug_dirs[i], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "mprof-core: %s: --debug-dir is not a directory\n", o->debug_dirs[i]);
			return -1;
		}
	}
	if (o->raw) {
		if (cli_target_read(o->prog, &t, &cerr) < 0)
			goto cerror;
		/* a core given as a raw dump read as memory at --base: "12 headers
		 * fail their check word ... is --base right?" named the wrong cause */
		if (elf_file_is_core(o->raw)) {
			fprintf(stderr, "mprof-core: %s: an ELF core file, not a raw dump: give it as "
				"mprof-core %s %s\n", o->raw, o->prog, o->raw);
			return -1;
		}
		if (o->ptr_size)
			t.wsize = o->ptr_size;
		if (o->endian >= 0)
			t.big_endian = o->endian;
		p->image_path = o->raw;
		p->img = cp_image_open_raw(o->raw, o->base, t.wsize, t.big_endian, t.machine, &cerr);
	} else {
		p->image_path = o->core;
		p->img = cp_image_open_core(o->core, &cerr);
		if (p->img && cp_image_check_exe(p->img, o->prog, &cerr) < 0)
			goto cerror;
		/* a core without build-ids or file list (qemu-user's) is matched by
		 * name only: a build of the same name for another machine passed */
		if (p->img) {
			unsigned type, machine;

			if (cli_elf_file_kind(o->prog, &type, &machine) == 0 && machine != p->img->machine) {
				char cm[32];

				snprintf(cm, sizeof(cm), "%s", cli_machine_name(p->img->machine));
				fprintf(stderr, "mprof-core: %s: core of a program for %s, but %s is for %s\n",
					o->core, cm, o->prog, cli_machine_name(machine));
				return -1;
			}
		}
	}
	if (!p->img)
		goto cerror;
	if (p->img->nbogus_segs && !o->quiet)
		note_bogus_segments(p->img, p->image_path);
	{
		struct cp_scan_options so_scan = { 0 };

		so_scan.nthreads = o->threads;
		/* an ET_EXEC's code and constants (at its link addresses) in a raw
		 * dump or in a core without NT_FILE: the kit's literals there read as
		 * damaged headers. A board's core (qemu-system's dump holds the
		 * flash) has no NT_AUXV either; a qemu-user core has NT_AUXV and no
		 * NT_FILE, and holds the program's code and constants whenever its
		 * first executable segment does not start with the ELF header
		 * (-z separate-code). In a process those sections never hold a heap
		 * block, so skipping them can only drop false damage. (The rule for
		 * repeated segments stays for cores with neither: in a process,
		 * identical mappings are different memory.) The program named may
		 * not be the core's: another program's, or another build's,
		 * sections may cover the heap. A core with AT_ENTRY whose entry is
		 * not the program's gets no skip; otherwise only the sections whose
		 * dumped bytes equal the file's are skipped (an ET_EXEC is not
		 * moved): those are code and constants, whichever build was named
		 * (two builds of one toolchain often share an entry point). What
		 * differs is scanned, and said so. */
		int no_map = !o->raw && !p->img->nfiles;
		uint64_t entry;

		if (no_map && cli_target_read(o->prog, &t, &cerr) < 0)
			t.type = ET_NONE;
		if (no_map && t.type == ET_EXEC && cp_image_auxv(p->img, AT_ENTRY, &entry) == 0 &&
		    entry != t.entry) {
			if (!o->quiet)
				fprintf(stderr, "mprof-core: %s: its entry point 0x%llx is not the core's "
					"(AT_ENTRY 0x%llx): another program? Its read-only sections are "
					"scanned\n", o->prog, (unsigned long long)t.entry,
					(unsigned long long)entry);
			t.type = ET_NONE;
		}
		if (no_map && t.type == ET_EXEC) {
			char first[96];
			int nd = cli_target_ro_verify(o->prog, &t, p->img, first, sizeof(first), &cerr);

			if (nd < 0) {
				/* read once already (cli_target_read): changed or
				 * damaged since; then nothing is skipped, all is scanned */
				if (!o->quiet)
					fprintf(stderr, "mprof-core: %s; its read-only sections are "
						"scanned\n", cerr.msg);
				t.type = ET_NONE;
			} else if (nd > 0 && !o->quiet)
				fprintf(stderr, "mprof-core: %s: %d of its read-only sections (the first: %s) "
					"differ from the core's bytes: another build? They are scanned\n",
					o->prog, nd, first);
		}
		if ((o->raw || no_map) && t.type == ET_EXEC) {
			so_scan.skip = t.ro;
			so_scan.nskip = t.nro;
			if (t.ro_dropped && !o->quiet)
				fprintf(stderr, "mprof-core: %s: %u read-only sections past %u runs are "
					"scanned (their literals may read as damaged headers)\n",
					o->prog, t.ro_dropped, CLI_MAX_RO);
		}
		/* issue 15: the scan's notes of address words serve only the mark */
		so_scan.no_ptr_notes = !((o->reports & REP_LOST) || o->nwhy || o->nrefs);
		if (!o->quiet && p->img->map_size > (1ull << 30) && isatty(2))
			so_scan.progress = scan_progress;
		if (cp_scan_image_opts(p->img, &so_scan, &p->scan, &cerr) < 0)
			goto cerror;
		if (so_scan.progress)
			fputs("\r\033[K", stderr);
	}
	if (cli_stats_load(o, p) < 0)   /* issue 5: before naming, it adds stacks */
		return -1;
	/* a dump holding the statistics region but no block (the region's RAM alone,
	 * or everything freed) still has counters, bins and a timeline to show */
	if (o->raw && !(p->have_stats && !p->scan.nblocks && !p->scan.ndamaged)) {
		char msg[sizeof(cerr.msg)];

		/* a PIE's load address is not in a raw dump: its code range says nothing */
		if (t.type != ET_EXEC)
			t.ntext = 0;
		if (cli_raw_diagnose(p->img, &p->scan, &t, o->prog, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "mprof-core: %s\n", msg);
			return -1;
		}
		if (msg[0] && !o->quiet)
			fprintf(stderr, "mprof-core: warning: %s\n", msg);
	}
	{
		char msg[2048];   /* issue 13: a core of a program run without the library */

		if (!o->raw && cli_core_diagnose_empty(p, o->prog, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "mprof-core: %s\n", msg);
			return -1;
		}
	}

	so.exe = o->prog;
	so.core = o->core ? cp_image_data_path(p->img) : NULL;   /* compressed: its temporary file */
	so.sysroot = o->sysroot;
	so.debug_dirs = o->ndebug_dirs ? o->debug_dirs : NULL;
	char cache_dir[4096];
	if (!o->no_cache && sym_cache_dir(cache_dir, sizeof(cache_dir)) == 0)
		so.cache_dir = cache_dir;   /* libdw's per-module index files (symcache) */
	so.nthreads = o->threads;   /* 0: $MPROF_THREADS, else every CPU */
	/* libraries dlclose unloaded before the core (libheapann's table) */
	struct sym_unloaded *ul = NULL;
	if (so.core && p->have_stats && p->stats.unload.n) {
		ul = calloc(p->stats.unload.n, sizeof(*ul));
		if (!ul) {
			fprintf(stderr, "mprof-core: out of memory\n");
			return -1;
		}
		const struct cp_unloaded **by = calloc(p->stats.unload.n, sizeof(*by));
		if (!by) {
			free(ul);
			fprintf(stderr, "mprof-core: out of memory\n");
			return -1;
		}
		for (size_t i = 0; i < p->stats.unload.n; i++)
			by[i] = &p->stats.unload.v[i];
		/* the latest unload first: where two records share a span, the code
		 * there last is the one most blocks' frames point into */
		qsort(by, p->stats.unload.n, sizeof(*by), cli_unload_cmp);
		for (size_t i = 0; i < p->stats.unload.n; i++) {
			const struct cp_unloaded *u = by[i];

			ul[i] = (struct sym_unloaded){ u->path, u->bias, u->lo, u->hi, u->id, u->idlen };
		}
		free(by);
		so.unloaded = ul;
		so.nunloaded = p->stats.unload.n;
	}
	p->sym = !strcmp(o->symbolizer, "gdb") ? sym_gdb_open(&so, &serr) : sym_dw_open(&so, &serr);
	free(ul);
	if (!p->sym) {
		fprintf(stderr, "mprof-core: %s\n", serr.msg);
		return -1;
	}
	if (sym_resolve(p->sym, p->scan.addrs, p->scan.naddrs, &p->names, &serr) < 0) {
		fprintf(stderr, "mprof-core: %s\n", serr.msg);
		return -1;
	}
	if (!o->quiet) {
		const char *notes = sym_notes(p->sym);

		if (notes && *notes)
			fprintf(stderr, "%s%s", notes, notes[strlen(notes) - 1] == '\n' ? "" : "\n");
	}
	p->in.scan = &p->scan;
	p->in.sym = p->names;
	p->filter.alloc_fns = o->alloc_fns;
	p->filter.nalloc_fns = o->nalloc_fns;
	p->filter.ignore_fns = o->ignore_fns;
	p->filter.nignore_fns = o->nignore_fns;
	return 0;
cerror:
	/* PROG and CORE swapped, the commonest slip: say so on the same line */
	if (!o->raw && cerr.code == CP_EFORMAT && elf_file_is_core(o->prog) &&
	    strlen(cerr.msg) + strlen(o->prog) + 40 < sizeof(cerr.msg))
		snprintf(cerr.msg + strlen(cerr.msg), sizeof(cerr.msg) - strlen(cerr.msg),
			 "; %s is a core: the order is PROG CORE", o->prog);
	fprintf(stderr, "mprof-core: %s\n", cerr.msg);
	return -1;
}

void cli_profile_release(struct cli_profile *p)
{
	sym_free(p->sym);
	cp_stats_free(&p->stats);
	cp_scan_free(&p->scan);
	cp_image_free(p->img);
}

static void summary_text(FILE *f, const struct cli_profile *p, const struct an_stacks *st)
{
	const struct cp_image *img = p->img;
	const struct cp_scan *sc = &p->scan;
	char a[32], b[32], c[32];

	fprintf(f, "%s: %s", p->image_path, img->kind == CP_KIND_RAW ? "raw dump" : "core");
	if (img->compression != CP_COMP_NONE)   /* issue 12: compressed cores */
		fprintf(f, " (%s-compressed, %s bytes uncompressed)",
			cp_compression_name(img->compression), fmt_num(a, img->map_size));
	fprintf(f, ", %u-bit %s-endian %s", img->wsize * 8,
		img->big_endian ? "big" : "little", cli_machine_name(img->machine));
	if (img->kind == CP_KIND_CORE)
		fprintf(f, ", %zu thread%s", img->nthreads, img->nthreads == 1 ? "" : "s");
	fputc('\n', f);
	fprintf(f, "live blocks: %s, requested bytes: %s, with headers and guards: %s\n",
		fmt_num(a, st->blocks), fmt_num(b, st->bytes), fmt_num(c, st->bytes + st->overhead));
	fprintf(f, "distinct stacks: %s, freed blocks seen: %s, damaged headers: %s\n",
		fmt_num(a, st->n), fmt_num(b, sc->nfreed), fmt_num(c, sc->ndamaged));
	if (sc->ncut)
		fprintf(f, "headers cut off by the end of the dumped memory (not read, not damage): %s\n",
			fmt_num(a, sc->ncut));
	if (sc->nwriting)
		fprintf(f, "headers being written when the core was taken (blocks not yet handed out): %s\n",
			fmt_num(a, sc->nwriting));
	if (sc->nstack_copies)
		fprintf(f, "header-like words on thread stacks ignored (stale copies, not damage): %s\n",
			fmt_num(a, sc->nstack_copies));
	if (st->ignored_blocks)
		fprintf(f, "left out by --ignore-fn: %s blocks, %s bytes\n",
			fmt_num(a, st->ignored_blocks), fmt_num(b, st->ignored_bytes));
	if (p->have_stats && p->stats.unload.n) {   /* libheapann's dlclose records */
		fprintf(f, "libraries unloaded before the core (dlclose): %zu:", p->stats.unload.n);
		for (size_t i = 0; i < p->stats.unload.n; i++)
			fprintf(f, " %s", fmt_base(p->stats.unload.v[i].path));
		fputc('\n', f);
	}
	{
		size_t nwr = 0;
		uint64_t wr = cli_missing_writable(img, &nwr);
		uint64_t ro = img->missing_bytes > wr ? img->missing_bytes - wr : 0;
		uint64_t anon = cli_missing_anon_ro(img);

		if (!wr && img->truncated)   /* cut in its notes or read-only pages: no block lost */
			fputs("missing from the image: no writable memory (the file is truncated)\n", f);
		else if (wr)
			fprintf(f, "missing from the image: %s bytes of writable memory in %zu segments%s: "
				"blocks there are not seen\n", fmt_num(a, wr), nwr,
				img->truncated ? " (the file is truncated)" : "");
		else
			fputs("missing from the image: nothing\n", f);
		if (anon > ro)
			anon = ro;
		if (ro > anon)
			fprintf(f, "not dumped (read-only file mappings, read from the files): %s bytes\n",
				fmt_num(a, ro - anon));
		if (anon)
			fprintf(f, "not dumped (anonymous memory without write access: PROT_NONE "
				"reservations, guard pages): %s bytes\n", fmt_num(a, anon));
		{
			uint64_t nb, nby;

			/* the default report said "0 blocks" of a core whose heap was
			 * zeroed, where the region counted 12 live */
			cli_stats_shortfall(p, &nb, &nby);
			if (nb)
				fprintf(f, "not found: the statistics region counts %s live blocks (%s "
					"bytes) more than the image holds (memory not dumped, damaged "
					"or cut-off headers, or memory overwritten)\n", fmt_num(a, nb),
					fmt_num(b, nby));
		}
		/* every kernel, gcore, qemu core has a thread: none is a damaged or
		 * zeroed PT_NOTE, which said only "0 threads" */
		if (img->kind == CP_KIND_CORE && !img->nthreads && !img->notes_cut)
			fputs("no thread in the core's notes (NT_PRSTATUS; damaged or zeroed notes?): "
			      "no stack or register is a root\n", f);
		if (img->notes_cut)   /* gcore writes its notes last: a cut file loses them first */
			fputs("notes cut off by the truncation: threads and mapped files are missing "
			      "(frames in shared libraries show as addresses; no stack is a root)\n", f);
	}
}

static void summary_json(struct json *j, const struct cli_options *o,
			 const struct cli_profile *p, const struct an_stacks *st)
{
	const struct cp_image *img = p->img;

	json_key(j, "program");
	json_str(j, o->prog);
	json_key(j, "image");
	json_str(j, p->image_path);
	json_key(j, "kind");
	json_str(j, img->kind == CP_KIND_RAW ? "raw" : "core");
	json_key(j, "compression");   /* issue 12: "none", "zstd", "gzip" or "xz" */
	json_str(j, cp_compression_name(img->compression));
	json_key(j, "word_size");
	json_u64(j, img->wsize);
	json_key(j, "byte_order");
	json_str(j, img->big_endian ? "big" : "little");
	json_key(j, "threads");
	json_u64(j, img->nthreads);
	json_key(j, "blocks");
	json_u64(j, st->blocks);
	json_key(j, "bytes");
	json_u64(j, st->bytes);
	json_key(j, "overhead_bytes");
	json_u64(j, st->overhead);
	json_key(j, "distinct_stacks");
	json_u64(j, st->n);
	json_key(j, "freed_blocks");
	json_u64(j, p->scan.nfreed);
	json_key(j, "damaged_headers");
	json_u64(j, p->scan.ndamaged);
	json_key(j, "headers_cut");   /* run past the end of the dumped bytes */
	json_u64(j, p->scan.ncut);
	json_key(j, "headers_being_written");
	json_u64(j, p->scan.nwriting);
	json_key(j, "stack_copies_ignored");   /* would-be damage on a thread stack */
	json_u64(j, p->scan.nstack_copies);
	json_key(j, "ignored_blocks");
	json_u64(j, st->ignored_blocks);
	json_key(j, "ignored_bytes");
	json_u64(j, st->ignored_bytes);
	json_key(j, "missing");
	json_obj_begin(j);
	json_key(j, "bytes");
	json_u64(j, img->missing_bytes);
	json_key(j, "writable_bytes");
	json_u64(j, cli_missing_writable(img, NULL));
	json_key(j, "segments");
	json_u64(j, img->missing_segs);
	json_key(j, "truncated");
	json_bool(j, img->truncated);
	json_key(j, "notes_cut");
	json_bool(j, img->notes_cut);
	if (p->have_stats) {   /* live blocks the statistics count and the scan did not find */
		uint64_t nb, nby;

		cli_stats_shortfall(p, &nb, &nby);
		json_key(j, "stats_live_blocks");
		json_u64(j, nb);
		json_key(j, "stats_live_bytes");
		json_u64(j, nby);
	}
	json_obj_end(j);
	json_key(j, "unloaded_libraries");   /* libheapann's dlclose records */
	json_arr_begin(j);
	for (size_t i = 0; p->have_stats && i < p->stats.unload.n; i++) {
		const struct cp_unloaded *u = &p->stats.unload.v[i];
		char id[2 * HEAPANN_UNLOAD_ID_MAX + 1];

		for (unsigned k = 0; k < u->idlen; k++)
			snprintf(id + 2 * k, 3, "%02x", u->id[k]);
		id[2 * u->idlen] = '\0';
		json_obj_begin(j);
		json_key(j, "path");
		json_str(j, u->path);
		json_key(j, "bias");
		json_hex(j, u->bias);
		json_key(j, "low");
		json_hex(j, u->lo);
		json_key(j, "high");
		json_hex(j, u->hi);
		json_key(j, "build_id");
		json_str(j, u->idlen ? id : NULL);
		json_key(j, "seq");
		json_u64(j, u->seq);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Is A long option NAME ("--name") as getopt_long reads it: the whole name or a
 * prefix of it ('--form' is --format; an ambiguous prefix is refused there). */
static int long_opt_is(const char *a, const char *name)
{
	size_t n = strlen(a);

	return n > 2 && !strchr(a, '=') && !strncmp(a, name, n);
}

/* Is A "--name=VALUE" for long option NAME, the name whole or a prefix of it. */
static int long_opt_is_eq(const char *a, const char *name)
{
	size_t n = (size_t)(strchr(a, '=') - a);

	return n > 2 && !strncmp(a, name, n);
}

/* The report options that take their value as the next argument (cli_parse_args'
 * required_argument entries): snapshot passes the value on with its option rather
 * than taking it for the PID ('snapshot --format json PID', '--form json PID'). */
static int snapshot_opt_takes_value(const char *a)
{
	static const char *const names[] = {
		"--raw", "--elf", "--base", "--ptr-size", "--endian", "--sysroot", "--debug-dir",
		"--symbolizer", "--threads", "--report", "--format", "--top", "--threshold",
		"--alloc-fn", "--ignore-fn", "--addr", "--why", "--refs", "--leak-depth",
		"--weight",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (long_opt_is(a, names[i]))
			return 1;
	return 0;
}

/* mprof-core snapshot PID [-o FILE] [--no-report] [OPTIONS]: write a core of a
 * running process through gdb, then rewrite argv so that the normal path reports
 * it (PROG is /proc/PID/exe's target, read before the snapshot). Returns 1 when
 * the caller should go on and report, 0 when done; exits on errors. */
static int snapshot(int *argc, char **argv, char *exe, size_t exe_cap, char *out, size_t out_cap)
{
	struct mi_error err = { 0 };
	const char *pidarg = NULL, *outarg = NULL, *progarg = NULL;
	int report = 1, k = 1;
	long pid;
	char *end;

	/* take snapshot's own arguments out of argv, keep the report options */
	for (int i = 2; i < *argc; i++) {
		if ((!strcmp(argv[i], "-o") || long_opt_is(argv[i], "--output")) && i + 1 < *argc)
			outarg = argv[++i];
		else if (strchr(argv[i], '=') && argv[i][2] &&
			 long_opt_is_eq(argv[i], "--output"))
			outarg = strchr(argv[i], '=') + 1;
		else if (!strcmp(argv[i], "--no-report"))
			report = 0;
		else if (!strcmp(argv[i], "--prog") && i + 1 < *argc)   /* issue 13 */
			progarg = argv[++i];
		else if (!strncmp(argv[i], "--prog=", 7))
			progarg = argv[i] + 7;
		else if (snapshot_opt_takes_value(argv[i]) && i + 1 < *argc) {
			argv[k++] = argv[i];
			argv[k++] = argv[++i];
		} else if (!pidarg && argv[i][0] != '-')
			pidarg = argv[i];
		else
			argv[k++] = argv[i];
	}
	if (!pidarg)
		usage_error("%s needs a PID", "snapshot");
	errno = 0;
	pid = strtol(pidarg, &end, 10);
	if (errno || *end || pid <= 0)
		usage_error("snapshot: '%s' is not a process id", pidarg);
	if (progarg) {
		/* the file is checked against the core's build-id when it is read */
		if (strlen(progarg) >= exe_cap)
			usage_error("snapshot: program path too long: %s", progarg);
		snprintf(exe, exe_cap, "%s", progarg);
	} else if (mi_process_exe((pid_t)pid, exe, exe_cap, &err) < 0) {
		if (err.code == MI_EIO)
			fprintf(stderr, "mprof-core: %s (mprof-core snapshot --prog FILE %ld)\n", err.msg, pid);
		else
			fprintf(stderr, "mprof-core: %s\n", err.msg);
		exit(EXIT_BADINPUT);
	}
	if (outarg && strlen(outarg) >= out_cap)
		usage_error("snapshot: output path too long: %s", outarg);
	/* mi_snapshot writes NAME.zst as zstd; a .gz or .xz name would hold a plain
	 * core that only mprof-core reads */
	if (outarg && (mi_ends_with(outarg, ".gz") || mi_ends_with(outarg, ".xz")))
		usage_error("snapshot: cannot write %s: only zstd compression is written "
			    "(name it .zst, or without a suffix for a plain core)", outarg);
	if (outarg)
		snprintf(out, out_cap, "%s", outarg);
	else
		snprintf(out, out_cap, "core.%ld", pid);
	if (mi_snapshot((pid_t)pid, out, NULL, 0, &err) < 0) {
		fprintf(stderr, "mprof-core: %s\n", err.msg);
		exit(EXIT_BADINPUT);
	}
	if (!report) {
		printf("wrote %s\n", out);
		return 0;
	}
	argv[k++] = exe;
	argv[k++] = out;
	argv[k] = NULL;
	*argc = k;
	return 1;
}

int main(int argc, char **argv)
{
	struct cli_options o;
	struct cli_profile p;
	struct an_stacks st = { 0 };
	struct an_corrupt corr = { 0 };
	char snap_exe[4096], snap_core[4096];
	FILE *out = stdout;
	int status = 0;

	if (argc > 1 && !strcmp(argv[1], "snapshot") &&
	    !snapshot(&argc, argv, snap_exe, sizeof(snap_exe), snap_core, sizeof(snap_core)))
		return 0;
	if (argc > 1 && !strcmp(argv[1], "diff"))   /* issue 12: diff.c */
		return cli_diff_main(argc, argv);
	cli_parse_args(argc, argv, &o, NULL);
	if (cli_profile_load(&o, &p) < 0) {
		cli_profile_release(&p);
		return EXIT_BADINPUT;
	}
	if (an_stacks_build(&p.in, &p.filter, &st) < 0 ||
	    an_corrupt_build(p.img, &p.scan, &corr) < 0) {
		fputs("mprof-core: out of memory\n", stderr);
		cli_profile_release(&p);
		return EXIT_BADINPUT;
	}
	if (p.have_stats) {   /* damage libheapann saw at run time: no other trace in the core */
		corr.runtime_guards = p.stats.guard_breaks;
		corr.runtime_bad_frees = p.stats.bad_frees;
		corr.runtime_last_seq = p.stats.last_guard_seq;
	}
	/* issue 6: corruption shows by default whenever some is found; --addr alone
	 * answers its question without the stacks report */
	if (!o.reports_given && o.naddrs)
		o.reports = 0;
	if (!o.reports_given && (o.nwhy || o.nrefs))   /* issue 7: the same for --why/--refs */
		o.reports = 0;
	if (!o.reports_given && an_corrupt_found(&corr))
		o.reports |= REP_CORRUPTION;
	/* issue 13: an exit snapshot of a program that freed everything reports
	 * nothing by default; the statistics still hold the whole run */
	if (!o.reports_given && !o.quiet && st.blocks == 0 && !st.ignored_blocks && p.have_stats &&
	    p.stats.allocs && p.stats.allocs == p.stats.frees && o.reports == REP_STACKS &&
	    o.format == FMT_TEXT)
		fprintf(stderr, "mprof-core: note: no live block in %s (all %" PRIu64 " allocations "
			"were freed); the whole run: --report=direct,leaks,graph,timeline\n",
			p.image_path, p.stats.allocs);
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "mprof-core: %s: %s\n", o.output, strerror(errno));
		out = stdout;   /* done: closes out unless it is stdout: never fclose(NULL) */
		status = EXIT_BADINPUT;
		goto done;
	}
	if (o.ntask_sps && report_task_sp_check(&o, &p) < 0) {
		status = EXIT_BADINPUT;
		goto done;
	}
	if (o.format == FMT_PPROF && isatty(fileno(out))) {
		fputs("mprof-core: --format pprof writes binary data: give -o FILE\n", stderr);
		status = EXIT_USAGE;
		goto done;
	}
	if (o.format >= FMT_FOLDED) {
		static int (*const exporters[])(FILE *, const struct cli_options *,
						const struct cli_profile *, const struct an_stacks *,
						const struct an_corrupt *) = {
			[FMT_FOLDED] = export_folded, [FMT_PPROF] = export_pprof,
			[FMT_MASSIF] = export_massif, [FMT_HTML] = export_html, [FMT_SVG] = export_svg,
		};

		if (exporters[o.format](out, &o, &p, &st, &corr) < 0)
			status = EXIT_BADINPUT;
	} else if (o.format == FMT_JSON) {
		struct json j;

		json_init(&j, out);
		json_obj_begin(&j);
		summary_json(&j, &o, &p, &st);
		if ((o.reports & REP_STACKS) && report_stacks_json(&j, &o, &p, &st) < 0)
			status = EXIT_BADINPUT;
		if ((o.reports & REP_CORRUPTION) && report_corruption_json(&j, &p, &corr) < 0)
			status = EXIT_BADINPUT;
		if (o.naddrs && report_addr_json(&j, &o, &p) < 0)
			status = EXIT_BADINPUT;
		if (((o.reports & REP_LOST) && report_lost_json(&j, &o, &p, &st) < 0) ||   /* issue 7 */
		    (o.nwhy && report_why_json(&j, &o, &p) < 0) ||
		    (o.nrefs && report_refs_json(&j, &o, &p) < 0))
			status = EXIT_BADINPUT;
		if (report_tables_json(&j, &o, &p) < 0)   /* issue 5 and the tree */
			status = EXIT_BADINPUT;
		if ((o.reports & REP_TYPES) && report_types_json(&j, &o, &p) < 0)
			status = EXIT_BADINPUT;
		json_obj_end(&j);
	} else {
		summary_text(out, &p, &st);
		if ((o.reports & REP_STACKS) && report_stacks_text(out, &o, &p, &st) < 0)
			status = EXIT_BADINPUT;
		if ((o.reports & REP_CORRUPTION) && report_corruption_text(out, &p, &corr) < 0)
			status = EXIT_BADINPUT;
		if (o.naddrs && report_addr_text(out, &o, &p) < 0)
			status = EXIT_BADINPUT;
		if (((o.reports & REP_LOST) && report_lost_text(out, &o, &p, &st) < 0) ||   /* issue 7 */
		    (o.nwhy && report_why_text(out, &o, &p) < 0) ||
		    (o.nrefs && report_refs_text(out, &o, &p) < 0))
			status = EXIT_BADINPUT;
		if (report_tables_text(out, &o, &p) < 0)   /* issue 5 and the tree */
			status = EXIT_BADINPUT;
		if ((o.reports & REP_TYPES) && report_types_text(out, &o, &p) < 0)
			status = EXIT_BADINPUT;
	}
	{
		int bad = fflush(out) != 0 || ferror(out);

		if (out != stdout && fclose(out) != 0)
			bad = 1;
		out = stdout;
		if (bad) {
			fprintf(stderr, "mprof-core: error writing %s\n", o.output ? o.output : "the report");
			status = EXIT_BADINPUT;
		} else if (status == 0 && an_corrupt_found(&corr)) {
			status = EXIT_CORRUPTION;
		}
	}
done:
	if (out && out != stdout)   /* NULL: -o FILE could not be opened */
		fclose(out);
	an_corrupt_release(&corr);
	an_stacks_release(&st);
	cli_profile_release(&p);
	return status;
}
