/* export_pprof.c - --format pprof (issue 12): the live heap as a gzip-compressed
 * profile.proto, the format of Go's and gperftools' heap profiles, for
 * `go tool pprof` and the tools that read it.
 *
 * Sample types: inuse_objects/count and inuse_space/bytes from the live blocks,
 * preceded by alloc_objects/count and alloc_space/bytes (everything allocated
 * since start) when the image holds libheapann's statistics region. One sample
 * per distinct chain of return addresses once the allocator's frames are
 * stripped (as the stacks report strips them); one Location per return address
 * (per first inline level kept, when the stripping ends inside an inline chain),
 * its address the return address minus 1 as pprof's own heap profiles have it;
 * one Mapping per executable file mapping that holds a frame, with the build-id
 * read from the core, so that pprof can name the frames again from the files.
 * The protobuf is written by pb.c, the gzip by zlib. */
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "htab.h"
#include "pb.h"

/* profile.proto field numbers (github.com/google/pprof proto/profile.proto) */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

#define MAX_FRAMES 4096
#define NO_FRAMES UINT32_MAX       /* addr_idx of the location of a stack without frames */
#define NO_FRAMES_NAME "(no frames recorded)"
/* The location of the unknown outer frames of a stack cut at HEAPANN_DEPTH, its
 * last (outermost): addr_idx NO_FRAMES, level CUT_LEVEL. */
#define CUT_LEVEL 1u

/* Values of a sample, in the order of the sample types written. */
enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_INUSE_OBJECTS, V_INUSE_SPACE, NVALUES };

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ---- a map from 64-bit keys to non-zero 32-bit values (common/htab) ---- */

struct umap {
	struct htab idx;     /* entries by key */
	uint64_t *keys;      /* per entry */
	uint32_t *vals;      /* per entry, never 0 */
	size_t n, cap;       /* entries, room in keys and vals */
};

static int umap_eq(const void *ctx, uint32_t e, const void *key)
{
	return ((const struct umap *)ctx)->keys[e] == *(const uint64_t *)key;
}

/* The value of key, or 0 when key is not in m. */
static uint32_t umap_get(const struct umap *m, uint64_t key)
{
	int64_t e = htab_find(&m->idx, mix64(key), umap_eq, m, &key);

	return e < 0 ? 0 : m->vals[e];
}

/* Insert key (not yet in m) with val != 0. Returns 0, or -1 out of memory. */
static int umap_put(struct umap *m, uint64_t key, uint32_t val)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		uint64_t *k = realloc(m->keys, cap * sizeof(*k));
		uint32_t *v;

		if (!k)
			return -1;
		m->keys = k;
		v = realloc(m->vals, cap * sizeof(*v));
		if (!v)
			return -1;
		m->vals = v;
		m->cap = cap;
	}
	if (htab_add(&m->idx, mix64(key), (uint32_t)m->n) < 0)
		return -1;
	m->keys[m->n] = key;
	m->vals[m->n++] = val;
	return 0;
}

static void umap_release(struct umap *m)
{
	htab_release(&m->idx);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Grow the array *v of *cap elements of size sz to hold n. Returns 0 or -1. */
static int grow(void *v, size_t *cap, size_t n, size_t sz)
{
	void *nv;
	size_t nc;

	if (n <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 256;
	while (nc < n)
		nc *= 2;
	nv = realloc(*(void **)v, nc * sz);
	if (!nv)
		return -1;
	*(void **)v = nv;
	*cap = nc;
	return 0;
}

/* ---- the profile being built ---- */

struct pp_mapping {
	uint64_t start, limit, offset;
	uint32_t filename, build_id;          /* string indices (0: none) */
	uint32_t nlocs, nfunc, nfile, nline;  /* its locations, and those fully named */
};

struct pp_location {
	uint32_t addr_idx;      /* scan->addrs index, or NO_FRAMES */
	uint32_t level;         /* first inline level kept */
	uint32_t mapping;       /* mapping id, 0: none */
};

struct pp_function {
	uint32_t name, file;    /* string indices */
};

struct pp_sample {
	uint32_t first, n;      /* location ids at locids[first .. first+n), leaf first */
	uint64_t hash;
	uint64_t v[NVALUES];
};

struct pprof {
	const struct cli_options *o;
	const struct cli_profile *p;
	/* string table: index 0 is "" */
	char **strs;
	size_t nstrs, cap_strs;
	struct htab str_idx;    /* strs by content */
	/* ids are index + 1 */
	struct pp_mapping *maps;
	size_t nmaps, cap_maps;
	struct umap map_ids;    /* NT_FILE index, or (1 << 63 | module string << 16 | phdr);
				 * phdr 0xffff: the module's file was read (value UINT32_MAX) */
	struct pp_location *locs;
	size_t nlocs, cap_locs;
	struct umap loc_ids;    /* addr_idx << 32 | level */
	struct pp_function *funcs;
	size_t nfuncs, cap_funcs;
	struct umap func_ids;   /* name << 32 | file */
	struct pp_sample *samples;
	size_t nsamples, cap_samples;
	struct htab sample_idx; /* samples by their chain of location ids */
	uint32_t *locids;       /* the samples' location ids */
	size_t nlocids, cap_locids;
	uint32_t *stack_sample; /* per cp stack: sample index + 1, 0 not yet, UINT32_MAX ignored */
	uint64_t ignored_allocs, ignored_bytes; /* alloc_* of the stacks --ignore-fn left out */
	struct an_frame *fr;    /* MAX_FRAMES scratch frames */
	uint32_t *chain;        /* MAX_FRAMES scratch location ids */
	int oom;                /* an allocation failed where 0 could also mean "none" */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int str_eq(const void *ctx, uint32_t i, const void *key)
{
	return !strcmp(((const struct pprof *)ctx)->strs[i], key);
}

/* The index of s in the string table, added (copied) when new; -1 out of memory. */
static int64_t str_index(struct pprof *pp, const char *s)
{
	uint64_t h = str_hash(s);
	int64_t i = htab_find(&pp->str_idx, h, str_eq, pp, s);

	if (i >= 0)
		return i;
	/* copied before it is indexed, so the index never names a missing string */
	if (grow(&pp->strs, &pp->cap_strs, pp->nstrs + 1, sizeof(*pp->strs)) < 0 ||
	    !(pp->strs[pp->nstrs] = strdup(s)))
		return -1;
	if (htab_add(&pp->str_idx, h, (uint32_t)pp->nstrs) < 0) {
		free(pp->strs[pp->nstrs]);
		return -1;
	}
	return (int64_t)pp->nstrs++;
}

/* A new mapping under key in map_ids, named path, with the build-id id of idlen
 * bytes (idlen 0: none) as lower-case hex. Returns its id; 0 with pp->oom set
 * when out of memory. */
static uint32_t mapping_add(struct pprof *pp, uint64_t key, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *path, const unsigned char *id, size_t idlen)
{
	struct pp_mapping *m;
	char hex[2 * 64 + 1];
	int64_t fn, bid = 0;

	if (idlen > 64)
		idlen = 64;
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * idlen] = '\0';
	fn = str_index(pp, path ? path : "");
	if (idlen)
		bid = str_index(pp, hex);
	if (fn < 0 || bid < 0 || grow(&pp->maps, &pp->cap_maps, pp->nmaps + 1, sizeof(*pp->maps)) < 0) {
		pp->oom = 1;
		return 0;
	}
	m = &pp->maps[pp->nmaps];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->limit = limit;
	m->offset = offset;
	m->filename = (uint32_t)fn;
	m->build_id = (uint32_t)bid;
	if (umap_put(&pp->map_ids, key, (uint32_t)pp->nmaps + 1) < 0) {
		pp->oom = 1;
		return 0;
	}
	return (uint32_t)++pp->nmaps;
}

/* The mapping of a core's NT_FILE entry fm: its range and offset, and the
 * module's build-id as the core's memory holds it. */
static uint32_t mapping_of_file(struct pprof *pp, const struct cp_mapping *fm)
{
	const struct cp_image *img = pp->p->img;
	uint64_t key = (uint64_t)(fm - img->files);
	uint32_t id = umap_get(&pp->map_ids, key);
	unsigned char bid[64];
	size_t blen = 0;

	if (id)
		return id;
	if (cp_image_module_buildid(img, fm, bid, sizeof(bid), &blen) < 0)
		blen = 0;
	return mapping_add(pp, key, fm->start, fm->end, fm->file_offset, fm->path, bid, blen);
}

/* The mapping of a module the image has no file mapping for (the firmware ELF of
 * a raw dump), for the frame at addr (modoff into the module): the file is read
 * once, and each executable PT_LOAD becomes a mapping, placed where addr says the
 * module is loaded, with the file's build-id. 0 when the file cannot be read or
 * no executable PT_LOAD holds modoff. */
static uint32_t mapping_of_module(struct pprof *pp, const char *module, uint64_t addr,
				  uint64_t modoff)
{
	int64_t si = str_index(pp, module);
	uint64_t read_key = 1ull << 63 | (uint64_t)si << 16 | 0xffff;
	char *file_name = NULL;
	Elf *elf = NULL;
	size_t nph = 0;
	uint32_t id = 0;
	int fd;

	if (si < 0) {
		pp->oom = 1;
		return 0;
	}
	for (size_t i = 0; i < pp->nmaps; i++)
		if (pp->maps[i].filename == (uint32_t)si && addr >= pp->maps[i].start &&
		    addr < pp->maps[i].limit)
			return (uint32_t)i + 1;
	if (umap_get(&pp->map_ids, read_key))
		return 0;     /* read before: no executable segment holds this frame */
	if (umap_put(&pp->map_ids, read_key, UINT32_MAX) < 0) {
		pp->oom = 1;
		return 0;
	}
	fd = module[0] == '/' ? sym_module_open(pp->o->sysroot, module, &file_name)
			      : open(module, O_RDONLY | O_CLOEXEC);
	free(file_name);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_getphdrnum(elf, &nph) == 0) {
		const void *bid = NULL;
		ssize_t blen = dwelf_elf_gnu_build_id(elf, &bid);
		uint64_t bias = addr - modoff;   /* where the module is loaded */

		for (size_t i = 0; i < nph && i < 0xffff; i++) {
			GElf_Phdr ph;
			uint32_t m;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
				continue;
			m = mapping_add(pp, 1ull << 63 | (uint64_t)si << 16 | i, bias + ph.p_vaddr,
					bias + ph.p_vaddr + ph.p_memsz, ph.p_offset, module, bid,
					blen > 0 ? (size_t)blen : 0);
			if (!m)
				break;
			if (modoff >= ph.p_vaddr && modoff - ph.p_vaddr < ph.p_memsz)
				id = m;
		}
	}
	elf_end(elf);
	close(fd);
	return id;
}

/* The id of the Location of return address addr_idx from inline level 'level'
 * on, created when new. 0 out of memory. */
static uint32_t location_id(struct pprof *pp, uint32_t addr_idx, uint32_t level)
{
	uint64_t key = (uint64_t)addr_idx << 32 | level;
	uint32_t id = umap_get(&pp->loc_ids, key), mid = 0;
	struct pp_location *l;

	if (id)
		return id;
	if (addr_idx != NO_FRAMES) {
		const struct cp_image *img = pp->p->img;
		uint64_t addr = pp->p->scan.addrs[addr_idx];
		const struct cp_mapping *fm = cp_image_mapping(img, addr);
		const struct sym_loc *sl = pp->p->names && addr_idx < pp->p->names->nlocs ?
					   &pp->p->names->locs[addr_idx] : NULL;
		struct an_frame fr[64];
		size_t nf = an_frames_at(&pp->p->in, addr_idx, fr, 64);

		if (fm)
			mid = mapping_of_file(pp, fm);
		else if (sl && sl->module)
			mid = mapping_of_module(pp, sl->module, addr, sl->modoff);
		if (mid) {
			struct pp_mapping *m = &pp->maps[mid - 1];
			int fn = level < nf, file = level < nf, line = level < nf;

			for (size_t k = level; k < nf; k++) {
				fn &= fr[k].function != NULL;
				file &= fr[k].file != NULL;
				line &= fr[k].line != 0;
			}
			m->nlocs++;
			m->nfunc += fn;
			m->nfile += file;
			m->nline += line;
		}
	}
	if (grow(&pp->locs, &pp->cap_locs, pp->nlocs + 1, sizeof(*pp->locs)) < 0)
		return 0;
	l = &pp->locs[pp->nlocs];
	l->addr_idx = addr_idx;
	l->level = level;
	l->mapping = mid;
	if (umap_put(&pp->loc_ids, key, (uint32_t)pp->nlocs + 1) < 0)
		return 0;
	return (uint32_t)++pp->nlocs;
}

/* The id of the Function named name in file (NULL: none), created when new. */
static uint32_t function_id(struct pprof *pp, const char *name, const char *file)
{
	int64_t n = str_index(pp, name), f = str_index(pp, file ? file : "");
	uint64_t key;
	uint32_t id;

	if (n < 0 || f < 0)
		return 0;
	key = (uint64_t)n << 32 | (uint64_t)f;
	if ((id = umap_get(&pp->func_ids, key)))
		return id;
	if (grow(&pp->funcs, &pp->cap_funcs, pp->nfuncs + 1, sizeof(*pp->funcs)) < 0)
		return 0;
	pp->funcs[pp->nfuncs].name = (uint32_t)n;
	pp->funcs[pp->nfuncs].file = (uint32_t)f;
	if (umap_put(&pp->func_ids, key, (uint32_t)pp->nfuncs + 1) < 0)
		return 0;
	return (uint32_t)++pp->nfuncs;
}

/* The sample of cp stack 'stack' (allocator frames stripped): its index + 1,
 * UINT32_MAX when --ignore-fn leaves the stack out, 0 out of memory. Stacks
 * whose kept frames are the same return addresses share one sample. */
/* A chain of location ids: the key of the sample index. */
struct sample_key {
	const uint32_t *chain;
	uint32_t n;
};

static int sample_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct pprof *pp = ctx;
	const struct pp_sample *o = &pp->samples[i];
	const struct sample_key *k = key;

	return o->n == k->n && !memcmp(&pp->locids[o->first], k->chain, k->n * sizeof(*k->chain));
}

static uint32_t sample_of_stack(struct pprof *pp, uint32_t stack)
{
	const struct an_input *in = &pp->p->in;
	const struct an_filter *flt = &pp->p->filter;
	uint32_t s = pp->stack_sample[stack], skip, n = 0;
	struct sample_key key = { pp->chain, 0 };
	uint64_t h;
	size_t nf;
	int64_t e;

	if (s)
		return s;
	if (an_stack_ignored(in, flt, stack))
		return pp->stack_sample[stack] = UINT32_MAX;
	skip = an_alloc_skip(in, flt, stack);
	nf = an_frames_get(in, stack, skip, pp->fr, MAX_FRAMES);
	if (nf > MAX_FRAMES)
		nf = MAX_FRAMES;
	/* one location per return address: a new one starts where the address
	 * changes, or where the same address comes again (recursion) */
	for (size_t k = 0; k < nf; k++) {
		if (k && pp->fr[k].addr_idx == pp->fr[k - 1].addr_idx &&
		    pp->fr[k].level > pp->fr[k - 1].level)
			continue;
		if (!(pp->chain[n++] = location_id(pp, pp->fr[k].addr_idx, pp->fr[k].level)))
			return 0;
	}
	if (!n && !(pp->chain[n++] = location_id(pp, NO_FRAMES, 0)))
		return 0;
	else if (nf && pp->p->scan.stacks[stack].cut &&
		 !(pp->chain[n++] = location_id(pp, NO_FRAMES, CUT_LEVEL)))
		return 0;
	h = mix64(n);
	for (uint32_t k = 0; k < n; k++)
		h = mix64(h ^ pp->chain[k]);
	if (grow(&pp->samples, &pp->cap_samples, pp->nsamples + 1, sizeof(*pp->samples)) < 0 ||
	    grow(&pp->locids, &pp->cap_locids, pp->nlocids + n, sizeof(*pp->locids)) < 0)
		return 0;
	key.n = n;
	e = htab_put(&pp->sample_idx, h, (uint32_t)pp->nsamples, sample_eq, pp, &key);
	if (e < 0)
		return 0;
	if ((size_t)e == pp->nsamples) {
		memcpy(&pp->locids[pp->nlocids], pp->chain, n * sizeof(*pp->chain));
		memset(&pp->samples[pp->nsamples], 0, sizeof(pp->samples[0]));
		pp->samples[pp->nsamples].first = (uint32_t)pp->nlocids;
		pp->samples[pp->nsamples].n = n;
		pp->samples[pp->nsamples].hash = h;
		pp->nlocids += n;
		pp->nsamples++;
	}
	return pp->stack_sample[stack] = (uint32_t)e + 1;
}

/* Count the live blocks (those the stacks report counts) and, with the
 * statistics region, every stack's allocations into the samples. A stack the
 * region's full table did not record counts its live blocks as its
 * allocations, as the tables do (an_usage_from_stats): a sample never holds
 * more than it allocated. Returns 0 or -1 out of memory. */
static int samples_build(struct pprof *pp, const struct an_stacks *st)
{
	const struct cli_profile *p = pp->p;
	unsigned char *recorded = NULL;   /* per scan stack: 1 when the region has it */
	int rc = -1;

	if (p->have_stats && !(recorded = calloc(p->scan.nstacks + 1, 1)))
		return -1;
	for (size_t i = 0; p->have_stats && i < p->stats.nstacks; i++) {
		const struct cp_stats_stack *e = &p->stats.stacks[i];
		uint32_t s;

		if (e->stack >= p->scan.nstacks)
			continue;
		recorded[e->stack] = 1;
		if (!(s = sample_of_stack(pp, e->stack)))
			goto out;
		if (s == UINT32_MAX) {
			pp->ignored_allocs += e->allocs;
			pp->ignored_bytes += e->bytes;
			continue;
		}
		pp->samples[s - 1].v[V_ALLOC_OBJECTS] += e->allocs;
		pp->samples[s - 1].v[V_ALLOC_SPACE] += e->bytes;
	}
	for (size_t i = 0; i < p->scan.nblocks; i++) {
		const struct cp_block *b = &p->scan.blocks[i];
		uint32_t s;

		if (an_block_cluster(st, &p->scan, i) == UINT32_MAX)
			continue;
		if (!(s = sample_of_stack(pp, b->stack)))
			goto out;
		if (s == UINT32_MAX)
			continue;
		pp->samples[s - 1].v[V_INUSE_OBJECTS]++;
		pp->samples[s - 1].v[V_INUSE_SPACE] += b->size;
		if (recorded && p->stats.unrecorded_allocs && !recorded[b->stack]) {
			pp->samples[s - 1].v[V_ALLOC_OBJECTS]++;
			pp->samples[s - 1].v[V_ALLOC_SPACE] += b->size;
		}
	}
	rc = 0;
out:
	free(recorded);
	return rc;
}

/* The sum of value V (V_ALLOC_OBJECTS...) over pp's samples. */
static uint64_t samples_sum(const struct pprof *pp, unsigned v)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < pp->nsamples; i++)
		sum += pp->samples[i].v[v];
	return sum;
}

static void value_type(struct pb_buf *b, unsigned field, int64_t type, int64_t unit)
{
	size_t m = pb_open(b);

	pb_uint_nz(b, VALUETYPE_TYPE, (uint64_t)type);
	pb_uint_nz(b, VALUETYPE_UNIT, (uint64_t)unit);
	pb_close(b, field, m);
}

/* Add comment text (a string index) to cm[*n]. Returns 0 or -1. */
static int comment(struct pprof *pp, int64_t *cm, size_t *n, const char *text)
{
	int64_t i = str_index(pp, text);

	if (i < 0)
		return -1;
	cm[(*n)++] = i;
	return 0;
}

/* Encode the whole profile into b. Returns 0 or -1 out of memory. */
static int profile_encode(struct pprof *pp, const struct an_stacks *st, struct pb_buf *b)
{
	const struct cli_profile *p = pp->p;
	int stats = p->have_stats;
	unsigned v0 = stats ? V_ALLOC_OBJECTS : V_INUSE_OBJECTS;
	static const char *const names[NVALUES][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	int64_t cm[8], sp;
	size_t ncm = 0;
	char line[512], a[32], c[32], d[32];
	struct stat sb;

	for (unsigned v = v0; v < NVALUES; v++) {
		int64_t t = str_index(pp, names[v][0]), u = str_index(pp, names[v][1]);

		if (t < 0 || u < 0)
			return -1;
		value_type(b, PROFILE_SAMPLE_TYPE, t, u);
	}
	for (size_t i = 0; i < pp->nsamples; i++) {
		const struct pp_sample *s = &pp->samples[i];
		size_t m = pb_open(b), k;

		k = pb_open(b);
		for (uint32_t j = 0; j < s->n; j++)
			pb_varint(b, pp->locids[s->first + j]);
		pb_close(b, SAMPLE_LOCATION_ID, k);
		k = pb_open(b);
		for (unsigned v = v0; v < NVALUES; v++)
			pb_varint(b, s->v[v]);
		pb_close(b, SAMPLE_VALUE, k);
		pb_close(b, PROFILE_SAMPLE, m);
	}
	/* locations before mappings: naming their lines adds functions and strings */
	for (size_t i = 0; i < pp->nlocs; i++) {
		const struct pp_location *l = &pp->locs[i];
		size_t m = pb_open(b);

		pb_uint(b, LOCATION_ID, i + 1);
		pb_uint_nz(b, LOCATION_MAPPING_ID, l->mapping);
		if (l->addr_idx == NO_FRAMES) {
			uint32_t f = function_id(pp, l->level == CUT_LEVEL ? CLI_TREE_CUT : NO_FRAMES_NAME,
						 NULL);
			size_t k = pb_open(b);

			if (!f)
				return -1;
			pb_uint(b, LINE_FUNCTION_ID, f);
			pb_close(b, LOCATION_LINE, k);
		} else {
			uint64_t addr = p->scan.addrs[l->addr_idx];
			struct an_frame fr[64];
			size_t nf = an_frames_at(&p->in, l->addr_idx, fr, 64);

			/* a return address points after the call: minus 1 lands in the
			 * call instruction, as pprof's own heap profiles have it */
			pb_uint_nz(b, LOCATION_ADDRESS, addr ? addr - 1 : 0);
			for (size_t k = l->level; k < nf; k++) {
				uint32_t f;
				size_t lm;

				if (!fr[k].function)
					break;
				if (!(f = function_id(pp, fr[k].function, fr[k].file)))
					return -1;
				lm = pb_open(b);
				pb_uint(b, LINE_FUNCTION_ID, f);
				pb_uint_nz(b, LINE_LINE, fr[k].line);
				pb_close(b, LOCATION_LINE, lm);
			}
		}
		pb_close(b, PROFILE_LOCATION, m);
	}
	for (size_t i = 0; i < pp->nmaps; i++) {
		const struct pp_mapping *mp = &pp->maps[i];
		size_t m = pb_open(b);
		int fn = mp->nlocs && mp->nfunc == mp->nlocs;
		int lines = mp->nlocs && mp->nline == mp->nlocs;

		pb_uint(b, MAPPING_ID, i + 1);
		pb_uint_nz(b, MAPPING_MEMORY_START, mp->start);
		pb_uint_nz(b, MAPPING_MEMORY_LIMIT, mp->limit);
		pb_uint_nz(b, MAPPING_FILE_OFFSET, mp->offset);
		pb_uint_nz(b, MAPPING_FILENAME, mp->filename);
		pb_uint_nz(b, MAPPING_BUILD_ID, mp->build_id);
		pb_uint_nz(b, MAPPING_HAS_FUNCTIONS, fn);
		pb_uint_nz(b, MAPPING_HAS_FILENAMES, mp->nlocs && mp->nfile == mp->nlocs);
		pb_uint_nz(b, MAPPING_HAS_LINE_NUMBERS, lines);
		/* the inline chains come from the same DWARF as the line numbers */
		pb_uint_nz(b, MAPPING_HAS_INLINE_FRAMES, fn && lines);
		pb_close(b, PROFILE_MAPPING, m);
	}
	for (size_t i = 0; i < pp->nfuncs; i++) {
		size_t m = pb_open(b);

		pb_uint(b, FUNCTION_ID, i + 1);
		pb_uint_nz(b, FUNCTION_NAME, pp->funcs[i].name);
		/* the symbolizer keeps demangled names only: the system name is the same */
		pb_uint_nz(b, FUNCTION_SYSTEM_NAME, pp->funcs[i].name);
		pb_uint_nz(b, FUNCTION_FILENAME, pp->funcs[i].file);
		pb_close(b, PROFILE_FUNCTION, m);
	}

	/* the core file's time of last change is as close as we get to when the
	 * heap was as it is */
	if (stat(p->image_path, &sb) == 0)
		pb_uint_nz(b, PROFILE_TIME_NANOS,
			   (uint64_t)sb.st_mtim.tv_sec * 1000000000ull + (uint64_t)sb.st_mtim.tv_nsec);
	{
		int64_t t = str_index(pp, "space"), u = str_index(pp, "bytes");

		if (t < 0 || u < 0)
			return -1;
		value_type(b, PROFILE_PERIOD_TYPE, t, u);
	}
	pb_uint(b, PROFILE_PERIOD, 1);    /* every allocation is recorded: no sampling */

	snprintf(line, sizeof(line), "mprof-core: heap of %s from %s %s", pp->o->prog,
		 p->img->kind == CP_KIND_RAW ? "raw dump" : "core", p->image_path);
	if (comment(pp, cm, &ncm, line) < 0)
		return -1;
	snprintf(line, sizeof(line), "live: %s blocks, %s bytes in %s stacks (allocator frames stripped)",
		 fmt_num(a, st->blocks), fmt_num(c, st->bytes), fmt_num(d, st->n));
	if (comment(pp, cm, &ncm, line) < 0)
		return -1;
	if (stats)   /* what the samples add up to: the lines below say what they leave out */
		snprintf(line, sizeof(line), "alloc_*: every allocation since start, from libheapann's "
			 "statistics region (%s allocations, %s bytes)",
			 fmt_num(a, samples_sum(pp, V_ALLOC_OBJECTS)), fmt_num(c, samples_sum(pp, V_ALLOC_SPACE)));
	else
		snprintf(line, sizeof(line), "no statistics region in the image: inuse_* only");
	if (comment(pp, cm, &ncm, line) < 0)
		return -1;
	if (stats && p->stats.unrecorded_allocs) {
		snprintf(line, sizeof(line), "alloc_* leave out %s allocations (%s bytes) whose stacks "
			 "did not fit the statistics region: those stacks count their live blocks "
			 "as their allocations", fmt_num(a, p->stats.unrecorded_allocs),
			 fmt_num(c, p->stats.unrecorded_bytes));
		if (comment(pp, cm, &ncm, line) < 0)
			return -1;
	}
	if (p->scan.ndamaged) {
		snprintf(line, sizeof(line), "%s damaged headers skipped: their blocks are not counted "
			 "(mprof-core --report corruption)", fmt_num(a, p->scan.ndamaged));
		if (comment(pp, cm, &ncm, line) < 0)
			return -1;
	}
	if (st->ignored_blocks || pp->ignored_allocs) {
		char e[32], g[32];

		snprintf(line, sizeof(line), "--ignore-fn left out %s blocks, %s bytes (alloc_*: %s "
			 "allocations, %s bytes)", fmt_num(a, st->ignored_blocks), fmt_num(c, st->ignored_bytes),
			 fmt_num(e, pp->ignored_allocs), fmt_num(g, pp->ignored_bytes));
		if (comment(pp, cm, &ncm, line) < 0)
			return -1;
	}
	if (p->img->truncated || p->img->truncated_bytes) {
		snprintf(line, sizeof(line), "the image is truncated: %s bytes are missing, blocks there "
			 "are not counted", fmt_num(a, p->img->truncated_bytes));
		if (comment(pp, cm, &ncm, line) < 0)
			return -1;
	}
	for (size_t i = 0; i < ncm; i++)
		pb_uint(b, PROFILE_COMMENT, (uint64_t)cm[i]);
	if ((sp = str_index(pp, "inuse_space")) < 0)
		return -1;
	pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)sp);

	/* last: every string is known now; index 0 is "" */
	for (size_t i = 0; i < pp->nstrs; i++)
		pb_string(b, PROFILE_STRING_TABLE, pp->strs[i]);
	return b->failed ? -1 : 0;
}

/* gzip data[0..len) onto f. Returns 0, -1 on a write error (ferror(f) is set),
 * -2 when zlib fails (out of memory). */
static int gzip_write(FILE *f, const unsigned char *data, size_t len)
{
	unsigned char out[65536];
	z_stream z;
	int rc, ret = 0;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -2;
	z.next_in = (unsigned char *)data;
	do {
		/* avail_in is 32-bit: feed a large buffer in pieces */
		size_t left = len - (size_t)(z.next_in - data);
		int flush = left > (1u << 30) ? Z_NO_FLUSH : Z_FINISH;

		z.avail_in = (uInt)(left > (1u << 30) ? (1u << 30) : left);
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			rc = deflate(&z, flush);
			if (rc == Z_STREAM_ERROR) {
				ret = -2;
				goto done;
			}
			if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
				ret = -1;
				goto done;
			}
		} while (z.avail_out == 0);
	} while (rc != Z_STREAM_END);
done:
	deflateEnd(&z);
	return ret;
}

static void pprof_release(struct pprof *pp)
{
	for (size_t i = 0; i < pp->nstrs; i++)
		free(pp->strs[i]);
	free(pp->strs);
	htab_release(&pp->str_idx);
	free(pp->maps);
	umap_release(&pp->map_ids);
	free(pp->locs);
	umap_release(&pp->loc_ids);
	free(pp->funcs);
	umap_release(&pp->func_ids);
	free(pp->samples);
	htab_release(&pp->sample_idx);
	free(pp->locids);
	free(pp->stack_sample);
	free(pp->fr);
	free(pp->chain);
}

int export_pprof(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		 const struct an_stacks *st, const struct an_corrupt *c)
{
	struct pprof pp;
	struct pb_buf b;
	int rc = -1;
	const struct cp_mapping *main_mod;

	(void)c;
	memset(&pp, 0, sizeof(pp));
	pb_buf_init(&b);
	pp.o = o;
	pp.p = p;
	pp.stack_sample = calloc(p->scan.nstacks ? p->scan.nstacks : 1, sizeof(*pp.stack_sample));
	pp.fr = malloc(MAX_FRAMES * sizeof(*pp.fr));
	pp.chain = malloc((MAX_FRAMES + 1) * sizeof(*pp.chain));   /* + the cut location */
	if (!pp.stack_sample || !pp.fr || !pp.chain || str_index(&pp, "") != 0)
		goto oom;
	/* mapping[0] is the main program, by profile.proto's convention: its
	 * mapping that holds the entry point (the code, where its frames are) */
	for (size_t i = 0; i < p->img->nauxv; i++)
		if (p->img->auxv[2 * i] == AT_ENTRY &&
		    (main_mod = cp_image_mapping(p->img, p->img->auxv[2 * i + 1])) &&
		    !mapping_of_file(&pp, main_mod))
			goto oom;
	if (samples_build(&pp, st) < 0 || profile_encode(&pp, st, &b) < 0 || pp.oom)
		goto oom;
	switch (gzip_write(f, b.data, b.len)) {
	case 0:
		rc = 0;
		break;
	case -1:
		/* a write error: main reports it once it sees ferror(f) */
		break;
	default:
		fputs("mprof-core: out of memory compressing the pprof profile\n", stderr);
	}
	goto done;
oom:
	fputs("mprof-core: out of memory building the pprof profile\n", stderr);
done:
	pb_buf_release(&b);
	pprof_release(&pp);
	return rc;
}
