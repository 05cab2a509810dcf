/* hunt16f_churn.c - 9,000 allocations in three waves, for run-hunt16-formats.sh:
 * enough that libheapann's timeline is halved and sampled (the JSON, HTML and
 * massif timelines must still agree, with the peak in them), then an abort
 * with half of the last wave live (a kernel core). */
#include <stdlib.h>

int main(void)
{
	static void *p[3000];

	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 3000; i++)
			p[i] = malloc(17 + (i * 7 + r) % 301);
		for (int i = 0; i < 3000; i += (r == 2 ? 2 : 1))
			free(p[i]);
	}
	abort();
}
