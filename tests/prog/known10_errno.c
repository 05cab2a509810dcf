/* known10_errno.c - a malloc family that breaks the errno promises, to show that
 * tests/prog/annot_entry.c's errno checks assert something (run-known10.sh).
 * Preloaded alone (LD_PRELOAD=known10_errno.so entry): free sets errno to 5
 * after glibc's free, and every request that must fail (a size or a count
 * product of 2^62 or more, an alignment above 2^62) returns NULL with errno left
 * as it was; everything else is glibc's (its __libc_ entry points). A check of
 * annot_entry that still passes under it was folded by the compiler or never
 * looked at errno. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

void __libc_free(void *p);
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void *__libc_pvalloc(size_t n);

#define TOO_BIG ((size_t)1 << 62)

void free(void *p)
{
	__libc_free(p);
	errno = 5;
}

void *malloc(size_t n)
{
	return n >= TOO_BIG ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return n && size >= TOO_BIG / n ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return n >= TOO_BIG ? NULL : __libc_realloc(p, n);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	return n && size >= TOO_BIG / n ? NULL : __libc_realloc(p, n * size);
}

void *memalign(size_t align, size_t n)
{
	return align >= TOO_BIG || n >= TOO_BIG ? NULL : __libc_memalign(align, n);
}

void *pvalloc(size_t n)
{
	return n >= TOO_BIG ? NULL : __libc_pvalloc(n);
}
