/* hunt_threads.c - a threaded program that dies of abort() in one of its
 * threads, for a kernel core (tests/run-hunt-kcore.sh). What is live, and how
 * memcheck would classify it, is known here:
 *   main: 2,222 bytes kept in a global              still reachable (MARK:main)
 *   each of 4 workers: 1000+id bytes in a TLS slot   still reachable (MARK:tls)
 *   each worker: a list of 3 x 48 bytes, dropped     head definitely lost,
 *                                                    2 nodes indirectly lost (MARK:node)
 *   a thread that exited: 555 bytes, dropped         definitely lost (MARK:short)
 * Worker 3 aborts once all have allocated; 5 threads are in the core. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct node { struct node *next; char pad[40]; };     /* 48 bytes */
void *g_keep;
static __thread void *tls_keep;
static pthread_barrier_t bar;

__attribute__((noinline)) static void leak_list(int n)
{
	struct node *volatile h = NULL;

	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof *x);           /* MARK:node */
		x->next = h;
		h = x;
	}
	h = NULL;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long id = (long)arg;

	tls_keep = malloc(1000 + id);                     /* MARK:tls */
	leak_list(3);                                     /* MARK:leak */
	pthread_barrier_wait(&bar);
	if (id == 3) {
		usleep(200000);
		abort();
	}
	for (;;)
		pause();
	return NULL;
}

__attribute__((noinline)) static void *shortlived(void *arg)
{
	void *volatile p = malloc(555);                   /* MARK:short */

	(void)p;
	return arg;
}

int main(void)
{
	pthread_t t[4], s;

	g_keep = malloc(2222);                            /* MARK:main */
	pthread_create(&s, NULL, shortlived, NULL);
	pthread_join(s, NULL);
	pthread_barrier_init(&bar, NULL, 5);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&bar);
	for (;;)
		pause();
}
