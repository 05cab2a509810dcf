/* temp_prog.c - temporary allocations (freed by the thread that made them
 * before it allocated again), each site's count known here (run-temp.sh):
 *   tmp_a        1000 x malloc(32), freed at once: 1000 temporary
 *   tmp_b        300 x malloc(48), then tmp_c's malloc(16), then both freed,
 *   tmp_c        b first: no b is temporary (c came in between), every c is
 *   tmp_grow     200 x malloc(8), then tmp_regrow's realloc to 64, then free:
 *   tmp_regrow   the realloc frees grow's block right after it was made, so
 *                both sites count 200 temporary
 *   tmp_kept     150 x malloc(24), never freed: none
 *   tmp_handoff  a thread makes 100 blocks that main frees: none
 *   tmp_pair     two threads at once, 500 malloc/free pairs each: 1000 (the
 *                count is per thread, whatever the other thread does between)
 *   tmp_undo     50 x malloc(16), a realloc that fails (too large), then free:
 *                50 (a failed realloc allocates nothing)
 *   tmp_deep     with "many": 40 x malloc(8) freed at once, each under a
 *                stack of its own (recursion 1..40 deep): 40, for a full
 *                stack table (HEAPANN_STATS_STACKS=16)
 * Prints "site NAME ALLOCS TEMPORARY" for each, then aborts with "abort" (a
 * kernel core), else exits (the exit snapshot). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_A 1000
#define N_B 300
#define N_G 200
#define N_K 150
#define N_H 100
#define N_P 500
#define N_U 50

static void *volatile sink;
static void *kept[N_K];
static void *handed[N_H];

__attribute__((noinline)) static void *tmp_a(void) { return malloc(32); }
__attribute__((noinline)) static void *tmp_b(void) { return malloc(48); }
__attribute__((noinline)) static void *tmp_c(void) { return malloc(16); }
__attribute__((noinline)) static void *tmp_grow(void) { return malloc(8); }
__attribute__((noinline)) static void *tmp_regrow(void *p) { return realloc(p, 64); }
__attribute__((noinline)) static void *tmp_kept(void) { return malloc(24); }
__attribute__((noinline)) static void *tmp_handoff(void) { return malloc(40); }
__attribute__((noinline)) static void *tmp_pair(void) { return malloc(56); }
__attribute__((noinline)) static void *tmp_undo(void) { return malloc(16); }
/* N more calls deep, then a block freed at once */
__attribute__((noinline)) static void tmp_deep(int n)
{
	if (n > 0) {
		tmp_deep(n - 1);
		sink = &n;   /* not a tail call */
		return;
	}
	sink = malloc(8);
	free(sink);
}
/* a size no realloc can give, opaque to the compiler */
static volatile size_t too_large = (size_t)-1 / 2;

static void *handoff_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < N_H; i++)
		handed[i] = tmp_handoff();
	return NULL;
}

static pthread_barrier_t both;

static void *pair_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both);
	for (int i = 0; i < N_P; i++) {
		void *p = tmp_pair();

		memset(p, i, 56);
		sink = p;
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	(void)argv;
	for (int i = 0; i < N_A; i++) {
		void *p = tmp_a();

		sink = p;
		free(p);
	}
	for (int i = 0; i < N_B; i++) {
		void *b = tmp_b(), *c = tmp_c();

		sink = b;
		sink = c;
		free(b);
		free(c);
	}
	for (int i = 0; i < N_G; i++) {
		void *p = tmp_grow();

		sink = p;
		p = tmp_regrow(p);
		sink = p;
		free(p);
	}
	for (int i = 0; i < N_U; i++) {
		void *p = tmp_undo();

		sink = p;
		if (realloc(p, too_large))
			abort();
		free(p);
	}
	for (int i = 0; i < N_K; i++)
		kept[i] = tmp_kept();
	if (pthread_create(&t[0], NULL, handoff_thread, NULL) || pthread_join(t[0], NULL))
		return 1;
	for (int i = 0; i < N_H; i++)
		free(handed[i]);
	pthread_barrier_init(&both, NULL, 2);
	if (pthread_create(&t[0], NULL, pair_thread, NULL) ||
	    pthread_create(&t[1], NULL, pair_thread, NULL) ||
	    pthread_join(t[0], NULL) || pthread_join(t[1], NULL))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "many")) {
		for (int i = 0; i < 40; i++)
			tmp_deep(i);
		printf("site tmp_deep 40 40\n");
	}
	printf("site tmp_a %d %d\nsite tmp_b %d 0\nsite tmp_c %d %d\n", N_A, N_A, N_B, N_B, N_B);
	printf("site tmp_grow %d %d\nsite tmp_regrow %d %d\n", N_G, N_G, N_G, N_G);
	printf("site tmp_kept %d 0\nsite tmp_handoff %d 0\nsite tmp_pair %d %d\n", N_K, N_H,
	       2 * N_P, 2 * N_P);
	printf("site tmp_undo %d %d\n", N_U, N_U);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	return 0;
}
