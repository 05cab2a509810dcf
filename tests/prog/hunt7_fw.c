/* hunt7_fw.c - firmware-like static program for tests/run-hunt7-fw.sh: the
 * static kit over a bump pool in .bss (the seven ha_real_* functions), every
 * block from a function of its own at a line marked MARK:NAME BYTES: the aligned
 * family, realloc of a plain and of an aligned block, calloc, blocks freed
 * again and one block whose only pointer is dropped. It prints the range of its
 * writable RAM (the first writable segment up to _end, pool included) and each
 * kept block's address, then aborts for a core: the test dumps the RAM out of
 * the core with gdb's `dump binary memory` and reads it with --raw. */
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "fw_pool.h"

#define NOINL __attribute__((noinline))

void *volatile keep[16];
static int nk;
extern char _end[];

NOINL void f_pm(void) { void *p = NULL; if (!posix_memalign(&p, 256, 1000)) keep[nk++] = p; } /* MARK:pm 1000 */
NOINL void f_aa(void) { keep[nk++] = aligned_alloc(64, 640); }                   /* MARK:aa 640 */
NOINL void f_ma(void) { keep[nk++] = memalign(4096, 123); }                      /* MARK:ma 123 */
NOINL void f_rma(void) { void *p = memalign(128, 200); keep[nk++] = realloc(p, 3000); } /* MARK:rma 3000 */
NOINL void f_grow(void) { void *p = malloc(100); keep[nk++] = realloc(p, 500); } /* MARK:grow 500 */
NOINL void f_cal(void) { keep[nk++] = calloc(7, 9); }                            /* MARK:cal 63 */
NOINL void f_few(void)
{
	void *p[5];
	for (int i = 0; i < 5; i++)
		p[i] = malloc(48);                                                /* MARK:few 144 */
	free(p[1]);
	free(p[3]);
	keep[nk++] = p[0]; keep[nk++] = p[2]; keep[nk++] = p[4];
}
NOINL void f_drop(void) { char *volatile p = malloc(333); memset(p, 1, 333); p = NULL; } /* MARK:drop 333 */
/* Zero the stack below main's frame: malloc's own frames (the kit's, the
 * unwinder's) left f_drop's pointer there, and a slot of abort's frame that
 * abort never writes would hand it to the lost report as a root (seen on ARM,
 * sp+0x6c, once the capture's frame grew by a word). The dropped pointer must be
 * gone from memory, as it would be in a real program that reused its stack. */
NOINL void scrub_stack(void)
{
	volatile char buf[8192];

	for (unsigned i = 0; i < sizeof(buf); i++)   /* volatile stores: not elided */
		buf[i] = 0;
}

int main(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	uintptr_t lo = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W)) {
			lo = (uintptr_t)ph[i].p_vaddr & ~(uintptr_t)4095;
			break;
		}
	f_pm(); f_aa(); f_ma(); f_rma(); f_grow(); f_cal(); f_few(); f_drop();
	scrub_stack();
	printf("ram 0x%lx 0x%lx pool 0x%lx\n", (unsigned long)lo,
	       (unsigned long)(((uintptr_t)_end + 4095) & ~(uintptr_t)4095), (unsigned long)(uintptr_t)fw_pool);
	for (int i = 0; i < nk; i++)
		printf("block %lu\n", (unsigned long)(uintptr_t)keep[i]);
	abort();
}
