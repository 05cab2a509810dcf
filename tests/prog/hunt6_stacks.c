/* hunt6_stacks.c - allocations on stacks that are not plain call chains, each
 * of a size that says where it was made (tests/run-hunt6-sym.sh checks every
 * block's frames against it):
 *   99            a SIGUSR1 handler on a sigaltstack, raised from main
 *   301           after a longjmp out of 50 frames of deep()
 *   17            at the bottom of 100 calls of rec() (more than HEAPANN_DEPTH)
 *   1000*(id+1) + 10*d + n
 *                 in coroutine id (makecontext, a stack of its own, 4 of them
 *                 switched in a scrambled order) under d+1 frames of co_rec;
 *                 n < 5 before the switch back to main, n >= 5 after it.
 * With an argument it aborts (a kernel core); without, it returns. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define NOINL __attribute__((noinline))
#define NCO 4
static ucontext_t uc_main, uc[NCO];
static int fin[NCO];
static jmp_buf jb;
void *volatile keep[512];
static int nk;

NOINL void co_alloc(int id, int d, int n)
{
	keep[nk++] = malloc(1000 * (id + 1) + 10 * d + n);   /* MARK:co_alloc */
	__asm__ volatile("");
}

NOINL void co_rec(int id, int d, int left, int n)
{
	if (left == 0) {
		co_alloc(id, d, n);                          /* MARK:co_rec_a */
		swapcontext(&uc[id], &uc_main);
		co_alloc(id, d, n + 5);                      /* MARK:co_rec_b */
		__asm__ volatile("");
		return;
	}
	co_rec(id, d, left - 1, n);                          /* MARK:co_rec_r */
	__asm__ volatile("");
}

NOINL void co_body(int id)
{
	for (int r = 0; r < 3; r++)
		for (int d = 0; d < 8; d++)
			co_rec(id, d, d, r);                 /* MARK:co_body */
	fin[id] = 1;
}

NOINL void handler(int sig)
{
	(void)sig;
	keep[nk++] = malloc(99);                             /* MARK:handler */
	__asm__ volatile("");
}

NOINL void deep(int d)
{
	if (d == 0)
		longjmp(jb, 1);
	deep(d - 1);
	__asm__ volatile("");
}

NOINL void after_jmp(void)
{
	keep[nk++] = malloc(301);                            /* MARK:after_jmp */
	__asm__ volatile("");
}

NOINL void rec(int d)
{
	if (d == 0) {
		keep[nk++] = malloc(17);                     /* MARK:rec_a */
		__asm__ volatile("");
		return;
	}
	rec(d - 1);                                          /* MARK:rec_r */
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	static char altstack[65536], costack[NCO][65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };
	int alive = NCO, done[NCO] = { 0 }, step = 0;

	(void)argv;
	setvbuf(stdout, NULL, _IONBF, 0);
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < NCO; i++) {
		getcontext(&uc[i]);
		uc[i].uc_stack.ss_sp = costack[i];
		uc[i].uc_stack.ss_size = sizeof costack[i];
		uc[i].uc_link = &uc_main;
		makecontext(&uc[i], (void (*)(void))co_body, 1, i);
	}
	while (alive) {
		int i = (step * 3 + step / 5) % NCO;

		step++;
		if (done[i])
			continue;
		if (step % 7 == 0)
			raise(SIGUSR1);                      /* MARK:raise */
		swapcontext(&uc_main, &uc[i]);
		if (fin[i]) {
			done[i] = 1;
			alive--;
		}
	}
	if (!setjmp(jb))
		deep(50);
	after_jmp();                                         /* MARK:main_jmp */
	rec(100);                                            /* MARK:main_rec */
	printf("%d\n", nk);
	if (argc > 1)
		abort();
	return 0;
}
