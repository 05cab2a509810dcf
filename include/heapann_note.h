/* heapann_note.h - the note libheapann's own snapshots (HEAPANN_SNAPSHOT) add to
 * the cores they write: the contract between annotate/snapshot.c and
 * coreparse/notes.c.
 *
 * A snapshot records a thread (NT_PRSTATUS) only when /proc/self/task/TID/syscall
 * gives its stack pointer, that is when it is blocked in a system call. A thread
 * that keeps running (allocating in a loop) is left out, and its stack would read
 * as plain memory: a header magic that malloc left in a register spill there reads
 * as a damaged header. This note names such threads and an address inside each
 * one's stack (taken by libheapann at the thread's first call), so that the reader
 * knows the mapping is a stack even without registers.
 *
 *   name  "HEAPANN\0" (namesz 8)
 *   type  HEAPANN_NT_STACKS
 *   desc  pairs of target words, in the core's byte order: (tid, address in its
 *         stack), one per thread that was running and is not in an NT_PRSTATUS.
 *
 * gdb, readelf and eu-readelf skip a note of an owner they do not know.
 */
#ifndef HEAPANN_NOTE_H
#define HEAPANN_NOTE_H

#define HEAPANN_NOTE_NAME "HEAPANN"
#define HEAPANN_NT_STACKS 0x48530001u   /* "HS", 1 */

#endif /* HEAPANN_NOTE_H */
