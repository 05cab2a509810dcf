// corrupt_cxx.cc - a C++ global for --addr: its symbol is mangled in the ELF
// (_ZN3app5tableE) and must come out demangled as app::table. Prints its address,
// then aborts for a kernel core.
#include <cstdio>
#include <cstdlib>

namespace app {
long table[16];
}

int main()
{
	void *keep = std::malloc(10);   // one annotated block, so the core is a profile

	std::printf("table=%p\nkeep=%p\n", static_cast<void *>(app::table), keep);
	std::fflush(stdout);
	std::abort();
}
