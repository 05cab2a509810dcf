/* noblocks.c - why a core holds nothing of libheapann's (issue 13). A core of a
 * program that ran without the library is the commonest first-time mistake, and
 * an empty report with exit 0 looks like a program that allocates nothing. The
 * core itself tells the likely cause: the environment on the main stack
 * (LD_PRELOAD set but not loaded, e.g. a relative path), or no dynamic loader
 * mapped (a static program, which LD_PRELOAD cannot reach). */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* A basename of path that starts with prefix. */
static int base_starts(const char *path, const char *prefix)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, prefix, strlen(prefix));
}

/* The value of LD_PRELOAD in the environment strings of the core, searched in the
 * stack segments of its threads (the environment sits at the top of the main
 * thread's stack), into out. Returns 1 when found. */
static int find_preload(const struct cp_image *img, char *out, size_t cap)
{
	static const char key[] = "LD_PRELOAD=";

	for (size_t t = 0; t < img->nthreads; t++) {
		const struct cp_segment *s = cp_image_segment(img, img->threads[t].sp);
		const unsigned char *p, *end;

		if (!s || !s->avail || s->offset + s->avail > img->map_size)
			continue;
		p = img->map + s->offset;
		end = p + s->avail;
		while (p < end) {
			const unsigned char *hit = memmem(p, (size_t)(end - p), key, sizeof(key) - 1);
			const unsigned char *v;
			size_t n = 0;

			if (!hit)
				break;
			p = hit + 1;
			/* a string of its own: NUL before it (or the segment's start) */
			if (hit > img->map + s->offset && hit[-1] != '\0')
				continue;
			v = hit + sizeof(key) - 1;
			while (v + n < end && v[n] && n + 1 < cap)
				n++;
			memcpy(out, v, n);
			out[n] = '\0';
			return 1;
		}
	}
	return 0;
}

/* 1 when the program file has no PT_INTERP (static, or static-pie): what a core
 * without a file list (qemu-user's) cannot tell by its mappings. 0 otherwise, or
 * when the file cannot be read. */
static int prog_is_static(const char *prog)
{
	int fd = open(prog, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = 0;
	size_t n = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0 && n) {
		rc = 1;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				rc = 0;
		}
	}
	elf_end(e);
	close(fd);
	return rc;
}

/* A core with nothing of libheapann's in the memory it holds, where memory it
 * lacks could hold the heap (a kernel's coredump_filter without anonymous
 * memory, MADV_DONTDUMP, a size limit): "0 blocks" would be a wrong answer.
 * Fills msg with one line naming what is missing and the likely cause; returns
 * -1. */
static int lacks_heap(const struct cp_image *img, char *msg, size_t cap)
{
	char a[32];
	size_t nsegs = 0;
	uint64_t wr = cli_missing_writable(img, &nsegs);

	if (img->truncated && !wr)
		snprintf(msg, cap, "%s: no block annotated by libheapann and no statistics region "
			 "in the part of the core the file holds: the file is truncated (a core "
			 "size limit, ulimit -c, or a full disk); take the core again without the "
			 "limit", img->path);
	else if (img->truncated)
		snprintf(msg, cap, "%s: no block annotated by libheapann and no statistics region "
			 "in the part of the core the file holds: %s bytes of writable memory in %zu "
			 "segments (the heap among them) are missing: the file is truncated (a core "
			 "size limit, ulimit -c, or a full disk); take the core again without the "
			 "limit", img->path, fmt_num(a, wr), nsegs);
	else
		snprintf(msg, cap, "%s: no block annotated by libheapann and no statistics region "
			 "in the memory the core holds: %s bytes of writable memory in %zu segments "
			 "(the heap among them) were not dumped: the process's coredump_filter left "
			 "out anonymous memory (/proc/PID/coredump_filter needs bit 0: the default "
			 "is 0x33), or the heap was marked MADV_DONTDUMP", img->path,
			 fmt_num(a, wr), nsegs);
	return -1;
}

int cli_core_diagnose_empty(const struct cli_profile *p, const char *prog, char *msg, size_t cap)
{
	const struct cp_image *img = p->img;
	char pre[256];
	unsigned lt, lm;
	size_t i;
	int dynamic = 0, missing = 0;
	size_t n;

	msg[0] = '\0';
	if (img->kind != CP_KIND_CORE || p->scan.nblocks || p->scan.ndamaged || p->scan.nstale ||
	    p->have_stats)
		return 0;
	for (i = 0; i < img->nsegs; i++)
		if ((img->segs[i].flags & PF_W) && img->segs[i].avail < img->segs[i].memsz)
			missing = 1;
	for (i = 0; i < img->nfiles; i++) {
		/* loaded but nothing left (HEAPANN_STATS=0 and every block freed): a
		 * real, empty answer; unless memory the core lacks could hold the
		 * heap and the region, which is no answer */
		if (base_starts(img->files[i].path, "libheapann"))
			return missing || img->truncated ? lacks_heap(img, msg, cap) : 0;
		if (base_starts(img->files[i].path, "ld-linux") || base_starts(img->files[i].path, "ld-musl") ||
		    base_starts(img->files[i].path, "ld.so") || base_starts(img->files[i].path, "ld64.so"))
			dynamic = 1;
	}
	n = (size_t)snprintf(msg, cap, "%s: no block annotated by libheapann and no statistics "
			     "region: ", img->path);
	if (n >= cap)
		return -1;
	/* qemu-user cores have no file list: the program file says whether it is static */
	if ((img->nfiles && !dynamic) || (!img->nfiles && !img->truncated && !missing &&
					  prog_is_static(prog))) {
		/* no loader: an LD_PRELOAD in its environment never mattered; the kit's
		 * blocks could hide in memory the core lacks */
		if (img->truncated || missing)
			return lacks_heap(img, msg, cap);
		snprintf(msg + n, cap - n, "%s is statically linked, so LD_PRELOAD cannot reach it: "
			 "link it with the static kit (pkg-config --libs heapann-static)", prog);
	} else if (!img->nfiles && (img->truncated || missing)) {
		/* no file list (cut off with the notes, or a qemu-user core): the
		 * missing memory is the likelier cause than the preload */
		return lacks_heap(img, msg, cap);
	} else if (find_preload(img, pre, sizeof(pre)) && strstr(pre, "heapann")) {
		if (pre[0] != '/')
			snprintf(msg + n, cap - n, "its environment has LD_PRELOAD=%s, a relative path "
				 "that the loader looked for from the program's working directory and "
				 "skipped; give an absolute path, or run heapann %s", pre, prog);
		else if (cli_elf_file_kind(pre, &lt, &lm) == 0 && lm != img->machine)
			snprintf(msg + n, cap - n, "its environment has LD_PRELOAD=%s, a library for %s "
				 "that the loader skipped in a program for %s: libheapann.so is built for "
				 "the host only; link a program for another machine with the static kit "
				 "built for it (README: Static programs and firmware)", pre,
				 cli_machine_name(lm), cli_machine_name(img->machine));
		else
			snprintf(msg + n, cap - n, "its environment has LD_PRELOAD=%s, but the loader "
				 "did not load it (is the file there, built for this machine?)", pre);
	} else {
		snprintf(msg + n, cap - n, "the program ran without libheapann: run it as heapann %s "
			 "or with LD_PRELOAD=/absolute/path/libheapann.so (a relative LD_PRELOAD that "
			 "the loader cannot find is skipped; a static program needs the static kit)",
			 prog);
	}
	return -1;
}
