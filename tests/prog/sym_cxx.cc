// sym_cxx.cc - C++ test program for the libdw symbolizer (tests/run-symdw.sh):
// a member function forced inline into its caller, so the recorded return
// address lies in inlined code: the symbolizer must give the inline chain
// (ns::Widget::poke(int) at MARK_INL, then run_widget(int) at MARK_CALL) with
// demangled names, and ns::Widget::plain(long) for an out-of-line member.
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

__attribute__((noinline)) int run_widget(int x)
{
	ns::Widget w{x};
	int r = w.poke(x + 1); // MARK_CALL
	__asm__ volatile("" ::: "memory");
	return r + (int)w.plain(2);
}

int main(int argc, char **argv)
{
	int r = run_widget(argc);
	std::printf("poke %p\n", seen[0]);
	std::printf("plain %p\n", seen[1]);
	std::printf("ready %d\n", r);
	std::fflush(stdout);
	if (argc > 1 && std::strcmp(argv[1], "exit") == 0)
		return 0;
	for (;;)
		pause();
}
