/* real_wrap.c - the real allocator under the static kit (libheapann.a). With
 * `ld --wrap=malloc` (and the others, see heapann-static.pc) the program's
 * malloc calls reach __wrap_malloc, and __real_malloc is the libc one.
 *
 * Another allocator plugs in by defining all seven ha_real_* functions of
 * internal.h in the firmware (strong symbols): this whole object is then never
 * pulled from the archive and no __real_* reference remains. Define all or
 * none. ha_real_usable_size may return 0 when the allocator cannot tell. */
#include <stddef.h>

#include "internal.h"

void *__real_malloc(size_t size);
void __real_free(void *p);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_memalign(size_t align, size_t size);
size_t __real_malloc_usable_size(void *p);

__attribute__((weak)) void *ha_real_malloc(size_t size) { return __real_malloc(size); }
__attribute__((weak)) void ha_real_free(void *p) { __real_free(p); }
__attribute__((weak)) void *ha_real_calloc(size_t n, size_t size) { return __real_calloc(n, size); }
__attribute__((weak)) void *ha_real_realloc(void *p, size_t size) { return __real_realloc(p, size); }
__attribute__((weak)) void *ha_real_memalign(size_t align, size_t size) { return __real_memalign(align, size); }
__attribute__((weak)) size_t ha_real_usable_size(void *p) { return __real_malloc_usable_size(p); }
__attribute__((weak)) void ha_real_init(void) { }
