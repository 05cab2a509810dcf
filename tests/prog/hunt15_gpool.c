/* hunt15_gpool.c - a GLib thread pool for tests/run-hunt15.sh: 4 workers run
 * 12 tasks; each task allocates with g_malloc and malloc, keeps one block in a
 * global array (still reachable), drops one (definitely lost) and leaves a
 * GPtrArray whose blocks are lost with it (its segment definitely lost, the
 * array and its elements indirectly). The pool is freed and its workers
 * waited for, so they are finished at exit. Prints "site NAME SIZE" for each block.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTASKS 12

static void *kept[NTASKS];
static GMutex mu;
static char lines[NTASKS * 3][64];

static __attribute__((noinline)) void *gp_keep(size_t n)
{
	void *p = g_malloc(n);                      /* MARK:keep */

	memset(p, 1, n);
	return p;
}

static __attribute__((noinline)) void gp_drop(size_t n)
{
	void *volatile p = malloc(n);               /* MARK:drop */
	memset(p, 0, n);
}

static __attribute__((noinline)) void gp_array(size_t n)
{
	GPtrArray *a = g_ptr_array_sized_new(4);    /* MARK:array */

	for (int i = 0; i < 2; i++)
		g_ptr_array_add(a, g_malloc0(n + i));   /* MARK:elem */
	a = NULL;
}

static void task(gpointer data, gpointer user)
{
	size_t i = (size_t)GPOINTER_TO_SIZE(data) - 1;

	(void)user;
	g_mutex_lock(&mu);
	kept[i] = gp_keep(100 + i);
	g_mutex_unlock(&mu);
	gp_drop(200 + i);
	gp_array(300 + 2 * i);
	snprintf(lines[3 * i], 64, "site keep %zu", 100 + i);
	snprintf(lines[3 * i + 1], 64, "site drop %zu", 200 + i);
	snprintf(lines[3 * i + 2], 64, "site elem %zu\nsite elem %zu", 300 + 2 * i, 301 + 2 * i);
}

/* the process's thread count, from /proc/self/status */
static int threads_now(void)
{
	char line[128];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	GThreadPool *pool;
	int base = threads_now();

	/* an exclusive pool (its 4 workers start with it) and no idle thread
	 * kept: the workers end once it is freed, each GSlice thread cache
	 * (2,032 bytes) with them; a worker kept idle lives on with its cache,
	 * and which did was chance */
	g_thread_pool_set_max_unused_threads(0);
	pool = g_thread_pool_new(task, NULL, 4, TRUE, NULL);
	for (size_t i = 1; i <= NTASKS; i++)
		g_thread_pool_push(pool, GSIZE_TO_POINTER(i), NULL);
	g_thread_pool_free(pool, FALSE, TRUE);
	/* g_thread_pool_free returns once the tasks are done; the workers end
	 * after it: wait for them, at most 10 s */
	for (int n = 0; n < 1000 && threads_now() > base; n++)
		g_usleep(10000);
	for (int i = 0; i < NTASKS * 3; i++)
		puts(lines[i]);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	return kept[0] == NULL;
}
