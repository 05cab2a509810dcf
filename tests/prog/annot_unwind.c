/* annot_unwind.c - the stacks libheapann records, checked against glibc's
 * backtrace() (libgcc's unwinder) on thousands of allocations whose call chains
 * change between one malloc and the next in the ways that could fool a walker
 * that reuses the outer frames of the previous stack: chains of random depth,
 * frames whose CFA is rbp (VLAs, alloca) or far from rsp (big locals), two
 * callers with the same frame size calling the same function from the same
 * stack height, longjmp out of deep chains, libc frames (qsort's comparator),
 * signal handlers (also on an alternate stack), coroutines on stacks of their
 * own (swapcontext), threads, and two plugins unloaded and loaded in turn at
 * the same address (`annot_unwind PLUGIN_A.so PLUGIN_B.so`, see
 * annot_plugin.c). Built without frame pointers, like most code.
 *
 * Every check: the header's depth is backtrace()'s length clipped to
 * HEAPANN_DEPTH, and frames 1.. equal backtrace()'s (frame 0 is the malloc
 * call, backtrace()'s frame 0 the call after it). */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "check.h"
#include "annot_hdr.h"

#define NOINLINE __attribute__((noinline, noclone))
#define BT_MAX 300

static unsigned limit;   /* HEAPANN_DEPTH */

/* Stacks seen and stacks that differed, per scenario (threads add atomically). */
struct tally {
	long seen, bad;
	char first[160];   /* the first difference, for the failure message */
};

/* Allocate here and compare the block's frames with backtrace()'s. */
static NOINLINE void probe(struct tally *t)
{
	void *bt[BT_MAX];
	void *p = malloc(40);
	int n = backtrace(bt, BT_MAX);
	const uintptr_t *h = header_of(p);
	unsigned d, want, i;
	int ok = h != NULL;

	want = (unsigned)n < limit ? (unsigned)n : limit;
	if (ok) {
		d = (unsigned)heapann_depth_frames(h[HEAPANN_W_DEPTH]);
		ok = d == want;
		for (i = 1; ok && i < d; i++)
			ok = h[HEAPANN_W_FRAMES + i] == (uintptr_t)bt[i];
		if (!ok && __atomic_load_n(&t->bad, __ATOMIC_RELAXED) == 0)
			snprintf(t->first, sizeof(t->first), "depth %u want %u, first difference at %u",
				 d, want, i - 1);
	}
	__atomic_add_fetch(&t->seen, 1, __ATOMIC_RELAXED);
	if (!ok)
		__atomic_add_fetch(&t->bad, 1, __ATOMIC_RELAXED);
	free(p);
}

static void report(const char *what, struct tally *t)
{
	char name[320];

	snprintf(name, sizeof(name), "%s: %ld of %ld stacks equal backtrace()%s%s", what,
		 t->seen - t->bad, t->seen, t->bad ? "; " : "", t->bad ? t->first : "");
	CHECK(name, t->seen > 0 && t->bad == 0);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ---- chains of mixed frames ----
 * Each level picks by the low bits of PAT: a plain frame, a VLA (CFA on rbp),
 * an alloca, or a frame with 12 KiB of locals. */
static NOINLINE void chain(struct tally *t, int n, uint64_t pat);

static NOINLINE void lv_plain(struct tally *t, int n, uint64_t pat)
{
	chain(t, n, pat);
	__asm__ volatile("");
}

static NOINLINE void lv_vla(struct tally *t, int n, uint64_t pat)
{
	volatile char buf[16 + (pat & 0xf0)];

	buf[0] = (char)n;
	chain(t, n, pat);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static NOINLINE void lv_alloca(struct tally *t, int n, uint64_t pat)
{
	volatile char *buf = __builtin_alloca(32 + (pat & 0x1f0));

	buf[0] = (char)n;
	chain(t, n, pat);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static NOINLINE void lv_big(struct tally *t, int n, uint64_t pat)
{
	volatile char buf[12288];

	buf[0] = (char)n;
	buf[sizeof(buf) - 1] = (char)pat;
	chain(t, n, pat);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static NOINLINE void chain(struct tally *t, int n, uint64_t pat)
{
	if (n <= 0) {
		probe(t);
		return;
	}
	switch (pat & 3) {
	case 0: lv_plain(t, n - 1, pat >> 2 | pat << 62); break;
	case 1: lv_vla(t, n - 1, pat >> 2 | pat << 62); break;
	case 2: lv_alloca(t, n - 1, pat >> 2 | pat << 62); break;
	default: lv_big(t, n - 1, pat >> 2 | pat << 62); break;
	}
	__asm__ volatile("");
}

/* Random depths 0..70 and patterns, a few probes per descent. */
static void run_chains(struct tally *t, uint64_t seed, int rounds)
{
	uint64_t s = seed;

	for (int i = 0; i < rounds; i++) {
		uint64_t r = rng_next(&s);
		/* mostly small changes from one stack to the next, sometimes large */
		int n = (r & 7) ? (int)(r >> 8) % 12 : (int)(r >> 8) % 71;
		uint64_t pat = (r >> 16) & 1 ? rng_next(&s) : 0;

		chain(t, n, pat);
	}
}

/* ---- two callers, same frame size, same stack height ---- */
static NOINLINE void common(struct tally *t, int k)
{
	probe(t);
	__asm__ volatile("" : : "r"(k));
}

static NOINLINE void caller_a(struct tally *t)
{
	volatile int x[8] = { 1 };

	common(t, x[0]);
	__asm__ volatile("");
}

static NOINLINE void caller_b(struct tally *t)
{
	volatile int x[8] = { 2 };

	common(t, x[0] + 1);
	__asm__ volatile("");
}

/* ---- longjmp out of a deep chain ---- */
static jmp_buf jb;

static NOINLINE void jump_down(struct tally *t, int n)
{
	if (n > 0) {
		jump_down(t, n - 1);
		__asm__ volatile("");
		return;
	}
	probe(t);
	longjmp(jb, 1);
}

/* ---- libc frames: qsort's comparator allocates ---- */
static struct tally *qs_tally;

static int cmp_probe(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (((x ^ y) & 7) == 0)
		probe(qs_tally);
	return (x > y) - (x < y);
}

/* ---- signal handlers ---- */
static struct tally sig_tally;

static void on_signal(int sig)
{
	(void)sig;
	probe(&sig_tally);   /* raised synchronously: malloc is not interrupted */
}

/* ---- coroutines: two stacks of their own ---- */
static ucontext_t co_main, co_ctx[2];
static struct tally co_tally;

static NOINLINE void co_descend(int n, int who)
{
	if (n > 0) {
		co_descend(n - 1, who);
		__asm__ volatile("");
		return;
	}
	probe(&co_tally);
	swapcontext(&co_ctx[who], &co_main);
	probe(&co_tally);
}

static void co_body(int who)
{
	for (int i = 0; i < 40; i++)
		co_descend((i * 7 + who * 3) % 13, who);
}

/* ---- plugins: dlclose, then another library at the same address ---- */
static struct tally plug_tally;

static void plug_cb(void *arg)
{
	probe(arg);
}

/* Load, call and unload PATHS[0] and PATHS[1] in turn, ROUNDS times each.
 * Returns how many loads put the other plugin's code where the previous one's
 * was, or -1 when a plugin does not load. */
static int run_plugins(char **paths, int rounds)
{
	uintptr_t last = 0;
	int same = 0;

	for (int i = 0; i < 2 * rounds; i++) {
		void *h = dlopen(paths[i & 1], RTLD_NOW | RTLD_LOCAL);
		void (*entry)(void (*)(void *), void *);

		if (!h)
			return -1;
		Dl_info di;

		*(void **)&entry = dlsym(h, "plugin_entry");
		if (!entry || !dladdr(*(void **)&entry, &di))
			return -1;
		same += (uintptr_t)di.dli_fbase == last;
		last = (uintptr_t)di.dli_fbase;
		for (int j = 0; j < 3; j++)
			entry(plug_cb, &plug_tally);
		dlclose(h);
	}
	return same;
}

/* ---- threads ---- */
static struct tally thr_tally, dtor_tally;
static pthread_key_t late_key;

/* A thread-specific destructor that allocates, at thread exit: it may run
 * after libheapann's own key has released the thread's walker record. */
static void late_dtor(void *arg)
{
	void *keep[64];

	(void)arg;
	for (int i = 0; i < 64; i++)
		keep[i] = malloc(16 + 24 * (size_t)i);   /* reuses what was just freed */
	run_chains(&dtor_tally, 99, 20);
	for (int i = 0; i < 64; i++)
		free(keep[i]);
}

static void *thread_main(void *arg)
{
	pthread_setspecific(late_key, arg);
	run_chains(&thr_tally, (uint64_t)(uintptr_t)arg, 400);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *d = getenv("HEAPANN_DEPTH");
	static struct tally chains, same_height, jumps, qs, co;
	int v[257];

	limit = d && *d ? (unsigned)atoi(d) : 32;
	CHECK("preload active (a block has a header)", ({
		void *p = malloc(8);
		int ok = header_of(p) != NULL;
		free(p);
		ok;
	}));

	run_chains(&chains, 0x9E3779B97F4A7C15ULL, 3000);
	report("chains of plain, VLA, alloca and 12 KiB frames, depth 0..70", &chains);

	for (int i = 0; i < 400; i++) {
		if (i % 3)
			caller_a(&same_height);
		else
			caller_b(&same_height);
	}
	report("two callers at the same stack height", &same_height);

	for (int i = 0; i < 300; i++) {
		if (setjmp(jb) == 0)
			jump_down(&jumps, (i * 37) % 50);
		probe(&jumps);
	}
	report("longjmp out of chains 0..49 deep", &jumps);

	qs_tally = &qs;
	for (int i = 0; i < 257; i++)
		v[i] = (i * 7919) % 257;
	qsort(v, 257, sizeof(v[0]), cmp_probe);
	report("allocations from qsort's comparator (libc frames)", &qs);

	{
		static char alt[1 << 16];
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		sigaltstack(&ss, NULL);
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGUSR2, &sa, NULL);
		for (int i = 0; i < 30; i++) {
			raise(i & 1 ? SIGUSR2 : SIGUSR1);
			run_chains(&chains, (uint64_t)i + 1, 5);   /* and back to normal stacks */
		}
		report("signal handlers, on the thread's stack and an alternate one", &sig_tally);
		report("chains between the signals", &chains);
	}

	{
		static char stacks[2][1 << 17];

		for (int w = 0; w < 2; w++) {
			getcontext(&co_ctx[w]);
			co_ctx[w].uc_stack.ss_sp = stacks[w];
			co_ctx[w].uc_stack.ss_size = sizeof(stacks[w]);
			co_ctx[w].uc_link = &co_main;
			makecontext(&co_ctx[w], (void (*)(void))co_body, 1, w);
		}
		for (int i = 0; i < 40; i++) {
			for (int w = 0; w < 2; w++) {
				swapcontext(&co_main, &co_ctx[w]);
				probe(&co);   /* the main stack in between */
			}
		}
		report("coroutines on stacks of their own (swapcontext)", &co_tally);
		report("the main stack between coroutine switches", &co);
	}

	{
		pthread_t th[4];

		pthread_key_create(&late_key, late_dtor);
		for (int round = 0; round < 8; round++) {
			for (int i = 0; i < 4; i++)
				pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)(i * 7 + 1));
			run_chains(&chains, 77, 60);
			for (int i = 0; i < 4; i++)
				pthread_join(th[i], NULL);
		}
		report("8 x 4 threads on chains at once", &thr_tally);
		report("allocations in a thread-specific destructor at thread exit", &dtor_tally);
	}

	if (argc == 3) {
		int same = run_plugins(argv + 1, 20);

		CHECK("plugins load", same >= 0);
		printf("# %d of 39 plugin loads reused the other plugin's address\n", same);
		report("plugins unloaded and another loaded in their place", &plug_tally);
	}
	return CHECK_DONE();
}
