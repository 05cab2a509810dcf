/* lost_threads.c - a block held only by a live second thread's stack frame, for
 * tests/run-lost.sh: the thread waits on a pipe while main aborts, so the core
 * holds both threads' stacks. Prints the block's address and its thread's id.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int started;

static void *holder(void *arg)
{
	void *volatile held = malloc(88); /* MARK:held */
	char c;

	(void)arg;
	memset(held, 0x77, 88);
	printf("held %p\ntid %ld\n", held, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_mutex_lock(&lock);
	started = 1;
	pthread_cond_signal(&ready);
	pthread_mutex_unlock(&lock);
	if (read(fds[0], &c, 1) < 0)   /* never returns before the abort */
		return NULL;
	return (void *)held;
}

int main(void)
{
	pthread_t t;

	if (pipe(fds) != 0 || pthread_create(&t, NULL, holder, NULL) != 0)
		return 2;
	pthread_mutex_lock(&lock);
	while (!started)
		pthread_cond_wait(&ready, &lock);
	pthread_mutex_unlock(&lock);
	usleep(100 * 1000);   /* let the thread reach read() */
	abort();
}
