/* mi_cxx.cc - C++ test program of tests/run-mi.sh: call sites in a namespace, a
 * class template, a function template, an operator, an anonymous namespace and
 * main, printed with the demangled name each must get ("RA ADDR LINE FN"). */
#include <unistd.h>

#include "mi_rec.h"

namespace ns {
struct V {
	long x;
};

__attribute__((noinline)) V operator+(const V &a, const V &b)
{
	V r = { a.x + b.x + mi_rec("ns::operator+(ns::V const&, ns::V const&)", __LINE__) };
	return r;
}

template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T grow(T n)
	{
		v += n + mi_rec("ns::Box<int>::grow(int)", __LINE__);
		return v;
	}
	__attribute__((noinline)) static T make(T n)
	{
		return n + mi_rec("ns::Box<int>::make(int)", __LINE__);
	}
};

template <typename T> __attribute__((noinline)) T twice(T n)
{
	return 2 * n + mi_rec("int ns::twice<int>(int)", __LINE__);
}

__attribute__((noinline)) int outer(int n)
{
	Box<int> b = { n };
	int r = mi_rec("ns::outer(int)", __LINE__);
	r += b.grow(n) + Box<int>::make(n) + twice(n);
	return r;
}
} // namespace ns

namespace {
__attribute__((noinline)) long hidden(long n)
{
	ns::V a = { n }, b = { 2 };
	return (a + b).x + mi_rec("(anonymous namespace)::hidden(long)", __LINE__);
}
} // namespace

int main(int argc, char **argv)
{
	int r = mi_rec("main", __LINE__);
	r += ns::outer(argc) + (int)hidden(argc);
	mi_rec_print();
	printf("ready %d\n", r > 0);
	fflush(stdout);
	for (;;)
		pause();
}
