/* lost_prog.c - a program whose reachability is known, for tests/run-lost.sh: run
 * once under valgrind --leak-check=full and once under libheapann with a core at
 * its end, and the loss records of its own allocation stacks must agree.
 *
 *   1000 x 48 B dropped                    definitely lost    (drop_blocks)
 *   a 200-node list whose head is dropped  1 definitely, 199 indirectly lost (make_list)
 *   500 x 40 B in a global array           still reachable    (keep_global)
 *   100 x 64 B held by interior pointers   possibly lost      (interior_only)
 *   a two-node cycle, no outside pointer   1 definitely, 1 indirectly lost (make_cycle)
 *   300 x 24 B dropped by a second thread  definitely lost    (worker_drop)
 *   100 x 56 B it keeps in a global        still reachable    (worker_keep)
 *   50 x 72 B held in main's stack frame   still reachable    (hold_on_stack)
 *
 * Every block is fully written (memcheck reads only defined words; libheapann's
 * blocks may hold stale bytes). Stale copies of dropped pointers are wiped from the
 * stacks (scrub_stack) before the end: memcheck scans only above the stack
 * pointer, a core shows whatever the stack held. The end is where memcheck checks:
 * exit() with main's frame still live; with LOST_ABORT=1 (under libheapann) it
 * prints a few addresses for --why/--refs and calls abort() instead, for a core;
 * with LOST_ABORT=2 it prints them and waits for a line on stdin (for gcore).
 * Interior pointers point 16 bytes in, where none of memcheck's heuristics apply.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

struct node {
	struct node *next;
	long pad[3];
};

void *g_kept[500];
char *g_interior[100];
void *g_thread_kept[100];
static struct node *g_probe[2];   /* list node 100 and the node pointing to it, for --refs */

static NOINLINE void scrub_stack(void)
{
	char buf[256 * 1024];

	explicit_bzero(buf, sizeof(buf));
	ESCAPE(buf);
}

static NOINLINE void drop_blocks(void)
{
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(48); /* MARK:drop */
		memset(p, 0x11, 48);
		ESCAPE(p);
	}
}

static NOINLINE void make_list(void)
{
	struct node *head = NULL;

	for (int i = 0; i < 200; i++) {
		struct node *n = malloc(sizeof(*n)); /* MARK:list */
		memset(n, 0, sizeof(*n));
		n->next = head;
		if (i == 100)
			g_probe[0] = n;
		if (i == 101)
			g_probe[1] = n;
		head = n;
	}
	ESCAPE(head);
}

static NOINLINE void keep_global(void)
{
	for (int i = 0; i < 500; i++) {
		g_kept[i] = malloc(40); /* MARK:keep */
		memset(g_kept[i], 0x22, 40);
	}
}

static NOINLINE void interior_only(void)
{
	for (int i = 0; i < 100; i++) {
		char *p = malloc(64); /* MARK:interior */
		memset(p, 0x33, 64);
		g_interior[i] = p + 16;
	}
}

static NOINLINE void make_cycle(void)
{
	struct node *pair[2];

	for (int i = 0; i < 2; i++) {
		pair[i] = malloc(sizeof(*pair[i])); /* MARK:cycle */
		memset(pair[i], 0, sizeof(*pair[i]));
	}
	pair[0]->next = pair[1];
	pair[1]->next = pair[0];
	ESCAPE(pair);
}

static NOINLINE void worker_drop(void)
{
	for (int i = 0; i < 300; i++) {
		char *p = malloc(24); /* MARK:wdrop */
		memset(p, 0x44, 24);
		ESCAPE(p);
	}
}

static NOINLINE void worker_keep(void)
{
	for (int i = 0; i < 100; i++) {
		g_thread_kept[i] = malloc(56); /* MARK:wkeep */
		memset(g_thread_kept[i], 0x55, 56);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	worker_drop();
	worker_keep();
	scrub_stack();
	return NULL;
}

static NOINLINE void hold_on_stack(void **held, int n)
{
	for (int i = 0; i < n; i++) {
		held[i] = malloc(72); /* MARK:stack */
		memset(held[i], 0x66, 72);
	}
}

static NOINLINE void run(void)
{
	pthread_t t;

	drop_blocks();
	make_list();
	keep_global();
	interior_only();
	make_cycle();
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) {
		fputs("lost_prog: cannot run the thread\n", stderr);
		exit(2);
	}
}

int main(void)
{
	void *volatile held[50];
	const char *ab = getenv("LOST_ABORT");

	run();
	hold_on_stack((void **)held, 50);
	if (ab && (*ab == '1' || *ab == '2')) {
		printf("kept7 %p\nnode100 %p\npred100 %p\nheld0 %p\n", g_kept[7],
		       (void *)g_probe[0], (void *)g_probe[1], held[0]);
		fflush(stdout);
	}
	g_probe[0] = g_probe[1] = NULL;
	scrub_stack();
	if (ab && *ab == '1')
		abort();
	if (ab && *ab == '2') {   /* wait for a gcore: "go" on stdin */
		char line[8];

		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	exit(0);
}
