/* hunt6b_regs.c - a block held only in a register of another thread, for
 * tests/run-hunt6b-lost.sh: the worker keeps its 4,321-byte block in r12 and
 * blocks in pause(2) through a raw system call, so no copy of the pointer is left
 * in memory. main prints "ready" (and the block's address), waits for a line on
 * stdin, waits until the worker is back inside pause(2) (a gcore's detach
 * interrupts it; libheapann's snapshot lists only threads blocked in a system
 * call) and returns: memcheck and a gcore see the register (still reachable),
 * libheapann's exit snapshot does not have it (other threads' registers are only
 * partly known there). x86-64 only. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int ready;
static volatile pid_t worker_tid;
static void *volatile shown;

/* Wait (at most 10 s) until the worker is blocked in pause(2), system call 34,
 * as /proc/self/task/TID/syscall shows it. Reads with open/read: no malloc. */
static void wait_worker_blocked(void)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)worker_tid);
	for (int i = 0; i < 10000; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

		if (fd >= 0)
			close(fd);
		if (n > 3 && !strncmp(buf, "34 ", 3))
			return;
		usleep(1000);
	}
}

static void *worker(void *arg)
{
	register void *p __asm__("r12") = malloc(4321); /* MARK:held */

	memset(p, 1, 16);
	__asm__ volatile("" : "+r"(p));
	shown = p;   /* for main to print: cleared before main goes on */
	worker_tid = (pid_t)syscall(SYS_gettid);
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
		line[0] = '\0';
	wait_worker_blocked();
	return 0;
}
