/* hunt6_thrleak.c - 20 threads, created and joined one after the other, each
 * dropping one block of 100 + its number (2,190 bytes in all, definitely lost
 * at exit as memcheck says), whose address stays in the thread's dead stack.
 * Built by tests/run-hunt6-exit.sh. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *leaker(void *arg)
{
	char *volatile p = malloc(100 + (size_t)(long)arg);   /* MARK:leaker */

	memset(p, 1, 10);
	p = NULL;
	return NULL;
}

int main(void)
{
	for (long i = 0; i < 20; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, leaker, (void *)i) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}
