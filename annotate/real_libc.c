/* real_libc.c - the real allocator under libheapann.so: glibc's own entry
 * points __libc_malloc & co. (exported by glibc 2.36), linked directly, so no
 * dlsym and no bootstrap recursion: they work from the very first call, before
 * any constructor (the calls are inline, internal.h). Only malloc_usable_size has no __libc_ name; it is taken
 * from libc.so.6 itself at init (dlsym on its handle, not RTLD_NEXT, so it is
 * glibc's whatever else is preloaded). */
#include <dlfcn.h>
#include <stddef.h>

#include "internal.h"

typedef size_t (*ha_usable_fn)(void *p);
/* glibc's malloc_usable_size; NULL until ha_real_init() ran. */
static ha_usable_fn ha_libc_usable;

size_t ha_real_usable_size(void *p)
{
	return ha_libc_usable ? ha_libc_usable(p) : 0;
}

void ha_real_init(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (libc)
		ha_libc_usable = (ha_usable_fn)dlsym(libc, "malloc_usable_size");
}
