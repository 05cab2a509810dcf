#!/bin/sh
# run-hunt6b-lost.sh - --report=lost for a block held only in a register of
# another thread (tests/prog/hunt6b_regs.c: the worker's 4,321 bytes in r12,
# the worker blocked in pause(2)). memcheck and a gcore see the register: still
# reachable. libheapann's exit snapshot knows only the pc, stack pointer and
# system call arguments of the threads other than its own: the block shows as
# definitely lost there, and the report says why (JSON: the register root is
# "partial"). A C++ program's exit against memcheck: the exit snapshot frees
# libstdc++'s emergency pool first, as memcheck's freeres does (0f905c8).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the program keeps its pointer in r12)"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/regs
cc -g -O2 -pthread -o "$exe" tests/prog/hunt6b_regs.c
held_line=$(grep -n 'MARK:held' tests/prog/hunt6b_regs.c | cut -d: -f1)

# lostof REPORT: the category line of the worker's block
lostof() { grep -E "^#[0-9]+: 4,321 bytes in 1 blocks are " "$1" | sed 's/.* are //'; }

# 1. the exit snapshot (the program waits until the worker is blocked in
# pause(2), so that the snapshot lists it)
mkdir -p "$TMP/snap"
echo | HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/snap" LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >/dev/null 2>&1
check_eq "the program exits 0" 0 $?
snap=$(ls "$TMP"/snap/regs.*.1.core 2>/dev/null | head -n 1)
check "exit snapshot written" test -s "$snap"
"$B/mprof-core" --report=lost "$exe" "$snap" >"$TMP/snap.txt" 2>/dev/null
check_eq "snapshot: exit 0" 0 $?
check_eq "snapshot: the block is definitely lost (r12 not in the core)" "definitely lost" "$(lostof "$TMP/snap.txt")"
check_grep "snapshot: the block's stack" "^    worker \\(hunt6b_regs.c:$held_line\\)" "$TMP/snap.txt"
check_grep "snapshot: the worker listed" ', 2 threads$' "$TMP/snap.txt"
check_grep "snapshot: the report says the other thread's registers are partly known" \
	'^note: the registers of 1 thread are only partly known .*: a block held only in another of their registers shows as lost$' "$TMP/snap.txt"
"$B/mprof-core" --format json --report=lost "$exe" "$snap" >"$TMP/snap.json" 2>/dev/null
check_eq "snapshot, JSON: two register roots, one partial" "[None, True]" \
	"$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sorted((r.get("partial") for r in d["lost"]["roots"] if r["kind"] == "register"), key=str))' "$TMP/snap.json")"

# ... and a gcore of another run while it waits
if command -v gdb >/dev/null; then
	gcore_waiting "$TMP/gcore" "$exe"
	check "gcore written" test -s "$TMP/gcore"
	"$B/mprof-core" --report=lost "$exe" "$TMP/gcore" >"$TMP/gcore.txt" 2>/dev/null
	check_eq "gcore: the block is still reachable" "still reachable" "$(lostof "$TMP/gcore.txt")"
	check "gcore: no note on registers" sh -c "! grep -q 'only partly known' '$TMP/gcore.txt'"
	held=$(awk '{ print $2 }' "$TMP/out")
	"$B/mprof-core" --report=lost --why "$held" "$exe" "$TMP/gcore" >"$TMP/why.txt" 2>/dev/null
	check_grep "gcore: --why names r12 of thread 2" '<- start pointer at register r12 of thread 2 ' "$TMP/why.txt"
else
	echo "# gdb not installed: the gcore part skipped"
fi

# 2. memcheck on the same program agrees with the gcore
if command -v valgrind >/dev/null; then
	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none "$exe" \
		</dev/null >/dev/null 2>"$TMP/vg.txt"
	check_grep "memcheck: still reachable" '4,321 bytes in 1 blocks are still reachable' "$TMP/vg.txt"
else
	echo "# valgrind not installed: memcheck part skipped"
fi

# 3. a C++ program at exit (tests/prog/hunt6b_exit.cc), through the launcher:
# what destructors and atexit handlers freed is gone, and so is libstdc++'s
# pool; the four categories are memcheck's (with its freeres functions, its
# default) to the byte
if command -v g++ >/dev/null; then
	g++ -g -O0 -o "$TMP/ex" tests/prog/hunt6b_exit.cc
	"$B/heapann" --report=lost "$TMP/ex" >"$TMP/ex.txt" 2>"$TMP/ex.err"
	check_eq "C++ at exit: exit 0" 0 $?
	ours=$(sed -n 's/^ *\(definitely lost\|indirectly lost\|possibly lost\|still reachable\): \(.*\)$/\1 \2/p' "$TMP/ex.txt" | tr '\n' ';')
	check_eq "C++ at exit: the program's figures" \
		"definitely lost 87 bytes in 2 blocks;indirectly lost 64 bytes in 2 blocks;possibly lost 400 bytes in 1 blocks;" \
		"$(echo "$ours" | sed 's/still reachable [^;]*;//')"
	check_grep "C++ at exit: only the global's 77 bytes still reachable (no libstdc++ pool)" \
		'^   still reachable: 77 bytes in 1 blocks$' "$TMP/ex.txt"
	if command -v valgrind >/dev/null; then
		vgsum() { sed -n 's/^==[0-9]*== *\(definitely lost\|indirectly lost\|possibly lost\|still reachable\): \(.*\)$/\1 \2/p' "$1" | tr '\n' ';'; }
		valgrind --leak-check=full --leak-check-heuristics=none "$TMP/ex" >/dev/null 2>"$TMP/vgex"
		check_eq "C++ at exit: memcheck (default freeres) agrees to the byte" "$(vgsum "$TMP/vgex")" "$ours"
	fi
else
	echo "# g++ not installed: the C++ part skipped"
fi
done_testing
