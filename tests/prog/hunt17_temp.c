/* hunt17_temp.c - temporary allocations through every entry point of the
 * malloc family, for tests/run-hunt17-review.sh. Each site is a function of
 * its own (its stacks' first frame); the program prints "site NAME TEMPORARY"
 * with what each must count, and "pid N" (a forked child writes an exit
 * snapshot too). N = 10 rounds of:
 *   s_calloc, s_rnull (realloc(NULL)), s_pm/s_aa/s_ma/s_va/s_pva (the aligned
 *   family), each freed at once: temporary;
 *   s_base realloc'ed at once by s_shrink (in place), s_grow (moved),
 *   s_zero (realloc to 0: a free, nothing allocated), s_rarr (reallocarray),
 *   each new block then freed: s_base 40, the others 10 (s_zero none);
 *   s_pm then s_alre (the aligned family's realloc): both;
 *   s_alfail (memalign) whose realloc fails, then freed: temporary;
 *   s_notlast then s_last, a realloc of s_notlast that fails, s_last freed,
 *   then s_notlast: s_last only;
 *   s_sigmain with a raise of an ignored signal in between: temporary; then
 *   with a handler that allocates (s_handler) and frees: s_handler only.
 * Then 70 threads (beyond the 64 call shards), 5 s_thr each freed at once:
 * 350; s_forkp, freed by the parent after a child freed its copy: 1. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 10
#define NT 70
#define NI __attribute__((noinline))
static void *volatile sink;
/* a size no realloc can give, opaque to the compiler */
static volatile size_t too_large = (size_t)-1 / 2;

NI static void *s_calloc(void) { return calloc(3, 8); }
NI static void *s_rnull(void) { return realloc(NULL, 24); }
NI static void *s_base(void) { return malloc(100); }
NI static void *s_shrink(void *p) { return realloc(p, 10); }
NI static void *s_grow(void *p) { return realloc(p, 100000); }
NI static void *s_zero(void *p) { return realloc(p, 0); }
NI static void *s_rarr(void *p) { return reallocarray(p, 4, 50); }
NI static void *s_pm(void) { void *p = 0; return posix_memalign(&p, 64, 40) ? NULL : p; }
NI static void *s_aa(void) { return aligned_alloc(128, 256); }
NI static void *s_ma(void) { return memalign(32, 40); }
NI static void *s_va(void) { return valloc(40); }
NI static void *s_pva(void) { return pvalloc(40); }
NI static void *s_alre(void *p) { return realloc(p, 5000); }
NI static void *s_alfail(void) { return memalign(256, 40); }
NI static void *s_notlast(void) { return malloc(12); }
NI static void *s_last(void) { return malloc(13); }
NI static void *s_sigmain(void) { return malloc(14); }
NI static void *s_handler(void) { return malloc(15); }
NI static void *s_thr(void) { return malloc(17); }
NI static void *s_forkp(void) { return malloc(18); }

static void on_usr1(int sig)
{
	void *p = s_handler();

	(void)sig;
	sink = p;
	free(p);
}

static void *thr(void *a)
{
	(void)a;
	for (int i = 0; i < 5; i++) {
		void *p = s_thr();

		sink = p;
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NT];
	void *p, *q;
	pid_t c;

	signal(SIGUSR1, SIG_IGN);
	for (int i = 0; i < N; i++) {
		p = s_calloc(); sink = p; free(p);
		p = s_rnull(); sink = p; free(p);
		p = s_base(); p = s_shrink(p); sink = p; free(p);
		p = s_base(); p = s_grow(p); sink = p; free(p);
		p = s_base(); p = s_zero(p); sink = p;
		p = s_base(); p = s_rarr(p); sink = p; free(p);
		p = s_pm(); sink = p; free(p);
		p = s_aa(); sink = p; free(p);
		p = s_ma(); sink = p; free(p);
		p = s_va(); sink = p; free(p);
		p = s_pva(); sink = p; free(p);
		p = s_pm(); p = s_alre(p); sink = p; free(p);
		p = s_alfail(); if (realloc(p, too_large)) abort(); free(p);
		p = s_notlast(); q = s_last(); if (realloc(p, too_large)) abort(); free(q); free(p);
		p = s_sigmain(); raise(SIGUSR1); free(p);
	}
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < N; i++) {
		p = s_sigmain(); raise(SIGUSR1); free(p);
	}
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, thr, NULL))
			return 1;
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	p = s_forkp();
	sink = p;
	fflush(stdout);
	c = fork();
	if (c == 0) {
		free(p);
		exit(0);
	}
	waitpid(c, NULL, 0);
	free(p);
	printf("pid %d\n", (int)getpid());
	printf("site s_calloc %d\nsite s_rnull %d\nsite s_base %d\nsite s_shrink %d\n", N, N, 4 * N, N);
	printf("site s_grow %d\nsite s_zero 0\nsite s_rarr %d\nsite s_pm %d\nsite s_aa %d\n", N, N, 2 * N, N);
	printf("site s_ma %d\nsite s_va %d\nsite s_pva %d\nsite s_alre %d\nsite s_alfail %d\n", N, N, N, N, N);
	printf("site s_notlast 0\nsite s_last %d\nsite s_sigmain %d\nsite s_handler %d\n", N, N, N);
	printf("site s_thr %d\nsite s_forkp 1\n", NT * 5);
	return 0;
}
