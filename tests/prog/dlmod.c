/* dlmod.c LIB MODE [OTHER] - dlopen LIB (tests/prog/dlmod_lib.c, which brings
 * tests/prog/dlmod_dep.c), keep the 321-byte block its dm_make returns in a
 * global, so that 1,321 + 555 bytes are lost, print the lines of the calls
 * ("lines ..." from the library, then "main LINE"), dlclose it, with OTHER
 * dlopen another library (mapped where LIB was, tests/prog/real11_dlib2.c),
 * print "closed", then by MODE: exit; abort; wait (for a line on stdin, for
 * gcore, then exit); twice (LIB was dlopen'ed twice and closed once: it stays
 * loaded; then exit); again (LIB dlopen'ed and dlclose'd 3 times more, the
 * same library unloaded from the same place: libheapann keeps one record of
 * each; then exit); swap (OTHER dlopen'ed and dlclose'd after LIB, mapped
 * where LIB was, then LIB dlopen'ed and dlclose'd again: LIB's record is the
 * latest unload of that range; then exit). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile kept;

int main(int argc, char **argv)
{
	void *h;
	void *(*make)(size_t);
	void (*lines)(void);
	int mline;
	char buf[8];

	if (argc < 3)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h || (!strcmp(argv[2], "twice") && !dlopen(argv[1], RTLD_NOW))) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&make = dlsym(h, "dm_make");
	*(void **)&lines = dlsym(h, "dm_lines");
	if (!make || !lines)
		return 1;
	kept = make(321); mline = __LINE__;
	lines();
	printf("main %d\n", mline);
	if (dlclose(h) != 0)
		return 1;
	if (argc > 3 && !(h = dlopen(argv[3], RTLD_NOW))) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	if (!strcmp(argv[2], "swap") &&
	    (dlclose(h) != 0 || !(h = dlopen(argv[1], RTLD_NOW)) || dlclose(h) != 0))
		return 1;
	for (int i = 0; !strcmp(argv[2], "again") && i < 3; i++) {
		h = dlopen(argv[1], RTLD_NOW);
		if (!h || dlclose(h) != 0)
			return 1;
	}
	printf("closed\n");
	fflush(stdout);
	if (!strcmp(argv[2], "abort"))
		abort();
	if (!strcmp(argv[2], "wait") && !fgets(buf, sizeof(buf), stdin))
		return 1;
	return 0;
}
