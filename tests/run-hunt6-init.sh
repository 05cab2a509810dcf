#!/bin/sh
# run-hunt6-init.sh - blocks allocated by a shared library's static
# initializers (tests/prog/hunt6_ctorlib.cc: a C++ global's constructor and an
# __attribute__((constructor)) function, and four threads it starts), which
# ld.so runs before libheapann's
# own constructor: each must have its own stack, at its function and line, not
# "no frames recorded" (libstdc++'s own pool neither). Built with g++/gcc -O2 and clang -O0, PIE and not; a
# kernel core of the program's abort and heapann's exit snapshot.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v g++ >/dev/null || skip "g++ not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || skip "core_pattern is not 'core'"

lsrc=tests/prog/hunt6_ctorlib.cc
psrc=tests/prog/hunt6_ctor.c
mark() { grep -n "MARK:$2 " "$1" | cut -d: -f1; }
Lg=$(mark $lsrc gctor); Lc=$(mark $lsrc cctor); Lt=$(mark $lsrc thread); Lp=$(mark $psrc pctor); Lm=$(mark $psrc main)

# check_all NAME JSON: the four blocks, each at its own line
check_all() {
	# and libstdc++'s emergency pool (its size is libstdc++'s): frames too
	check "$1: every block has frames" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
bare = [s['bytes'] for s in d['stacks'] if not s['frames']]
sys.exit('stacks without frames: %s' % bare if bare else 0)" "$2"
	check "$1: the library's C++ global, 4,444 bytes at line $Lg" \
		python3 tests/jstack.py "$2" stack 4444 1 "Hunt6Global::Hunt6Global():$Lg"
	check "$1: the library's constructor function, 3,333 bytes at line $Lc" \
		python3 tests/jstack.py "$2" stack 3333 1 "hunt6_lib_init:$Lc"
	check "$1: the program's constructor, 2,222 bytes at line $Lp" \
		python3 tests/jstack.py "$2" stack 2222 1 "prog_init:$Lp"
	check "$1: main, 5,555 bytes at line $Lm" python3 tests/jstack.py "$2" stack 5555 1 "main:$Lm"
	check "$1: the 4 threads the library's constructor started, 16,406 bytes at line $Lt" \
		python3 tests/jstack.py "$2" stack 16406 4 "hunt6_lib_thread:$Lt"
}

# build NAME CXX CC FLAGS...
build() {
	bn=$1; bcxx=$2; bcc=$3; shift 3
	mkdir -p "$TMP/$bn"
	$bcxx -g "$@" -shared -fPIC -pthread -o "$TMP/$bn/libhunt6ctor.so" $lsrc &&
	$bcc -g "$@" -o "$TMP/$bn/prog" $psrc -L"$TMP/$bn" -lhunt6ctor -Wl,-rpath,"$TMP/$bn"
}

run_case() {
	cn=$1; shift
	build "$@" || { check "$cn: builds" false; return; }
	d=$TMP/$cn
	(cd "$d" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./prog abort >/dev/null 2>&1; true) 2>/dev/null
	check "$cn: kernel core written" test -s "$d/core"
	"$B/mprof-core" --format json "$d/prog" "$d/core" >"$d/k.json" 2>"$d/k.err"
	check_eq "$cn: kernel core: exit 0" 0 $?
	check_all "$cn: kernel core" "$d/k.json"
	rm -f "$d/core"
	"$B/heapann" --format json -o "$d/x.json" "$d/prog" >"$d/x.out" 2>"$d/x.err"
	check_eq "$cn: heapann: the program's status" 0 $?
	check_all "$cn: exit snapshot" "$d/x.json"
}

run_case gcc-O2 gcc-O2 g++ gcc -O2
run_case gcc-O0-nopie gcc-O0-nopie g++ gcc -O0 -no-pie -fno-pie
# HEAPANN_UNWIND=gcc and libunwind: the first allocation after libc's
# initializer loads the unwinder (dlopen) while ld.so is still running the
# initializers. A thread a constructor starts cannot be the one that does it:
# pthread_create allocates the thread's dtv on the creating thread first. 20
# runs each of the gcc-O2 build, every figure exact in each (a hang is cut at
# 60 s and counts as a failure)
for u in gcc libunwind; do
	d=$TMP/gcc-O2
	good=0
	for i in $(seq 20); do
		rm -f "$d/u.json"
		HEAPANN_UNWIND=$u timeout 60 "$B/heapann" --format json -o "$d/u.json" "$d/prog" \
			>"$d/u.out" 2>"$d/u.err" || continue
		out=$(check_all "unwind=$u" "$d/u.json")
		[ $i = 1 ] && echo "$out" | sed 's/^\(not \)*ok [0-9]* - /# run 1: \1ok: /'
		echo "$out" | grep -q '^not ok' || good=$((good + 1))
	done
	check_eq "unwind=$u: 20 of 20 runs exit 0 with every block at its function and line" 20 $good
done

if command -v clang++ >/dev/null && command -v clang >/dev/null; then
	run_case clang-O0 clang-O0 clang++ clang -O0
	run_case clang-O3-nofp clang-O3-nofp clang++ clang -O3 -fomit-frame-pointer
else
	echo "# clang not installed: the clang cases are left out"
fi
done_testing
