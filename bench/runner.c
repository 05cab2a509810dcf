/* runner.c - run one command and report what the whole process tree cost: CPU time
 * (user + sys of the child and of every descendant it waited for, e.g. heaptrack's
 * heaptrack_interpret), wall time, and the largest peak RSS among them.
 * Usage: runner OUTFILE CMD [ARGS...]; appends one line to OUTFILE:
 *   cpu_s=U+S wall_s=W tree_maxrss_kb=K status=N
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
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runner: wait4: %s\n", strerror(errno));
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* RUSAGE_CHILDREN covers the child and all the descendants it reaped; the
	 * child is our only child, so this is the whole tree. */
	getrusage(RUSAGE_CHILDREN, &ru);
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(out, "cpu_s=%.3f wall_s=%.3f tree_maxrss_kb=%ld status=%d\n",
		tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime),
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		ru.ru_maxrss, rc);
	fclose(out);
	return rc;
}
