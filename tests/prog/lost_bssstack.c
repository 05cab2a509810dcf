/* lost_bssstack.c - a stack that is a static array in .bss, for
 * tests/run-lost.sh: the executable's globals below its stack pointer (g_data
 * in .data, g_bss in .bss) each hold the only pointer to a block, and must read
 * still reachable.
 *   lost_bssstack thread   a thread's stack given with pthread_attr_setstack
 *                          (glibc's TCB at its top); it keeps one more block in
 *                          a live local and blocks; main aborts
 *   lost_bssstack coro     main switches to a ucontext coroutine on it (no TCB
 *                          there), which keeps the block in a live local and
 *                          aborts
 * Prints "data 0x..", "bss 0x..", "live 0x.." and "stack 0xLO 0xHI". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define STACK (256u * 1024u)

static char stk[STACK] __attribute__((aligned(4096)));
void *g_data = (void *)1;   /* initialized: .data, below .bss */
void *g_bss;
static pthread_barrier_t ready;
static uintptr_t live_inv;   /* the live block's address, inverted: no root */
static int never[2];

static void *worker(void *arg)
{
	void *volatile live = malloc(24);
	char c;

	(void)arg;
	live_inv = ~(uintptr_t)live;
	pthread_barrier_wait(&ready);
	while (read(never[0], &c, 1) != 0)
		;
	free(live);
	return NULL;
}

static ucontext_t main_ctx, coro_ctx;

static void show(void)
{
	printf("data %p\nbss %p\nlive %p\nstack %p %p\n", g_data, g_bss, (void *)~live_inv, (void *)stk,
	       (void *)(stk + sizeof(stk)));
	fflush(stdout);
}

static void coro(void)
{
	void *volatile live = malloc(24);

	live_inv = ~(uintptr_t)live;
	show();
	abort();
}

int main(int argc, char **argv)
{
	pthread_attr_t a;
	pthread_t t;

	g_data = malloc(48);
	g_bss = malloc(72);
	if (argc > 1 && strcmp(argv[1], "coro") == 0) {
		getcontext(&coro_ctx);
		coro_ctx.uc_stack.ss_sp = stk;
		coro_ctx.uc_stack.ss_size = sizeof(stk);
		coro_ctx.uc_link = &main_ctx;
		makecontext(&coro_ctx, coro, 0);
		swapcontext(&main_ctx, &coro_ctx);
		return 1;
	}
	if (pipe(never) < 0 || pthread_barrier_init(&ready, NULL, 2) != 0)
		return 1;
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, stk, sizeof(stk));
	if (pthread_create(&t, &a, worker, NULL) != 0)
		return 1;
	pthread_barrier_wait(&ready);
	show();
	abort();
}
