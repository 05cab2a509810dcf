#!/bin/sh
# run-stalehdr.sh - header magics left on a thread stack are no damaged header.
# tests/prog/stalehdr_spill.c (gcc -O0 and -O2, -Wl,-z,lazy) makes the first call
# of another libc function right after each of its 12 allocations, so ld.so's
# lazy resolver spills registers below the stack pointer, and it leaves END_LIVE|0
# words with zeros where a header's DEPTH would be at the bottom of a returned
# 8 KiB frame (below the stack pointer) and in a live local of main. Its kernel core (abort) and its gcore must show exactly its 12 blocks
# (6,314 bytes) live, no damaged header, and mprof-core must exit 0 (before the
# scan skipped thread stacks: "damaged headers: 2"; the corruption report
# already left them out). On x86-64 the program also checks that no caller-saved
# register (rcx rdx rsi rdi r8-r11 xmm0-15) holds a header magic when any entry
# point returns (malloc, calloc, realloc, free, memalign, posix_memalign,
# malloc_usable_size), and that the probe sees one a function leaves in rdx.
. tests/lib.sh
SO=$TOP/$B/libheapann.so
[ -f "$SO" ] && [ -x "$B/tests/tools/cpdump" ] || skip "build first"

# check_core NAME PROG CORE OUT: the program's blocks are all live in CORE with
# their sizes, nothing is damaged, mprof-core exits 0 with the exact totals.
check_core() {
	liveset_cmp "$4" "$TMP/$1.scan" >"$TMP/$1.cmp"
	read -r n found b bytes left <"$TMP/$1.cmp"
	check_eq "$1: the program's 12 blocks" "12 6314" "$n $b"
	check_eq "$1: all $n blocks live in the core" "$n" "$found"
	check_eq "$1: with their $b requested bytes" "$b" "$bytes"
	check_eq "$1: none of the program's blocks missing" 0 "$left"
	check_grep "$1: cpdump: no damaged header" '^scan .* damaged=0 ' "$TMP/$1.scan"
	"$B/mprof-core" "$2" "$3" >"$TMP/$1.rep" 2>&1
	check_eq "$1: mprof-core exits 0 (no corruption)" 0 $?
	check_grep "$1: exactly the 12 blocks, 6,314 bytes" '^live blocks: 12, requested bytes: 6,314,' "$TMP/$1.rep"
	check_grep "$1: damaged headers: 0" 'damaged headers: 0$' "$TMP/$1.rep"
	"$B/mprof-core" --format json "$2" "$3" >"$TMP/$1.json" 2>&1
	check_eq "$1: JSON report exits 0" 0 $?
	python3 - "$TMP/$1.json" "$TMP/$1.scan" >"$TMP/$1.jc" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
h = d.get("summary", d)
scan = open(sys.argv[2]).read()
onstack = int(re.search(r" stack_copies=(\d+) ", scan).group(1))
print(h["damaged_headers"], h["stack_copies_ignored"] == onstack, onstack >= 2)
PY
	check_eq "$1: JSON: damaged_headers 0, stack_copies_ignored as the scan's, at least the 2 planted" \
		"0 True True" "$(cat "$TMP/$1.jc")"
}

for opt in O0 O2; do
	cc -std=c11 -D_GNU_SOURCE -$opt -g -Iinclude -Wl,-z,lazy -o "$TMP/spill$opt" tests/prog/stalehdr_spill.c ||
		skip "cannot compile stalehdr_spill.c"
	HEAPANN_DEPTH=8 gcore_waiting "$TMP/g$opt.core" "$TMP/spill$opt"
	check_eq "$opt gcore: program exits 0" 0 $?
	cp "$TMP/out" "$TMP/g$opt.live"
	if grep -q '^regs -1$' "$TMP/g$opt.live"; then
		echo "# not x86-64: registers not probed"
	else
		check_eq "$opt: the register probe sees END_LIVE|3 left in rdx (control)" 1 "$("$TMP/spill$opt" control)"
		check_grep "$opt: no caller-saved register holds a header magic after an allocator returns" '^regs 0$' "$TMP/g$opt.live"
	fi
	"$B/tests/tools/cpdump" "$TMP/g$opt.core" >"$TMP/g$opt.scan" 2>&1
	check_eq "$opt gcore: cpdump exits 0" 0 $?
	check_core "g$opt" "$TMP/spill$opt" "$TMP/g$opt.core" "$TMP/g$opt.live"

	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && HEAPANN_DEPTH=8 LD_PRELOAD="$SO" "$TMP/spill$opt" abort >"$TMP/k$opt.live"; :) 2>/dev/null
	if [ -s "$TMP/core" ]; then
		mv "$TMP/core" "$TMP/k$opt.core"
		"$B/tests/tools/cpdump" "$TMP/k$opt.core" >"$TMP/k$opt.scan" 2>&1
		check_eq "$opt kernel core: cpdump exits 0" 0 $?
		check_core "k$opt" "$TMP/spill$opt" "$TMP/k$opt.core" "$TMP/k$opt.live"
	else
		echo "# no kernel core written (core_pattern: $(cat /proc/sys/kernel/core_pattern)): $opt kernel core left out"
	fi
done
done_testing
