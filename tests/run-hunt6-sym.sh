#!/bin/sh
# run-hunt6-sym.sh - frames named as the program knows them, where libdw alone
# gets them wrong:
# - tests/prog/hunt6_lines.c under gcc -O2: _start, which follows main's
#   .text.startup code, and nodebug_alloc (tests/prog/hunt6_nodebug.c, no -g,
#   linked after) have no debug info: no file:line for them (libdw gave _start
#   the row that ends main's code), every other frame at its MARK line; with
#   the symbol cache cold and warm.
# - tests/prog/hunt6_stacks.c (gcc -O2, -O0 non-PIE, clang -O3 without frame
#   pointers): a signal handler on a sigaltstack, makecontext coroutines
#   switched between allocations, a longjmp out of 50 frames, recursion deeper
#   than HEAPANN_DEPTH (16 and 32): every block's frames exact (also gcc -O0
#   without unwind tables: the walker steps it by rbp; a coroutine's stack
#   then ends at its function, since the trampoline's address follows no call)
#   (tests/hunt6_stacks.py), and, with libc's symbol table (libc6-dbg), the
#   trampolines "returned" to named: __restore_rt after the handler,
#   __start_context after the coroutine's first function (a raw address before),
#   by libdw and by gdb (--symbolizer gdb, on the gcc -O2 build).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || skip "core_pattern is not 'core'"

# kcore DIR ARGS...: run DIR/prog ARGS under the preload until it aborts
kcore() {
	kd=$1; shift
	rm -f "$kd/core"
	(cd "$kd" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./prog "$@" >/dev/null 2>&1; true) 2>/dev/null
	test -s "$kd/core"
}

# ---- lines: _start and a function without debug info ----
src=tests/prog/hunt6_lines.c
mark() { grep -n "MARK:$2 " "$1" | cut -d: -f1; }
Ll=$(mark $src lines); Lml=$(mark $src main-lines); Lmn=$(mark $src main-nodebug); Lm=$(mark $src main)
for v in pie nopie; do
	d=$TMP/lines-$v; mkdir -p "$d"
	[ $v = pie ] && f="" || f="-no-pie -fno-pie"
	gcc -O2 $f -c -o "$d/nd.o" tests/prog/hunt6_nodebug.c
	gcc -g -O2 $f -o "$d/prog" $src "$d/nd.o"
	check "lines $v: gcc puts main before _start (what this case is about)" sh -c \
		"nm '$d/prog' | awk '\$3 == \"main\" { m = \$1 } \$3 == \"_start\" { s = \$1 } END { exit !(m < s) }'"
	check "lines $v: kernel core" kcore "$d" xa
	for run in cold warm; do
		J=$d/$run.json
		"$B/mprof-core" --format json "$d/prog" "$d/core" >"$J" 2>/dev/null
		check_eq "lines $v $run: exit 0" 0 $?
		check "lines $v $run: lines_alloc, 7,007 bytes at line $Ll" \
			python3 tests/jstack.py "$J" stack 7007 1 "lines_alloc:$Ll" "main:$Lml"
		check "lines $v $run: main, 8,008 bytes at line $Lm" python3 tests/jstack.py "$J" stack 8008 1 "main:$Lm"
		check "lines $v $run: nodebug_alloc without a line, 6,006 bytes" \
			python3 tests/jstack.py "$J" stack 6006 1 "nodebug_alloc:None" "main:$Lmn"
		check "lines $v $run: _start has no file or line, in each of the 3 stacks" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
st = [f for s in d['stacks'] for f in s['frames'] if f.get('function') == '_start']
bad = [f for f in st if f.get('file') is not None or f.get('line') is not None]
sys.exit('%d _start frames, wrong: %s' % (len(st), bad) if bad or len(st) != 3 else 0)" "$J"
	done
	"$B/mprof-core" "$d/prog" "$d/core" >"$d/text" 2>/dev/null
	check_grep "lines $v: the text report's _start line has no (file:line)" '^    _start \[prog\]$' "$d/text"
done

# ---- stacks: signal handler, coroutines, longjmp, deep recursion ----
src=tests/prog/hunt6_stacks.c
# libc's symbol table (libc6-dbg): the trampolines have names there only
tramp=0
libc=$(ldd /bin/true 2>/dev/null | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
id=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: //p')
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
if [ -n "$id" ] && [ -f "$dbg" ] && readelf -s "$dbg" 2>/dev/null | grep -q ' __restore_rt$' &&
	readelf -s "$dbg" 2>/dev/null | grep -q ' __start_context$'; then
	tramp=1
else
	echo "# libc's symbol table not installed (libc6-dbg): the trampolines' names are not checked"
fi
nstacks=0
stacks_case() {
	sn=$1; scc=$2; shift 2
	ctramp=$tramp
	case "$*" in *-fno-asynchronous-unwind-tables*) [ $tramp = 1 ] && ctramp=nofde ;; esac
	command -v $scc >/dev/null || { echo "# $scc not installed: $sn left out"; return; }
	d=$TMP/$sn; mkdir -p "$d"
	$scc -g "$@" -o "$d/prog" $src
	for depth in 32 16; do
		HEAPANN_DEPTH=$depth; export HEAPANN_DEPTH
		check "$sn depth $depth: kernel core" kcore "$d" abort
		unset HEAPANN_DEPTH
		"$B/mprof-core" --format json --blocks "$d/prog" "$d/core" >"$d/j.json" 2>/dev/null
		check_eq "$sn depth $depth: exit 0" 0 $?
		check "$sn depth $depth: every block's frames (the handler's, coroutines', after longjmp, rec's innermost $depth)" \
			python3 tests/hunt6_stacks.py "$d/j.json" $src $depth $ctramp
	done
	# gdb's symbolizer, on the last core (depth 16)
	if command -v gdb >/dev/null && [ $nstacks = 0 ]; then
		"$B/mprof-core" --symbolizer gdb --format json --blocks "$d/prog" "$d/core" >"$d/g.json" 2>/dev/null
		check_eq "$sn gdb: exit 0" 0 $?
		check "$sn gdb: every block's frames, the trampolines named" \
			python3 tests/hunt6_stacks.py "$d/g.json" $src 16 $ctramp
	fi
	nstacks=$((nstacks + 1))
}
stacks_case gcc-O2 gcc -O2
stacks_case gcc-O0-nopie gcc -O0 -no-pie -fno-pie
stacks_case clang-O3-nofp clang -O3 -fomit-frame-pointer
stacks_case gcc-O0-nounwind gcc -O0 -fno-asynchronous-unwind-tables -fno-unwind-tables
done_testing
