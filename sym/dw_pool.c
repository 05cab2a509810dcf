/* dw_pool.c - a small thread pool for the libdw symbolizer: run n independent
 * jobs on up to k threads, the caller's among them. Jobs are taken in index
 * order from an atomic counter and write only their own results, so what they
 * produce does not depend on how many threads ran them or in what order.
 * Nothing here calls libdw or libdwfl (neither is thread-safe in 0.188).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "dw_priv.h"
#include "ncpu.h"

#define DW_POOL_MAX 64

struct dw_pool_job {
	void (*fn)(void *arg, size_t i);
	void *arg;
	size_t n;
	atomic_size_t next;
};

static void dw_pool_drain(struct dw_pool_job *j)
{
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
		if (i >= j->n)
			return;
		j->fn(j->arg, i);
	}
}

static void *dw_pool_main(void *p)
{
	dw_pool_drain(p);
	return NULL;
}

unsigned dw_pool_threads(unsigned requested, const char **bad_env)
{
	unsigned n = requested;
	if (bad_env)
		*bad_env = NULL;
	if (!n) {
		const char *e = getenv("MPROF_THREADS");
		if (e && *e) {
			char *end;
			errno = 0;
			/* strtoul would take "-1" as ULONG_MAX: digits only */
			unsigned long v = *e >= '0' && *e <= '9' ? strtoul(e, &end, 10) : 0;
			if (*e >= '0' && *e <= '9' && !*end && errno != ERANGE && v > 0)
				n = v > DW_POOL_MAX ? DW_POOL_MAX : (unsigned)v;
			else if (bad_env)
				*bad_env = e;
		}
	}
	if (!n)
		n = ncpu_usable();
	return n > DW_POOL_MAX ? DW_POOL_MAX : n;
}

void dw_pool_run(unsigned nthreads, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
	struct dw_pool_job j = { .fn = fn, .arg = arg, .n = n };
	pthread_t th[DW_POOL_MAX];
	unsigned started = 0;
	atomic_init(&j.next, 0);
	if (nthreads > DW_POOL_MAX)
		nthreads = DW_POOL_MAX;
	/* no more threads than jobs; the caller is one of them */
	while (started + 1 < nthreads && started + 1 < n &&
	       pthread_create(&th[started], NULL, dw_pool_main, &j) == 0)
		started++;
	dw_pool_drain(&j);
	for (unsigned t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}
