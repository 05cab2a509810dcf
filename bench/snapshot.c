/* snapshot.c - the program bench/snapshot.sh measures: a heap of MB mebibytes in
 * 1 MiB blocks, every page written with a non-zero pattern (nothing for the
 * writer to skip; one byte in 64, which compresses very well) or, with a second
 * argument "random", every byte pseudo-random (which does not compress), then
 * commands on stdin:
 *
 *   snap N   raise the snapshot signal (SIGUSR2) in this thread and print
 *            "pause_us=T" (the time raise() took: the handler runs before it
 *            returns, so this is the program's pause), "self_cpu_us=C" (this
 *            process's CPU time meanwhile: the clone's page-table copy) and
 *            "child_cpu_us=C" (the CPU time of the children it reaped meanwhile:
 *            the writer, when the handler waited for it), then wait until
 *            $HEAPANN_SNAPSHOT_DIR/snapbench.PID.N.core (or .core.zst) exists (it
 *            is renamed into place when complete) and print "ready_us=T" (from
 *            before the raise)
 *   quit     exit
 *
 * It prints "ready PID" once the heap is made. Not a test: numbers only.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* user + system CPU time of WHO, in microseconds */
static double cpu_us(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long mb = argc > 1 ? atol(argv[1]) : 100;
	int random = argc > 2 && strcmp(argv[2], "random") == 0;
	unsigned long long x = 0x9e3779b97f4a7c15ull;
	const char *dir = getenv("HEAPANN_SNAPSHOT_DIR");
	char line[64], path[4096], zpath[4200];
	char **blocks;

	if (mb <= 0 || !dir) {
		fprintf(stderr, "usage: HEAPANN_SNAPSHOT_DIR=DIR snapbench MB\n");
		return 2;
	}
	blocks = calloc((size_t)mb, sizeof(*blocks));
	for (long i = 0; blocks && i < mb; i++) {
		blocks[i] = malloc(1 << 20);
		if (!blocks[i])
			return 1;
		if (random) {
			for (size_t k = 0; k < (1u << 20); k += 8) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;   /* xorshift64 */
				memcpy(blocks[i] + k, &x, 8);
			}
		} else {
			for (size_t k = 0; k < (1u << 20); k += 64)
				blocks[i][k] = (char)(k / 64 + i + 1) | 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned n;
		double t0, t1, s0, c0;
		struct stat st;

		if (sscanf(line, "snap %u", &n) != 1)
			break;
		snprintf(path, sizeof(path), "%s/snapbench.%d.%u.core", dir, (int)getpid(), n);
		snprintf(zpath, sizeof(zpath), "%s.zst", path);
		s0 = cpu_us(RUSAGE_SELF);
		c0 = cpu_us(RUSAGE_CHILDREN);
		t0 = now_us();
		raise(SIGUSR2);
		t1 = now_us();
		printf("pause_us=%.0f\nself_cpu_us=%.0f\nchild_cpu_us=%.0f\n", t1 - t0,
		       cpu_us(RUSAGE_SELF) - s0, cpu_us(RUSAGE_CHILDREN) - c0);
		fflush(stdout);
		while (stat(path, &st) != 0 && stat(zpath, &st) != 0)
			usleep(1000);
		printf("ready_us=%.0f\n", now_us() - t0);
		fflush(stdout);
	}
	return 0;
}
