/* hunt6_ctorlib.cc - a shared library that allocates from its own static
 * initializers: a C++ global object's constructor and a function marked
 * __attribute__((constructor)), which starts four threads that allocate
 * too. ld.so runs them before libheapann's own
 * constructor (the program needs this library; the preload comes after it in
 * the initialization order). Built by tests/run-hunt6-init.sh. */
#include <pthread.h>
#include <cstdlib>

void *volatile hunt6_lib_keep[2];
void *volatile hunt6_thread_keep[4];

/* Started by the constructor: allocates and frees in a loop while the other
 * three do, keeps one block of 4100 + its number. */
extern "C" __attribute__((noinline)) void *hunt6_lib_thread(void *arg)
{
	long i = (long)arg;

	for (int k = 0; k < 2000; k++)
		free(malloc(16 + k % 64));
	hunt6_thread_keep[i] = malloc(4100 + i);          /* MARK:thread 4100 */
	return NULL;
}

struct Hunt6Global {
	Hunt6Global() { hunt6_lib_keep[0] = malloc(4444); }   /* MARK:gctor 4444 */
};
static Hunt6Global hunt6_global;

extern "C" __attribute__((constructor, noinline)) void hunt6_lib_init(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, hunt6_lib_thread, (void *)i);
	hunt6_lib_keep[1] = malloc(3333);                     /* MARK:cctor 3333 */
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

/* The program's own use of the library (so that the linker keeps it). */
extern "C" void *hunt6_lib_block(unsigned i)
{
	return hunt6_lib_keep[i & 1];
}
