// known9_throw.cc - an exception object live in a core (tests/run-known9.sh):
// k9_thrower throws an Oops (64 bytes), and main waits inside the catch block,
// so the object libstdc++'s __cxa_allocate_exception got from malloc is live.
// Its stack must start at the throw site (the line marked THROW), the way an
// operator new block's starts at the new expression. Prints "ready", waits for
// a line on stdin, exits.
#include <cstdio>

struct Oops {
	int code;
	char pad[60];
};

__attribute__((noinline)) void k9_thrower(int n)
{
	if (n > 0)
		throw Oops{n, {}};   // THROW
}

int main()
{
	char line[16];

	try {
		k9_thrower(7);
	} catch (const Oops &e) {
		std::printf("ready %d\n", e.code);
		std::fflush(stdout);
		if (!std::fgets(line, sizeof(line), stdin))
			return 1;
	}
	return 0;
}
