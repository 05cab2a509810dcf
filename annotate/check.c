/* check.c - HEAPANN_CHECK_INTERVAL=N: every N allocations, verify the header and
 * guard of every live block, so that with HEAPANN_ABORT_ON_CORRUPTION=1 the core
 * is taken right after the damage, not when the culprit is freed (if ever).
 *
 * libheapann keeps no list of live blocks by design. This file keeps one, and
 * only when the option is set: a fixed open-addressing set of user pointers in
 * one mmap'd table (HEAPANN_CHECK_SLOTS slots, default 65536), lock-free with a
 * compare-and-swap per slot. A block that finds no free slot within a few probes
 * is simply not verified (counted). Unset, the hooks cost one load and a branch.
 * Inside malloc: no allocation, no lock, reports through write(2) only.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hdr.h"
#include "internal.h"

#if HA_BARE
/* Bare-metal firmware: no environment to set the option from and no mmap for the
 * table, so the option is off and only the hooks' load of ha_check_on remains. */
#define ck_getpid() 0
#define ck_yield() ((void)0)
#else
#include <sys/mman.h>
#define ck_getpid() getpid()
#define ck_yield() sched_yield()
#endif

/* Slot values: 0 empty, 1 a tombstone (a pointer was removed), else a user
 * pointer (aligned to at least 8) with flag bits below. */
#define SLOT_EMPTY 0u
#define SLOT_TOMB 1u
#define SLOT_BUSY 2u       /* a verification is reading this block: free waits */
#define SLOT_REPORTED 4u   /* its damage was reported once already */
#define SLOT_FLAGS 7u
#define PROBES 32u         /* slots tried per insert and lookup */
#define DEFAULT_SLOTS (1u << 16)
#define MAX_SLOTS (1u << 26)

int ha_check_on;
static uintptr_t *ck_tab;       /* the set, in an anonymous mapping */
static uintptr_t ck_mask;       /* slots - 1 (a power of two) */
static unsigned long ck_interval;
static unsigned long ck_count;  /* allocations seen */
static unsigned long ck_untracked; /* blocks that found no slot: not verified */
static int ck_walking;          /* a verification runs (in process ck_walker) */
static pid_t ck_walker;

#if !HA_BARE
extern char **environ;

/* The decimal value of NAME= in environ, or def (no getenv: works before libc). */
static unsigned long ck_env(const char *name, unsigned long def)
{
	size_t n = strlen(name);

	for (char **e = environ; e && *e; e++) {
		const char *s = *e;
		unsigned long v = 0;

		if (strncmp(s, name, n) != 0 || s[n] != '=')
			continue;
		s += n + 1;
		if (*s < '0' || *s > '9')
			return def;
		while (*s >= '0' && *s <= '9' && v <= ((unsigned long)-1 - 9) / 10)
			v = v * 10 + (unsigned long)(*s++ - '0');
		return v;
	}
	return def;
}

/* Read the options and map the table. A constructor: blocks handed out before it
 * runs (by the loader, by libc's start-up) are not verified. */
HA_CONSTRUCTOR(HA_PRIO_CHECK)
static void ck_init(void)
{
	unsigned long slots, n = 1;
	void *t;

	ck_interval = ck_env("HEAPANN_CHECK_INTERVAL", 0);
	if (!ck_interval)
		return;
	slots = ck_env("HEAPANN_CHECK_SLOTS", DEFAULT_SLOTS);
	while (n < slots && n < MAX_SLOTS)
		n <<= 1;
	if (n < 64)
		n = 64;
	t = mmap(NULL, n * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED)
		return;
	ck_tab = t;
	ck_mask = n - 1;
	ck_walker = getpid();
	__atomic_store_n(&ha_check_on, 1, __ATOMIC_RELEASE);
}
#endif

static uintptr_t ck_hash(uintptr_t p)
{
	uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;

	return (uintptr_t)(h >> 29);
}

/* Verify one live block; report its damage once. Returns the flags to keep. */
static uintptr_t ck_verify(const void *user, uintptr_t flags)
{
	struct ha_hdr_view v;
	int st = ha_hdr_find(user, &v);
	unsigned bad = 0;

	if (st == HA_HDR_LIVE) {
		if (v.guard)
			bad = ha_hdr_guard_damage(user, &v);
		if (!bad)
			return flags;
		if (!(flags & SLOT_REPORTED))
			ha_report_guard(user, v.size, bad, v.guard);
	} else if (!(flags & SLOT_REPORTED)) {
		/* a registered block is live: anything else is an overwritten header
		 * (its END word: an underrun, or its start: an overflow from below) */
		ha_report_bad_free("HEAPANN_CHECK_INTERVAL: damaged header of live block", user);
	}
	if (ha_opt.abort_on_corruption)
		abort();
	return flags | SLOT_REPORTED;
}

/* Verify every registered block. One verification at a time; a caller that finds
 * one running skips (unless it runs in a forked child, which inherited the flag). */
static void ck_walk(void)
{
	pid_t me = ck_getpid();
	int zero = 0;

	if (!__atomic_compare_exchange_n(&ck_walking, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&ck_walker, __ATOMIC_RELAXED) == me)
		return;
	__atomic_store_n(&ck_walker, me, __ATOMIC_RELAXED);
	for (uintptr_t i = 0; i <= ck_mask; i++) {
		uintptr_t v = __atomic_load_n(&ck_tab[i], __ATOMIC_ACQUIRE);
		uintptr_t keep;

		if (v <= SLOT_TOMB || (v & SLOT_BUSY))
			continue;
		if (!__atomic_compare_exchange_n(&ck_tab[i], &v, v | SLOT_BUSY, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;   /* freed meanwhile */
		keep = ck_verify((const void *)(v & ~(uintptr_t)SLOT_FLAGS), v & SLOT_FLAGS);
		__atomic_store_n(&ck_tab[i], (v & ~(uintptr_t)SLOT_FLAGS) | keep, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ck_walking, 0, __ATOMIC_RELEASE);
}

void ha_check_register(const void *user)
{
	uintptr_t p = (uintptr_t)user, h = ck_hash(p);
	unsigned long n;

	if (p & SLOT_FLAGS)
		return;   /* cannot be tagged: never verified */
	for (unsigned i = 0; i < PROBES; i++) {
		uintptr_t *s = &ck_tab[(h + i) & ck_mask];
		uintptr_t v = __atomic_load_n(s, __ATOMIC_RELAXED);

		while (v == SLOT_EMPTY || v == SLOT_TOMB) {
			if (__atomic_compare_exchange_n(s, &v, p, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				goto counted;
		}
	}
	__atomic_add_fetch(&ck_untracked, 1, __ATOMIC_RELAXED);
counted:
	n = __atomic_add_fetch(&ck_count, 1, __ATOMIC_RELAXED);
	if (n % ck_interval == 0)
		ck_walk();
}

void ha_check_unregister(const void *user)
{
	uintptr_t p = (uintptr_t)user, h = ck_hash(p);

	for (unsigned i = 0; i < PROBES; i++) {
		uintptr_t *s = &ck_tab[(h + i) & ck_mask];
		uintptr_t v = __atomic_load_n(s, __ATOMIC_ACQUIRE);
		unsigned spins = 0;

		if (v == SLOT_EMPTY)
			return;   /* never registered (table full, or made before us) */
		if ((v & ~(uintptr_t)SLOT_FLAGS) != p)
			continue;
		for (;;) {
			/* a verification reads the block: wait for it, unless it ran in
			 * the parent before a fork (it never finishes here) */
			if ((v & SLOT_BUSY) &&
			    (++spins <= 64 || __atomic_load_n(&ck_walker, __ATOMIC_RELAXED) == ck_getpid())) {
				if (spins > 64)
					ck_yield();
				v = __atomic_load_n(s, __ATOMIC_ACQUIRE);
				continue;
			}
			if (__atomic_compare_exchange_n(s, &v, SLOT_TOMB, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return;
		}
	}
}
