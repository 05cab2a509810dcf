#!/bin/sh
# run-e2e.sh - mprof-core end to end on a PIE C++ program that allocates through a
# shared library (load map from NT_FILE), with an inlined helper under new
# (demangled names, inline frames) and from 4 threads; kernel core and gcore.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v g++ >/dev/null || skip "g++ not installed"
command -v gdb >/dev/null || skip "gdb not installed"

L() { grep -En "MARK:$2( |\$)" "$1" | cut -d: -f1; }
Llib=$(L tests/prog/e2e_lib.c lib)
Lbuild=$(L tests/prog/e2e_main.cc build); Lmw=$(L tests/prog/e2e_main.cc make_widgets)
Lthr=$(L tests/prog/e2e_main.cc thread); Lml=$(L tests/prog/e2e_main.cc main-lib)
Lmain_w=$(L tests/prog/e2e_main.cc main-widgets)

cc -g -O1 -fPIC -shared -o "$TMP/libe2e.so" tests/prog/e2e_lib.c
g++ -g -O1 -pie -fPIE -o "$TMP/e2e" tests/prog/e2e_main.cc -L"$TMP" -le2e -Wl,-rpath,"$TMP" -pthread
check "program is a PIE" sh -c "file -L '$TMP/e2e' | grep -q 'pie executable'"

expect() { # JSON WHAT
	# the C++ runtime and glibc allocate too (libstdc++'s exception pool at start-up,
	# before any unwinder; a DTV per thread): checked by their own stacks
	check "$2: libc's DTV per thread, 4 x 320 B" python3 tests/jstack.py "$1" stack 1280 4 "allocate_dtv:401"
	check "$2: through the shared library" python3 tests/jstack.py "$1" stack 1500 5 "lib_alloc:$Llib" "main:$Lml"
	check "$2: inlined shapes::build under new (named as gdb names inlined frames), demangled caller" python3 tests/jstack.py "$1" stack 800 20 \
		"shapes::build:$Lbuild" "shapes::make_widgets(shapes::Widget**, int):$Lmw" "main:$Lmain_w"
	check "$2: 4 threads x 10 x 128 B" python3 tests/jstack.py "$1" stack 5120 40 "thread_work(void*):$Lthr"
	check "$2: inline frame marked" python3 -c "
import json,sys; d=json.load(open('$1'))
s=[s for s in d['stacks'] if s['bytes']==800][0]
sys.exit(not (s['frames'][0].get('inlined') and not s['frames'][1].get('inlined')))"
	check "$2: library frame names its module" python3 -c "
import json,sys; d=json.load(open('$1'))
s=[s for s in d['stacks'] if s['bytes']==1500][0]
sys.exit(not s['frames'][0]['module'].endswith('libe2e.so'))"
	check "$2: 5 threads" python3 -c "
import json,sys; sys.exit(json.load(open('$1'))['threads'] != 5)"
}

rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./e2e abort) 2>/dev/null
check "kernel core written" test -s "$TMP/core"
"$B/mprof-core" --format=json "$TMP/e2e" "$TMP/core" >"$TMP/k.json" 2>"$TMP/k.err"
check_eq "kernel core: exit 0" 0 $?
expect "$TMP/k.json" "kernel core"

gcore_waiting "$TMP/gcore" "$TMP/e2e" wait
check "gcore written" test -s "$TMP/gcore"
"$B/mprof-core" --format=json "$TMP/e2e" "$TMP/gcore" >"$TMP/g.json" 2>"$TMP/g.err"
check_eq "gcore: exit 0" 0 $?
expect "$TMP/g.json" "gcore"
"$B/mprof-core" "$TMP/e2e" "$TMP/gcore" >"$TMP/g.txt" 2>&1
check_grep "text: inlined frame" "^    shapes::build \(e2e_main.cc:$Lbuild\) \[inlined\]" "$TMP/g.txt"
done_testing
