/* stalehdr_spill.c - header magics left on a thread stack are no damaged header,
 * for tests/run-stalehdr.sh. Built with -Wl,-z,lazy: right after each allocation
 * the program makes its first call of another libc function, so ld.so's lazy
 * resolver runs and spills the argument registers below the stack pointer, with
 * whatever malloc left in them. On x86-64 each allocation goes through
 * alloc_regs(), which saves the caller-saved registers as they are when the
 * allocator returns, and the program counts those holding a header magic.
 * It also leaves END_LIVE|0 words with zero words around them where a header's
 * DEPTH word would be (the pattern the scan took for a damaged header) twice: in
 * a returned function's frame (dead stack) and in a live local of main.
 *
 * It keeps NB blocks of known sizes and writes, without stdio (which would
 * allocate), one "ADDR SIZE" line per block, "total N BYTES" and "regs K" (K: the
 * caller-saved registers that held a magic after an allocator returned; -1 when
 * not x86-64), in one write. Then, with argument "abort", it aborts (kernel
 * core); without, it waits for a line on stdin (tests/lib.sh gcore_waiting).
 */
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
/* alloc_regs(kind, n): kind 0 malloc(n), 1 calloc(1, n), 2 realloc(NULL, n);
 * regs_after gets rcx rdx rsi rdi r8 r9 r10 r11 and xmm0-xmm15 as the allocator
 * left them. */
void *alloc_regs(int kind, size_t n);
__asm__(".text\n"
	".globl alloc_regs\n"
	".type alloc_regs,@function\n"
	"alloc_regs:\n"
	"	push %rbx\n"
	"	cmp $1, %edi\n"
	"	je 1f\n"
	"	jg 2f\n"
	"	mov %rsi, %rdi\n"
	"	call malloc@PLT\n"
	"	jmp 3f\n"
	"1:	mov $1, %edi\n"
	"	call calloc@PLT\n"
	"	jmp 3f\n"
	"2:	xor %edi, %edi\n"
	"	call realloc@PLT\n"
	"3:	lea regs_after(%rip), %rbx\n"
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
	".size alloc_regs, .-alloc_regs\n");

static int is_magic(uintptr_t v)
{
	uintptr_t m = v & ~(uintptr_t)HEAPANN_END_DEPTH_MASK;

	return v == HEAPANN_START_LIVE64 || v == HEAPANN_START_FREED64 ||
	       m == HEAPANN_END_LIVE64 || m == HEAPANN_END_FREED64;
}

static int regs_count(void)
{
	int k = 0;

	for (unsigned i = 0; i < 8 + 32; i++)
		k += is_magic(regs_after[i]);
	return k;
}
#endif

/* A header's END, live, depth 0: what the resolver spilled in run-realloc. */
static uintptr_t end0(void)
{
	return (uintptr_t)heapann_end_live(sizeof(uintptr_t));
}

/* Leaves a would-be header (zeros, END_LIVE|0 last) in its frame and returns:
 * dead stack below main's stack pointer. */
static NOINLINE uintptr_t dead_copy(void)
{
	volatile uintptr_t w[8];

	for (unsigned i = 0; i < 8; i++)
		w[i] = 0;
	w[6] = end0();
	return w[0];
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
	int regs = -1;
	char c;

	for (unsigned i = 0; i < 8; i++)
		live[i] = 0;
	live[6] = end0();
	for (int i = 0; i < NB; i++) {
#ifdef __x86_64__
		keep[i] = alloc_regs(i % 3, sizes[i]);
		regs = (regs < 0 ? 0 : regs) + regs_count();
#else
		keep[i] = i % 3 == 0 ? malloc(sizes[i]) : i % 3 == 1 ? calloc(1, sizes[i]) :
			  realloc(NULL, sizes[i]);
#endif
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
	if (regs < 0) {
		*o++ = '-';
		regs = 1;
	}
	o = put_u(o, (unsigned)regs);
	*o++ = '\n';
	if (write(1, out, (size_t)(o - out)) != o - out)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (read(0, &c, 1) < 0)
		return 1;
	return live[6] == end0() ? 0 : 1;
}
