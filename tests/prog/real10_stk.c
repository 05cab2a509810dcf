/* real10_stk.c - run-real10: a thread on a stack the program mapped itself
 * (no MAP_STACK), directly below a block glibc mmapped alone, so that the
 * kernel merges the two mappings. The thread mallocs 77 bytes, keeps the only
 * pointer in a frame deep below the one it then waits in, and returns from
 * it; the main thread aborts: the 77 bytes are lost (the dead part of the
 * stack is no root). Prints the 1 MiB block's address and the stack's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t tid;   /* the thread's */

/* Wait (10 s at most) until the thread is blocked in a system call: the
 * snapshot records the threads that are, from /proc/self/task/TID/syscall. */
static void wait_blocked(void)
{
	char path[64];
	struct timespec ms = { 0, 1000000 };

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		int c = f ? fgetc(f) : EOF;

		if (f)
			fclose(f);
		if (c >= '0' && c <= '9')
			return;
		nanosleep(&ms, NULL);
	}
}

#define STACK_SIZE (256u << 10)

static sem_t ready, never;
void *volatile big;   /* the 1 MiB block: still reachable */

/* n frames of 64 words each, the pointer in the deepest one */
__attribute__((noinline)) static void deep(int n)
{
	void *volatile words[64];

	if (n) {
		deep(n - 1);
	} else {
		words[0] = malloc(77);
		((char *)words[0])[0] = 1;
	}
	words[1] = 0;
}

static void *thread(void *arg)
{
	(void)arg;
	tid = gettid();
	deep(64);
	sem_post(&ready);
	sem_wait(&never);
	return NULL;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;
	uintptr_t base;
	void *stk;

	big = malloc(1u << 20);
	/* glibc's chunk header is 16 bytes before the block, its mapping page-aligned */
	base = ((uintptr_t)big - 16) & ~(uintptr_t)4095;
	stk = mmap((void *)(base - STACK_SIZE), STACK_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (stk == MAP_FAILED || (uintptr_t)stk != base - STACK_SIZE) {
		printf("no stack below the block\n");
		return 2;
	}
	sem_init(&ready, 0, 0);
	sem_init(&never, 0, 0);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stk, STACK_SIZE);
	if (pthread_create(&t, &attr, thread, NULL))
		return 3;
	sem_wait(&ready);
	wait_blocked();
	printf("%p %p\n", (void *)big, stk);
	fflush(stdout);
	abort();
}
