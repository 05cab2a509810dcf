/* t_pagerel.c - analysis/pagerel.c on a mapped file of 16 granules and a bit:
 * which granules are noted, when the budget releases them, the exact bytes given
 * back (runs joined, 64 KiB more either side, clipped to the mapping), that released pages are no longer
 * mapped (the present bit of /proc/self/pagemap) and still read the same bytes,
 * and that two threads noting the same granules count each once.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "pagerel.h"

#define G (1u << AN_PAGEREL_GRANULE_SHIFT)   /* one granule: 2 MiB */
#define S AN_PAGEREL_SPILL                  /* released either side of a run: 64 KiB */
#define FILE_BYTES (16 * G + 8192)    /* 16 granules and two pages of a 17th */

static int pagemap_fd = -1;

/* 1 if the page holding p is mapped in this process, 0 if not, -1 unknown. */
static int present(const volatile unsigned char *p)
{
	uint64_t e;

	if (pagemap_fd < 0 ||
	    pread(pagemap_fd, &e, 8, (off_t)((uintptr_t)p / 4096 * 8)) != 8)
		return -1;
	return (int)(e >> 63);
}

/* Read one byte of each page of [p, p + len) (maps them); returns their sum. */
static unsigned touch(const volatile unsigned char *p, size_t len)
{
	unsigned s = 0;

	for (size_t o = 0; o < len; o += 4096)
		s += p[o];
	return s;
}

static unsigned char pattern(size_t off)
{
	return (unsigned char)(off * 7 + (off >> 12));
}

/* The file mapped read-only and private, as coreparse maps a core. */
static const unsigned char *map_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *m;

	if (fd < 0)
		return NULL;
	m = mmap(NULL, FILE_BYTES, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

struct noter {
	struct an_pagerel *r;
	const unsigned char *p;
};

static void *note_all(void *arg)
{
	struct noter *n = arg;

	for (int round = 0; round < 50; round++)
		for (size_t o = 0; o < FILE_BYTES; o += 512)
			an_pagerel_note(n->r, n->p + o, 512);
	return NULL;
}

int main(void)
{
	char path[] = "/tmp/t_pagerel.XXXXXX";
	int fd = mkstemp(path);
	unsigned char *buf = malloc(FILE_BYTES);
	const unsigned char *p;
	struct an_pagerel r;
	int same = 1;

	if (fd < 0 || !buf) {
		perror("t_pagerel");
		return 1;
	}
	for (size_t i = 0; i < FILE_BYTES; i++)
		buf[i] = pattern(i);
	if (write(fd, buf, FILE_BYTES) != (ssize_t)FILE_BYTES) {
		perror("t_pagerel: write");
		return 1;
	}
	close(fd);
	p = map_file(path);
	CHECK("file mapped", p != NULL);
	if (!p)
		goto out;
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	touch(p, FILE_BYTES);
	if (present(p) != 1) {
		printf("# /proc/self/pagemap gives no present bit here: those checks skipped\n");
		close(pagemap_fd);
		pagemap_fd = -1;
	}

	/* budget 0: inert */
	CHECK("budget 0: init", an_pagerel_init(&r, p, FILE_BYTES, 0) == 0 && r.bits == NULL);
	an_pagerel_note(&r, p, FILE_BYTES);
	an_pagerel_flush(&r);
	CHECK("budget 0: nothing noted or released", r.noted == 0 && r.released == 0);
	CHECK("budget 0: pages still mapped", pagemap_fd < 0 || present(p + 5 * G + 4096) == 1);
	an_pagerel_release(&r);

	/* budget of 3 granules (2 granules and a byte round up to 3) */
	CHECK("init", an_pagerel_init(&r, p, FILE_BYTES, 2 * (uint64_t)G + 1) == 0 && r.ngran == 17 &&
	      r.budget == 3);
	an_pagerel_note(&r, p + 100, 10);
	CHECK("one granule noted", r.noted == 1);
	an_pagerel_note(&r, p + G - 8, 16);     /* granules 0 and 1 */
	an_pagerel_note(&r, p + 200, 4000);     /* granule 0 again */
	CHECK("a read across a boundary notes both granules, a second read none", r.noted == 2);
	an_pagerel_note(&r, p + FILE_BYTES, 100);
	an_pagerel_note(&r, p + FILE_BYTES + 4096, 1);
	an_pagerel_note(&r, p + 300, 0);
	CHECK("bytes past the mapping and empty reads are not noted", r.noted == 2);
	an_pagerel_check(&r);
	CHECK("under the budget: nothing released", r.released == 0 && r.nreleases == 0);
	CHECK("under the budget: pages still mapped", pagemap_fd < 0 || present(p + G) == 1);
	an_pagerel_note(&r, p + 5 * G + 4096, 8);
	CHECK("third granule noted", r.noted == 3);
	an_pagerel_check(&r);
	/* [0, 2G + S) (the mapping starts at 0) and [5G - S, 6G + S) */
	CHECK("at the budget: granules 0-1 and 5 released with 64 KiB either side (6,488,064 bytes)",
	      r.released == 3 * G + 3 * S && r.released == 6488064 && r.nreleases == 1 && r.noted == 0);
	/* the kernel may unmap more: a 2 MiB folio mapped whole goes whole */
	CHECK("released pages are unmapped, granules no run touched are not",
	      pagemap_fd < 0 || (present(p) == 0 && present(p + G + 8192) == 0 && present(p + 2 * G) == 0 &&
				 present(p + 2 * G + S - 4096) == 0 && present(p + 5 * G - S) == 0 &&
				 present(p + 6 * G + S - 4096) == 0 && present(p + 3 * G + 4096) == 1 &&
				 present(p + 7 * G + 4096) == 1));
	for (size_t i = 0; i < FILE_BYTES; i++)
		if (p[i] != pattern(i))
			same = 0;
	CHECK("released pages read the file's bytes again", same);

	/* the last granule holds two pages of the file: clipped there */
	touch(p, FILE_BYTES);
	an_pagerel_note(&r, p + FILE_BYTES - 1, 1);
	an_pagerel_flush(&r);
	CHECK("the mapping's last granule: its 8,192 bytes and 64 KiB before",
	      r.released == 3 * G + 3 * S + 8192 + S && r.nreleases == 2);
	CHECK("flush with nothing noted releases nothing",
	      (an_pagerel_flush(&r), r.released == 3 * G + 3 * S + 8192 + S));

	/* runs: granules 7, 8, 9 and 13 give two madvise runs */
	touch(p, FILE_BYTES);
	an_pagerel_note(&r, p + 7 * G + 10, 3 * G - 20);
	an_pagerel_note(&r, p + 13 * G, 1);
	an_pagerel_flush(&r);
	CHECK("runs 7-9 and 13: 4 granules and 4 x 64 KiB",
	      r.released == 3 * G + 3 * S + 8192 + S + 4 * G + 4 * S);
	CHECK("granule 11 between the runs stays mapped, the runs do not",
	      pagemap_fd < 0 || (present(p + 11 * G + 4096) == 1 && present(p + 9 * G + 4096) == 0 &&
				 present(p + 13 * G + 8192) == 0 && present(p + 10 * G) == 0));
	an_pagerel_release(&r);
	CHECK("release zeroes", r.bits == NULL && r.released == 0);

	/* two threads noting every granule fifty times: each counted once */
	{
		pthread_t t;
		struct noter n;
		int started;

		an_pagerel_init(&r, p, FILE_BYTES, 1000 * (uint64_t)G);
		CHECK("two threads: init", r.bits != NULL);
		n.r = &r;
		n.p = p;
		started = pthread_create(&t, NULL, note_all, &n) == 0;
		note_all(&n);
		if (started)
			pthread_join(t, NULL);
		CHECK("two threads: 17 granules noted once each", r.noted == 17);
		touch(p, FILE_BYTES);
		an_pagerel_flush(&r);
		CHECK("two threads: the whole mapping released in one run", r.released == FILE_BYTES);
		CHECK("two threads: no page left mapped",
		      pagemap_fd < 0 || (present(p) == 0 && present(p + 8 * G) == 0 &&
					 present(p + FILE_BYTES - 1) == 0));
		an_pagerel_release(&r);
	}

	/* drop: the whole pages inside a range, at once */
	touch(p, FILE_BYTES);
	an_pagerel_drop(p + 100, 3 * 4096);
	CHECK("drop: the pages wholly inside go, the next granule stays",
	      pagemap_fd < 0 || (present(p + 4096) == 0 && present(p + 8192) == 0 && present(p + G + 4096) == 1));
	CHECK("drop: bytes read back", p[4096 + 5] == pattern(4096 + 5));
out:
	if (pagemap_fd >= 0)
		close(pagemap_fd);
	unlink(path);
	free(buf);
	return CHECK_DONE();
}
