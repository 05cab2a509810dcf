/* fw_pool.h - the allocator under the static kit in the firmware-like test
 * programs (fw_app.c -DFW_POOL, hunt7_fw.c): a bump pool in .bss behind the seven
 * ha_real_* functions, the way an RTOS pool would be plugged in. Included by one
 * file of the program; needs <stdint.h> and <string.h>. Each block is preceded
 * by its size (one word). Single-threaded firmware; an RTOS would take its pool lock here.
 * Memory is never reused, so freed headers stay readable in the dump. */
#ifndef FW_POOL_BYTES
#define FW_POOL_BYTES (48 * 1024)
#endif
static unsigned char fw_pool[FW_POOL_BYTES] __attribute__((aligned(16)));
static size_t fw_pool_used;

void *ha_real_memalign(size_t align, size_t size);
void *ha_real_malloc(size_t size);
void ha_real_free(void *p);
void *ha_real_calloc(size_t n, size_t size);
void *ha_real_realloc(void *p, size_t size);
size_t ha_real_usable_size(void *p);
void ha_real_init(void);

void *ha_real_memalign(size_t align, size_t size)
{
	uintptr_t base = (uintptr_t)fw_pool, p;

	if (align < 16)
		align = 16;
	p = (base + fw_pool_used + sizeof(size_t) + align - 1) & ~(uintptr_t)(align - 1);
	if (size > FW_POOL_BYTES || p + size > base + FW_POOL_BYTES)
		return NULL;
	((size_t *)p)[-1] = size;
	fw_pool_used = p + size - base;
	return (void *)p;
}

void *ha_real_malloc(size_t size) { return ha_real_memalign(16, size); }
void ha_real_free(void *p) { (void)p; }
void *ha_real_calloc(size_t n, size_t size)
{
	/* pool memory starts zeroed and is never reused */
	return size && n > (size_t)-1 / size ? NULL : ha_real_malloc(n * size);
}

void *ha_real_realloc(void *p, size_t size)
{
	void *q = ha_real_malloc(size);
	size_t old = p ? ((size_t *)p)[-1] : 0;

	if (q && p)
		memcpy(q, p, old < size ? old : size);
	return q;
}

size_t ha_real_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
void ha_real_init(void) { }
