/* nounwind.c - a program built without unwind tables (-fno-asynchronous-unwind-tables
 * -fno-unwind-tables: no FDE covers its code), each block of a size that says
 * where it was made (tests/run-nounwind.sh, tests/nounwind.py):
 *   101        leaf <- mid <- top <- main
 *   202        cmp, called by libc's qsort (which has unwind tables) <- sort_it <- main
 *   303        th_leaf <- th_main, a thread's start routine <- start_thread
 *   404        back_cb <- nu_via_lib (tests/prog/nounwind_lib.c, built with
 *              unwind tables) <- main
 *   505        co_leaf <- co_entry, a makecontext coroutine's function: the stack
 *              ends at the trampoline, never in main's frames
 * libheapann's walker steps such code with rbp as the frame pointer. With an
 * argument it aborts (a kernel core). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define NOINL __attribute__((noinline))
void *volatile keep[16];
static int nk;
static ucontext_t uc_main, uc_co;
static char co_stack[64 * 1024] __attribute__((aligned(16)));

void nu_via_lib(void (*cb)(void));

NOINL void leaf(void)
{
	keep[nk++] = malloc(101);                        /* MARK:leaf */
	__asm__ volatile("");
}

NOINL void mid(void)
{
	leaf();                                          /* MARK:mid */
	__asm__ volatile("");
}

NOINL void top(void)
{
	mid();                                           /* MARK:top */
	__asm__ volatile("");
}

static int once;

NOINL int cmp(const void *a, const void *b)
{
	if (!once++)
		keep[nk++] = malloc(202);                /* MARK:cmp */
	return *(const int *)a - *(const int *)b;
}

NOINL void sort_it(void)
{
	int v[] = { 5, 3, 9, 1, 7 };

	qsort(v, 5, sizeof(v[0]), cmp);                  /* MARK:sort_it */
	__asm__ volatile("");
}

NOINL void th_leaf(void)
{
	keep[nk++] = malloc(303);                        /* MARK:th_leaf */
	__asm__ volatile("");
}

NOINL void *th_main(void *arg)
{
	th_leaf();                                       /* MARK:th_main */
	__asm__ volatile("");
	return arg;
}

NOINL void back_cb(void)
{
	keep[nk++] = malloc(404);                        /* MARK:back_cb */
	__asm__ volatile("");
}

NOINL void co_leaf(void)
{
	keep[nk++] = malloc(505);                        /* MARK:co_leaf */
	__asm__ volatile("");
}

NOINL void co_entry(void)
{
	co_leaf();                                       /* MARK:co_entry */
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	pthread_t t;

	(void)argv;
	top();                                           /* MARK:main_top */
	sort_it();                                       /* MARK:main_sort */
	if (pthread_create(&t, 0, th_main, 0) || pthread_join(t, 0))
		return 1;
	nu_via_lib(back_cb);                             /* MARK:main_lib */
	getcontext(&uc_co);
	uc_co.uc_stack.ss_sp = co_stack;
	uc_co.uc_stack.ss_size = sizeof(co_stack);
	uc_co.uc_link = &uc_main;
	makecontext(&uc_co, co_entry, 0);
	if (swapcontext(&uc_main, &uc_co))
		return 1;
	printf("blocks %d\n", nk);
	fflush(stdout);
	if (argc > 1)
		abort();
	return 0;
}
