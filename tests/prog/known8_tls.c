/* known8_tls.c - a program of three threads, each with its own instance of the
 * __thread array k8_tls (K8_TLS_BYTES) and of k8_tls_small, for tests/run-known8.sh:
 * --addr of an address in one of them must name the variable and its thread.
 * Each thread also keeps one heap block of 1000 + 100 * its number. With the
 * path of tests/prog/known8_tlslib.c's library in $K8_TLSLIB, it is dlopen'd
 * first and every thread touches its 1 MiB __thread array (dynamic TLS). Prints
 * "tls N LWP ADDR SMALL ERRNO TP LOCAL ALIGNED" for every thread (main is 0:
 * k8_tls, k8_tls_small, libc's errno (TLS of another module), the thread
 * pointer, a local of the thread's outermost function of this file and the
 * 64-byte aligned __thread k8_tls_al) and "ready", then waits for a line on
 * stdin (gcore, mprof-core snapshot) or aborts ("abort": a kernel core).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define K8_TLS_BYTES 3000
#define K8_THREADS 3

__thread char k8_tls[K8_TLS_BYTES];
__thread long k8_tls_small = 7;
__thread char k8_tls_al[48] __attribute__((aligned(64)));
static char *(*k8_touch)(int);
void *volatile k8_keep[K8_THREADS];

static pthread_barrier_t k8_ready, k8_done;

/* Fill this thread's k8_tls, keep a block, say where both are. */
static __attribute__((noinline)) void k8_setup(long n, volatile char *local)
{
	memset(k8_tls, 'a' + (int)n, sizeof k8_tls);
	memset(k8_tls_al, 'A' + (int)n, sizeof k8_tls_al);
	k8_tls_small = 100 + n;
	k8_keep[n] = malloc(1000 + 100 * (size_t)n);
	if (k8_touch)
		(void)k8_touch((int)n);
	printf("tls %ld %ld %p %p %p %p %p %p\n", n, (long)syscall(SYS_gettid), (void *)k8_tls,
	       (void *)&k8_tls_small, (void *)&errno, __builtin_thread_pointer(), (void *)local,
	       (void *)k8_tls_al);
}

static void *k8_thread(void *arg)
{
	volatile char local[64];

	local[0] = 1;
	k8_setup((long)arg, local);
	pthread_barrier_wait(&k8_ready);
	pthread_barrier_wait(&k8_done);   /* until main has its line (or aborts) */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[K8_THREADS];
	char line[16];
	volatile char local[64];
	const char *lib = getenv("K8_TLSLIB");

	local[0] = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (lib && lib[0]) {
		void *h = dlopen(lib, RTLD_NOW);
		void *fn = h ? dlsym(h, "k8_bigbuf_touch") : NULL;

		if (!fn) {
			fprintf(stderr, "known8_tls: %s\n", dlerror());
			return 1;
		}
		memcpy(&k8_touch, &fn, sizeof(fn));
	}
	pthread_barrier_init(&k8_ready, NULL, K8_THREADS);
	pthread_barrier_init(&k8_done, NULL, K8_THREADS);
	k8_setup(0, local);
	for (long i = 1; i < K8_THREADS; i++)
		pthread_create(&t[i], NULL, k8_thread, (void *)i);
	pthread_barrier_wait(&k8_ready);
	printf("ready\n");
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (!fgets(line, sizeof line, stdin))
		line[0] = '\0';
	pthread_barrier_wait(&k8_done);
	for (long i = 1; i < K8_THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
