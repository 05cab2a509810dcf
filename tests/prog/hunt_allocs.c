/* hunt_allocs.c - every allocation entry point a C program uses, each from a
 * function of its own at a line marked MARK:NAME, with sizes the test knows:
 * calloc, realloc (grow, shrink, from NULL, to 0), the aligned family,
 * reallocarray, strdup/strndup (libc's, whose frames must be stripped as the
 * allocator's), malloc(0) and blocks above the mmap threshold. Built by
 * tests/run-hunt-allocs.sh with gcc -O0 and with clang -O2
 * -fomit-frame-pointer (clang emits no .debug_aranges). Prints "ready", waits
 * for a line on stdin (the test's gcore), then exits without freeing; built
 * with -DHUNT_ABORT it aborts instead, for a core (tests/run-hunt-qemu.sh). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINL __attribute__((noinline))
void *volatile keep[32];
static int nk;

NOINL void a_calloc(void) { keep[nk++] = calloc(10, 30); }                        /* MARK:calloc 300 */
NOINL void a_grow(void) { void *p = malloc(100); keep[nk++] = realloc(p, 5000); } /* MARK:grow 5000 */
NOINL void a_shrink(void) { void *p = malloc(4000); keep[nk++] = realloc(p, 40); } /* MARK:shrink 40 */
NOINL void a_rnull(void) { keep[nk++] = realloc(NULL, 77); }                      /* MARK:rnull 77 */
NOINL void a_rzero(void) { void *p = malloc(50); p = realloc(p, 0); if (p) keep[nk++] = p; }
NOINL void a_pm(void) { void *p = NULL; if (!posix_memalign(&p, 256, 1000)) keep[nk++] = p; } /* MARK:pm 1000 */
NOINL void a_aa(void) { keep[nk++] = aligned_alloc(64, 640); }                    /* MARK:aa 640 */
NOINL void a_ma(void) { keep[nk++] = memalign(4096, 123); }                       /* MARK:ma 123 */
NOINL void a_va(void) { keep[nk++] = valloc(333); }                               /* MARK:va 333 */
NOINL void a_ra(void) { keep[nk++] = reallocarray(NULL, 7, 11); }                 /* MARK:ra 77 */
NOINL void a_sd(const char *s) { keep[nk++] = strdup(s); }                        /* MARK:sd 12 */
NOINL void a_snd(const char *s) { keep[nk++] = strndup(s, 5); }                   /* MARK:snd 6 */
NOINL void a_zero(void) { keep[nk++] = malloc(0); }                               /* MARK:zero 0 */
NOINL void a_big(void) { keep[nk++] = malloc(5u << 20); }                         /* MARK:big 5242880 */
NOINL void a_bigc(void) { keep[nk++] = calloc(1, 3u << 20); }                     /* MARK:bigc 3145728 */
NOINL void a_bigr(void) { void *p = malloc(200000); keep[nk++] = realloc(p, 2u << 20); } /* MARK:bigr 2097152 */

int main(void)
{
	char line[16];

	setvbuf(stdout, NULL, _IONBF, 0);   /* no stdio buffer among the blocks */
	setvbuf(stdin, NULL, _IONBF, 0);
	a_calloc(); a_grow(); a_shrink(); a_rnull(); a_rzero(); a_pm(); a_aa(); a_ma();
	a_va(); a_ra(); a_sd("hello world"); a_snd("hello world"); a_zero();
	a_big(); a_bigc(); a_bigr();
	for (int i = 0; i < nk; i++)
		if (!keep[i])
			return 1;
	printf("ready\n");
#ifdef HUNT_ABORT
	abort();   /* tests/run-hunt-qemu.sh: the target's core, from qemu-user */
#endif
	if (!fgets(line, sizeof line, stdin))
		return 0;
	return 0;
}
