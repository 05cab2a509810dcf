/* t_cfi.c - the x86-64 CFI walker of annotate/cfi.c on its own, without the
 * preload and without libunwind behind it: the rules it derives from the
 * unwind tables (rsp-based, rbp-based, the outermost frame), its stacks against
 * glibc's backtrace() as the chain changes, that it reuses the previous stack's
 * outer frames only after checking them, and that a signal frame sends it back
 * (-1) rather than guessing. Includes the source: white-box. */
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define HA_CFI_STANDALONE 1   /* the walker without the rest of the library */
#define HA_CFI_COUNT 1
#include "../../annotate/cfi.c"
#include "check.h"

#if HA_HAVE_CFI
#define NOINLINE __attribute__((noinline, noclone))
#define MAXF 300

/* One capture by the walker and one by backtrace(), from the same frame. */
struct cap {
	uintptr_t f[MAXF];
	int n;
	void *bt[MAXF];
	int nbt;
	int max;          /* the walker's limit (0: MAXF) */
};

/* 1: probe() walks as libheapann's allocation path does (ha_stack_capture):
 * from its caller's frame, named by its own frame address, the frames taken
 * from the thread's record instead of copied out; at most c->max of them (0:
 * MAXF - 1), as HEAPANN_DEPTH limits that walk. */
static int probe_from;

static NOINLINE void probe(struct cap *c)
{
	if (probe_from) {
		const uintptr_t *fa = __builtin_frame_address(0), *fr = 0;
		uintptr_t scratch[MAXF];
		int n = ha_cfi_backtrace_from(scratch, c->max ? (unsigned)c->max : MAXF - 1, fa[1],
					      (uintptr_t)(fa + 2), fa[0], &fr);

		/* f[0] is probe's own return address in the other mode */
		c->f[0] = 0;
		if (n > 0 && fr)
			memcpy(c->f + 1, fr, (size_t)n * sizeof(*fr));
		c->n = n > 0 && fr ? n + 1 : n;
	} else {
		c->n = ha_cfi_backtrace(c->f, c->max ? (unsigned)c->max : MAXF);
	}
	c->nbt = backtrace(c->bt, MAXF);
	__asm__ volatile("" ::: "memory");
}

/* Same chain: frames 1.. equal, and as many. backtrace()'s frame 0 is the call
 * after the walker's, or (AddressSanitizer intercepts backtrace) its own. */
static int same_stack(const struct cap *c)
{
	int j = 1;

	while (j < 3 && j < c->nbt && (uintptr_t)c->bt[j] != c->f[1])
		j++;
	if (c->n < 2 || c->n - 1 != c->nbt - j)
		return 0;
	for (int i = 1; i < c->n; i++)
		if (c->f[i] != (uintptr_t)c->bt[j + i - 1])
			return 0;
	return 1;
}

static NOINLINE void chain(struct cap *c, int n);
static NOINLINE void common(struct cap *c);
/* 1: plain()'s innermost level calls probe() through common() */
static int plain_common;

static NOINLINE void with_vla(struct cap *c, int n)
{
	volatile char buf[16 + (n & 0x70)];

	buf[0] = (char)n;
	chain(c, n - 1);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static NOINLINE void chain(struct cap *c, int n)
{
	if (n <= 0) {
		probe(c);
		return;
	}
	if (n % 3 == 0)
		with_vla(c, n);
	else
		chain(c, n - 1);
	__asm__ volatile("");
}

/* A chain of N plain frames (no rbp-based CFA, so no rbp the join must
 * check: the loop that calls it may keep anything in rbp) over probe(), or
 * over common() and probe() (plain_common). */
static NOINLINE void plain(struct cap *c, int n)
{
	if (n <= 0) {
		if (plain_common)
			common(c);
		else
			probe(c);
		return;
	}
	plain(c, n - 1);
	__asm__ volatile("");
}

/* Two callers, identical frames, one callee: same stack height, other caller. */
static NOINLINE void common(struct cap *c)
{
	probe(c);
	__asm__ volatile("");
}

static NOINLINE void caller_a(struct cap *c)
{
	volatile int x[4] = { 1 };

	common(c);
	__asm__ volatile("" : : "r"(x[0]));
}

static NOINLINE void caller_b(struct cap *c)
{
	volatile int x[4] = { 2 };

	common(c);
	__asm__ volatile("" : : "r"(x[0] + 1));
}

#ifndef __SANITIZE_ADDRESS__   /* needs rbp as an ordinary register */
/* Saves rbp and keeps a constant in it across the call: the state it passes
 * down has the same rbp whoever called it, while the slot it saved rbp in
 * holds its caller's (realigned's) rbp. */
static NOINLINE void keeps_rbp(struct cap *c)
{
	register uintptr_t v __asm__("rbp") = 0x5eed;

	__asm__ volatile("" : "+r"(v));
	probe(c);
	__asm__ volatile("" : "+r"(v));
}

/* Realigns the stack (a 64-byte aligned local): CFA = rbp + 16, rsp rounded
 * down, so callers at stack heights 16 bytes apart put the frames below it at
 * the same place, and only the rbp saved by keeps_rbp tells them apart. */
static NOINLINE void realigned(struct cap *c)
{
	volatile char buf[64] __attribute__((aligned(64)));

	buf[0] = 1;
	keeps_rbp(c);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static NOINLINE void shift_a(struct cap *c, int pad)
{
	volatile char *p = __builtin_alloca((size_t)pad);

	p[0] = 0;
	realigned(c);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static NOINLINE void shift_b(struct cap *c, int pad)
{
	volatile char *p = __builtin_alloca((size_t)pad);

	p[0] = 1;
	realigned(c);
	__asm__ volatile("" : : "r"(p) : "memory");
}
#endif

/* Levels of one recursion (lvl), where level SW takes another way down
 * (lvl_b, then lvl2 below it): the stack with SW = 0 and the one with SW = p
 * are the same from level p out and differ below. */
static NOINLINE void lvl(struct cap *c, int n, int sw);

static NOINLINE void lvl2(struct cap *c, int n)
{
	if (n <= 0)
		probe(c);
	else
		lvl2(c, n - 1);
	__asm__ volatile("");
}

static NOINLINE void lvl_b(struct cap *c, int n)
{
	volatile char pad[48];

	pad[0] = (char)n;
	lvl2(c, n - 1);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static NOINLINE void lvl(struct cap *c, int n, int sw)
{
	if (n <= 0)
		probe(c);
	else if (n == sw)
		lvl_b(c, n);
	else
		lvl(c, n - 1, sw);
	__asm__ volatile("");
}

/* lvl at depth 40 from one call site, whatever the capture and the level.
 * rbp holds one value below it (no lvl frame touches rbp), so that a record
 * cut short, which keeps the rbp it would resume with, is joined as well. */
static NOINLINE void lvl40(struct cap *c, int sw)
{
#ifndef __SANITIZE_ADDRESS__   /* that build keeps frame pointers everywhere */
	register uintptr_t v __asm__("rbp") = 0x5eed;

	__asm__ volatile("" : "+r"(v));
	lvl(c, 40, sw);
	__asm__ volatile("" : "+r"(v));
#else
	lvl(c, 40, sw);
	__asm__ volatile("");
#endif
}

/* lvl40 for each of N captures CS[t] with level SW[t], from one call site;
 * the frames each stepped and copied in ST[t] and CP[t]. */
static NOINLINE void lvl40_each(struct cap **cs, const int *sw, int n, unsigned long *st, int *cp)
{
	for (volatile int t = 0; t < n; t++) {   /* not unrolled: one call site */
		unsigned long s0 = ha_cfi_stepped, c0 = ha_cfi_copied;

		lvl40(cs[t], sw[t]);
		st[t] = ha_cfi_stepped - s0;
		cp[t] = (int)(ha_cfi_copied - c0);
	}
}

/* A recursion N levels deep whose level SW calls the next one from a second
 * call site of the same function: the same frames at the same sp as with
 * SW = 0, one return address other (that of level SW - 1's frame). The asm
 * before and after each call differs, so that the compiler keeps two calls. */
static NOINLINE void two_sites(struct cap *c, int n, int sw)
{
	if (n <= 0) {
		probe(c);
	} else if (n == sw) {
		__asm__ volatile("nop");
		two_sites(c, n - 1, sw);
		__asm__ volatile("nop; nop");
	} else {
		__asm__ volatile("nop; nop; nop");
		two_sites(c, n - 1, sw);
		__asm__ volatile("nop; nop; nop; nop");
	}
}

/* >= 0: before the third capture of two_sites_each, the return address that
 * the thread's record holds for the frame FLIP_ABOVE frames above its checked
 * join (chk_lo - 1) is changed, the stack left as it is; FLIPPED tells whether
 * there was such a frame. CHECKED: the record had been checked below its end
 * (chk_lo < cap) before the third capture. */
static int flip_above = -1, flipped, checked;

/* two_sites at depth N for each of 3 captures CS[t] with SW[t], from one call
 * site; the frames each stepped and copied in ST[t] and CP[t]. */
static NOINLINE void two_sites_each(struct cap **cs, const int *sw, int n, unsigned long *st,
				    int *cp)
{
	for (volatile int t = 0; t < 3; t++) {   /* not unrolled: one call site */
		unsigned long s0, c0;

		if (t == 2) {
			struct ha_prev *pv = ha_prev_mine;
			unsigned at = pv->chk_lo + (unsigned)flip_above;

			checked = pv->chk_lo < pv->cap;
			flipped = flip_above >= 0 && at < pv->cap;
			if (flipped)
				pv->c.ip[at] ^= 0x10;
		}
		s0 = ha_cfi_stepped;
		c0 = ha_cfi_copied;

		two_sites(cs[t], n, sw[t]);
		st[t] = ha_cfi_stepped - s0;
		cp[t] = (int)(ha_cfi_copied - c0);
	}
}

/* A capture of probe_from with c->max set: backtrace()'s stack truncated to
 * max, frame for frame and as many (fewer when the stack is shorter). */
static int same_cut(const struct cap *c)
{
	int j = 1, want;

	while (j < 3 && j < c->nbt && (uintptr_t)c->bt[j] != c->f[1])
		j++;
	want = c->nbt - j < c->max ? c->nbt - j : c->max;
	if (c->n - 1 != want)
		return 0;
	for (int i = 1; i < c->n; i++)
		if (c->f[i] != (uintptr_t)c->bt[j + i - 1])
			return 0;
	return 1;
}

/* Frames 1 .. n-1 of a capture cut at its limit equal backtrace()'s. */
static int same_prefix(const struct cap *c)
{
	int j = 1;

	while (j < 3 && j < c->nbt && (uintptr_t)c->bt[j] != c->f[1])
		j++;
	if (c->n < 2 || c->n - 1 > c->nbt - j)
		return 0;
	for (int i = 1; i < c->n; i++)
		if (c->f[i] != (uintptr_t)c->bt[j + i - 1])
			return 0;
	return 1;
}

/* Index of the first frame of C whose return address is R (C's n if none). */
static int first_of(const struct cap *c, uintptr_t r)
{
	int i = 0;

	while (i < c->n && c->f[i] != r)
		i++;
	return i;
}

static struct cap sigcap;

static void on_signal(int sig)
{
	(void)sig;
	probe(&sigcap);
}

/* The return address of the call to chain() in chain() itself (rsp rule) and
 * of the call in with_vla() (rbp rule): taken from a capture at depth 6
 * (chain 6 -> with_vla 6 -> chain 5 -> chain 4 -> with_vla 3 ... ). */
static void check_rules(const struct cap *c)
{
	struct ha_rule r;
	int sp = 0, bp = 0, end;

	for (int i = 1; i < c->n; i++) {
		r = ha_rule_find(c->f[i]);
		sp += r.kind == HA_RULE_SP;
		bp += r.kind == HA_RULE_BP && r.bpsaved && r.bpoff == -16 && r.off == 16;
	}
	r = ha_rule_find(c->f[c->n - 1]);
	end = r.kind == HA_RULE_END;
	CHECK("rules: every frame but the last is rsp- or rbp-based", sp + bp == c->n - 2);
#ifndef __SANITIZE_ADDRESS__   /* that build keeps frame pointers everywhere */
	CHECK("rules: ordinary frames are CFA = rsp + constant", sp >= 4);
#endif
	CHECK("rules: a VLA frame is CFA = rbp + 16, rbp saved at CFA-16", bp >= 2);
	CHECK("rules: the outermost frame (_start) ends the stack", end);
	r = ha_rule_find((uintptr_t)&sigcap);   /* data, not code: no FDE, no object code */
	CHECK("rules: an address in no function's FDE is not followed", r.kind != HA_RULE_SP &&
	      r.kind != HA_RULE_BP);
}

/* A function with an FDE (never run): a return address after its call, and
 * one after nops. */
__asm__(".text\n"
	".globl t_fake\n.type t_fake, @function\nt_fake:\n.cfi_startproc\n"
	"nop; nop; nop; nop; nop; nop; nop; nop\n"
	"call t_fake\n"
	".globl t_fake_after_call\nt_fake_after_call:\n"
	"nop; nop; nop; nop; nop; nop; nop; nop\n"
	".globl t_fake_after_nops\nt_fake_after_nops:\n"
	"ret\n.cfi_endproc\n.size t_fake, .-t_fake\n");
extern const char t_fake_after_call[], t_fake_after_nops[];

/* A function that ends with a call that never returns, and the function right
 * after it: its first byte follows a call, but is no return address. */
__asm__(".text\n"
	".globl t_noret\n.type t_noret, @function\nt_noret:\n.cfi_startproc\n"
	"nop; nop; nop; nop; nop; nop; nop; nop\ncall t_noret\n.cfi_endproc\n"
	".size t_noret, .-t_noret\n"
	".globl t_after_noret\n.type t_after_noret, @function\nt_after_noret:\n"
	".cfi_startproc\nret\n.cfi_endproc\n.size t_after_noret, .-t_after_noret\n");
extern const char t_after_noret[];

/* A function without an FDE that keeps a frame pointer, as gcc -O0
 * -fno-asynchronous-unwind-tables builds it: calls FN(ARG). */
__asm__(".text\n"
	".globl t_nofde\n.type t_nofde, @function\nt_nofde:\n"
	"push %rbp\nmov %rsp, %rbp\nmov %rdi, %rax\nmov %rsi, %rdi\ncall *%rax\n"
	".globl t_nofde_ret\nt_nofde_ret:\n"
	"pop %rbp\nret\n.size t_nofde, .-t_nofde\n");
void t_nofde(void (*fn)(struct cap *), struct cap *arg);
extern const char t_nofde_ret[];
static uintptr_t via_nofde_ret;

static NOINLINE void via_nofde(struct cap *c)
{
	t_nofde(probe, c);
	via_nofde_ret = (uintptr_t)&&after;   /* not the return address: near it */
after:
	__asm__ volatile("");
}

/* Code bytes ending at P + 16 (the rest nops), for ha_code_after_call. */
static const uint8_t *code_end(uint8_t *buf, const uint8_t *tail, size_t n)
{
	memset(buf, 0x90, 16);
	memcpy(buf + 16 - n, tail, n);
	return buf + 16;
}

/* Code built without unwind tables (tests/run-nounwind.sh runs whole
 * programs): the call check before a return address, and the frame-pointer
 * step on a stack made by hand on this thread's own stack. */
static NOINLINE void check_nofde(void)
{
	static const struct {
		uint8_t b[7];
		size_t n;
		int call;
		const char *what;
	} forms[] = {
		{ { 0xe8, 1, 2, 3, 4 }, 5, 1, "call rel32" },
		{ { 0xff, 0xd0 }, 2, 1, "call *%rax" },
		{ { 0x41, 0xff, 0xd3 }, 3, 1, "call *%r11" },
		{ { 0xff, 0x15, 1, 2, 3, 4 }, 6, 1, "call *disp32(%rip)" },
		{ { 0xff, 0x50, 0x08 }, 3, 1, "call *8(%rax)" },
		{ { 0xff, 0x54, 0x24, 0x08 }, 4, 1, "call *8(%rsp)" },
		{ { 0xff, 0x14, 0x25, 1, 2, 3, 4 }, 7, 1, "call *abs32 (SIB, no base)" },
		{ { 0xff, 0x90, 1, 2, 3, 4 }, 6, 1, "call *disp32(%rax)" },
		{ { 0xff, 0x94, 0x24, 1, 2, 3, 4 }, 7, 1, "call *disp32(%rsp)" },
		{ { 0xff, 0xe0 }, 2, 0, "jmp *%rax" },
		{ { 0xff, 0x30 }, 2, 0, "push (%rax)" },
		{ { 0xff, 0x50 }, 2, 0, "call *disp8(%rax) without its disp8" },
		{ { 0x48, 0x89, 0xe5 }, 3, 0, "mov %rsp,%rbp" },
		{ { 0x5d, 0xc3 }, 2, 0, "pop %rbp; ret" },
	};
	uint8_t buf[16];
	int right = 0;
	unsigned n = sizeof(forms) / sizeof(forms[0]);

	for (unsigned i = 0; i < n; i++)
		right += ha_code_after_call((uintptr_t)code_end(buf, forms[i].b, forms[i].n)) ==
			 forms[i].call;
	CHECK("no FDE: a return address after each call form, not after a jump or push, "
	      "14 of 14", right == (int)n);

	/* a frame made by hand: sp at w[0], rbp at w[2] (its caller's rbp, then
	 * a return address). The address is this function's return address
	 * (after a call, in code an FDE covers) or something else. Read inside
	 * this thread's own stack (B), or through the kernel (NONE). */
	{
		uintptr_t w[8], ra = (uintptr_t)__builtin_return_address(0), bps;
		struct ha_bounds b = ha_bounds_of((uintptr_t)w), none = { 0, 0, { 0, 0, 0, 0 }, 0 };
		struct ha_prev *pv = ha_prev_get(64);
		struct ha_state st;
		int r;

		CHECK("no FDE: this thread's own stack holds its frames, up to its top",
		      b.lo == (uintptr_t)w && b.hi > (uintptr_t)&w[7] && ha_stk_state == 1);
		memset(w, 0, sizeof(w));
		w[2] = (uintptr_t)&w[6];
		w[3] = ra;
		st.ip = 0; st.sp = (uintptr_t)&w[0]; st.bp = (uintptr_t)&w[2];
		r = ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv);
		CHECK("no FDE: the frame-pointer step reads rbp's frame", r == HA_STEP_ON &&
		      st.ip == ra && st.sp == (uintptr_t)&w[4] && st.bp == (uintptr_t)&w[6] &&
		      bps == ((uintptr_t)&w[2] | HA_BPS_CFA));
		st.ip = 0; st.sp = (uintptr_t)&w[0]; st.bp = (uintptr_t)&w[2];
		r = ha_step_fp(st.sp, st.bp, &none, &st, &bps, pv);
		CHECK("... the same read through the kernel", r == HA_STEP_ON && st.ip == ra &&
		      st.bp == (uintptr_t)&w[6]);
		st.ip = 0; st.sp = (uintptr_t)&w[3]; st.bp = (uintptr_t)&w[2];
		CHECK("no FDE: rbp below sp ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END && bps == HA_BPS_CFA);
		st.sp = (uintptr_t)&w[0]; st.bp = (uintptr_t)&w[2] + 4;
		CHECK("no FDE: a misaligned rbp ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		st.bp = (uintptr_t)&w[2];
		w[3] = (uintptr_t)t_fake_after_nops;   /* an FDE covers it; nops before it */
		CHECK("no FDE: a return address that follows no call ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		w[3] = (uintptr_t)t_fake_after_call;
		CHECK("... one that follows a call goes on",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_ON &&
		      st.ip == (uintptr_t)t_fake_after_call);
		st.sp = (uintptr_t)&w[0]; st.bp = (uintptr_t)&w[2];
		w[3] = (uintptr_t)check_rules;   /* a function's first byte, as a function pointer */
		CHECK("no FDE: a function's address (a function pointer in a struct) ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		w[3] = (uintptr_t)t_after_noret;
		CHECK("no FDE: the first byte of a function after one that ends in a call that "
		      "never returns ends the stack", ha_code_after_call((uintptr_t)t_after_noret) &&
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		w[3] = (uintptr_t)"a string";   /* .rodata: in an object, not code */
		CHECK("no FDE: an address of constant data ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		w[3] = (uintptr_t)buf;   /* the stack: in no object */
		CHECK("no FDE: a return address in no object ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		w[3] = 0;
		CHECK("no FDE: a return address 0 ends the stack",
		      ha_step_fp(st.sp, st.bp, &b, &st, &bps, pv) == HA_STEP_END);
		/* rbp into memory that is not mapped: the kernel says so */
		{
			long pg = sysconf(_SC_PAGESIZE);
			char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED) {
				uintptr_t *top = (uintptr_t *)(m + pg) - 2;

				top[0] = (uintptr_t)(m + pg + 64);   /* past the page, then gone */
				top[1] = ra;
				munmap(m + pg, (size_t)pg);
				st.sp = (uintptr_t)m; st.bp = (uintptr_t)(m + pg);
				CHECK("no FDE: rbp at an unmapped page, off this thread's stack, ends the "
				      "stack (no fault)", ha_step_fp(st.sp, st.bp, &none, &st, &bps, pv) == HA_STEP_END);
				st.sp = (uintptr_t)m; st.bp = (uintptr_t)top;
				r = ha_step_fp(st.sp, st.bp, &none, &st, &bps, pv);
				CHECK("... the frame just below it is read", r == HA_STEP_ON && st.ip == ra);
				st.sp = (uintptr_t)m; st.bp = (uintptr_t)(m + pg - 8);   /* 8 of 16 mapped */
				CHECK("... a frame across its end is not",
				      ha_step_fp(st.sp, st.bp, &none, &st, &bps, pv) == HA_STEP_END);
				munmap(m, (size_t)pg);
			}
		}
	}

	/* a whole walk through such a function, twice (the record is left empty
	 * by the first: nothing reused) */
	for (int round = 0; round < 2; round++) {
		static struct cap c;
		int at = -1, end;

		via_nofde(&c);
		for (int i = 0; i < c.n; i++)
			if (c.f[i] == (uintptr_t)t_nofde_ret)
				at = i;
		end = c.n > 0 && ha_rule_find(c.f[c.n - 1]).kind == HA_RULE_END;
		CHECK(round ? "... again, the same" :
		      "no FDE: the walk steps through a frame-pointer function without an FDE "
		      "to its caller and on to _start",
		      at > 0 && at + 1 < c.n && c.f[at + 1] > (uintptr_t)via_nofde &&
		      c.f[at + 1] < via_nofde_ret + 64 && end && c.n > at + 3);
		CHECK(round ? "... the record empty again" :
		      "... the record left empty (a walk through such code reuses nothing)",
		      ha_prev_mine && ha_prev_mine->s == ha_prev_mine->cap);
	}
}

int main(void)
{
	static struct cap c, d;
	int ok, copied = 0, cut;
	unsigned long stepped = 0;

	ha_cfi_init();
	chain(&c, 6);
	CHECK("walker: a 6-deep chain with VLA frames (no fallback)", c.n > 0);
	CHECK("walker: equals backtrace() frame for frame", same_stack(&c));
	check_rules(&c);

	/* the same chain twice from one call site: the second reuses the record
	 * of the first */
	{
		struct cap *both[2] = { &c, &d };

		for (volatile int i = 0; i < 2; i++) {   /* one call site, not unrolled */
			stepped = ha_cfi_stepped;
			copied = (int)ha_cfi_copied;
			chain(both[i], 6);
		}
		stepped = ha_cfi_stepped - stepped;
		copied = (int)ha_cfi_copied - copied;
	}
	CHECK("again: the same stack", same_stack(&d) && d.n == c.n &&
	      memcmp(d.f + 1, c.f + 1, (size_t)(c.n - 1) * sizeof(c.f[0])) == 0);
	CHECK("again: at most 2 frames stepped, the rest copied", stepped <= 2 &&
	      copied == d.n - (int)stepped);
	CHECK("again: the thread's record holds it", ha_prev_mine &&
	      ha_prev_mine->cap - ha_prev_mine->s == (unsigned)d.n && ha_prev_mine->complete);

	/* code loaded since (ha_code_gen moved): nothing learnt before is used */
	{
		struct cap *both[2] = { &c, &d };

		for (volatile int i = 0; i < 2; i++) {
			if (i == 1) {
				ha_code_gen++;
				stepped = ha_cfi_stepped;
				copied = (int)ha_cfi_copied;
			}
			chain(both[i], 6);
		}
		stepped = ha_cfi_stepped - stepped;
		copied = (int)ha_cfi_copied - copied;
		CHECK("new code generation: every frame stepped again, none copied",
		      same_stack(&d) && stepped == (unsigned long)d.n && copied == 0);
	}

	/* random depths: every stack equals backtrace() */
	ok = 0;
	for (int i = 0; i < 500; i++) {
		chain(&c, (i * 7919) % 61);
		ok += same_stack(&c);
	}
	CHECK("500 chains of depth 0..60, changing every time", ok == 500);

	/* the previous stack's outer frames are copied only after their check */
	ok = 0;
	for (int i = 0; i < 200; i++) {
		if (i & 1)
			caller_a(&c);
		else
			caller_b(&c);
		ok += same_stack(&c);   /* frame 3 is the caller, a or b */
	}
	CHECK("two callers at one stack height: 200 of 200 right", ok == 200);

#ifndef __SANITIZE_ADDRESS__
	/* a realigned frame entered at other heights, from another caller: the
	 * frames below it land where they were, a stale return address may still
	 * sit where the old one was; only the saved rbp shows the difference */
	ok = 0;
	for (int i = 0; i < 64; i++) {
		if (i & 1)
			shift_b(&c, 16 + 16 * (i % 8));
		else
			shift_a(&c, 16 + 16 * ((i / 2) % 8));
		ok += same_stack(&c);
	}
	CHECK("realigned frames from two callers at shifting heights: 64 of 64 right", ok == 64);

	/* the saved-rbp check itself: the same capture twice is reused; once the
	 * record says the slot keeps_rbp saved held another rbp, it is not */
	{
		struct cap *both_caps[2] = { &c, &d };
		int j, r = -1, noted = 0;

		for (volatile int i = 0; i < 3; i++) {   /* one call site: i is volatile */
			if (i == 2 && r >= 0) {
				/* "realigned's rbp was elsewhere": in the frame's state and
				 * in the list of slots to check that the reuse noted */
				ha_prev_mine->c.bp[r] ^= 0x40;
				for (unsigned e = 0; e < ha_prev_mine->nsl; e++)
					if (ha_prev_mine->sl[e].idx == (unsigned)r) {
						ha_prev_mine->sl[e].val ^= 0x40;
						noted++;
					}
			}
			stepped = ha_cfi_stepped;
			copied = (int)ha_cfi_copied;
			shift_a(both_caps[i & 1], 32);
			stepped = ha_cfi_stepped - stepped;
			copied = (int)ha_cfi_copied - copied;
			if (i == 0)   /* realigned: rbp-based CFA, its rbp in the slot below */
				for (j = (int)ha_prev_mine->s + 1; j < (int)ha_prev_mine->cap; j++)
					if ((ha_prev_mine->c.bps[j] & HA_BPS_CFA) &&
					    (ha_prev_mine->c.bps[j - 1] & ~HA_BPS_CFA))
						r = j;
			if (i == 1)
				CHECK("realigned: the same capture again is reused", r > 0 && copied > 0);
		}
		CHECK("realigned: the reuse noted the slot to check, once", noted == 1);
		CHECK("realigned: a saved rbp that differs stops the reuse", copied == 0 &&
		      stepped == (unsigned long)c.n && same_stack(&c));
	}
#endif

	/* joins at every level: a straight stack, then one that differs below
	 * level p; the walk steps the frames below the first that returns into
	 * lvl's own recursive call (R, the join) and copies the rest. The
	 * record is anchored at its end, so the joins move nothing. Then the
	 * straight one again, joining the other */
	{
		static struct cap a, b, a2;
		struct cap *cs[3] = { &a, &b, &a2 };
		int joins = 0, exact = 0, back = 0, D = 40, sw[3] = { 0, 0, 0 }, cp[3];
		unsigned long st[3];
		uintptr_t r;

		lvl40_each(cs, sw, 1, st, cp);
		r = a.f[2];   /* lvl(0) returns into lvl(1)'s call */
		for (int p = 1; p <= D; p++) {
			int at;

			sw[1] = p;
			lvl40_each(cs, sw, 3, st, cp);
			at = first_of(&b, r);
			joins += same_stack(&a) && same_stack(&b);
			/* a join is looked for only in the first HA_SCRATCH frames */
			if (at <= HA_SCRATCH)
				exact += st[1] == (unsigned long)at && cp[1] == b.n - at;
			else
				exact += st[1] == (unsigned long)b.n && cp[1] == 0;
			/* the straight stack joins b's one level lower (no lvl_b) */
			if (at < b.n && at - 1 <= HA_SCRATCH)
				back += st[2] == (unsigned long)(at - 1) && cp[2] == a2.n - (at - 1);
			else
				back += st[2] == (unsigned long)a2.n && cp[2] == 0;
			back -= !same_stack(&a2) || ha_prev_mine->cap - ha_prev_mine->s != (unsigned)a2.n;
		}
		CHECK("joins at levels 1..40: 40 of 40 stacks right", joins == D);
		CHECK("joins at levels 1..40: the frames below the join (up to 32) stepped, "
		      "the rest copied", exact == D);
		CHECK("joins at levels 1..40 and back: 40 of 40 right, as many stepped and copied",
		      back == D);

		/* cut at a limit: a complete record, then a capture that joins it
		 * but would go past its limit (the record's outer frames beyond it
		 * go); then a full straight one that joins the cut record, copies
		 * what it holds from the join and walks on from its last frame */
		{
			int cut_ok = 0, whole = 0, lim = 30;

			for (int p = 1; p <= 25; p += 3) {
				int at;

				sw[1] = p;
				sw[2] = 0;
				b.max = lim;
				lvl40_each(cs, sw, 3, st, cp);
				at = first_of(&b, r);
				cut_ok += b.n == lim && same_prefix(&b) && st[1] == (unsigned long)at &&
					  cp[1] == lim - at;
				whole += same_stack(&a2) && ha_prev_mine->complete &&
					 ha_prev_mine->cap - ha_prev_mine->s == (unsigned)a2.n &&
					 cp[2] == lim - at &&   /* the record's last frame is stepped on */
					 st[2] == (unsigned long)(a2.n - cp[2] + 1);
				b.max = 0;
			}
			CHECK("a join cut at 30 frames: 9 of 9 right", cut_ok == 9);
			CHECK("... and a full capture joining the cut record: 9 of 9 whole", whole == 9);
		}
	}

	/* one return address above a join changed on a record already checked
	 * there (ha_prev_check_above, the eight-a-round loop): the same stack
	 * twice (the second capture joins at its first frame and verifies the
	 * record: chk_lo moves down to the join), then the same stack but for the
	 * return address of one frame at depth P of N, at the same sp. The join
	 * is found at the same frame and must be refused: every frame stepped,
	 * none copied, backtrace()'s stack. N = 1..40 and every P put the changed
	 * word at every distance above the join, in every lane of the rounds of
	 * eight, four and one */
	{
		static struct cap a, a2, b;
		struct cap *cs[3] = { &a, &a2, &b };
		int total = 0, right = 0, one = 0, refused = 0, reused = 0, sw[3] = { 0, 0, 0 }, cp[3];
		unsigned long st[3];

		for (int n = 1; n <= 40; n++) {
			for (int p = 1; p <= n; p++) {
				int diff = 0;

				sw[2] = p;
				two_sites_each(cs, sw, n, st, cp);
				total++;
				right += same_stack(&a) && same_stack(&a2) && same_stack(&b);
				/* the second capture reused the first */
				reused += cp[1] == a2.n - (int)st[1] && cp[1] > n;
				if (b.n == a.n)
					for (int i = 1; i < a.n; i++)
						diff += a.f[i] != b.f[i];
				one += diff == 1;
				refused += cp[2] == 0 && st[2] == (unsigned long)b.n && checked;
			}
		}
		CHECK("one return address changed above a checked join, at each depth 1..40 of "
		      "stacks 1..40 deep: 820 of 820 stacks equal backtrace()",
		      total == 820 && right == total);
		CHECK("... the same stack captured again was reused each time (820 of 820)",
		      reused == total);
		CHECK("... each changed stack differs from the straight one in one frame "
		      "(820 of 820)", one == total);
		CHECK("... and its join, on a record checked there, was refused: every frame "
		      "stepped, none copied (820 of 820)", refused == total);

		/* the same through the record: the stack as it was, the return
		 * address the record holds for one frame above the checked join
		 * changed, at every distance up to the outermost frame (the
		 * straight stack's frames above two_sites too, so the last
		 * lanes of the rounds of four and one as well) */
		total = right = refused = 0;
		sw[2] = 0;
		for (int n = 0; n <= 40; n++) {
			for (flip_above = 0;; flip_above++) {
				two_sites_each(cs, sw, n, st, cp);
				if (!flipped)
					break;
				total++;
				right += same_stack(&b) && b.n == a.n &&
					 memcmp(b.f + 1, a.f + 1, (size_t)(a.n - 1) * sizeof(a.f[0])) == 0;
				refused += cp[2] == 0 && st[2] == (unsigned long)b.n && checked;
			}
		}
		flip_above = -1;
		CHECK("a record's return address changed at each frame above its checked join, "
		      "stacks 0..40 deep: the stack as backtrace() has it every time",
		      total > 41 * 6 && right == total);
		CHECK("... every join refused: every frame stepped, none copied", refused == total);
	}

	/* a capture limited to 4 frames, then a full one from the same chain:
	 * the record it finds ends at the limit, so the walk goes on past it */
	c.max = 4;
	chain(&c, 12);
	cut = c.n == 4 && !ha_prev_mine->complete;
	chain(&d, 12);
	CHECK("a capture cut at 4 frames is marked incomplete", cut);
	CHECK("... and a full capture after it is whole", same_stack(&d));
	c.max = 0;

	/* the allocation path's walk: from the caller's frame, frames handed back
	 * in the record (joined or not); interleaved with copying walks */
	ok = 0;
	for (int i = 0; i < 500; i++) {
		probe_from = (i % 3) != 0;
		if (i & 4)
			(i & 1 ? caller_a : caller_b)(&c);
		else
			chain(&c, (i * 7919) % 41);
		ok += same_stack(&c);
	}
	probe_from = 0;
	CHECK("500 walks from the caller's frame, frames from the record, equal backtrace()",
	      ok == 500);

	/* the same walk limited (HEAPANN_DEPTH below the stack's depth): a walk
	 * that joins a complete record and would pass its limit cuts the record
	 * there and hands back frames from it (ha_join's cut). Each limit after a
	 * full walk of the same chain (joined at once), of the same chain
	 * entered through common() (joined a frame up) and of a deeper chain;
	 * then a full walk,
	 * which goes on past the cut record's end */
	{
		static const int lims[] = { 1, 2, 3, 4, 5, 7, 10, 13 };
		int nl = (int)(sizeof(lims) / sizeof(lims[0])), ncut = 0, joined = 0, whole = 0;
		int rounds = 0;

		probe_from = 1;
		for (int li = 0; li < nl; li++) {
			for (int r = 0; r < 3; r++) {
				/* one call site (the loop not unrolled), so the outer
				 * frames stay the same */
				for (volatile int st = 0; st < 3; st++) {
					unsigned long s0 = ha_cfi_stepped, c0 = ha_cfi_copied;
					int lim = lims[li];

					c.max = st == 1 ? lim : 0;
					plain_common = st == 1 && r == 1;
					plain(&c, st == 0 && r == 2 ? 16 : 12);
					/* every frame stepped or taken from the record; the
					 * same chain joins at its first frame and takes them
					 * all from the record (ha_join's cut) */
					if (st == 1) {
						unsigned long stp = ha_cfi_stepped - s0, cpd = ha_cfi_copied - c0;

						ncut += same_cut(&c) && c.n - 1 == lim && stp + cpd == (unsigned long)lim;
						joined += r == 0 && stp == 0 && cpd == (unsigned long)lim;
					}
					if (st == 2)
						whole += same_stack(&c);
				}
				plain_common = 0;
				c.max = 0;
				rounds++;
			}
		}
		probe_from = 0;
		CHECK("walks from the caller's frame limited to 1, 2, 3, 4, 5, 7, 10, 13 frames "
		      "after a full one: backtrace() cut there, each frame stepped or taken "
		      "from the record, 24 of 24",
		      ncut == rounds && rounds == 24);
		CHECK("... after the same chain, all taken from the record (the join cut it), "
		      "8 of 8", joined == nl);
		CHECK("... and a full walk after each is whole, 24 of 24", whole == rounds);
	}

	/* a signal frame: the walker says so instead of guessing */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		CHECK("signal handler: -1 (the caller falls back to libunwind)", sigcap.n == -1);
		chain(&c, 5);
		CHECK("... and the next stack is whole again", c.n > 0 && same_stack(&c));
	}
	check_nofde();
	return CHECK_DONE();
}
#else
int main(void)
{
	CHECK("no CFI walker on this target (x86-64 only)", 1);
	return CHECK_DONE();
}
#endif
