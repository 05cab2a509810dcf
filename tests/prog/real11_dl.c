/* real11_dl.c LIB [abort | OTHER] - dlopen LIB (tests/prog/real11_dlib.c),
 * keep the 321-byte block its r11_make returns in a global (1,321 bytes
 * leaked there), dlclose it, with OTHER dlopen another library (tests/prog/
 * real11_dlib2.c, mapped where LIB was), print "kept 321 lost 1321", then
 * exit, or abort. Every frame of those blocks but main's is in a module no
 * longer mapped. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile kept;

int main(int argc, char **argv)
{
	void *h;
	void *(*make)(size_t);

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&make = dlsym(h, "r11_make");
	if (!make)
		return 1;
	kept = make(321);
	dlclose(h);
	if (argc > 2 && strcmp(argv[2], "abort") && !dlopen(argv[2], RTLD_NOW)) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	printf("kept 321 lost 1321\n");
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "abort"))
		abort();
	return 0;
}
