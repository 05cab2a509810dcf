// hunt6b_exit.cc - the exit snapshot's lost report against memcheck for a C++
// program (tests/run-hunt6b-lost.sh): a global vector and a global holder freed
// by their destructors and a block freed by an atexit handler (none of them left
// at exit), a lost cycle of three 32-byte nodes (32 definitely + 64 indirectly
// lost), a 400-byte block held only by an interior pointer (possibly lost), 77
// bytes held by a global (still reachable) and 55 bytes dropped (definitely
// lost); libstdc++'s 72,704-byte emergency pool besides, which memcheck frees
// with __gnu_cxx::__freeres before it looks.
#include <cstdlib>
#include <vector>

struct node { node *next; long pad[3]; };

std::vector<int> gv(1000);
static void *atexit_blk;
static void cleanup() { free(atexit_blk); }
struct Holder { void *p; Holder() : p(malloc(777)) {} ~Holder() { free(p); } } gh;
void *g_kept;
char *g_interior;

int main()
{
	atexit_blk = malloc(333);
	atexit(cleanup);
	node *a = new node, *b = new node, *c = new node;
	a->next = b; b->next = c; c->next = a;
	a = b = c = nullptr;
	char *p = static_cast<char *>(malloc(400));
	g_interior = p + 100;
	p = nullptr;
	g_kept = malloc(77);
	void *volatile drop = malloc(55);
	drop = nullptr;
	(void)drop;
	return 0;
}
