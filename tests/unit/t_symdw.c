/* t_symdw.c - the libdw symbolizer without gdb: raw mode over this test's own
 * executable (a PIE read at its link addresses), names and lines of a marked
 * function, the dispatch functions on bad arguments, error messages for bad
 * files, and no descriptor or handle left open after sym_free(); the same
 * marker in a stripped copy whose compressed debug file is found by build-id
 * (read through the inflated copy, sym/dw_inflate.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sym.h"

static void *marker_ret;
static int marker_line;

__attribute__((noinline)) static void t_record(void)
{
	marker_ret = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void t_marker(void)
{
	marker_line = __LINE__ + 1;
	t_record();
	__asm__ volatile("" ::: "memory");
}

static uintptr_t main_base;

/* How many descriptors of this process are the inflated debug-file copy
 * ("memfd:mprof-debuginfo"). */
static int t_memfd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char path[300], target[300];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof target - 1);
		if (len > 0) {
			target[len] = '\0';
			n += strstr(target, "memfd:mprof-debuginfo") != NULL;
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* The marker's innermost frame through a symbolizer for opt ("" when none). */
static void t_marker_frame(const struct sym_options *opt, uint64_t addr, int *memfds, char *out, size_t cap)
{
	struct sym_error err;
	struct symbolizer *s = sym_dw_open(opt, &err);
	const struct sym_table *t = NULL;
	snprintf(out, cap, "%s", "");
	if (s && sym_resolve(s, &addr, 1, &t, &err) == 0 && t->nlocs == 1 && t->locs[0].nframes == 1) {
		const struct sym_frame *f = &t->frames[t->locs[0].first];
		snprintf(out, cap, "%s@%s:%u", f->function ? f->function : "?", f->file ? f->file : "?", f->line);
	}
	if (memfds)
		*memfds = t_memfd_count();
	sym_free(s);
}

static int t_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	main_base = info->dlpi_addr;  /* the first object is the program */
	return 1;
}

int main(void)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	CHECK("readlink /proc/self/exe", len > 0);
	if (len <= 0)
		return CHECK_DONE();
	exe[len] = '\0';
	t_marker();
	dl_iterate_phdr(t_phdr_cb, NULL);
	uint64_t link_ret = (uint64_t)((uintptr_t)marker_ret - main_base);

	int fds0 = check_count_fds();
	struct sym_options opt = { .exe = exe };
	struct sym_error err;
	for (int round = 0; round < 5; round++) {
		struct symbolizer *s = sym_dw_open(&opt, &err);
		if (round == 0)
			CHECK("raw open of own exe", s != NULL);
		if (!s)
			break;
		uint64_t addrs[3] = { link_ret, 0x7fffffff0000ull, link_ret };
		const struct sym_table *t = NULL;
		int rc = sym_resolve(s, addrs, 3, &t, &err);
		if (round == 0) {
			CHECK("resolve returns 0", rc == 0);
			CHECK("one loc per address", t && t->nlocs == 3);
			const struct sym_loc *l = &t->locs[0];
			const struct sym_frame *f = l->nframes ? &t->frames[l->first] : NULL;
			CHECK("marker: one frame", l->nframes == 1);
			CHECK("marker: function name", f && f->function && !strcmp(f->function, "t_marker"));
			CHECK("marker: line", f && f->line == (unsigned)marker_line);
			CHECK("marker: file", f && f->file && strstr(f->file, "tests/unit/t_symdw.c"));
			CHECK("marker: not inlined", f && !f->inlined);
			CHECK("marker: module is the exe", l->module && !strcmp(l->module, exe));
			CHECK("marker: module offset is the link address", l->modoff == link_ret);
			CHECK("marker: no flags", l->flags == 0);
			CHECK("address past the exe: no module", t->locs[1].flags == SYM_NO_MODULE && t->locs[1].nframes == 0);
			CHECK("same address twice: same interned name",
			      t->locs[2].nframes == 1 && t->frames[t->locs[2].first].function == f->function);
			CHECK("no notes", sym_notes(s) == NULL);
			rc = sym_resolve(s, addrs, 0, &t, &err);
			CHECK("empty batch", rc == 0 && t->nlocs == 0);
		}
		sym_free(s);
	}
	CHECK("no descriptor left open after sym_free", check_count_fds() == fds0);

	/* a stripped copy whose zlib-compressed debug file lies under
	 * DIR/.build-id/xx/rest.debug: the inflated copy is used, same answer
	 * as libdw reading the file itself (the reference path) */
	char dir[] = "/tmp/t_symdw.XXXXXX", cmd[20000], stripped[4200];
	if (mkdtemp(dir)) {
		snprintf(stripped, sizeof stripped, "%s/prog", dir);
		snprintf(cmd, sizeof cmd,
			 "id=$(readelf -n '%s' | awk '/Build ID/ { print $3 }') && [ -n \"$id\" ] && "
			 "mkdir -p '%s/.build-id/'$(echo $id | cut -c1-2) && "
			 "objcopy --only-keep-debug --compress-debug-sections=zlib '%s' "
			 "'%s/.build-id/'$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
			 "objcopy --strip-debug '%s' '%s'", exe, dir, exe, dir, exe, stripped);
		if (system(cmd) != 0) {
			printf("# readelf or objcopy missing or failed: build-id case skipped\n");
		} else {
			const char *dirs[] = { dir, NULL };
			struct sym_options zo = { .exe = stripped, .debug_dirs = dirs };
			char fast[4400], ref[4400], want[64];
			int memfds = -1;
			t_marker_frame(&zo, link_ret, &memfds, fast, sizeof fast);
			zo.flags = SYM_DW_REFERENCE;
			t_marker_frame(&zo, link_ret, NULL, ref, sizeof ref);
			snprintf(want, sizeof want, "t_marker@");
			printf("# build-id debug file: fast %s, reference %s, %d inflated cop%s open\n", fast, ref,
			       memfds, memfds == 1 ? "y" : "ies");
			CHECK("build-id debug file: the inflated copy is open after resolving", memfds == 1);
			CHECK("build-id debug file: the marker's function, file and line",
			      !strncmp(fast, want, strlen(want)) && strstr(fast, "tests/unit/t_symdw.c:") &&
			      atoi(strrchr(fast, ':') + 1) == marker_line);
			CHECK("build-id debug file: the same frame as the reference path", !strcmp(fast, ref));
			CHECK("build-id debug file: no copy left open after sym_free", t_memfd_count() == 0);
		}
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		(void)!system(cmd);
	}

	opt.exe = "/nonexistent/prog";
	CHECK("missing exe fails", sym_dw_open(&opt, &err) == NULL);
	CHECK("missing exe: message names it", strstr(err.msg, "/nonexistent/prog") != NULL && err.code == SYM_EIO);
	opt.exe = exe;
	opt.core = exe;
	CHECK("exe as core fails", sym_dw_open(&opt, &err) == NULL);
	CHECK("exe as core: not a core", strstr(err.msg, "not a core file") != NULL && err.code == SYM_EFORMAT);
	opt.core = "/dev/null";
	CHECK("empty core fails", sym_dw_open(&opt, &err) == NULL && strstr(err.msg, "/dev/null: not an ELF file"));
	opt.core = NULL;
	opt.sysroot = "/nonexistent/root";
	CHECK("bad sysroot fails", sym_dw_open(&opt, &err) == NULL && strstr(err.msg, "/nonexistent/root"));
	opt.sysroot = NULL;
	opt.exe = NULL;
	CHECK("no exe fails", sym_dw_open(&opt, &err) == NULL && err.code == SYM_EARG);
	CHECK("no descriptor left open by failed opens", check_count_fds() == fds0);

	const struct sym_table *t = NULL;
	CHECK("resolve on NULL symbolizer fails", sym_resolve(NULL, NULL, 0, &t, &err) == -1);
	CHECK("notes of NULL", sym_notes(NULL) == NULL);
	sym_free(NULL);
	CHECK("sym_free(NULL) is fine", 1);
	return CHECK_DONE();
}
