/* diff_prog.c - two moments of one run for tests/run-diff.sh. Round 0 keeps 5
 * blocks of 100 bytes (leak_a), 3 of 200 (temp_b) and 2 of 300 (steady_c); then
 * it prints "ready" and waits for a line on stdin. Round 1 keeps 4 more of 100
 * (leak_a), frees temp_b's 3, allocates and frees 7 of 50 (churn_d) and keeps one
 * of 1000 (new_e); then "ready" and a wait again. Both rounds run from one call
 * site (work at MARK:work), so leak_a's blocks of both rounds are one stack.
 * VARIANT (-DVARIANT=N) changes the code so that two builds differ. No stdio: its
 * buffers would be live blocks too. */
#include <stdlib.h>
#include <unistd.h>

#ifndef VARIANT
#define VARIANT 0
#endif

static void *keep[64];
static int nkeep;
static void *temp[3];

__attribute__((noinline)) static void leak_a(void)
{
	keep[nkeep++] = malloc(100); /* MARK:leak_a */
}

__attribute__((noinline)) static void temp_b(int i)
{
	temp[i] = malloc(200); /* MARK:temp_b */
}

__attribute__((noinline)) static void steady_c(void)
{
	keep[nkeep++] = malloc(300); /* MARK:steady_c */
}

__attribute__((noinline)) static void *churn_d(void)
{
	void *p = malloc(50); /* MARK:churn_d */

	__asm__ volatile("" ::: "memory");   /* no tail call at -O2: churn_d stays on the stack */
	return p;
}

__attribute__((noinline)) static void new_e(void)
{
	keep[nkeep++] = malloc(1000); /* MARK:new_e */
}

__attribute__((noinline)) static void work(int round)
{
	for (int i = 0; i < (round ? 4 : 5); i++)
		leak_a();
	if (round == 0) {
		for (int i = 0; i < 3; i++)
			temp_b(i);
		for (int i = 0; i < 2; i++)
			steady_c();
	} else {
		for (int i = 0; i < 3; i++)
			free(temp[i]);
		for (int i = 0; i < 7; i++)
			free(churn_d());
		new_e();
	}
	__asm__ volatile("" ::: "memory");   /* no tail calls at -O2: work stays on the stack */
}

/* in .data: another VARIANT is another build-id */
static volatile int variant = VARIANT;

int main(void)
{
	char c;

	if (variant < 0)
		return 2;
	for (int round = 0; round < 2; round++) {
		work(round); /* MARK:work */
		if (write(1, "ready\n", 6) != 6)
			return 1;
		while (read(0, &c, 1) == 1 && c != '\n')
			;
	}
	for (int i = 0; i < nkeep; i++)   /* read keep[]: at -O2 its blocks would not exist */
		free(keep[i]);
	return 0;
}
