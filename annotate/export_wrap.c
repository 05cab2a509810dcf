/* export_wrap.c - the malloc family for the static kit: linked with
 * `ld --wrap=malloc` etc. (heapann-static.pc), every call the program and
 * the C library make to malloc lands here, and the real one is __real_malloc
 * (real_wrap.c). Same behaviour as export_preload.c.
 * On bare metal with newlib or picolibc each call runs whole under the C
 * library's allocator lock (HA_LOCK): the kit's state there is plain globals, and an RTOS serializes
 * malloc through __malloc_lock, which newlib takes only inside the real call. */
#include <stddef.h>

#include "heapann_stats.h"
#include "hook.h"
#include "internal.h"

#if HA_BARE && defined(__has_include)
#if __has_include(<malloc.h>) && __has_include(<newlib.h>)
#include <newlib.h>
#endif
#endif
#if HA_BARE && defined(_NEWLIB_VERSION) && defined(__PICOLIBC__)
#include <malloc.h>   /* __malloc_lock, __malloc_unlock */
/* picolibc (it defines _NEWLIB_VERSION too): the same recursive lock, taken
 * with no argument (it has no struct _reent) */
#define HA_LOCK() __malloc_lock()
#define HA_UNLOCK() __malloc_unlock()
#elif HA_BARE && defined(_NEWLIB_VERSION)
#include <malloc.h>   /* __malloc_lock, __malloc_unlock */
#include <reent.h>    /* _REENT */
/* newlib's recursive allocator lock, around the whole wrapped call: the
 * re-entry flag, the statistics' call counts and pending slots and the header
 * are written by one task at a time, and newlib's own malloc takes the same
 * lock again inside. A no-op unless the firmware (its RTOS) defines the two
 * functions; an interrupt handler must not allocate, as newlib already says. */
#define HA_LOCK() __malloc_lock(_REENT)
#define HA_UNLOCK() __malloc_unlock(_REENT)
#else
#define HA_LOCK() ((void)0)
#define HA_UNLOCK() ((void)0)
#endif

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
	void *p;

	HA_LOCK();
	HA_CALL(MALLOC);
	p = ha_malloc(size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(p);
}
HA_EXPORT void __wrap_free(void *p)
{
	HA_LOCK();
	HA_CALL(FREE);
	ha_free(p);
	HA_UNLOCK();
}
HA_EXPORT void *__wrap_calloc(size_t n, size_t size)
{
	void *p;

	HA_LOCK();
	HA_CALL(CALLOC);
	p = ha_calloc(n, size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(p);
}
HA_EXPORT void *__wrap_realloc(void *p, size_t size)
{
	void *q;

	HA_LOCK();
	HA_CALL(REALLOC);
	q = ha_realloc(p, size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(q);
}
HA_EXPORT void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	void *q;

	HA_LOCK();
	HA_CALL(REALLOCARRAY);
	q = ha_reallocarray(p, n, size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(q);
}
HA_EXPORT int __wrap_posix_memalign(void **out, size_t align, size_t size)
{
	int r;

	HA_LOCK();
	HA_CALL(POSIX_MEMALIGN);
	r = ha_posix_memalign(out, align, size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(r);
}
HA_EXPORT void *__wrap_aligned_alloc(size_t align, size_t size)
{
	void *p;

	HA_LOCK();
	HA_CALL(ALIGNED_ALLOC);
	p = ha_aligned_alloc(align, size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(p);
}
HA_EXPORT void *__wrap_memalign(size_t align, size_t size)
{
	void *p;

	HA_LOCK();
	HA_CALL(MEMALIGN);
	p = ha_memalign(align, size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(p);
}
HA_EXPORT void *__wrap_valloc(size_t size)
{
	void *p;

	HA_LOCK();
	HA_CALL(VALLOC);
	p = ha_valloc(size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(p);
}
HA_EXPORT void *__wrap_pvalloc(size_t size)
{
	void *p;

	HA_LOCK();
	HA_CALL(PVALLOC);
	p = ha_pvalloc(size, HA_CALLER());
	HA_UNLOCK();
	return HA_KEEP(p);
}
HA_EXPORT size_t __wrap_malloc_usable_size(void *p)
{
	size_t n;

	HA_LOCK();
	n = ha_usable_size(p);
	HA_UNLOCK();
	return n;
}
