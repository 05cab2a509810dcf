/* cfi.c - libheapann's own x86-64 unwinder: DWARF call-frame information read
 * once per return address into a compact rule, and the outer frames of a
 * thread's previous stack reused when they are provably unchanged.
 *
 * Why: libunwind's unw_backtrace costs 6-12 ns per frame; a program allocating
 * at depth 40 spent most of libheapann's time there, walking the same outer
 * frames again and again.
 *
 * The unwind state of a frame is (ip, sp, bp): its return address, the stack
 * pointer in it (the CFA of the frame below) and rbp. One step applies the rule
 * of ip (found in .eh_frame through .eh_frame_hdr, see ha_rule_find):
 *     cfa = (rule uses rbp ? bp : sp) + off
 *     ip' = *(cfa - 8)                       the return address slot
 *     bp' = rule saves rbp ? *(cfa + bpoff) : bp
 *     sp' = cfa
 * A step is a function of the state and of the (at most two) words it reads.
 * So when a capture reaches a state equal to one of the previous capture's on
 * this thread, and every word the previous capture read above that point still
 * holds the value it read, the rest of the walk would repeat the previous one
 * exactly: its frames are copied instead of stepped. Checking a word is one
 * load at a known address; the loads do not depend on each other. rbp is part
 * of the state only while a later step uses it (see ha_prev_verify).
 *
 * Rules cover what compilers emit at call sites: CFA = rsp or rbp plus a
 * constant, rbp saved at a CFA offset or untouched, the return address at
 * CFA-8. Anything else (signal frames, DWARF expressions, code outside every
 * loaded object, an object without .eh_frame_hdr) makes the capture go back to
 * libunwind for the whole stack (stack.c). Code inside an object that no FDE
 * covers (built with -fno-asynchronous-unwind-tables) is stepped through rbp
 * as a frame pointer, as gdb and valgrind do, in a second walk with every word
 * read through the thread's stack bounds or the kernel, when rbp + 8 holds a
 * return address (ha_walk_nofde, ha_step_fp); otherwise it ends the stack, as
 * libgcc's unwinder (glibc's backtrace()) ends it: ld.so's _dl_start_user,
 * the makecontext trampoline. */
#ifdef __linux__   /* the walker is x86-64 Linux only; the file builds empty elsewhere */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#endif
#include <stdint.h>
#include <string.h>

#include "internal.h"

#ifdef HA_CFI_STANDALONE
/* Built into a white-box test or a benchmark (tests/unit/t_cfi.c,
 * bench/unwind.c) without the rest of the library: the real allocator is
 * libc's, and the code generation and ld.so's range are left for the includer
 * to set (stack.c owns them in the library). */
#include <stdlib.h>
void *ha_real_malloc(size_t size) { return malloc(size); }
void ha_real_free(void *p) { free(p); }
unsigned ha_code_gen;
uintptr_t ha_ldso_lo, ha_ldso_len;
void ha_unwind_enter(void) {}
void ha_unwind_leave(void) {}
int ha_unwind_inside(void) { return 1; }
#endif

#if HA_HAVE_CFI

/* ---- rules ----------------------------------------------------------------- */

enum {
	HA_RULE_SP = 1,     /* CFA = sp + off */
	HA_RULE_BP = 2,     /* CFA = bp + off */
	HA_RULE_END = 3,    /* the return address is undefined: outermost frame */
	HA_RULE_BAD = 4,    /* not expressible: the caller falls back */
	HA_RULE_FP = 5,     /* code no FDE covers, after a call: try rbp as a frame pointer */
};

/* One return address's rule. */
struct ha_rule {
	int32_t off;        /* CFA offset from sp or bp: 8 .. 8 MiB, a multiple of 8 */
	int16_t bpoff;      /* where rbp is saved, from the CFA: -1024 .. -16, a multiple of 8 */
	uint8_t kind;       /* HA_RULE_* */
	uint8_t bpsaved;    /* 1: rbp restored from CFA + bpoff */
};

/* The rule cache: shared by all threads, direct-mapped on the return address.
 * A slot holds the address and its rule packed in one word: bits 0-19 off/8,
 * 20-27 bpoff/8, 28-30 kind, 31 bpsaved, 32-63 a tag of the address and of
 * the code generation (ha_code_gen: rules learnt before ld.so loaded a library
 * do not match after it, since the new one may sit where an unloaded one was).
 * Writers (a miss, rare) take a try-lock and skip caching when it is busy;
 * each writes ip=0, rule, ip. A reader believes a rule when the slot's ip is
 * its address and the word's tag is the one it computes: a slot rewritten
 * between its two loads holds another address's tag. */
#define HA_RULE_SLOTS (1u << 14)
static struct {
	uintptr_t ip;
	uint64_t rule;
} ha_rule_cache[HA_RULE_SLOTS];
static int ha_rule_lock;

/* Return addresses differ in their low bits; a shift and an xor keep the
 * look-up off the multiplier (it is on every step's critical path). */
static inline unsigned ha_rule_slot(uintptr_t ip)
{
	return (unsigned)(ip ^ ip >> 14) & (HA_RULE_SLOTS - 1);
}

/* The tag of IP's rule in code generation GEN (see above). */
static inline uint64_t ha_rule_tag(uintptr_t ip, unsigned gen)
{
	return ((ip ^ (uint64_t)gen << 47) * 0xC2B2AE3D27D4EB4FULL) >> 32;
}

static inline uint64_t ha_rule_pack(struct ha_rule r, uintptr_t ip, unsigned gen)
{
	return ((uint64_t)(uint32_t)(r.off / 8) & 0xfffff) |
	       ((uint64_t)(uint8_t)(int8_t)(r.bpoff / 8)) << 20 |
	       (uint64_t)(r.kind & 7) << 28 | (uint64_t)(r.bpsaved & 1) << 31 |
	       ha_rule_tag(ip, gen) << 32;
}

static inline struct ha_rule ha_rule_unpack(uint64_t w)
{
	struct ha_rule r;

	r.off = (int32_t)(w & 0xfffff) * 8;
	r.bpoff = (int16_t)((int8_t)(uint8_t)(w >> 20) * 8);
	r.kind = (uint8_t)(w >> 28 & 7);
	r.bpsaved = (uint8_t)(w >> 31 & 1);
	return r;
}

/* ---- reading .eh_frame_hdr and .eh_frame ----------------------------------- */

/* DW_EH_PE_* pointer encodings. */
enum {
	PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02, PE_udata4 = 0x03,
	PE_udata8 = 0x04, PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c, PE_pcrel = 0x10, PE_datarel = 0x30, PE_aligned = 0x50,
	PE_indirect = 0x80, PE_omit = 0xff,
};

/* A cursor over unwind data that is mapped (it is part of a loaded object);
 * END bounds every read so a malformed table cannot run away. */
struct ha_rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_uleb(struct ha_rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t rd_sleb(struct ha_rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	r->bad = 1;
	return 0;
}

/* N bytes little-endian, unsigned. */
static uint64_t rd_fixed(struct ha_rd *r, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* A pointer in encoding ENC; DATAREL is the base for PE_datarel. Indirect
 * pointers are read as their address (only the personality uses them, and it
 * is skipped). */
static uint64_t rd_ptr(struct ha_rd *r, uint8_t enc, uintptr_t datarel)
{
	uintptr_t here = (uintptr_t)r->p;
	uint64_t v;

	if (enc == PE_omit)
		return 0;
	if ((enc & 0x70) == PE_aligned) {
		uintptr_t a = (here + 7) & ~(uintptr_t)7;

		if (a > (uintptr_t)r->end) {
			r->bad = 1;
			return 0;
		}
		r->p = (const uint8_t *)a;
		return rd_fixed(r, 8);
	}
	switch (enc & 0x0f) {
	case PE_absptr: case PE_udata8: case PE_sdata8: v = rd_fixed(r, 8); break;
	case PE_udata2: v = rd_fixed(r, 2); break;
	case PE_sdata2: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
	case PE_udata4: v = rd_fixed(r, 4); break;
	case PE_sdata4: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
	case PE_uleb128: v = rd_uleb(r); break;
	case PE_sleb128: v = (uint64_t)rd_sleb(r); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_pcrel: v += here; break;
	case PE_datarel: v += datarel; break;
	default: r->bad = 1; return 0;
	}
	return v;
}

/* Find the FDE covering PC through the object's .eh_frame_hdr search table.
 * Returns the FDE's address (its length word) or NULL; *IN_OBJECT tells whether
 * PC is in a loaded object that has the table at all. Lock-free: glibc's
 * _dl_find_object (2.35) is async-signal-safe and takes no lock. */
static const uint8_t *ha_fde_find(uintptr_t pc, uintptr_t *hdr_base, int *in_object)
{
	struct dl_find_object fo;
	const uint8_t *hdr;
	struct ha_rd r;
	uint64_t count;
	const int32_t *tab;
	size_t lo, hi;

	*in_object = 0;
	if (_dl_find_object((void *)pc, &fo) != 0 || !fo.dlfo_eh_frame)
		return 0;
	hdr = fo.dlfo_eh_frame;
	*hdr_base = (uintptr_t)hdr;
	/* version 1; the table must be sorted datarel sdata4 pairs, as every
	 * linker writes it */
	if (hdr[0] != 1 || hdr[3] != (PE_datarel | PE_sdata4))
		return 0;
	r.p = hdr + 4;
	r.end = hdr + 4 + 16;
	r.bad = 0;
	(void)rd_ptr(&r, hdr[1], (uintptr_t)hdr);          /* eh_frame_ptr */
	count = rd_ptr(&r, hdr[2], (uintptr_t)hdr);
	if (r.bad || count == 0 || count > (1u << 28))
		return 0;
	*in_object = 1;
	tab = (const int32_t *)r.p;
	/* the last entry whose initial location is <= pc */
	lo = 0;
	hi = (size_t)count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)hdr + (intptr_t)tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uintptr_t)hdr + (intptr_t)tab[2 * lo] > pc)
		return 0;
	return (const uint8_t *)((uintptr_t)hdr + (intptr_t)tab[2 * lo + 1]);
}

/* What the CFA program says at the row of interest. */
struct ha_cfa_state {
	int cfa_reg;        /* DWARF register: 7 = rsp, 6 = rbp, else unusable */
	int64_t cfa_off;
	int bp_how;         /* 0 same value, 1 saved at CFA + bp_off, 2 anything else */
	int64_t bp_off;
	int ra_how;         /* 0 undefined, 1 saved at CFA + ra_off, 2 anything else */
	int64_t ra_off;
	int bad;            /* an expression, or the CFA on another register */
};

#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define HA_CFA_STACK 8

/* Record register REG's rule as "saved at CFA + OFF" (how 1), or another kind. */
static void ha_cfa_set(struct ha_cfa_state *s, uint64_t reg, int how, int64_t off)
{
	if (reg == DW_RBP) {
		s->bp_how = how;
		s->bp_off = off;
	} else if (reg == DW_RA) {
		s->ra_how = how;
		s->ra_off = off;
	} else if (reg == DW_RSP && how != 0) {
		s->bad = 1;   /* rsp restored from memory: not a plain frame */
	}
}

/* DW_CFA_restore: REG's rule back to the CIE's (INIT). Only rbp and the return
 * address are tracked; other registers' rules do not matter here. */
static void ha_cfa_restore(struct ha_cfa_state *s, uint64_t reg, const struct ha_cfa_state *init)
{
	if (reg == DW_RBP) {
		s->bp_how = init->bp_how;
		s->bp_off = init->bp_off;
	} else if (reg == DW_RA) {
		s->ra_how = init->ra_how;
		s->ra_off = init->ra_off;
	}
}

/* Run the CFA program [P, END) until the location passes TARGET. LOC is the
 * program's start address; INIT is the CIE's state (for DW_CFA_restore).
 * Returns 1 when TARGET was passed (the state is TARGET's row), 0 at the end
 * of the program, -1 on anything unsupported. */
static int ha_cfa_run(struct ha_rd *r, uintptr_t *loc, uintptr_t target, uint64_t caf,
		      int64_t daf, struct ha_cfa_state *s, const struct ha_cfa_state *init)
{
	struct ha_cfa_state stack[HA_CFA_STACK];
	unsigned sp = 0;

	while (r->p < r->end && !r->bad && !s->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op >> 6) {
		case 1:
			delta = (op & 0x3f) * caf;
			goto advance;
		case 2:
			off = (int64_t)rd_uleb(r) * daf;
			ha_cfa_set(s, op & 0x3f, 1, off);
			continue;
		case 3:
			if (!init)
				return -1;
			ha_cfa_restore(s, op & 0x3f, init);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x02: delta = rd_fixed(r, 1) * caf; goto advance;
		case 0x03: delta = rd_fixed(r, 2) * caf; goto advance;
		case 0x04: delta = rd_fixed(r, 4) * caf; goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(r);
			off = (int64_t)rd_uleb(r) * daf;
			ha_cfa_set(s, reg, 1, off);
			continue;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(r);
			off = rd_sleb(r) * daf;
			ha_cfa_set(s, reg, 1, off);
			continue;
		case 0x06: /* restore_extended */
			reg = rd_uleb(r);
			if (!init)
				return -1;
			ha_cfa_restore(s, reg, init);
			continue;
		case 0x07: /* undefined */
			reg = rd_uleb(r);
			if (reg == DW_RA)
				s->ra_how = 0;
			else
				ha_cfa_set(s, reg, 2, 0);
			continue;
		case 0x08: /* same_value */
			reg = rd_uleb(r);
			ha_cfa_set(s, reg, reg == DW_RBP ? 0 : 2, 0);
			continue;
		case 0x09: /* register */
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf (an sleb skips as a uleb does) */
			reg = rd_uleb(r);
			(void)rd_uleb(r);
			ha_cfa_set(s, reg, 2, 0);
			continue;
		case 0x0a: /* remember_state */
			if (sp == HA_CFA_STACK)
				return -1;
			stack[sp++] = *s;
			continue;
		case 0x0b: /* restore_state (the CFA rule is part of the row too) */
			if (sp == 0)
				return -1;
			*s = stack[--sp];
			continue;
		case 0x0c: /* def_cfa */
			s->cfa_reg = (int)rd_uleb(r);
			s->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = (int)rd_uleb(r);
			s->cfa_off = rd_sleb(r) * daf;
			continue;
		case 0x0d: /* def_cfa_register */
			s->cfa_reg = (int)rd_uleb(r);
			continue;
		case 0x0e: /* def_cfa_offset */
			s->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x13: /* def_cfa_offset_sf */
			s->cfa_off = rd_sleb(r) * daf;
			continue;
		case 0x0f: /* def_cfa_expression */
			s->bad = 1;
			continue;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = rd_uleb(r);
			{
				uint64_t n = rd_uleb(r);

				if (n > (uint64_t)(r->end - r->p))
					return -1;
				r->p += n;
			}
			ha_cfa_set(s, reg, 2, 0);
			continue;
		case 0x2e: /* GNU_args_size */
			(void)rd_uleb(r);
			continue;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(r);
			off = -(int64_t)rd_uleb(r) * daf;
			ha_cfa_set(s, reg, 1, off);
			continue;
		default: /* set_loc and anything newer */
			return -1;
		}
advance:
		if (*loc + delta > target)
			return 1;
		*loc += delta;
	}
	return r->bad || s->bad ? -1 : 0;
}

/* Open FDE (of the table at HDR): *R at its initial location field, *C at its
 * CIE's initial instructions, the CIE's code and data alignment factors, the
 * FDE pointer encoding and whether the augmentation has 'z'. Returns 0, or
 * -1 for what the walker does not read (a signal frame's 'S', a malformed
 * entry). */
static int ha_fde_open(const uint8_t *fde, uintptr_t hdr, struct ha_rd *r, struct ha_rd *c,
		       uint64_t *caf, int64_t *daf, uint8_t *fde_enc, int *has_z)
{
	uint64_t len = *(const uint32_t *)fde, clen;
	const uint8_t *cie, *aug;
	uint8_t version;

	*fde_enc = PE_absptr;
	*has_z = 0;
	if (len == 0 || len == 0xffffffffu)
		return -1;
	r->p = fde + 4;
	r->end = fde + 4 + len;
	r->bad = 0;
	cie = r->p - *(const uint32_t *)r->p;   /* CIE pointer: back from this field */
	r->p += 4;
	clen = *(const uint32_t *)cie;
	if (clen == 0 || clen == 0xffffffffu || *(const uint32_t *)(cie + 4) != 0)
		return -1;
	c->p = cie + 8;
	c->end = cie + 4 + clen;
	c->bad = 0;
	version = *c->p++;
	if (version != 1 && version != 3)
		return -1;
	aug = c->p;
	while (c->p < c->end && *c->p)
		c->p++;
	c->p++;
	*caf = rd_uleb(c);
	*daf = rd_sleb(c);
	if (version == 1)
		(void)rd_fixed(c, 1);
	else
		(void)rd_uleb(c);   /* return address column: 16 */
	for (const uint8_t *a = aug; *a && !c->bad; a++) {
		if (*a == 'z') {
			(void)rd_uleb(c);
			*has_z = 1;
		} else if (*a == 'P') {
			uint8_t enc = (uint8_t)rd_fixed(c, 1);

			(void)rd_ptr(c, enc & 0x7f, hdr);
		} else if (*a == 'L') {
			(void)rd_fixed(c, 1);
		} else if (*a == 'R') {
			*fde_enc = (uint8_t)rd_fixed(c, 1);
		} else {
			return -1;   /* 'S' (signal frame), or unknown */
		}
	}
	return c->bad ? -1 : 0;
}

/* Does the function whose FDE covers IP - 1 end right at IP? Then IP follows
 * its last instruction, a call that never returns (abort, a sanitizer's
 * report): no return address, but the first byte of the next function, where
 * a function pointer points. 0 when not, or when no FDE says. */
static int ha_fde_ends_at(uintptr_t ip)
{
	uintptr_t hdr, start, range;
	int in_object, has_z;
	const uint8_t *fde = ha_fde_find(ip - 1, &hdr, &in_object);
	struct ha_rd r, c;
	uint64_t caf;
	int64_t daf;
	uint8_t enc;

	if (!fde || ha_fde_open(fde, hdr, &r, &c, &caf, &daf, &enc, &has_z) < 0)
		return 0;
	start = (uintptr_t)rd_ptr(&r, enc, hdr);
	range = (uintptr_t)rd_ptr(&r, enc & 0x0f, hdr);
	return !r.bad && ip - 1 >= start && ip - start == range;
}

/* Is [LO, HI) inside one executable segment of a loaded object? Lock-free
 * (the walk may run inside malloc while another thread holds ld.so's locks
 * and waits for a fork that waits for this walk): _dl_find_object gives the
 * object, whose ELF header and program headers are in its first page (every
 * object ld.so maps starts with them); an object laid out otherwise counts
 * as no code. An address of an object unloaded since is in none. */
static int ha_code_span(uintptr_t lo, uintptr_t hi)
{
	struct dl_find_object fo;
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	uintptr_t bias;

	if (lo >= hi || _dl_find_object((void *)lo, &fo) != 0 || !fo.dlfo_link_map)
		return 0;
	eh = (const ElfW(Ehdr) *)fo.dlfo_map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff < sizeof(*eh) ||
	    eh->e_phoff + (uintptr_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
		return 0;
	ph = (const ElfW(Phdr) *)((uintptr_t)eh + eh->e_phoff);
	bias = fo.dlfo_link_map->l_addr;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t s0 = bias + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && lo >= s0 &&
		    hi - s0 <= ph[i].p_filesz)
			return 1;
	}
	return 0;
}

/* Does the code before IP end with a call instruction? The forms compilers
 * emit: call rel32 (e8), and call through a register or memory (ff /2, with a
 * ModRM of 1 to 6 bytes, a REX prefix or not). Reads the 7 bytes before IP:
 * the caller knows they are mapped. */
static int ha_code_after_call(uintptr_t ip)
{
	const uint8_t *p = (const uint8_t *)ip;

	if (p[-5] == 0xe8)
		return 1;
	/* ff /2: the opcode 2 to 7 bytes back, its ModRM's reg field 2, and the
	 * length the ModRM implies ending right at IP */
	for (int n = 2; n <= 7; n++) {
		uint8_t m = p[-n + 1], mod = m >> 6, rm = m & 7;
		int len = 2;

		if (p[-n] != 0xff || (m & 0x38) != 0x10)
			continue;
		if (mod == 0 && rm == 5)
			len += 4;                     /* rip + disp32 */
		else if (mod != 3 && rm == 4)         /* a SIB byte, then disp8/32 */
			len += 1 + (mod == 1 ? 1 : mod == 2 || (p[-n + 2] & 7) == 5 ? 4 : 0);
		else if (mod == 1)
			len += 1;
		else if (mod == 2)
			len += 4;
		if (len == n)
			return 1;
	}
	return 0;
}

/* Can IP be a return address: is it in a loaded object's code, after a call
 * instruction that is not the last of its function? Reads the 7 bytes before
 * IP only once ha_code_span says they are code: IP may come from a
 * frame-pointer step, from any word of a stack. */
static int ha_after_call(uintptr_t ip)
{
	return ip >= 4096 + 7 && ha_code_span(ip - 7, ip) && ha_code_after_call(ip) &&
	       !ha_fde_ends_at(ip);
}

/* The rule of an address inside an object's code that no FDE covers. Code
 * built without unwind tables (-fno-asynchronous-unwind-tables) is stepped
 * with rbp as a frame pointer, as gdb and valgrind do, when IP follows a call
 * (HA_RULE_FP; ha_step_fp checks rbp). Otherwise it is where libgcc's unwinder
 * (so glibc's backtrace()) ends the stack: the makecontext trampoline, whose
 * return address makecontext wrote without a call. */
static struct ha_rule ha_rule_nofde(uintptr_t ip)
{
	struct ha_rule rule = { 0, 0, HA_RULE_FP, 0 };   /* ha_step_fp knows the rest */

	if (!ha_after_call(ip))
		rule.kind = HA_RULE_END;
	return rule;
}

/* Work out the rule for return address IP from the unwind tables: see
 * ha_rule_nofde for an address inside an object's code that no FDE covers.
 * An address in no object at all (generated code) is left to libunwind
 * (HA_RULE_BAD). */
static __attribute__((noinline, cold)) struct ha_rule ha_rule_find(uintptr_t ip)
{
	struct ha_rule rule = { 0, 0, HA_RULE_BAD, 0 };
	struct ha_cfa_state s, init;
	uintptr_t hdr, pc = ip - 1, loc, start, range;
	int in_object;
	const uint8_t *fde = ha_fde_find(pc, &hdr, &in_object);
	struct ha_rd r;
	uint64_t caf;
	int64_t daf;
	uint8_t fde_enc;
	int has_z, res;

	if (!fde)
		return in_object ? ha_rule_nofde(ip) : rule;
	/* the CIE */
	{
		struct ha_rd c;

		if (ha_fde_open(fde, hdr, &r, &c, &caf, &daf, &fde_enc, &has_z) < 0 || !has_z)
			return rule;
		memset(&init, 0, sizeof(init));
		init.cfa_reg = -1;
		init.ra_how = 2;
		loc = 0;
		/* the CIE's initial instructions: no location advances expected */
		if (ha_cfa_run(&c, &loc, UINTPTR_MAX, caf, daf, &init, 0) != 0)
			return rule;
	}
	start = (uintptr_t)rd_ptr(&r, fde_enc, hdr);
	range = (uintptr_t)rd_ptr(&r, fde_enc & 0x0f, hdr);
	if (r.bad)
		return rule;
	if (pc < start || pc - start >= range)
		return ha_rule_nofde(ip);   /* between two functions' FDEs */
	if (has_z) {
		uint64_t n = rd_uleb(&r);

		if (n > (uint64_t)(r.end - r.p))
			return rule;
		r.p += n;
	}
	s = init;
	loc = start;
	res = ha_cfa_run(&r, &loc, pc, caf, daf, &s, &init);
	if (res < 0 || s.bad)
		return rule;
	if (s.ra_how == 0) {
		rule.kind = HA_RULE_END;
		return rule;
	}
	if (s.ra_how != 1 || s.ra_off != -8 || s.bp_how == 2 ||
	    (s.cfa_reg != DW_RSP && s.cfa_reg != DW_RBP) ||
	    s.cfa_off < 8 || s.cfa_off >= (1 << 23) || (s.cfa_off & 7) ||
	    (s.bp_how == 1 && (s.bp_off < -1024 || s.bp_off > -16 || (s.bp_off & 7))))
		return rule;
	rule.kind = s.cfa_reg == DW_RSP ? HA_RULE_SP : HA_RULE_BP;
	rule.off = (int32_t)s.cfa_off;
	rule.bpsaved = s.bp_how == 1;
	rule.bpoff = (int16_t)s.bp_off;
	return rule;
}

/* A miss: the rule of IP from the tables, cached in slot I. Out of line, so
 * the walk's loop keeps its registers. */
static __attribute__((noinline, cold)) struct ha_rule ha_rule_miss(uintptr_t ip, unsigned gen,
								  unsigned i)
{
	struct ha_rule r = ha_rule_find(ip);

	if (!__atomic_exchange_n(&ha_rule_lock, 1, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&ha_rule_cache[i].ip, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ha_rule_cache[i].rule, ha_rule_pack(r, ip, gen), __ATOMIC_RELEASE);
		__atomic_store_n(&ha_rule_cache[i].ip, ip, __ATOMIC_RELEASE);
		__atomic_store_n(&ha_rule_lock, 0, __ATOMIC_RELEASE);
	}
	return r;
}

/* The rule of IP in code generation GEN, from the cache or the tables. */
static inline struct ha_rule ha_rule_get(uintptr_t ip, unsigned gen)
{
	unsigned i = ha_rule_slot(ip);

	if (__builtin_expect(__atomic_load_n(&ha_rule_cache[i].ip, __ATOMIC_ACQUIRE) == ip, 1)) {
		uint64_t w = __atomic_load_n(&ha_rule_cache[i].rule, __ATOMIC_ACQUIRE);

		if (__builtin_expect(w >> 32 == ha_rule_tag(ip, gen), 1))
			return ha_rule_unpack(w);
	}
	return ha_rule_miss(ip, gen, i);
}

/* ---- the walk, with the previous stack of the thread ---------------------- */

/* Frames as columns: frame j's state is (ip[j], sp[j], bp[j]); bps[j] is the
 * rbp slot its step read (0: none), with bit 0 set when its CFA was rbp-based
 * (HA_BPS_CFA). Columns, so that copying the ips out and checking the slots
 * are straight runs over memory. */
#define HA_BPS_CFA ((uintptr_t)1)
struct ha_cols {
	uintptr_t *ip, *sp, *bp, *bps;
};

/* A thread's own small cache of rules in front of the shared one: direct-mapped
 * on the return address, rules unpacked, no tag (only this thread writes it;
 * it is emptied when the code generation moves). */
#define HA_RC_SLOTS 512u
struct ha_rc {
	uintptr_t ip;       /* 0: empty */
	struct ha_rule rule;
};

/* Return addresses a thread's frame-pointer steps remember (ha_ra_ok). */
#define HA_RA_SLOTS 256u

/* Frames walked before a match with the previous stack is looked for no more. */
#define HA_SCRATCH 32

/* A thread's previous capture, anchored at the end of its columns: the
 * outermost frame at index cap-1, the innermost at index s, so frame j is at
 * s + j and there are cap - s frames. A capture that joins it at index i
 * writes its new inner frames just below i: the reused outer frames, and what
 * is noted about them, stay where they are. COMPLETE when the walk ended at
 * the outermost frame rather than at its limit. */
struct ha_prev {
	unsigned cap, s;
	int complete;
	unsigned gen;       /* ha_code_gen when it was taken */
	struct ha_cols c;
	/* What verifying the frame at index j must check besides its return
	 * address: the rbp slot that the step of the frame below (j-1) read when
	 * a later step still uses the value (else 0); bit 0 says whether rbp is
	 * used at j. Known for indices [chk_lo, cap): worked out by a verify and
	 * kept while the frames at and above chk_lo stay (a join at i keeps
	 * those above i), so that reused frames are checked in a straight loop. */
	uintptr_t *chk;
	unsigned chk_lo;
	/* The rbp slots among those notes, for a check that skips the frames
	 * without one: index, slot and the value it must hold, by index from
	 * the outermost (so those of frames a join replaces are at the end). */
	struct ha_slot {
		uintptr_t slot, val;
		unsigned idx;
	} *sl;
	unsigned nsl;
	unsigned rc_gen;    /* the code generation of the rules in rc */
	/* The new walk's first frames, before it joins the record or replaces
	 * it (their ips go to the caller's OUT): here rather than on the walk's
	 * stack, so that the walk reaches them at fixed offsets from the record
	 * instead of keeping three addresses (issue 15, capture7) */
	uintptr_t scr_sp[HA_SCRATCH], scr_bp[HA_SCRATCH], scr_bps[HA_SCRATCH];
	struct ha_rc rc[HA_RC_SLOTS];
	/* return addresses a frame-pointer step checked (ha_ra_ok), in code
	 * generation rc_gen: ip, and 1 + whether it can be one (0: empty) */
	struct ha_ra {
		uintptr_t ip;
		uintptr_t ok;
	} ra[HA_RA_SLOTS];
	uintptr_t data[];   /* the four columns and chk, CAP words each (sp one more:
			     * sp[cap] is UINTPTR_MAX), then sl */
};

static __thread struct ha_prev *ha_prev_mine;
static pthread_key_t ha_prev_key;
static int ha_prev_key_ok;

/* Thread exit (the key's destructor, run by the exiting thread itself). A
 * malloc from a later destructor makes a new record, and glibc calls this
 * again for it. */
static void ha_prev_release(void *p)
{
	if (ha_prev_mine == p)
		ha_prev_mine = 0;
	ha_real_free(p);
}

/* This thread's previous-stack record with room for CAP frames, or NULL. */
static struct ha_prev *ha_prev_get(unsigned cap)
{
	struct ha_prev *p = ha_prev_mine;

	if (__builtin_expect(p && p->cap >= cap, 1))
		return p;
	if (!ha_prev_key_ok)
		return 0;
	if (p)
		ha_real_free(p);
	p = ha_real_malloc(sizeof(*p) + (5 * (size_t)cap + 1) * sizeof(uintptr_t) +
			   (size_t)cap * sizeof(struct ha_slot));
	ha_prev_mine = p;
	pthread_setspecific(ha_prev_key, p);
	if (p) {
		p->cap = cap;
		p->s = cap;
		p->complete = 0;
		p->c.ip = p->data;
		p->c.sp = p->data + cap;
		p->c.sp[cap] = UINTPTR_MAX;   /* ends the search for a join */
		p->c.bp = p->data + 2 * (size_t)cap + 1;
		p->c.bps = p->data + 3 * (size_t)cap + 1;
		p->chk = p->data + 4 * (size_t)cap + 1;
		p->chk_lo = cap;
		p->sl = (struct ha_slot *)(p->data + 5 * (size_t)cap + 1);
		p->nsl = 0;
		p->rc_gen = 0;
		memset(p->rc, 0, sizeof(p->rc));
		memset(p->ra, 0, sizeof(p->ra));
	}
	return p;
}

void ha_cfi_init(void)
{
	ha_prev_key_ok = pthread_key_create(&ha_prev_key, ha_prev_release) == 0;
}

/* A miss in the thread's cache: the rule from the shared cache or the tables,
 * kept in E. Out of line, so the walk's loop keeps its registers. The only part
 * of the walk that a fork() must wait for (the shared cache's try-lock,
 * _dl_find_object, the tables of an object being unloaded): the rest reads the
 * thread's own record and stack. cfi-verify's walk is inside already. */
static __attribute__((noinline)) struct ha_rule ha_rc_miss(struct ha_rc *e, uintptr_t ip,
							   unsigned gen)
{
	int inside = ha_unwind_inside();

	if (!inside)
		ha_unwind_enter();
	e->rule = ha_rule_get(ip, gen);
	e->ip = ip;
	if (!inside)
		ha_unwind_leave();
	return e->rule;
}

/* The rule of IP in the code generation of PV's cache (pv->rc_gen, which the
 * walk made the current one at its start: read from the record on a miss, so
 * that the walk does not keep the generation in a register or spill it). */
static inline struct ha_rule ha_rc_get(struct ha_prev *pv, uintptr_t ip)
{
	struct ha_rc *e = &pv->rc[(ip ^ ip >> 9) & (HA_RC_SLOTS - 1)];

	if (__builtin_expect(e->ip == ip, 1))
		return e->rule;
	return ha_rc_miss(e, ip, pv->rc_gen);
}

/* Frames stepped and frames copied from the previous stack, counted only when
 * a white-box test includes this file with HA_CFI_COUNT defined. */
#ifdef HA_CFI_COUNT
static unsigned long ha_cfi_stepped, ha_cfi_copied;
#define HA_COUNT(var, n) ((var) += (n))
#else
#define HA_COUNT(var, n) ((void)0)
#endif

/* The walk reads stack words of other frames by design (in a white-box test
 * built with AddressSanitizer, some of them are in redzones of frames above). */
#define HA_RAW_STACK __attribute__((no_sanitize_address))

/* The OR of the differences between the record PV and the stack above index
 * I: the return addresses of its frames above I, eight frames a round (the
 * loop's own count and test are then a fraction of an instruction a frame),
 * then the listed rbp slots above I. 0 when all hold. This is everything
 * ha_prev_verify checks once the slots that matter are known above I
 * (PV->chk_lo <= I + 1), the common case of a join (the record was verified
 * there before). Inline in ha_join, whose registers the noting in
 * ha_prev_verify would otherwise take (issue 15, capture7). Reads only. */
static inline __attribute__((always_inline)) HA_RAW_STACK
uintptr_t ha_prev_check_above(const struct ha_prev *pv, unsigned i)
{
	const uintptr_t *const *spp = (const uintptr_t *const *)pv->c.sp + i + 1;
	const uintptr_t *ipp = pv->c.ip + i + 1;
	const struct ha_slot *e = pv->sl, *end = e + pv->nsl;
	size_t n = pv->cap - 1 - i, j = 0;
	uintptr_t bad = 0;

	/* eight frames a round with one index, then four, then one at a time:
	 * the loop's own work is a fraction of an instruction a frame */
#define HA_RA_DIFF(j) (spp[j][-1] ^ ipp[j])
	for (; j + 8 <= n; j += 8)
		bad |= HA_RA_DIFF(j) | HA_RA_DIFF(j + 1) | HA_RA_DIFF(j + 2) | HA_RA_DIFF(j + 3) |
		       HA_RA_DIFF(j + 4) | HA_RA_DIFF(j + 5) | HA_RA_DIFF(j + 6) | HA_RA_DIFF(j + 7);
	if (n - j >= 4) {
		bad |= HA_RA_DIFF(j) | HA_RA_DIFF(j + 1) | HA_RA_DIFF(j + 2) | HA_RA_DIFF(j + 3);
		j += 4;
	}
	for (; j < n; j++)
		bad |= HA_RA_DIFF(j);
#undef HA_RA_DIFF
	for (; e < end && e->idx > i; e++)
		bad |= *(const uintptr_t *)e->slot ^ e->val;
	return bad;
}

/* Would the previous walk's frames above index I be walked again from there?
 * Every word those steps read must still hold what they read: each return
 * address, and each saved rbp that a later step still uses (an rbp-based CFA
 * before the next reload; code without frame pointers keeps anything in rbp, a
 * loop counter say, and what it held does not change the walk). Which slots
 * those are is known from pv->chk for indices from chk_lo on; below that it is
 * worked out here (outermost first, since whether rbp is still used at a frame
 * depends on the frames above it) and noted for the next time.
 * The way of a join below chk_lo - 1, out of line: noting the frames takes
 * registers that the common way needs. Notes the slots of frames I+1 ..
 * chk_lo-1 in PV and sets chk_lo to I + 1. Returns 1 when the frames above I
 * would be walked again, 0 when not. */
static __attribute__((noinline)) HA_RAW_STACK int ha_prev_verify(struct ha_prev *pv, unsigned i)
{
	const uintptr_t *ip = pv->c.ip, *sp = pv->c.sp, *bp = pv->c.bp, *bps = pv->c.bps;
	uintptr_t *chk = pv->chk, bad;
	unsigned j, lo = pv->chk_lo, used, stop = lo - 1 > i ? lo - 1 : i;

	/* the slots that matter are known above stop (the listed rbp slots are
	 * all at chk_lo or above, so those above stop are those above i); none
	 * when the record was never checked (chk_lo = cap, the common case) */
	bad = lo < pv->cap ? ha_prev_check_above(pv, stop) : 0;
	j = stop;
	if (stop == i)
		return bad == 0;
	/* is bp[j+1] used? (past the end: a walk resumes from the last frame) */
	used = j + 1 < pv->cap ? (unsigned)(chk[j + 1] & 1) : !pv->complete;
	for (; j > i; j--) {
		uintptr_t slot = bps[j - 1] & ~HA_BPS_CFA;

		used = (bps[j] & HA_BPS_CFA) || (used && !(bps[j] & ~HA_BPS_CFA));
		bad |= ((const uintptr_t *)sp[j])[-1] ^ ip[j];
		chk[j] = (used ? slot : 0) | used;
		if (slot && used) {
			struct ha_slot *n = &pv->sl[pv->nsl++];

			n->slot = slot;
			n->val = bp[j];
			n->idx = j;
			bad |= *(const uintptr_t *)slot ^ bp[j];
		}
	}
	pv->chk_lo = i + 1;
	return bad == 0;
}

/* Does the previous walk from index I on depend on rbp's value at I? Only if a
 * frame's CFA is rbp-based before some frame reloads rbp from its slot (or the
 * walk would resume past the record's end). A state that differs only in an
 * rbp nobody uses must still match. */
static int ha_prev_needs_bp(const struct ha_prev *pv, unsigned i)
{
	for (unsigned j = i; j < pv->cap; j++) {
		if (pv->c.bps[j] & HA_BPS_CFA)
			return 1;
		if (pv->c.bps[j])
			return 0;
	}
	return !pv->complete;
}

/* Move frames [FROM, FROM+N) of every column to TO. */
static void ha_cols_move(struct ha_cols *c, unsigned to, unsigned from, unsigned n)
{
	memmove(c->ip + to, c->ip + from, n * sizeof(uintptr_t));
	memmove(c->sp + to, c->sp + from, n * sizeof(uintptr_t));
	memmove(c->bp + to, c->bp + from, n * sizeof(uintptr_t));
	memmove(c->bps + to, c->bps + from, n * sizeof(uintptr_t));
}

/* Copy frames [0, N) of every column of S to index TO of D. N is small (the
 * new inner frames of a capture): a plain loop beats four calls to memcpy. */
static inline void ha_cols_put(const struct ha_cols *d, unsigned to, const struct ha_cols *s,
			       unsigned n)
{
	uintptr_t *restrict ip = d->ip + to, *restrict sp = d->sp + to;
	uintptr_t *restrict bp = d->bp + to, *restrict bps = d->bps + to;
	const uintptr_t *restrict sip = s->ip, *restrict ssp = s->sp;
	const uintptr_t *restrict sbp = s->bp, *restrict sbps = s->bps;

	for (unsigned j = 0; j < n; j++) {
		ip[j] = sip[j];
		sp[j] = ssp[j];
		bp[j] = sbp[j];
		bps[j] = sbps[j];
	}
}

/* One frame's unwind state while walking. */
struct ha_state {
	uintptr_t ip, sp, bp;
};

/* What a step found (ha_step). */
enum {
	HA_STEP_ON,     /* the caller's frame is in S */
	HA_STEP_END,    /* S was the outermost frame */
	HA_STEP_ZERO,   /* the return address read was 0 */
	HA_STEP_BAD,    /* a frame the walker cannot step: the capture fails, unless
			 * its code has no FDE (ha_walk_nofde) */
	HA_STEP_SIGNAL, /* a frame-pointer step reached a signal frame: the capture
			 * fails (libunwind reads signal frames) */
};

/* This thread's own stack, [ha_stk_lo, ha_stk_hi): learnt at its first
 * frame-pointer step (ha_stk_state 0 not yet, 1 known, -1 not known; learnt
 * again once when a walk starts below ha_stk_lo, as the main thread's stack
 * grows). Read by the frame-pointer steps only. */
static HA_TLS uintptr_t ha_stk_lo, ha_stk_hi;
static HA_TLS int ha_stk_state;
static HA_TLS unsigned ha_stk_relearn;

/* The mapping holding A, from /proc/self/maps read with system calls alone
 * (no allocation, no lock: this runs inside malloc), into [*LO, *HI). Returns
 * 0 when a readable mapping holds it. */
static int ha_vma_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), found = -1;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(line, '\n'))) {
			uintptr_t s0 = 0, e0 = 0;
			const char *q = line;

			while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'))
				s0 = s0 * 16 + (uintptr_t)(*q <= '9' ? *q - '0' : *q - 'a' + 10), q++;
			if (*q++ == '-') {
				while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'))
					e0 = e0 * 16 + (uintptr_t)(*q <= '9' ? *q - '0' : *q - 'a' + 10), q++;
				if (a >= s0 && a < e0) {
					*lo = s0;
					*hi = e0;
					found = q[0] == ' ' && q[1] == 'r' ? 0 : -1;
					goto done;
				}
			}
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);   /* a line cut by the read */
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			break;   /* a line longer than the buffer: give up */
	}
done:
	close(fd);
	return found;
}

/* Learn this thread's own stack. The main thread's is the mapping holding
 * __libc_stack_end; another thread's runs up to its thread pointer, where
 * glibc puts struct pthread at the top of the thread's stack block (also of a
 * stack the program gave it), in the mapping that holds it. */
static void ha_stack_learn(void)
{
	extern void *__libc_stack_end;
	uintptr_t tp = ha_thread_pointer(), lo, hi;

	ha_stk_state = -1;
	if (syscall(SYS_gettid) == getpid()) {
		if (ha_vma_of((uintptr_t)__libc_stack_end, &lo, &hi) == 0) {
			ha_stk_lo = lo;
			ha_stk_hi = hi;
			ha_stk_state = 1;
		}
	} else if (ha_vma_of(tp - 1, &lo, &hi) == 0) {
		ha_stk_lo = lo;
		ha_stk_hi = tp;
		ha_stk_state = 1;
	}
}

/* Where a walk through frame-pointer steps may read without asking the
 * kernel: from the stack pointer of its first frame (SP0: the memory between
 * it and the top of its stack is in use, so mapped) to the top of this
 * thread's own stack; empty when SP0 is on another stack (a coroutine's, a
 * signal handler's alternate one). */
struct ha_bounds {
	uintptr_t lo, hi;
	/* pages the kernel read from during this walk: mapped for the rest of it
	 * (the thread runs on that stack; nothing else of it runs meanwhile) */
	uintptr_t page[4];
	unsigned npage;
};

static struct ha_bounds ha_bounds_of(uintptr_t sp0)
{
	struct ha_bounds b = { 0, 0, { 0, 0, 0, 0 }, 0 };

	if (!ha_stk_state || (ha_stk_state == 1 && sp0 < ha_stk_lo && ha_stk_lo - sp0 < (256u << 20) &&
			      ha_stk_relearn < 64)) {
		/* the first time, or the main stack grew: at most 64 times more
		 * (a coroutine's stack just below would ask on every walk) */
		ha_stk_relearn += ha_stk_state != 0;
		ha_stack_learn();
	}
	if (ha_stk_state == 1 && sp0 >= ha_stk_lo && sp0 < ha_stk_hi) {
		b.lo = sp0;
		b.hi = ha_stk_hi;
	}
	return b;
}

/* Copy N bytes at ADDR of this process to BUF through the kernel, which
 * refuses an address that is not mapped readable. Returns 0 when all N were
 * read. */
static int ha_read_mine(void *buf, uintptr_t addr, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)addr, n };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* Read the word at ADDR into *W: directly inside B or a page of it the
 * kernel read from, else through the kernel (then that page is noted).
 * Returns 0, or -1 when it is not mapped (or not aligned). */
static HA_RAW_STACK int ha_read_word(struct ha_bounds *b, uintptr_t addr, uintptr_t *w)
{
	uintptr_t pg = addr & ~(uintptr_t)4095;

	if (addr & (sizeof(uintptr_t) - 1))
		return -1;
	if (addr >= b->lo && addr < b->hi && b->hi - addr >= sizeof(uintptr_t)) {
		*w = *(const uintptr_t *)addr;
		return 0;
	}
	for (unsigned i = 0; i < b->npage && i < 4; i++)
		if (b->page[i] == pg) {
			*w = *(const uintptr_t *)addr;
			return 0;
		}
	if (ha_read_mine(w, addr, sizeof(*w)) < 0)
		return -1;
	b->page[b->npage++ % 4] = pg;
	return 0;
}

/* ha_after_call(IP), remembered in PV for the thread's code generation; a
 * remembered yes holds only while some loaded object holds IP (a library is
 * not a new generation when it is unloaded, only when one is loaded). */
static int ha_ra_ok(struct ha_prev *pv, uintptr_t ip)
{
	struct ha_ra *e = &pv->ra[(ip ^ ip >> 8) & (HA_RA_SLOTS - 1)];
	struct dl_find_object fo;

	if (e->ip != ip || !e->ok) {
		e->ip = ip;
		e->ok = 1 + (uintptr_t)ha_after_call(ip);
		return e->ok == 2;
	}
	return e->ok == 2 && _dl_find_object((void *)ip, &fo) == 0;
}

/* The step of a frame at SP whose code no FDE covers and whose return address
 * follows a call (HA_RULE_FP): BP, rbp, taken as its frame pointer, so CFA =
 * rbp + 16, the caller's rbp at CFA-16 and the return address at CFA-8, when
 * rbp points at or above SP (and not absurdly far) into memory B or the
 * kernel lets it read, and the return address found there is in a loaded
 * object's code, after a call instruction. Otherwise the frame ends the stack:
 * code built without frame pointers keeps anything in rbp. Returns
 * HA_STEP_ON with the caller's frame in *S, HA_STEP_END, or HA_STEP_SIGNAL
 * when the return address is a signal trampoline's. *BPS always
 * carries HA_BPS_CFA (whether the step goes on depends on rbp), the slot too
 * when it does. */
static HA_RAW_STACK int ha_step_fp(uintptr_t sp, uintptr_t bp, struct ha_bounds *b,
				   struct ha_state *s, uintptr_t *bps, struct ha_prev *pv)
{
	uintptr_t ip, nbp;

	*bps = HA_BPS_CFA;
	if (bp < sp || bp - sp >= (256u << 20) || ha_read_word(b, bp + 8, &ip) < 0)
		return HA_STEP_END;
	if (!ha_ra_ok(pv, ip)) {
		/* a signal handler's return address is the trampoline the kernel
		 * pushed, no call before it; its FDE is a signal frame's ('S') */
		if (ip >= 4096 && ha_code_span(ip - 1, ip + 1) && ha_rc_get(pv, ip).kind == HA_RULE_BAD)
			return HA_STEP_SIGNAL;
		return HA_STEP_END;
	}
	if (ha_read_word(b, bp, &nbp) < 0)
		return HA_STEP_END;
	*bps = bp | HA_BPS_CFA;
	s->bp = nbp;
	s->ip = ip;
	s->sp = bp + 16;
	return HA_STEP_ON;
}

/* ha_step for ha_walk_nofde: the same rules, every word read through B (a
 * frame-pointer step may have taken a wrong rbp, and the rules of the frames
 * above it then point anywhere), the frame-pointer step for HA_RULE_FP.
 * *FP is set once such a step was taken. */
static HA_RAW_STACK int ha_step_checked(struct ha_state *s, uintptr_t *bps, struct ha_prev *pv,
					struct ha_bounds *b, int *fp)
{
	struct ha_rule rule = ha_rc_get(pv, s->ip);
	uintptr_t cfa, slot = 0, ip, nbp = s->bp;

	*bps = 0;
	switch (rule.kind) {
	case HA_RULE_SP:
		cfa = s->sp + (uintptr_t)(intptr_t)rule.off;
		break;
	case HA_RULE_BP:
		cfa = s->bp + (uintptr_t)(intptr_t)rule.off;
		if (cfa - s->sp - 1 >= (256u << 20) || (cfa & 7))
			return HA_STEP_BAD;
		*bps = HA_BPS_CFA;
		break;
	case HA_RULE_FP:
		*fp = 1;
		return ha_step_fp(s->sp, s->bp, b, s, bps, pv);
	case HA_RULE_END:
		return HA_STEP_END;
	default:
		return HA_STEP_BAD;
	}
	if (rule.bpsaved) {
		slot = cfa + (uintptr_t)(intptr_t)rule.bpoff;
		if (ha_read_word(b, slot, &nbp) < 0)
			return HA_STEP_BAD;
	}
	if (ha_read_word(b, cfa - 8, &ip) < 0)
		return HA_STEP_BAD;
	*bps |= slot;
	s->bp = nbp;
	s->ip = ip;
	s->sp = cfa;
	return ip ? HA_STEP_ON : HA_STEP_ZERO;
}

/* Step S to its caller's frame by the rule of its return address; *BPS gets the
 * rbp slot the step read (0: none) with HA_BPS_CFA when the CFA was rbp-based.
 * Returns HA_STEP_*. A frame whose code no FDE covers (HA_RULE_FP) is
 * HA_STEP_BAD here too: the walk then starts again in ha_walk_nofde, so that
 * its loops' code stays as it was (issue 15: a call of ha_step_fp in here cost
 * python's walk 2 to 4%). */
static inline __attribute__((always_inline)) HA_RAW_STACK
int ha_step(struct ha_state *s, uintptr_t *bps, struct ha_prev *pv)
{
	struct ha_rule rule = ha_rc_get(pv, s->ip);
	uintptr_t cfa, slot;

	HA_COUNT(ha_cfi_stepped, 1);
	if (__builtin_expect(rule.kind > HA_RULE_BP, 0)) {
		*bps = 0;
		return rule.kind == HA_RULE_END ? HA_STEP_END : HA_STEP_BAD;
	}
	if (__builtin_expect(rule.kind == HA_RULE_SP, 1)) {
		/* off is 8 .. 8 MiB, a multiple of 8 (ha_rule_find): the CFA is
		 * above sp, and aligned as sp is */
		cfa = s->sp + (uintptr_t)(intptr_t)rule.off;
		slot = rule.bpsaved ? cfa + (uintptr_t)(intptr_t)rule.bpoff : 0;
		*bps = slot;
	} else {
		cfa = s->bp + (uintptr_t)(intptr_t)rule.off;
		/* the stack grows down: a frame above is higher, and not absurdly
		 * so (one compare: cfa <= sp wraps around to a huge difference) */
		if (__builtin_expect(cfa - s->sp - 1 >= (256u << 20) || (cfa & 7), 0))
			return HA_STEP_BAD;
		slot = rule.bpsaved ? cfa + (uintptr_t)(intptr_t)rule.bpoff : 0;
		*bps = slot | HA_BPS_CFA;
	}
	if (slot)
		s->bp = *(const uintptr_t *)slot;
	s->ip = ((const uintptr_t *)cfa)[-1];
	s->sp = cfa;
	return s->ip ? HA_STEP_ON : HA_STEP_ZERO;
}

/* What a join with the previous stack gave (ha_join), besides a frame count. */
enum {
	HA_JOIN_NOT = -1,      /* not this frame: look further out */
	HA_JOIN_NEVER = -2,    /* the record's frames changed: no join this capture */
	HA_JOIN_RESUME = -3,   /* the record stopped short: walk on from its last frame */
};

/* The new walk, with its first K frames in PV's scratch columns (ips in OUT) and frame K's state
 * in *S, has reached the state of the record's frame at index I (same ip and
 * sp). If rbp agrees where it matters and the record's frames above I still
 * hold, they are the rest of the stack: put the new frames below I, copy the
 * ips out (unless !COPY: the caller takes them from the record) and return the
 * frame count (at most MAX). When the record ends short
 * of MAX before the outermost frame, it is moved to index 0 with the new frames
 * in front, *K and *S become its last frame's, HA_JOIN_RESUME. Else HA_JOIN_*.
 * Inline in the walk (issue 15, capture7): out of line, its call, register
 * saves and spills were some 40 of a join's fixed instructions; the rare ways
 * (the verify that notes slots, the column moves) are calls of their own. */
static inline __attribute__((always_inline)) HA_RAW_STACK
int ha_join(struct ha_prev *pv, unsigned i, unsigned *kp, unsigned max, uintptr_t *out,
	    struct ha_state *s, int copy)
{
	unsigned cap = pv->cap, tail = cap - i, k = *kp;
	const struct ha_cols scr_cols = { out, pv->scr_sp, pv->scr_bp, pv->scr_bps };
	const struct ha_cols *scr = &scr_cols;

	if (pv->c.bp[i] != s->bp && ha_prev_needs_bp(pv, i))
		return HA_JOIN_NOT;
	if (__builtin_expect(pv->chk_lo <= i + 1, 1) ? ha_prev_check_above(pv, i) != 0 :
	    !ha_prev_verify(pv, i))
		return HA_JOIN_NEVER;
	/* rbp as it is now, up to the frame that reloads it (the column and the
	 * value in locals: the stores would otherwise reload them) */
	{
		uintptr_t *cbp = pv->c.bp, nbp = s->bp;
		const uintptr_t *cbps = pv->c.bps;

		for (unsigned j = i; j < cap && cbp[j] != nbp; j++) {
			cbp[j] = nbp;
			if (cbps[j] & ~HA_BPS_CFA)
				break;
		}
	}
	if (k + tail <= max && (pv->complete || k + tail == max)) {
		/* the new inner frames just below the old outer ones (k <= i: the
		 * record has room for max) */
		ha_cols_put(&pv->c, i - k, scr, k);
		if (copy)   /* else the caller takes them from the record */
			memcpy(out + k, pv->c.ip + i, tail * sizeof(uintptr_t));
		pv->s = i - k;
		pv->chk_lo = i + 1;   /* below i: other frames now */
		while (pv->nsl && pv->sl[pv->nsl - 1].idx <= i)
			pv->nsl--;
		HA_COUNT(ha_cfi_copied, tail);
		return (int)(k + tail);
	}
	if (k + tail > max) {
		/* cut at max: the outer frames past it go */
		unsigned s0 = cap - max;

		ha_cols_move(&pv->c, s0 + k, i, max - k);
		ha_cols_put(&pv->c, s0, scr, k);
		memcpy(out + k, pv->c.ip + s0 + k, (max - k) * sizeof(uintptr_t));
		pv->s = s0;
		pv->complete = 0;
		pv->chk_lo = cap;
		pv->nsl = 0;
		HA_COUNT(ha_cfi_copied, max - k);
		return (int)max;
	}
	/* the previous walk stopped short: the record from index 0 until the
	 * walk, going on from its last frame, ends */
	ha_cols_move(&pv->c, k, i, tail);
	ha_cols_put(&pv->c, 0, scr, k);
	memcpy(out + k, pv->c.ip + k, tail * sizeof(uintptr_t));
	HA_COUNT(ha_cfi_copied, tail);
	k += tail - 1;
	s->ip = pv->c.ip[k];
	s->sp = pv->c.sp[k];
	s->bp = pv->c.bp[k];
	*kp = k;
	return HA_JOIN_RESUME;
}

/* The walk again from its first frame, when ha_step could not step frame
 * FAILED - 1 (its ip in OUT, as every frame's up to it) because no FDE covers
 * its code (HA_RULE_FP; any other failure, a signal frame or code in no
 * object, returns -1 at once: libunwind takes the stack). Frames are stepped
 * by ha_step_checked, none reused, and the record is left empty (a walk
 * through such code pays a whole walk, and no other walk pays anything). Frame 0's state is in OUT[0] and the scratch columns
 * (SCRATCH) or the record's index 0. A step that fails after a frame-pointer
 * step ends the stack there: that rbp was no frame pointer. Returns the frame
 * count as ha_cfi_backtrace_from does, or -1. */
static __attribute__((noinline, cold)) HA_RAW_STACK int
ha_walk_nofde(struct ha_prev *pv, uintptr_t *out, unsigned max, const uintptr_t **frames,
	      int scratch, unsigned failed)
{
	struct ha_state s;
	struct ha_bounds b;
	unsigned k = 0;
	uintptr_t bps;
	int r, fp = 0;

	pv->s = pv->cap;   /* no join with what the record held */
	pv->chk_lo = pv->cap;
	pv->nsl = 0;
	if (ha_rc_get(pv, out[failed - 1]).kind != HA_RULE_FP)
		return -1;
	s.ip = out[0];
	s.sp = scratch ? pv->scr_sp[0] : pv->c.sp[0];
	s.bp = scratch ? pv->scr_bp[0] : pv->c.bp[0];
	b = ha_bounds_of(s.sp);
	while (k < max) {
		out[k++] = s.ip;
		r = ha_step_checked(&s, &bps, pv, &b, &fp);
		if ((r == HA_STEP_BAD && !fp) || r == HA_STEP_SIGNAL)
			return -1;
		if (r != HA_STEP_ON)
			break;
	}
	if (frames)
		*frames = out;
	return (int)k;
}

/* Empty this thread's rule cache: code was loaded or unloaded since it was
 * filled. */
static __attribute__((noinline, cold)) void ha_rc_reset(struct ha_prev *pv, unsigned gen)
{
	memset(pv->rc, 0, sizeof(pv->rc));
	memset(pv->ra, 0, sizeof(pv->ra));
	pv->rc_gen = gen;
}

__attribute__((noinline)) HA_RAW_STACK
int ha_cfi_backtrace(uintptr_t *out, unsigned max)
{
	uintptr_t *fa = __builtin_frame_address(0);

	/* this function keeps a frame pointer: its CFA is rbp + 16, the caller's
	 * rbp is saved at rbp + 0; the caller's frame stays live during the walk */
	return ha_cfi_backtrace_from(out, max, (uintptr_t)__builtin_return_address(0),
				     (uintptr_t)fa + 16, fa[0], 0);
}

__attribute__((noinline)) HA_RAW_STACK
int ha_cfi_backtrace_from(uintptr_t *out, unsigned max, uintptr_t ip, uintptr_t sp,
			  uintptr_t bp, const uintptr_t **frames)
{
	struct ha_prev *pv = ha_prev_get(max);
	unsigned k = 0, i, cap, gen = __atomic_load_n(&ha_code_gen, __ATOMIC_ACQUIRE);
	uintptr_t nsp;   /* sp of the record's frame at i: no join below it */
	struct ha_state s;
	int r;

	if (__builtin_expect(!pv, 0))
		return -1;   /* no memory for the record: another unwinder */
	if (__builtin_expect(pv->rc_gen != gen, 0))
		ha_rc_reset(pv, gen);
	s.ip = ip;
	s.sp = sp;
	s.bp = bp;
	cap = pv->cap;
	i = pv->s;
	nsp = pv->gen == gen ? pv->c.sp[i] : UINTPTR_MAX;
	/* the first frames in scratch columns, looking for a join with the record */
	for (;;) {
		if (k == max) {
			r = HA_STEP_ZERO;   /* cut at the limit: not complete */
			break;
		}
		if (s.sp >= nsp) {
			const uintptr_t *psp = pv->c.sp;

			while (psp[i] < s.sp)   /* psp[cap] ends it */
				i++;
			nsp = psp[i];
			if (nsp == s.sp && pv->c.ip[i] == s.ip) {
				/* copies: the walk's own k and s never have their
				 * address taken, so they stay in registers */
				struct ha_state js = s;
				unsigned jk = k;

				r = ha_join(pv, i, &jk, max, out, &js, !frames);
				if (r >= 0) {
					if (frames)
						*frames = pv->c.ip + pv->s;
					return r;
				}
				if (r == HA_JOIN_RESUME) {
					s = js;
					k = jk;
					goto resume;
				}
				if (r == HA_JOIN_NEVER)
					nsp = UINTPTR_MAX;
			}
		}
		if (k == HA_SCRATCH) {
			/* no join near the top: this walk replaces the record, from
			 * index 0 until it ends */
			const struct ha_cols scratch = { out, pv->scr_sp, pv->scr_bp, pv->scr_bps };

			ha_cols_put(&pv->c, 0, &scratch, k);
			goto walk_on;
		}
		out[k] = s.ip;
		pv->scr_sp[k] = s.sp;
		pv->scr_bp[k] = s.bp;
		r = ha_step(&s, &pv->scr_bps[k], pv);
		k++;
		if (__builtin_expect(r != HA_STEP_ON, 0))
			break;
	}
	if (r == HA_STEP_BAD)
		return ha_walk_nofde(pv, out, max, frames, 1, k);
	{
		const struct ha_cols scratch = { out, pv->scr_sp, pv->scr_bp, pv->scr_bps };

		ha_cols_put(&pv->c, cap - k, &scratch, k);
	}
	goto done;

	/* deeper: straight into the record's columns from index 0 */
walk_on:
	while (k < max) {
		out[k] = s.ip;
		pv->c.ip[k] = s.ip;
		pv->c.sp[k] = s.sp;
		pv->c.bp[k] = s.bp;
resume:
		r = ha_step(&s, &pv->c.bps[k], pv);
		k++;
		if (__builtin_expect(r != HA_STEP_ON, 0))
			break;
	}
	if (r == HA_STEP_BAD)
		return ha_walk_nofde(pv, out, max, frames, 0, k);
	if (k == max && r == HA_STEP_ON)
		r = HA_STEP_ZERO;   /* cut at the limit */
	ha_cols_move(&pv->c, cap - k, 0, k);   /* anchored at the end */
done:
	pv->s = cap - k;
	pv->complete = r == HA_STEP_END;
	pv->gen = pv->rc_gen;   /* the walk's generation (see ha_rc_get) */
	pv->chk_lo = cap;
	pv->nsl = 0;
	if (frames)
		*frames = out;   /* stored there as the walk went */
	return (int)k;
}
#endif
