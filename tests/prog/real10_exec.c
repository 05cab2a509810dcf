/* real10_exec.c [unlink] - run-real10: a leaking program built as DIR/sqlite3
 * (a name also on PATH), exec'd by a script: 4,321 bytes lost under leaky_from_dir. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void *leaky_from_dir(void) { return malloc(4321); }
#include <string.h>
#include <unistd.h>

/* "unlink": removes its own file first (its core then names "FILE (deleted)") */
int main(int argc, char **argv)
{
	void *volatile p = leaky_from_dir();
	char self[4096];
	ssize_t n;

	p = 0;
	if (argc > 1 && !strcmp(argv[1], "unlink") && (n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = 0;
		if (unlink(self) < 0)
			return 2;
	}
	printf("leaked\n");
	return 0;
}
