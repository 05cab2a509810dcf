#!/bin/sh
# run-hunt-depth.sh - tests/prog/hunt_allocs.c under HEAPANN_DEPTH=1 and 2. With
# one frame per block, libc's strdup keeps only its own frame, an allocator
# frame: such a block has a frame all the same, and must not be reported as one
# with "no frames recorded" (mixed with the blocks allocated before the unwinder
# was ready), nor disappear. Every other block is at its own function and line.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

src=tests/prog/hunt_allocs.c
mark() { grep -n "MARK:$1 " $src | cut -d: -f1; }
exe=$TMP/ha
cc -g -O0 -o "$exe" $src
# STACK JSON BYTES REGEX: the stack of BYTES bytes has an innermost frame whose
# function matches REGEX
innermost() {
	python3 - "$@" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
for s in d["stacks"]:
    if s["bytes"] == int(sys.argv[2]) and s["blocks"] == 1:
        f = s["frames"]
        if f and re.search(sys.argv[3], f[0].get("function") or ""):
            sys.exit(0)
        sys.exit("stack of %s bytes: frames %s" % (sys.argv[2], [x.get("function") for x in f]))
sys.exit("no stack of %s bytes in 1 block" % sys.argv[2])
PY
}
for d in 1 2; do
	HEAPANN_DEPTH=$d gcore_waiting "$TMP/d$d.core" "$exe"
	check "depth $d: gcore written" test -s "$TMP/d$d.core"
	J=$TMP/d$d.json
	"$B/mprof-core" --format json "$exe" "$TMP/d$d.core" >"$J" 2>"$J.err"
	check_eq "depth $d: exit 0" 0 $?
	check "depth $d: 15 blocks, 10493368 bytes" python3 tests/jstack.py "$J" total 15 10493368
	check "depth $d: every block has frames" python3 tests/jstack.py "$J" framed 15 10493368
	check "depth $d: 15 stacks, one per site" python3 tests/jstack.py "$J" nstacks 15
	check "depth $d: a_calloc at its line" python3 tests/jstack.py "$J" stack 300 1 "a_calloc:$(mark calloc)"
	check "depth $d: a_big at its line" python3 tests/jstack.py "$J" stack 5242880 1 "a_big:$(mark big)"
	"$B/mprof-core" "$exe" "$TMP/d$d.core" >"$TMP/d$d.txt" 2>&1
	check "depth $d: no 'no frames recorded' in the text" sh -c "! grep -q 'no frames recorded' '$TMP/d$d.txt'"
done
# depth 1: strdup's own frame is all there is
check "depth 1: strdup's block keeps libc's strdup frame" innermost "$TMP/d1.json" 12 'strdup'
check "depth 1: strndup's block keeps libc's strndup frame" innermost "$TMP/d1.json" 6 'strndup'
# depth 2: the caller is there, the allocator frame is stripped as usual
check "depth 2: a_sd at its line" python3 tests/jstack.py "$TMP/d2.json" stack 12 1 "a_sd:$(mark sd)"
check "depth 2: a_snd at its line" python3 tests/jstack.py "$TMP/d2.json" stack 6 1 "a_snd:$(mark snd)"
done_testing
