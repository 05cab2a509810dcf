/* fw_app.c - a firmware-like program for the static kit on 32-bit ARM and MIPS
 * (issue 8): the allocation pattern of examples/massif_example.c, then one block
 * overflowed into its neighbour's header, then a stop in fw_dump_here(), where a
 * debugger (gdb-multiarch on qemu's gdb stub here, a JTAG probe on a board) reads
 * fw_info and dumps [ram_lo, ram_hi) with "dump binary memory": the writable
 * segment (the roots: .data, .bss) and the heap right after it.
 * Built with -DFW_POOL the allocator under the kit is a fixed pool in .bss, the
 * way an RTOS pool would be plugged in: the seven ha_real_* functions.
 * No stdio: its buffers would be live blocks too. The MARK comments give the
 * tests their line numbers.
 *
 * Usage: fw_app          stop in fw_dump_here(), then free everything and exit 0
 *        fw_app crash    the same, then write through a null pointer (a core)
 *        fw_app bench D N  N malloc+free pairs at call depth D; prints ns per pair */
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "heapann_block.h"

/* What the debugger reads at the stop. Volatile: written for an outside reader. */
struct fw_info {
	uintptr_t ram_lo;       /* first byte to dump: the writable segment (.data, .bss) */
	uintptr_t ram_hi;       /* one past the last: the heap's end (sbrk(0), or the pool's) */
	uintptr_t culprit;      /* the 24-byte block that overflows */
	uintptr_t next;         /* its neighbour, whose header START word it overwrites */
	uintptr_t overrun;      /* bytes written past the culprit's 24 */
	uintptr_t fblock;       /* f's 2000-byte block (for --addr) */
	uintptr_t adjacent;     /* 1 when next lies right after the culprit (precondition) */
};
volatile struct fw_info fw_info;

#ifdef FW_POOL
#include "fw_pool.h"
#endif

/* The start of the writable PT_LOAD segment, from our own program headers. */
static uintptr_t fw_rw_start(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);

	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W))
			return (uintptr_t)ph[i].p_vaddr;
	return 0;
}

static void *keep[16];
static int nkeep;

__attribute__((noinline)) static void g(void)
{
	keep[nkeep++] = malloc(4000); /* MARK:g */
}

__attribute__((noinline)) static void f(void)
{
	keep[nkeep++] = malloc(2000); /* MARK:f */
	g(); /* MARK:f-calls-g */
	__asm__ volatile("" ::: "memory"); /* no tail call: f stays on the stack */
}

__attribute__((noinline)) static void *alloc_culprit(size_t n)
{
	return malloc(n); /* MARK:culprit */
}

__attribute__((noinline)) static void *alloc_next(size_t n)
{
	return malloc(n); /* MARK:next */
}

/* Write n bytes of 'A' at p (out of the compiler's sight: the overflow is meant). */
__attribute__((noinline)) static void fw_scribble(unsigned char *p, size_t n)
{
	volatile unsigned char *v = p;

	for (size_t i = 0; i < n; i++)
		v[i] = 'A';
}

/* The debugger's breakpoint. */
__attribute__((noinline)) void fw_dump_here(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Overflow a 24-byte block up to and including its neighbour's START word. */
static void fw_overflow(void)
{
	unsigned char *c = alloc_culprit(24);
	unsigned char *n = alloc_next(512);
	uintptr_t end_word, hdr;

	memset(c, 1, 24);
	memset(n, 2, 512);
	end_word = ((uintptr_t *)n)[-1];
	hdr = (uintptr_t)n - (uintptr_t)heapann_header_bytes(end_word & HEAPANN_END_DEPTH_MASK,
							     sizeof(uintptr_t));
	fw_info.culprit = (uintptr_t)c;
	fw_info.next = (uintptr_t)n;
	fw_info.adjacent = hdr > (uintptr_t)c + 24 && hdr - ((uintptr_t)c + 24) < 128;
	if (fw_info.adjacent) {
		fw_info.overrun = hdr + sizeof(uintptr_t) - ((uintptr_t)c + 24);
		fw_scribble(c + 24, fw_info.overrun);
	}
}

/* Decimal n to fd 1, then a newline (no stdio). */
static void fw_put(unsigned long n)
{
	char b[24];
	int i = (int)sizeof(b);

	b[--i] = '\n';
	do
		b[--i] = (char)('0' + n % 10);
	while ((n /= 10) && i > 0);
	if (write(1, b + i, sizeof(b) - (size_t)i) < 0)
		_exit(1);
}

/* N malloc+free pairs of 64 bytes from D calls deep; returns ns per pair. */
__attribute__((noinline)) static unsigned long fw_bench(unsigned d, unsigned long n)
{
	struct timespec a, b;
	unsigned long r;

	if (d > 1) {
		r = fw_bench(d - 1, n);
		__asm__ volatile("" ::: "memory");   /* a real frame per level */
		return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long i = 0; i < n; i++) {
		void *p = malloc(64);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (unsigned long)(((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)) /
			       (long long)(n ? n : 1));
}

int main(int argc, char **argv)
{
	void *a[10];

	if (argc > 3 && !strcmp(argv[1], "bench")) {
		fw_put(fw_bench((unsigned)atoi(argv[2]), strtoul(argv[3], NULL, 10)));
		return 0;
	}
	for (int i = 0; i < 10; i++)
		a[i] = malloc(1000); /* MARK:main */
	f(); /* MARK:main-calls-f */
	g(); /* MARK:main-calls-g */
	fw_overflow();

	fw_info.fblock = (uintptr_t)keep[0];
	fw_info.ram_lo = fw_rw_start();
#ifdef FW_POOL
	fw_info.ram_hi = ((uintptr_t)fw_pool + fw_pool_used + 15) & ~(uintptr_t)15;
#else
	fw_info.ram_hi = (uintptr_t)sbrk(0);   /* the brk heap follows .bss */
#endif
	fw_dump_here();

	if (argc > 1 && !strcmp(argv[1], "crash")) {
		volatile int *volatile np = NULL;

		*np = 0;   /* SIGSEGV: the target writes its core */
	}
	for (int i = 0; i < 10; i++)
		free(a[i]);
	for (int i = 0; i < nkeep; i++)
		free(keep[i]);
	return 0;
}
