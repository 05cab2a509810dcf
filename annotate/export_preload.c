/* export_preload.c - the malloc family as libheapann.so exports it for
 * LD_PRELOAD: each entry point notes its caller's return address (where the
 * recorded stack starts) and calls the core. These are the only symbols the
 * library exports (annotate/exports.map). */
#include <malloc.h>
#include <stdlib.h>

#include "heapann_stats.h"
#include "hook.h"
#include "internal.h"

#define HA_EXPORT __attribute__((visibility("default")))

HA_EXPORT void *malloc(size_t size) { HA_CALL(MALLOC); return ha_malloc(size, HA_RA()); }
HA_EXPORT void free(void *p) { HA_CALL(FREE); ha_free(p); }
HA_EXPORT void *calloc(size_t n, size_t size)
{
	HA_CALL(CALLOC);
	return ha_calloc(n, size, HA_RA());
}
HA_EXPORT void *realloc(void *p, size_t size)
{
	HA_CALL(REALLOC);
	return ha_realloc(p, size, HA_RA());
}
HA_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	HA_CALL(REALLOCARRAY);
	return ha_reallocarray(p, n, size, HA_RA());
}
HA_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	HA_CALL(POSIX_MEMALIGN);
	return ha_posix_memalign(out, align, size, HA_RA());
}
HA_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	HA_CALL(ALIGNED_ALLOC);
	return ha_aligned_alloc(align, size, HA_RA());
}
HA_EXPORT void *memalign(size_t align, size_t size)
{
	HA_CALL(MEMALIGN);
	return ha_memalign(align, size, HA_RA());
}
HA_EXPORT void *valloc(size_t size) { HA_CALL(VALLOC); return ha_valloc(size, HA_RA()); }
HA_EXPORT void *pvalloc(size_t size)
{
	HA_CALL(PVALLOC);
	return ha_pvalloc(size, HA_RA());
}
HA_EXPORT size_t malloc_usable_size(void *p) { return ha_usable_size(p); }
