/* hunt14_finished.c - threads that have finished before the exit snapshot,
 * for tests/run-hunt14.sh. glibc keeps their stacks for reuse (struct pthread
 * and the static TLS at the top); memcheck reads such a stack only from where
 * its thread left it (start_thread's frame), not the dead frames below.
 * Two threads run at once and finish (one joined, one detached), each leaving
 * a pointer to a block only in a dead frame (definitely lost), and one in its
 * static TLS and one in its thread-specific data with no destructor (still
 * reachable: memcheck reads both, above the last stack pointer); a third
 * thread is still blocked at exit, a block held by its live frame.
 * The detached one ends with pthread_exit. Prints "dead SIZE" per dead-frame
 * block. With "abort", ends in abort() (a kernel core) instead of exit; with
 * "guard0" last, the threads' stacks have no guard pages (one mapping).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__thread void *h14_tls;
static pthread_key_t key;
static pthread_barrier_t both;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int blocked_ready;

__attribute__((noinline)) void *h14_tls_get(void)
{
	return h14_tls;
}

static __attribute__((noinline)) void *mk(size_t n)
{
	void *p = malloc(n);

	memset(p, 0x5a, n);
	return p;
}

/* leave p in a dead frame: 128 slots of this call's frame, gone once it returns */
static __attribute__((noinline)) void scribble(void *p)
{
	void *volatile slot[128];

	for (int i = 0; i < 128; i++)
		slot[i] = p;
	__asm__ volatile("" ::"r"(slot) : "memory");
}

static void *finisher(void *arg)
{
	size_t n = (size_t)arg;

	scribble(mk(n));              /* MARK:dead dropped: only the dead frame holds it */
	h14_tls = mk(n + 1);          /* MARK:tls the finished thread's static TLS */
	pthread_setspecific(key, mk(n + 2));   /* MARK:tsd glibc clears it at the thread's exit */
	pthread_barrier_wait(&both);
	if (n == 2000)
		pthread_exit(NULL);   /* unwinds to start_thread's setjmp */
	return NULL;
}

static void *blocked(void *arg)
{
	void *volatile held = mk(300);

	(void)arg;
	h14_tls = mk(301);
	pthread_mutex_lock(&mu);
	blocked_ready = 1;
	pthread_cond_broadcast(&cv);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return held;
}

/* the process's thread count, from /proc/self/status */
static int threads_now(void)
{
	char line[128];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	pthread_t a, b, c;
	pthread_attr_t det, own;
	int guard0 = argc > 1 && strcmp(argv[argc - 1], "guard0") == 0;

	pthread_key_create(&key, NULL);
	pthread_barrier_init(&both, NULL, 2);
	pthread_attr_init(&det);
	pthread_attr_init(&own);
	if (guard0) {
		/* no guard pages: the kernel merges the three stacks into one
		 * mapping, the blocked thread's among them */
		for (pthread_attr_t *at = &det; at; at = at == &det ? &own : NULL) {
			pthread_attr_setguardsize(at, 0);
			pthread_attr_setstacksize(at, 256 * 1024);
		}
	}
	pthread_attr_setdetachstate(&det, PTHREAD_CREATE_DETACHED);
	h14_tls = mk(5);
	/* the blocked one first: it would take a finished thread's stack */
	if (pthread_create(&c, &own, blocked, NULL) != 0)
		return 2;
	pthread_mutex_lock(&mu);
	while (!blocked_ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	if (pthread_create(&a, &own, finisher, (void *)1000) != 0 ||
	    pthread_create(&b, &det, finisher, (void *)2000) != 0)
		return 2;
	pthread_join(a, NULL);
	while (threads_now() != 2)    /* the detached one gone too */
		usleep(1000);
	printf("dead 1000\ndead 2000\n");
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "abort") == 0)
		abort();              /* a kernel core: every thread's registers */
	exit(h14_tls_get() == NULL);
}
