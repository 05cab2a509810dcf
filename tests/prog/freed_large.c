/* freed_large.c - freed blocks glibc put in its unsorted and large bins, for
 * --addr (tests/run-freed-large.sh): six 1,024-byte blocks and one of 2,049,
 * each between two live 32-byte ones so that glibc merges none, freed, then a
 * 64 KiB malloc that sorts the unsorted bin (the first chunk of each size in
 * a large bin has its fd_nextsize/bk_nextsize over the header's INFO and SIZE
 * or, with no pad before the header, over SIZE and DEPTH), then two more freed
 * that stay in the unsorted bin. Prints "ADDR SIZE" of each freed block, one
 * line, then waits for a line on stdin. */
#include <stdio.h>
#include <stdlib.h>

#define NF 9

int main(void)
{
	static const size_t sz[NF] = { 1024, 1024, 1024, 1024, 1024, 1024, 2049, 1024, 1200 };
	void *fre[NF], *sep[NF + 1], *big;
	char line[16];
	int i;

	sep[0] = malloc(32);
	for (i = 0; i < NF; i++) {
		fre[i] = malloc(sz[i]);
		sep[i + 1] = malloc(32);
		if (!fre[i] || !sep[i + 1])
			return 1;
	}
	for (i = 0; i < NF - 2; i++)
		free(fre[i]);
	big = malloc(64 << 10);   /* sorts the unsorted bin into the large bins */
	for (; i < NF; i++)
		free(fre[i]);
	for (i = 0; i < NF; i++)
		printf("%p %zu ", fre[i], sz[i]);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	free(big);
	for (i = 0; i <= NF; i++)
		free(sep[i]);
	return 0;
}
