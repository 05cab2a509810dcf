/* real10_lmcycle.c MODE - run-real10: a corrupt list of ld.so's link maps
 * behind DT_DEBUG's r_debug, then abort. r_map is pointed at fake maps in a
 * freed block (heap outside live blocks, as libheapann's own maps are):
 * MODE 1, one map whose l_next is itself; MODE 2, two maps linked to each
 * other both ways; MODE 3, one map (l_next 0) and r_next pointing back at
 * r_debug itself (a namespace cycle). ld.so's own list (_ns_loaded) is left
 * alone. Prints the fake maps' address. */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern ElfW(Dyn) _DYNAMIC[];

int main(int argc, char **argv)
{
	int mode = argc > 1 ? atoi(argv[1]) : 1;
	uintptr_t *rd = NULL, *m;
	char *p;

	for (ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_DEBUG)
			rd = (uintptr_t *)d->d_un.d_ptr;
	if (!rd)
		return 2;
	p = malloc(512);
	free(p);   /* to glibc's bins (tcache's words at its start) */
	m = (uintptr_t *)(p + 128);
	memset(m, 0, 10 * sizeof(*m));
	/* l_addr, l_name, l_ld, l_next, l_prev */
	m[3] = (uintptr_t)m;
	if (mode == 2) {
		m[3] = (uintptr_t)(m + 5);
		m[4] = (uintptr_t)(m + 5);
		m[5 + 3] = (uintptr_t)m;
		m[5 + 4] = (uintptr_t)m;
	} else if (mode == 3) {
		m[3] = 0;
		*(int *)rd = 2;          /* r_version */
		rd[5] = (uintptr_t)rd;   /* r_next, after r_map, r_brk, r_state, r_ldbase */
	}
	rd[1] = (uintptr_t)m;            /* r_map */
	printf("%p\n", (void *)m);
	fflush(stdout);
	abort();
}
