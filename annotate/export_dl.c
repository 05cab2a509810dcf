/* export_dl.c - dlclose as libheapann.so exports it (LD_PRELOAD build only):
 * records every object the call unloads in the table of include/heapann_unload.h,
 * so that the reader can still name the frames of blocks allocated by a library
 * that is gone when the core is taken.
 *
 * Not inside malloc: it may call the real allocator (its list of the objects
 * loaded before the call) and the loader (dl_iterate_phdr takes ld.so's lock,
 * as dlclose does). Costs nothing on malloc and free.
 */
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "heapann_unload.h"
#include "hook.h"
#include "internal.h"

#define HA_EXPORT __attribute__((visibility("default")))
#define UL_CAP 128u

/* The table, in this library's .bss: a core holds it (private writable
 * memory). Header words, then UL_CAP records of heapann_unload_rec_bytes(). */
static struct {
	uintptr_t hdr[HEAPANN_UNLOAD_HDR_WORDS];
	struct ul_rec {
		uintptr_t w[HEAPANN_UNLOAD_REC_WORDS];
		unsigned char id[HEAPANN_UNLOAD_ID_MAX];
		char path[HEAPANN_UNLOAD_PATH_MAX];
	} rec[UL_CAP];
} ul_table;
_Static_assert(sizeof(struct ul_rec) == HEAPANN_UNLOAD_REC_WORDS * sizeof(uintptr_t) +
	       HEAPANN_UNLOAD_ID_MAX + HEAPANN_UNLOAD_PATH_MAX, "records are packed");
static int ul_inited;   /* 0: header not written; 1: being written; 2: written */

/* One loaded object as dl_iterate_phdr showed it before the dlclose. */
struct ul_obj {
	uintptr_t bias, lo, hi;
	unsigned idlen;
	unsigned char id[HEAPANN_UNLOAD_ID_MAX];
	char path[HEAPANN_UNLOAD_PATH_MAX];
	int too_long;    /* its path did not fit (or, relative, could not be made
			  * absolute) */
	int seen;        /* found again after the dlclose */
};

struct ul_list {
	struct ul_obj *v;
	size_t n, cap;
};

/* The GNU build-id of an object from its PT_NOTE segments, in memory; 0 bytes
 * when it has none (a note not inside a PT_LOAD is not read). */
static unsigned ul_build_id(const struct dl_phdr_info *info, unsigned char *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		int inside = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		for (int k = 0; k < info->dlpi_phnum; k++) {
			const ElfW(Phdr) *l = &info->dlpi_phdr[k];

			if (l->p_type == PT_LOAD && ph->p_vaddr >= l->p_vaddr &&
			    ph->p_vaddr + ph->p_filesz <= l->p_vaddr + l->p_filesz)
				inside = 1;
		}
		if (!inside)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0, len = ph->p_filesz;

		while (off + sizeof(ElfW(Nhdr)) <= len) {
			ElfW(Nhdr) nh;
			size_t name = off + sizeof(nh), desc;

			memcpy(&nh, p + off, sizeof(nh));
			desc = name + ((nh.n_namesz + 3) & ~(size_t)3);
			if (nh.n_namesz > len || nh.n_descsz > len || desc > len ||
			    desc + nh.n_descsz > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(p + name, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= HEAPANN_UNLOAD_ID_MAX) {
				memcpy(out, p + desc, nh.n_descsz);
				return nh.n_descsz;
			}
			off = desc + ((nh.n_descsz + 3) & ~(size_t)3);
		}
	}
	return 0;
}

/* dl_iterate_phdr callback of the first pass: list every named object. */
static int ul_list_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ul_list *l = data;
	struct ul_obj *o;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;   /* the program itself */
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct ul_obj *v = ha_real_realloc(l->v, cap * sizeof(*v));

		if (!v)
			return 1;
		l->v = v;
		l->cap = cap;
	}
	o = &l->v[l->n];
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	o->bias = info->dlpi_addr;
	o->lo = lo;
	o->hi = hi;
	o->seen = 0;
	o->too_long = 0;
	{
		/* a relative name (dlopen("./x.so")) is made absolute only if the
		 * object goes (ul_record): not for the vdso at every dlclose */
		size_t n = strlen(info->dlpi_name);

		o->too_long = n >= sizeof(o->path);
		if (!o->too_long)
			memcpy(o->path, info->dlpi_name, n + 1);
	}
	o->idlen = ul_build_id(info, o->id);
	l->n++;
	return 0;
}

/* dl_iterate_phdr callback of the second pass: mark the objects still loaded
 * (same load bias and span: a library unloaded and another loaded at its
 * place by another thread meanwhile is still unloaded). */
static int ul_mark_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ul_list *l = data;
	uintptr_t lo = UINTPTR_MAX;

	(void)size;
	for (int k = 0; k < info->dlpi_phnum; k++)
		if (info->dlpi_phdr[k].p_type == PT_LOAD && info->dlpi_addr + info->dlpi_phdr[k].p_vaddr < lo)
			lo = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].bias == info->dlpi_addr && l->v[i].lo == lo)
			l->v[i].seen = 1;
	return 0;
}

/* Write the table's header once (its CHECK needs its address). */
static void ul_init(void)
{
	int expect = 0;
	unsigned spin = 0;

	if (__atomic_load_n(&ul_inited, __ATOMIC_ACQUIRE) == 2)
		return;
	if (__atomic_compare_exchange_n(&ul_inited, &expect, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		uintptr_t u = (uintptr_t)&ul_table, rb = (uintptr_t)heapann_unload_rec_bytes(HA_W);

		ul_table.hdr[HEAPANN_UH_VERSION] = HEAPANN_UNLOAD_VERSION;
		ul_table.hdr[HEAPANN_UH_CAP] = UL_CAP;
		ul_table.hdr[HEAPANN_UH_REC_BYTES] = rb;
		ul_table.hdr[HEAPANN_UH_CHECK] = (uintptr_t)heapann_unload_check(u, UL_CAP, rb, HA_W);
		__atomic_store_n(&ul_table.hdr[HEAPANN_UH_MAGIC],
				 (uintptr_t)heapann_unload_magic(HA_W), __ATOMIC_RELEASE);
		__atomic_store_n(&ul_inited, 2, __ATOMIC_RELEASE);
		ha_stats_unload_table(u);
		return;
	}
	while (__atomic_load_n(&ul_inited, __ATOMIC_ACQUIRE) != 2 && ++spin < 100000000u)
		;
}

/* Record object O, unloaded after allocation SEQ: claim a slot, fill it,
 * then mark it READY; or, when a READY record is the same object at the same
 * place, set its SEQ to this one. */
static void ul_record(struct ul_obj *o, uintptr_t seq)
{
	uintptr_t i;
	struct ul_rec *r;

	ul_init();
	if (!o->too_long && o->path[0] != '/') {
		/* relative: as the working directory says now */
		char buf[PATH_MAX];

		if (!realpath(o->path, buf) || strlen(buf) >= sizeof(o->path))
			o->too_long = 1;
		else
			strcpy(o->path, buf);
	}
	if (o->too_long) {
		__atomic_add_fetch(&ul_table.hdr[HEAPANN_UH_DROPPED], 1, __ATOMIC_RELAXED);
		return;
	}
	/* the same library unloaded again at the same place (a plugin loaded
	 * and unloaded in a loop): its record takes the later SEQ, the table
	 * does not fill up with copies */
	i = __atomic_load_n(&ul_table.hdr[HEAPANN_UH_CLAIMED], __ATOMIC_ACQUIRE);
	for (uintptr_t k = 0; k < i && k < UL_CAP; k++) {
		r = &ul_table.rec[k];
		if (__atomic_load_n(&r->w[HEAPANN_UR_READY], __ATOMIC_ACQUIRE) &&
		    r->w[HEAPANN_UR_BIAS] == o->bias && r->w[HEAPANN_UR_LO] == o->lo &&
		    r->w[HEAPANN_UR_HI] == o->hi && r->w[HEAPANN_UR_IDLEN] == o->idlen &&
		    !memcmp(r->id, o->id, o->idlen) && !strcmp(r->path, o->path)) {
			__atomic_store_n(&r->w[HEAPANN_UR_SEQ], seq, __ATOMIC_RELAXED);
			return;
		}
	}
	i = __atomic_fetch_add(&ul_table.hdr[HEAPANN_UH_CLAIMED], 1, __ATOMIC_ACQ_REL);
	if (i >= UL_CAP) {
		__atomic_store_n(&ul_table.hdr[HEAPANN_UH_CLAIMED], UL_CAP, __ATOMIC_RELAXED);
		__atomic_add_fetch(&ul_table.hdr[HEAPANN_UH_DROPPED], 1, __ATOMIC_RELAXED);
		return;
	}
	r = &ul_table.rec[i];
	r->w[HEAPANN_UR_SEQ] = seq;
	r->w[HEAPANN_UR_BIAS] = o->bias;
	r->w[HEAPANN_UR_LO] = o->lo;
	r->w[HEAPANN_UR_HI] = o->hi;
	r->w[HEAPANN_UR_IDLEN] = o->idlen;
	memcpy(r->id, o->id, o->idlen);
	strcpy(r->path, o->path);
	__atomic_store_n(&r->w[HEAPANN_UR_READY], 1, __ATOMIC_RELEASE);
}

typedef int (*ul_dlclose_fn)(void *handle);
static ul_dlclose_fn ul_real;

/* Close HANDLE with the loader's dlclose (the next definition after this
 * library's), and record in the table every object the call unloaded.
 * Returns what dlclose returned. The list of objects before the call lives in
 * the real allocator's memory (not a block of the program's). */
HA_EXPORT int dlclose(void *handle)
{
	ul_dlclose_fn real = __atomic_load_n(&ul_real, __ATOMIC_ACQUIRE);
	struct ul_list l = { NULL, 0, 0 };
	uintptr_t seq;
	int rc;

	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "dlclose");
		if (!real)
			return -1;
		__atomic_store_n(&ul_real, real, __ATOMIC_RELEASE);
	}
	dl_iterate_phdr(ul_list_cb, &l);
	rc = real(handle);
	seq = ha_seq_last();   /* after: the library's destructors' blocks are its own */
	if (rc == 0 && l.n) {
		dl_iterate_phdr(ul_mark_cb, &l);
		for (size_t i = 0; i < l.n; i++)
			if (!l.v[i].seen)
				ul_record(&l.v[i], seq);
	}
	ha_real_free(l.v);
	return rc;
}
