/* hunt14_stale.c - a known limit, for tests/run-hunt14.sh: a thread leaves the
 * only pointer to a block in the frame of a call that returned, then blocks in
 * a call whose frame covers that slot and never writes it. memcheck marks a
 * frame's memory undefined when it is pushed and its leak check skips
 * undefined words: definitely lost. A core says nothing of definedness: the
 * word is in the thread's live stack, a root, and the block reads still
 * reachable. Prints "stale SIZE".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static __attribute__((noinline)) void scribble(void *p)
{
	void *volatile slot[64];

	for (int i = 0; i < 64; i++)
		slot[i] = p;
	__asm__ volatile("" ::"r"(slot) : "memory");
}

static __attribute__((noinline)) void wait_here(int fd)
{
	char buf[512];   /* never written: what scribble left there stays */

	__asm__ volatile("" ::"r"(buf) : "memory");
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	if (read(fd, buf, 1) < 0)   /* blocks until the exit */
		abort();
}

static void *stale(void *arg)
{
	void *p = malloc(777);   /* MARK:stale */

	memset(p, 1, 777);
	scribble(p);
	wait_here(fds[0]);
	return arg;
}

int main(void)
{
	pthread_t t;

	if (pipe(fds) != 0 || pthread_create(&t, NULL, stale, NULL) != 0)
		return 2;
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	printf("stale 777\n");
	exit(0);
}
