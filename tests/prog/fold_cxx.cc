// fold_cxx.cc - a C++ program for tests/run-folded.sh: operator new and new[]
// (allocator frames to strip) called from a member of a class template, whose
// name has '<', '>', ',' and spaces (folded text keeps them; SVG escapes them).
// main makes one Pool<Node, 3> (24 bytes on x86-64) and fill() makes 3 arrays of
// 4 Nodes (3 x 256 bytes); then "ready" and a wait for a line on stdin.
#include <unistd.h>

struct Node {
	long v[8];
};

namespace shapes {
template <typename T, int N> struct Pool {
	T *items[N];
	__attribute__((noinline)) void fill()
	{
		for (int i = 0; i < N; i++)
			items[i] = new T[4]; // MARK:fill
		__asm__ volatile("" ::: "memory");
	}
};
} // namespace shapes

int main()
{
	char c;
	auto *p = new shapes::Pool<Node, 3>; // MARK:main-new

	p->fill(); // MARK:main-fill
	if (write(1, "ready\n", 6) != 6)
		return 1;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	return 0;
}
