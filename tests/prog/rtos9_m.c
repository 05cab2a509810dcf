/* rtos9_m.c - bare-metal Cortex-M3 firmware for tests/run-rtos9.sh: a small
 * preemptive scheduler (three tasks, each with a stack of its own, switched by
 * PendSV on every SysTick) whose tasks allocate and free through newlib's
 * malloc under the static kit while being preempted. Run on qemu-system-arm's
 * mps2-an385 with -icount (a tick every ~2,000 instructions, deterministic),
 * memory map hunt8_m.ld, board code fw_board.h.
 *
 * The application provides newlib's __malloc_lock/__malloc_unlock as an RTOS
 * does: a recursive scheduler lock (SysTick keeps counting; a switch that falls
 * due while the lock is held waits for the last unlock). Task A and B run on
 * static stacks (in .bss), task C on a stack malloc'd before the scheduler
 * starts (as an RTOS whose task stacks come from the heap). Each task churns
 * blocks of pseudo-random sizes (a fixed seed) and keeps blocks from call
 * sites marked MARK:NAME BYTES BLOCKS: held by globals, held only by a local
 * of the task (on its own stack), leaked (stale copies of the pointer left
 * below the task's stack pointer, in A's static stack and C's heap one).
 * Task A waits for the others, stops SysTick, prints what the test needs and
 * "halt", and spins: B and C stay switched out in their last loop, their
 * frames on their own stacks. */
#include <reent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINL __attribute__((noinline))

int main(void);
void rt_pendsv(void);
void rt_systick(void);
#define FW_PENDSV rt_pendsv
#define FW_SYSTICK rt_systick
#include "fw_board.h"

/* ---- the scheduler ---- */
#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010)
#define SYST_RVR REG(0xE000E014)
#define SYST_CVR REG(0xE000E018)
#define SCB_ICSR REG(0xE000ED04)
#define SCB_SHPR3 REG(0xE000ED20)
#define ICSR_PENDSVSET (1u << 28)

#ifndef RT_TICK
#define RT_TICK 50   /* SysTick reload: 50 cycles of 25 MHz, ~2,000 instructions under -icount shift=0 */
#endif
#define RT_NTASK 3
#define RT_STACK 4096

/* One task: its saved stack pointer comes first (rt_pendsv reads it at 0). */
struct rt_task {
	uint32_t *sp;          /* saved PSP while switched out (r4-r11 below the exception frame) */
	void *stack;           /* its stack's lowest byte (task C's: a heap block) */
	unsigned runs;         /* times it was switched in */
};
struct rt_task rt_tasks[RT_NTASK];
struct rt_task *volatile rt_cur;
#ifdef RT_SHARED_STACKS
/* -DRT_SHARED_STACKS: A's and B's stacks in one array, as small RTOSes keep
 * them (--task-sp needs each one's low end then) */
static uint64_t rt_stacks[2][RT_STACK / 8];
#define rt_stack_a rt_stacks[0]
#define rt_stack_b rt_stacks[1]
#else
static uint64_t rt_stack_a[RT_STACK / 8], rt_stack_b[RT_STACK / 8];
#endif

static volatile unsigned rt_lock_depth;   /* __malloc_lock's nesting */
static volatile int rt_switch_due;        /* a tick came while it was held */
static volatile unsigned rt_ticks, rt_ticks_locked;
static volatile int rt_done;               /* tasks B and C that finished */

/* newlib's allocator lock, taken by malloc and (with the kit) around the
 * whole wrapped call: a recursive scheduler lock. */
void __malloc_lock(struct _reent *r)
{
	(void)r;
	rt_lock_depth++;
}

void __malloc_unlock(struct _reent *r)
{
	(void)r;
	if (--rt_lock_depth == 0 && rt_switch_due) {
		rt_switch_due = 0;
		SCB_ICSR = ICSR_PENDSVSET;
	}
}

void rt_systick(void)
{
	rt_ticks++;
	if (rt_lock_depth) {
		rt_switch_due = 1;
		rt_ticks_locked++;
	} else {
		SCB_ICSR = ICSR_PENDSVSET;
	}
}

/* Round robin; called by rt_pendsv between saving one task and loading the next. */
void rt_pick(void);
void rt_pick(void)
{
	struct rt_task *t = rt_cur;

	t = t && t < rt_tasks + RT_NTASK - 1 ? t + 1 : rt_tasks;
	t->runs++;
	rt_cur = t;
}

/* The switch: r4-r11 of the task switched out go below its exception frame on
 * its own stack, the next task's come back from its. */
__attribute__((naked)) void rt_pendsv(void)
{
	__asm__ volatile(
		"mrs r0, psp\n\t"
		"ldr r3, =rt_cur\n\t"
		"ldr r2, [r3]\n\t"
		"cbz r2, 1f\n\t"
		"stmdb r0!, {r4-r11}\n\t"
		"str r0, [r2]\n"
		"1:\n\t"
		"bl rt_pick\n\t"
		"ldr r3, =rt_cur\n\t"
		"ldr r2, [r3]\n\t"
		"ldr r0, [r2]\n\t"
		"ldmia r0!, {r4-r11}\n\t"
		"msr psp, r0\n\t"
		"ldr lr, =0xfffffffd\n\t"   /* thread mode, process stack */
		"bx lr\n\t"
		".ltorg\n");
}

#ifdef RT_EXIT_LR
/* -DRT_EXIT_LR: where a task that returns goes, its initial LR (none does). */
NOINL void rt_task_exit(void)
{
	out("fault: a task returned\n");
	for (;;)
		;
}
#endif

/* Task T starts at ENTRY on the LEN bytes at STACK: an exception frame as if
 * it had been switched out just before its first instruction. Its LR is 0, so
 * the kit's stacks end at the task's entry (libgcc's unwinder finds no
 * function there); a task that returns faults. With an exit function there
 * instead (-DRT_EXIT_LR; FreeRTOS's default, configTASK_RETURN_ADDRESS 0
 * changes it), the unwinder looks up the function placed before that one: a
 * stack has that function past the task's entry. */
static void rt_task_create(struct rt_task *t, void (*entry)(void), void *stack, size_t len)
{
	uint32_t *sp = (uint32_t *)(((uintptr_t)stack + len) & ~(uintptr_t)7);

	*--sp = 0x01000000;                          /* xPSR: Thumb */
	*--sp = (uint32_t)(uintptr_t)entry & ~1u;    /* PC */
#ifdef RT_EXIT_LR
	*--sp = (uint32_t)(uintptr_t)rt_task_exit;   /* LR */
#else
	*--sp = 0;                                   /* LR */
#endif
	for (int i = 0; i < 5 + 8; i++)
		*--sp = 0;                           /* r12, r3-r0, r11-r4 */
	t->sp = sp;
	t->stack = stack;
}

/* ---- what the tasks allocate ---- */
/* Each task's own count of what it allocated and freed (the statistics'
 * whole-run counters must add up to the sum). */
struct rt_count {
	unsigned allocs, frees;
	uint32_t bytes, freed;
};
static struct rt_count rt_count[RT_NTASK + 1];   /* the three tasks, then main */

void *volatile ga[4];   /* task A's kept blocks */
void *volatile gb[3];   /* task B's */
void *volatile gc;      /* task C's */
static volatile int rt_depth_seen;
/* The two leaked blocks' addresses, inverted: not a pointer to them. */
static volatile uintptr_t rt_leak_inv[2];

/* Blocks of pseudo-random sizes from a fixed seed, freed again at once (P
 * volatile: GCC drops a malloc whose block is only written and freed). */
NOINL void churn(struct rt_count *c, uint32_t *seed, int n)
{
	for (int i = 0; i < n; i++) {
		size_t sz;
		char *volatile p;

		*seed = *seed * 1103515245u + 12345u;
		sz = 8 + (*seed >> 16) % 120;
		p = malloc(sz);                                           /* MARK:churn */
		memset(p, i, sz);
		free(p);
		c->allocs++;
		c->frees++;
		c->bytes += sz;
		c->freed += sz;
	}
}

NOINL void a_keep(int i)
{
	ga[i] = malloc(48);                                               /* MARK:akeep 192 4 */
	rt_count[0].allocs++;
	rt_count[0].bytes += 48;
}

/* Leave P in 64 words of this frame, dead once it returns: what a task's stack
 * below its stack pointer holds after deep calls (a stale pointer to a block
 * since leaked), read as a reference unless mprof-core is given the stack
 * pointer (--task-sp). */
NOINL void smear(void *p)
{
	void *volatile w[64];

	for (int i = 0; i < 64; i++)
		w[i] = p;
	__asm__ volatile("" : : "r"(w) : "memory");
}

NOINL void a_leak(void)
{
	char *volatile p = malloc(72);                                    /* MARK:aleak 72 1 */

	memset(p, 2, 72);
	rt_leak_inv[0] = ~(uintptr_t)p;
	smear(p);
	p = NULL;
	rt_count[0].allocs++;
	rt_count[0].bytes += 72;
}

NOINL void *a_local(void)
{
	void *p = malloc(88);                                             /* MARK:alocal 88 1 */

	rt_count[0].allocs++;
	rt_count[0].bytes += 88;
	rt_depth_seen++;   /* no tail call */
	return p;
}

NOINL void b_rec(int n, int k)
{
	if (n > 0) {
		b_rec(n - 1, k);                                          /* MARK:brecur */
	} else {
		gb[k] = malloc(64);                                       /* MARK:brec 192 3 */
		rt_count[1].allocs++;
		rt_count[1].bytes += 64;
	}
	rt_depth_seen++;
}

NOINL void *b_local(void)
{
	void *p = malloc(56);                                             /* MARK:blocal 56 1 */

	rt_count[1].allocs++;
	rt_count[1].bytes += 56;
	rt_depth_seen++;
	return p;
}

NOINL void c_grow(void)
{
	void *p = malloc(40);

	gc = realloc(p, 200);                                             /* MARK:cgrow 200 1 */
	rt_count[2].allocs += 2;
	rt_count[2].frees++;
	rt_count[2].bytes += 40 + 200;
	rt_count[2].freed += 40;
}

NOINL void *c_local(void)
{
	void *p = calloc(6, 20);                                          /* MARK:clocal 120 1 */

	rt_count[2].allocs++;
	rt_count[2].bytes += 120;
	rt_depth_seen++;
	return p;
}

NOINL void c_leak(void)
{
	char *volatile p = malloc(96);                                    /* MARK:cleak 96 1 */

	memset(p, 3, 96);
	rt_leak_inv[1] = ~(uintptr_t)p;
	smear(p);
	p = NULL;
	rt_count[2].allocs++;
	rt_count[2].bytes += 96;
}

#define RT_CHURN 100

/* A keeps four blocks in ga[], leaks one and holds one in a local; then waits
 * for B and C, stops the ticks and reports. */
NOINL void task_a(void)
{
	uint32_t seed = 1;
	void *volatile held;

	for (int i = 0; i < 4; i++) {
		churn(&rt_count[0], &seed, RT_CHURN);
		a_keep(i);
	}
	churn(&rt_count[0], &seed, RT_CHURN);
	held = a_local();
	a_leak();   /* last: its stale copies stay below the stack pointer */
	while (rt_done < 2)
		;
	SYST_CSR = 0;   /* no more switches: B and C stay where they are */
	out_hex("alocal", (uintptr_t)held);
	out_hex("cstack", (uintptr_t)rt_tasks[2].stack);
	{
		uintptr_t sp;

		/* the stack pointers: A's own (no call below task_a from here on
		 * moves it), B's and C's as saved at their last switch */
		__asm__ volatile("mov %0, sp" : "=r"(sp));
		out_hex("spa", sp);
		out_hex("spb", (uintptr_t)rt_tasks[1].sp);
		out_hex("spc", (uintptr_t)rt_tasks[2].sp);
	}
	out_hex("aleak", ~rt_leak_inv[0]);
	out_hex("cleak", ~rt_leak_inv[1]);
	out_hex("ticks", rt_ticks);
	out_hex("locked", rt_ticks_locked);
	{
		struct rt_count s = { 0, 0, 0, 0 };

		for (int i = 0; i <= RT_NTASK; i++) {
			s.allocs += rt_count[i].allocs;
			s.frees += rt_count[i].frees;
			s.bytes += rt_count[i].bytes;
			s.freed += rt_count[i].freed;
		}
		out_hex("allocs", s.allocs);
		out_hex("frees", s.frees);
		out_hex("bytes", s.bytes);
		out_hex("freed", s.freed);
	}
	for (int i = 0; i < RT_NTASK; i++)
		out_hex("runs", rt_tasks[i].runs);
	out("halt\n");
	while (held)
		;
}

/* B keeps three blocks from a recursion in gb[] and holds one in a local. */
NOINL void task_b(void)
{
	uint32_t seed = 2;
	void *volatile held;

	for (int k = 0; k < 3; k++) {
		churn(&rt_count[1], &seed, RT_CHURN);
		b_rec(3, k);
	}
	held = b_local();
	churn(&rt_count[1], &seed, RT_CHURN);
	out_hex("blocal", (uintptr_t)held);
	__malloc_lock(_REENT);   /* C's rt_done++ too: no switch halfway through */
	rt_done++;
	__malloc_unlock(_REENT);
	while (held)
		;
}

/* C, on a heap stack: realloc, a calloc'd block held in a local, a leak. */
NOINL void task_c(void)
{
	uint32_t seed = 3;
	void *volatile held;

	churn(&rt_count[2], &seed, RT_CHURN);
	c_grow();
	churn(&rt_count[2], &seed, RT_CHURN);
	held = c_local();
	churn(&rt_count[2], &seed, RT_CHURN);
	c_leak();   /* last, as a_leak */
	out_hex("clocal", (uintptr_t)held);
	__malloc_lock(_REENT);
	rt_done++;
	__malloc_unlock(_REENT);
	while (held)
		;
}

int main(void)
{
	void *cs = malloc(RT_STACK);                                      /* MARK:cstack 4096 1 */

	rt_count[RT_NTASK].allocs++;
	rt_count[RT_NTASK].bytes += RT_STACK;
	rt_task_create(&rt_tasks[0], task_a, rt_stack_a, sizeof(rt_stack_a));
	rt_task_create(&rt_tasks[1], task_b, rt_stack_b, sizeof(rt_stack_b));
	rt_task_create(&rt_tasks[2], task_c, cs, RT_STACK);
	SCB_SHPR3 = 0xffu << 24 | 0xffu << 16;   /* SysTick and PendSV: the lowest priority */
	SYST_RVR = RT_TICK - 1;
	SYST_CVR = 0;
	SYST_CSR = 7;   /* the CPU clock, interrupt, on */
	rt_cur = NULL;
	SCB_ICSR = ICSR_PENDSVSET;   /* to task A, never back here */
	for (;;)
		;
}
