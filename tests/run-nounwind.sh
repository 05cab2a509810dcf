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
# Then rbp that is no frame pointer on purpose (tests/prog/nounwind_bad.c,
# nounwind_lock.c): no fault, no deadlock, no made-up caller.
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

# ---- rbp that is no frame pointer (a review's reproducers) ----
# tests/prog/nounwind_bad.c: each case ran into a fault inside malloc (SIGSEGV
# in 20 of 20 runs) or named a function pointer or a string as the caller,
# before the frame-pointer step read through the thread's own stack bounds or
# the kernel and asked for a return address in loaded code after a call.
d=$TMP/bad; mkdir -p "$d"
NU="-fno-asynchronous-unwind-tables -fno-unwind-tables"
if gcc -O2 -g -c -o "$d/o2.o" tests/prog/nounwind_bad_o2.c &&
	gcc -O2 -g $NU -DNU_HANDLER -c -o "$d/h.o" tests/prog/nounwind_bad_o2.c &&
	gcc -O0 -g -o "$d/bad" tests/prog/nounwind_bad.c tests/prog/nounwind_fp.S "$d/o2.o" "$d/h.o" -ldl &&
	gcc -O2 -g -shared -fPIC -o "$d/nounwind_bad_lib.so" tests/prog/nounwind_bad_lib.c; then
	for c in coro:101:nu_call altstack:110:nu_on_usr1 ownstack:102:nu_call dlclose:103:nu_call \
		vmread:104:nu_call data:105:nu_call; do
		set -- $(echo $c | tr : ' ')
		ok=0
		for i in 1 2 3; do
			out=$(cd "$d" && LD_PRELOAD="$TOP/$B/libheapann.so" ./bad $1 run ./nounwind_bad_lib.so 2>/dev/null)
			[ $? = 0 ] && [ "$out" = "ok $2" ] && ok=$((ok + 1))
		done
		check_eq "rbp no frame pointer, $1: no fault, 3 of 3 runs" 3 $ok
		rm -f "$d/core"
		(cd "$d" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./bad $1 abort ./nounwind_bad_lib.so >/dev/null 2>&1; true) 2>/dev/null
		"$B/mprof-core" --format json --blocks "$d/bad" "$d/core" >"$d/$1.json" 2>/dev/null
		# the block's stack starts at its function; after it only a
		# function whose return address rbp pointed at (ownstack, vmread
		# plant real ones: a frame pointer cannot tell them apart)
		check_eq "rbp no frame pointer, $1: the block's stack" "$3" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["block_list"]:
    if b["size"] == int(sys.argv[2]):
        f = [x.get("function") for x in d["stacks"][b["stack"]]["frames"]]
        ok = f[1:] in ([], ["nu_big_frame_ra"], ["nu_small_frame_ra"])
        print(f[0] if ok else f)
        break
else:
    print("no block")' "$d/$1.json" $2)"
	done
	# the -O2 case of the review: rbp kept a pointer to main's struct, whose
	# second word is a function pointer (named as the caller before)
	cat >"$d/wrong.c" <<'EOC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct op { long n; void (*fn)(long); };
void report(long v) { printf("%ld\n", v); }
__attribute__((noinline)) void *build(struct op *o, size_t n)
{
	void *p = malloc(n);
	memset(p, 1, n);
	o->fn(o->n += (long)n);
	return p;
}
int main(int argc, char **argv)
{
	struct op o = { argc, report };
	void *p = build(&o, 1234);
	(void)argv;
	if (argc > 1)
		abort();
	free(p);
	return 0;
}
EOC
	gcc -O2 -g $NU -o "$d/wrong" "$d/wrong.c"
	rm -f "$d/core"
	(cd "$d" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./wrong x >/dev/null 2>&1; true) 2>/dev/null
	"$B/mprof-core" --format json --blocks "$d/wrong" "$d/core" >"$d/wrong.json" 2>/dev/null
	check_eq "-O2, rbp at a struct holding a function pointer: build's block, no made-up caller" "['build']" \
		"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print([[x.get("function") for x in d["stacks"][b["stack"]]["frames"]] for b in d["block_list"] if b["size"] == 1234][0])' "$d/wrong.json")"
	# the deadlock: four threads, 5 seconds of progress
	if gcc -O0 -g $NU -pthread -o "$d/lock" tests/prog/nounwind_lock.c -ldl; then
		out=$(cd "$d" && LD_PRELOAD="$TOP/$B/libheapann.so" timeout 30 ./lock 5 ./nounwind_bad_lib.so 2>/dev/null)
		check_eq "no unwind tables, dl_iterate_phdr with a malloc in its callback, fork and dlopen: no deadlock" \
			moving "$out"
	fi
else
	check "the rbp cases build" false
fi
done_testing
