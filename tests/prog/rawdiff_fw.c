/* rawdiff_fw.c - a firmware-like static program for tests/run-rawdiff.sh: the
 * static kit over a bump pool in .bss (fw_pool.h), the statistics region in
 * .bss too (heapann_stats_buffer; -DSTATS_KIB=64 makes it too small). At each of two moments it calls moment(N),
 * where the test's gdb dumps its RAM (ram_lo .. ram_hi: the first writable
 * segment up to _end, pool and region included) as a probe would; then
 * `mprof-core diff --raw OLD NEW` compares the two dumps. Each site at a line
 * marked MARK:NAME:
 *   grow_a   100 bytes: 3 blocks by moment 1, 3 more by moment 2
 *   steady   200 bytes: 2 blocks by moment 1, none after
 *   temp      50 bytes: 4 blocks by moment 1, all freed before moment 2
 *   new_c   1000 bytes: 1 block after moment 1
 *   churn     64 bytes: 10 blocks allocated and freed after moment 1 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "fw_pool.h"

#define NOINL __attribute__((noinline))

#ifndef STATS_KIB
#define STATS_KIB 128   /* a 64-bit target's region needs 78 KiB at HEAPANN_DEPTH=32 */
#endif
static unsigned char stats_ram[STATS_KIB << 10] __attribute__((aligned(16)));

void *heapann_stats_buffer(size_t *len)
{
	*len = sizeof(stats_ram);
	return stats_ram;
}

uintptr_t ram_lo, ram_hi;
void *volatile keep[32];
static int nk;
extern char _end[];

NOINL void moment(int n) { __asm__ volatile("" : : "r"(n) : "memory"); }
NOINL void grow_a(void) { keep[nk++] = malloc(100); }            /* MARK:grow_a */
NOINL void steady(void) { keep[nk++] = malloc(200); }            /* MARK:steady */
NOINL void *temp(void) { return malloc(50); }                    /* MARK:temp */
NOINL void new_c(void) { keep[nk++] = malloc(1000); }            /* MARK:new_c */
NOINL void churn(void)
{
	for (int i = 0; i < 10; i++) {
		void *volatile p = malloc(64);                   /* MARK:churn */

		free(p);
	}
}

int main(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	void *t[4];

	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W)) {
			ram_lo = (uintptr_t)ph[i].p_vaddr & ~(uintptr_t)4095;
			break;
		}
	ram_hi = ((uintptr_t)_end + 4095) & ~(uintptr_t)4095;
	for (int i = 0; i < 3; i++)
		grow_a();
	steady();
	steady();
	for (int i = 0; i < 4; i++)
		t[i] = temp();
	moment(1);
	for (int i = 0; i < 3; i++)
		grow_a();
	for (int i = 0; i < 4; i++)
		free(t[i]);
	new_c();
	churn();
	moment(2);
	return 0;
}
