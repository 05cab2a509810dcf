/* mi.h - drive gdb over its machine interface (MI2), with no Python and no console
 * scraping where MI has an answer: a parser for every MI output line, a client that
 * runs one gdb child and talks to it from one poll() loop, and snapshots of live
 * processes (attach, gcore, detach). Knows nothing about heaps. Nothing here prints
 * or exits; errors come back in a struct mi_error.
 */
#ifndef MI_H
#define MI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An error for the caller to print: one line naming what failed and why. */
struct mi_error {
	int code;        /* an MI_E* value, 0 when no error */
	char msg[512];   /* no trailing newline */
};

enum mi_errcode {
	MI_EOK = 0,
	MI_ENOGDB = 1,   /* the gdb binary is not installed / not executable */
	MI_ESPAWN = 2,   /* could not create pipes or the child process */
	MI_EDIED = 3,    /* gdb exited or was killed while we talked to it */
	MI_ETIMEOUT = 4, /* gdb did not answer within the time-out (it was killed) */
	MI_EPROTO = 5,   /* output that is not MI, a line too long, a wrong token */
	MI_EGDB = 6,     /* gdb answered ^error; msg holds gdb's message */
	MI_ENOPROC = 7,  /* no such process */
	MI_EPERM = 8,    /* ptrace not permitted */
	MI_EIO = 9,      /* a file we had to read or write */
	MI_ENOMEM = 10,
	MI_EARG = 11,    /* bad argument (a newline in a command, pid <= 0...) */
};

/* ---- values and records (the parser) ---- */

enum mi_value_kind {
	MI_CONST = 0,    /* a c-string, unescaped */
	MI_TUPLE = 1,    /* {name=value,...}: every item has a name */
	MI_LIST = 2,     /* [value,...] (items without names) or [name=value,...] */
};

struct mi_value;

/* One item of a tuple or list: name is NULL for the values of a value list. */
struct mi_item {
	char *name;
	struct mi_value *value;
};

/* A node of the value tree. A tree is owned by the record that holds it. */
struct mi_value {
	enum mi_value_kind kind;
	char *str;              /* MI_CONST: the unescaped bytes, NUL-terminated */
	size_t len;             /* MI_CONST: length (the string may hold \000) */
	struct mi_item *items;  /* MI_TUPLE, MI_LIST: nitems items in output order */
	size_t nitems;
};

enum mi_record_kind {
	MI_REC_RESULT = 0,  /* [token]^class,results   (done running connected error exit) */
	MI_REC_EXEC = 1,    /* [token]*class,results   (running, stopped) */
	MI_REC_STATUS = 2,  /* [token]+class,results */
	MI_REC_NOTIFY = 3,  /* [token]=class,results   (library-loaded, thread-created...) */
	MI_REC_CONSOLE = 4, /* ~"text": what the CLI would print */
	MI_REC_TARGET = 5,  /* @"text": the program's output */
	MI_REC_LOG = 6,     /* &"text": gdb's own messages, warnings, errors */
	MI_REC_PROMPT = 7,  /* "(gdb)": the end of one output block */
};

/* One parsed output line. Strings and the value tree are owned by the record and
 * released by mi_record_release(). */
struct mi_record {
	enum mi_record_kind kind;
	int has_token;
	unsigned long long token;
	char *klass;             /* result/async class ("done", "error", "stopped"), else NULL */
	struct mi_value *results; /* result/async records: an MI_TUPLE (maybe empty), else NULL */
	char *text;              /* stream records: the unescaped text, else NULL */
	size_t text_len;
};

/* Parse one line of gdb's MI output (len bytes, without or with its trailing "\n"
 * or "\r\n"). Any byte string is accepted as input: returns 0 with *rec filled
 * (release it with mi_record_release), or -1 with err filled (MI_EPROTO: "column
 * N: what was expected"; MI_ENOMEM) and *rec left empty. Nesting deeper than 256
 * levels is refused. */
int mi_parse_line(const char *line, size_t len, struct mi_record *rec, struct mi_error *err);

/* Release what a record holds and clear it; a cleared record may be released again. */
void mi_record_release(struct mi_record *rec);

/* Release a value tree (NULL is accepted). */
void mi_value_free(struct mi_value *v);

/* The first item called name in a tuple or list of results, or NULL (also when v is
 * NULL or a constant). The value lives as long as the tree. */
const struct mi_value *mi_value_get(const struct mi_value *v, const char *name);

/* The string of the constant called name in v, or NULL when absent or not a constant. */
const char *mi_value_str(const struct mi_value *v, const char *name);

/* Write s as an MI c-string (quoted, with \" \\ \n \t and \ooo for control bytes)
 * into buf of size n. Returns the length it needs (without the NUL), like snprintf. */
size_t mi_quote(char *buf, size_t n, const char *s);

/* ---- the client: one gdb child ---- */

/* How to start gdb. Strings are borrowed for the call to mi_client_start. */
struct mi_settings {
	const char *gdb;                 /* gdb binary, searched in PATH (NULL: "gdb") */
	const char *sysroot;             /* NULL or "set sysroot" */
	const char *solib_search_path;   /* NULL or "set solib-search-path" */
	const char *debug_file_directory;/* NULL or "set debug-file-directory" (':'-separated) */
	unsigned start_timeout_ms;       /* for the first prompt (0: 10000) */
};

struct mi_client;

/* Spawn "gdb --interpreter=mi2 -nx -q" with argv (no shell) and, as -iex so they
 * apply before any file loads: auto-load off, debuginfod enabled off, pagination
 * off, height 0, width 0, confirm off, print asm-demangle on, and the settings
 * given. Waits for the first prompt.
 * Descriptors: the client creates three (a socket for gdb's stdin, pipes for its
 * stdout and stderr), all close-on-exec on our side; the child keeps only its
 * ends as 0, 1, 2. The client owns ours and closes them in mi_client_close.
 * The child: the client owns and reaps it (waitpid on its pid only); callers must
 * not reap it themselves (no waitpid(-1) while a client lives).
 * Writes never raise SIGPIPE (send with MSG_NOSIGNAL).
 * Returns the client, or NULL with err filled: MI_ENOGDB when the binary is not
 * found (the message says to install the Debian package gdb, or to use
 * --symbolizer=dw which needs no gdb), MI_EDIED, MI_ETIMEOUT, MI_ESPAWN. */
struct mi_client *mi_client_start(const struct mi_settings *set, struct mi_error *err);

/* What gdb answered to one command. Owned by the caller, who releases it with
 * mi_reply_release(). */
struct mi_reply {
	struct mi_record result;  /* the ^ record (result.klass "done", "error", ...) */
	char *console;            /* the ~ and @ stream text that came before it, NUL-terminated */
	size_t console_len;
	char *log;                /* the & stream text (warnings, echoed errors), NUL-terminated */
	size_t log_len;
	struct mi_record *async;  /* *, + and = records that came before it */
	size_t nasync;
};

/* Release what a reply holds and clear it (a cleared reply may be released again). */
void mi_reply_release(struct mi_reply *r);

/* gdb's message when the reply is ^error ("unknown error" without msg), else NULL. */
const char *mi_reply_error(const struct mi_reply *r);

/* Send one MI command (or CLI command, which gdb runs as if typed; no newline in
 * cmd) with the next token and wait for its result record at most timeout_ms
 * (0: 30000) from the call. Stream and async records without a token
 * are attributed to the next result record. Returns 0 when a result record arrived
 * (any class, ^error included: see mi_reply_error), with *reply filled; or -1 with
 * err filled and *reply empty: MI_ETIMEOUT (gdb is then killed), MI_EDIED (with
 * its exit status and its last stderr line), MI_EPROTO, MI_EARG. After a -1 other
 * than MI_EARG the client is dead: later calls fail at once with the same error. */
int mi_client_exec(struct mi_client *c, const char *cmd, unsigned timeout_ms,
		   struct mi_reply *reply, struct mi_error *err);

/* The same for n commands, pipelined: commands are written as gdb's input allows
 * while its output is read (one poll() loop, so neither pipe can fill up and block
 * both sides). replies[0..n) are filled in order; every command gets timeout_ms
 * from the previous answer. Returns 0, or -1 with err filled and no reply left
 * allocated. Records that arrive after the last answer (a *stopped after ^done)
 * stay queued for the next command's reply. */
int mi_client_exec_batch(struct mi_client *c, const char *const *cmds, size_t n,
			 unsigned timeout_ms, struct mi_reply *replies, struct mi_error *err);

/* The stream text gdb printed before its first prompt ("Reading symbols...",
 * warnings), or "". Owned by the client. */
const char *mi_client_banner(const struct mi_client *c);

/* The process id of the gdb child (for tests and diagnostics). */
pid_t mi_client_pid(const struct mi_client *c);

/* Ask gdb to exit (-gdb-exit), close our descriptors, wait up to a second, kill
 * the child if it is still there (SIGKILL) and reap it. Returns gdb's exit status
 * (0 after a clean exit), or -1 when it had to be killed or died on its own.
 * NULL is accepted (returns 0). The client is freed. */
int mi_client_close(struct mi_client *c);

/* ---- snapshots of live processes ---- */

/* Write a core of the running process pid to out_path without killing it: start
 * gdb (binary gdb, NULL: "gdb"), attach over MI, gcore, detach, exit. The process
 * is stopped only between attach and detach. timeout_ms bounds each command
 * (0: 120000 for gcore, which writes the whole memory).
 * Returns 0, or -1 with err filled; distinct codes and messages for: no such
 * process (MI_ENOPROC), ptrace not permitted (MI_EPERM, with a hint from
 * /proc/sys/kernel/yama/ptrace_scope), gdb not installed (MI_ENOGDB), gcore failed
 * or wrote nothing (MI_EGDB, MI_EIO). A partial out_path is removed on failure.
 * An out_path ending in ".zst" is written as one zstd frame (level 3, with a
 * checksum, as the zstd program writes): gcore writes a file of a fresh name
 * (out_path.XXXXXX, mkstemp), which is compressed after the detach into another
 * and removed; the compressed file is renamed to out_path only when all went
 * well, so a failure (MI_EIO, MI_ENOMEM) leaves an older out_path as it was and
 * no temporary behind. */
int mi_snapshot(pid_t pid, const char *out_path, const char *gdb, unsigned timeout_ms,
		struct mi_error *err);

/* Does path end in suffix, in any case (x.ZST as x.zst), and hold more than
 * it? 1 or 0. */
int mi_ends_with(const char *path, const char *suffix);

/* The program file of the running process pid (readlink of /proc/PID/exe) into
 * buf of size n, for analysing its snapshot afterwards. Returns 0, or -1 with err
 * filled: MI_ENOPROC, MI_EPERM (another user's process), MI_EIO (the file was
 * deleted or replaced since the process started: " (deleted)" in the link),
 * MI_EARG (buf too small). */
int mi_process_exe(pid_t pid, char *buf, size_t n, struct mi_error *err);

#endif /* MI_H */
