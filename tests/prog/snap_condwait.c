/* snap_condwait.c - threads waiting on a condition variable when the exit
 * snapshot is taken (tests/run-known11.sh): four threads each take the lock,
 * count themselves started, broadcast and wait until told to go; main waits
 * for the fourth and exits at once. Each broadcast wakes the threads already
 * waiting, which go back to sleep a moment later: the exit snapshot may find
 * one of them "running" in /proc/self/task/TID/syscall. With the argument
 * "spin" a fifth thread spins until exit, running for good. Each thread
 * mallocs 100 bytes held by its stack only. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NT 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started, go;
static volatile int spin_on = 1;

static void *waiter(void *arg)
{
	void *volatile p = malloc(100);

	pthread_mutex_lock(&mu);
	started++;
	pthread_cond_broadcast(&cv);
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	free(p);
	return arg;
}

static void *spinner(void *arg)
{
	void *volatile p = malloc(100);

	pthread_mutex_lock(&mu);
	started++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	while (spin_on)
		;
	free(p);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int n = NT, i;

	for (i = 0; i < NT; i++)
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			return 1;
	if (argc > 1 && strcmp(argv[1], "spin") == 0) {
		if (pthread_create(&t, NULL, spinner, NULL) != 0)
			return 1;
		n++;
	}
	pthread_mutex_lock(&mu);
	while (started < n)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	exit(0);
}
