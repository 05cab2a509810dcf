/* nounwind_lock.c - built at -O0 without unwind tables (tests/run-nounwind.sh):
 * four threads that once deadlocked libheapann's walker. A allocates from
 * code no FDE covers (each rule miss after a library load looked at the
 * loaded objects under ld.so's lock, inside the walker's fork-guarded part),
 * B walks the loaded objects with dl_iterate_phdr and strdups each name in
 * its callback (a malloc under that lock), C forks (waits for the walker), D
 * dlopens and dlcloses a library (rule misses). Prints "moving" after
 * argv[1] seconds (default 5) in which every thread made progress each
 * second; aborts if one second passes with none. argv[2]: the library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long progress[4];
static const char *lib;

static void *leaf(int i) { return malloc(16 + (size_t)i); }
static void *mid(int i) { return leaf(i); }
static void *thr_a(void *arg) { for (long i = 0;; i++) { free(mid(i & 7)); progress[0]++; } return arg; }
static int cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	free(strdup(info->dlpi_name));
	return 0;
}
static void *thr_b(void *arg) { for (;;) { dl_iterate_phdr(cb, NULL); progress[1]++; } return arg; }
static void *thr_c(void *arg)
{
	for (;;) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		waitpid(p, NULL, 0);
		progress[2]++;
	}
	return arg;
}
static void *thr_d(void *arg)
{
	for (;;) {
		void *h = dlopen(lib, RTLD_NOW);

		if (h)
			dlclose(h);
		progress[3]++;
	}
	return arg;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 5;
	void *(*fn[4])(void *) = { thr_a, thr_b, thr_c, thr_d };
	long last[4] = { 0, 0, 0, 0 };
	pthread_t t;

	lib = argc > 2 ? argv[2] : "./nounwind_bad_lib.so";
	for (int i = 0; i < 4; i++)
		pthread_create(&t, NULL, fn[i], NULL);
	for (int s = 0; s < secs; s++) {
		int stuck = 1;

		sleep(1);
		for (int i = 0; i < 4; i++) {
			if (progress[i] != last[i])
				stuck = 0;
			last[i] = progress[i];
		}
		if (stuck) {
			printf("stuck\n");
			fflush(stdout);
			abort();
		}
	}
	printf("moving\n");
	fflush(stdout);
	_exit(0);
}
