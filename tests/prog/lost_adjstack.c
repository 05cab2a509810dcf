/* lost_adjstack.c - two threads whose stacks touch, with no guard page between
 * them, for tests/run-lost.sh. The kernel merges such stacks into one mapping,
 * so the core has one segment for both: the lower thread's stack must end where
 * its own mapping ends, or the dead part of the upper thread's stack (below its
 * stack pointer) reads as the lower thread's live frames.
 *
 *   lost_adjstack setstack   one mmap of a page, 2 x 256 KiB and a page, the
 *                            middle split with pthread_attr_setstack: the
 *                            stacks always touch; the page below them holds
 *                            the only pointer to an 88-byte block ("below"),
 *                            the page above to a 77-byte one ("above"): the
 *                            program's data, not a stack, both still reachable
 *   lost_adjstack guard0     glibc's own stacks with pthread_attr_setguardsize
 *                            0: they touch when the kernel places them so
 *
 * Each thread keeps one block in a live local (LIVE bytes), mallocs another in
 * a frame 16 KiB deep, keeps its pointer in a volatile local there and returns
 * (DEAD bytes, lost), then blocks in read() on a pipe nobody writes. Main waits
 * for both and aborts. Thread "hi" has the higher stack. Prints per thread
 * "NAME-live 0x..", "NAME-dead 0x..", "NAME-slot 0x.." (the dead pointer's
 * address) and "NAME-stack LO HI", then "adjacent 1" or "adjacent 0". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STACK (256u * 1024u)
#define PAGE 4096u

struct who {
	size_t live, dead;
	uintptr_t plive, pdead;  /* what main prints, inverted: no root holds them */
	uintptr_t slot;       /* the dead pointer's address */
	uintptr_t lo, hi;
};

static pthread_barrier_t ready;
static int never[2];

static void sink(int depth, struct who *w)
{
	char pad[1024];

	memset(pad, depth, sizeof(pad));
	if (depth > 0) {
		sink(depth - 1, w);
	} else {
		void *volatile held = malloc(w->dead);

		w->pdead = ~(uintptr_t)held;
		w->slot = (uintptr_t)&held;
	}
	__asm__ volatile("" : : "r"(pad) : "memory");
}

/* malloc n bytes, the pointer stored at slot only; returns it inverted */
static __attribute__((noinline)) uintptr_t keep(char *slot, size_t n)
{
	void *p = malloc(n);

	memcpy(slot, &p, sizeof(p));
	return ~(uintptr_t)p;
}

static void *worker(void *arg)
{
	struct who *w = arg;
	void *volatile live = malloc(w->live);
	pthread_attr_t at;
	void *lo;
	size_t sz;
	char c;

	if (pthread_getattr_np(pthread_self(), &at) == 0 && pthread_attr_getstack(&at, &lo, &sz) == 0) {
		w->lo = (uintptr_t)lo;
		w->hi = (uintptr_t)lo + sz;
		pthread_attr_destroy(&at);
	}
	w->plive = ~(uintptr_t)live;
	sink(16, w);
	pthread_barrier_wait(&ready);
	while (read(never[0], &c, 1) != 0)
		;
	free(live);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct who w[2] = { { 131, 203, 0, 0, 0, 0, 0 },
				   { 101, 59, 0, 0, 0, 0, 0 } };
	int setstack = argc > 1 && strcmp(argv[1], "setstack") == 0;
	pthread_attr_t a;
	pthread_t t[2];
	char *mem = NULL;
	uintptr_t below = 0, above = 0;   /* inverted: only the pages hold them */

	if (argc != 2 || (!setstack && strcmp(argv[1], "guard0") != 0)) {
		fprintf(stderr, "usage: lost_adjstack setstack|guard0\n");
		return 2;
	}
	if (pipe(never) < 0 || pthread_barrier_init(&ready, NULL, 3) != 0)
		return 1;
	if (setstack) {
		mem = mmap(NULL, 2 * STACK + 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			   -1, 0);
		if (mem == MAP_FAILED)
			return 1;
		below = keep(mem + 64, 88);
		above = keep(mem + PAGE + 2 * STACK + 64, 77);
		mem += PAGE;
	}
	for (int i = 0; i < 2; i++) {
		pthread_attr_init(&a);
		if (setstack) {
			pthread_attr_setstack(&a, mem + (i == 0 ? STACK : 0), STACK);
		} else {
			pthread_attr_setstacksize(&a, STACK);
			pthread_attr_setguardsize(&a, 0);
		}
		if (pthread_create(&t[i], &a, worker, &w[i]) != 0)
			return 1;
		pthread_attr_destroy(&a);
	}
	pthread_barrier_wait(&ready);
	/* guard0: the kernel may place the second stack above the first */
	int up = w[1].lo > w[0].lo;

	for (int i = 0; i < 2; i++) {
		const struct who *x = &w[i ^ up];
		const char *name = i == 0 ? "hi" : "lo";

		printf("%s-live %p\n%s-dead %p\n%s-slot %p\n%s-stack %#lx %#lx\n", name, (void *)~x->plive, name,
		       (void *)~x->pdead, name, (void *)x->slot, name, (unsigned long)x->lo, (unsigned long)x->hi);
	}
	printf("adjacent %d\n", w[1 ^ up].hi == w[up].lo);
	if (setstack)
		printf("below %p\nabove %p\n", (void *)~below, (void *)~above);
	fflush(stdout);
	abort();
}
