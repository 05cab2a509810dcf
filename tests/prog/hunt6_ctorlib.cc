/* hunt6_ctorlib.cc - a shared library that allocates from its own static
 * initializers: a C++ global object's constructor and a function marked
 * __attribute__((constructor)). ld.so runs them before libheapann's own
 * constructor (the program needs this library; the preload comes after it in
 * the initialization order). Built by tests/run-hunt6-init.sh. */
#include <cstdlib>

void *volatile hunt6_lib_keep[2];

struct Hunt6Global {
	Hunt6Global() { hunt6_lib_keep[0] = malloc(4444); }   /* MARK:gctor 4444 */
};
static Hunt6Global hunt6_global;

extern "C" __attribute__((constructor, noinline)) void hunt6_lib_init(void)
{
	hunt6_lib_keep[1] = malloc(3333);                     /* MARK:cctor 3333 */
}

/* The program's own use of the library (so that the linker keeps it). */
extern "C" void *hunt6_lib_block(unsigned i)
{
	return hunt6_lib_keep[i & 1];
}
