/* real10_lldxx.cc - run-real10: a C++ program with libstdc++.a linked in
 * (exported by -rdynamic), linked with lld; a 201-byte string kept, an
 * exception thrown so that libstdc++'s emergency pool is in use. */
#include <cstdio>
#include <string>
#include <stdexcept>
std::string *keep;
int main()
{
	keep = new std::string(200, 'x');
	try { throw std::runtime_error("x"); } catch (const std::exception &e) { std::printf("caught %s\n", e.what()); }
	return 0;
}
