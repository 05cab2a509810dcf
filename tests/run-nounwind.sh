#!/bin/sh
# run-nounwind.sh - a program built without unwind tables
# (-fno-asynchronous-unwind-tables -fno-unwind-tables: no FDE covers its code),
# tests/prog/nounwind.c. libheapann's walker used to end every such stack at
# malloc's caller, unmarked (1 frame of 4 to 11 in each block's stack). It now
# steps that code with rbp as the frame pointer, as gdb and valgrind do: with
# frame pointers (gcc -O0, PIE and not, gcc -O2 -fno-omit-frame-pointer,
# clang -O0) every block's stack is whole and exact (tests/nounwind.py exact),
# through libc's qsort calling back into the program, a thread's start routine,
# a library with unwind tables between two functions without, and a makecontext
# coroutine whose stack (in .bss) ends at the trampoline, never in main's frames.
# Without frame pointers (gcc -O2 -fomit-frame-pointer) rbp holds anything: the
# stack may stop early, but every frame shown is right (nounwind.py prefix).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (libheapann's own walker)"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || skip "core_pattern is not 'core'"

src=tests/prog/nounwind.c
NU="-fno-asynchronous-unwind-tables -fno-unwind-tables"

# variant NAME MODE CC CFLAGS...: build, take a kernel core, check the frames
variant() {
	vn=$1 mode=$2 vcc=$3; shift 3
	command -v "$vcc" >/dev/null || { echo "# $vcc not installed: $vn left out"; return; }
	d=$TMP/$vn; mkdir -p "$d"
	$vcc -g "$@" $NU -pthread -c -o "$d/nu.o" $src &&
		gcc -g -O2 -c -o "$d/lib.o" tests/prog/nounwind_lib.c &&
		$vcc -g "$@" -pthread -o "$d/prog" "$d/nu.o" "$d/lib.o" || { check "$vn: builds" false; return; }
	# (-g still writes .debug_frame, which gdb reads; the walker reads .eh_frame)
	m=$(nm "$d/prog" | awk '$3 == "main" { print $1 }')
	check_eq "$vn: no FDE in .eh_frame covers main (what this test is about)" 0 \
		"$(readelf --debug-dump=frames "$d/prog" 2>/dev/null | awk '/^Contents of the .debug_frame/ { exit } { print }' |
		grep -c "pc=$m\.\.")"
	rm -f "$d/core"
	(cd "$d" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./prog abort >"$d/out" 2>/dev/null; true) 2>/dev/null
	check_eq "$vn: the program made its 5 blocks, then a kernel core" "blocks 5 yes" \
		"$(cat "$d/out") $(test -s "$d/core" && echo yes)"
	"$B/mprof-core" --format json --blocks "$d/prog" "$d/core" >"$d/j.json" 2>"$d/err"
	check_eq "$vn: exit 0" 0 $?
	check "$vn: every block's frames ($mode)" python3 tests/nounwind.py "$d/j.json" $src $mode
	# the gdb symbolizer names the same frames
	if [ "$vn" = gcc-O0 ] && command -v gdb >/dev/null; then
		"$B/mprof-core" --symbolizer gdb --format json --blocks "$d/prog" "$d/core" >"$d/g.json" 2>/dev/null
		check "$vn gdb: every block's frames ($mode)" python3 tests/nounwind.py "$d/g.json" $src $mode
	fi
}

variant gcc-O0 exact gcc -O0
variant gcc-O0-nopie exact gcc -O0 -no-pie -fno-pie
variant gcc-O2-fp exact gcc -O2 -fno-omit-frame-pointer
variant clang-O0 exact clang -O0
variant gcc-O2-nofp prefix gcc -O2 -fomit-frame-pointer
done_testing
