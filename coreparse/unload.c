/* unload.c - decode libheapann's table of unloaded libraries (include/
 * heapann_unload.h), which the statistics region points at. Never trusts a
 * length or a count of the image: every field is checked against the bytes at
 * hand before it is used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_priv.h"
#include "cp_stats.h"

int cp_unload_decode(const unsigned char *p, uint64_t avail, uint64_t addr, unsigned w, int big,
		     struct cp_unload_table *out, char *why, size_t whycap)
{
	uint64_t hdr = (uint64_t)HEAPANN_UNLOAD_HDR_WORDS * w, rb = heapann_unload_rec_bytes(w);
	uint64_t cap, claimed, n;

	memset(out, 0, sizeof(*out));
	if (why && whycap)
		why[0] = '\0';
#define W(q, i) cp_decode((q) + (uint64_t)(i) * w, w, big)
	if ((w != 4 && w != 8) || !p || avail < hdr) {
		snprintf(why, whycap, "its header is not in the image");
		return -1;
	}
	if (W(p, HEAPANN_UH_MAGIC) != heapann_unload_magic(w) ||
	    W(p, HEAPANN_UH_VERSION) != HEAPANN_UNLOAD_VERSION) {
		snprintf(why, whycap, "no table there (wrong signature or version)");
		return -1;
	}
	cap = W(p, HEAPANN_UH_CAP);
	if (cap == 0 || cap > HEAPANN_UNLOAD_MAX_CAP || W(p, HEAPANN_UH_REC_BYTES) != rb ||
	    W(p, HEAPANN_UH_CHECK) != heapann_unload_check(addr, cap, rb, w)) {
		snprintf(why, whycap, "its header is damaged (capacity, record size or check word)");
		return -1;
	}
	claimed = W(p, HEAPANN_UH_CLAIMED);
	n = claimed < cap ? claimed : cap;
	if (avail - hdr < n * rb) {
		snprintf(why, whycap, "its %llu records are not all in the image",
			 (unsigned long long)n);
		return -1;
	}
	out->dropped = W(p, HEAPANN_UH_DROPPED);
	out->v = calloc(n + 1, sizeof(*out->v));
	if (!out->v)
		return -2;
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *r = p + hdr + i * rb;
		const unsigned char *id = r + (uint64_t)HEAPANN_UNLOAD_REC_WORDS * w;
		const char *path = (const char *)id + HEAPANN_UNLOAD_ID_MAX;
		const char *nul = memchr(path, '\0', HEAPANN_UNLOAD_PATH_MAX);
		struct cp_unloaded *u = &out->v[out->n];

		u->seq = W(r, HEAPANN_UR_SEQ);
		u->bias = W(r, HEAPANN_UR_BIAS);
		u->lo = W(r, HEAPANN_UR_LO);
		u->hi = W(r, HEAPANN_UR_HI);
		if (W(r, HEAPANN_UR_READY) != 1 || W(r, HEAPANN_UR_IDLEN) > HEAPANN_UNLOAD_ID_MAX ||
		    !nul || path[0] != '/' || u->lo >= u->hi || u->bias > u->lo) {
			out->skipped++;
			continue;
		}
		u->idlen = (unsigned)W(r, HEAPANN_UR_IDLEN);
		memcpy(u->id, id, u->idlen);
		memcpy(u->path, path, (size_t)(nul - path) + 1);
		out->n++;
	}
#undef W
	if (!out->n) {
		free(out->v);
		out->v = NULL;
	}
	return 0;
}
