/* snap_stale.c - a thread whose stack pointer moves while the exit snapshot
 * waits for another thread (tests/run-known11.sh): it naps 45 ms in a shallow
 * call, then for good in a call 8 KiB deeper that holds a 100-byte block in a
 * local; main exits 20 ms in. With the argument "spin" a second thread spins
 * for good, so the snapshot reads /proc for its 50 ms (from about 20 ms to
 * 70 ms): the napper reads shallow in the first rounds and deep in the last,
 * 25 ms after it moved. Recorded shallow, its deep frames are cut off and the
 * block they hold reads lost. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int spin_on = 1;

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) void deeper(void)
{
	void *volatile p = malloc(100);

	for (;;)
		nap(1000);
	free(p);
}

static __attribute__((noinline)) void deep(void)
{
	volatile char pad[8192];

	pad[0] = 1;
	deeper();
	(void)pad[0];
}

static void *napper(void *a)
{
	nap(45);
	deep();
	return a;
}

static void *spin(void *a)
{
	while (spin_on)
		;
	return a;
}

int main(int argc, char **argv)
{
	pthread_t t;

	pthread_create(&t, NULL, napper, NULL);
	if (argc > 1)
		pthread_create(&t, NULL, spin, NULL);
	usleep(20000);
	exit(0);
}
