/* t_dwpipe.c - the symbolizer's fed pool (dw_pipe_*, sym/dw_pool.c): jobs
 * published a few at a time while the helpers run; each job runs exactly
 * once; dw_pipe_wait(i) returns only after job i has run, with what it
 * wrote visible; waiting for a job not published returns at once; the jobs
 * left when dw_pipe_end is called all run; on 1 thread every job runs on the
 * caller, on 2 and 4 a job published with nobody waiting is run by a helper.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "dw_priv.h"

#define NJOBS 400

struct jobs {
	atomic_int runs[NJOBS];      /* times job i ran */
	unsigned long value[NJOBS];  /* what job i wrote (plain memory) */
	pthread_t by[NJOBS];         /* the thread that ran it */
	unsigned long input[NJOBS];  /* written by the caller before publishing */
};

static void job(void *arg, size_t i)
{
	struct jobs *j = arg;
	/* some jobs take a while, so that waits find them running */
	if (i % 7 == 0) {
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	j->value[i] = j->input[i] * 3 + 1;
	j->by[i] = pthread_self();
	atomic_fetch_add(&j->runs[i], 1);
}

static struct jobs J;

static void run(unsigned nthreads)
{
	char name[160];
	memset(&J, 0, sizeof J);
	struct dw_pipe *p = dw_pipe_start(nthreads, NJOBS, job, &J);
	snprintf(name, sizeof name, "%u threads: the pool starts", nthreads);
	CHECK(name, p != NULL);
	if (!p)
		return;
	/* a job not published yet: no wait, and it has not run */
	dw_pipe_wait(p, 5);
	snprintf(name, sizeof name, "%u threads: waiting for an unpublished job returns, the job not run", nthreads);
	CHECK(name, atomic_load(&J.runs[5]) == 0);
	int seen_ok = 1;
	size_t published = 0;
	/* publish in steps of 1 to 9, waiting now and then for a job a few back */
	for (size_t step = 1; published < 300; step = step % 9 + 1) {
		for (size_t k = published; k < published + step && k < NJOBS; k++)
			J.input[k] = k + 1000;
		published = published + step > 300 ? 300 : published + step;
		dw_pipe_publish(p, published);
		size_t w = published > 4 ? published - 4 : 0;
		dw_pipe_wait(p, w);
		if (J.value[w] != (w + 1000) * 3 + 1 || atomic_load(&J.runs[w]) != 1)
			seen_ok = 0;
	}
	snprintf(name, sizeof name, "%u threads: after each wait the job had run once, its result visible", nthreads);
	CHECK(name, seen_ok);
	/* publishing fewer than before changes nothing */
	dw_pipe_publish(p, 10);
	for (size_t k = 300; k < NJOBS; k++)
		J.input[k] = k + 1000;
	dw_pipe_publish(p, NJOBS);
	/* with helpers, the caller does not wait: the jobs still run (up to 5 s) */
	for (int t = 0; nthreads > 1 && t < 5000 && atomic_load(&J.runs[NJOBS - 1]) == 0; t++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	dw_pipe_wait(p, NJOBS - 1);
	snprintf(name, sizeof name, "%u threads: the last job waited for has run", nthreads);
	CHECK(name, atomic_load(&J.runs[NJOBS - 1]) == 1 && J.value[NJOBS - 1] == (NJOBS - 1 + 1000) * 3 + 1);
	pthread_t self = pthread_self();
	dw_pipe_end(p);
	int once = 1, right = 1;
	size_t on_caller = 0;
	for (size_t k = 0; k < NJOBS; k++) {
		once &= atomic_load(&J.runs[k]) == 1;
		right &= J.value[k] == (k + 1000) * 3 + 1;
		on_caller += pthread_equal(J.by[k], self) != 0;
	}
	snprintf(name, sizeof name, "%u threads: all %d jobs ran exactly once, with the right result", nthreads, NJOBS);
	CHECK(name, once && right);
	if (nthreads == 1) {
		snprintf(name, sizeof name, "1 thread: every job ran on the caller (%zu)", on_caller);
		CHECK(name, on_caller == NJOBS);
	} else {
		snprintf(name, sizeof name, "%u threads: a helper ran the last job, nobody waiting (%zu of %d on the caller)",
			 nthreads, on_caller, NJOBS);
		CHECK(name, !pthread_equal(J.by[NJOBS - 1], self));
	}
}

int main(void)
{
	run(1);
	run(2);
	run(4);
	/* nothing published: ending at once stops the helpers */
	memset(&J, 0, sizeof J);
	struct dw_pipe *p = dw_pipe_start(3, 4, job, &J);
	dw_pipe_end(p);
	CHECK("3 threads, nothing published: dw_pipe_end returns, no job ran", p && atomic_load(&J.runs[0]) == 0);
	dw_pipe_end(NULL);
	CHECK("dw_pipe_end(NULL) does nothing", 1);
	return CHECK_DONE();
}
