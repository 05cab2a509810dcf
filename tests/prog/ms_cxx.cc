// ms_cxx.cc - C++ allocations for tests/run-massif-out.sh: operator new of a class
// from a member function, new[] from a function in a namespace, and a template.
//   ms_cxx abort|wait   (as ms_prog.c: a kernel core, or wait for gcore)
// The MARK comments let the test find the line numbers. No iostream: its buffers
// would be live blocks too.
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace shop {

struct Item {
	long id;
	char name[40];      // sizeof(Item) == 48
};

class Store {
public:
	void add()
	{
		items_[n_++] = new Item(); // MARK:add
	}
	Item *items_[16];
	int n_ = 0;
};

__attribute__((noinline)) char *buffer(std::size_t n)
{
	return new char[n]; // MARK:buffer
}

template <typename T> __attribute__((noinline)) T *make_array(std::size_t n)
{
	return new T[n]; // MARK:make_array
}

} // namespace shop

static shop::Store *store;
static char *buf;
static double *arr;

int main(int argc, char **argv)
{
	store = new shop::Store(); // MARK:main-store
	for (int i = 0; i < 10; i++)
		store->add(); // MARK:main-add
	buf = shop::buffer(3000); // MARK:main-buffer
	arr = shop::make_array<double>(250); // MARK:main-array

	if (argc > 1 && !std::strcmp(argv[1], "abort"))
		std::abort();
	if (argc > 1 && !std::strcmp(argv[1], "wait")) {
		char c;

		if (write(1, "ready\n", 6) != 6)
			return 1;
		while (read(0, &c, 1) == 1 && c != '\n')
			;
	}
	return 0;
}
