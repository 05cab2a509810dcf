// vtypes.cc - live objects of known C++ dynamic types, for tests/run-types.sh:
//   Circle      100 objects (new), a class with virtual functions
//   Square       50 objects (new)
//   ns::Tri<int> 20 objects (new): a template in a namespace
//   Both         10 objects (new): two polymorphic bases (its primary vtable)
//   Circle[]      2 arrays of 3 (new[]: a count, then the elements)
//   Circle        7 more inside std::make_shared blocks: those read as
//                 std::_Sp_counted_ptr_inplace<Circle, ...>, the control block
//                 with the object in it
//   Plain        30 objects of a class without virtual functions: untyped
//   Holder       12 structs whose first member is a Square: they read as Square
// With an argument it aborts (a kernel core).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
	long id = 0;
};
struct Circle : Shape {
	double r = 1;
	double area() const override { return 3.14 * r * r; }
};
struct Square : Shape {
	double s = 2;
	double area() const override { return s * s; }
};
namespace ns {
template <class T> struct Tri : Shape {
	T a = 1, b = 2;
	double area() const override { return a * b / 2.0; }
};
}
struct Named {
	virtual ~Named() {}
	virtual const char *name() const { return "n"; }
};
struct Both : Shape, Named {
	double area() const override { return 0; }
};
struct Plain {
	long a, b, c;
};
struct Holder {
	Square sq;
	long extra;
};

std::vector<void *> keep;
std::vector<std::shared_ptr<Circle>> shared;

int main(int argc, char **argv)
{
	(void)argv;
	keep.reserve(1000);
	shared.reserve(16);
	for (int i = 0; i < 100; i++)
		keep.push_back(new Circle);
	for (int i = 0; i < 50; i++)
		keep.push_back(new Square);
	for (int i = 0; i < 20; i++)
		keep.push_back(new ns::Tri<int>);
	for (int i = 0; i < 10; i++)
		keep.push_back(new Both);
	for (int i = 0; i < 2; i++)
		keep.push_back(new Circle[3]);
	for (int i = 0; i < 7; i++)
		shared.push_back(std::make_shared<Circle>());
	for (int i = 0; i < 30; i++)
		keep.push_back(new Plain());
	for (int i = 0; i < 12; i++)
		keep.push_back(new Holder());
	std::printf("sizes %zu %zu %zu %zu %zu %zu\n", sizeof(Circle), sizeof(Square),
		    sizeof(ns::Tri<int>), sizeof(Both), sizeof(Plain), sizeof(Holder));
	std::fflush(stdout);
	if (argc > 1)
		abort();
	return 0;
}
