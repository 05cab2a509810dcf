/* real10_dl.c - a program that dlopens a real library (zlib, libz.so.1) and
 * drops the handle, for tests/run-real10.sh. ld.so keeps the link_map it
 * calloc'ed for libz in its list: the l_next of the map before it holds it, and
 * under libheapann that map is libunwind's or liblzma's, which libheapann
 * loaded inside malloc (no header: not a block). memcheck says the map is
 * still reachable. ld.so's _dl_find_object table (one block, holding a pointer
 * to every map) is aligned up to 64 bytes inside its block, so whether it
 * holds a start or an interior pointer depends on where malloc put it: argv[1]
 * bytes are allocated (and kept in a global) before the dlopen to move it.
 * Prints "ok" and exits 0; 2 when libz.so.1 cannot be loaded. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile g_pad;   /* the padding block: still reachable */

/* dlopen libz and forget the handle (the link_map's address). */
static __attribute__((noinline)) int load(void)
{
	return dlopen("libz.so.1", RTLD_NOW) != NULL;
}

/* Overwrite the dead stack below main's frame, where load() left the handle. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[8192];

	memset((char *)buf, 0, sizeof(buf));
}

int main(int argc, char **argv)
{
	size_t pad = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;

	if (pad)
		g_pad = malloc(pad);
	if (!load())
		return 2;
	scrub();
	puts("ok");
	return 0;
}
