/* hunt16_cores.c - a program whose live blocks are known, for cores taken the
 * ways users take them (tests/run-hunt16-cores.sh). It prints its truth first:
 *   "truth BYTES BLOCKS LINE_A LINE_B" (the blocks it keeps: 10 x 1000 bytes
 *   at LINE_A, 1 x 4000 at LINE_B), then follows its options:
 *   filter=HEX   write HEX to /proc/self/coredump_filter
 *   dontdump     put one 64 KiB block of its own (mmap'd through malloc of
 *                256 KiB, at LINE_C) under MADV_DONTDUMP; counted in the truth
 *                only when the core holds it (printed: "dontdump ADDR")
 *   threads=N    start N threads that block in pause()
 *   tiny=N       keep N more blocks of 1 byte (LINE_D)
 *   sparse=G     reserve 64 GiB PROT_NONE and G GiB MAP_NORESERVE, touch 1 MiB
 *   fork         fork; the child aborts, the parent waits for it and exits 0
 *   wait         print "ready" and wait for a line on stdin, then exit 0
 *   sig          as wait, but block inside a SIGUSR1 handler (raised by itself)
 *   abort        abort (the default when not waiting) */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void *g_keep[16];
void **g_tiny;
static int want_wait;

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void wait_line(void)
{
	char buf[16];

	printf("ready\n");
	fflush(stdout);
	if (read(0, buf, sizeof buf) < 0)
		perror("read");
}

static void on_usr1(int sig)
{
	(void)sig;
	wait_line();
}

int main(int argc, char **argv)
{
	int i, la, lb, lc = 0, ld = 0;
	long ntiny = 0, nthr = 0;
	int dontdump = 0, sparse = 0, dofork = 0, sig = 0;

	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "filter=", 7)) {
			FILE *f = fopen("/proc/self/coredump_filter", "w");
			if (!f || fprintf(f, "%s", argv[i] + 7) < 0 || fclose(f))
				perror("coredump_filter");
		} else if (!strcmp(argv[i], "dontdump")) {
			dontdump = 1;
		} else if (!strncmp(argv[i], "threads=", 8)) {
			nthr = atol(argv[i] + 8);
		} else if (!strncmp(argv[i], "tiny=", 5)) {
			ntiny = atol(argv[i] + 5);
		} else if (!strncmp(argv[i], "sparse=", 7)) {
			sparse = atoi(argv[i] + 7);
		} else if (!strcmp(argv[i], "fork")) {
			dofork = 1;
		} else if (!strcmp(argv[i], "wait")) {
			want_wait = 1;
		} else if (!strcmp(argv[i], "sig")) {
			sig = 1;
		}
	}
	for (i = 0; i < 10; i++) {
		la = __LINE__; g_keep[i] = malloc(1000);
		memset(g_keep[i], 'a', 1000);
	}
	lb = __LINE__; g_keep[10] = malloc(4000);
	memset(g_keep[10], 'b', 4000);
	if (dontdump) {
		lc = __LINE__; g_keep[11] = malloc(256 << 10);
		memset(g_keep[11], 'c', 256 << 10);
		/* the whole mmap'd chunk: page-aligned start below the block */
		char *pg = (char *)((unsigned long)g_keep[11] & ~4095UL);
		if (madvise(pg, (256 << 10), MADV_DONTDUMP))
			perror("madvise");
	}
	if (ntiny) {
		g_tiny = calloc(ntiny, sizeof *g_tiny);
		for (long k = 0; k < ntiny; k++) {
			ld = __LINE__; g_tiny[k] = malloc(1);
		}
	}
	if (sparse) {
		void *r = mmap(NULL, 64UL << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		char *n = mmap(NULL, (unsigned long)sparse << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED || n == MAP_FAILED)
			perror("mmap");
		else
			memset(n + ((unsigned long)sparse << 29), 'n', 1 << 20);
	}
	printf("truth %d %d %d %d %d %d\n", 14000, 11, la, lb, lc, ld);
	fflush(stdout);
	for (long k = 0; k < nthr; k++) {
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 << 10);
		if (pthread_create(&t, &at, sleeper, NULL)) {
			perror("pthread_create");
			break;
		}
	}
	if (dofork) {
		pid_t p = fork();
		if (p == 0)
			abort();
		int st;
		waitpid(p, &st, 0);
		printf("child %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
		return 0;
	}
	if (sig) {
		signal(SIGUSR1, on_usr1);
		raise(SIGUSR1);
		return 0;
	}
	if (want_wait) {
		wait_line();
		return 0;
	}
	abort();
}
