/* dw_pool.c - a small thread pool for the libdw symbolizer: run n independent
 * jobs on up to k threads, the caller's among them. Jobs are taken in index
 * order from an atomic counter and write only their own results, so what they
 * produce does not depend on how many threads ran them or in what order.
 * The pipe (dw_pipe_*) is the same pool fed while it runs: the caller
 * publishes jobs as it learns what they need, the helpers run them, and the
 * caller runs unclaimed ones while it waits for the one it needs next.
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

/* A pool whose jobs are handed out as the caller makes them known (see
 * dw_pipe_start in dw_priv.h). Jobs are claimed in index order under mu. */
struct dw_pipe {
	void (*fn)(void *arg, size_t i);
	void *arg;
	size_t max;                /* room in done[] */
	size_t published;          /* jobs [0, published) may run */
	size_t next;               /* the lowest job not claimed yet */
	int closing;               /* no more jobs: helpers leave when none is left */
	unsigned char *done;       /* per job: it has run */
	pthread_mutex_t mu;
	pthread_cond_t more;       /* helpers: a job was published, or closing */
	pthread_cond_t ran;        /* the caller: a job has run */
	unsigned nth;
	pthread_t th[DW_POOL_MAX];
};

/* Run one published job not claimed yet, if any, mu held (released while it
 * runs). Returns 1 when one ran, else 0. */
static int dw_pipe_one(struct dw_pipe *p)
{
	if (p->next >= p->published)
		return 0;
	size_t i = p->next++;
	pthread_mutex_unlock(&p->mu);
	p->fn(p->arg, i);
	pthread_mutex_lock(&p->mu);
	p->done[i] = 1;
	pthread_cond_broadcast(&p->ran);
	return 1;
}

static void *dw_pipe_main(void *arg)
{
	struct dw_pipe *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (dw_pipe_one(p))
			continue;
		if (p->closing)
			break;
		pthread_cond_wait(&p->more, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct dw_pipe *dw_pipe_start(unsigned nthreads, size_t max, void (*fn)(void *arg, size_t i), void *arg)
{
	struct dw_pipe *p = calloc(1, sizeof *p);
	if (!p || !(p->done = calloc(max ? max : 1, 1))) {
		free(p);
		return NULL;
	}
	p->fn = fn;
	p->arg = arg;
	p->max = max;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->done);
		free(p);
		return NULL;
	}
	pthread_cond_init(&p->more, NULL);
	pthread_cond_init(&p->ran, NULL);
	if (nthreads > DW_POOL_MAX)
		nthreads = DW_POOL_MAX;
	/* the caller is one of the threads: it runs jobs while it waits */
	while (p->nth + 1 < nthreads && pthread_create(&p->th[p->nth], NULL, dw_pipe_main, p) == 0)
		p->nth++;
	return p;
}

void dw_pipe_publish(struct dw_pipe *p, size_t n)
{
	pthread_mutex_lock(&p->mu);
	if (n > p->max)
		n = p->max;
	if (n > p->published) {
		p->published = n;
		pthread_cond_broadcast(&p->more);
	}
	pthread_mutex_unlock(&p->mu);
}

void dw_pipe_wait(struct dw_pipe *p, size_t i)
{
	pthread_mutex_lock(&p->mu);
	while (i < p->published && !p->done[i])
		if (!dw_pipe_one(p))
			pthread_cond_wait(&p->ran, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void dw_pipe_end(struct dw_pipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	while (dw_pipe_one(p))
		;
	p->closing = 1;
	pthread_cond_broadcast(&p->more);
	pthread_mutex_unlock(&p->mu);
	for (unsigned t = 0; t < p->nth; t++)
		pthread_join(p->th[t], NULL);
	pthread_cond_destroy(&p->more);
	pthread_cond_destroy(&p->ran);
	pthread_mutex_destroy(&p->mu);
	free(p->done);
	free(p);
}
