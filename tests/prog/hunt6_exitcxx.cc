// hunt6_exitcxx.cc - a C++ program's heap at exit, as memcheck sees it: a
// global std::string freed by its destructor, a vector kept through a global
// (24 + 40 bytes still reachable), an array lost (100 bytes definitely lost),
// and libstdc++'s own emergency pool, which memcheck frees before it looks.
// Built by tests/run-hunt6-exit.sh.
#include <string>
#include <vector>

std::string g_str(100, 'x');
std::vector<int> *g_keep;
int *volatile g_lost;

int main()
{
	g_keep = new std::vector<int>(10);      // MARK:keep 24 + 40
	g_lost = new int[25];                    // MARK:lost 100
	g_lost = nullptr;
	return g_str.size() != 100;
}
