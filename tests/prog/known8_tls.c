/* known8_tls.c - a program of three threads, each with its own instance of the
 * __thread array k8_tls (K8_TLS_BYTES) and of k8_tls_small, for tests/run-known8.sh:
 * --addr of an address in one of them must name the variable and its thread.
 * Each thread also keeps one heap block of 1000 + 100 * its number. Prints
 * "tls N LWP ADDR SMALL ERRNO" for every thread (main is 0: k8_tls, k8_tls_small
 * and libc's errno, TLS of another module) and "ready", then waits for a
 * line on stdin (gcore, mprof-core snapshot) or aborts ("abort": a kernel core).
 */
#define _GNU_SOURCE
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
void *volatile k8_keep[K8_THREADS];

static pthread_barrier_t k8_ready, k8_done;

/* Fill this thread's k8_tls, keep a block, say where both are. */
static __attribute__((noinline)) void k8_setup(long n)
{
	memset(k8_tls, 'a' + (int)n, sizeof k8_tls);
	k8_tls_small = 100 + n;
	k8_keep[n] = malloc(1000 + 100 * (size_t)n);
	printf("tls %ld %ld %p %p %p\n", n, (long)syscall(SYS_gettid), (void *)k8_tls,
	       (void *)&k8_tls_small, (void *)&errno);
}

static void *k8_thread(void *arg)
{
	k8_setup((long)arg);
	pthread_barrier_wait(&k8_ready);
	pthread_barrier_wait(&k8_done);   /* until main has its line (or aborts) */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[K8_THREADS];
	char line[16];

	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_barrier_init(&k8_ready, NULL, K8_THREADS);
	pthread_barrier_init(&k8_done, NULL, K8_THREADS);
	k8_setup(0);
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
