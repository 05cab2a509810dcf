/* migdb.c - test and bench driver for mi/ and the gdb symbolizer (sym_gdb_open):
 *
 *   migdb [OPTS] (EXE CORE | --raw-elf EXE) [ADDR...]   name addresses with gdb
 *   migdb [OPTS] --compare (EXE CORE | --raw-elf EXE) [ADDR...]   gdb against libdw
 *   migdb --addrs CORE       the distinct return addresses of the core's blocks
 *   migdb --blocks CORE      "live N bytes B" of the core's blocks
 *   migdb --snapshot PID OUT [--gdb G]   mi_snapshot; "snapshot ok" or the error
 *   migdb --exe PID          mi_process_exe: the program file of a process
 *   migdb [--gdb G] [--timeout MS] [--batch] --exec CMD...   run MI commands (one
 *        by one, or pipelined with --batch) and print each reply as
 *        "reply N class=C console=[...] log=[...] async=K" (text with \n
 *        escaped), or "error CODE: MSG" and exit 1; then "close STATUS"
 * OPTS: --sysroot DIR, --gdb PATH, --timeout MS, --addr-file F (one address a
 * line, added to those given), --time (open and resolve times on stderr).
 * Name lines: ADDR \t FUNCTION \t FILE:LINE \t MODULE+0xOFF \t FLAGS, then the
 * notes prefixed "note: ". Compare lines: "same ADDR FN FILE:LINE" or "diff ADDR
 * FIELD gdb=... dw=...", then "compared N: S same, D differ"; exit 1 on a diff.
 * gdb gives one frame per address (no inline chains without Python), so it is
 * compared with libdw's outermost frame for the function and with libdw's
 * innermost frame for file:line (the line table entry of the address).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreparse.h"
#include "mi.h"
#include "sym.h"

static int usage(void)
{
	fprintf(stderr, "usage: migdb [--sysroot DIR] [--gdb PATH] [--timeout MS] [--addr-file F] "
		"[--time] [--compare] (EXE CORE | --raw-elf EXE) [ADDR...]\n"
		"       migdb --addrs CORE | --blocks CORE | --exe PID | --snapshot PID OUT [--gdb G]\n");
	return 2;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int push(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
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

static const char *flags_str(uint32_t f, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s%s", f ? "" : "-", f & SYM_NO_MODULE ? "nomodule," : "",
		 f & SYM_BUILDID_MISMATCH ? "buildid," : "", f & SYM_NO_DEBUG ? "nodebug," : "");
	if (f && buf[0])
		buf[strlen(buf) - 1] = '\0';
	return buf;
}

static int scan_core(const char *core, struct cp_image **img, struct cp_scan *scan)
{
	struct cp_error e;

	*img = cp_image_open_core(core, &e);
	if (!*img) {
		fprintf(stderr, "migdb: %s\n", e.msg);
		return -1;
	}
	if (cp_scan_image(*img, 1, scan, &e) < 0) {
		fprintf(stderr, "migdb: %s\n", e.msg);
		cp_image_free(*img);
		return -1;
	}
	return 0;
}

static const char *nz(const char *s)
{
	return s ? s : "?";
}

static void print_text(const char *label, const char *t)
{
	printf(" %s=[", label);
	for (; t && *t; t++) {
		if (*t == '\n')
			printf("\\n");
		else
			putchar(*t);
	}
	printf("]");
}

/* --exec: drive the client directly (for tests with a fake gdb). */
static int run_exec(const char *gdb, unsigned tmo, int batch, char **cmds, int n)
{
	struct mi_settings set;
	struct mi_error me;
	struct mi_client *c;
	struct mi_reply *r;
	int i, ret = 0;

	memset(&set, 0, sizeof set);
	set.gdb = gdb;
	set.start_timeout_ms = tmo;
	c = mi_client_start(&set, &me);
	if (!c) {
		printf("error %d: %s\n", me.code, me.msg);
		return 1;
	}
	r = calloc((size_t)n + 1, sizeof *r);
	if (!r)
		return 1;
	for (i = 0; i < n; i++) {
		int k, cnt = batch ? n : 1;

		if (mi_client_exec_batch(c, (const char *const *)cmds + i, (size_t)cnt, tmo, r, &me) < 0) {
			printf("error %d: %s\n", me.code, me.msg);
			ret = 1;
			break;
		}
		for (k = 0; k < cnt; k++) {
			printf("reply %d class=%s", i + k + 1, r[k].result.klass);
			if (mi_reply_error(&r[k]))
				printf(" msg=[%s]", mi_reply_error(&r[k]));
			print_text("console", r[k].console);
			print_text("log", r[k].log);
			printf(" async=%zu\n", r[k].nasync);
			mi_reply_release(&r[k]);
		}
		i += cnt - 1;
	}
	free(r);
	printf("close %d\n", mi_client_close(c));
	return ret;
}

int main(int argc, char **argv)
{
	struct sym_options opt;
	uint64_t *addrs = NULL;
	size_t naddrs = 0, cap = 0, i;
	int compare = 0, timing = 0, raw = 0, batch = 0, ai = 1;
	const char *addr_file = NULL;
	struct sym_error err;
	struct symbolizer *g, *d = NULL;
	const struct sym_table *tg, *td = NULL;
	double t0, t1, t2;

	memset(&opt, 0, sizeof opt);
	for (; ai < argc && argv[ai][0] == '-' && argv[ai][1] == '-'; ai++) {
		const char *a = argv[ai];

		if (strcmp(a, "--sysroot") == 0 && ai + 1 < argc)
			opt.sysroot = argv[++ai];
		else if (strcmp(a, "--gdb") == 0 && ai + 1 < argc)
			opt.gdb = argv[++ai];
		else if (strcmp(a, "--timeout") == 0 && ai + 1 < argc)
			opt.timeout_ms = (unsigned)strtoul(argv[++ai], NULL, 10);
		else if (strcmp(a, "--addr-file") == 0 && ai + 1 < argc)
			addr_file = argv[++ai];
		else if (strcmp(a, "--time") == 0)
			timing = 1;
		else if (strcmp(a, "--compare") == 0)
			compare = 1;
		else if (strcmp(a, "--raw-elf") == 0)
			raw = 1;
		else if (strcmp(a, "--batch") == 0)
			batch = 1;
		else if (strcmp(a, "--exec") == 0)
			return run_exec(opt.gdb, opt.timeout_ms, batch, argv + ai + 1, argc - ai - 1);
		else if (strcmp(a, "--addrs") == 0 || strcmp(a, "--blocks") == 0) {
			struct cp_image *img;
			struct cp_scan scan;

			if (ai + 1 >= argc)
				return usage();
			if (scan_core(argv[ai + 1], &img, &scan) < 0)
				return 1;
			if (strcmp(a, "--addrs") == 0)
				for (i = 0; i < scan.naddrs; i++)
					printf("0x%" PRIx64 "\n", scan.addrs[i]);
			else
				printf("live %zu bytes %" PRIu64 "\n", scan.nlive, scan.live_bytes);
			cp_scan_free(&scan);
			cp_image_free(img);
			return 0;
		} else if (strcmp(a, "--exe") == 0) {
			struct mi_error me;
			char path[4096];

			if (ai + 1 >= argc)
				return usage();
			if (mi_process_exe((pid_t)strtol(argv[ai + 1], NULL, 10), path, sizeof path, &me) < 0) {
				printf("error %d: %s\n", me.code, me.msg);
				return 1;
			}
			printf("%s\n", path);
			return 0;
		} else if (strcmp(a, "--snapshot") == 0) {
			struct mi_error me;
			const char *gdb = NULL;

			if (ai + 2 >= argc)
				return usage();
			if (ai + 4 < argc && strcmp(argv[ai + 3], "--gdb") == 0)
				gdb = argv[ai + 4];
			if (mi_snapshot((pid_t)strtol(argv[ai + 1], NULL, 10), argv[ai + 2], gdb,
					opt.timeout_ms, &me) < 0) {
				printf("error %d: %s\n", me.code, me.msg);
				return 1;
			}
			printf("snapshot ok\n");
			return 0;
		} else
			return usage();
	}
	if (ai >= argc)
		return usage();
	opt.exe = argv[ai++];
	if (!raw) {
		if (ai >= argc)
			return usage();
		opt.core = argv[ai++];
	}
	for (; ai < argc; ai++)
		if (push(&addrs, &naddrs, &cap, strtoull(argv[ai], NULL, 0)) < 0)
			return 1;
	if (addr_file) {
		FILE *f = fopen(addr_file, "r");
		char line[128];

		if (!f) {
			perror(addr_file);
			return 1;
		}
		while (fgets(line, sizeof line, f))
			if (line[0] != '\n' && push(&addrs, &naddrs, &cap, strtoull(line, NULL, 0)) < 0)
				return 1;
		fclose(f);
	}

	t0 = now_s();
	g = sym_gdb_open(&opt, &err);
	if (!g) {
		fprintf(stderr, "migdb: %s\n", err.msg);
		return 1;
	}
	t1 = now_s();
	if (sym_resolve(g, addrs, naddrs, &tg, &err) < 0) {
		fprintf(stderr, "migdb: %s\n", err.msg);
		sym_free(g);
		return 1;
	}
	t2 = now_s();
	if (timing)
		fprintf(stderr, "gdb: open %.3f s, %zu addresses in %.3f s (%.3f ms each)\n",
			t1 - t0, naddrs, t2 - t1, naddrs ? (t2 - t1) * 1000 / (double)naddrs : 0.0);

	if (compare) {
		size_t same = 0, differ = 0;

		t0 = now_s();
		d = sym_dw_open(&opt, &err);
		t1 = now_s();
		if (!d || sym_resolve(d, addrs, naddrs, &td, &err) < 0) {
			fprintf(stderr, "migdb: libdw: %s\n", err.msg);
			sym_free(d);
			sym_free(g);
			return 1;
		}
		t2 = now_s();
		if (timing)
			fprintf(stderr, "dw: open %.3f s, %zu addresses in %.3f s (%.3f ms each)\n",
				t1 - t0, naddrs, t2 - t1, naddrs ? (t2 - t1) * 1000 / (double)naddrs : 0.0);
		for (i = 0; i < naddrs; i++) {
			const struct sym_loc *lg = &tg->locs[i], *ld = &td->locs[i];
			const struct sym_frame *fg = lg->nframes ? &tg->frames[lg->first] : NULL;
			const struct sym_frame *fo = ld->nframes ? &td->frames[ld->first + ld->nframes - 1] : NULL;
			const struct sym_frame *fi = ld->nframes ? &td->frames[ld->first] : NULL;
			const char *gf = fg ? nz(fg->function) : "?", *df = fo ? nz(fo->function) : "?";
			const char *gfile = fg ? nz(fg->file) : "?", *dfile = fi ? nz(fi->file) : "?";
			unsigned gl = fg ? fg->line : 0, dl = fi ? fi->line : 0;
			int bad = 0;

			if (strcmp(gf, df) != 0) {
				printf("diff 0x%" PRIx64 " function gdb=%s dw=%s\n", lg->addr, gf, df);
				bad = 1;
			}
			if (strcmp(gfile, dfile) != 0) {
				printf("diff 0x%" PRIx64 " file gdb=%s dw=%s\n", lg->addr, gfile, dfile);
				bad = 1;
			}
			if (gl != dl) {
				printf("diff 0x%" PRIx64 " line gdb=%u dw=%u\n", lg->addr, gl, dl);
				bad = 1;
			}
			if (lg->modoff != ld->modoff) {
				printf("diff 0x%" PRIx64 " modoff gdb=0x%" PRIx64 " dw=0x%" PRIx64 "\n",
				       lg->addr, lg->modoff, ld->modoff);
				bad = 1;
			}
			if ((lg->flags & SYM_BUILDID_MISMATCH) != (ld->flags & SYM_BUILDID_MISMATCH)) {
				printf("diff 0x%" PRIx64 " buildid-flag gdb=%u dw=%u\n", lg->addr,
				       lg->flags & SYM_BUILDID_MISMATCH, ld->flags & SYM_BUILDID_MISMATCH);
				bad = 1;
			}
			if (bad) {
				differ++;
			} else {
				same++;
				printf("same 0x%" PRIx64 " %s %s:%u\n", lg->addr, gf, gfile, gl);
			}
		}
		printf("compared %zu: %zu same, %zu differ\n", naddrs, same, differ);
		sym_free(d);
		sym_free(g);
		free(addrs);
		return differ ? 1 : 0;
	}

	for (i = 0; i < tg->nlocs; i++) {
		const struct sym_loc *l = &tg->locs[i];
		const struct sym_frame *f = l->nframes ? &tg->frames[l->first] : NULL;
		char fb[64];

		printf("0x%" PRIx64 "\t%s\t", l->addr, f ? nz(f->function) : "?");
		if (f && f->file)
			printf("%s:%u\t", f->file, f->line);
		else
			printf("?\t");
		printf("%s+0x%" PRIx64 "\t%s\n", nz(l->module), l->modoff, flags_str(l->flags, fb, sizeof fb));
	}
	if (sym_notes(g)) {
		const char *p = sym_notes(g), *nl;

		while ((nl = strchr(p, '\n')) != NULL) {
			printf("note: %.*s\n", (int)(nl - p), p);
			p = nl + 1;
		}
	}
	sym_free(g);
	free(addrs);
	return 0;
}
