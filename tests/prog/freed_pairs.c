/* freed_pairs.c - 20,000 pairs of adjacent 1,024-byte blocks, each pair
 * between live 32-byte ones, both freed: glibc merges each pair into one
 * chunk, and the first block's guard lies under the second's old chunk header
 * (tests/run-freed-large.sh). Prints the first block of the last 20 pairs (the
 * scan proves freed sizes in address order, within one budget), then waits
 * for a line on stdin. */
#include <stdio.h>
#include <stdlib.h>

#define N 20000

static void *a[N], *b[N], *c[N];

int main(void)
{
	char line[16];
	int i;

	for (i = 0; i < N; i++) {
		a[i] = malloc(1024);
		b[i] = malloc(1024);
		c[i] = malloc(32);
		if (!a[i] || !b[i] || !c[i])
			return 1;
	}
	for (i = 0; i < N; i++) {
		free(a[i]);
		free(b[i]);
	}
	for (i = N - 20; i < N; i++)
		printf("%p ", a[i]);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	for (i = 0; i < N; i++)
		free(c[i]);
	return 0;
}
