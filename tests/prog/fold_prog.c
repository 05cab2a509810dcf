/* fold_prog.c - inlined frames and a damaged header for tests/run-folded.sh.
 * outer() makes 3 blocks of 64 bytes through middle() and grab(), both forced
 * inline (so each return address carries an inline chain of three functions);
 * main calls grab() at two lines for 2 blocks of 128 bytes: two stacks that fold
 * to one line without file:line and to two with it.
 * Usage: fold_prog wait     print "ready", wait for a line on stdin
 *        fold_prog damage   the same, after one more block of 500 bytes from
 *                           victim() whose header's last word (END) is overwritten
 *        fold_prog wide     the same as wait, after one more block of 4,000,000
 *                           bytes from big(): the other stacks become too narrow
 *                           to draw in an SVG 1200 pixels wide
 * No stdio: its buffers would be live blocks too. MARK comments give the lines. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[32];
static int nkeep;

static inline __attribute__((always_inline)) void grab(size_t n)
{
	keep[nkeep++] = malloc(n); /* MARK:grab */
}

static inline __attribute__((always_inline)) void middle(size_t n)
{
	grab(n); /* MARK:middle */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(void)
{
	for (int i = 0; i < 3; i++)
		middle(64); /* MARK:outer */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void victim(void)
{
	char *p = malloc(500); /* MARK:victim */

	keep[nkeep++] = p;
	__asm__ volatile("" : "+r"(p));   /* the compiler may not know p - 8 is out of bounds */
	memset(p - 8, 'A', 8);            /* the header's END word, just before the data */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void big(void)
{
	keep[nkeep++] = malloc(4000000); /* MARK:big */
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	char c;

	outer(); /* MARK:main-outer */
	grab(128); /* MARK:main-grab1 */
	grab(128); /* MARK:main-grab2 */
	if (argc > 1 && !strcmp(argv[1], "damage"))
		victim(); /* MARK:main-victim */
	if (argc > 1 && !strcmp(argv[1], "wide"))
		big(); /* MARK:main-big */
	if (write(1, "ready\n", 6) != 6)
		return 1;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	for (int i = 0; i < nkeep; i++)   /* not the victim (keep[5]): its header is damaged */
		if (i != 5 || strcmp(argv[1], "damage"))   /* keep[5] exists only with an argument */
			free(keep[i]);
	return 0;
}
