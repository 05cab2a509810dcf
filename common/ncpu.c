/* ncpu.c - the number of CPUs this process may run on (ncpu.h). */
#include <sched.h>
#include <unistd.h>

#include "ncpu.h"

unsigned ncpu_usable(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int setsize = conf > CPU_SETSIZE ? (int)conf : CPU_SETSIZE;
	cpu_set_t *set = CPU_ALLOC((size_t)setsize);
	if (set) {
		size_t bytes = CPU_ALLOC_SIZE((size_t)setsize);
		CPU_ZERO_S(bytes, set);
		int n = sched_getaffinity(0, bytes, set) == 0 ? CPU_COUNT_S(bytes, set) : 0;
		CPU_FREE(set);
		if (n > 0)
			return (unsigned)n;
	}
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (unsigned)online : 1;
}
