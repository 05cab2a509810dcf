/* client.c - run one gdb child over MI2: spawn it with argv (no shell), write
 * numbered commands and read its output from one poll() loop (a blocked pipe on
 * either side would otherwise deadlock both processes), a deadline per command,
 * and a clear error when gdb dies or hangs. The child is ours alone: we reap it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mi.h"

extern char **environ;

#define MI_LINE_MAX (64u << 20)   /* one output line longer than this is refused */
#define MI_STDERR_KEEP 400        /* bytes of gdb's stderr kept for error messages */

struct mi_client {
	pid_t pid;               /* the gdb child, 0 once reaped */
	int in_fd;               /* our end of gdb's stdin (a socket), -1 when closed */
	int out_fd;              /* read end of gdb's stdout, -1 at EOF */
	int err_fd;              /* read end of gdb's stderr, -1 at EOF */
	unsigned long long next_token;
	char *rbuf;              /* stdout bytes not yet split into lines */
	size_t rlen, rcap;
	char errtail[MI_STDERR_KEEP + 1]; /* the end of gdb's stderr */
	size_t errlen;
	char *banner;            /* stream text before the first prompt */
	struct mi_error dead;    /* set once the client is unusable */
	int status;              /* wait status once reaped */
};

static void set_error(struct mi_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Append bytes to a growing NUL-terminated buffer. */
static int buf_append(char **buf, size_t *len, const char *s, size_t n)
{
	char *nb = realloc(*buf, *len + n + 1);

	if (!nb)
		return -1;
	memcpy(nb + *len, s, n);
	*len += n;
	nb[*len] = '\0';
	*buf = nb;
	return 0;
}

void mi_reply_release(struct mi_reply *r)
{
	size_t i;

	if (!r)
		return;
	mi_record_release(&r->result);
	free(r->console);
	free(r->log);
	for (i = 0; i < r->nasync; i++)
		mi_record_release(&r->async[i]);
	free(r->async);
	memset(r, 0, sizeof *r);
}

const char *mi_reply_error(const struct mi_reply *r)
{
	const char *m;

	if (!r || !r->result.klass || strcmp(r->result.klass, "error") != 0)
		return NULL;
	m = mi_value_str(r->result.results, "msg");
	return m ? m : "unknown error";
}

const char *mi_client_banner(const struct mi_client *c)
{
	return c && c->banner ? c->banner : "";
}

pid_t mi_client_pid(const struct mi_client *c)
{
	return c ? c->pid : 0;
}

/* Keep the last line(s) of stderr for error messages. */
static void keep_stderr(struct mi_client *c, const char *s, size_t n)
{
	if (n >= MI_STDERR_KEEP) {
		s += n - MI_STDERR_KEEP;
		n = MI_STDERR_KEEP;
	}
	if (c->errlen + n > MI_STDERR_KEEP) {
		size_t drop = c->errlen + n - MI_STDERR_KEEP;

		memmove(c->errtail, c->errtail + drop, c->errlen - drop);
		c->errlen -= drop;
	}
	memcpy(c->errtail + c->errlen, s, n);
	c->errlen += n;
	c->errtail[c->errlen] = '\0';
}

/* The last non-empty line of gdb's stderr, into out (for messages). */
static const char *stderr_last_line(struct mi_client *c, char *out, size_t n)
{
	size_t end = c->errlen, start;

	while (end && (c->errtail[end - 1] == '\n' || c->errtail[end - 1] == '\r'))
		end--;
	start = end;
	while (start && c->errtail[start - 1] != '\n')
		start--;
	if (end - start + 1 > n)
		start = end - (n - 1);
	memcpy(out, c->errtail + start, end - start);
	out[end - start] = '\0';
	return out;
}

/* Reap the child: wait up to wait_ms for it to exit, then SIGKILL and wait. */
static void reap_child(struct mi_client *c, long long wait_ms)
{
	long long deadline = now_ms() + wait_ms;

	if (c->pid <= 0)
		return;
	for (;;) {
		pid_t r = waitpid(c->pid, &c->status, WNOHANG);

		if (r == c->pid || (r < 0 && errno != EINTR)) {
			if (r < 0)
				c->status = -1;
			c->pid = 0;
			return;
		}
		if (now_ms() >= deadline)
			break;
		usleep(10000);
	}
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->status = -1;
	c->pid = 0;
}

/* gdb's output ended: reap it and describe how it went. */
static void mark_died(struct mi_client *c, struct mi_error *err)
{
	char last[200];
	char how[64];

	/* Drain stderr for the message. */
	if (c->err_fd >= 0) {
		char tmp[4096];
		ssize_t n;
		int fl = fcntl(c->err_fd, F_GETFL);

		fcntl(c->err_fd, F_SETFL, fl | O_NONBLOCK);
		while ((n = read(c->err_fd, tmp, sizeof tmp)) > 0)
			keep_stderr(c, tmp, (size_t)n);
	}
	reap_child(c, 1000);
	if (c->status == -1)
		snprintf(how, sizeof how, "closed its output");
	else if (WIFEXITED(c->status))
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(c->status));
	else
		snprintf(how, sizeof how, "stopped");
	stderr_last_line(c, last, sizeof last);
	set_error(&c->dead, MI_EDIED, "gdb %s%s%s", how, last[0] ? ": " : "", last);
	if (err)
		*err = c->dead;
}

static void mark_dead(struct mi_client *c, const struct mi_error *why, struct mi_error *err)
{
	c->dead = *why;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		reap_child(c, 1000);
	}
	if (err)
		*err = c->dead;
}

/* One command in flight or waiting to be written. */
struct pending {
	char *line;       /* "TOKENcmd\n" */
	size_t len, off;  /* bytes written so far */
	unsigned long long token;
};

/* Attribute one parsed non-result record to the reply being collected. */
static int reply_add(struct mi_reply *r, struct mi_record *rec)
{
	switch (rec->kind) {
	case MI_REC_CONSOLE:
	case MI_REC_TARGET:
		if (buf_append(&r->console, &r->console_len, rec->text, rec->text_len) < 0)
			return -1;
		mi_record_release(rec);
		return 0;
	case MI_REC_LOG:
		if (buf_append(&r->log, &r->log_len, rec->text, rec->text_len) < 0)
			return -1;
		mi_record_release(rec);
		return 0;
	case MI_REC_EXEC:
	case MI_REC_STATUS:
	case MI_REC_NOTIFY: {
		struct mi_record *na = realloc(r->async, (r->nasync + 1) * sizeof *na);

		if (!na)
			return -1;
		r->async = na;
		r->async[r->nasync++] = *rec;
		memset(rec, 0, sizeof *rec);
		return 0;
	}
	default:
		mi_record_release(rec);
		return 0;
	}
}

/* Make sure console and log are never NULL in a finished reply. */
static int reply_finish(struct mi_reply *r)
{
	if (!r->console && buf_append(&r->console, &r->console_len, "", 0) < 0)
		return -1;
	if (!r->log && buf_append(&r->log, &r->log_len, "", 0) < 0)
		return -1;
	return 0;
}

/* The state of one run of the loop. */
struct loop {
	struct pending *pend;
	size_t n, sent, done;
	struct mi_reply *replies;
	struct mi_reply *banner;   /* non-NULL while waiting for the first prompt */
	unsigned timeout_ms;
	long long deadline;
};

/* Handle the complete lines in c->rbuf until the last awaited answer (or the
 * first prompt in banner mode) is in; what follows stays in the buffer for the
 * next command. Returns 1 when finished, 0 to go on, -1 on a fatal error. */
static int process_lines(struct mi_client *c, struct loop *L, struct mi_error *err)
{
	size_t start = 0;
	char *nl;
	int ret = 0;
	struct mi_error why;

	if (!c->rbuf)
		return 0;
	while (ret == 0 && (L->banner || L->done < L->n) &&
	       (nl = memchr(c->rbuf + start, '\n', c->rlen - start)) != NULL) {
		size_t llen = (size_t)(nl - (c->rbuf + start)) + 1;
		struct mi_record rec;
		struct mi_error perr;
		struct mi_reply *cur = L->banner ? L->banner : &L->replies[L->done];

		if (mi_parse_line(c->rbuf + start, llen, &rec, &perr) < 0) {
			/* Not MI (a stray message on stdout): keep it as log text of the
			 * current reply rather than fail. */
			if (buf_append(&cur->log, &cur->log_len, c->rbuf + start, llen) < 0)
				goto nomem;
			start += llen;
			continue;
		}
		start += llen;
		if (rec.kind == MI_REC_PROMPT) {
			if (L->banner)
				ret = 1;
			continue;
		}
		if (L->banner || rec.kind != MI_REC_RESULT) {
			if (reply_add(cur, &rec) < 0) {
				mi_record_release(&rec);
				goto nomem;
			}
			continue;
		}
		if (rec.has_token && rec.token != L->pend[L->done].token) {
			set_error(&why, MI_EPROTO, "gdb answered token %llu, expected %llu",
				  rec.token, L->pend[L->done].token);
			mi_record_release(&rec);
			mark_dead(c, &why, err);
			return -1;
		}
		cur->result = rec;
		if (reply_finish(cur) < 0)
			goto nomem;
		L->done++;
		L->deadline = now_ms() + L->timeout_ms;
		if (L->done == L->n)
			ret = 1;
	}
	memmove(c->rbuf, c->rbuf + start, c->rlen - start);
	c->rlen -= start;
	return ret;
nomem:
	set_error(&why, MI_ENOMEM, "out of memory reading gdb's output");
	mark_dead(c, &why, err);
	return -1;
}

/*
 * The loop: write pending commands while reading gdb's stdout and stderr.
 * replies[i] collects everything up to the result record of cmds[i]. With
 * banner set, no command is sent: we wait for the first prompt and the stream
 * text goes into *banner.
 */
static int run_loop(struct mi_client *c, struct loop *L, struct mi_error *err)
{
	struct mi_error why;
	int r;

	L->deadline = now_ms() + L->timeout_ms;
	r = process_lines(c, L, err);
	while (r == 0) {
		struct pollfd fds[3];
		int nfds = 0, iw = -1, io = -1, ie = -1;
		long long left = L->deadline - now_ms();

		if (left <= 0) {
			if (L->banner)
				set_error(&why, MI_ETIMEOUT, "gdb did not start within %u ms (killed it)",
					  L->timeout_ms);
			else
				set_error(&why, MI_ETIMEOUT, "gdb did not answer \"%.*s\" within %u ms (killed it)",
					  (int)(L->pend[L->done].len > 200 ? 200 : L->pend[L->done].len - 1),
					  L->pend[L->done].line, L->timeout_ms);
			mark_dead(c, &why, err);
			return -1;
		}
		if (L->sent < L->n && c->in_fd >= 0) {
			fds[nfds].fd = c->in_fd;
			fds[nfds].events = POLLOUT;
			iw = nfds++;
		}
		if (c->out_fd >= 0) {
			fds[nfds].fd = c->out_fd;
			fds[nfds].events = POLLIN;
			io = nfds++;
		}
		if (c->err_fd >= 0) {
			fds[nfds].fd = c->err_fd;
			fds[nfds].events = POLLIN;
			ie = nfds++;
		}
		if (io < 0) {
			mark_died(c, err);
			return -1;
		}
		if (poll(fds, (nfds_t)nfds, (int)(left > 1000000 ? 1000000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			set_error(&why, MI_ESPAWN, "poll: %s", strerror(errno));
			mark_dead(c, &why, err);
			return -1;
		}
		if (iw >= 0 && (fds[iw].revents & (POLLOUT | POLLERR | POLLHUP))) {
			struct pending *pd = &L->pend[L->sent];
			ssize_t w = send(c->in_fd, pd->line + pd->off, pd->len - pd->off,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			if (w > 0) {
				pd->off += (size_t)w;
				if (pd->off == pd->len)
					L->sent++;
			} else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				/* gdb closed its input: it is dying; its output tells the rest. */
				close(c->in_fd);
				c->in_fd = -1;
			}
		}
		if (ie >= 0 && (fds[ie].revents & (POLLIN | POLLHUP | POLLERR))) {
			char tmp[4096];
			ssize_t got = read(c->err_fd, tmp, sizeof tmp);

			if (got > 0) {
				keep_stderr(c, tmp, (size_t)got);
			} else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(c->err_fd);
				c->err_fd = -1;
			}
		}
		if (io >= 0 && (fds[io].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t got;

			if (c->rcap - c->rlen < 65536) {
				size_t ncap = c->rcap ? c->rcap * 2 : 131072;
				char *nb;

				if (ncap > MI_LINE_MAX + 131072) {
					set_error(&why, MI_EPROTO, "gdb wrote a line longer than %u bytes", MI_LINE_MAX);
					mark_dead(c, &why, err);
					return -1;
				}
				nb = realloc(c->rbuf, ncap);
				if (!nb) {
					set_error(&why, MI_ENOMEM, "out of memory reading gdb's output");
					mark_dead(c, &why, err);
					return -1;
				}
				c->rbuf = nb;
				c->rcap = ncap;
			}
			got = read(c->out_fd, c->rbuf + c->rlen, c->rcap - c->rlen);
			if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
				close(c->out_fd);
				c->out_fd = -1;
				mark_died(c, err);
				return -1;
			}
			if (got > 0) {
				c->rlen += (size_t)got;
				r = process_lines(c, L, err);
			}
		}
	}
	return r < 0 ? -1 : 0;
}

int mi_client_exec_batch(struct mi_client *c, const char *const *cmds, size_t n,
			 unsigned timeout_ms, struct mi_reply *replies, struct mi_error *err)
{
	struct pending *pend = NULL;
	size_t i;
	int ret = -1;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	for (i = 0; i < n; i++)
		memset(&replies[i], 0, sizeof replies[i]);
	if (!c) {
		set_error(err, MI_EARG, "no gdb client");
		return -1;
	}
	if (c->dead.code) {
		if (err)
			*err = c->dead;
		return -1;
	}
	if (n == 0)
		return 0;
	if (!timeout_ms)
		timeout_ms = 30000;
	for (i = 0; i < n; i++) {
		if (!cmds[i] || strpbrk(cmds[i], "\r\n")) {
			set_error(err, MI_EARG, "MI command %zu holds a line break", i);
			return -1;
		}
	}
	pend = calloc(n, sizeof *pend);
	if (!pend) {
		set_error(err, MI_ENOMEM, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		size_t need = strlen(cmds[i]) + 32;

		pend[i].token = c->next_token++;
		pend[i].line = malloc(need);
		if (!pend[i].line) {
			set_error(err, MI_ENOMEM, "out of memory");
			goto out;
		}
		pend[i].len = (size_t)snprintf(pend[i].line, need, "%llu%s\n", pend[i].token, cmds[i]);
	}
	{
		struct loop L = { pend, n, 0, 0, replies, NULL, timeout_ms, 0 };

		ret = run_loop(c, &L, err);
	}
	if (ret < 0)
		for (i = 0; i < n; i++)
			mi_reply_release(&replies[i]);
out:
	for (i = 0; i < n; i++)
		free(pend[i].line);
	free(pend);
	return ret;
}

int mi_client_exec(struct mi_client *c, const char *cmd, unsigned timeout_ms,
		   struct mi_reply *reply, struct mi_error *err)
{
	return mi_client_exec_batch(c, &cmd, 1, timeout_ms, reply, err);
}

/* Is prog found (and executable) in PATH, or as a path? */
static int find_program(const char *prog)
{
	const char *path, *p;
	char buf[4096];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; ) {
		const char *e = strchr(p, ':');
		size_t dl = e ? (size_t)(e - p) : strlen(p);

		if (dl + strlen(prog) + 2 < sizeof buf) {
			if (dl == 0)
				snprintf(buf, sizeof buf, "./%s", prog);
			else
				snprintf(buf, sizeof buf, "%.*s/%s", (int)dl, p, prog);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

static void client_free(struct mi_client *c)
{
	if (!c)
		return;
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		reap_child(c, 1000);
	}
	free(c->rbuf);
	free(c->banner);
	free(c);
}

struct mi_client *mi_client_start(const struct mi_settings *set, struct mi_error *err)
{
	static const char *const fixed[] = {
		"set auto-load off",
		"set debuginfod enabled off",
		"set pagination off",
		"set height 0",
		"set width 0",
		"set confirm off",
		"set print asm-demangle on",
	};
	const char *gdb = set && set->gdb ? set->gdb : "gdb";
	struct mi_client *c = NULL;
	char *argv[40];
	char *owned[4] = { NULL, NULL, NULL, NULL };
	size_t argc = 0, nowned = 0, i;
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	int fa_ok = 0, rc;
	struct mi_reply banner;
	unsigned tmo = set && set->start_timeout_ms ? set->start_timeout_ms : 10000;

	memset(&banner, 0, sizeof banner);
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (!find_program(gdb)) {
		set_error(err, MI_ENOGDB, "%s not found: install the Debian package gdb "
			  "(apt-get install gdb), or use --symbolizer=dw which needs no gdb", gdb);
		return NULL;
	}
	c = calloc(1, sizeof *c);
	if (!c) {
		set_error(err, MI_ENOMEM, "out of memory");
		return NULL;
	}
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->next_token = 1;

	argv[argc++] = (char *)gdb;
	argv[argc++] = (char *)"--interpreter=mi2";
	argv[argc++] = (char *)"-nx";
	argv[argc++] = (char *)"-q";
	for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		argv[argc++] = (char *)"-iex";
		argv[argc++] = (char *)fixed[i];
	}
	if (set) {
		const char *names[3] = { "sysroot", "solib-search-path", "debug-file-directory" };
		const char *vals[3] = { set->sysroot, set->solib_search_path, set->debug_file_directory };

		for (i = 0; i < 3; i++) {
			size_t need;

			if (!vals[i])
				continue;
			need = strlen(names[i]) + strlen(vals[i]) + 8;
			owned[nowned] = malloc(need);
			if (!owned[nowned]) {
				set_error(err, MI_ENOMEM, "out of memory");
				goto fail;
			}
			snprintf(owned[nowned], need, "set %s %s", names[i], vals[i]);
			argv[argc++] = (char *)"-iex";
			argv[argc++] = owned[nowned++];
		}
	}
	argv[argc] = NULL;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		set_error(err, MI_ESPAWN, "cannot create pipes for gdb: %s", strerror(errno));
		goto fail;
	}
	if (posix_spawn_file_actions_init(&fa) != 0) {
		set_error(err, MI_ESPAWN, "cannot spawn gdb: out of memory");
		goto fail;
	}
	fa_ok = 1;
	/* dup2 clears close-on-exec on the child's 0, 1, 2; everything else of ours
	 * is close-on-exec and vanishes at exec. */
	if (posix_spawn_file_actions_adddup2(&fa, sv[1], 0) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, po[1], 1) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, pe[1], 2) != 0) {
		set_error(err, MI_ESPAWN, "cannot spawn gdb: out of memory");
		goto fail;
	}
	rc = posix_spawnp(&c->pid, gdb, &fa, NULL, argv, environ);
	if (rc != 0) {
		c->pid = 0;
		if (rc == ENOENT || rc == EACCES)
			set_error(err, MI_ENOGDB, "%s not found: install the Debian package gdb "
				  "(apt-get install gdb), or use --symbolizer=dw which needs no gdb", gdb);
		else
			set_error(err, MI_ESPAWN, "cannot start %s: %s", gdb, strerror(rc));
		goto fail;
	}
	close(sv[1]);
	close(po[1]);
	close(pe[1]);
	sv[1] = po[1] = pe[1] = -1;
	c->in_fd = sv[0];
	c->out_fd = po[0];
	c->err_fd = pe[0];
	sv[0] = po[0] = pe[0] = -1;

	{
		struct loop L = { NULL, 0, 0, 0, NULL, &banner, tmo, 0 };

		if (run_loop(c, &L, err) < 0)
			goto fail;
	}
	{
		size_t blen = 0;

		if (buf_append(&c->banner, &blen, banner.console ? banner.console : "", banner.console_len) < 0 ||
		    buf_append(&c->banner, &blen, banner.log ? banner.log : "", banner.log_len) < 0) {
			set_error(err, MI_ENOMEM, "out of memory");
			goto fail;
		}
	}
	mi_reply_release(&banner);
	posix_spawn_file_actions_destroy(&fa);
	for (i = 0; i < nowned; i++)
		free(owned[i]);
	return c;
fail:
	mi_reply_release(&banner);
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	for (i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	for (i = 0; i < nowned; i++)
		free(owned[i]);
	client_free(c);
	return NULL;
}

int mi_client_close(struct mi_client *c)
{
	int ret;

	if (!c)
		return 0;
	if (!c->dead.code && c->in_fd >= 0 && c->pid > 0) {
		static const char quit[] = "-gdb-exit\n";

		/* Best effort: gdb exits on this or on EOF of its input. */
		(void)send(c->in_fd, quit, sizeof quit - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	if (c->in_fd >= 0) {
		close(c->in_fd);
		c->in_fd = -1;
	}
	if (c->out_fd >= 0) {
		/* Drain until EOF (bounded) so gdb never blocks writing its goodbye. */
		long long deadline = now_ms() + 1000;
		char tmp[4096];

		for (;;) {
			struct pollfd pf = { c->out_fd, POLLIN, 0 };
			long long left = deadline - now_ms();

			if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
				break;
			if (read(c->out_fd, tmp, sizeof tmp) <= 0)
				break;
		}
		close(c->out_fd);
		c->out_fd = -1;
	}
	if (c->err_fd >= 0) {
		close(c->err_fd);
		c->err_fd = -1;
	}
	if (c->pid > 0)
		reap_child(c, 1000);
	ret = c->status != -1 && WIFEXITED(c->status) && !c->dead.code ? WEXITSTATUS(c->status) : -1;
	client_free(c);
	return ret;
}
