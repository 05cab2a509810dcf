/* ncpu.h - how many CPUs this process may run on: the one count the scan, the
 * reachability marking and the symbolizer's pool take as their default number
 * of threads.
 */
#ifndef NCPU_H
#define NCPU_H

/* The CPUs in this process's affinity mask (sched_getaffinity: what taskset
 * or a container's cpuset leaves it), else the online CPUs; at least 1. */
unsigned ncpu_usable(void);

#endif
