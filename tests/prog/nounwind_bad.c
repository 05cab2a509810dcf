/* nounwind_bad.c - code without unwind tables calling malloc while rbp holds
 * no frame pointer, for tests/run-nounwind.sh: libheapann's frame-pointer
 * step must neither fault nor make up a frame. argv[1] picks the case:
 *   coro      a coroutine on an mmap'd stack, rbp at another mapping's guard page
 *   altstack  a SIGUSR1 handler (no unwind tables) on an mmap'd alternate stack,
 *             rbp (the interrupted code's) at memory unmapped since
 *   ownstack  main's stack, rbp at a 0 and a return address of a function with
 *             a 4 MiB frame (above the top of the stack)
 *   dlclose   rbp at a 0 and a return address into a library unloaded since
 *   vmread    a coroutine on a .bss stack, rbp at the last 16 bytes of .bss (a
 *             return address there; the page after is not mapped)
 *   data      rbp at a count and the address of a string constant
 * Each prints "ok N" (N the block's size) and exits 0; with a second argument
 * it aborts instead (a kernel core: the block's stack must be its function's
 * frames only, from nu_call on). Built with nounwind_fp.S and
 * nounwind_bad_o2.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

void *nu_call(size_t n, void *rbp);
void nu_raise(void *rbp);
void nu_on_usr1(int sig);
uintptr_t nu_big_frame_ra(void);
uintptr_t nu_small_frame_ra(void);
extern void *volatile nu_kept;

void *volatile kept;
static ucontext_t mainc, coc;
static char bss_stack[1 << 16] __attribute__((aligned(16)));
static void *co_rbp;
static size_t co_size;

static void co(void)
{
	kept = nu_call(co_size, co_rbp);
}

static void on_coroutine(void *stack, size_t size, void *rbp, size_t n)
{
	co_rbp = rbp;
	co_size = n;
	getcontext(&coc);
	coc.uc_stack.ss_sp = stack;
	coc.uc_stack.ss_size = size;
	coc.uc_link = &mainc;
	makecontext(&coc, co, 0);
	swapcontext(&mainc, &coc);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	size_t n = 0;

	if (!strcmp(c, "coro")) {
		size_t sz = 1 << 16;
		char *old = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *stk = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		mprotect(old, 4096, PROT_NONE);   /* an earlier stack's guard page */
		on_coroutine(stk, sz, old, n = 101);
	} else if (!strcmp(c, "altstack")) {
		char *gone = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		stack_t ss = { .ss_size = 1 << 16 };
		struct sigaction sa;

		ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(gone, 1 << 20);
		sigaltstack(&ss, NULL);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = nu_on_usr1;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGUSR1, &sa, NULL);
		nu_raise(gone + 4096);
		kept = nu_kept;
		n = 100 + SIGUSR1;
	} else if (!strcmp(c, "ownstack")) {
		uintptr_t fake[2] = { 0, nu_big_frame_ra() };

		kept = nu_call(n = 102, fake);
	} else if (!strcmp(c, "dlclose")) {
		void *h = dlopen(argc > 3 ? argv[3] : "./nounwind_bad_lib.so", RTLD_NOW);
		void *(*lib_alloc)(size_t);
		uintptr_t *last, fake[2] = { 0, 0 };

		if (!h) {
			puts(dlerror());
			return 1;
		}
		lib_alloc = (void *(*)(size_t))dlsym(h, "nu_lib_alloc");
		last = dlsym(h, "nu_last_ra");
		free(lib_alloc(24));   /* the walker caches the rule of that return address */
		fake[1] = *last;
		dlclose(h);
		kept = nu_call(n = 103, fake);
	} else if (!strcmp(c, "vmread")) {
		extern char _end[];
		uintptr_t *slot = (uintptr_t *)((((uintptr_t)_end + 4095) & ~(uintptr_t)4095) - 16);

		slot[0] = 0;
		slot[1] = nu_small_frame_ra();
		on_coroutine(bss_stack, sizeof(bss_stack), slot, n = 104);
	} else if (!strcmp(c, "data")) {
		const char *pair[2] = { (const char *)(uintptr_t)argc, "a string in .rodata" };

		kept = nu_call(n = 105, pair);
	} else {
		return 2;
	}
	printf("ok %zu\n", n);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "abort"))
		abort();
	return kept ? 0 : 1;
}
