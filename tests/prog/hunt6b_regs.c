/* hunt6b_regs.c - a block held only in a register of another thread, for
 * tests/run-hunt6b-lost.sh: the worker keeps its 4,321-byte block in r12 and
 * blocks in pause(2) through a raw system call, so no copy of the pointer is left
 * in memory. main prints "ready" (and the block's address), waits for a line on
 * stdin and returns: memcheck and a gcore see the register (still reachable),
 * libheapann's exit snapshot does not have it (other threads' registers are only
 * partly known there). x86-64 only. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int ready;
static void *volatile shown;

static void *worker(void *arg)
{
	register void *p __asm__("r12") = malloc(4321); /* MARK:held */

	memset(p, 1, 16);
	__asm__ volatile("" : "+r"(p));
	shown = p;   /* for main to print: cleared before main goes on */
	ready = 1;
	for (;;) {
		__asm__ volatile("mov $34, %%eax\n\tsyscall" ::: "rax", "rcx", "r11", "memory");
		__asm__ volatile("" : "+r"(p));
	}
	return arg;
}

int main(void)
{
	pthread_t t;
	char line[8];

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	while (!ready)
		usleep(1000);
	printf("ready %p\n", shown);
	shown = NULL;
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return 0;
}
