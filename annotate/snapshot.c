/* snapshot.c - HEAPANN_SNAPSHOT=exit,signal[:SIG],abort: libheapann writes an ELF
 * core of its own process, with no kernel core_pattern, no ptrace and no gdb.
 *
 * The thread taking a snapshot notes its registers (the signal's ucontext, or
 * getcontext at exit) and clone()s a child with no exit signal: a copy-on-write
 * image of the whole process in one thread, invisible to the program's own
 * waitpid(-1) and SIGCHLD. The child writes DIR/PROG.PID.N.core of itself and
 * exits; the parent waits for it, or (HEAPANN_SNAPSHOT_WAIT=0, signal snapshots)
 * goes on at once: then a vfork-like middle process forks the writer and exits,
 * so the writer is re-parented and reaped by init, never a zombie of ours.
 * The child is made by clone(2) on a stack of its own, not by fork(): no atfork
 * handler runs and no allocator lock is taken, so a thread interrupted inside
 * malloc (or inside the unwinder) cannot deadlock it, nor can another thread
 * holding either. In the child only system calls run, into mmap'd memory: no
 * malloc, no stdio, no locks. Every handler is async-signal-safe and keeps errno.
 * HEAPANN_SNAPSHOT_COMPRESS=zstd: the writer runs the zstd program (not libzstd:
 * the same code goes into firmware) and writes the core into a pipe to it, in
 * file order, holes as zeros, giving PROG.PID.N.core.zst; when zstd is missing
 * or fails, it says so and writes the plain core from the same image.
 */
#include "snapshot.h"
#include "internal.h"
#include "heapann_note.h"

#if HA_HAVE_SNAPSHOT
#include "signame.h"
#include <elf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <asm/prctl.h>

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif

#define SNAP_MAX_SIGNALS 8
#define SNAP_PAGE 4096u            /* x86-64 */
#define SNAP_RUN_MAX (8u << 20)    /* bytes per pwrite */
#define SNAP_CHILD_STACK (1u << 20)   /* the writer's stack (and the middle process's) */
#define SNAP_ZSTD_STACK (64u << 10)   /* the zstd process's, until its execve */

/* ---- options (read once by the constructor, without allocating) ---- */
static int snap_on_exit;                    /* "exit" */
static int snap_on_abort;                   /* "abort" */
static int snap_signals[SNAP_MAX_SIGNALS];  /* "signal[:SIG]" */
static int snap_nsignals;
static int snap_nowait;                     /* HEAPANN_SNAPSHOT_WAIT=0 */
static int snap_quiet;                      /* HEAPANN_QUIET=1 */
static char snap_dir[PATH_MAX];             /* absolute, no trailing slash (except "/") */
static char snap_prog[256];                 /* basename of /proc/self/exe */
static unsigned snap_count;                 /* snapshots of this process so far */
static int snap_compress_zstd;              /* HEAPANN_SNAPSHOT_COMPRESS=zstd[:LEVEL] */
static char snap_zstd_level[8] = "-3";      /* zstd's level option */
static char snap_zstd[PATH_MAX];            /* the zstd program ("": not found) */

/* What the writer needs from the thread that took the snapshot. Lives on that
 * thread's stack; the child reads its own copy. */
struct snap_job {
	unsigned n;                 /* this snapshot's number N (from 1) */
	int signo;                  /* the signal that asked for it, 0 at exit */
	pid_t pid, tid, ppid;       /* of the process and thread taking it */
	int has_info;               /* siginfo and fpregs are valid (signal snapshots) */
	siginfo_t info;             /* the signal's siginfo */
	elf_gregset_t regs;         /* user_regs_struct order (NT_PRSTATUS pr_reg) */
	elf_fpregset_t fpregs;      /* fxsave area (NT_PRFPREG), signal snapshots only */
	uintptr_t skip_lo, skip_hi; /* the writer's own stack: left out of the core */
	struct snap_thread *others; /* the other threads blocked in a system call */
	unsigned nothers;
	struct snap_hint *hints;    /* the threads that were running: where their stacks are */
	unsigned nhints;
};

/* A thread that was running (not blocked in a system call) when a snapshot was
 * taken: no registers of it are known, only an address inside its stack from
 * the registry below (HEAPANN_NT_STACKS, include/heapann_note.h). */
struct snap_hint {
	uint64_t tid, at;
};

/* Another thread of the process, blocked in a system call when the snapshot was
 * taken: what /proc/self/task/TID/syscall shows of it (its other registers are
 * not known). Threads that were running are not listed. */
struct snap_thread {
	pid_t tid;
	long nr;                    /* system call number, -1 when blocked outside one */
	unsigned long args[6];      /* its arguments (rdi, rsi, rdx, r10, r8, r9) */
	unsigned long sp, pc;
};
#define SNAP_THREADS_ROOM (640u << 10) /* bytes of the writer's stack mapping for them: 8,192
					* threads (64 KiB held 819: the rest of 1,000 had no
					* registers and no mention) */
#define SNAP_HINTS_ROOM (16u << 10)    /* and for the running threads' hints, after them */

/* ---- the registry of threads' stacks ----
 * Each thread, at its first call of libheapann once snapshots are on, claims a
 * slot with its tid and an address in its own stack: its thread pointer (glibc
 * keeps the thread's struct pthread at the top of its stack mapping, of a stack
 * given by pthread_attr_setstack too; the frame of that first call might be on a
 * sigaltstack or a coroutine's stack, memory the program may later unmap and
 * reuse for heap), or for the main thread (whose TLS ld.so allocates elsewhere)
 * a frame of libheapann's constructor. The slot is given back when
 * the thread exits (a key's destructor). A snapshot looks up the threads it found
 * running, so that mprof-core knows their stacks for stacks: a header magic that
 * malloc left in a register spill there is no damaged header (run-snapshot's
 * threads section read 1 in 10 of such cores as damaged). Threads past
 * SNAP_STACKS at once go without. */
#define SNAP_STACKS 1024
static struct {
	int tid;            /* 0: free; -1: being claimed */
	uintptr_t at;
} snap_stacks[SNAP_STACKS];
static unsigned snap_stacks_hi;          /* slots [0, hi) have been used */
static int snap_stacks_on;               /* set by snap_init: snapshots are on */
static pthread_key_t snap_stacks_key;
static HA_TLS int snap_stack_mine;       /* 1 + this thread's slot; -1: none free */

extern char **environ;

/* Value of NAME in environ, or NULL (no getenv: works before libc is ready). */
static const char *snap_env(const char *name)
{
	size_t n = strlen(name);

	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return 0;
}

/* The errno names a writer meets most, else "error N" (strerror may allocate). */
static void snap_errno(struct ha_line *l, int e)
{
	static const struct { int e; const char *s; } names[] = {
		{ EACCES, "Permission denied" }, { ENOENT, "No such file or directory" },
		{ ENOSPC, "No space left on device" }, { EROFS, "Read-only file system" },
		{ EDQUOT, "Disk quota exceeded" }, { EFBIG, "File too large" },
		{ ENOMEM, "Cannot allocate memory" }, { EAGAIN, "Resource temporarily unavailable" },
		{ EIO, "Input/output error" }, { ENOTDIR, "Not a directory" },
		{ ENAMETOOLONG, "File name too long" }, { EPERM, "Operation not permitted" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e) {
			ha_line_str(l, names[i].s);
			return;
		}
	ha_line_str(l, "error ");
	ha_line_num(l, (unsigned long)e, 10);
}

/* "heapann: snapshot failed: WHERE: WHAT: ERRNO" (WHAT "" and E 0 leave theirs out) */
static void snap_fail(const char *where, const char *what, int e)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: snapshot failed: ");
	ha_line_str(&l, where);
	if (what[0]) {
		ha_line_str(&l, ": ");
		ha_line_str(&l, what);
	}
	if (e) {
		ha_line_str(&l, ": ");
		snap_errno(&l, e);
	}
	ha_line_send(&l);
}

/* ---- the child: write the core ---- */

/* One line of /proc/self/maps, and where it goes in the core. */
struct snap_map {
	uintptr_t start, end;       /* [start, end) */
	uintptr_t pgoff;            /* file offset in bytes */
	uint32_t pflags;            /* PF_R | PF_W | PF_X */
	uint8_t file;               /* file-backed: listed in NT_FILE */
	uint8_t anon;               /* private anonymous: untouched or zero pages are holes */
	uint8_t dump;               /* 0 described only, 1 whole, 2 first page (ELF header) */
	const char *path;           /* into the maps text, NUL-terminated there */
	uint64_t filesz, offset;    /* in the core */
};

/* The writer's memory: mmap'd, so the heap is never touched. */
struct snap_work {
	char *text;                 /* /proc/self/maps, then NUL-terminated lines */
	size_t text_cap;
	struct snap_map *maps;
	size_t nmaps;
	size_t maps_cap;            /* bytes of the maps array's mapping */
	unsigned char *notes;       /* the PT_NOTE segment */
	size_t notes_cap, notes_len;
	unsigned char auxv[4096];   /* /proc/self/auxv */
	size_t auxv_len;
	char args[81];              /* /proc/self/cmdline, NULs as spaces */
	uint64_t pm[4096];          /* a chunk of /proc/self/pagemap */
	int pagemap;                /* its descriptor, -1 if unreadable */
	Elf64_Ehdr eh;              /* the core's ELF header */
	Elf64_Phdr *ph;             /* its program headers (mmap'd, hdr_len bytes with eh) */
	size_t phnum, hdr_len;
	uint64_t end;               /* the core's length: past its last segment */
	const char *zeros;          /* SNAP_ZEROS bytes that read as 0 (pipe output's holes) */
};

/* Where the core goes: a file (pwrite, holes stay holes) or a pipe to zstd (write
 * in order; holes and unreadable pages become zeros). */
struct snap_out {
	int fd;
	int pipe;                   /* 1: fd is a pipe, written strictly in order */
	uint64_t pos;               /* pipe: bytes written so far */
	const char *zeros;          /* pipe: SNAP_ZEROS zero bytes to write holes from */
};
#define SNAP_ZEROS (1u << 20)

static void *snap_mmap(size_t len)
{
	void *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? 0 : p;
}

/* Read a whole /proc file into BUF (CAP bytes). Returns the length, or -1 when it
 * cannot be read or does not fit. */
static ssize_t snap_read_file(const char *path, void *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return -1;
	while (len < cap) {
		ssize_t r = read(fd, (char *)buf + len, cap - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	return len < cap ? (ssize_t)len : -1;
}

/* /proc/self/maps into w->text, growing the buffer until it fits. */
static int snap_read_maps(struct snap_work *w)
{
	size_t cap = 1u << 20;

	for (;;) {
		ssize_t n;

		w->text = snap_mmap(cap);
		if (!w->text)
			return -1;
		w->text_cap = cap;
		n = snap_read_file("/proc/self/maps", w->text, cap - 1);
		if (n >= 0) {
			w->text[n] = 0;
			return 0;
		}
		munmap(w->text, cap);
		if (cap >= (1u << 30))
			return -1;
		cap *= 4;
	}
}

static uintptr_t snap_hex(const char **s)
{
	uintptr_t v = 0;

	for (;; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* Copy S into DST of CAP bytes, cut to fit, always NUL-terminated. */
static void snap_copy(char *dst, const char *s, size_t cap)
{
	size_t n = strlen(s);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

static int snap_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Does [p, p+4) hold the ELF magic? Read with process_vm_readv, which fails with
 * EFAULT instead of raising SIGBUS on a mapping past the end of its file. */
static int snap_is_elf(uintptr_t p)
{
	char got[SELFMAG];
	struct iovec local = { got, SELFMAG }, remote = { (void *)p, SELFMAG };

	if (syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) != SELFMAG)
		return 0;
	return memcmp(got, ELFMAG, SELFMAG) == 0;
}

/* Does the private file mapping M hold pages of its own (written since it was
 * mapped: relocations, RELRO, the dynamic section's DT_DEBUG), which the file
 * does not have? /proc/self/pagemap: present and not a file page, or swapped. */
static int snap_has_anon_pages(struct snap_work *w, const struct snap_map *m)
{
	uintptr_t a = m->start;

	if (w->pagemap < 0)
		return 0;
	while (a < m->end) {
		size_t want = (m->end - a) / SNAP_PAGE, n;
		ssize_t r;

		if (want > sizeof(w->pm) / 8)
			want = sizeof(w->pm) / 8;
		do
			r = pread(w->pagemap, w->pm, want * 8, (off_t)(a / SNAP_PAGE * 8));
		while (r < 0 && errno == EINTR);
		if (r < 8)
			return 0;
		n = (size_t)r / 8;
		for (size_t i = 0; i < n; i++) {
			uint64_t e = w->pm[i];

			if (((e >> 63) & 1 && !((e >> 61) & 1)) || (e >> 62) & 1)
				return 1;
		}
		a += n * SNAP_PAGE;
	}
	return 0;
}

/* Is PATH shared memory rather than a file (POSIX or System V shared memory, a
 * memfd, shared anonymous memory): the kernel dumps these as anonymous memory. */
static int snap_is_shmem(const char *path)
{
	return snap_starts(path, "/dev/shm/") || snap_starts(path, "/memfd:") ||
	       snap_starts(path, "/SYSV") || snap_starts(path, "/dev/zero");
}

/* What mapping M of the text contributes, as the kernel decides by default
 * (coredump_filter 0x33): anonymous and shared memory, every private writable
 * mapping and every private file mapping written since it was mapped, whole; the
 * first page of an ELF file mapped at offset 0 (its headers and build-id note);
 * other file mappings (a shared mapping of a file too: the file has it), unreadable
 * mappings, device memory, [vvar] and [vsyscall] described with no bytes. */
static void snap_classify(struct snap_work *w, struct snap_map *m, const char perms[4],
			  uintptr_t inode)
{
	m->pflags = (perms[0] == 'r' ? PF_R : 0) | (perms[1] == 'w' ? PF_W : 0) |
		    (perms[2] == 'x' ? PF_X : 0);
	m->file = inode != 0;
	m->anon = inode == 0 && perms[3] == 'p' && strcmp(m->path, "[vdso]") != 0;
	if (perms[0] != 'r' || snap_starts(m->path, "[vvar") || snap_starts(m->path, "[vsyscall]"))
		m->dump = 0;
	else if (!m->file || snap_is_shmem(m->path))
		m->dump = 1;
	else if (snap_starts(m->path, "/dev/"))
		m->dump = 0;   /* device memory: reading it may have effects */
	else if (perms[3] == 'p' && (perms[1] == 'w' || snap_has_anon_pages(w, m)))
		m->dump = 1;
	else if (m->pgoff == 0 && snap_is_elf(m->start))
		m->dump = 2;
	else
		m->dump = 0;
	m->filesz = m->dump == 1 ? m->end - m->start : m->dump == 2 ? SNAP_PAGE : 0;
}

/* Add mapping M to w->maps less the ranges in SKIP (NSKIP of them): the kernel
 * may have merged a buffer of ours with the program's anonymous memory next to
 * it, so ours are cut out of whatever mapping holds them, never dropped whole. */
static void snap_add_clipped(struct snap_work *w, const struct snap_map *m, const char perms[4],
			     uintptr_t inode, const uintptr_t (*skip)[2], unsigned nskip)
{
	for (unsigned k = 0; k < nskip; k++) {
		if (skip[k][0] < m->end && skip[k][1] > m->start) {
			struct snap_map part = *m;

			if (skip[k][0] > m->start) {
				part.end = skip[k][0];
				snap_add_clipped(w, &part, perms, inode, skip + k + 1, nskip - k - 1);
			}
			if (skip[k][1] < m->end) {
				part = *m;
				part.start = skip[k][1];
				part.pgoff += skip[k][1] - m->start;
				snap_add_clipped(w, &part, perms, inode, skip + k + 1, nskip - k - 1);
			}
			return;
		}
	}
	w->maps[w->nmaps] = *m;
	snap_classify(w, &w->maps[w->nmaps], perms, inode);
	w->nmaps++;
}

/* Parse w->text into w->maps, leaving out the writer's own memory (its work
 * area, the maps text, the writer's stack J names). */
static int snap_parse_maps(struct snap_work *w, const struct snap_job *j)
{
	const uintptr_t skip[3][2] = {
		{ (uintptr_t)w, ((uintptr_t)w + sizeof(*w) + SNAP_PAGE - 1) & ~(uintptr_t)(SNAP_PAGE - 1) },
		{ (uintptr_t)w->text, (uintptr_t)w->text + w->text_cap },
		{ j->skip_lo, j->skip_hi },
	};
	size_t lines = 0;
	char *s;

	for (s = w->text; *s; s++)
		lines += *s == '\n';
	/* each of the three ranges may split one mapping in two */
	w->maps_cap = (lines + 4) * sizeof(struct snap_map);
	w->maps = snap_mmap(w->maps_cap);
	if (!w->maps)
		return -1;
	w->nmaps = 0;
	for (s = w->text; *s;) {
		char *eol = strchr(s, '\n');
		const char *p = s;
		struct snap_map m;
		char perms[4];
		uintptr_t inode = 0;

		if (eol)
			*eol = 0;
		memset(&m, 0, sizeof(m));
		m.start = snap_hex(&p);
		if (*p++ != '-')
			goto next;
		m.end = snap_hex(&p);
		if (*p++ != ' ' || strlen(p) < 5)
			goto next;
		memcpy(perms, p, 4);
		p += 5;
		m.pgoff = snap_hex(&p);
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')   /* device */
			p++;
		while (*p == ' ')
			p++;
		while (*p >= '0' && *p <= '9')
			inode = inode * 10 + (uintptr_t)(*p++ - '0');
		while (*p == ' ')
			p++;
		m.path = p;
		if (m.end > m.start)
			snap_add_clipped(w, &m, perms, inode, skip, j->skip_hi ? 3 : 2);
next:
		if (!eol)
			break;
		s = eol + 1;
	}
	return 0;
}

/* Append one note to w->notes: NAME (8 bytes with its padding, NAMESZ of them
 * counted), TYPE, LEN bytes of DESC. */
static void snap_note_named(struct snap_work *w, const char name[8], uint32_t namesz,
			    uint32_t type, const void *desc, size_t len)
{
	Elf64_Nhdr h = { namesz, (Elf64_Word)len, type };
	unsigned char *p = w->notes + w->notes_len;

	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), name, 8);
	memcpy(p + sizeof(h) + 8, desc, len);
	w->notes_len += sizeof(h) + 8 + ((len + 3) & ~(size_t)3);
}

/* Append one note named "CORE" to w->notes. */
static void snap_note(struct snap_work *w, uint32_t type, const void *desc, size_t len)
{
	snap_note_named(w, "CORE\0\0\0", 5, type, desc, len);
}

/* Bytes one note of LEN bytes of desc takes. */
static size_t snap_note_size(size_t len)
{
	return sizeof(Elf64_Nhdr) + 8 + ((len + 3) & ~(size_t)3);
}

/* Build the PT_NOTE segment: NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO (signals),
 * NT_AUXV, NT_FILE, NT_PRFPREG (signals), in the kernel's order. */
static int snap_build_notes(struct snap_work *w, const struct snap_job *j)
{
	struct elf_prstatus st;
	struct elf_prpsinfo ps;
	size_t nfiles = 0, names = 0, filesz, i;
	unsigned char *f;

	for (i = 0; i < w->nmaps; i++)
		if (w->maps[i].file) {
			nfiles++;
			names += strlen(w->maps[i].path) + 1;
		}
	filesz = 2 * 8 + nfiles * 3 * 8 + names;
	w->notes_cap = snap_note_size(sizeof(st)) + snap_note_size(sizeof(ps)) +
		       snap_note_size(sizeof(siginfo_t)) + snap_note_size(w->auxv_len) +
		       snap_note_size(filesz) + snap_note_size(sizeof(elf_fpregset_t)) + 2 * filesz +
		       j->nothers * snap_note_size(sizeof(st)) +
		       snap_note_size(j->nhints * sizeof(struct snap_hint));
	w->notes_cap = (w->notes_cap + SNAP_PAGE - 1) & ~(size_t)(SNAP_PAGE - 1);
	w->notes = snap_mmap(w->notes_cap);
	if (!w->notes)
		return -1;
	w->notes_len = 0;

	memset(&st, 0, sizeof(st));
	st.pr_info.si_signo = j->signo;
	st.pr_cursig = (short)j->signo;
	st.pr_pid = j->tid;
	st.pr_ppid = j->ppid;
	st.pr_pgrp = getpgrp();
	st.pr_sid = getsid(0);
	memcpy(&st.pr_reg, &j->regs, sizeof(st.pr_reg));
	st.pr_fpvalid = j->has_info;
	snap_note(w, NT_PRSTATUS, &st, sizeof(st));

	memset(&ps, 0, sizeof(ps));
	ps.pr_sname = 'R';
	ps.pr_uid = getuid();
	ps.pr_gid = getgid();
	ps.pr_pid = j->pid;
	ps.pr_ppid = j->ppid;
	ps.pr_pgrp = getpgrp();
	ps.pr_sid = getsid(0);
	snap_copy(ps.pr_fname, snap_prog, sizeof(ps.pr_fname));
	memcpy(ps.pr_psargs, w->args, sizeof(ps.pr_psargs) - 1);
	snap_note(w, NT_PRPSINFO, &ps, sizeof(ps));

	if (j->has_info)
		snap_note(w, NT_SIGINFO, &j->info, sizeof(j->info));
	if (w->auxv_len)
		snap_note(w, NT_AUXV, w->auxv, w->auxv_len);

	/* NT_FILE: count, page size, (start, end, page offset) per file, the names */
	f = w->notes + w->notes_len + sizeof(Elf64_Nhdr) + 8;
	{
		uint64_t hdr[2] = { nfiles, SNAP_PAGE };
		size_t o = sizeof(hdr), no = sizeof(hdr) + nfiles * 3 * 8;

		memcpy(f, hdr, sizeof(hdr));
		for (i = 0; i < w->nmaps; i++) {
			const struct snap_map *m = &w->maps[i];
			uint64_t t[3] = { m->start, m->end, m->pgoff / SNAP_PAGE };
			size_t l;

			if (!m->file)
				continue;
			memcpy(f + o, t, sizeof(t));
			o += sizeof(t);
			l = strlen(m->path) + 1;
			memcpy(f + no, m->path, l);
			no += l;
		}
		{
			Elf64_Nhdr h = { 5, (Elf64_Word)filesz, NT_FILE };

			memcpy(w->notes + w->notes_len, &h, sizeof(h));
			memcpy(w->notes + w->notes_len + sizeof(h), "CORE\0\0\0", 8);
			w->notes_len += snap_note_size(filesz);
		}
	}
	if (j->has_info)
		snap_note(w, NT_PRFPREG, &j->fpregs, sizeof(j->fpregs));
	/* the other threads blocked in a system call: their stack pointer, pc and the
	 * call's number and arguments, as the kernel saved them; the rest reads 0 */
	for (unsigned t = 0; t < j->nothers; t++) {
		const struct snap_thread *o = &j->others[t];

		memset(&st, 0, sizeof(st));
		st.pr_pid = o->tid;
		st.pr_ppid = j->ppid;
		st.pr_pgrp = getpgrp();
		st.pr_sid = getsid(0);
		st.pr_reg[14] = o->args[0];   /* rdi */
		st.pr_reg[13] = o->args[1];   /* rsi */
		st.pr_reg[12] = o->args[2];   /* rdx */
		st.pr_reg[7] = o->args[3];    /* r10 */
		st.pr_reg[9] = o->args[4];    /* r8 */
		st.pr_reg[8] = o->args[5];    /* r9 */
		st.pr_reg[15] = (unsigned long)o->nr;  /* orig_rax */
		st.pr_reg[16] = o->pc;
		st.pr_reg[17] = 0x33;
		st.pr_reg[18] = 0x202;
		st.pr_reg[19] = o->sp;
		st.pr_reg[20] = 0x2b;
		snap_note(w, NT_PRSTATUS, &st, sizeof(st));
	}
	/* the threads that were running: an address in each one's stack */
	if (j->nhints) {
		_Static_assert(sizeof(HEAPANN_NOTE_NAME) == 8, "the note's name takes 8 bytes");
		snap_note_named(w, HEAPANN_NOTE_NAME, 8, HEAPANN_NT_STACKS, j->hints,
				j->nhints * sizeof(struct snap_hint));
	}
	return 0;
}

/* Write LEN bytes of BUF at core offset OFF to O, all of them (EINTR and short
 * writes retried). A pipe is written in order: the bytes from o->pos up to OFF
 * (a hole) go first, as zeros. Returns 0, -1 with errno set, or -2 on EFAULT
 * (memory that cannot be read; o->pos says how far a pipe got: the caller goes
 * on page by page). */
static int snap_out_write(struct snap_out *o, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	if (o->pipe) {
		if (off < o->pos) {
			errno = EINVAL;
			return -1;
		}
		while (o->pos < off) {
			uint64_t gap = off - o->pos;
			int rc = snap_out_write(o, o->zeros, gap > SNAP_ZEROS ? SNAP_ZEROS : (size_t)gap,
						o->pos);

			if (rc < 0)
				return -1;
		}
	}
	while (len > 0) {
		ssize_t n = o->pipe ? write(o->fd, p, len) : pwrite(o->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EFAULT ? -2 : -1;
		if (n == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
		if (o->pipe)
			o->pos = off;
	}
	return 0;
}

/* Write [p, p+len) at core offset OFF; pages that cannot be read stay holes (zeros
 * in a pipe). */
static int snap_write_run(struct snap_out *o, uintptr_t p, size_t len, uint64_t off)
{
	int rc = snap_out_write(o, (const void *)p, len, off);
	size_t k;

	if (rc != -2)
		return rc;
	/* a pipe cannot take back what it got: on from where it stopped */
	for (k = o->pipe ? (size_t)(o->pos - off) : 0; k < len;) {
		size_t next = (k / SNAP_PAGE + 1) * SNAP_PAGE;

		if (next > len)
			next = len;
		if (snap_out_write(o, (const void *)(p + k), next - k, off + k) == -1)
			return -1;
		k = next;
	}
	return 0;
}

static int snap_page_zero(const uint64_t *w)
{
	for (unsigned i = 0; i < SNAP_PAGE / 8; i += 8)
		if (w[i] | w[i + 1] | w[i + 2] | w[i + 3] | w[i + 4] | w[i + 5] | w[i + 6] | w[i + 7])
			return 0;
	return 1;
}

/* Write a private anonymous mapping: pages never touched (neither present nor
 * swapped, says /proc/self/pagemap: they read as zero) and all-zero pages are
 * skipped, so the file stays sparse there and untouched memory is never faulted
 * in; the rest goes out in runs of up to SNAP_RUN_MAX bytes. */
static int snap_write_anon(struct snap_work *w, struct snap_out *o, const struct snap_map *m)
{
	uintptr_t run = 0, a;
	size_t pm_n = 0, pm_i = 0;

	for (a = m->start; a < m->end; a += SNAP_PAGE) {
		int zero;

		if (w->pagemap >= 0 && pm_i == pm_n) {
			size_t want = (m->end - a) / SNAP_PAGE;
			ssize_t r;

			if (want > sizeof(w->pm) / 8)
				want = sizeof(w->pm) / 8;
			do
				r = pread(w->pagemap, w->pm, want * 8, (off_t)(a / SNAP_PAGE * 8));
			while (r < 0 && errno == EINTR);
			if (r < 8) {
				close(w->pagemap);
				w->pagemap = -1;
			} else {
				pm_n = (size_t)r / 8;
				pm_i = 0;
			}
		}
		if (w->pagemap >= 0 && !(w->pm[pm_i++] & (3ull << 62)))
			zero = 1;   /* neither present (bit 63) nor swapped (bit 62) */
		else
			zero = snap_page_zero((const uint64_t *)a);
		if (zero || (run && a - run >= SNAP_RUN_MAX)) {
			if (run && snap_write_run(o, run, a - run, m->offset + (run - m->start)) < 0)
				return -1;
			run = 0;
		}
		if (!zero && !run)
			run = a;
	}
	if (run && snap_write_run(o, run, a - run, m->offset + (run - m->start)) < 0)
		return -1;
	return 0;
}

/* Everything the core says before a byte of memory is written: the mappings,
 * the notes, the ELF and program headers, into W (mmap'd; the maps are read
 * first, so nothing mapped here is in them). Returns 0, or -1 with errno set and
 * *WHAT naming the step. */
static int snap_prepare(struct snap_work *w, const struct snap_job *j, const char **what)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t phnum, i, hdr_len;
	uint64_t off;
	ssize_t n;

	w->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	*what = "reading /proc/self/maps";
	if (snap_read_maps(w) < 0 || snap_parse_maps(w, j) < 0)
		return -1;
	n = snap_read_file("/proc/self/auxv", w->auxv, sizeof(w->auxv));
	w->auxv_len = n > 0 ? (size_t)n : 0;
	n = snap_read_file("/proc/self/cmdline", w->args, sizeof(w->args) - 1);
	if (n < 0) {   /* longer than pr_psargs: its first 80 bytes */
		int cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

		n = cfd >= 0 ? read(cfd, w->args, sizeof(w->args) - 1) : 0;
		if (cfd >= 0)
			close(cfd);
		n = n < 0 ? 0 : n;
	}
	for (ssize_t k = 0; k < n; k++)
		if (!w->args[k])
			w->args[k] = ' ';
	while (n > 0 && w->args[n - 1] == ' ')
		n--;
	w->args[n] = 0;
	*what = "building the notes";
	if (snap_build_notes(w, j) < 0)
		return -1;

	phnum = 1 + w->nmaps;
	if (phnum >= PN_XNUM) {
		errno = E2BIG;
		*what = "too many mappings";
		return -1;
	}
	hdr_len = sizeof(eh) + phnum * sizeof(*ph);
	ph = snap_mmap(hdr_len);
	if (!ph)
		return -1;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(*ph);
	eh.e_phnum = (Elf64_Half)phnum;

	off = hdr_len;
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = off, .p_filesz = w->notes_len };
	off = (off + w->notes_len + SNAP_PAGE - 1) & ~(uint64_t)(SNAP_PAGE - 1);
	for (i = 0; i < w->nmaps; i++) {
		struct snap_map *m = &w->maps[i];

		m->offset = off;
		ph[1 + i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = m->pflags, .p_offset = off,
					  .p_vaddr = m->start, .p_filesz = m->filesz,
					  .p_memsz = m->end - m->start, .p_align = SNAP_PAGE };
		off += m->filesz;
	}
	w->eh = eh;
	w->ph = ph;
	w->phnum = phnum;
	w->hdr_len = hdr_len;
	w->end = off;
	/* never written: every page reads as the shared zero page */
	w->zeros = mmap(0, SNAP_ZEROS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->zeros == MAP_FAILED)
		return -1;
	return 0;
}

/* Write the core W describes to O, in file order. Can run again on another
 * output (the memory is this process's own copy: it does not change). Returns 0,
 * or -1 with errno set and *WHAT naming the step. */
static int snap_emit(struct snap_work *w, struct snap_out *o, const char **what)
{
	*what = "writing";
	o->zeros = w->zeros;
	if (snap_out_write(o, &w->eh, sizeof(w->eh), 0) < 0 ||
	    snap_out_write(o, w->ph, w->phnum * sizeof(*w->ph), sizeof(w->eh)) < 0 ||
	    snap_out_write(o, w->notes, w->notes_len, w->hdr_len) < 0)
		return -1;
	for (size_t i = 0; i < w->nmaps; i++) {
		const struct snap_map *m = &w->maps[i];

		if (!m->filesz)
			continue;
		if (m->anon && m->dump == 1 ? snap_write_anon(w, o, m) < 0 :
		    snap_write_run(o, m->start, m->filesz, m->offset) < 0)
			return -1;
	}
	/* trailing holes: the core must still be as long as its segments say */
	if (o->pipe)
		return o->pos < w->end ? snap_out_write(o, w->zeros, 0, w->end) : 0;
	while (ftruncate(o->fd, (off_t)w->end) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Append to L the core's path: DIR/PROG.PID.N.core */
static void snap_path(struct ha_line *l, const struct snap_job *j)
{
	ha_line_str(l, snap_dir);
	if (!(snap_dir[0] == '/' && snap_dir[1] == 0))
		ha_line_str(l, "/");
	ha_line_str(l, snap_prog);
	ha_line_str(l, ".");
	ha_line_num(l, (unsigned long)j->pid, 10);
	ha_line_str(l, ".");
	ha_line_num(l, j->n, 10);
	ha_line_str(l, ".core");
}

/* Write the core W describes to FILE (created, mode 0600) then rename it to
 * FINAL: whoever waits for FINAL never sees half a core. On failure FILE is
 * removed and a line on stderr says why. Returns 0 or -1. */
static int snap_to_file(struct snap_work *w, const char *file, const char *final)
{
	struct snap_out o = { .fd = -1 };
	const char *what = "";

	o.fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (o.fd < 0) {
		snap_fail(file, "", errno);
		return -1;
	}
	if (snap_emit(w, &o, &what) < 0) {
		snap_fail(final, what, errno);
		close(o.fd);
		unlink(file);
		return -1;
	}
	if (close(o.fd) < 0 || syscall(SYS_rename, file, final) < 0) {
		snap_fail(final, "", errno);
		unlink(file);
		return -1;
	}
	return 0;
}

/* What the zstd process starts from (in the writer's memory, which it shares
 * until execve). */
struct snap_zstd_start {
	int rd, out;                /* the pipe's read end, the .zst.part file */
	char **envp;                /* room for the environment handed to zstd */
};

/* The zstd process, started by clone(CLONE_VM | CLONE_VFORK) like posix_spawn
 * (the writer's image is not copied again; the writer waits until execve): stdin
 * the pipe, stdout the file, the program's other descriptors closed, its signal
 * handlers back to the default before any signal is unblocked (none of them may
 * run here), and its environment without LD_PRELOAD (zstd itself is not
 * annotated). Only system calls; never returns. */
static int snap_zstd_exec(void *arg)
{
	const struct snap_zstd_start *z = arg;
	char *argv[] = { "zstd", "-q", "-c", snap_zstd_level, "-T0", 0 };
	struct sigaction dfl, old;
	sigset_t none;
	size_t k = 0;

	/* above 2 first: the program may have closed 0 or 1, so that the pipe or the
	 * file got one of them (and dup2 onto itself would keep FD_CLOEXEC) */
	int rd = (int)fcntl(z->rd, F_DUPFD_CLOEXEC, 3), out = (int)fcntl(z->out, F_DUPFD_CLOEXEC, 3);

	if (rd < 0 || out < 0 || dup2(rd, 0) < 0 || dup2(out, 1) < 0)
		_exit(127);
	if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	for (char **e = environ; e && *e; e++)
		if (!snap_starts(*e, "LD_PRELOAD="))
			z->envp[k++] = *e;
	z->envp[k] = 0;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, 0, &old) == 0 && (old.sa_flags & SA_SIGINFO ||
		    (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)))
			sigaction(sig, &dfl, 0);
	sigemptyset(&none);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, sizeof(long));
	execve(snap_zstd, argv, z->envp);
	_exit(127);
}

/* "heapann: snapshot: WHY; writing the plain core instead" (unless HEAPANN_QUIET) */
static void snap_zstd_fallback(const char *why, const char *arg, int e)
{
	struct ha_line l = { .len = 0 };

	if (snap_quiet)
		return;
	ha_line_str(&l, "heapann: snapshot: ");
	ha_line_str(&l, why);
	ha_line_str(&l, arg);
	if (e) {
		ha_line_str(&l, ": ");
		snap_errno(&l, e);
	}
	ha_line_str(&l, "; writing the plain core instead");
	ha_line_send(&l);
}

/* Write the core W describes through zstd (HEAPANN_SNAPSHOT_COMPRESS=zstd) into
 * FILE, then rename it to FINAL. zstd runs in a child of this writer, reading a
 * pipe; the core goes into the pipe in file order, holes as zeros. Returns 0, or
 * -1 when zstd is missing, cannot run or fails (a line says which; FILE is
 * removed): the caller writes the plain core then. */
static int snap_to_zstd(struct snap_work *w, const char *file, const char *final)
{
	struct snap_out o = { .fd = -1, .pipe = 1 };
	struct snap_zstd_start z;
	int p[2] = { -1, -1 }, out = -1, rc, st, e = 0, we = 0;
	const char *what = "";
	size_t nenv = 1;
	char **envp, *stack;
	long pid;

	if (!snap_zstd[0]) {
		snap_zstd_fallback("zstd not found on PATH (HEAPANN_ZSTD names it)", "", 0);
		return -1;
	}
	for (char **v = environ; v && *v; v++)
		nenv++;
	envp = snap_mmap(nenv * sizeof(*envp));
	stack = snap_mmap(SNAP_ZSTD_STACK);
	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!envp || !stack || out < 0 || pipe2(p, O_CLOEXEC) < 0) {
		e = errno;
		if (out >= 0) {
			close(out);
			unlink(file);
		}
		snap_fail(out < 0 ? file : final, "starting zstd", e);
		snap_zstd_fallback("cannot start ", snap_zstd, 0);
		return -1;
	}
	fcntl(p[1], F_SETPIPE_SZ, (int)SNAP_ZEROS);   /* fewer switches; may be refused */
	z = (struct snap_zstd_start){ .rd = p[0], .out = out, .envp = envp };
	pid = clone(snap_zstd_exec, stack + SNAP_ZSTD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &z);
	e = errno;
	close(p[0]);
	close(out);
	if (pid < 0) {
		close(p[1]);
		unlink(file);
		snap_zstd_fallback("cannot start ", snap_zstd, e);
		return -1;
	}
	o.fd = p[1];
	rc = snap_emit(w, &o, &what);
	e = errno;
	close(p[1]);   /* zstd sees the end of its input */
	while (waitpid((pid_t)pid, &st, 0) < 0)
		if (errno != EINTR) {
			st = -1;
			we = errno;
			break;
		}
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && rc == 0) {
		if (syscall(SYS_rename, file, final) == 0)
			return 0;
		e = errno;
		unlink(file);
		snap_fail(final, "", e);
		snap_zstd_fallback("cannot rename the compressed core", "", 0);
		return -1;
	}
	unlink(file);
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snap_zstd_fallback("cannot run ", snap_zstd, 0);
	else if (st == -1)
		snap_zstd_fallback("cannot wait for ", snap_zstd, we);
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		struct ha_line l = { .len = 0 };

		ha_line_str(&l, snap_zstd);
		ha_line_str(&l, WIFSIGNALED(st) ? " was killed by signal " : " failed with status ");
		ha_line_num(&l, (unsigned long)(WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)), 10);
		l.buf[l.len] = 0;
		snap_zstd_fallback(l.buf, "", 0);
	} else {
		snap_fail(final, what, e);
		snap_zstd_fallback("writing to ", snap_zstd, 0);
	}
	return -1;
}

/* The writer process: write the core (through zstd when asked, the plain core
 * when that fails), say where on stderr, exit. Never returns. */
__attribute__((noreturn))
static void snap_child(const struct snap_job *j)
{
	struct ha_line path = { .len = 0 }, part = { .len = 0 };
	struct snap_work *w;
	const char *what = "";
	sigset_t all;

	/* no handler of the program's may run here (it would run on the copy) */
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, 0, sizeof(long));
	/* a program that ignores SIGCHLD (SIG_IGN or SA_NOCLDWAIT, as daemons do)
	 * would have the kernel reap zstd, and the wait for its status fail: the
	 * writer's dispositions are its own copy, so take the default back */
	{
		struct sigaction dfl;

		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGCHLD, &dfl, 0);
	}
	snap_path(&path, j);
	w = snap_mmap(sizeof(*w));
	if (!w) {
		path.buf[path.len] = 0;
		snap_fail(path.buf, "mmap", errno);
		_exit(1);
	}
	w->pagemap = -1;
	if (snap_prepare(w, j, &what) < 0) {
		int e = errno;

		path.buf[path.len] = 0;
		snap_fail(path.buf, what, e);
		_exit(1);
	}
	if (snap_compress_zstd) {
		struct ha_line zpath = path;

		ha_line_str(&zpath, ".zst");
		zpath.buf[zpath.len] = 0;
		part = zpath;
		ha_line_str(&part, ".part");
		part.buf[part.len] = 0;
		if (snap_to_zstd(w, part.buf, zpath.buf) == 0) {
			path = zpath;
			goto done;
		}
	}
	path.buf[path.len] = 0;
	part = path;
	ha_line_str(&part, ".part");
	part.buf[part.len] = 0;
	if (snap_to_file(w, part.buf, path.buf) < 0)
		_exit(1);
done:
	if (!snap_quiet) {
		struct ha_line l = { .len = 0 };

		ha_line_str(&l, "heapann: snapshot written to ");
		ha_line_str(&l, path.buf);
		ha_line_send(&l);
	}
	_exit(0);
}

/* The writer, started by clone() on the stack of its own that snap_take made:
 * whatever stack the snapshot thread was on (a small sigaltstack, a thread's
 * short stack), the writer has room. */
static int snap_writer(void *arg)
{
	snap_child(arg);
}

/* The middle process of HEAPANN_SNAPSHOT_WAIT=0: shares the parent's memory
 * (CLONE_VM | CLONE_VFORK: the parent is suspended until it exits), forks the
 * writer (a copy of the memory as it is, the stack this runs on included) and
 * exits at once, so the writer is re-parented to init (or the nearest
 * subreaper), which reaps it. */
static int snap_middle(void *arg)
{
	long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		snap_child(arg);
	return 0;
}

/* Wait for our clone child PID (it has no exit signal: __WALL). Returns its
 * status, or -1 when it is gone (someone reaped it with __WALL). */
static int snap_reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* Parse an unsigned number (decimal, or hex after 0x) at *S; skips spaces before. */
static unsigned long snap_ulong(const char **s)
{
	const char *p = *s;
	unsigned long v = 0;

	while (*p == ' ')
		p++;
	if (p[0] == '0' && p[1] == 'x') {
		p += 2;
		v = snap_hex(&p);
	} else {
		while (*p >= '0' && *p <= '9')
			v = v * 10 + (unsigned long)(*p++ - '0');
	}
	*s = p;
	return v;
}

/* Claim a registry slot for the calling thread (TID), AT an address in its
 * stack. */
static void snap_stack_claim(int tid, uintptr_t at)
{
	snap_stack_mine = -1;   /* first: pthread_setspecific may call calloc */
	for (unsigned i = 0; i < SNAP_STACKS; i++) {
		int z = 0;

		if (__atomic_load_n(&snap_stacks[i].tid, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&snap_stacks[i].tid, &z, -1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&snap_stacks[i].at, at, __ATOMIC_RELAXED);
		__atomic_store_n(&snap_stacks[i].tid, tid, __ATOMIC_RELEASE);
		{
			unsigned hi = __atomic_load_n(&snap_stacks_hi, __ATOMIC_RELAXED);

			while (hi <= i && !__atomic_compare_exchange_n(&snap_stacks_hi, &hi, i + 1, 1,
								      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
		}
		snap_stack_mine = (int)i + 1;
		pthread_setspecific(snap_stacks_key, (void *)(uintptr_t)(i + 1));
		return;
	}
}

/* A thread exits (snap_stacks_key's destructor): its slot is free again. */
static void snap_stack_release(void *v)
{
	uintptr_t i = (uintptr_t)v - 1;

	if (i < SNAP_STACKS)
		__atomic_store_n(&snap_stacks[i].tid, 0, __ATOMIC_RELEASE);
}

void ha_snap_thread_first(void)
{
	int tid;

	if (__builtin_expect(snap_stack_mine != 0, 1) ||
	    !__atomic_load_n(&snap_stacks_on, __ATOMIC_ACQUIRE))
		return;
	tid = (int)syscall(SYS_gettid);
	snap_stack_claim(tid, tid == (int)getpid() ? (uintptr_t)__builtin_frame_address(0)
						    : ha_thread_pointer());
}

/* The address in thread TID's stack that the registry holds, or 0. */
static uintptr_t snap_stack_of(pid_t tid)
{
	unsigned hi = __atomic_load_n(&snap_stacks_hi, __ATOMIC_RELAXED);

	for (unsigned i = 0; i < hi && i < SNAP_STACKS; i++)
		if (__atomic_load_n(&snap_stacks[i].tid, __ATOMIC_ACQUIRE) == tid) {
			uintptr_t at = __atomic_load_n(&snap_stacks[i].at, __ATOMIC_RELAXED);

			/* still TID's: the slot was not given back and claimed again
			 * between the two loads */
			if (__atomic_load_n(&snap_stacks[i].tid, __ATOMIC_ACQUIRE) == tid)
				return at;
		}
	return 0;
}

/* Record thread TID (its /proc/self/task name NAME, NLEN digits) in J's next
 * slot when /proc/self/task/TID/syscall shows it blocked. Returns 1 when
 * recorded, 0 when the file says "running", -1 when it cannot be read (the
 * thread is gone) or shows no stack pointer. */
static int snap_other(struct snap_job *j, pid_t tid, const char *name, size_t nlen)
{
	char path[64] = "/proc/self/task/", text[256];
	size_t pl = 16;
	struct snap_thread *o = &j->others[j->nothers];
	const char *q = text;
	ssize_t r;
	int fd;

	/* "/proc/self/task/" NAME "/syscall": NAME is all digits, short */
	memcpy(path + pl, name, nlen);
	pl += nlen;
	memcpy(path + pl, "/syscall", 9);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		r = read(fd, text, sizeof(text) - 1);
	while (r < 0 && errno == EINTR);
	close(fd);
	if (r <= 0)
		return -1;
	text[r] = 0;
	/* "NR ARG1..ARG6 SP PC", "-1 SP PC" or "running" */
	if (*q == '-') {
		q += 2;   /* "-1" */
		o->nr = -1;
		for (int a = 0; a < 6; a++)
			o->args[a] = 0;
	} else if (*q >= '0' && *q <= '9') {
		o->nr = (long)snap_ulong(&q);
		for (int a = 0; a < 6; a++)
			o->args[a] = snap_ulong(&q);
	} else {
		return 0;
	}
	o->sp = snap_ulong(&q);
	o->pc = snap_ulong(&q);
	o->tid = tid;
	if (!o->sp || !o->pc)
		return -1;
	j->nothers++;
	return 1;
}

/* Rounds of snap_others() after the first while a thread reads "running": the
 * first few after a sched_yield, the rest after SNAP_OTHERS_PAUSE_NS each,
 * until SNAP_OTHERS_BUDGET_NS have passed since the first round began: a
 * thread running for good costs a snapshot that long (a thread on its way back
 * to sleep may wait about as long for a CPU on a loaded machine). */
#define SNAP_OTHERS_YIELDS 4
#define SNAP_OTHERS_PAUSE_NS 500000L
#define SNAP_OTHERS_BUDGET_NS 50000000L

static long snap_ns_since(const struct timespec *t0)
{
	struct timespec t;

	if (clock_gettime(CLOCK_MONOTONIC, &t) < 0)
		return SNAP_OTHERS_BUDGET_NS;
	return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

/* Fill J's table (ROOM bytes at TAB, then SNAP_HINTS_ROOM bytes for the hints of
 * the threads found running) with the threads other than the caller that
 * are blocked in a system call: their stack pointer and pc tell mprof-core and
 * gdb where their stacks are live. Read from /proc/self/task/TID/syscall (a
 * thread of the same process may read it: no ptrace permission involved). A
 * thread that says "running" is read again in later rounds, for a while: a
 * thread woken from a condition variable's wait by a broadcast meant for
 * another, on its way back to sleep, reads "running" for a moment (read once,
 * 20 to 80 of 100 exit snapshots of tests/prog/snap_condwait.c's four left one
 * or more out); one still running when SNAP_OTHERS_BUDGET_NS have passed is
 * left out. Each round records every thread afresh: a thread recorded in an
 * early round runs on while later rounds wait, and its stack pointer of then
 * would hide the frames it has pushed since (a block held there read
 * "definitely lost": 6 of 60 exit snapshots of tests/prog/snap_stale.c when
 * the first record was kept). System calls only, and
 * little stack (this may run on a small sigaltstack); DBUF (DLEN bytes) is the
 * directory buffer. A thread that returns from its call between the last
 * round and the clone is recorded where it was. */
static void snap_others(struct snap_job *j, void *tab, size_t room, char *dbuf, size_t dlen)
{
	unsigned cap;
	struct timespec t0;

	j->others = tab;
	j->nothers = 0;
	j->hints = (struct snap_hint *)((char *)tab + room);
	j->nhints = 0;
	cap = (unsigned)(room / sizeof(struct snap_thread));
	if (clock_gettime(CLOCK_MONOTONIC, &t0) < 0)
		t0.tv_sec = t0.tv_nsec = 0;
	for (unsigned round = 0;; round++) {
		int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), running = 0;
		long n;

		if (dfd < 0)
			return;
		j->nothers = 0;   /* this round's records only: the latest stack pointers */
		j->nhints = 0;
		while ((n = syscall(SYS_getdents64, dfd, dbuf, dlen)) > 0) {
			for (long off = 0; off < n;) {
				/* struct linux_dirent64: ino, off, reclen (u16), type (u8), name */
				unsigned short reclen;
				const char *name = dbuf + off + 19, *p = name;
				pid_t tid = 0;
				unsigned k;

				memcpy(&reclen, dbuf + off + 16, sizeof(reclen));
				off += reclen;
				while (*p >= '0' && *p <= '9')
					tid = tid * 10 + (*p++ - '0');
				if (*p || tid <= 0 || tid == j->tid || j->nothers >= cap ||
				    (size_t)(p - name) > 20)
					continue;
				for (k = 0; k < j->nothers && j->others[k].tid != tid; k++)
					;
				if (k < j->nothers)
					continue;   /* listed twice by one pass of getdents */
				if (snap_other(j, tid, name, (size_t)(p - name)) == 0) {
					uintptr_t at = snap_stack_of(tid);

					running++;
					if (at && j->nhints < SNAP_HINTS_ROOM / sizeof(struct snap_hint)) {
						j->hints[j->nhints].tid = (uint64_t)tid;
						j->hints[j->nhints++].at = at;
					}
				}
			}
		}
		close(dfd);
		if (!running || j->nothers >= cap || snap_ns_since(&t0) >= SNAP_OTHERS_BUDGET_NS)
			return;
		if (round < SNAP_OTHERS_YIELDS) {
			sched_yield();
		} else {
			struct timespec ts = { 0, SNAP_OTHERS_PAUSE_NS };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
	}
}

/* Take snapshot J (registers filled by the caller). WAIT: wait for the writer.
 * Runs in a signal handler or at exit; keeps errno. Returns 0 or -1.
 * The child has exit signal 0: no SIGCHLD, and the program's waitpid(-1), which
 * waits for ordinary children only (no __WALL), never sees it. */
static int snap_take(struct snap_job *j, int wait)
{
	int saved = errno, rc = 0, pid, st;
	char *stack;

	j->n = __atomic_add_fetch(&snap_count, 1, __ATOMIC_RELAXED);
	j->pid = getpid();
	j->tid = (pid_t)syscall(SYS_gettid);
	j->ppid = getppid();
	stack = snap_mmap(SNAP_CHILD_STACK);
	if (!stack) {
		snap_fail(snap_dir, "mmap", errno);
		errno = saved;
		return -1;
	}
	/* the child's stack is not the program's: left out of the core. Its bottom
	 * holds the other threads' table, and is the directory buffer meanwhile. */
	j->skip_lo = (uintptr_t)stack;
	j->skip_hi = (uintptr_t)stack + SNAP_CHILD_STACK;
	snap_others(j, stack, SNAP_THREADS_ROOM, stack + SNAP_THREADS_ROOM + SNAP_HINTS_ROOM,
		    32u << 10);
	if (wait)
		pid = clone(snap_writer, stack + SNAP_CHILD_STACK, 0, j);
	else
		pid = clone(snap_middle, stack + SNAP_CHILD_STACK, CLONE_VM | CLONE_VFORK, j);
	if (pid < 0) {
		snap_fail(snap_dir, "clone", errno);
		rc = -1;
	} else if ((st = snap_reap(pid)) >= 0 && wait && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		rc = -1;
		if (WIFSIGNALED(st)) {
			struct ha_line l = { .len = 0 };

			ha_line_str(&l, "heapann: snapshot failed: the writer was killed by signal ");
			ha_line_num(&l, (unsigned long)WTERMSIG(st), 10);
			ha_line_send(&l);
		}
	}
	munmap(stack, SNAP_CHILD_STACK);
	errno = saved;
	return rc;
}

/* user_regs_struct from a ucontext's general registers. */
static void snap_regs_from(elf_gregset_t r, const mcontext_t *mc, int from_signal)
{
	const greg_t *g = mc->gregs;
	unsigned long fs = 0, gs = 0;

	memset(r, 0, sizeof(elf_gregset_t));
	r[0] = (unsigned long)g[REG_R15];
	r[1] = (unsigned long)g[REG_R14];
	r[2] = (unsigned long)g[REG_R13];
	r[3] = (unsigned long)g[REG_R12];
	r[4] = (unsigned long)g[REG_RBP];
	r[5] = (unsigned long)g[REG_RBX];
	r[6] = (unsigned long)g[REG_R11];
	r[7] = (unsigned long)g[REG_R10];
	r[8] = (unsigned long)g[REG_R9];
	r[9] = (unsigned long)g[REG_R8];
	r[10] = (unsigned long)g[REG_RAX];
	r[11] = (unsigned long)g[REG_RCX];
	r[12] = (unsigned long)g[REG_RDX];
	r[13] = (unsigned long)g[REG_RSI];
	r[14] = (unsigned long)g[REG_RDI];
	r[15] = (unsigned long)-1;               /* orig_rax: not in a system call */
	r[16] = (unsigned long)g[REG_RIP];
	r[17] = 0x33;                            /* cs: user code */
	r[18] = from_signal ? (unsigned long)g[REG_EFL] : 0x202;
	r[19] = (unsigned long)g[REG_RSP];
	r[20] = 0x2b;                            /* ss: user data */
	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);
	r[21] = fs;                              /* fs_base: the thread's TLS */
	r[22] = gs;
}

/* Fill *J for a snapshot taken in a handler of SIG: the registers and the
 * floating-point state the kernel saved in the handler's ucontext UCV. */
static void snap_job_from_signal(struct snap_job *j, int sig, const siginfo_t *si, const void *ucv)
{
	const ucontext_t *uc = ucv;

	memset(j, 0, sizeof(*j));
	j->signo = sig;
	j->has_info = 1;
	j->info = *si;
	snap_regs_from(j->regs, &uc->uc_mcontext, 1);
	if (uc->uc_mcontext.fpregs)
		memcpy(&j->fpregs, uc->uc_mcontext.fpregs, sizeof(j->fpregs));
}

/* A snapshot signal (SIGUSR2 or HEAPANN_SNAPSHOT=signal:SIG). */
static void snap_on_signal(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	struct snap_job j;

	snap_job_from_signal(&j, sig, si, ucv);
	snap_take(&j, !snap_nowait);
	errno = saved;
}

/* A crash (HEAPANN_SNAPSHOT=abort): snapshot, then the default action for the
 * signal (SA_RESETHAND restored it on entry): the signal is sent again and, blocked
 * while this handler runs, is delivered as it returns, so the kernel still writes
 * its own core where it is configured to. */
static void snap_on_crash(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	struct snap_job j;

	snap_job_from_signal(&j, sig, si, ucv);
	snap_take(&j, 1);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	errno = saved;
}

int ha_snapshot_now(void)
{
	struct snap_job j;
	ucontext_t uc;

	memset(&j, 0, sizeof(j));
	if (getcontext(&uc) != 0)
		return -1;
	snap_regs_from(j.regs, &uc.uc_mcontext, 0);
	return snap_take(&j, 1);
}

/* Zero the stack where ha_snapshot_now's frame is about to go. The core's stack
 * pointer is that frame's (getcontext), so the frame is a root of the lost
 * report; what it leaves unwritten (padding, the parts of a ucontext getcontext
 * does not fill) held what the program's deeper calls left there: stale copies
 * of dropped pointers kept leaked blocks "still reachable" where memcheck, which
 * has no frame of its own on the program's stack, says lost. */
__attribute__((noinline))
static void snap_scrub_stack(void)
{
	unsigned char buf[sizeof(struct snap_job) + sizeof(ucontext_t) + 1024];

	explicit_bzero(buf, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* glibc's: an exit handler; a NULL dso is no shared object's, so that
 * __cxa_finalize, which libheapann's own finalization calls with its handle,
 * leaves it to exit() (atexit() would pass libheapann's handle). */
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

/* The exit snapshot itself, as late as the process goes: an exit handler
 * registered by snap_at_exit while ld.so runs the destructors. */
/* dl_iterate_phdr callback: is this object libstdc++? */
static int snap_is_libstdcxx(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size;
	(void)unused;
	return info->dlpi_name && strstr(info->dlpi_name, "/libstdc++.so") != NULL;
}

#define SNAP_CXX_FREERES "_ZN9__gnu_cxx9__freeresEv"

/* Is the symbol at index i of symtab a definition named SNAP_CXX_FREERES? Its
 * st_name is checked against the string table's size first. */
static int snap_sym_is_freeres(uintptr_t symtab, uintptr_t syment, uintptr_t strtab, uintptr_t strsz, uint32_t i)
{
	const ElfW(Sym) *sym = (const ElfW(Sym) *)(symtab + (uintptr_t)i * syment);

	return sym->st_name && sym->st_name < strsz && sym->st_shndx != SHN_UNDEF && sym->st_value &&
	       strsz - sym->st_name > sizeof(SNAP_CXX_FREERES) - 1 &&
	       !strcmp((const char *)strtab + sym->st_name, SNAP_CXX_FREERES);
}

/* dl_iterate_phdr callback: does the main program (the first object) export
 * __gnu_cxx::__freeres, libstdc++.a linked in (gcc's cc1)? Looks the name up
 * through the object's DT_GNU_HASH or DT_HASH table as ld.so does, without
 * dlsym, whose failure allocates. The slots between DT_SYMTAB and DT_STRTAB
 * are not all symbols (lld puts .gnu.version, .gnu.version_r and .gnu.hash
 * there). Returns 1 when found, -1 otherwise (no hash table, no string table):
 * stops after the first object. */
static int snap_main_exports_freeres(struct dl_phdr_info *info, size_t size, void *unused)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnuhash = 0, syment = sizeof(ElfW(Sym));
	const char *name = SNAP_CXX_FREERES;

	(void)size;
	(void)unused;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			symtab = dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_STRSZ)
			strsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_SYMENT)
			syment = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_HASH)
			hash = dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnuhash = dyn->d_un.d_ptr;
	}
	/* ld.so relocates these entries in place; not where .dynamic is read-only */
	if (symtab && symtab < info->dlpi_addr)
		symtab += info->dlpi_addr;
	if (strtab && strtab < info->dlpi_addr)
		strtab += info->dlpi_addr;
	if (hash && hash < info->dlpi_addr)
		hash += info->dlpi_addr;
	if (gnuhash && gnuhash < info->dlpi_addr)
		gnuhash += info->dlpi_addr;
	if (!symtab || !strtab || !strsz || syment < sizeof(ElfW(Sym)))
		return -1;
	if (gnuhash) {
		/* nbuckets, symoffset, bloom words, bloom shift; the bloom filter;
		 * the buckets; a chain word a symbol from symoffset on, its low bit
		 * set at a chain's end */
		const uint32_t *h = (const uint32_t *)gnuhash;
		uint32_t nbuckets = h[0], symoffset = h[1], nbloom = h[2], hv = 5381;
		const uint32_t *buckets = (const uint32_t *)(gnuhash + 16 + (uintptr_t)nbloom * sizeof(ElfW(Addr)));
		const uint32_t *chain = buckets + nbuckets;

		if (!nbuckets)
			return -1;
		for (const unsigned char *c = (const unsigned char *)name; *c; c++)
			hv = hv * 33 + *c;
		for (uint32_t i = buckets[hv % nbuckets]; i >= symoffset && i - symoffset < (1u << 24); i++) {
			uint32_t ch = chain[i - symoffset];

			if ((ch | 1) == (hv | 1) && snap_sym_is_freeres(symtab, syment, strtab, strsz, i))
				return 1;
			if (ch & 1)
				break;
		}
		return -1;
	}
	if (hash) {
		/* nbucket, nchain, the buckets, a chain word a symbol (0 ends) */
		const uint32_t *h = (const uint32_t *)hash;
		uint32_t nbucket = h[0], nchain = h[1], hv = 0, steps = 0;

		if (!nbucket)
			return -1;
		for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
			uint32_t g;

			hv = (hv << 4) + *c;
			g = hv & 0xf0000000u;
			if (g)
				hv ^= g >> 24;
			hv &= ~g;
		}
		for (uint32_t i = h[2 + hv % nbucket]; i && i < nchain && steps++ < nchain; i = h[2 + nbucket + i])
			if (snap_sym_is_freeres(symtab, syment, strtab, strsz, i))
				return 1;
	}
	return -1;
}

static void snap_exit_late(void *unused)
{
	void (*cxx_freeres)(void) = NULL;

	(void)unused;
	/* libstdc++'s emergency pool for exceptions (72,704 bytes in GCC 12),
	 * allocated by its initializer and kept to the end: memcheck frees it
	 * (__gnu_cxx::__freeres) before it looks, so it is not in its report
	 * and, live here, it was "still reachable" in every C++ program's.
	 * Nothing the process does from here on throws. Looked up only when
	 * libstdc++.so is loaded or the program exports it (libstdc++.a linked
	 * in, gcc's cc1): a dlsym that fails allocates (the error's string and
	 * state), which the whole run's statistics would count. */
	if (dl_iterate_phdr(snap_is_libstdcxx, NULL) || dl_iterate_phdr(snap_main_exports_freeres, NULL) > 0)
		*(void **)&cxx_freeres = dlsym(RTLD_DEFAULT, SNAP_CXX_FREERES);
	if (cxx_freeres)
		cxx_freeres();
	snap_scrub_stack();
	ha_snapshot_now();
}

/* HEAPANN_SNAPSHOT=exit: after main returned or exit() was called, the
 * program's atexit handlers and its libraries' destructors, which is where
 * memcheck looks for leaks. This destructor is not that late: ld.so finalizes
 * the preload before the libraries it initialized after it (those the program
 * needs), so a library's __attribute__((destructor)) that frees its blocks ran
 * after the snapshot, whose report kept them. ld.so's finalization is itself an
 * exit handler, and exit() runs the handlers registered meanwhile once it
 * returns: the snapshot is one of those (taken here only when that fails). */
__attribute__((destructor))
static void snap_at_exit(void)
{
	if (!snap_on_exit)
		return;
	if (__cxa_atexit(snap_exit_late, 0, 0) == 0)
		return;
	snap_exit_late(0);
}

/* ---- set-up ---- */


static void snap_warn(const char *what, const char *s, const char *end)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: HEAPANN_SNAPSHOT: ");
	ha_line_str(&l, what);
	ha_line_str(&l, " '");
	while (s < end && l.len < 200)
		l.buf[l.len++] = *s++;
	ha_line_str(&l, "' ignored");
	ha_line_send(&l);
}

/* Parse HEAPANN_SNAPSHOT's comma-separated list. */
static void snap_parse(const char *v)
{
	while (*v) {
		const char *end = strchr(v, ',');
		size_t len;

		if (!end)
			end = v + strlen(v);
		len = (size_t)(end - v);
		if (len == 4 && strncmp(v, "exit", 4) == 0) {
			snap_on_exit = 1;
		} else if (len == 5 && strncmp(v, "abort", 5) == 0) {
			snap_on_abort = 1;
		} else if (len >= 6 && strncmp(v, "signal", 6) == 0 && (len == 6 || v[6] == ':')) {
			int sig = len == 6 ? SIGUSR2 : ha_signal_parse(v + 7, end);

			if (!sig || sig == SIGKILL || sig == SIGSTOP)
				snap_warn("unknown signal in", v, end);
			else if (snap_nsignals < SNAP_MAX_SIGNALS)
				snap_signals[snap_nsignals++] = sig;
		} else if (len) {
			snap_warn("unknown item", v, end);
		}
		v = *end ? end + 1 : end;
	}
}

/* snap_dir: HEAPANN_SNAPSHOT_DIR made absolute against the directory the program
 * started in (so a chdir() later does not move the cores), default that directory. */
static void snap_dir_init(void)
{
	const char *d = snap_env("HEAPANN_SNAPSHOT_DIR");
	size_t len = 0, dl;

	if (!d || d[0] != '/') {
		if (syscall(SYS_getcwd, snap_dir, sizeof(snap_dir)) < 0 || snap_dir[0] != '/')
			strcpy(snap_dir, ".");
		len = strlen(snap_dir);
		if (!d || !*d || (d[0] == '.' && d[1] == 0))
			return;
		snap_dir[len++] = '/';
	}
	dl = strlen(d);
	if (len + dl >= sizeof(snap_dir))
		dl = sizeof(snap_dir) - len - 1;
	memcpy(snap_dir + len, d, dl);
	len += dl;
	snap_dir[len] = 0;
	while (len > 1 && snap_dir[len - 1] == '/')
		snap_dir[--len] = 0;
}

/* "heapann: HEAPANN_SNAPSHOT_COMPRESS: WHAT 'V' ignored (zstd, zstd:LEVEL or none)" */
static void snap_compress_warn(const char *what, const char *v)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: HEAPANN_SNAPSHOT_COMPRESS: ");
	ha_line_str(&l, what);
	ha_line_str(&l, " '");
	while (*v && l.len < 200)
		l.buf[l.len++] = *v++;
	ha_line_str(&l, "' ignored (zstd, zstd:LEVEL or none): the cores are not compressed");
	ha_line_send(&l);
}

/* HEAPANN_SNAPSHOT_COMPRESS: "none" (the default) or "zstd[:LEVEL]" (1 to 19,
 * default 3); anything else is warned about and ignored. With zstd, snap_zstd is
 * HEAPANN_ZSTD, else the first executable zstd on PATH, else "" (each snapshot
 * then says so and writes the plain core). */
static void snap_compress_init(void)
{
	const char *v = snap_env("HEAPANN_SNAPSHOT_COMPRESS"), *z, *path;

	if (!v || !*v || strcmp(v, "none") == 0)
		return;
	if (strncmp(v, "zstd", 4) != 0 || (v[4] && v[4] != ':')) {
		snap_compress_warn("unknown value", v);
		return;
	}
	if (v[4] == ':') {
		const char *d = v + 5;
		int level = 0;

		while (*d >= '0' && *d <= '9' && level < 100)
			level = level * 10 + (*d++ - '0');
		if (*d || level < 1 || level > 19) {
			snap_compress_warn("zstd level not 1 to 19 in", v);
			return;
		}
		snap_zstd_level[1] = (char)(level >= 10 ? '0' + level / 10 : '0' + level);
		snap_zstd_level[2] = (char)(level >= 10 ? '0' + level % 10 : 0);
		snap_zstd_level[3] = 0;
	}
	snap_compress_zstd = 1;
	z = snap_env("HEAPANN_ZSTD");
	if (z && *z) {
		snap_copy(snap_zstd, z, sizeof(snap_zstd));
		return;
	}
	path = snap_env("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		if (len && len + 6 < sizeof(snap_zstd)) {
			memcpy(snap_zstd, path, len);
			memcpy(snap_zstd + len, "/zstd", 6);
			if (access(snap_zstd, X_OK) == 0)
				return;
		}
		path += len + (end != 0);
	}
	snap_zstd[0] = 0;
}

/* snap_prog: the basename of /proc/self/exe, else the short invocation name. */
static void snap_prog_init(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *b = program_invocation_short_name;

	if (n > 0) {
		exe[n] = 0;
		b = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	}
	if (!b || !*b)
		b = "prog";
	snap_copy(snap_prog, b, sizeof(snap_prog));
}

/* A fork()ed child of the program counts its own snapshots from 1 again. */
static void snap_atfork_child(void)
{
	int mine = snap_stack_mine;

	snap_count = 0;
	/* the registry: the other threads are not in the child; this one has a
	 * new tid */
	for (unsigned i = 0; i < SNAP_STACKS; i++)
		if (snap_stacks[i].tid && (int)i + 1 != mine)
			snap_stacks[i].tid = 0;
	if (mine > 0)
		snap_stacks[mine - 1].tid = (int)syscall(SYS_gettid);
}

static void snap_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, 0);
}

/* Read the options and install the handlers. A constructor of its own, so the
 * allocator's start-up is untouched when HEAPANN_SNAPSHOT is unset. */
HA_CONSTRUCTOR(HA_PRIO_SNAPSHOT)
static void snap_init(void)
{
	static const int crash[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	const char *v = snap_env("HEAPANN_SNAPSHOT"), *q;

	if (!v || !*v)
		return;
	snap_parse(v);
	if (!snap_on_exit && !snap_on_abort && !snap_nsignals)
		return;
	v = snap_env("HEAPANN_SNAPSHOT_WAIT");
	snap_nowait = v && v[0] == '0' && v[1] == 0;
	q = snap_env("HEAPANN_QUIET");
	snap_quiet = q && q[0] && !(q[0] == '0' && q[1] == 0);
	snap_dir_init();
	snap_prog_init();
	snap_compress_init();
	pthread_atfork(0, 0, snap_atfork_child);
	/* the registry of stacks, from this thread (the main one, as a rule) on */
	if (pthread_key_create(&snap_stacks_key, snap_stack_release) == 0) {
		__atomic_store_n(&snap_stacks_on, 1, __ATOMIC_RELEASE);
		if (!snap_stack_mine)
			snap_stack_claim((int)syscall(SYS_gettid),
					 (uintptr_t)__builtin_frame_address(0));
	}
	for (int i = 0; i < snap_nsignals; i++)
		snap_install(snap_signals[i], snap_on_signal, 0);
	if (snap_on_abort)
		for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
			snap_install(crash[i], snap_on_crash, SA_RESETHAND | SA_ONSTACK);
}

#else
/* Not built here (static kit, or not x86-64 Linux): an empty unit. */
typedef int ha_snapshot_unused;
#endif /* HA_HAVE_SNAPSHOT */
