// hunt17_arr.cc - arrays from new[] of classes with virtual destructors, for
// tests/run-hunt17-review.sh: the Itanium ABI's array cookie is
// max(sizeof(size_t), alignof(T)) bytes with the element count in its last
// word, so an over-aligned class's array starts with padding:
//   LD[3]   a long double member: alignof 16, a 16-byte cookie
//   A32[2]  alignas(32): a 32-byte cookie
//   P[4]    alignof 8: the 8-byte cookie
// and only arrays of P, LD and A32 are made, so no row may read P, LD or A32
// alone (the types report listed the element class with 0 blocks). Prints
// "alignof LD A32" and exits (the exit snapshot).
#include <cstdio>

struct LD {
	virtual ~LD() {}
	long double x = 1;
};
struct alignas(32) A32 {
	virtual ~A32() {}
	int y = 2;
};
struct P {
	virtual ~P() {}
	long z = 3;
};

void *volatile keep[4];

int main()
{
	keep[0] = new LD[3];
	keep[1] = new A32[2];
	keep[2] = new P[4];
	std::printf("alignof %zu %zu\n", alignof(LD), alignof(A32));
	return 0;
}
