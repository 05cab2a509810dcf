// sym_cxx.cc - C++ test program for the libdw symbolizer (tests/run-symdw.sh):
// a member function forced inline into its caller, so the recorded return
// address lies in inlined code: the symbolizer must give the inline chain
// (ns::Widget::poke(int) at MARK_INL, then run_widget(int) at MARK_CALL) with
// demangled names, and ns::Widget::plain(long) for an out-of-line member;
// functions in anonymous namespaces, out of line (MARK_HID) and inlined
// (MARK_QUIET, called at MARK_QCALL).
#include <cstdio>
#include <cstring>
#include <unistd.h>

static void *seen[4];

__attribute__((noinline)) static void record(int i)
{
	seen[i] = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

namespace ns {
struct Widget {
	int v;
	__attribute__((always_inline)) inline int poke(int x)
	{
		v += x;
		record(0); // MARK_INL
		__asm__ volatile("" ::: "memory");
		return v;
	}
	__attribute__((noinline)) long plain(long y)
	{
		record(1); // MARK_PLAIN
		__asm__ volatile("" ::: "memory");
		return v + y;
	}
};
} // namespace ns

// Internal linkage: GCC gives these no DW_AT_linkage_name, so the name must be
// qualified from the DIE's namespaces (and the parameters taken from the
// symbol table for an out-of-line function).
namespace {
__attribute__((noinline)) long hidden(long y)
{
	record(2); // MARK_HID
	__asm__ volatile("" ::: "memory");
	return y + 1;
}
} // namespace

namespace ns {
namespace {
__attribute__((always_inline)) inline int quiet(int x)
{
	record(3); // MARK_QUIET
	__asm__ volatile("" ::: "memory");
	return x * 2;
}
} // namespace
} // namespace ns

__attribute__((noinline)) int run_widget(int x)
{
	ns::Widget w{x};
	int r = w.poke(x + 1); // MARK_CALL
	__asm__ volatile("" ::: "memory");
	r += ns::quiet(x); // MARK_QCALL
	__asm__ volatile("" ::: "memory");
	return r + (int)w.plain(2) + (int)hidden(x);
}

int main(int argc, char **argv)
{
	int r = run_widget(argc);
	std::printf("poke %p\n", seen[0]);
	std::printf("plain %p\n", seen[1]);
	std::printf("hidden %p\n", seen[2]);
	std::printf("quiet %p\n", seen[3]);
	std::printf("ready %d\n", r);
	std::fflush(stdout);
	if (argc > 1 && std::strcmp(argv[1], "exit") == 0)
		return 0;
	for (;;)
		pause();
}
