/* export_wrap.c - the malloc family for the static kit: linked with
 * `ld --wrap=malloc` etc. (heapann-static.pc), every call the program and
 * the C library make to malloc lands here, and the real one is __real_malloc
 * (real_wrap.c). Same behaviour as export_preload.c. */
#include <stddef.h>

#include "heapann_stats.h"
#include "hook.h"
#include "internal.h"

void *__wrap_malloc(size_t size);
void __wrap_free(void *p);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
int __wrap_posix_memalign(void **out, size_t align, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
void *__wrap_memalign(size_t align, size_t size);
void *__wrap_valloc(size_t size);
void *__wrap_pvalloc(size_t size);
size_t __wrap_malloc_usable_size(void *p);

#define HA_EXPORT __attribute__((visibility("default")))

HA_EXPORT void *__wrap_malloc(size_t size)
{
	HA_CALL(MALLOC);
	return HA_KEEP(ha_malloc(size, HA_CALLER()));
}
HA_EXPORT void __wrap_free(void *p) { HA_CALL(FREE); ha_free(p); }
HA_EXPORT void *__wrap_calloc(size_t n, size_t size)
{
	HA_CALL(CALLOC);
	return HA_KEEP(ha_calloc(n, size, HA_CALLER()));
}
HA_EXPORT void *__wrap_realloc(void *p, size_t size)
{
	HA_CALL(REALLOC);
	return HA_KEEP(ha_realloc(p, size, HA_CALLER()));
}
HA_EXPORT void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	HA_CALL(REALLOCARRAY);
	return HA_KEEP(ha_reallocarray(p, n, size, HA_CALLER()));
}
HA_EXPORT int __wrap_posix_memalign(void **out, size_t align, size_t size)
{
	HA_CALL(POSIX_MEMALIGN);
	return HA_KEEP(ha_posix_memalign(out, align, size, HA_CALLER()));
}
HA_EXPORT void *__wrap_aligned_alloc(size_t align, size_t size)
{
	HA_CALL(ALIGNED_ALLOC);
	return HA_KEEP(ha_aligned_alloc(align, size, HA_CALLER()));
}
HA_EXPORT void *__wrap_memalign(size_t align, size_t size)
{
	HA_CALL(MEMALIGN);
	return HA_KEEP(ha_memalign(align, size, HA_CALLER()));
}
HA_EXPORT void *__wrap_valloc(size_t size)
{
	HA_CALL(VALLOC);
	return HA_KEEP(ha_valloc(size, HA_CALLER()));
}
HA_EXPORT void *__wrap_pvalloc(size_t size)
{
	HA_CALL(PVALLOC);
	return HA_KEEP(ha_pvalloc(size, HA_CALLER()));
}
HA_EXPORT size_t __wrap_malloc_usable_size(void *p) { return ha_usable_size(p); }
