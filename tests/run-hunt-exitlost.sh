#!/bin/sh
# run-hunt-exitlost.sh - heapann --report=lost on tests/prog/hunt_exitlost.c,
# built -O1 and -O2: the exit snapshot must classify the dropped tree as memcheck
# does (root definitely lost, 14 nodes indirectly lost), though the program's
# recursion left copies of the node pointers in dead stack. The snapshot's own
# frame sits over that dead stack and is a root (the core's stack pointer is
# libheapann's): what it leaves unwritten must not hold the program's stale
# pointers. With valgrind installed, memcheck's summary is compared too.
# (Built -O0, -O3 or -Os the stale copies land in glibc's exit path instead,
# __run_exit_handlers' frame, which an exit handler cannot clear:
# README, Known limits.)
. tests/lib.sh
[ -x "$B/heapann" ] && [ -f "$B/libheapann.so" ] || skip "build first"

for opt in -O1 -O2; do
	exe=$TMP/exitlost$opt
	cc -g $opt -o "$exe" tests/prog/hunt_exitlost.c
	L=$TMP/lost$opt.txt
	"$B/heapann" --report=lost "$exe" >"$L" 2>"$L.err"
	check_eq "$opt: exit 0" 0 $?
	check_grep "$opt: the root definitely lost" '^   definitely lost: 24 bytes in 1 blocks$' "$L"
	check_grep "$opt: 14 nodes indirectly lost" '^   indirectly lost: 336 bytes in 14 blocks$' "$L"
	check_grep "$opt: the global's block still reachable" '^   still reachable: 700 bytes in 1 blocks$' "$L"
	if command -v valgrind >/dev/null 2>&1; then
		valgrind --leak-check=full --leak-check-heuristics=none "$exe" >/dev/null 2>"$TMP/vg$opt"
		vg=$(sed -n 's/^==[0-9]*== *\(definitely\|indirectly\) lost: \(.*\)$/\1 \2/p' "$TMP/vg$opt" | tr '\n' ';')
		ours=$(sed -n 's/^ *\(definitely\|indirectly\) lost: \(.*\)$/\1 \2/p' "$L" | tr '\n' ';')
		check_eq "$opt: the same lost figures as memcheck" "$vg" "$ours"
	fi
done
done_testing
