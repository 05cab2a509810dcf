/* cpdump.c - print what coreparse sees in an image: its facts, notes and the scan
 * (counts, then one line per block and per damaged header). A driver for
 * tests/run-coreparse.sh; the output is line-oriented for grep and awk.
 *
 * usage: cpdump [-t THREADS] [-c CHUNK_BYTES] [-q] [-T] [-e EXE] CORE
 *        cpdump [-t THREADS] [-c CHUNK_BYTES] [-q] [-T] --raw BASE WSIZE little|big DUMP
 * -q: counts only, no block lines; -T: scan time on stderr
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "coreparse.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static const char *kind_name(unsigned k)
{
	switch (k) {
	case CP_DMG_CHECK: return "check";
	case CP_DMG_END: return "end";
	case CP_DMG_START: return "start";
	case CP_DMG_VERSION: return "version";
	case CP_DMG_BOUNDS: return "bounds";
	default: return "?";
	}
}

int main(int argc, char **argv)
{
	struct cp_error err = { 0 };
	struct cp_image *img;
	struct cp_scan scan;
	unsigned threads = 0;
	unsigned long long chunk = 0;
	struct cp_scan_options opt = { 0 };
	int quiet = 0, timing = 0, i = 1;
	double t0, c0;
	const char *exe = NULL;
	size_t k;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			chunk = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-q"))
			quiet = 1;
		else if (!strcmp(argv[i], "-T"))
			timing = 1;
		else if (!strcmp(argv[i], "-e") && i + 1 < argc)
			exe = argv[++i];
		else if (!strcmp(argv[i], "--raw"))
			break;
		else
			goto usage;
	}
	if (i < argc && !strcmp(argv[i], "--raw")) {
		if (i + 5 != argc)
			goto usage;
		img = cp_image_open_raw(argv[i + 4], strtoull(argv[i + 1], NULL, 0),
					(unsigned)atoi(argv[i + 2]), !strcmp(argv[i + 3], "big"), 0, &err);
	} else {
		if (i + 1 != argc)
			goto usage;
		img = cp_image_open_core(argv[i], &err);
	}
	if (!img) {
		fprintf(stderr, "%s\n", err.msg);
		printf("error code=%d\n", err.code);
		return 1;
	}
	printf("image kind=%s wsize=%u endian=%s machine=%u\n", img->kind == CP_KIND_CORE ? "core" : "raw",
	       img->wsize, img->big_endian ? "big" : "little", img->machine);
	printf("segments=%zu missing_bytes=%llu missing_segs=%zu truncated=%d truncated_bytes=%llu\n", img->nsegs,
	       (unsigned long long)img->missing_bytes, img->missing_segs, img->truncated,
	       (unsigned long long)img->truncated_bytes);
	printf("files=%zu threads=%zu auxv=%zu\n", img->nfiles, img->nthreads, img->nauxv);
	printf("prpsinfo fname=%s args=%s\n", img->prpsinfo_fname, img->prpsinfo_args);
	if (cp_image_main_module(img))
		printf("main %s\n", cp_image_main_module(img)->path);
	for (k = 0; k < img->nthreads; k++)
		printf("thread tid=%d signo=%d pc=0x%llx sp=0x%llx\n", img->threads[k].tid,
		       img->threads[k].signo, (unsigned long long)img->threads[k].pc,
		       (unsigned long long)img->threads[k].sp);
	for (k = 0; k < img->nstack_hints; k++)
		printf("stack_hint 0x%llx\n", (unsigned long long)img->stack_hints[k]);
	for (k = 0; k < img->nfiles; k++) {
		unsigned char id[64];
		size_t n = 0, j;

		printf("file 0x%llx-0x%llx off=0x%llx %s", (unsigned long long)img->files[k].start,
		       (unsigned long long)img->files[k].end, (unsigned long long)img->files[k].file_offset,
		       img->files[k].path);
		if (img->files[k].file_offset == 0 &&
		    cp_image_module_buildid(img, &img->files[k], id, sizeof(id), &n) == 0) {
			printf(" buildid=");
			for (j = 0; j < n && j < sizeof(id); j++)
				printf("%02x", id[j]);
		}
		printf("\n");
	}
	if (exe) {
		if (cp_image_check_exe(img, exe, &err) < 0)
			printf("exe mismatch code=%d: %s\n", err.code, err.msg);
		else
			printf("exe ok\n");
	}
	opt.nthreads = threads;
	opt.chunk_bytes = chunk;
	t0 = now();
	c0 = cpu_now();
	if (cp_scan_image_opts(img, &opt, &scan, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		cp_image_free(img);
		return 1;
	}
	if (timing)
		fprintf(stderr, "cpdump: scan of %llu bytes: %.3f s wall, %.3f s CPU, %.2f GB/s\n",
			(unsigned long long)scan.scanned_bytes, now() - t0, cpu_now() - c0,
			(double)scan.scanned_bytes / (now() - t0) / 1e9);
	printf("scan blocks=%zu live=%zu freed=%zu damaged=%zu stale=%zu stray=%zu stack_copies=%zu stacks=%zu addrs=%zu live_bytes=%llu live_overhead=%llu sigs=%zu\n",
	       scan.nblocks, scan.nlive, scan.nfreed, scan.ndamaged, scan.nstale, scan.nstray, scan.nstack_copies, scan.nstacks, scan.naddrs,
	       (unsigned long long)scan.live_bytes, (unsigned long long)scan.live_overhead, scan.nsigs);
	for (k = 0; k < scan.nsigs; k++)
		printf("sig 0x%llx\n", (unsigned long long)scan.sigs[k]);
	for (k = 0; !quiet && k < scan.nblocks; k++) {
		const struct cp_block *b = &scan.blocks[k];
		const struct cp_stack *s = &scan.stacks[b->stack];

		printf("block %s user=0x%llx size=%llu seq=%llu depth=%u stack=%u guard=%u diff=%u overrun=%u flags=%u frame0=0x%llx\n",
		       b->state == CP_LIVE ? "live" : "freed", (unsigned long long)b->user,
		       (unsigned long long)b->size, (unsigned long long)b->seq, b->depth, b->stack,
		       b->guard_len, b->guard_diff, b->overrun, b->flags,
		       s->depth ? (unsigned long long)scan.addrs[scan.stack_frames[s->first]] : 0ull);
	}
	for (k = 0; !quiet && k < scan.ndamaged; k++) {
		const struct cp_damage *d = &scan.damaged[k];

		printf("damage %s hdr=0x%llx user=0x%llx size=%llu seq=%llu known=%u first_bad=%u\n",
		       kind_name(d->kind), (unsigned long long)d->hdr, (unsigned long long)d->user,
		       (unsigned long long)d->size, (unsigned long long)d->seq, d->known, d->first_bad);
	}
	cp_scan_free(&scan);
	cp_image_free(img);
	return 0;
usage:
	fprintf(stderr, "usage: cpdump [-t N] [-c CHUNK] [-q] [-T] [-e EXE] CORE | cpdump [-t N] [-c CHUNK] [-q] [-T] --raw BASE WSIZE little|big DUMP\n");
	return 2;
}
