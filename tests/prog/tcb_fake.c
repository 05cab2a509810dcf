/* tcb_fake.c - a self-referencing object on the main thread's stack, {a, 1, a}
 * as glibc's TCB begins (tcb, dtv, self), while a worker thread calls exit():
 * under HEAPANN_SNAPSHOT=exit the snapshot has the main thread's stack pointer
 * but not its fs_base (tests/run-tcb-fake.sh). The program has a __thread
 * variable of 64 bytes: what lies just below a TCB is TLS. Prints the object's
 * address and the worker's block's, then exits from the worker 0.2 s later. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __thread long tv[8];   /* a static TLS block below each thread's TCB */

static void *worker(void *arg)
{
	void *blk = malloc(40);

	tv[1] = (long)blk;
	printf("%p %p\n", arg, blk);
	fflush(stdout);
	usleep(200000);   /* main blocked in pthread_join: the snapshot lists it */
	exit(0);
}

int main(void)
{
	void *volatile node[8];
	pthread_t t;

	node[0] = (void *)node;
	node[1] = (void *)1;
	node[2] = (void *)node;
	if (pthread_create(&t, NULL, worker, (void *)node))
		return 1;
	pthread_join(t, NULL);
	return node[1] == NULL;
}
