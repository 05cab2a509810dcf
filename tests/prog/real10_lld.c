/* real10_lld.c - run-real10: a C program linked with lld under the exit
 * snapshot; 100 bytes kept in a global (still reachable), 37 dropped
 * (definitely lost). */
#include <stdio.h>
#include <stdlib.h>
void *keep;
int main(void)
{
	keep = malloc(100);
	void *volatile lost = malloc(37);
	lost = 0;
	printf("ok\n");
	return 0;
}
