/* hunt4_threads.c - threads for tests/run-hunt4-threads.sh. MODE (argv[1]):
 *   busy     16 threads; thread t recurses t times through rec() (a stack of
 *            its own), keeps (t + 1) x 10 blocks of 16 + t bytes from
 *            MARK:keep, then allocates and frees 5000 + t bytes at MARK:churn
 *            without pause: the core is taken while they are inside malloc
 *   exits    100 threads, 10 at a time: thread t keeps t % 7 + 1 blocks of
 *            40 + t % 7 bytes (MARK:keep), allocates and frees 300 bytes 1000
 *            times (MARK:churn) and, in its pthread key's destructor (after it
 *            returned), keeps one block of 77 bytes (MARK:dtor); 8 more threads
 *            allocate and free in a loop until cancelled (MARK:cancel)
 * Prints "ready", waits for a line on stdin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBUSY 16
#define NEXIT 100
static volatile int stop, started;
void *kept[NEXIT][210];
void *dkept[NEXIT];
static pthread_key_t key;

__attribute__((noinline)) static void *keep_site(size_t n)
{
	void *p = malloc(n);   /* MARK:keep */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *churn_site(size_t n)
{
	void *p = malloc(n);   /* MARK:churn */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *dtor_site(size_t n)
{
	void *p = malloc(n);   /* MARK:dtor */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *cancel_site(size_t n)
{
	void *p = malloc(n);   /* MARK:cancel */

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static int rec(int t, int d)
{
	if (d > 0) {
		int r = rec(t, d - 1);

		__asm__ volatile("" ::: "memory");
		return r + 1;
	}
	for (int i = 0; i < (t + 1) * 10; i++)
		kept[t][i] = keep_site(16 + (size_t)t);
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	while (!stop)
		free(churn_site(5000 + (size_t)t));
	return 0;
}

static void *busy(void *a)
{
	rec((int)(long)a, (int)(long)a);
	return NULL;
}

static void dtor(void *v)
{
	dkept[(long)v - 1] = dtor_site(77);
}

static void *exiting(void *a)
{
	int t = (int)(long)a;

	pthread_setspecific(key, (void *)(long)(t + 1));
	for (int i = 0; i < t % 7 + 1; i++)
		kept[t][i] = keep_site(40 + (size_t)(t % 7));
	for (int i = 0; i < 1000; i++)
		free(churn_site(300));
	return NULL;
}

static void *cancelled(void *a)
{
	(void)a;
	for (;;) {
		free(cancel_site(64));
		pthread_testcancel();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "busy";
	pthread_t tid[NEXIT];

	if (strcmp(mode, "busy") == 0) {
		for (long t = 0; t < NBUSY; t++)
			pthread_create(&tid[t], NULL, busy, (void *)t);
		while (started < NBUSY)
			usleep(1000);
		usleep(20000);
	} else {
		pthread_key_create(&key, dtor);
		for (int b = 0; b < NEXIT; b += 10) {
			for (int t = 0; t < 10; t++)
				pthread_create(&tid[b + t], NULL, exiting, (void *)(long)(b + t));
			for (int t = 0; t < 10; t++)
				pthread_join(tid[b + t], NULL);
		}
		for (int t = 0; t < 8; t++)
			pthread_create(&tid[t], NULL, cancelled, NULL);
		usleep(5000);
		for (int t = 0; t < 8; t++)
			pthread_cancel(tid[t]);
		for (int t = 0; t < 8; t++)
			pthread_join(tid[t], NULL);
	}
	printf("ready\n");
	fflush(stdout);
	getchar();
	stop = 1;
	if (strcmp(mode, "busy") == 0)
		for (int t = 0; t < NBUSY; t++)
			pthread_join(tid[t], NULL);
	return 0;
}
