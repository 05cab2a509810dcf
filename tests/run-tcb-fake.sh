#!/bin/sh
# run-tcb-fake.sh - an exit snapshot taken by a worker thread: the main
# thread's fs_base is not in it, so its TCB is looked for at the top of its
# stack (analysis/reach.c tcb_on_stack). A self-referencing object there,
# {a, 1, a} as a TCB begins (tests/prog/tcb_fake.c), is no TCB: glibc's stack
# and pointer guards are not in it. --addr 16 bytes below it (where the
# program's __thread variable would lie below a TCB) says the main thread's
# stack, not the TLS of a thread.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"

exe=$TMP/tcb_fake
cc -g -O0 -pthread -o "$exe" tests/prog/tcb_fake.c
mkdir -p "$TMP/snap"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/snap" LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >"$TMP/out" 2>&1
check_eq "the program exits 0" 0 $?
snap=$(ls "$TMP"/snap/*.1.core 2>/dev/null | head -n 1)
check "exit snapshot written" test -s "$snap"
read -r node blk _ <"$TMP/out"
below=$(printf '0x%x' $((node - 16)))
"$B/mprof-core" -q --addr "$below" "$exe" "$snap" >"$TMP/a" 2>&1
check_grep "16 bytes below the object: main's stack" "^address $below: on the stack of thread" "$TMP/a"
check "16 bytes below the object: not thread-local storage" sh -c "! grep -q 'thread-local' '$TMP/a'"
"$B/mprof-core" -q --addr "$blk" "$exe" "$snap" >"$TMP/b" 2>&1
check_grep "the worker's block: live, 40 bytes" "^address $blk: 0 bytes into live block $blk \\(40 bytes" "$TMP/b"
done_testing
