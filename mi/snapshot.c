/* snapshot.c - a core of a live process without killing it: gdb attaches over MI,
 * writes the core with gcore and detaches, so the process is stopped only for as
 * long as its memory takes to write. Each way this can fail gets its own code and
 * a message that says what to do. A name ending in .zst gets a zstd frame: gcore
 * seeks while it writes, so it writes NAME.part, compressed here after the detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "mi.h"

#define SNAP_ZSTD_LEVEL 3   /* the zstd program's default */

static int snap_error(struct mi_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Explain a refused ptrace attach: Yama's setting, or another user's process. */
static void snap_perm_hint(pid_t pid, char *out, size_t n)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = -1;
	struct stat st;
	char path[64];

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st) == 0 && st.st_uid != geteuid() && geteuid() != 0)
		snprintf(out, n, "process %d belongs to another user (uid %u): run as that user or as root",
			 (int)pid, (unsigned)st.st_uid);
	else if (scope == 1)
		snprintf(out, n, "kernel.yama.ptrace_scope is 1 (only parents may trace): run as root, "
			 "or set it to 0 with 'sysctl kernel.yama.ptrace_scope=0'");
	else if (scope == 2)
		snprintf(out, n, "kernel.yama.ptrace_scope is 2 (only with CAP_SYS_PTRACE): run as root");
	else if (scope == 3)
		snprintf(out, n, "kernel.yama.ptrace_scope is 3 (tracing disabled until reboot)");
	else
		snprintf(out, n, "run as the process's user or as root (in a container, ptrace needs "
			 "CAP_SYS_PTRACE and a seccomp profile that allows it)");
}

/* The process is traced already (by a debugger, strace)? TracerPid in its status. */
static int snap_tracer(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int tracer = 0;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

/* The process's state letter from /proc/PID/status ('S', 'R', 'T'...), or 0. */
static char snap_state(pid_t pid)
{
	char path[64], line[256];
	char st = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "State: %c", &st) == 1)
			break;
	fclose(f);
	return st;
}

/* Run one command; 0 on ^done, else err filled with prefix and gdb's message. */
static int snap_exec(struct mi_client *c, const char *cmd, unsigned tmo, char *msg, size_t n,
		     struct mi_error *err)
{
	struct mi_reply r;
	const char *m;

	if (mi_client_exec(c, cmd, tmo, &r, err) < 0) {
		if (err) {
			char prefixed[sizeof err->msg];

			snprintf(prefixed, sizeof prefixed, "snapshot: %.*s",
				 (int)(sizeof prefixed - 11), err->msg);
			memcpy(err->msg, prefixed, sizeof prefixed);
		}
		return -1;
	}
	m = mi_reply_error(&r);
	if (m) {
		snprintf(msg, n, "%s", m);
		mi_reply_release(&r);
		return snap_error(err, MI_EGDB, "%s", msg);
	}
	mi_reply_release(&r);
	return 0;
}

int mi_ends_with(const char *path, const char *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);

	return n > k && !strcasecmp(path + n - k, suffix);
}

/* Create a new file named path.XXXXXX (mkstemp: a name no file has, mode 0600)
 * beside path, its name into buf (n bytes). Returns 0, or -1 with err filled. */
static int snap_temp(const char *path, char *buf, size_t n, struct mi_error *err)
{
	int fd;

	if ((size_t)snprintf(buf, n, "%s.XXXXXX", path) >= n) {
		buf[0] = '\0';
		return snap_error(err, MI_EARG, "snapshot: output path too long");
	}
	fd = mkostemp(buf, O_CLOEXEC);
	if (fd < 0) {
		snap_error(err, MI_EIO, "snapshot: cannot create a temporary file %s: %s", buf, strerror(errno));
		buf[0] = '\0';
		return -1;
	}
	close(fd);
	return 0;
}

/* Compress the core at src into dst (an existing file of ours, truncated) as one
 * zstd frame with a content checksum, as the zstd program writes it. Returns 0,
 * or -1 with err filled (MI_EIO, MI_ENOMEM); both files are left to the caller. */
static int snap_zstd_file(const char *src, const char *dst, struct mi_error *err)
{
	ZSTD_CCtx *z = NULL;
	size_t in_cap = ZSTD_CStreamInSize(), out_cap = ZSTD_CStreamOutSize();
	unsigned char *in = malloc(in_cap), *out = malloc(out_cap);
	int fd = -1, ofd = -1, ret = -1, done = 0;
	struct stat st;

	if (!in || !out || !(z = ZSTD_createCCtx())) {
		snap_error(err, MI_ENOMEM, "snapshot: out of memory compressing %s", dst);
		goto out;
	}
	ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, SNAP_ZSTD_LEVEL);
	ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(z, ZSTD_c_nbWorkers, 2);   /* refused by a library built without threads */
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snap_error(err, MI_EIO, "snapshot: %s: %s", src, strerror(errno));
		goto out;
	}
	ofd = open(dst, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (ofd < 0) {
		snap_error(err, MI_EIO, "snapshot: cannot create %s: %s", dst, strerror(errno));
		goto out;
	}
	ZSTD_CCtx_setPledgedSrcSize(z, (unsigned long long)st.st_size);
	while (!done) {
		ssize_t n = read(fd, in, in_cap);
		ZSTD_inBuffer ib = { in, n > 0 ? (size_t)n : 0, 0 };
		ZSTD_EndDirective mode = n == 0 ? ZSTD_e_end : ZSTD_e_continue;
		size_t left;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snap_error(err, MI_EIO, "snapshot: reading %s: %s", src, strerror(errno));
			goto out;
		}
		do {
			ZSTD_outBuffer ob = { out, out_cap, 0 };

			left = ZSTD_compressStream2(z, &ob, &ib, mode);
			if (ZSTD_isError(left)) {
				snap_error(err, MI_EIO, "snapshot: compressing %s: %s", src, ZSTD_getErrorName(left));
				goto out;
			}
			for (size_t w = 0; w < ob.pos;) {
				ssize_t k = write(ofd, out + w, ob.pos - w);

				if (k < 0 && errno == EINTR)
					continue;
				if (k < 0) {
					snap_error(err, MI_EIO, "snapshot: writing %s: %s", dst, strerror(errno));
					goto out;
				}
				w += (size_t)k;
			}
		} while (mode == ZSTD_e_end ? left != 0 : ib.pos < ib.size);
		done = mode == ZSTD_e_end;
	}
	ret = 0;
out:
	if (ofd >= 0 && close(ofd) < 0 && ret == 0)
		ret = snap_error(err, MI_EIO, "snapshot: writing %s: %s", dst, strerror(errno));
	if (fd >= 0)
		close(fd);
	ZSTD_freeCCtx(z);
	free(in);
	free(out);
	return ret;
}

int mi_snapshot(pid_t pid, const char *out_path, const char *gdb, unsigned timeout_ms,
		struct mi_error *err)
{
	struct mi_settings set;
	struct mi_client *c = NULL;
	char cmd[8900], q[4200], msg[512], hint[256], part[4200], zpart[4200];
	const char *core_path = out_path;   /* what gcore writes */
	int zst;
	unsigned cmd_tmo = timeout_ms ? timeout_ms : 30000;
	unsigned gcore_tmo = timeout_ms ? timeout_ms : 120000;
	int wrote = 0, attached = 0, tracer, ret = -1;
	char state_before;
	struct stat st;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (pid <= 0)
		return snap_error(err, MI_EARG, "snapshot: bad process id %d", (int)pid);
	if (!out_path || !out_path[0])
		return snap_error(err, MI_EARG, "snapshot: no output file");
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return snap_error(err, MI_ENOPROC, "snapshot: no process with id %d", (int)pid);
	tracer = snap_tracer(pid);
	if (tracer > 0)
		return snap_error(err, MI_EPERM, "snapshot: process %d is already traced by process %d "
				  "(a debugger or strace): detach it first", (int)pid, tracer);
	if (mi_quote(q, sizeof q, out_path) >= sizeof q)
		return snap_error(err, MI_EARG, "snapshot: output path too long");
	/* NAME.zst: gcore writes a core of a fresh name beside it, compressed into
	 * another, renamed over NAME.zst only when all went well */
	zst = mi_ends_with(out_path, ".zst");
	part[0] = zpart[0] = '\0';
	if (zst && (size_t)snprintf(part, sizeof part, "%s.XXXXXX", out_path) >= sizeof part)
		return snap_error(err, MI_EARG, "snapshot: output path too long");

	state_before = snap_state(pid);
	memset(&set, 0, sizeof set);
	set.gdb = gdb;
	c = mi_client_start(&set, err);
	if (!c)
		return -1;

	snprintf(cmd, sizeof cmd, "-target-attach %d", (int)pid);
	if (snap_exec(c, cmd, cmd_tmo, msg, sizeof msg, err) < 0) {
		if (err && err->code == MI_EGDB) {
			if (strstr(msg, "No such process") || (kill(pid, 0) < 0 && errno == ESRCH)) {
				snap_error(err, MI_ENOPROC, "snapshot: no process with id %d", (int)pid);
			} else if (strstr(msg, "ermission") || strstr(msg, "not permitted")) {
				snap_perm_hint(pid, hint, sizeof hint);
				snap_error(err, MI_EPERM, "snapshot: cannot attach to process %d: ptrace not "
					   "permitted (%s)", (int)pid, hint);
			} else {
				snap_error(err, MI_EGDB, "snapshot: cannot attach to process %d: %s", (int)pid, msg);
			}
		}
		goto out;
	}
	attached = 1;

	if (zst) {
		if (snap_temp(out_path, part, sizeof part, err) < 0)
			goto out;
		core_path = part;
	}
	/* MI has no gcore command: the CLI one, quoted as an MI c-string. gcore takes
	 * the rest of its line as the file name, so spaces are fine. */
	{
		char inner[4300], q2[8800];

		snprintf(inner, sizeof inner, "gcore %s", core_path);
		if (mi_quote(q2, sizeof q2, inner) >= sizeof q2) {
			snap_error(err, MI_EARG, "snapshot: output path too long");
			goto out;
		}
		snprintf(cmd, sizeof cmd, "-interpreter-exec console %s", q2);
	}
	wrote = 1;
	if (snap_exec(c, cmd, gcore_tmo, msg, sizeof msg, err) < 0) {
		if (err && err->code == MI_EGDB)
			snap_error(err, MI_EGDB, "snapshot: gcore of process %d into %s failed: %s",
				   (int)pid, core_path, msg);
		goto out;
	}
	if (stat(core_path, &st) != 0 || st.st_size == 0) {
		snap_error(err, MI_EIO, "snapshot: gcore wrote nothing to %s", core_path);
		goto out;
	}
	if (snap_exec(c, "-target-detach", cmd_tmo, msg, sizeof msg, err) < 0) {
		if (err && err->code == MI_EGDB)
			snap_error(err, MI_EGDB, "snapshot: detaching from process %d failed: %s", (int)pid, msg);
		goto out;
	}
	attached = 0;
	/* the process runs on while its core is compressed */
	if (zst) {
		if (snap_temp(out_path, zpart, sizeof zpart, err) < 0 ||
		    snap_zstd_file(core_path, zpart, err) < 0)
			goto out;
		if (rename(zpart, out_path) < 0) {
			snap_error(err, MI_EIO, "snapshot: cannot rename %s to %s: %s", zpart, out_path,
				   strerror(errno));
			goto out;
		}
		zpart[0] = '\0';
	}
	ret = 0;
out:
	/* gdb detaches from a process it attached to when its input ends or it is
	 * told to exit; when it had to be killed (a time-out), the kernel detaches
	 * it but may leave it stopped by the attach's SIGSTOP: wake a process that
	 * was not stopped before we came. */
	mi_client_close(c);
	if (attached && state_before != 'T' && state_before != 't' && snap_state(pid) == 'T')
		kill(pid, SIGCONT);
	if (zst && part[0] && core_path == part)
		unlink(part);
	else if (ret < 0 && wrote)
		unlink(core_path);
	if (zpart[0])
		unlink(zpart);
	return ret;
}

int mi_process_exe(pid_t pid, char *buf, size_t n, struct mi_error *err)
{
	char link[64];
	ssize_t len;
	static const char deleted[] = " (deleted)";

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (pid <= 0 || !buf || n < 2)
		return snap_error(err, MI_EARG, "bad process id %d or buffer", (int)pid);
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	len = readlink(link, buf, n - 1);
	if (len < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return snap_error(err, MI_ENOPROC, "no process with id %d", (int)pid);
		if (errno == EACCES || errno == EPERM)
			return snap_error(err, MI_EPERM, "process %d: cannot read its program path (%s): "
					  "run as its user or as root", (int)pid, strerror(errno));
		return snap_error(err, MI_EIO, "%s: %s", link, strerror(errno));
	}
	if ((size_t)len >= n - 1)
		return snap_error(err, MI_EARG, "process %d: program path too long", (int)pid);
	buf[len] = '\0';
	if ((size_t)len > sizeof deleted - 1 && strcmp(buf + len - (sizeof deleted - 1), deleted) == 0)
		return snap_error(err, MI_EIO, "process %d: its program %.*s was deleted or replaced "
				  "since it started: give the program file explicitly", (int)pid,
				  (int)(len - (ssize_t)(sizeof deleted - 1)), buf);
	return 0;
}
