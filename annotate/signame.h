/* signame.h - the signal names HEAPANN_SNAPSHOT's "signal:NAME" takes, and
 * their parser: one copy for libheapann (annotate/snapshot.c) and for the
 * heapann launcher, which refuses before the program runs what libheapann would
 * ignore. The table is libheapann's own, not the C library's: crashes are left
 * to "abort", SIGCHLD and the like are not taken, and IO is IO (glibc's
 * sigabbrev_np calls it POLL). Header-only: no allocation, no libc state, so it
 * is safe inside the malloc wrapper. */
#ifndef HEAPANN_SIGNAME_H
#define HEAPANN_SIGNAME_H

#include <signal.h>
#include <stddef.h>
#include <string.h>

static const struct { const char *name; int sig; } ha_signames[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
	{ "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "CONT", SIGCONT }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM },
	{ "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	{ "SYS", SIGSYS }, { "TRAP", SIGTRAP },
};

/* A signal named by S up to END (not NUL-terminated): "SIGUSR1", "USR1", "12", "SIGRTMIN+3",
 * "RTMAX-1". Returns the number, or 0 when unknown. */
static inline int ha_signal_parse(const char *s, const char *end)
{
	size_t len;
	int v = 0;

	if (end - s > 3 && strncmp(s, "SIG", 3) == 0)
		s += 3;
	len = (size_t)(end - s);
	if (len && *s >= '0' && *s <= '9') {
		for (; s < end; s++) {
			if (*s < '0' || *s > '9' || v > 1000)
				return 0;
			v = v * 10 + (*s - '0');
		}
		return v > 0 && v < NSIG ? v : 0;
	}
	if (len >= 5 && (strncmp(s, "RTMIN", 5) == 0 || strncmp(s, "RTMAX", 5) == 0)) {
		int base = s[4] == 'N' ? SIGRTMIN : SIGRTMAX, k = 0, sign = 0;
		const char *p = s + 5;

		if (p < end) {
			sign = *p == '+' ? 1 : *p == '-' ? -1 : 0;
			if (!sign || ++p == end)
				return 0;
			for (; p < end; p++) {
				if (*p < '0' || *p > '9' || k > 100)
					return 0;
				k = k * 10 + (*p - '0');
			}
		}
		v = base + sign * k;
		return v >= SIGRTMIN && v <= SIGRTMAX ? v : 0;
	}
	for (size_t i = 0; i < sizeof(ha_signames) / sizeof(ha_signames[0]); i++)
		if (strlen(ha_signames[i].name) == len && strncmp(ha_signames[i].name, s, len) == 0)
			return ha_signames[i].sig;
	return 0;
}

#endif
