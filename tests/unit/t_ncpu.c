/* t_ncpu.c - ncpu_usable() (common/ncpu.c), the default number of threads of
 * the scan, the reachability marking and the symbolizer: the CPUs of the
 * affinity mask, not every online CPU. Pinned to one CPU it says 1; pinned to
 * two (where there are two), 2; unpinned, the mask's count again.
 */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "ncpu.h"

int main(void)
{
	cpu_set_t all, one;
	CHECK("sched_getaffinity", sched_getaffinity(0, sizeof all, &all) == 0);
	int n = CPU_COUNT(&all);
	printf("# %d CPUs in the mask, %ld online\n", n, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK("unpinned: the mask's count", ncpu_usable() == (unsigned)n);
	int first = -1, second = -1;
	for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
		if (CPU_ISSET(c, &all)) {
			if (first < 0)
				first = c;
			else
				second = c;
		}
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	CHECK("pinned to one CPU", sched_setaffinity(0, sizeof one, &one) == 0);
	CHECK("pinned to one CPU: 1", ncpu_usable() == 1);
	if (second >= 0) {
		CPU_SET(second, &one);
		CHECK("pinned to two CPUs", sched_setaffinity(0, sizeof one, &one) == 0);
		CHECK("pinned to two CPUs: 2", ncpu_usable() == 2);
	}
	CHECK("unpinned again", sched_setaffinity(0, sizeof all, &all) == 0);
	CHECK("unpinned again: the mask's count", ncpu_usable() == (unsigned)n);
	return CHECK_DONE();
}
