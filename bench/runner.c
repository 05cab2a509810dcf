/* runner.c - run one command and report what the whole process tree cost: CPU time
 * (user + sys of the child and of every descendant it waited for, e.g. heaptrack's
 * heaptrack_interpret), wall time, and the largest peak RSS among them.
 * Usage: runner OUTFILE CMD [ARGS...]; appends one line to OUTFILE:
 *   cpu_s=U+S wall_s=W tree_maxrss_kb=K anon_peak_kb=A status=N
 * anon_peak_kb is the child's largest RssAnon seen by sampling /proc every 5 ms:
 * peak RSS without the file pages of what it mmaps (a core, say); a lower bound.
 * and exits with the command's exit status (128+signal when it was killed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The RssAnon of process PID in KiB, or -1. */
static long rss_anon_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static double tv_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: runner OUTFILE CMD [ARGS...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "a");
	if (out == NULL) {
		fprintf(stderr, "runner: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runner: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		fclose(out);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "runner: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	long anon_peak = 0;
	for (;;) {
		pid_t r = wait4(pid, &status, WNOHANG, &ru);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "runner: wait4: %s\n", strerror(errno));
			return 2;
		}
		long kb = rss_anon_kb(pid);
		if (kb > anon_peak)
			anon_peak = kb;
		struct timespec nap = { 0, 5000000 };
		nanosleep(&nap, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* RUSAGE_CHILDREN covers the child and all the descendants it reaped; the
	 * child is our only child, so this is the whole tree. */
	getrusage(RUSAGE_CHILDREN, &ru);
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(out, "cpu_s=%.3f wall_s=%.3f tree_maxrss_kb=%ld anon_peak_kb=%ld status=%d\n",
		tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime),
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		ru.ru_maxrss, anon_peak, rc);
	fclose(out);
	return rc;
}
