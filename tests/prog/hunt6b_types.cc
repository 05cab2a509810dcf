// hunt6b_types.cc - the bin table's types column for C++ (tests/run-hunt6b-tables.sh):
// two structs named W of 40 bytes in namespaces a and b, a class in a nested
// namespace (ns::in::K, 28 bytes), a struct nested in a class (Top::Inner, 36) and
// one in an anonymous namespace (Hid, 52). One block of each size is allocated
// through a variable of the type (so that its DWARF is emitted); aborts for a core.
#include <cstdlib>

namespace a { struct W { long v[5]; }; }
namespace b { struct W { int v[10]; }; }
namespace ns { namespace in { class K { public: int x[7]; }; } }
struct Top { char c[24]; struct Inner { char d[36]; } inn; };
namespace { struct Hid { char h[52]; }; }

void *volatile keep[8];

int main()
{
	a::W *w1 = new a::W;
	b::W *w2 = new b::W;
	ns::in::K *k = new ns::in::K;
	Top::Inner *ti = new Top::Inner;
	Hid *h = new Hid;

	keep[0] = w1; keep[1] = w2; keep[2] = k; keep[3] = ti; keep[4] = h;
	abort();
}
