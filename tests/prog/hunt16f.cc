// hunt16f.cc - a heap whose every block is known, for run-hunt16-formats.sh:
// threads, C++ new/new[], a realloc chain, recursion through two functions,
// a stack deeper than HEAPANN_DEPTH, blocks above the mmap threshold, 0-byte
// blocks and leaks. It prints "ready" and waits for a line on stdin twice (a
// gcore at each moment, a diff pair), then frees some blocks and aborts with
// the rest live (a kernel core). The live set at each moment is printed as
// "live N BLOCKS BYTES" so the test compares the reports with it.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct Shape {
	virtual ~Shape() {}
	long w = 0;
};
struct Sq : Shape {
	long h = 0;
};
struct Arr {
	~Arr() {}
	char pad[24];
};

void *keep[256]; // global: the stores stay (a static written only could go)
static void *volatile sink;
static int nkeep;
static long live_blocks, live_bytes;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void note(void *p, long n)
{
	pthread_mutex_lock(&mu);
	keep[nkeep++] = p;
	live_blocks++;
	live_bytes += n;
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static void *leaf_alloc(size_t n)
{
	void *p = malloc(n);
	note(p, (long)n);
	return p;
}

// F and G call each other: a cycle in the call graph
__attribute__((noinline)) static void g_rec(int d);
__attribute__((noinline)) static void f_rec(int d)
{
	if (d == 0) {
		leaf_alloc(100);
		return;
	}
	g_rec(d - 1);
	asm volatile("");
}
__attribute__((noinline)) static void g_rec(int d)
{
	d ? f_rec(d - 1) : (void)leaf_alloc(60);
	asm volatile("");
}

// deep: more frames than HEAPANN_DEPTH (32)
__attribute__((noinline)) static void deep(int d)
{
	d ? deep(d - 1) : (void)leaf_alloc(40);
	asm volatile("");
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long k = (long)arg;
	for (int i = 0; i < 3; i++)
		leaf_alloc(200 + 8 * k);
	return NULL;
}

__attribute__((noinline)) static void realloc_chain(void)
{
	char *p = (char *)malloc(10);
	for (int i = 1; i <= 5; i++)
		p = (char *)realloc(p, 10 + 100 * i);
	note(p, 510);
}

__attribute__((noinline)) static void cxx_objects(void)
{
	for (int i = 0; i < 4; i++) {
		Shape *s = new Sq;
		note(s, sizeof(Sq));
	}
	Arr *a = new Arr[5];
	note((char *)a - sizeof(size_t), 5 * sizeof(Arr) + sizeof(size_t));
	int *v = new int[7];
	note(v, 7 * sizeof(int));
	Sq *sa = new Sq[3]; // a cookie (the count), then 3 objects: "Sq[]"
	note((char *)sa - sizeof(size_t), 3 * sizeof(Sq) + sizeof(size_t));
}

__attribute__((noinline)) static void big_blocks(void)
{
	leaf_alloc(300000);
	leaf_alloc(200000);
}

__attribute__((noinline)) static void zero_blocks(void)
{
	for (int i = 0; i < 3; i++)
		leaf_alloc(0);
}

__attribute__((noinline)) static void leaks(void)
{
	for (int i = 0; i < 5; i++)
		sink = malloc(48); // lost: overwritten next time
	sink = NULL;
	live_blocks += 5;
	live_bytes += 5 * 48;
}

static void *temps[6];
__attribute__((noinline)) static void temp(void)
{
	for (int i = 0; i < 6; i++)
		temps[i] = leaf_alloc(1000);
}

static void report(const char *what)
{
	printf("%s live %ld %ld\n", what, live_blocks, live_bytes);
	fflush(stdout);
}

static void wait_line(void)
{
	char buf[16];
	if (!fgets(buf, sizeof buf, stdin))
		exit(1);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pthread_t t[3];
	for (long k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, worker, (void *)k);
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	f_rec(3);
	f_rec(4);
	g_rec(5);
	deep(40);
	deep(40);
	realloc_chain();
	cxx_objects();
	zero_blocks();
	leaks();
	temp();
	report("ready");
	wait_line();
	// between the two moments: big blocks come, temp's blocks go
	big_blocks();
	for (int i = 0; i < 4; i++) {
		free(temps[i]);
		live_blocks--;
		live_bytes -= 1000;
	}
	report("ready2");
	wait_line();
	abort();
}
