/* stack_hint.c - header magics on the stack of a thread whose registers a core
 * does not have, or whose stack is a heap block (tests/run-stackhint.sh).
 *
 * Each mode plants, in a local of a worker thread, what a register spill of
 * malloc can leave there: a live START magic followed by an INFO word of no
 * known format version (the reader would call it a damaged header). The value
 * is made at run time, so no copy of it sits in the program's data.
 *
 *   stack_hint spin      The worker allocates once (16 bytes, held), plants the
 *                        words and spins without a system call; main then
 *                        raises SIGUSR1 (HEAPANN_SNAPSHOT=signal:SIGUSR1 takes a
 *                        snapshot: the worker reads "running", so the core has
 *                        main's registers only), stops the worker and exits 0.
 *                        Live blocks in the core: 1, 16 bytes.
 *   stack_hint heap      The worker runs on a stack of 64 KiB that main took
 *                        with malloc (pthread_attr_setstack), plants the words
 *                        and blocks in read() on a pipe. Main allocates a
 *                        100-byte block and damages its header's INFO word (a
 *                        real damaged header in the same heap), prints
 *                        "ready PID HEADER" and waits on stdin (the test takes a
 *                        gcore), then lets the worker go and exits 0. Live
 *                        blocks in the core: 2 (65,536 and 100 bytes), one of
 *                        them damaged: the reader must report exactly that one.
 *   stack_hint coro      The worker's first call of malloc runs on a coroutine's
 *                        stack (1 MiB, mmap, swapcontext); the worker unmaps it,
 *                        takes a 512 KiB block (glibc maps it, often where that
 *                        stack was), damages its header, prints "damaged HEADER"
 *                        on stderr and spins; main raises SIGUSR1 as in spin.
 *                        The worker's stack is not where its first call ran:
 *                        the snapshot must not take that memory for its stack.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "heapann_block.h"

static volatile int planted, stop;
static volatile uint64_t key = 0x5A5A5A5A5A5A5A5Aull;
static int pfd[2];

/* Plant a START_LIVE magic and an INFO word of version 0x77 in P[0..1]. */
static void plant(volatile uint64_t *p)
{
	p[0] = (HEAPANN_START_LIVE64 ^ key) ^ key;
	p[1] = 0x77;
	p[2] = 123;
	p[3] = 0;
}

static void *spinner(void *a)
{
	volatile uint64_t words[8];
	void *volatile keep = malloc(16);

	plant(words);
	__atomic_store_n(&planted, 1, __ATOMIC_RELEASE);
	while (!stop)
		;
	free(keep);
	(void)words[0];
	return a;
}

static void *waiter(void *a)
{
	volatile uint64_t words[8];
	char c;

	plant(words);
	__atomic_store_n(&planted, 1, __ATOMIC_RELEASE);
	while (read(pfd[0], &c, 1) < 0)
		;
	(void)words[0];
	return a;
}

#define CORO_STACK (1u << 20)
static ucontext_t uc_worker, uc_coro;

static void coro_first_call(void)
{
	void *volatile p = malloc(16);

	free(p);
	swapcontext(&uc_coro, &uc_worker);
}

static void *damage(char *user);

static void *coro_worker(void *a)
{
	char *stk = mmap(NULL, CORO_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *volatile big;

	if (stk == MAP_FAILED)
		exit(1);
	getcontext(&uc_coro);
	uc_coro.uc_stack.ss_sp = stk;
	uc_coro.uc_stack.ss_size = CORO_STACK;
	uc_coro.uc_link = NULL;
	makecontext(&uc_coro, coro_first_call, 0);
	swapcontext(&uc_worker, &uc_coro);
	munmap(stk, CORO_STACK);
	big = malloc(512 << 10);
	memset(big, 3, 512 << 10);
	fprintf(stderr, "damaged %p\n", damage(big));
	__atomic_store_n(&planted, 1, __ATOMIC_RELEASE);
	while (!stop)
		;
	return a;
}

/* Damage the INFO word of the header in front of USER (END holds its depth).
 * Returns the header's address. */
static void *damage(char *user)
{
	uint64_t end;
	volatile uint64_t *h;   /* else the store is dead to the compiler: nothing reads it */

	memcpy(&end, user - 8, 8);
	h = (volatile uint64_t *)(user - (HEAPANN_FIXED_WORDS + 1 + (end & HEAPANN_END_DEPTH_MASK)) * 8);
	if (h[0] != HEAPANN_START_LIVE64) {
		fprintf(stderr, "stack_hint: no header in front of the block (not under libheapann?)\n");
		exit(2);
	}
	h[1] = (h[1] & ~(uint64_t)0xff) | 0x77;
	return (void *)h;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char line[16];

	if (argc > 1 && (strcmp(argv[1], "spin") == 0 || strcmp(argv[1], "coro") == 0)) {
		pthread_create(&t, NULL, argv[1][0] == 's' ? spinner : coro_worker, NULL);
		while (!__atomic_load_n(&planted, __ATOMIC_ACQUIRE))
			;
		raise(SIGUSR1);
		stop = 1;
		pthread_join(t, NULL);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "heap") == 0) {
		pthread_attr_t at;
		void *stack = malloc(65536);
		char *volatile victim;

		if (!stack || pipe(pfd) < 0)
			return 1;
		pthread_attr_init(&at);
		pthread_attr_setstack(&at, stack, 65536);
		if (pthread_create(&t, &at, waiter, NULL) != 0)
			return 1;
		while (!__atomic_load_n(&planted, __ATOMIC_ACQUIRE))
			;
		victim = malloc(100);
		memset(victim, 1, 100);
		printf("ready %d %p\n", (int)getpid(), damage(victim));
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = 0;
		if (write(pfd[1], "x", 1) != 1)
			return 1;
		pthread_join(t, NULL);
		/* the damaged block stays: free() would report it */
		return 0;
	}
	fprintf(stderr, "usage: stack_hint spin|heap|coro\n");
	return 2;
}
