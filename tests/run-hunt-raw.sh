#!/bin/sh
# run-hunt-raw.sh - a raw dump made from a real x86-64 program: the brk heap of
# a gcore of tests/prog/hunt_allocs.c (built -no-pie, so a raw dump's frames are
# named), cut out of the core as a probe would dump it. With the right --base:
# the 12 blocks of the heap, exact bytes at their lines. With a wrong --base:
# every live header fails its check word (it ties the header to its address)
# while the freed header realloc left does not; the answer must still be the
# one-line hint to check --base and exit 1, not an empty report.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

src=tests/prog/hunt_allocs.c
mark() { grep -n "MARK:$1 " $src | cut -d: -f1; }
exe=$TMP/ha
cc -g -O0 -no-pie -o "$exe" $src
gcore_waiting "$TMP/core" "$exe"
check "gcore written" test -s "$TMP/core"
"$B/mprof-core" --format json --blocks "$exe" "$TMP/core" >"$TMP/core.json" 2>/dev/null
addr=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(min(b["address"] for b in d["block_list"] if b["size"] == 300))' "$TMP/core.json")
base=$(python3 tests/coreseg.py "$TMP/core" "$addr" "$TMP/heap.bin")
check "the heap cut out of the core" test -s "$TMP/heap.bin"

# the right base: the blocks below the mmap threshold, 10493368 - 10485760 bytes
J=$TMP/raw.json
"$B/mprof-core" --format json --raw "$TMP/heap.bin" --elf "$exe" --base "$base" >"$J" 2>"$J.err"
check_eq "right base: exit 0" 0 $?
check "right base: 12 blocks, 7608 bytes" python3 tests/jstack.py "$J" total 12 7608
check "right base: a_calloc's 300 bytes at its line" python3 tests/jstack.py "$J" stack 300 1 "a_calloc:$(mark calloc)"
check "right base: a_grow's 5000 bytes at its line" python3 tests/jstack.py "$J" stack 5000 1 "a_grow:$(mark grow)"
check "right base: a_ma's 123 bytes (memalign 4096) at its line" python3 tests/jstack.py "$J" stack 123 1 "a_ma:$(mark ma)"
check "right base: a_rnull's realloc(NULL) at its line" python3 tests/jstack.py "$J" stack 77 1 "a_rnull:$(mark rnull)"

# a wrong base, by one page either way: the hint, exit 1
for off in 4096 -4096; do
	wrong=$(printf '0x%x' $((base + off)))
	"$B/mprof-core" --raw "$TMP/heap.bin" --elf "$exe" --base "$wrong" >"$TMP/w.out" 2>"$TMP/w.err"
	check_eq "base $off off: exit 1" 1 $?
	check_grep "base $off off: one line asks whether --base is right" \
		"^mprof-core: .*heap\.bin: no valid block found: [0-9]+ headers fail their check word.*is --base $wrong the address of the dump's first byte\?$" "$TMP/w.err"
	check_eq "base $off off: nothing on stdout" 0 "$(wc -c <"$TMP/w.out")"
done
done_testing
