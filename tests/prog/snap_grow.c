/* snap_grow.c - a program whose heap grows in known steps, for tests/run-snapshot.sh:
 * cores taken by HEAPANN_SNAPSHOT=signal between the steps must show exactly the
 * growth, and the program must not notice them.
 *
 *   step 1: grow_a 10 x 100 B                                   (kept)
 *   step 2: grow_a 20 x 100 B more, grow_b 5 x 1000 B           (kept)
 *           churn 50 x 64 B, all freed again                    (none live)
 *
 * After each step it prints "step N" and blocks in read() for a line on stdin:
 * the snapshot signal arrives there, and the read must go on (SA_RESTART), not
 * fail with EINTR. Then it asks waitpid(-1) for children (it has none: the
 * snapshot writers must stay invisible to it), frees everything, prints what it
 * saw (no addresses: the output is the same with and without snapshots) and exits
 * with status 5.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static char *g_a[30];
static char *g_b[5];
static int g_na, g_nb;

static NOINLINE void grow_a(int n)
{
	for (int i = 0; i < n; i++) {
		g_a[g_na] = malloc(100);
		memset(g_a[g_na++], 'a', 100);
	}
}

static NOINLINE void grow_b(int n)
{
	for (int i = 0; i < n; i++) {
		g_b[g_nb] = malloc(1000);
		memset(g_b[g_nb++], 'b', 1000);
	}
}

static NOINLINE long churn(int n)
{
	char *p[50];
	long sum = 0;

	for (int i = 0; i < n; i++) {
		p[i] = malloc(64);
		memset(p[i], i, 64);
	}
	for (int i = 0; i < n; i++) {
		sum += p[i][63];
		free(p[i]);
	}
	return sum;
}

/* Block in read() until a whole line arrives on stdin. Returns 0, or -1 (with the
 * errno printed, which would change the output) when the read failed. */
static int wait_line(void)
{
	char c;

	for (;;) {
		ssize_t r = read(0, &c, 1);

		if (r < 0) {
			printf("read failed: %s\n", strerror(errno));
			return -1;
		}
		if (r == 0 || c == '\n')
			return 0;
	}
}

int main(void)
{
	long sum;
	int bad = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	grow_a(10);
	printf("step 1\n");
	bad |= wait_line();
	grow_a(20);
	grow_b(5);
	sum = churn(50);
	printf("step 2\n");
	bad |= wait_line();
	errno = 0;
	printf("waitpid(-1): %s\n", waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD ?
	       "no children" : "a child");
	for (int i = 0; i < g_na; i++)
		free(g_a[i]);
	for (int i = 0; i < g_nb; i++)
		free(g_b[i]);
	printf("done: %d + %d blocks kept, churn sum %ld\n", g_na, g_nb, sum);
	return bad ? 1 : 5;
}
