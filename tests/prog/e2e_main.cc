// e2e_main.cc - allocations through a shared library, C++ new with an inlined
// helper, and several threads; run-e2e.sh takes a core and checks each stack.
// Usage: e2e_main abort | wait.  MARK comments give the test its line numbers.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern "C" void *lib_alloc(size_t n);

namespace shapes {
struct Widget {
	long id;
	char name[32];
	explicit Widget(long i) : id(i) { memset(name, 0, sizeof(name)); }
};

// Inlined into make_widgets: the report shows it as an inlined frame.
static inline __attribute__((always_inline)) Widget *build(long i)
{
	return new Widget(i); // MARK:build
}

__attribute__((noinline)) void make_widgets(Widget **out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = build(i); // MARK:make_widgets
	__asm__ volatile("" ::: "memory");
}
} // namespace shapes

static void *volatile kept[64][16];
static volatile int ready_threads;

static void *thread_work(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < 10; i++)
		kept[t][i] = malloc(128); // MARK:thread
	__atomic_add_fetch(&ready_threads, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	static void *libblocks[5];
	static shapes::Widget *widgets[20];
	pthread_t th[4];
	char c;

	for (int i = 0; i < 5; i++)
		libblocks[i] = lib_alloc(300); // MARK:main-lib
	shapes::make_widgets(widgets, 20); // MARK:main-widgets
	for (long t = 0; t < 4; t++)
		pthread_create(&th[t], NULL, thread_work, (void *)t);
	while (__atomic_load_n(&ready_threads, __ATOMIC_SEQ_CST) < 4)
		usleep(1000);
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (write(1, "ready\n", 6) != 6)
		return 1;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	return 0;
}
