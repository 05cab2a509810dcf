/* heapann.c - the one-command profiler: heapann [OPTIONS] [--] PROG [ARGS].
 * Runs PROG with libheapann preloaded and its snapshots on (at exit, on SIGUSR2),
 * waits for it, runs mprof-core on the program's last snapshot and removes the
 * private snapshot directory. libheapann.so and mprof-core are found relative to
 * this file (/proc/self/exe), never through a compiled-in path: beside it in the
 * build tree, or bin/../lib when installed. A C program rather than a sh script
 * so that the program's pid, its exit status (128+N for a signal) and signal
 * forwarding are exact, and no shell quoting stands between the user and PROG. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../annotate/signame.h"

#ifndef HA_PACKAGE_VERSION
#define HA_PACKAGE_VERSION "unknown"
#endif

/* heapann's own exit statuses; otherwise it exits with the program's */
#define EXIT_USAGE 2       /* as mprof-core */
#define EXIT_SELF 125      /* heapann failed before the program ran (as env(1)) */
#define EXIT_NOEXEC 126    /* PROG found but not executable (as shells) */
#define EXIT_NOTFOUND 127  /* PROG not found (as shells) */

#define DEFAULT_SNAPSHOT "exit,signal"

static const char usage_text[] =
"usage: heapann [OPTIONS] [--] PROG [ARGS...]\n"
"Run PROG under libheapann with snapshots on (when it exits, and on SIGUSR2),\n"
"then report its heap with mprof-core. The exit status is PROG's (128+N when a\n"
"signal N ended it).\n"
"\n"
"heapann options:\n"
"  --keep-core DIR     write the snapshots to DIR and keep them (default: a\n"
"                      private directory under $TMPDIR, removed after the report)\n"
"  --no-report         only take the snapshots (kept; implies no removal)\n"
"  --depth N           return addresses kept per block (HEAPANN_DEPTH, 0..256)\n"
"  --snapshot LIST     when to snapshot (HEAPANN_SNAPSHOT, default exit,signal):\n"
"                      exit, signal, signal:SIGNAME, abort\n"
"  --compress zstd|none  write the snapshots as PROG.PID.N.core.zst through the\n"
"                      zstd program (HEAPANN_SNAPSHOT_COMPRESS; default: as set\n"
"                      in the environment, else none)\n"
"  --version           print the version and exit\n"
"  -h, --help          this text\n"
"report options, passed to mprof-core (see mprof-core --help):\n"
"  --report LIST  --format FMT  -o, --output FILE  --top N  --threshold PCT\n"
"  --leak-depth N  --call-sites  --addr ADDR  --why ADDR  --refs ADDR\n"
"  --alloc-fn NAME  --ignore-fn NAME  --blocks  --weight bytes|blocks\n"
"  --folded-lines  --sysroot DIR  --debug-dir DIR  --symbolizer dw|gdb  --no-cache\n"
"  --threads N  -q, --quiet\n"
"Other HEAPANN_* variables in the environment reach PROG unchanged.\n"
"exit status: PROG's; 2 bad usage, 125 heapann failed before PROG ran,\n"
"126 PROG not executable, 127 PROG not found\n";

enum {
	OPT_KEEP = 256, OPT_NOREPORT, OPT_DEPTH, OPT_SNAPSHOT, OPT_VERSION, OPT_COMPRESS,
	OPT_PASS_ARG,     /* mprof-core options with an argument: index + this */
	OPT_PASS_FLAG = OPT_PASS_ARG + 64,
};

/* mprof-core's report options that heapann passes through (keep in step with
 * cli/main.c's longopts; input options such as --raw make no sense here). */
static const char *const pass_arg[] = {
	"--report", "--format", "--output", "--top", "--threshold", "--leak-depth", "--addr",
	"--why", "--refs", "--alloc-fn", "--ignore-fn", "--weight", "--sysroot", "--debug-dir",
	"--symbolizer", "--threads",
};
static const char *const pass_flag[] = { "--call-sites", "--blocks", "--folded-lines", "--quiet",
					 "--no-cache" };
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The child heapann waits for (the program, then mprof-core); 0 while none.
 * Signals that reach heapann are forwarded to it. */
static volatile pid_t child_pid;

/* mprof-core's argv: the passed-on options (pointers into argv and to static
 * strings), then PROG and CORE. Allocated once, lives until exit. */
static const char **mp_argv;

static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	/* a signal from the terminal (Ctrl-C: SI_KERNEL) reached the whole
	 * foreground process group, the child included: do not send it twice */
	if (si && si->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill(child_pid, sig);
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
/* those heapann was started with ignored (a shell ignores INT and QUIT for a
 * command run with &): left ignored, for heapann and the program alike */
static int ignored[NELEM(forwarded)];

static void signals_catch(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NELEM(forwarded); i++) {
		if (sigaction(forwarded[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) {
			ignored[i] = 1;
			continue;
		}
		sigaction(forwarded[i], &sa, NULL);
	}
}

/* In a new child, before exec: the actions heapann was started with, and its mask. */
static void signals_reset(const sigset_t *old)
{
	for (size_t i = 0; i < NELEM(forwarded); i++)
		if (!ignored[i])
			signal(forwarded[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void usage_error(const char *fmt, const char *arg)
{
	fputs("heapann: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see heapann --help)\n", stderr);
	exit(EXIT_USAGE);
}

/* The directory of this program's file, from /proc/self/exe, into dir. */
static int self_dir(char *dir, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= cap - 1)
		return -1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* The first of DIR/rel1, DIR/rel2 that exists (canonical) into out; -1 if none. */
static int find_beside(const char *dir, const char *rel1, const char *rel2, char *out)
{
	const char *rels[2] = { rel1, rel2 };
	char path[PATH_MAX];

	for (int i = 0; i < 2; i++) {
		if (!rels[i])
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, rels[i]) >= (int)sizeof(path))
			continue;
		if (access(path, R_OK) == 0 && realpath(path, out))
			return 0;
	}
	return -1;
}

/* PROG's file: PROG itself when it has a '/', else the first executable PROG on
 * $PATH, as execvp would run it. Returns 0, -ENOENT or -EACCES. */
static int resolve_prog(const char *prog, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	int seen = 0;

	if (strchr(prog, '/')) {
		if (snprintf(out, cap, "%s", prog) >= (int)cap)
			return -ENOENT;
		if (access(out, F_OK) != 0)
			return -ENOENT;
		return access(out, X_OK) == 0 ? 0 : -EACCES;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		struct stat st;

		if (snprintf(out, cap, "%.*s%s%s", (int)len, path, len ? "/" : "", prog) < (int)cap &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			seen = 1;
		}
		path += len;
		if (*path == ':')
			path++;
	}
	return seen ? -EACCES : -ENOENT;
}

/* Whether the library file at path knows the snapshot variables at all (a
 * libheapann.so built before snapshots would run the program and write nothing). */
static int lib_has_snapshots(const char *path)
{
	static const char needle[] = "HEAPANN_SNAPSHOT";
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	found = memmem(map, (size_t)st.st_size, needle, sizeof(needle) - 1) != NULL;
	munmap(map, (size_t)st.st_size);
	return found;
}

/* Wait for pid, retrying after signals. Returns the wait status, or -1. */
static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* The shell's view of a wait status: the exit code, or 128+N for signal N. */
static int shell_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_SELF;
}

/* One snapshot file in the directory: NAME.PID.N.core or NAME.PID.N.core.zst. */
struct snap {
	char name[NAME_MAX + 1];
	long pid;
	long n;
};

/* Parse "ANY.PID.N.core" or "ANY.PID.N.core.zst" (what libheapann writes).
 * Returns 0 on a match. */
static int snap_parse(const char *name, struct snap *s)
{
	size_t len = strlen(name);
	const char *p;
	char *end;

	if (len >= 14 && strcmp(name + len - 4, ".zst") == 0)
		len -= 4;
	if (len < 10 || len > NAME_MAX || strncmp(name + len - 5, ".core", 5))
		return -1;
	/* walk back over ".N" and ".PID" */
	p = name + len - 5;
	while (p > name && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == name + len - 5 || p == name || p[-1] != '.')
		return -1;
	s->n = strtol(p, &end, 10);
	p--;
	while (p > name && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == name || p[-1] != '.' || *p == '.')
		return -1;
	s->pid = strtol(p, &end, 10);
	snprintf(s->name, sizeof(s->name), "%s", name);
	return 0;
}

/* The program a snapshot file is of: NAME of "NAME.PID.N.core[.zst]" (the
 * executable's file name, which libheapann puts there) into out. */
static void snap_prog_name(const char *file, char *out, size_t cap)
{
	const char *end = file + strlen(file);
	int dots = 0;

	if (end - file > 4 && !strcmp(end - 4, ".zst"))
		end -= 4;
	end -= 5;   /* ".core" */
	while (end > file && dots < 2)
		if (*--end == '.')
			dots++;
	snprintf(out, cap, "%.*s", (int)(end - file), file);
}

/* Read exactly n bytes of f into buf (NULL: skip them). Returns 0 or -1. */
static int core_read(FILE *f, void *buf, size_t n)
{
	char tmp[4096];

	while (n) {
		size_t k = n < sizeof(tmp) ? n : sizeof(tmp), got = fread(buf ? buf : tmp, 1, k, f);

		if (got != k)
			return -1;
		if (buf)
			buf = (char *)buf + k;
		n -= k;
	}
	return 0;
}

/* A word of a core's note (8 or 4 bytes, the host's byte order: libheapann's
 * cores are of the host). */
static uint64_t core_word(const unsigned char *p, int w8)
{
	uint64_t v = 0;
	uint32_t v32;

	if (w8)
		memcpy(&v, p, 8);
	else
		memcpy(&v32, p, 4), v = v32;
	return v;
}

/* The path of the main program of the core at CORE (a ".zst" one through
 * "zstd -dc"), as the kernel's NT_FILE note names the file mapped at the
 * auxiliary vector's AT_ENTRY (it may end in " (deleted)"): into out.
 * Read in one pass (the notes follow the program headers in libheapann's
 * cores). Returns 0, or -1 when the core does not say. */
static int core_main_path(const char *core, char *out, size_t cap)
{
	size_t len = strlen(core);
	int zst = len > 4 && !strcmp(core + len - 4, ".zst"), rc = -1, w8;
	pid_t zp = -1;
	FILE *f = NULL;
	unsigned char eh[64], *notes = NULL;
	uint64_t phoff, pos, noff = 0, nsz = 0, entry = 0;
	unsigned phnum, phentsize;

	if (zst) {
		int fds[2];

		if (pipe(fds) < 0)
			return -1;
		zp = fork();
		if (zp == 0) {
			dup2(fds[1], 1);
			close(fds[0]);
			close(fds[1]);
			execlp("zstd", "zstd", "-dcq", "--", core, (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		if (zp < 0 || !(f = fdopen(fds[0], "r"))) {
			close(fds[0]);
			goto out;
		}
	} else if (!(f = fopen(core, "r"))) {
		return -1;
	}
	if (core_read(f, eh, 16) < 0 || memcmp(eh, "\177ELF", 4) || (eh[4] != 1 && eh[4] != 2))
		goto out;
	w8 = eh[4] == 2;
	if (core_read(f, eh + 16, w8 ? 48 : 36) < 0)
		goto out;
	phoff = core_word(eh + (w8 ? 32 : 28), w8);
	{
		uint16_t a, b;

		memcpy(&a, eh + (w8 ? 54 : 42), 2);
		memcpy(&b, eh + (w8 ? 56 : 44), 2);
		phentsize = a;
		phnum = b;
	}
	pos = w8 ? 64 : 52;
	if (phoff < pos || phoff - pos > (1u << 20) || core_read(f, NULL, phoff - pos) < 0 ||
	    phentsize < (w8 ? 56u : 32u) || phnum > 65535)
		goto out;
	pos = phoff;
	for (unsigned i = 0; i < phnum; i++) {
		unsigned char ph[64];
		uint32_t type;

		if (phentsize > sizeof(ph) || core_read(f, ph, phentsize) < 0)
			goto out;
		pos += phentsize;
		memcpy(&type, ph, 4);
		if (type == 4 /* PT_NOTE */ && !nsz) {
			noff = core_word(ph + (w8 ? 8 : 4), w8);
			nsz = core_word(ph + (w8 ? 32 : 16), w8);
		}
	}
	if (!nsz || nsz > (64u << 20) || noff < pos || noff - pos > (64u << 20) ||
	    core_read(f, NULL, noff - pos) < 0 || !(notes = malloc(nsz)) || core_read(f, notes, nsz) < 0)
		goto out;
	/* two passes over the notes: AT_ENTRY, then the NT_FILE entry holding it */
	for (int pass = 0; pass < 2 && rc < 0; pass++) {
		for (uint64_t o = 0; o + 12 <= nsz;) {
			uint32_t nn, dn, type;
			uint64_t d, e;
			unsigned ws = w8 ? 8 : 4;

			memcpy(&nn, notes + o, 4);
			memcpy(&dn, notes + o + 4, 4);
			memcpy(&type, notes + o + 8, 4);
			d = o + 12 + ((nn + 3ull) & ~3ull);
			e = d + ((dn + 3ull) & ~3ull);
			if (d > nsz || e > nsz || d + dn > nsz)
				break;
			if (pass == 0 && type == 6 /* NT_AUXV */) {
				for (uint64_t k = 0; k + 2 * ws <= dn; k += 2 * ws)
					if (core_word(notes + d + k, w8) == 9 /* AT_ENTRY */)
						entry = core_word(notes + d + k + ws, w8);
			} else if (pass == 1 && type == 0x46494c45 /* NT_FILE */ && entry && dn >= 2 * ws) {
				uint64_t count = core_word(notes + d, w8), names = d + 2 * ws + count * 3 * ws;
				const char *nm = (const char *)notes + names;

				if (count > dn / (3 * ws) || names > d + dn)
					break;
				for (uint64_t k = 0; k < count; k++) {
					uint64_t start = core_word(notes + d + 2 * ws + k * 3 * ws, w8);
					uint64_t end = core_word(notes + d + 2 * ws + k * 3 * ws + ws, w8);
					size_t l = strnlen(nm, (size_t)(notes + d + dn - (const unsigned char *)nm));

					if ((const unsigned char *)nm + l >= notes + d + dn)
						break;
					if (entry >= start && entry < end && l < cap) {
						memcpy(out, nm, l + 1);
						rc = 0;
						break;
					}
					nm += l + 1;
				}
			}
			o = e;
		}
	}
out:
	free(notes);
	if (f)
		fclose(f);
	if (zp > 0) {
		int st;

		while (waitpid(zp, &st, 0) < 0 && errno == EINTR)
			;
	}
	return rc;
}

/* The snapshots in dir: *snaps (malloc'd, the caller frees) sorted by pid then N. */
static int snap_cmp(const void *a, const void *b)
{
	const struct snap *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->n > y->n) - (x->n < y->n);
}

static size_t snaps_list(const char *dir, struct snap **snaps)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0, cap = 0;

	*snaps = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct snap s;

		if (snap_parse(e->d_name, &s) < 0)
			continue;
		if (n == cap) {
			struct snap *grown = realloc(*snaps, (cap = cap ? 2 * cap : 8) * sizeof(s));

			if (!grown)
				break;
			*snaps = grown;
		}
		(*snaps)[n++] = s;
	}
	closedir(d);
	if (n)
		qsort(*snaps, n, sizeof(**snaps), snap_cmp);
	return n;
}

/* The signal named in a HEAPANN_SNAPSHOT list ("signal" is SIGUSR2, "signal:NAME"
 * another) without its SIG prefix, into out; "" when the list takes no signal. */
static void snapshot_signal(const char *list, char *out, size_t cap)
{
	const char *p = list;

	out[0] = '\0';
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == 6 && !strncmp(p, "signal", 6)) {
			snprintf(out, cap, "USR2");
		} else if (len > 7 && !strncmp(p, "signal:", 7)) {
			const char *name = p + 7;
			size_t nlen = len - 7;

			if (nlen > 3 && !strncmp(name, "SIG", 3)) {
				name += 3;
				nlen -= 3;
			}
			snprintf(out, cap, "%.*s", (int)nlen, name);
		}
		p += len;
		if (*p == ',')
			p++;
	}
}

/* Remove heapann's private directory and everything in it (the cores, and
 * whatever a writer that died left); says so when it cannot. */
static void remove_private(const char *dir)
{
	char path[PATH_MAX * 2];
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	if (rmdir(dir) < 0)
		fprintf(stderr, "heapann: %s was not removed: %s\n", dir, strerror(errno));
}

static int list_has(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == wl && !strncmp(p, word, wl))
			return 1;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* A signal as HEAPANN_SNAPSHOT's "signal:NAME" takes it: libheapann's own
 * parser and names (annotate/signame.h); KILL and STOP cannot be caught.
 * Returns 1 when libheapann will take it. */
static int snapshot_signal_ok(const char *s, size_t len)
{
	int v = ha_signal_parse(s, s + len);

	return v > 0 && v != SIGKILL && v != SIGSTOP;
}

/* --snapshot LIST checked before the program runs: libheapann only warns about an
 * item it does not know, and then the run had no snapshot to report. */
static void snapshot_list_check(const char *list)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		char item[64];

		snprintf(item, sizeof(item), "%.*s", (int)(len < 60 ? len : 60), p);
		if (!len || (!(len == 4 && !strncmp(p, "exit", 4)) && !(len == 5 && !strncmp(p, "abort", 5)) &&
			     !(len == 6 && !strncmp(p, "signal", 6)) &&
			     !(len > 7 && !strncmp(p, "signal:", 7) && snapshot_signal_ok(p + 7, len - 7))))
			usage_error("--snapshot takes exit, signal, signal:SIGNAME and abort, not '%s'", item);
		p += len;
		if (*p == ',')
			p++;
	}
}

/* The report options checked before the program runs, so that a typo (--format
 * xml) does not cost a whole run: mprof-core parses them with /dev/null for PROG
 * and CORE, refuses bad usage with exit 2 before it opens anything, and otherwise
 * fails on /dev/null (exit 1, ignored). On exit 2 its message is passed on and
 * heapann exits 2 too. */
static void report_options_check(const char *mprof, int mp_argc)
{
	char msg[1024];
	int fds[2], st;
	ssize_t n, got = 0;
	pid_t pid;

	if (mp_argc == 1 || pipe2(fds, O_CLOEXEC) < 0)
		return;
	mp_argv[0] = mprof;
	mp_argv[mp_argc] = "/dev/null";
	mp_argv[mp_argc + 1] = "/dev/null";
	mp_argv[mp_argc + 2] = NULL;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], 2);
		if (null >= 0)
			dup2(null, 1);
		execv(mprof, (char **)mp_argv);
		_exit(EXIT_NOEXEC);
	}
	close(fds[1]);
	while (pid > 0 && got < (ssize_t)sizeof(msg) - 1 &&
	       ((n = read(fds[0], msg + got, sizeof(msg) - 1 - (size_t)got)) > 0 || (n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(fds[0]);
	mp_argv[mp_argc] = NULL;
	if (pid < 0)
		return;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_USAGE) {
		msg[got] = '\0';
		fputs(msg, stderr);
		exit(EXIT_USAGE);
	}
}

/* GLib before 2.76 serves g_slice_alloc from its own magazines: slabs of
 * whole pages cut into chunks, so a leaked GList node or GObject is a chunk
 * inside a live slab and no block of its own (a GLib program's leaks read 0
 * bytes definitely lost, the slabs "possibly lost"). memcheck has libglib take
 * malloc for each chunk (RUNNING_ON_VALGRIND), as G_SLICE=always-malloc does:
 * the program runs with it unless G_SLICE is set. In the forked child. */
static void slice_malloc(void)
{
	if (!getenv("G_SLICE"))
		setenv("G_SLICE", "always-malloc", 1);
}

#define NOPTS 7   /* heapann's own entries in main's longopts */

/* glibc keeps the stacks of finished threads for reuse (up to 40 MiB), and
 * what a thread left in its stack stays there: the lost report reads that
 * memory as a root, so a block a finished thread dropped was "still reachable"
 * (and the thread's dtv "possibly lost"), where memcheck, which frees glibc's
 * caches before it looks, says definitely lost. The program runs without the
 * cache (each thread's stack is unmapped when it is joined or ends detached),
 * unless GLIBC_TUNABLES already sets its size. In the forked child, before exec. */
static void no_stack_cache(void)
{
	static const char tunable[] = "glibc.pthread.stack_cache_size=0";
	const char *cur = getenv("GLIBC_TUNABLES");
	char *v;

	if (cur && strstr(cur, "glibc.pthread.stack_cache_size="))
		return;
	if (!cur || !*cur) {
		setenv("GLIBC_TUNABLES", tunable, 1);
		return;
	}
	v = malloc(strlen(cur) + sizeof(tunable) + 1);
	if (!v)
		return;
	sprintf(v, "%s:%s", cur, tunable);
	setenv("GLIBC_TUNABLES", v, 1);
}

int main(int argc, char **argv)
{
	static struct option longopts[] = {
		{ "keep-core", required_argument, 0, OPT_KEEP },
		{ "no-report", no_argument, 0, OPT_NOREPORT },
		{ "depth", required_argument, 0, OPT_DEPTH },
		{ "snapshot", required_argument, 0, OPT_SNAPSHOT },
		{ "version", no_argument, 0, OPT_VERSION },
		{ "help", no_argument, 0, 'h' },
		{ "compress", required_argument, 0, OPT_COMPRESS },
		/* then pass_arg[] and pass_flag[], filled in below */
		[NOPTS + NELEM(pass_arg) + NELEM(pass_flag)] = { 0, 0, 0, 0 },
	};
	char self[PATH_MAX], lib[PATH_MAX], mprof[PATH_MAX], dir[PATH_MAX];
	char prog_path[PATH_MAX], prog_exe[PATH_MAX], core[PATH_MAX * 2], sig[32];
	const char *keep = NULL, *depth = NULL, *snaplist = DEFAULT_SNAPSHOT, *compress = NULL;
	int report = 1, mp_argc = 1, c, errpipe[2], prog_status, st, exec_err = 0;
	struct snap *snaps = NULL;
	size_t nsnaps, nmine = 0, last = 0;
	sigset_t block, old;
	pid_t pid;

	for (size_t i = 0; i < NELEM(pass_arg); i++)
		longopts[NOPTS + i] = (struct option){ pass_arg[i] + 2, required_argument, 0,
						   OPT_PASS_ARG + (int)i };
	for (size_t i = 0; i < NELEM(pass_flag); i++)
		longopts[NOPTS + NELEM(pass_arg) + i] = (struct option){ pass_flag[i] + 2, no_argument, 0,
								     OPT_PASS_FLAG + (int)i };
	/* at most two mprof-core words per heapann word, plus PROG, CORE and NULL;
	 * kept until exit (a static, so that it is never a leak) */
	mp_argv = calloc(2 * (size_t)argc + 4, sizeof(*mp_argv));
	if (!mp_argv) {
		fputs("heapann: out of memory\n", stderr);
		return EXIT_SELF;
	}
	opterr = 0;
	/* "+": stop at PROG, so that PROG's own options stay PROG's */
	while ((c = getopt_long(argc, argv, "+ho:q", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_KEEP: keep = optarg; break;
		case OPT_NOREPORT: report = 0; break;
		case OPT_DEPTH: {
			char *end;
			long d = strtol(optarg, &end, 10);

			if (!*optarg || *end || d < 0 || d > 256)
				usage_error("--depth takes 0 to 256, not %s", optarg);
			depth = optarg;
			break;
		}
		case OPT_SNAPSHOT:
			if (!*optarg)
				usage_error("%s needs a list: exit, signal, signal:SIGNAME, abort", "--snapshot");
			snapshot_list_check(optarg);
			snaplist = optarg;
			break;
		case OPT_COMPRESS:
			if (strcmp(optarg, "zstd") && strcmp(optarg, "none") &&
			    !(strncmp(optarg, "zstd:", 5) == 0 && atoi(optarg + 5) >= 1 &&
			      atoi(optarg + 5) <= 19 && strspn(optarg + 5, "0123456789") == strlen(optarg + 5)))
				usage_error("--compress takes zstd, zstd:LEVEL (1 to 19) or none, not %s", optarg);
			compress = optarg;
			break;
		case OPT_VERSION: printf("heapann %s\n", HA_PACKAGE_VERSION); return 0;
		case 'h': fputs(usage_text, stdout); return 0;
		case 'o':   /* passed on as two words: mprof-core reads them the same way */
			mp_argv[mp_argc++] = "-o";
			mp_argv[mp_argc++] = optarg;
			break;
		case 'q': mp_argv[mp_argc++] = "--quiet"; break;
		default:
			if (c >= OPT_PASS_ARG && c < OPT_PASS_ARG + (int)NELEM(pass_arg)) {
				mp_argv[mp_argc++] = pass_arg[c - OPT_PASS_ARG];
				mp_argv[mp_argc++] = optarg;
			} else if (c >= OPT_PASS_FLAG && c < OPT_PASS_FLAG + (int)NELEM(pass_flag)) {
				mp_argv[mp_argc++] = pass_flag[c - OPT_PASS_FLAG];
			} else {
				usage_error("bad option or missing argument: %s", argv[optind - 1]);
			}
		}
	}
	if (optind >= argc)
		usage_error("%s", "no program to run: heapann [OPTIONS] [--] PROG [ARGS]");

	/* libheapann.so and mprof-core: beside this file (build/), or installed as
	 * PREFIX/bin/heapann with PREFIX/lib/libheapann.so */
	if (self_dir(self, sizeof(self)) < 0) {
		fputs("heapann: cannot read /proc/self/exe to find libheapann.so\n", stderr);
		return EXIT_SELF;
	}
	if (find_beside(self, "libheapann.so", "../lib/libheapann.so", lib) < 0) {
		fprintf(stderr, "heapann: libheapann.so is neither in %s nor in %s/../lib\n", self, self);
		return EXIT_SELF;
	}
	if (report && (find_beside(self, "mprof-core", NULL, mprof) < 0 || access(mprof, X_OK) != 0)) {
		fprintf(stderr, "heapann: mprof-core is not in %s (or --no-report)\n", self);
		return EXIT_SELF;
	}
	if (report)
		report_options_check(mprof, mp_argc);
	if (!lib_has_snapshots(lib))
		fprintf(stderr, "heapann: warning: %s cannot write snapshots (built before they "
			"existed?): there will be nothing to report\n", lib);

	switch (resolve_prog(argv[optind], prog_path, sizeof(prog_path))) {
	case 0: break;
	case -EACCES:
		fprintf(stderr, "heapann: %s: not executable\n", argv[optind]);
		return EXIT_NOEXEC;
	default:
		fprintf(stderr, "heapann: %s: %s\n", argv[optind],
			strchr(argv[optind], '/') ? "no such file" : "command not found");
		return EXIT_NOTFOUND;
	}

	/* where the snapshots go */
	if (keep) {
		if (mkdir(keep, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, "heapann: --keep-core %s: %s\n", keep, strerror(errno));
			return EXIT_SELF;
		}
		if (!realpath(keep, dir)) {
			fprintf(stderr, "heapann: --keep-core %s: %s\n", keep, strerror(errno));
			return EXIT_SELF;
		}
		/* an existing file, or a directory the program cannot write: every
		 * snapshot would fail after the whole run */
		if ((errno = ENOTDIR, !is_dir(dir)) || access(dir, W_OK | X_OK) < 0) {
			fprintf(stderr, "heapann: --keep-core %s: %s\n", keep, strerror(errno));
			return EXIT_SELF;
		}
	} else {
		const char *tmp = getenv("TMPDIR");

		if (!tmp || !*tmp)
			tmp = "/tmp";
		if (snprintf(dir, sizeof(dir), "%s/heapann.XXXXXX", tmp) >= (int)sizeof(dir) ||
		    !mkdtemp(dir)) {
			fprintf(stderr, "heapann: cannot make a directory under %s: %s\n", tmp,
				strerror(errno));
			return EXIT_SELF;
		}
	}

	/* run PROG; a close-on-exec pipe brings back exec's errno */
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		fprintf(stderr, "heapann: pipe: %s\n", strerror(errno));
		return EXIT_SELF;
	}
	signals_catch();
	sigfillset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid == 0) {
		const char *pre = getenv("LD_PRELOAD");
		char *preload = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
		int e;

		close(errpipe[0]);
		signals_reset(&old);
		if (!preload)
			_exit(EXIT_SELF);
		/* ours first; a preload the user already had stays */
		sprintf(preload, "%s%s%s", lib, pre && *pre ? ":" : "", pre && *pre ? pre : "");
		setenv("LD_PRELOAD", preload, 1);
		no_stack_cache();
		slice_malloc();
		setenv("HEAPANN_SNAPSHOT", snaplist, 1);
		setenv("HEAPANN_SNAPSHOT_DIR", dir, 1);
		if (depth)
			setenv("HEAPANN_DEPTH", depth, 1);
		if (compress)
			setenv("HEAPANN_SNAPSHOT_COMPRESS", compress, 1);
		execv(prog_path, argv + optind);
		e = errno;
		if (write(errpipe[1], &e, sizeof(e)) != (ssize_t)sizeof(e))
			e = errno;
		_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	if (pid < 0) {
		fprintf(stderr, "heapann: fork: %s\n", strerror(errno));
		return EXIT_SELF;
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(errpipe[1]);
	while ((st = (int)read(errpipe[0], &exec_err, sizeof(exec_err))) < 0 && errno == EINTR)
		;
	close(errpipe[0]);
	if (st == (int)sizeof(exec_err)) {
		st = wait_child(pid);
		fprintf(stderr, "heapann: %s: %s\n", prog_path, strerror(exec_err));
		if (!keep)
			rmdir(dir);
		return exec_err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
	}
	/* the file the process really runs (a script's interpreter): read now, gone
	 * once it exits */
	{
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
		n = readlink(link, prog_exe, sizeof(prog_exe) - 1);
		if (n > 0 && (size_t)n < sizeof(prog_exe) - 1 && !strstr(prog_exe, " (deleted)")) {
			prog_exe[n] = '\0';
		} else if (!realpath(prog_path, prog_exe)) {
			snprintf(prog_exe, sizeof(prog_exe), "%s", prog_path);
		}
	}
	snapshot_signal(snaplist, sig, sizeof(sig));
	if (sig[0])
		fprintf(stderr, "heapann: %s runs as pid %ld; snapshots go to %s; take one now with: "
			"kill -%s %ld\n", argv[optind], (long)pid, dir, sig, (long)pid);
	else
		fprintf(stderr, "heapann: %s runs as pid %ld; snapshots go to %s\n", argv[optind],
			(long)pid, dir);

	st = wait_child(pid);
	child_pid = 0;
	if (st < 0) {
		fprintf(stderr, "heapann: waitpid: %s\n", strerror(errno));
		return EXIT_SELF;
	}
	prog_status = shell_status(st);
	if (WIFSIGNALED(st))
		fprintf(stderr, "heapann: %s was killed by signal %d (%s)\n", argv[optind],
			WTERMSIG(st), strsignal(WTERMSIG(st)));

	nsnaps = snaps_list(dir, &snaps);
	for (size_t i = 0; i < nsnaps; i++)
		if (snaps[i].pid == (long)pid) {
			nmine++;
			last = i;   /* sorted by N: the last one is the latest */
		}
	if (!nmine) {
		if (WIFSIGNALED(st) && !list_has(snaplist, "abort"))
			fprintf(stderr, "heapann: no snapshot of pid %ld: it died of a signal before its "
				"exit snapshot (--snapshot exit,signal,abort also takes one on a crash)\n",
				(long)pid);
		else
			fprintf(stderr, "heapann: no snapshot of pid %ld in %s (did it exit with _exit() "
				"or its own exit system call, as Go programs do, exec another program or "
				"clear LD_PRELOAD?)\n", (long)pid, dir);
		if (nsnaps && keep)
			fprintf(stderr, "heapann: %zu snapshots of other processes (its children) are "
				"in %s\n", nsnaps, dir);
		else if (nsnaps)
			fprintf(stderr, "heapann: %zu snapshots of other processes (its children) were "
				"taken: --keep-core DIR keeps them\n", nsnaps);
		if (!keep)
			remove_private(dir);
		free(snaps);
		return prog_status;
	}
	snprintf(core, sizeof(core), "%s/%s", dir, snaps[last].name);
	if (nmine > 1) {
		fprintf(stderr, "heapann: %zu snapshots of pid %ld; this is the last, %s\n", nmine,
			(long)pid, core);
		if (keep || !report) {
			for (size_t i = 0; i < nsnaps; i++)
				if (snaps[i].pid == (long)pid && i != last)
					fprintf(stderr, "heapann:   the others: mprof-core %s %s/%s\n",
						prog_exe, dir, snaps[i].name);
		} else {
			fprintf(stderr, "heapann: to report the others too, run with --keep-core DIR, "
				"then: mprof-core %s DIR/FILE\n", prog_exe);
		}
	}
	if (nsnaps > nmine)
		fprintf(stderr, "heapann: %zu more snapshot%s, of %s, in %s%s\n", nsnaps - nmine,
			nsnaps - nmine == 1 ? "" : "s",
			nsnaps - nmine == 1 ? "a child process" : "its child processes", dir,
			keep || !report ? "" : nsnaps - nmine == 1 ? " (removed with it: --keep-core keeps it)" :
			" (removed with it: --keep-core keeps them)");

	/* the program exec'd another (same pid, LD_PRELOAD kept): its last
	 * snapshot is of that one, named after it. Its file is the one the
	 * core's NT_FILE note maps at AT_ENTRY, when it is not the file started
	 * (a file of that name on PATH may be another: a script's "exec
	 * /some/dir/sqlite3"); PATH only when the core's path cannot be opened,
	 * and only the file the core names. A
	 * " (deleted)" file is never looked for (another file of that name is
	 * not it): the snapshot is kept. Else left to the user (mprof-core checks
	 * the build-id anyway). */
	{
		char name[NAME_MAX + 1], found[PATH_MAX], cpath[PATH_MAX], real[PATH_MAX];
		const char *base = strrchr(prog_exe, '/');
		int have = core_main_path(core, cpath, sizeof(cpath)) == 0, on_path = 0;

		snap_prog_name(snaps[last].name, name, sizeof(name));
		base = base ? base + 1 : prog_exe;
		if (have && !strstr(cpath, " (deleted)") && realpath(cpath, found)) {
			/* the core's file: another than the one started (which is read
			 * when the process has started, maybe after the exec) */
			if (strcmp(found, prog_exe) != 0) {
				snprintf(prog_exe, sizeof(prog_exe), "%s", found);
				fprintf(stderr, "heapann: pid %ld ended as %s (it exec'd it): reporting "
					"that program's snapshot\n", (long)pid, prog_exe);
			}
		} else if (name[0] && strcmp(name, base) != 0) {
			if (have && strstr(cpath, " (deleted)")) {
				fprintf(stderr, "heapann: pid %ld ended as %s (it exec'd it, the file is gone): "
					"the snapshot is kept: %s\n", (long)pid, cpath, core);
			} else if (have && resolve_prog(name, found, sizeof(found)) == 0 && realpath(found, real) &&
				   !strcmp(real, cpath)) {
				snprintf(prog_exe, sizeof(prog_exe), "%s", real);
				fprintf(stderr, "heapann: pid %ld ended as %s (it exec'd it): reporting "
					"that program's snapshot\n", (long)pid, prog_exe);
				on_path = 1;
			} else {
				fprintf(stderr, "heapann: pid %ld ended as %s (it exec'd it), whose file %s: "
					"the snapshot is kept: %s; report it with: mprof-core "
					"/path/to/%s %s\n", (long)pid, have ? cpath : name,
					have ? "cannot be opened" : "the core does not name", core, name, core);
			}
			if (!on_path) {
				free(snaps);
				return prog_status;
			}
		}
	}
	if (!report) {
		fprintf(stderr, "heapann: snapshot kept: %s; report it with: mprof-core %s %s\n", core,
			prog_exe, core);
		free(snaps);
		return prog_status;
	}

	mp_argv[0] = mprof;
	mp_argv[mp_argc++] = prog_exe;
	mp_argv[mp_argc++] = core;
	mp_argv[mp_argc] = NULL;
	fflush(stdout);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid == 0) {
		signals_reset(&old);
		execv(mprof, (char **)mp_argv);
		fprintf(stderr, "heapann: %s: %s\n", mprof, strerror(errno));
		_exit(EXIT_NOEXEC);
	}
	if (pid > 0)
		child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	st = pid > 0 ? wait_child(pid) : -1;
	child_pid = 0;
	if (st < 0 || !WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3)) {
		/* keep the cores to try again, and say where they are */
		fprintf(stderr, "heapann: the report failed; the snapshot is kept: %s\n", core);
		free(snaps);
		return prog_status;
	}
	if (!keep)
		remove_private(dir);
	free(snaps);
	return prog_status;
}
