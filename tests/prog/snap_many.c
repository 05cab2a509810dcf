/* snap_many.c - N threads (argv[1]) with 64 KiB stacks and no guard page
 * (argv[2] "guard0") or the default one, each holding one 40-byte block in a
 * live local and blocked on a pipe nobody writes; main aborts once all are
 * there. For tests/run-snapshot.sh: libheapann's abort snapshot records every
 * thread (it kept 819 of 1,000 before), and all N blocks are still reachable
 * from their stacks. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t ready;
static int never[2];

static void *worker(void *arg)
{
	void *volatile held = malloc(40);
	char c;

	(void)arg;
	pthread_barrier_wait(&ready);
	while (read(never[0], &c, 1) != 0)
		;
	free(held);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	pthread_attr_t a;

	if (n <= 0 || pipe(never) < 0 || pthread_barrier_init(&ready, NULL, (unsigned)n + 1) != 0)
		return 2;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64u << 10);
	if (argc > 2 && strcmp(argv[2], "guard0") == 0)
		pthread_attr_setguardsize(&a, 0);
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &a, worker, NULL) != 0)
			return 1;
	}
	pthread_barrier_wait(&ready);
	abort();
}
