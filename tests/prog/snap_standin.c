/* snap_standin.c - a program that writes its own snapshots the way libheapann's
 * HEAPANN_SNAPSHOT does (issue 13 part 1: HEAPANN_SNAPSHOT_DIR/PROG.PID.N.core,
 * N from 1), but with gdb's gcore, for run-launcher.sh to test heapann's side (which
 * core it reports, the options it passes, what it removes) in a build whose
 * libheapann cannot snapshot yet. The real feature is tested by
 * run-launcher-snapshot.sh.
 *
 * Usage: snap_standin EARLY STATUS: allocates 1000 B (alloc_a) and 2 x 3000 B
 * (alloc_b), takes EARLY snapshots (3 blocks, 7000 B), frees one alloc_b block,
 * exits with STATUS and takes the last snapshot at exit (2 blocks, 4000 B).
 * No stdio: its buffers would be live blocks. MARK comments give the lines. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[3];

__attribute__((noinline)) static void *alloc_a(size_t n)
{
	return malloc(n); /* MARK:a */
}

__attribute__((noinline)) static void *alloc_b(size_t n)
{
	return malloc(n); /* MARK:b */
}

/* gcore of this process into $HEAPANN_SNAPSHOT_DIR/snap_standin.PID.N.core */
static void snap(void)
{
	static int n;
	static char path[4096], pid[32], cmd[4200];
	const char *dir = getenv("HEAPANN_SNAPSHOT_DIR");
	pid_t child;
	int st;

	if (!dir)
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/snap_standin.%s.%d.core.tmp", dir, pid, ++n);
	snprintf(cmd, sizeof(cmd), "gcore %s", path);
	child = fork();
	if (child == 0) {
		unsetenv("LD_PRELOAD");   /* gdb itself runs plain */
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execlp("gdb", "gdb", "-batch", "-nx", "-q", "-iex", "set auto-load off",
		       "-iex", "set debuginfod enabled off", "-p", pid, "-ex", cmd, "-ex", "detach",
		       (char *)NULL);
		_exit(127);
	}
	if (child > 0)
		while (waitpid(child, &st, 0) < 0)
			;
	/* appear under the final name only when complete, as the real one does */
	{
		char final[4096];

		snprintf(final, sizeof(final), "%.*s", (int)(strlen(path) - 4), path);
		rename(path, final);
	}
}

int main(int argc, char **argv)
{
	int early = argc > 1 ? atoi(argv[1]) : 0;
	int status = argc > 2 ? atoi(argv[2]) : 0;

	/* let the gdb this process starts attach to it (Yama ptrace_scope 1) */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	keep[0] = alloc_a(1000);
	keep[1] = alloc_b(3000);
	keep[2] = alloc_b(3000);
	for (int i = 0; i < early; i++)
		snap();
	free(keep[2]);
	keep[2] = NULL;
	atexit(snap);
	return status;
}
