/* hunt8_m.c - bare-metal Cortex-M3 firmware for tests/run-hunt8-m.sh, run on
 * qemu-system-arm's mps2-an385 (memory map: hunt8_m.ld). newlib's malloc under
 * the static kit (ld --wrap), a startup of its own (vector table, .data copied,
 * .bss zeroed, constructors run), output by semihosting (SYS_WRITE0) and no
 * stdio (its buffers would be blocks too). Every block comes from a function of
 * its own at a line marked MARK:NAME BYTES: a recursion, a pool of equal blocks
 * in a global array, realloc, calloc, blocks freed again, a leak (its only
 * pointer dropped), a freed block whose pointer stays in a global (stale), a
 * block held only by a local on the stack, and last an overflow of one block through its guard into its neighbour's header.
 * It prints the addresses the test needs, "halt", and spins with its RAM intact
 * for the test to dump (qemu monitor: pmemsave, dump-guest-memory).
 * -DFW_UNWIND=\"fp\": HEAPANN_UNWIND for the kit, through newlib's environ. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINL __attribute__((noinline))

/* ---- semihosting and output ---- */
static int sh_call(int op, const void *arg)
{
	register int r0 __asm__("r0") = op;
	register const void *r1 __asm__("r1") = arg;

	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

static void out(const char *s) { sh_call(0x04, s); }

/* "TAG 0xHEX\n" */
static void out_hex(const char *tag, uintptr_t v)
{
	char b[48];
	size_t n = strlen(tag);

	memcpy(b, tag, n);
	b[n++] = ' ';
	b[n++] = '0';
	b[n++] = 'x';
	for (int s = 28; s >= 0; s -= 4)
		b[n++] = "0123456789abcdef"[(v >> s) & 15];
	b[n++] = '\n';
	b[n] = 0;
	out(b);
}

/* ---- what newlib and the kit need from the board ---- */
extern char end[], __heap_limit[];
static char *fw_brk = end;

void *_sbrk(ptrdiff_t n);
void *_sbrk(ptrdiff_t n)
{
	char *p = fw_brk;

	if (n > __heap_limit - fw_brk)
		return (void *)-1;
	fw_brk += n;
	return p;
}

#ifndef FW_NO_STATS
/* the kit's statistics region, in the RAM the test dumps (64 KiB at least);
 * -DFW_NO_STATS: none, as on a part with less RAM */
static uintptr_t fw_stats[16384];
void *heapann_stats_buffer(size_t *len);
void *heapann_stats_buffer(size_t *len)
{
	*len = sizeof(fw_stats);
	return fw_stats;
}
#endif

/* ---- the allocations ---- */
void *volatile keep[16];
void *volatile pool[6];
void *volatile stale;
static int nk;
static volatile int depth_seen;

NOINL void f_rec(int n)
{
	if (n > 0)
		f_rec(n - 1);                                             /* MARK:recur */
	else
		keep[nk++] = malloc(100);                                 /* MARK:rec 100 */
	depth_seen++;   /* after the call: no tail call */
}

NOINL void f_pool(void)
{
	for (int i = 0; i < 6; i++)
		pool[i] = malloc(32);                                     /* MARK:pool 192 */
}

NOINL void f_grow(void)
{
	void *p = malloc(40);

	keep[nk++] = realloc(p, 400);                                     /* MARK:grow 400 */
}

NOINL void f_cal(void) { keep[nk++] = calloc(5, 12); }                  /* MARK:cal 60 */

NOINL void f_few(void)
{
	void *p[4];

	for (int i = 0; i < 4; i++)
		p[i] = malloc(24);                                        /* MARK:few 48 */
	free(p[1]);
	free(p[3]);
	keep[nk++] = p[0];
	keep[nk++] = p[2];
}

NOINL void f_leak(void)
{
	char *volatile p = malloc(333);                                   /* MARK:leak 333 */

	memset(p, 1, 333);
	p = NULL;
}

NOINL void f_stale(void)
{
	char *p = malloc(64);                                             /* MARK:stale 64 */

	keep[nk++] = malloc(80);   /* larger than every freed chunk: from the top, after p */ /* MARK:fence 80 */
	memcpy(p, "stale", 6);
	free(p);
	stale = p;   /* kept after the free: a use-after-free waiting to happen */
}

/* Overflow A (120 bytes, larger than every freed chunk, so both come from the
 * top) up to 8 bytes before B, made right after it: through A's guard and
 * newlib's chunk words into the start of B's header. Last: newlib's heap is
 * broken after it, nothing is allocated or freed again. */
NOINL void f_over(void)
{
	char *a = malloc(120);                                            /* MARK:over 120 */
	char *b = malloc(120);                                            /* MARK:nb 120 */

	keep[nk++] = a;
	keep[nk++] = b;
	out_hex("over", (uintptr_t)a);
	out_hex("nb", (uintptr_t)b);
	memset(a, 0x55, (size_t)(b - a) - 8);
}

/* Held only by a local of main, on the stack at the halt: a core, which has
 * the stack pointer, reads it as reachable; a raw dump cannot. 200 bytes: from
 * the top, not in a freed chunk. */
NOINL void *f_held(void)
{
	void *p = malloc(200);                                            /* MARK:held 200 */

	depth_seen++;   /* no tail call */
	return p;
}

NOINL void fw_halt(void)
{
	volatile int here = 1;

	out_hex("stack", (uintptr_t)&here);
	out("halt\n");
	while (here)
		;
}

int main(void);
int main(void)
{
	void *volatile held;

	f_rec(4);
	f_pool();
	f_grow();
	f_cal();
	f_few();
	f_stale();
	f_leak();
	held = f_held();
	out_hex("held", (uintptr_t)held);
	for (int i = 0; i < nk; i++)
		out_hex("block", (uintptr_t)keep[i]);
	out_hex("stale", (uintptr_t)stale);
	f_over();
	fw_halt();
	return 0;
}

/* ---- start-up ---- */
extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start__[], __bss_end__[];
extern char __stack_top[];
extern char **environ;
void __libc_init_array(void);
void _init(void);
void _fini(void);
void _init(void) { }   /* no crti.o: constructors come from .init_array */
void _fini(void) { }
void fw_reset(void);
void fw_fault(void);

#ifdef FW_UNWIND
static char *fw_env[] = { "HEAPANN_UNWIND=" FW_UNWIND, NULL };
#endif

void fw_reset(void)
{
	uint32_t *s = __data_load, *d = __data_start;

	while (d < __data_end)
		*d++ = *s++;
	for (d = __bss_start__; d < __bss_end__; d++)
		*d = 0;
#ifdef FW_UNWIND
	environ = fw_env;
#endif
	__libc_init_array();
	main();
	for (;;)
		;
}

void fw_fault(void)
{
	out("fault\n");
	for (;;)
		;
}

__attribute__((section(".vectors"), used))
static void (*const fw_vectors[16])(void) = {
	(void (*)(void))__stack_top, fw_reset, fw_fault, fw_fault, fw_fault, fw_fault, fw_fault,
};
