/* stalehdr_spill.c - header magics left on a thread stack are no damaged header,
 * for tests/run-stalehdr.sh. Built with -Wl,-z,lazy: right after each allocation
 * the program makes its first call of another libc function, so ld.so's lazy
 * resolver runs and spills the argument registers below the stack pointer, with
 * whatever malloc left in them. On x86-64 every call of an entry point (malloc,
 * calloc, realloc, free, memalign, posix_memalign, malloc_usable_size: each once
 * on a block freed again, then the 12 allocations) goes through call_regs(),
 * which saves the caller-saved registers as the entry point left them, and the
 * program counts those holding a header magic.
 * It also leaves END_LIVE|0 words with zero words around them where a header's
 * DEPTH word would be (the pattern the scan took for a damaged header) twice: in
 * a returned function's frame (dead stack, below the stack pointer in both
 * cores) and in a live local of main (above it).
 *
 * It keeps NB blocks of known sizes and writes, without stdio (which would
 * allocate), one "ADDR SIZE" line per block, "total N BYTES" and "regs K" (K: the
 * caller-saved registers that held a magic after an allocator returned; -1 when
 * not x86-64), in one write. Then, with argument "abort", it aborts (kernel
 * core); without, it waits for a line on stdin (tests/lib.sh gcore_waiting).
 * With argument "control" (x86-64) it only probes a function that returns with
 * END_LIVE|3 in rdx and prints the count (1 when the probe sees it).
 */
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heapann_block.h"

#define NB 12
#define NOINLINE __attribute__((noinline, noclone))

static const size_t sizes[NB] = { 24, 100, 7, 4096, 33, 250, 1, 640, 48, 99, 1000, 16 };

#ifdef __x86_64__
uintptr_t regs_after[8 + 32];
typedef void *(*alloc_fn)(void *, size_t);
/* call_regs(f, a, n): f(a, n); regs_after gets rcx rdx rsi rdi r8 r9 r10 r11 and
 * xmm0-xmm15 as f left them (the wrappers below tail-call the allocator at -O2). */
void *call_regs(alloc_fn f, void *a, size_t n);
__asm__(".text\n"
	".globl call_regs\n"
	".type call_regs,@function\n"
	"call_regs:\n"
	"	push %rbx\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	call *%rax\n"
	"	lea regs_after(%rip), %rbx\n"
	"	mov %rcx, 0(%rbx)\n"
	"	mov %rdx, 8(%rbx)\n"
	"	mov %rsi, 16(%rbx)\n"
	"	mov %rdi, 24(%rbx)\n"
	"	mov %r8, 32(%rbx)\n"
	"	mov %r9, 40(%rbx)\n"
	"	mov %r10, 48(%rbx)\n"
	"	mov %r11, 56(%rbx)\n"
	"	movdqu %xmm0, 64(%rbx)\n"
	"	movdqu %xmm1, 80(%rbx)\n"
	"	movdqu %xmm2, 96(%rbx)\n"
	"	movdqu %xmm3, 112(%rbx)\n"
	"	movdqu %xmm4, 128(%rbx)\n"
	"	movdqu %xmm5, 144(%rbx)\n"
	"	movdqu %xmm6, 160(%rbx)\n"
	"	movdqu %xmm7, 176(%rbx)\n"
	"	movdqu %xmm8, 192(%rbx)\n"
	"	movdqu %xmm9, 208(%rbx)\n"
	"	movdqu %xmm10, 224(%rbx)\n"
	"	movdqu %xmm11, 240(%rbx)\n"
	"	movdqu %xmm12, 256(%rbx)\n"
	"	movdqu %xmm13, 272(%rbx)\n"
	"	movdqu %xmm14, 288(%rbx)\n"
	"	movdqu %xmm15, 304(%rbx)\n"
	"	pop %rbx\n"
	"	ret\n"
	".size call_regs, .-call_regs\n");

/* The magics, complemented: as plain constants the compiler keeps them in
 * callee-saved registers of main across the loop, and the resolver and malloc
 * then push the program's own copies (the probe must not make what it looks for). */
static const volatile uintptr_t magic_inv[4] = {
	~(uintptr_t)HEAPANN_START_LIVE64, ~(uintptr_t)HEAPANN_START_FREED64,
	~(uintptr_t)HEAPANN_END_LIVE64, ~(uintptr_t)HEAPANN_END_FREED64,
};

static NOINLINE int regs_count(void)
{
	int k = 0;

	/* compared as complements: no register here gets a magic either (an END's
	 * depth bits are 0 in the magic, so 1 in its complement) */
	for (unsigned i = 0; i < 8 + 32; i++) {
		uintptr_t n = ~regs_after[i], e = n | HEAPANN_END_DEPTH_MASK;

		k += n == magic_inv[0] || n == magic_inv[1] || e == magic_inv[2] || e == magic_inv[3];
	}
	return k;
}
#endif

/* The entry points as alloc_fn, for call_regs(). */
static void *w_malloc(void *a, size_t n) { (void)a; return malloc(n); }
static void *w_calloc(void *a, size_t n) { (void)a; return calloc(1, n); }
static void *w_realloc(void *a, size_t n) { return realloc(a, n); }
static void *w_free(void *a, size_t n) { (void)n; free(a); return NULL; }
static void *w_memalign(void *a, size_t n) { (void)a; return memalign(64, n); }
static void *w_posix(void *a, size_t n) { (void)a; return posix_memalign(&a, 128, n) ? NULL : a; }
static void *w_usable(void *a, size_t n) { (void)n; return (void *)malloc_usable_size(a); }

#ifdef __x86_64__
/* The probe's control: returns with END_LIVE|3 in rdx, as a leaking entry point
 * would. */
static NOINLINE void *w_leak(void *a, size_t n)
{
	(void)n;
	__asm__ volatile("mov %0, %%rdx\n\tnot %%rdx\n\txor $3, %%rdx" : : "r"(magic_inv[2]) : "rdx");
	return a;
}
#else
static void *call_regs(alloc_fn f, void *a, size_t n)
{
	return f(a, n);
}

static int regs_count(void)
{
	return 0;
}
#endif

/* Every entry point once, on a block freed at the end: registers probed after
 * each. Returns the registers found holding a magic. */
static NOINLINE int probe_all(void)
{
	static const alloc_fn seq[] = { w_malloc, w_realloc, w_usable, w_realloc, w_free,
					w_memalign, w_free, w_posix, w_free, w_calloc, w_free };
	static const size_t n[] = { 40, 400, 0, 10, 0, 100, 0, 100, 0, 64, 0 };
	void *p = NULL;
	int k = 0;

	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		void *r = call_regs(seq[i], p, n[i]);

		k += regs_count();
		if (seq[i] == w_free)
			p = NULL;
		else if (seq[i] != w_usable)
			p = r;
	}
	return k;
}

/* A header's END, live, depth 0: what the resolver spilled in run-realloc. */
static uintptr_t end0(void)
{
	return (uintptr_t)heapann_end_live(sizeof(uintptr_t));
}

/* Leaves a would-be header (zeros, END_LIVE|0 last) at the bottom of an 8 KiB
 * frame and returns: dead stack below main's stack pointer, deeper than the
 * frames of read() and abort() that come later reach. */
static NOINLINE uintptr_t dead_copy(void)
{
	volatile uintptr_t w[1024];

	for (unsigned i = 0; i < 1024; i++)
		w[i] = 0;
	w[6] = end0();
	return w[1023];
}

/* The i-th libc function the program calls for the first time (one PLT slot
 * each, bound lazily): none of them allocates. */
static NOINLINE long first_call(int i)
{
	struct timespec ts;
	struct stat st;

	switch (i) {
	case 0: return getpid();
	case 1: return getppid();
	case 2: return getuid();
	case 3: return geteuid();
	case 4: return getgid();
	case 5: return getegid();
	case 6: return getpagesize();
	case 7: return sched_yield();
	case 8: return isatty(0);
	case 9: return clock_gettime(CLOCK_MONOTONIC, &ts);
	case 10: return getpriority(PRIO_PROCESS, 0);
	default: return fstat(1, &st);
	}
}

static char *put_hex(char *o, uintptr_t v)
{
	char t[20];
	int n = 0;

	*o++ = '0';
	*o++ = 'x';
	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*o++ = t[--n];
	return o;
}

static char *put_u(char *o, unsigned long long v)
{
	char t[24];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*o++ = t[--n];
	return o;
}

int main(int argc, char **argv)
{
	volatile uintptr_t live[8];
	static void *keep[NB];
	static char out[4096];
	char *o = out;
	unsigned long long total = 0;
	int regs;
	char c;

#ifdef __x86_64__
	if (argc > 1 && !strcmp(argv[1], "control")) {
		call_regs(w_leak, NULL, 0);
		*o++ = "01234"[regs_count() > 4 ? 4 : regs_count()];
		*o++ = '\n';
		return write(1, out, 2) == 2 ? 0 : 1;
	}
#endif
	regs = probe_all();
	for (unsigned i = 0; i < 8; i++)
		live[i] = 0;
	live[6] = end0();
	for (int i = 0; i < NB; i++) {
		static const alloc_fn kinds[3] = { w_malloc, w_calloc, w_realloc };

		keep[i] = call_regs(kinds[i % 3], NULL, sizes[i]);
		regs += regs_count();
		first_call(i);
		if (!keep[i])
			return 1;
		memset(keep[i], 'a' + i, sizes[i]);
	}
	dead_copy();
	for (int i = 0; i < NB; i++) {
		o = put_hex(o, (uintptr_t)keep[i]);
		*o++ = ' ';
		o = put_u(o, sizes[i]);
		*o++ = '\n';
		total += sizes[i];
	}
	memcpy(o, "total ", 6);
	o = put_u(o + 6, NB);
	*o++ = ' ';
	o = put_u(o, total);
	memcpy(o, "\nregs ", 6);
	o += 6;
#ifdef __x86_64__
	o = put_u(o, (unsigned)regs);
#else
	*o++ = '-';
	*o++ = '1';
#endif
	*o++ = '\n';
	if (write(1, out, (size_t)(o - out)) != o - out)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (read(0, &c, 1) < 0)
		return 1;
	return live[6] == end0() ? 0 : 1;
}
