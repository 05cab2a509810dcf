/* export_preload.c - the malloc family as libheapann.so exports it for
 * LD_PRELOAD: each entry point names its caller (HA_CALLER: its own frame,
 * where the recorded stack starts) and calls the core. These are the only symbols the
 * library exports (annotate/exports.map). */
#include <malloc.h>
#include <stdlib.h>

#include "heapann_stats.h"
#include "hook.h"
#include "internal.h"

#define HA_EXPORT __attribute__((visibility("default")))

HA_EXPORT void *malloc(size_t size) { HA_CALL(MALLOC); return HA_KEEP(ha_malloc(size, HA_CALLER())); }
HA_EXPORT void free(void *p) { HA_CALL(FREE); ha_free(p); }
HA_EXPORT void *calloc(size_t n, size_t size)
{
	HA_CALL(CALLOC);
	return HA_KEEP(ha_calloc(n, size, HA_CALLER()));
}
HA_EXPORT void *realloc(void *p, size_t size)
{
	HA_CALL(REALLOC);
	return HA_KEEP(ha_realloc(p, size, HA_CALLER()));
}
HA_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	HA_CALL(REALLOCARRAY);
	return HA_KEEP(ha_reallocarray(p, n, size, HA_CALLER()));
}
HA_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	HA_CALL(POSIX_MEMALIGN);
	return HA_KEEP(ha_posix_memalign(out, align, size, HA_CALLER()));
}
HA_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	HA_CALL(ALIGNED_ALLOC);
	return HA_KEEP(ha_aligned_alloc(align, size, HA_CALLER()));
}
HA_EXPORT void *memalign(size_t align, size_t size)
{
	HA_CALL(MEMALIGN);
	return HA_KEEP(ha_memalign(align, size, HA_CALLER()));
}
HA_EXPORT void *valloc(size_t size) { HA_CALL(VALLOC); return HA_KEEP(ha_valloc(size, HA_CALLER())); }
HA_EXPORT void *pvalloc(size_t size)
{
	HA_CALL(PVALLOC);
	return HA_KEEP(ha_pvalloc(size, HA_CALLER()));
}
HA_EXPORT size_t malloc_usable_size(void *p) { return ha_usable_size(p); }
