/* annot_stress.c - libheapann under load, for tests/run-stress.sh (issue 14):
 * 8 threads for SECS seconds (argument, default 10) allocate with every entry
 * point (malloc, calloc, posix_memalign, aligned_alloc, memalign, valloc), free,
 * hand blocks to another thread to free, reallocate (grow and shrink, aligned
 * blocks too), and now and then fork() a child that allocates and exits.
 * Then every thread parks on a barrier (so the core shows 9 threads), the main
 * thread frees what is still in transit, and prints the live set in one write:
 * one "ADDR SIZE" line per block the program holds, "forks N ops N", and a last
 * line "total N BYTES"; then it waits for a line on stdin (for gcore) and ends.
 * alarm() bounds every process: a deadlock ends it (SIGALRM) instead of the test
 * run. No stdio: it would allocate.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 8
#define SLOTS 256
#define MAILBOX 64

struct slot {
	unsigned char *p;
	size_t size;
};

struct worker {
	pthread_t tid;
	unsigned id;
	uint64_t rng;
	struct slot slot[SLOTS];
	pthread_mutex_t lock;        /* guards box */
	unsigned char *box[MAILBOX]; /* blocks other threads handed over to be freed */
	unsigned nbox;
	unsigned long ops, forks;
};

static struct worker w[NTHREADS];
static pthread_barrier_t parked, release;
static volatile int stop;
static char out[NTHREADS * SLOTS * 40 + 256];

static void die(const char *msg)
{
	(void)!write(2, msg, strlen(msg));
	_exit(1);
}

static uint64_t next(struct worker *me)
{
	me->rng ^= me->rng << 13;
	me->rng ^= me->rng >> 7;
	me->rng ^= me->rng << 17;
	return me->rng;
}

/* A new block of size bytes from one of the entry points; checks its alignment. */
static unsigned char *make(struct worker *me, size_t size)
{
	void *p = NULL;
	size_t align = 16;

	switch (next(me) % 6) {
	case 0: p = malloc(size); break;
	case 1: p = calloc(1, size); break;
	case 2: align = (size_t)8 << (next(me) % 6); if (posix_memalign(&p, align, size)) p = NULL; break;
	case 3: align = (size_t)16 << (next(me) % 5); p = aligned_alloc(align, size); break;
	case 4: align = (size_t)32 << (next(me) % 4); p = memalign(align, size); break;
	default: align = 4096; p = valloc(size); break;
	}
	if (!p)
		die("annot_stress: allocation failed\n");
	if ((uintptr_t)p % align)
		die("annot_stress: allocation not aligned\n");
	memset(p, (int)(size & 0xff), size);
	return p;
}

static void check_fill(const struct slot *s)
{
	for (size_t i = 0; i < s->size; i += 61)
		if (s->p[i] != (unsigned char)(s->size & 0xff))
			die("annot_stress: a block's data changed\n");
}

static void drain(struct worker *me)
{
	pthread_mutex_lock(&me->lock);
	while (me->nbox)
		free(me->box[--me->nbox]);
	pthread_mutex_unlock(&me->lock);
}

static void do_fork(struct worker *me)
{
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (pid == 0) {
		/* the child of a multi-threaded process: libheapann's locks must be usable */
		alarm(10);
		void *p = malloc(100 + me->id), *q;
		if (!p)
			_exit(2);
		q = realloc(p, 5000);
		if (!q)
			_exit(2);
		free(q);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("annot_stress: a forked child failed or hung\n");
	me->forks++;
}

static void *run(void *arg)
{
	struct worker *me = arg;

	while (!stop) {
		struct slot *s = &me->slot[next(me) % SLOTS];
		unsigned op = (unsigned)(next(me) % 100);

		me->ops++;
		if (op < 2 && me->forks < 40) {
			do_fork(me);
		} else if (!s->p) {
			s->size = 1 + next(me) % 4096;
			s->p = make(me, s->size);
		} else if (op < 40) {
			/* realloc: shrink, grow a little (often in place), or grow far */
			size_t n = op < 15 ? 1 + s->size / 2 : op < 30 ? s->size + 8 : s->size * 3 + 100;
			unsigned char *q;

			check_fill(s);
			q = realloc(s->p, n);
			if (!q)
				die("annot_stress: realloc failed\n");
			for (size_t i = 0; i < (n < s->size ? n : s->size); i += 61)
				if (q[i] != (unsigned char)(s->size & 0xff))
					die("annot_stress: realloc lost data\n");
			memset(q, (int)(n & 0xff), n);
			s->p = q;
			s->size = n > 40000 ? s->size : n;
			if (n > 40000) {   /* keep sizes bounded: back to the old size */
				q = realloc(s->p, s->size);
				if (!q)
					die("annot_stress: realloc failed\n");
				memset(q, (int)(s->size & 0xff), s->size);
				s->p = q;
			}
		} else if (op < 70) {
			check_fill(s);
			free(s->p);
			s->p = NULL;
		} else {
			/* hand it to another thread, which frees it */
			struct worker *to = &w[(me->id + 1 + next(me) % (NTHREADS - 1)) % NTHREADS];

			check_fill(s);
			pthread_mutex_lock(&to->lock);
			if (to->nbox < MAILBOX) {
				to->box[to->nbox++] = s->p;
				s->p = NULL;
			}
			pthread_mutex_unlock(&to->lock);
		}
		if ((me->ops & 63) == 0)
			drain(me);
	}
	pthread_barrier_wait(&parked);
	pthread_barrier_wait(&release);
	return NULL;
}

static char *put_num(char *o, uint64_t v, int hex)
{
	char tmp[24];
	int n = 0;

	if (hex) {
		*o++ = '0';
		*o++ = 'x';
	}
	do {
		tmp[n++] = "0123456789abcdef"[hex ? v & 15 : v % 10];
		v = hex ? v >> 4 : v / 10;
	} while (v);
	while (n)
		*o++ = tmp[--n];
	return o;
}

int main(int argc, char **argv)
{
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 10;
	struct timespec t = { (time_t)secs, 0 };
	uint64_t nlive = 0, bytes = 0, forks = 0, ops = 0;
	char *o = out, line[8];

	alarm(secs + 120);
	pthread_barrier_init(&parked, NULL, NTHREADS + 1);
	pthread_barrier_init(&release, NULL, NTHREADS + 1);
	for (unsigned i = 0; i < NTHREADS; i++) {
		w[i].id = i;
		w[i].rng = 0x9E3779B97F4A7C15ull * (i + 1);
		pthread_mutex_init(&w[i].lock, NULL);
		if (pthread_create(&w[i].tid, NULL, run, &w[i]))
			die("annot_stress: pthread_create failed\n");
	}
	nanosleep(&t, NULL);
	stop = 1;
	pthread_barrier_wait(&parked);
	for (unsigned i = 0; i < NTHREADS; i++)
		drain(&w[i]);
	for (unsigned i = 0; i < NTHREADS; i++) {
		forks += w[i].forks;
		ops += w[i].ops;
		for (unsigned k = 0; k < SLOTS; k++) {
			if (!w[i].slot[k].p)
				continue;
			o = put_num(o, (uintptr_t)w[i].slot[k].p, 1);
			*o++ = ' ';
			o = put_num(o, w[i].slot[k].size, 0);
			*o++ = '\n';
			nlive++;
			bytes += w[i].slot[k].size;
		}
	}
	memcpy(o, "forks ", 6);
	o = put_num(o + 6, forks, 0);
	memcpy(o, " ops ", 5);
	o = put_num(o + 5, ops, 0);
	memcpy(o, "\ntotal ", 7);
	o = put_num(o + 7, nlive, 0);
	*o++ = ' ';
	o = put_num(o, bytes, 0);
	*o++ = '\n';
	if (write(1, out, (size_t)(o - out)) != o - out)
		return 1;
	(void)!read(0, line, sizeof(line));
	pthread_barrier_wait(&release);
	for (unsigned i = 0; i < NTHREADS; i++)
		pthread_join(w[i].tid, NULL);
	return 0;
}
