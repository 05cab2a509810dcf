#!/bin/sh
# run-stackhint.sh - header magics on a thread's stack are no damaged header, also
# when the core lacks that thread's registers, and the rest of a heap that holds a
# thread's stack keeps its damage. tests/prog/stack_hint.c plants, on a worker
# thread's stack, a live START magic and an INFO word of no known version:
#  - spin: the worker spins (no system call) while main takes a libheapann
#    snapshot (HEAPANN_SNAPSHOT=signal:SIGUSR1). The snapshot cannot record the
#    worker (no stack pointer for a running thread), so it names its stack in a
#    HEAPANN_NT_STACKS note (include/heapann_note.h): 20 snapshots, each with 0
#    damaged headers, the words counted as ignored stack copies, and the
#    worker's 16-byte block. Before the note, these cores read "damaged
#    headers: 1" (run-snapshot's threads section: 1 core in 10, now and then).
#  - heap: the worker's stack is a 64 KiB block of the heap (pthread_attr_setstack)
#    and main damages a real header in the same heap; a gcore must show exactly
#    that one damaged header, and the planted words as a stack copy. Before, the
#    whole heap segment counted as that thread's stack and the real damage was
#    dropped with the planted words (damaged headers: 0).
#  - coro: the worker's first malloc runs on a coroutine's mmap'd stack, which it
#    then unmaps; a 512 KiB block (often mapped there) gets a damaged header; 5
#    snapshots must each report that header. The registry holds the thread's
#    thread pointer, not the frame of its first call (which pointed into that
#    memory: the review found "damaged headers: 0" there).
. tests/lib.sh
SO=$TOP/$B/libheapann.so
M=$B/mprof-core
[ -f "$SO" ] && [ -x "$M" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "snapshots and the planted words are x86-64 only"
cc -std=c11 -O1 -g -pthread -Iinclude -o "$TMP/stack_hint" tests/prog/stack_hint.c ||
	skip "cannot compile tests/prog/stack_hint.c"

# ---- spin: 20 snapshots of a running worker ----
mkdir -p "$TMP/snaps"
ok=0 notes=0 copies=0 held=0
for i in $(seq 1 20); do
	rm -f "$TMP"/snaps/*
	HEAPANN_SNAPSHOT=signal:SIGUSR1 HEAPANN_SNAPSHOT_DIR="$TMP/snaps" LD_PRELOAD="$SO" \
		"$TMP/stack_hint" spin 2>"$TMP/spin.err" || continue
	c=$(ls "$TMP"/snaps/stack_hint.*.core 2>/dev/null | head -n 1)
	[ -n "$c" ] || continue
	readelf -n "$c" 2>/dev/null | grep -q '^ *HEAPANN ' && notes=$((notes + 1))
	"$M" --format=json "$TMP/stack_hint" "$c" >"$TMP/spin.json" 2>"$TMP/spin.jerr" || {
		"$M" --report=corruption "$TMP/stack_hint" "$c" 2>&1 | sed "s/^/# snapshot $i: /"
		continue
	}
	r=$(python3 - "$TMP/spin.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d.get("summary", d)
held = sum(1 for s in d.get("stacks", []) for f in s.get("frames", [])[:1]
           if f.get("function") == "spinner" and s.get("bytes") == 16 and s.get("blocks") == 1)
print(h["damaged_headers"], h["stack_copies_ignored"], held)
PY
)
	set -- $r
	[ "$1" = 0 ] && ok=$((ok + 1))
	[ "${2:-0}" -ge 1 ] && copies=$((copies + 1))
	[ "${3:-0}" = 1 ] && held=$((held + 1))
done
check_eq "spin: 20 snapshots carry the HEAPANN stacks note" 20 $notes
check_eq "spin: 20 snapshots read with no damaged header" 20 $ok
check_eq "spin: in each the planted words are an ignored stack copy" 20 $copies
check_eq "spin: in each the worker's 16-byte block from spinner()" 20 $held

# ---- heap: a thread's stack inside the heap, and real damage beside it ----
HEAPANN_DEPTH=8 gcore_waiting "$TMP/heap.core" "$TMP/stack_hint" heap
check_eq "heap: gcore of the program, which exits 0" 0 $?
"$M" --report=corruption "$TMP/stack_hint" "$TMP/heap.core" >"$TMP/heap.rep" 2>&1
check_eq "heap: exactly one damaged header" 1 "$(grep -c '^damaged header at ' "$TMP/heap.rep")"
hdr=$(awk '$1 == "ready" { print $3 }' "$TMP/out")
check_grep "heap: it is the damaged block's, $hdr (format version)" "^damaged header at $hdr \\(unknown format version\\)" "$TMP/heap.rep"
check_grep "heap: the planted words are a stack copy" 'header-like word.* on thread stacks ignored' "$TMP/heap.rep"
"$M" --format=json "$TMP/stack_hint" "$TMP/heap.core" >"$TMP/heap.json" 2>/dev/null
check_eq "heap: JSON damaged_headers 1, stack_copies_ignored 1 or more" "1 True" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); h=d.get("summary",d); print(h["damaged_headers"], h["stack_copies_ignored"] >= 1)' "$TMP/heap.json")"
# ---- coro: the worker's first call ran on a coroutine's stack, since unmapped ----
# and reused by a large block whose header the worker damaged
ok=0 n=0
for i in 1 2 3 4 5; do
	rm -f "$TMP"/snaps/*
	HEAPANN_SNAPSHOT=signal:SIGUSR1 HEAPANN_SNAPSHOT_DIR="$TMP/snaps" LD_PRELOAD="$SO" \
		"$TMP/stack_hint" coro 2>"$TMP/coro.err" || continue
	c=$(ls "$TMP"/snaps/stack_hint.*.core 2>/dev/null | head -n 1)
	hdr=$(awk '$1 == "damaged" { print $2 }' "$TMP/coro.err")
	[ -n "$c" ] && [ -n "$hdr" ] || continue
	n=$((n + 1))
	"$M" --report=corruption "$TMP/stack_hint" "$c" >"$TMP/coro.rep" 2>&1
	[ "$(grep -c '^damaged header at ' "$TMP/coro.rep")" = 1 ] &&
		grep -q "^damaged header at $hdr (unknown format version)" "$TMP/coro.rep" && ok=$((ok + 1))
done
check_eq "coro: 5 snapshots, each with the block's damaged header, and only it" "5 5" "$n $ok"
done_testing
