/* fw_board.h - what a bare-metal Cortex-M firmware of the tests needs from
 * qemu-system-arm's mps2 boards around its own code: semihosting output
 * (SYS_WRITE0, no stdio: its buffers would be blocks too), newlib's _sbrk up
 * to __heap_limit, the kit's statistics region in RAM (unless FW_NO_STATS), the
 * start-up (.data copied, .bss zeroed, constructors, main) and the vector
 * table. Included once, by the firmware's main file (hunt8_m.c, rtos9_m.c),
 * after it declares main; FW_PENDSV and FW_SYSTICK name its handlers for
 * those two exceptions (a fault otherwise). Memory map: hunt8_m.ld. */
#ifndef FW_BOARD_H
#define FW_BOARD_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#ifndef FW_PENDSV
#define FW_PENDSV fw_fault
#endif
#ifndef FW_SYSTICK
#define FW_SYSTICK fw_fault
#endif
__attribute__((section(".vectors"), used))
static void (*const fw_vectors[16])(void) = {
	(void (*)(void))__stack_top, fw_reset, fw_fault, fw_fault, fw_fault, fw_fault, fw_fault,
	[14] = FW_PENDSV, [15] = FW_SYSTICK,
};
#endif /* FW_BOARD_H */
