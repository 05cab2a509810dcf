#!/bin/sh
# run-massif.sh - the example from Massif's manual, end to end: run it under the
# preload, take a kernel core (abort) and a gcore (while it waits), and check that
# mprof-core reports exactly its stacks, bytes and lines, in text and JSON.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"

src=examples/massif_example.c
line() { grep -n "MARK:$1 " "$src" | cut -d: -f1; }
Lg=$(line g); Lf=$(line f); Lfg=$(line f-calls-g); Lm=$(line main)
Lmf=$(line main-calls-f); Lmg=$(line main-calls-g)

for opt in -O0 -O2; do
	exe=$TMP/massif$opt
	cc -g $opt -o "$exe" "$src"
	expect() { # JSONFILE WHAT
		check "$2$opt: total 13 blocks, 20000 bytes" python3 tests/jstack.py "$1" total 13 20000
		check "$2$opt: 4 stacks" python3 tests/jstack.py "$1" nstacks 4
		check "$2$opt: main's 10 x 1000 B" python3 tests/jstack.py "$1" stack 10000 10 "main:$Lm"
		check "$2$opt: g from f" python3 tests/jstack.py "$1" stack 4000 1 "g:$Lg" "f:$Lfg" "main:$Lmf"
		check "$2$opt: g from main" python3 tests/jstack.py "$1" stack 4000 1 "g:$Lg" "main:$Lmg"
		check "$2$opt: f" python3 tests/jstack.py "$1" stack 2000 1 "f:$Lf" "main:$Lmf"
	}

	# kernel core
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" abort) 2>/dev/null
	check "kernel core$opt written" test -s "$TMP/core"
	mv "$TMP/core" "$TMP/kcore$opt"
	"$B/mprof-core" --format=json "$exe" "$TMP/kcore$opt" >"$TMP/k.json" 2>"$TMP/k.err"
	check_eq "kernel core$opt: exit 0" 0 $?
	expect "$TMP/k.json" "kernel core"

	# gcore while the program waits
	gcore_waiting "$TMP/gcore$opt" "$exe" wait
	check_eq "program$opt finished normally after gcore" 0 $?
	check "gcore$opt written" test -s "$TMP/gcore$opt"
	"$B/mprof-core" --format=json "$exe" "$TMP/gcore$opt" >"$TMP/g.json" 2>"$TMP/g.err"
	check_eq "gcore$opt: exit 0" 0 $?
	expect "$TMP/g.json" "gcore"
done

# The text report of the last core: the summary and the frames as a user reads them.
"$B/mprof-core" "$exe" "$TMP/gcore-O2" >"$TMP/text" 2>&1
check_grep "text: summary line" '^live blocks: 13, requested bytes: 20,000' "$TMP/text"
check_grep "text: biggest stack first" '^#1: 10,000 bytes \(50\.00%\) in 10 blocks, size 1,000' "$TMP/text"
check_grep "text: frame format" "^    g \(massif_example.c:$Lg\) \[massif-O2\]" "$TMP/text"
# --alloc-fn: treating g as an allocator moves both 4000-byte blocks to g's callers
"$B/mprof-core" --format=json --alloc-fn g "$exe" "$TMP/gcore-O2" >"$TMP/a.json" 2>/dev/null
check "--alloc-fn g: f's call of g" python3 tests/jstack.py "$TMP/a.json" stack 4000 1 "f:$Lfg" "main:$Lmf"
check "--alloc-fn g: main's call of g" python3 tests/jstack.py "$TMP/a.json" stack 4000 1 "main:$Lmg"
# --ignore-fn f leaves out the two blocks allocated under f
"$B/mprof-core" --format=json --ignore-fn f "$exe" "$TMP/gcore-O2" >"$TMP/i.json" 2>/dev/null
check "--ignore-fn f: 11 blocks, 14000 bytes left" python3 tests/jstack.py "$TMP/i.json" total 11 14000
done_testing
