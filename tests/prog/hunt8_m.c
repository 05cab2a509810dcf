/* hunt8_m.c - bare-metal Cortex-M3 firmware for tests/run-hunt8-m.sh, run on
 * qemu-system-arm's mps2-an385 (memory map: hunt8_m.ld). newlib's malloc under
 * the static kit (ld --wrap), the board's startup and semihosting output in
 * fw_board.h. Every block comes from a function of
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

int main(void);
#include "fw_board.h"

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
