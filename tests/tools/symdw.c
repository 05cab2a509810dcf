/* symdw.c - test driver for the libdw symbolizer (sym_dw_open): name addresses
 * given on the command line (or read from a file, one per line) and print one
 * tab-separated line per address, then the notes prefixed "note: ".
 *
 * usage: symdw [--sysroot DIR] [--debug-dir DIR]... [--addr-file F] [--repeat N]
 *              [--scan] [--quiet] [--reference] [--cache-dir DIR]
 *              (EXE CORE | --raw-elf EXE) [ADDR...]
 * --scan adds every distinct return address of the annotated blocks that
 * coreparse finds in CORE; --repeat resolves N times (timing on stderr);
 * --reference asks libdw for every line (SYM_DW_REFERENCE: the old, slower
 * path the fast one is compared with); --cache-dir keeps the per-module index
 * files there (sym_options.cache_dir; none by default here).
 * line:  ADDR \t FUNCTION \t FILE:LINE \t MODULE+0xOFF \t FLAGS \t CHAIN
 * where FUNCTION and FILE:LINE are the innermost frame's ("?" when unknown),
 * FLAGS is "-" or a comma list (nomodule, buildid, nodebug) and CHAIN lists
 * every frame innermost first as "fn@file:line" joined by " < " ("-" if none);
 * inlined frames end in "[i]".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreparse.h"
#include "sym.h"

static int usage(void)
{
	fprintf(stderr, "usage: symdw [--sysroot DIR] [--debug-dir DIR]... [--addr-file F] "
		"[--repeat N] [--scan] [--quiet] [--reference] [--cache-dir DIR] (EXE CORE | --raw-elf EXE) [ADDR...]\n");
	return 2;
}

static int addrs_push(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		uint64_t *p = realloc(*a, ncap * sizeof *p);
		if (!p)
			return -1;
		*a = p;
		*cap = ncap;
	}
	(*a)[(*n)++] = v;
	return 0;
}

static void print_loc(const struct sym_table *t, const struct sym_loc *l)
{
	printf("0x%" PRIx64 "\t", l->addr);
	const struct sym_frame *f = l->nframes ? &t->frames[l->first] : NULL;
	printf("%s\t", f && f->function ? f->function : "?");
	if (f && f->file)
		printf("%s:%u\t", f->file, f->line);
	else
		printf("?\t");
	printf("%s+0x%" PRIx64 "\t", l->module ? l->module : "?", l->modoff);
	if (!l->flags)
		printf("-");
	else
		printf("%s%s%s%s", l->flags & SYM_NO_MODULE ? "nomodule" : "",
		       (l->flags & SYM_NO_MODULE) && (l->flags & ~SYM_NO_MODULE) ? "," : "",
		       l->flags & SYM_BUILDID_MISMATCH ? "buildid" : "",
		       l->flags & SYM_NO_DEBUG ? ((l->flags & SYM_BUILDID_MISMATCH) ? ",nodebug" : "nodebug") : "");
	printf("\t");
	if (!l->nframes)
		printf("-");
	for (uint32_t i = 0; i < l->nframes; i++) {
		const struct sym_frame *g = &t->frames[l->first + i];
		printf("%s%s@%s:%u%s", i ? " < " : "", g->function ? g->function : "?",
		       g->file ? g->file : "?", g->line, g->inlined ? "[i]" : "");
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	struct sym_options opt = {0};
	const char *dirs[16] = {0};
	size_t ndirs = 0;
	const char *addr_file = NULL;
	int raw = 0, repeat = 1, quiet = 0, scan = 0;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--sysroot") && i + 1 < argc)
			opt.sysroot = argv[++i];
		else if (!strcmp(argv[i], "--debug-dir") && i + 1 < argc && ndirs < 15)
			dirs[ndirs++] = argv[++i];
		else if (!strcmp(argv[i], "--addr-file") && i + 1 < argc)
			addr_file = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scan"))
			scan = 1;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!strcmp(argv[i], "--raw-elf"))
			raw = 1;
		else if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc)
			opt.cache_dir = argv[++i];
		else if (!strcmp(argv[i], "--reference"))
			opt.flags |= SYM_DW_REFERENCE;
		else
			return usage();
	}
	if (ndirs)
		opt.debug_dirs = dirs;
	if (i >= argc)
		return usage();
	opt.exe = argv[i++];
	if (!raw) {
		if (i >= argc)
			return usage();
		opt.core = argv[i++];
	}
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	for (; i < argc; i++) {
		char *end;
		uint64_t v = strtoull(argv[i], &end, 0);
		if (*end || addrs_push(&addrs, &n, &cap, v) < 0) {
			fprintf(stderr, "symdw: bad address '%s'\n", argv[i]);
			return 2;
		}
	}
	if (addr_file) {
		FILE *fp = fopen(addr_file, "r");
		if (!fp) {
			perror(addr_file);
			return 2;
		}
		char line[128];
		while (fgets(line, sizeof line, fp))
			if (line[0] != '\n' && addrs_push(&addrs, &n, &cap, strtoull(line, NULL, 0)) < 0)
				return 2;
		fclose(fp);
	}

	if (scan && opt.core) {
		struct cp_error cerr;
		struct cp_image *img = cp_image_open_core(opt.core, &cerr);
		if (!img) {
			fprintf(stderr, "symdw: %s\n", cerr.msg);
			return 1;
		}
		struct cp_scan sc;
		if (cp_scan_image(img, 0, &sc, &cerr) < 0) {
			fprintf(stderr, "symdw: %s\n", cerr.msg);
			cp_image_free(img);
			return 1;
		}
		for (size_t k = 0; k < sc.naddrs; k++)
			if (addrs_push(&addrs, &n, &cap, sc.addrs[k]) < 0)
				return 2;
		cp_scan_free(&sc);
		cp_image_free(img);
	}

	struct sym_error err;
	struct timespec t0, t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct symbolizer *s = sym_dw_open(&opt, &err);
	if (!s) {
		fprintf(stderr, "symdw: %s\n", err.msg);
		free(addrs);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	const struct sym_table *t = NULL;
	for (int r = 0; r < repeat; r++) {
		if (sym_resolve(s, addrs, n, &t, &err) < 0) {
			fprintf(stderr, "symdw: %s\n", err.msg);
			sym_free(s);
			free(addrs);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	if (!quiet)
		for (size_t k = 0; k < t->nlocs; k++)
			print_loc(t, &t->locs[k]);
	const char *notes = sym_notes(s);
	if (notes) {
		for (const char *p = notes; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			printf("note: %.*s\n", (int)len, p);
			p += len + (nl ? 1 : 0);
		}
	}
	fprintf(stderr, "symdw: open %.3f s, resolve %zu addresses x%d %.3f s\n",
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, n, repeat,
		(double)(t2.tv_sec - t1.tv_sec) + (t2.tv_nsec - t1.tv_nsec) / 1e9);
	sym_free(s);
	free(addrs);
	return 0;
}
