// hunt15_pexit.cc - std::thread workers while main ends with pthread_exit,
// for tests/run-hunt15.sh: main's stack is then a finished thread's. Each
// worker keeps a block in a global (still reachable) and drops one
// (definitely lost); main leaves a block whose only pointer is in its own
// dead frames (definitely lost under memcheck) and one in a global. The last
// worker ends the process with exit(0) once main has called pthread_exit
// (with "abort": abort(), a kernel core).
// Prints "site NAME SIZE" for each block.
#include <pthread.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <thread>
#include <vector>

void *kept[4];        // not static: the compiler keeps the stores
void *main_kept;
static pthread_barrier_t go;

__attribute__((noinline)) static void *mk(size_t n)
{
	void *p = malloc(n);              // MARK:mk
	memset(p, 0x5a, n);
	return p;
}

__attribute__((noinline)) static void scribble(void *p)
{
	void *volatile slot[64];

	for (int i = 0; i < 64; i++)
		slot[i] = p;
	__asm__ volatile("" ::"r"(slot) : "memory");
}

static bool do_abort;

static void worker(int i)
{
	kept[i] = new char[400 + i];      // MARK:new
	scribble(mk(500 + i));            // MARK:drop
	if (i == 3) {
		pthread_barrier_wait(&go);   // main is in pthread_exit by then, or about to be
		usleep(200000);
		if (do_abort)
			abort();
		exit(0);
	}
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	do_abort = argc > 1 && !strcmp(argv[1], "abort");
	pthread_barrier_init(&go, nullptr, 2);
	main_kept = mk(600);              // MARK:mainkept
	scribble(mk(700));                // MARK:maindead
	for (int i = 0; i < 4; i++) {
		std::thread(worker, i).detach();
		printf("site new %d\nsite drop %d\n", 400 + i, 500 + i);
	}
	printf("site mainkept 600\nsite maindead 700\n");
	fflush(stdout);
	pthread_barrier_wait(&go);
	pthread_exit(nullptr);
}
