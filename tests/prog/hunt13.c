/* hunt13.c - tests/run-hunt13.sh's program: allocation sites behind a chain of
 * two static inline functions, behind a plain call, and on a rare path that
 * gcc -O2 moves to a separate h13_split.cold part, at lines the MARK comments
 * name. With H13_WAIT set it prints "ready" and waits for a line on
 * stdin (to be gcore'd); otherwise it returns, its blocks kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *h13_keep[16];
volatile int h13_sink;

static inline void *h13_in2(size_t n)
{
	char *p = malloc(n); /* MARK:in2 */
	memset(p, 1, n);
	h13_sink += p[0];
	return p;
}

static inline void *h13_in1(size_t n)
{
	void *p = h13_in2(n + (size_t)(h13_sink & 0)); /* MARK:in1 */
	h13_sink++;
	return p;
}

__attribute__((noinline)) void *h13_outer(size_t n)
{
	void *p = h13_in1(n); /* MARK:outer */
	h13_sink += 2;
	return p;
}

__attribute__((noinline)) void *h13_plain(size_t n)
{
	char *p = malloc(n); /* MARK:plain */
	memset(p, 2, n);
	h13_sink += p[0];
	return p;
}

__attribute__((cold, noinline)) void h13_log(void)
{
	h13_sink += 7;
}

__attribute__((noinline)) void *h13_split(size_t n, int rare)
{
	void *p = NULL;
	if (__builtin_expect(rare, 0)) {
		p = h13_in2(n); /* MARK:split */
		h13_log();
	}
	h13_sink++;
	return p;
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		h13_keep[i] = h13_outer(100 + (size_t)i); /* MARK:main1 */
	for (int i = 0; i < 2; i++)
		h13_keep[3 + i] = h13_plain(200); /* MARK:main2 */
	h13_keep[5] = h13_split(57, h13_keep[0] != NULL); /* MARK:main3 */
	h13_sink += 3;
	if (getenv("H13_WAIT")) {
		printf("ready\n");
		fflush(stdout);
		(void)getchar();
	}
	return 0;
}
