/* snapshot.h - HEAPANN_SNAPSHOT: libheapann writes an ELF core of its own process
 * (annotate/snapshot.c) at exit, on a signal or on a crash, with no kernel
 * core_pattern, no ptrace and no gdb. Internal to libheapann.so; the static kit
 * leaves it out (HA_HAVE_SNAPSHOT 0), as does every architecture but x86-64.
 * Nothing here is exported. */
#ifndef HA_SNAPSHOT_H
#define HA_SNAPSHOT_H

#if defined(__x86_64__) && defined(__linux__) && !defined(HEAPANN_STATIC)
#define HA_HAVE_SNAPSHOT 1
#else
#define HA_HAVE_SNAPSHOT 0
#endif

#if HA_HAVE_SNAPSHOT
/* Take one snapshot now, from ordinary code (not a signal handler): the calling
 * thread's registers come from getcontext. Writes DIR/PROG.PID.N.core (or
 * .core.zst with HEAPANN_SNAPSHOT_COMPRESS=zstd) and waits for the writer. Returns 0 when the core was written, -1 otherwise (a line on
 * stderr says why). Keeps errno. Allocates nothing. */
int ha_snapshot_now(void);
/* The calling thread's first call of libheapann (ha_stats_call, before the
 * thread has its call counts): once snapshots are on, it notes the thread's
 * tid and thread pointer (inside its stack mapping under glibc), for the
 * snapshots that find it running. No allocation
 * of its own (pthread_setspecific may allocate once: that call returns at
 * once). */
void ha_snap_thread_first(void);
#endif

#endif /* HA_SNAPSHOT_H */
