/* fzrun.c - replay fuzz inputs (tests/fuzz/regress/) through the same calls as the
 * libFuzzer targets (tests/fuzz/fz.c), without libFuzzer: built by make with gcc,
 * and under ASan+UBSan in build-san/. For tests/run-fuzz-regress.sh.
 *
 * usage: fzrun [--mi | --symdw | --symcache] FILE...
 * Prints one line per file: "FILE: ms=N error: MSG" or "FILE: ms=N segs=N blocks=N
 * live=N damaged=N roots=N lost=N stats=0|1 [note: MSG]". Exits 1 when a file
 * cannot be read, else 0 (a sanitizer report aborts the run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/fz.c"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Read a whole file into a malloc'd buffer. Returns it (caller frees), or NULL. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		size_t r = fread(buf + n, 1, cap - n, f);

		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	int mode = 0, rc = 0;

	for (int i = 1; i < argc; i++) {
		uint8_t *data;
		size_t len = 0;
		double t0;

		if (!strcmp(argv[i], "--mi")) {
			mode = 1;
			continue;
		}
		if (!strcmp(argv[i], "--symdw")) {
			mode = 2;
			continue;
		}
		if (!strcmp(argv[i], "--symcache")) {
			mode = 3;
			continue;
		}
		data = slurp(argv[i], &len);
		if (!data) {
			fprintf(stderr, "fzrun: %s: cannot read\n", argv[i]);
			rc = 1;
			continue;
		}
		t0 = now_ms();
		if (mode == 1) {
			fz_mi_run(data, len);
			printf("%s: ms=%.0f mi\n", argv[i], now_ms() - t0);
		} else if (mode == 2) {
			fz_symdw_run(data, len);
			printf("%s: ms=%.0f symdw\n", argv[i], now_ms() - t0);
		} else if (mode == 3) {
			char why[256];

			if (fz_symcache_run(data, len, why, sizeof(why)) < 0)
				printf("%s: ms=%.0f refused: %s\n", argv[i], now_ms() - t0, why);
			else
				printf("%s: ms=%.0f %s\n", argv[i], now_ms() - t0, why);
		} else {
			struct fz_result r;

			if (fz_image_run(data, len, FZ_ALL, &r) < 0) {
				fprintf(stderr, "fzrun: memfd_create failed\n");
				free(data);
				return 1;
			}
			if (r.failed)
				printf("%s: ms=%.0f error: %s\n", argv[i], now_ms() - t0, r.msg);
			else
				printf("%s: ms=%.0f segs=%zu blocks=%zu live=%zu damaged=%zu roots=%zu lost=%zu stats=%d%s%s\n",
				       argv[i], now_ms() - t0, r.nsegs, r.nblocks, r.nlive, r.ndamaged, r.nroots,
				       r.nlost, r.have_stats, r.msg[0] ? " note: " : "", r.msg);
		}
		free(data);
	}
	return rc;
}
