#!/bin/sh
# run-freed-large.sh - --addr on freed blocks of 1,024 bytes and more, which
# glibc's free writes over more of the header than START (tests/prog/freed_large.c):
# in the unsorted bin fd_nextsize and bk_nextsize are NULL, in a large bin the
# first chunk of its size holds heap pointers there. With an even depth the
# header has a pad word before it (INFO and SIZE overwritten), with an odd one
# none (SIZE and DEPTH overwritten). Each freed block must read as freed with
# its size, at depths 8 (a pad word) and 9 (none), the chain whole. At depths
# 2 and 3 the chain (main, two frames of libc's start, _start) is cut: the
# DEPTH word's flag, which glibc wrote over in some blocks, is proven with the
# size, and each block's stack must say it was cut, in text and in JSON.
# Then 20,000 pairs of adjacent freed blocks merged by glibc
# (tests/prog/freed_pairs.c): the last pairs' first blocks read 1,024 bytes.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"

exe=$TMP/freed_large
cc -g -O0 -o "$exe" tests/prog/freed_large.c
for d in 8 9 2 3; do
	HEAPANN_DEPTH=$d gcore_waiting "$TMP/core$d" "$exe"
	check "depth $d: gcore written" test -s "$TMP/core$d"
	set -- $(cat "$TMP/out")
	while [ $# -ge 2 ]; do
		a=$1 n=$2; shift 2
		"$B/mprof-core" -q --addr "$a" "$exe" "$TMP/core$d" >"$TMP/a" 2>&1
		check_grep "depth $d: freed $n-byte block $a" \
			"^address $a: 0 bytes into freed block $a \\(${n%???},${n#?} bytes, seq [0-9]+\\)\$" "$TMP/a"
		[ $d -gt 3 ] && continue
		check_grep "depth $d: freed block $a's stack is cut" \
			"^ +\\(More stack frames follow: cut at HEAPANN_DEPTH=$d\\)\$" "$TMP/a"
		"$B/mprof-core" -q --format json --addr "$a" "$exe" "$TMP/core$d" >"$TMP/j" 2>&1
		check_grep "depth $d: freed block $a's stack is cut (JSON)" \
			"\"address\":\"$a\".*\"state\":\"freed\".*\"cut\":true" "$TMP/j"
	done
done
# 20,000 merged pairs: proving each first block's size by trying every size
# (~1,000 check words a block) spent the scan's budget of 16M long before the
# last pairs, which read "0 bytes"; glibc's prev_size word names the old chunk
exe=$TMP/freed_pairs
cc -g -O0 -o "$exe" tests/prog/freed_pairs.c
gcore_waiting "$TMP/corep" "$exe"
check "pairs: gcore written" test -s "$TMP/corep"
set -- $(cat "$TMP/out")
args=
while [ $# -ge 2 ]; do args="$args --addr $1"; shift; done
"$B/mprof-core" -q $args "$exe" "$TMP/corep" >"$TMP/p" 2>&1
check_eq "pairs: the last 20 first blocks read freed, 1,024 bytes, proven" 20 \
	"$(grep -Ec '^address (0x[0-9a-f]+): 0 bytes into freed block \1 \(1,024 bytes, seq [0-9]+\)$' "$TMP/p")"
done_testing
