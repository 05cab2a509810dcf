#!/bin/sh
# run-hunt5-input.sh - bad input found by the fifth bug hunt (the user's first
# hour): every entry that names a file refuses what is not a regular file with one
# line naming it, exit 1, at once (a FIFO used to block mprof-core for ever in
# open(), waiting for a writer).
. tests/lib.sh
[ -x "$B/mprof-core" ] || skip "build first"
M=$B/mprof-core
prog=$TMP/prog
cc -g -o "$prog" examples/massif_example.c || skip "no cc"

# expect NAME STATUS REGEX ARGS...: exit status (within 20 s), one line on stderr
# matching REGEX
expect() {
	name=$1 want=$2 re=$3; shift 3
	timeout 20 "$M" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check_eq "$name: exit $want" "$want" "$rc"
	check_grep "$name: message" "$re" "$TMP/err"
	check_eq "$name: one line" 1 "$(wc -l <"$TMP/err")"
}

(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$prog" abort) 2>/dev/null
[ -s "$TMP/core" ] || skip "no kernel core written (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
core=$TMP/core

# --- FIFOs and devices where a file is wanted
mkfifo "$TMP/fifo"
expect "FIFO as the core" 1 "^mprof-core: $TMP/fifo: not a regular file$" "$prog" "$TMP/fifo"
expect "FIFO as PROG" 1 "^mprof-core: $TMP/fifo: not a regular file$" "$TMP/fifo" "$core"
expect "FIFO as --raw" 1 "^mprof-core: $TMP/fifo: not a regular file$" --raw "$TMP/fifo" --elf "$prog" --base 0x1000
expect "FIFO as --elf" 1 "^mprof-core: $TMP/fifo: not a regular file" --raw "$core" --elf "$TMP/fifo" --base 0x1000
expect "FIFO as diff's NEW" 1 "^mprof-core: $TMP/fifo: not a regular file$" diff "$prog" "$core" "$TMP/fifo"
expect "FIFO as diff's OLD" 1 "^mprof-core: $TMP/fifo: not a regular file$" diff "$prog" "$TMP/fifo" "$core"
expect "/dev/null as the core" 1 "^mprof-core: /dev/null: not a regular file$" "$prog" /dev/null
expect "/dev/null as PROG" 1 "^mprof-core: /dev/null: not a regular file$" /dev/null "$core"
# --- numbers out of range: compared before they are narrowed (--top 2^64-1 was
# read as -1, the default 25 stacks; --leak-depth 2^32+1 as 1; --ptr-size 2^32+4 as 4)
cat >"$TMP/many.c" <<'C'
#include <stdlib.h>
#define A(n) __attribute__((noinline)) static void *f##n(void) { return malloc(100 + n); }
#define C(n) f##n();
A(0)A(1)A(2)A(3)A(4)A(5)A(6)A(7)A(8)A(9)A(10)A(11)A(12)A(13)A(14)A(15)A(16)A(17)A(18)A(19)
A(20)A(21)A(22)A(23)A(24)A(25)A(26)A(27)A(28)A(29)
int main(void)
{
	C(0)C(1)C(2)C(3)C(4)C(5)C(6)C(7)C(8)C(9)C(10)C(11)C(12)C(13)C(14)C(15)C(16)C(17)C(18)C(19)
	C(20)C(21)C(22)C(23)C(24)C(25)C(26)C(27)C(28)C(29)
	abort();
}
C
cc -g -O0 -o "$TMP/many" "$TMP/many.c"
mkdir "$TMP/mn"
(cd "$TMP/mn" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$TMP/many") 2>/dev/null
check "30 stacks: kernel core written" test -s "$TMP/mn/core"
for n in 0 26 30 31 4294967297 9223372036854775807 9223372036854775808 18446744073709551615; do
	want=30; [ $n = 26 ] && want=26
	"$M" --top $n "$TMP/many" "$TMP/mn/core" >"$TMP/out" 2>"$TMP/err"
	check_eq "--top $n: $want of the 30 stacks" $want "$(grep -c '^#[0-9]*: ' "$TMP/out")"
done
"$M" --top 18446744073709551615 --format json "$TMP/many" "$TMP/mn/core" >"$TMP/j" 2>"$TMP/err"
check_eq "--top 2^64-1, JSON: 30 stacks" 30 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["stacks"]))' "$TMP/j")"
expect "--leak-depth 2^32+1" 2 "^mprof-core: --leak-depth takes 1 to 256, not 4294967297 " --report leaks --leak-depth 4294967297 "$prog" "$core"
expect "--ptr-size 2^32+4" 2 "^mprof-core: --ptr-size must be 4 or 8, not 4294967300 " --raw "$core" --elf "$prog" --base 0 --ptr-size 4294967300

# --- an empty --report (a shell variable left empty) printed the header alone, exit 0
expect "--report ''" 2 "^mprof-core: unknown report '' " --report '' "$prog" "$core"
expect "--report=" 2 "^mprof-core: unknown report '' " --report= "$prog" "$core"

# --- snapshot: report options before the PID keep their values ('snapshot --format
# json PID' took "json" for the PID), and --output is -o
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb >/dev/null 2>&1
if command -v gdb >/dev/null 2>&1; then
	rm -f "$TMP/fifo2" "$TMP/o"; mkfifo "$TMP/fifo2"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$prog" wait <"$TMP/fifo2" >"$TMP/o" 2>/dev/null &
	pid=$!
	exec 9>"$TMP/fifo2"
	n=0; while [ ! -s "$TMP/o" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	"$M" snapshot --format json --top 1 "$pid" -o "$TMP/s.core" >"$TMP/s.json" 2>"$TMP/err"
	check_eq "snapshot --format json --top 1 PID: exit 0" 0 $?
	check_eq "snapshot --format json --top 1 PID: 13 blocks, 20000 bytes, 1 stack listed" "13 20000 1" \
		"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["blocks"], d["bytes"], len(d["stacks"]))' "$TMP/s.json" 2>&1)"
	"$M" snapshot --output "$TMP/s2.core" --no-report "$pid" >"$TMP/out" 2>"$TMP/err"
	check_eq "snapshot --output FILE --no-report PID: writes FILE" "wrote $TMP/s2.core" "$(cat "$TMP/out")"
	check "snapshot --output FILE: the core is there" test -s "$TMP/s2.core"
	# getopt_long takes a unique prefix of a long option (--form is --format, --to
	# is --top, --outp is --output): snapshot's own scan of its arguments must too,
	# or the value is taken for the PID ('--to 1 PID' snapshotted process 1)
	"$M" snapshot --form json --to 1 "$pid" --outp "$TMP/s3.core" >"$TMP/s3.json" 2>"$TMP/err"
	check_eq "snapshot --form json --to 1 PID --outp FILE: exit 0" 0 $?
	check_eq "snapshot --form json --to 1 PID: 13 blocks, 20000 bytes, 1 stack listed" "13 20000 1" \
		"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["blocks"], d["bytes"], len(d["stacks"]))' "$TMP/s3.json" 2>&1)"
	check "snapshot --outp FILE: the core is there" test -s "$TMP/s3.core"
	"$M" snapshot --no-report "$pid" --outp="$TMP/s4.core" >"$TMP/out" 2>"$TMP/err"
	check_eq "snapshot --outp=FILE --no-report PID: writes FILE" "wrote $TMP/s4.core" "$(cat "$TMP/out")"
	echo >&9; exec 9>&-
	wait $pid
else
	echo "# no gdb: the snapshot part is not run"
fi

# --- a qemu-user core has no file list (NT_FILE): a static program's core without
# annotated blocks was told "ran without libheapann: run it as heapann PROG",
# which cannot work; the program file's missing PT_INTERP now says it is static
printf '#include <stdlib.h>\nint main(void){ char *p = malloc(100); p[0] = 1; abort(); }\n' >"$TMP/ab.c"
if command -v qemu-x86_64 >/dev/null 2>&1 && [ "$(uname -m)" = x86_64 ] &&
   cc -static -o "$TMP/sab" "$TMP/ab.c" 2>/dev/null && cc -o "$TMP/dab" "$TMP/ab.c"; then
	mkdir "$TMP/q"
	(cd "$TMP/q" && ulimit -c unlimited && qemu-x86_64 "$TMP/sab"; qemu-x86_64 "$TMP/dab") 2>/dev/null
	qs=$(ls "$TMP"/q/qemu_sab_*.core 2>/dev/null | head -n 1)
	qd=$(ls "$TMP"/q/qemu_dab_*.core 2>/dev/null | head -n 1)
	if [ -n "$qs" ] && [ -n "$qd" ]; then
		expect "qemu core, static program" 1 "^mprof-core: $qs: no block annotated by libheapann and no statistics region: $TMP/sab is statically linked, so LD_PRELOAD cannot reach it: link it with the static kit" "$TMP/sab" "$qs"
		expect "qemu core, dynamic program" 1 "^mprof-core: $qd: no block annotated by libheapann and no statistics region: the program ran without libheapann: run it as heapann $TMP/dab " "$TMP/dab" "$qd"
	else
		echo "# qemu-x86_64 wrote no core: its part is not run"
	fi
else
	echo "# no qemu-x86_64 or no static libc: the qemu part is not run"
fi

# --- a program file cut short (an interrupted copy) matched the core by its
# build-id, in its first page, and every frame then said "no debug info"; it is
# now refused by name. Stripped and debug-only files are whole and still read.
psize=$(stat -c %s "$prog")
head -c 8000 "$prog" >"$TMP/progcut"
expect "PROG cut at 8000 bytes" 1 "^mprof-core: $TMP/progcut: truncated ELF file: 8000 bytes, its headers describe $psize$" "$TMP/progcut" "$core"
expect "--elf cut at 8000 bytes" 1 "^mprof-core: $TMP/progcut: truncated ELF file: 8000 bytes, its headers describe $psize$" --raw "$core" --elf "$TMP/progcut" --base 0x1000
strip -o "$TMP/prog.stripped" "$prog"
objcopy --only-keep-debug "$prog" "$TMP/prog.debug"
for f in prog.stripped prog.debug; do
	"$M" "$TMP/$f" "$core" >"$TMP/out" 2>"$TMP/err"
	check_eq "$f: exit 0" 0 $?
	check_grep "$f: the 13 blocks" '^live blocks: 13, requested bytes: 20,000,' "$TMP/out"
done
# a stripped program was said to get "function names from the symbol table" it no
# longer has; one with only its debug info stripped still has them
"$M" "$TMP/prog.stripped" "$core" >"$TMP/out" 2>"$TMP/err"
check_grep "stripped: says so" 'prog\.stripped: no debug info and no function symbols \(stripped\); showing module\+offset$' "$TMP/err"
strip --strip-debug -o "$TMP/prog.nodebug" "$prog"
"$M" "$TMP/prog.nodebug" "$core" >"$TMP/out" 2>"$TMP/err"
check_eq "debug info stripped, symbols kept: exit 0" 0 $?
check_grep "debug info stripped: names from the symbol table" 'prog\.nodebug: no debug info; function names from the symbol table$' "$TMP/err"
check_grep "debug info stripped: main named" '^    main \[prog\.nodebug\]$' "$TMP/out"

# --- the order of things: CORE and PROG swapped, options before diff or snapshot
expect "CORE PROG swapped" 1 "^mprof-core: $prog: not a core file \(.*\); $core is a core: the order is PROG CORE$" "$core" "$prog"
expect "options before diff" 2 "^mprof-core: options go after diff: mprof-core diff \[OPTIONS\] PROG OLD NEW " --top 2 diff "$prog" "$core" "$core"
(cd "$TMP" && "$TOP/$M" --format json snapshot 123 >"$TMP/out" 2>"$TMP/err")
check_eq "options before snapshot: exit 2" 2 $?
check_grep "options before snapshot: message" "^mprof-core: options go after snapshot: mprof-core snapshot \[OPTIONS\] PID " "$TMP/err"
"$M" --top 2 diff "$core" >"$TMP/out" 2>"$TMP/err"
check_grep "a program named diff is still a program" "^mprof-core: diff: No such file" "$TMP/err"

# --- a core over 4 GiB (sparse): 5 GiB mapped below the heap, so every block lies
# past file offset 4 GiB (no bug found; offsets must not be 32-bit anywhere)
cat >"$TMP/big.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
int main(void)
{
	char *low = mmap((void *)0x200000000, 5UL << 30, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	char *a, *b;

	if (low == MAP_FAILED)
		return 2;
	low[4096] = 1;
	a = malloc(3000);
	b = malloc(5000);
	memset(a, 1, 3000);
	memset(b, 2, 5000);
	printf("%p\n", (void *)b);
	fflush(stdout);
	abort();
}
C
cc -g -o "$TMP/big" "$TMP/big.c"
mkdir "$TMP/bg"
(cd "$TMP/bg" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$TMP/big" >"$TMP/big.out") 2>/dev/null
if [ -s "$TMP/bg/core" ] && [ "$(stat -c %s "$TMP/bg/core")" -gt 4294967296 ]; then
	"$M" "$TMP/big" "$TMP/bg/core" >"$TMP/out" 2>"$TMP/err"
	check_eq "core over 4 GiB: exit 0" 0 $?
	check_grep "core over 4 GiB: its 3 blocks (a, b, stdout's 4,096), 12,096 bytes" '^live blocks: 3, requested bytes: 12,096,' "$TMP/out"
	b=$(cat "$TMP/big.out")
	check_eq "core over 4 GiB: --addr of b+4999" "address $(printf 0x%x $((b + 4999))): 4,999 bytes into live block $b (5,000 bytes, seq 2)" \
		"$("$M" --addr $(printf 0x%x $((b + 4999))) "$TMP/big" "$TMP/bg/core" 2>&1 | grep '^address')"
else
	echo "# no core over 4 GiB written (a file system without sparse files?): its part is not run"
fi
rm -rf "$TMP/bg"

# --- an address pasted without its 0x: the hint says how to write it
expect "--addr without 0x" 2 "^mprof-core: bad number for --addr: 55d0c2a4f0 is hexadecimal: write 0x55d0c2a4f0 " --addr 55d0c2a4f0 "$prog" "$core"
expect "--base without 0x" 2 "^mprof-core: bad number for --base: 2000fff0 is hexadecimal: write 0x2000fff0 " --raw "$core" --elf "$prog" --base 2000fff0
expect "--top abc: no address hint" 2 "^mprof-core: bad number for --top \(see mprof-core --help\)$" --top abc "$prog" "$core"
expect "--addr 0xZZ" 2 "^mprof-core: bad number for --addr \(see mprof-core --help\)$" --addr 0xZZ "$prog" "$core"

# --- a core of another machine given with a program of the same name: a qemu-user
# core has no build-id to compare, only the name, so an x86-64 build of the
# program passed and its symbols named ARM addresses
cp "$core" "$TMP/core.arm"
printf '\050\000' | dd of="$TMP/core.arm" bs=1 seek=18 conv=notrunc 2>/dev/null   # e_machine = EM_ARM
expect "core's e_machine ARM, PROG x86-64" 1 "^mprof-core: $TMP/core.arm: core of a program for ARM, but $prog is for x86-64$" "$prog" "$TMP/core.arm"
if command -v arm-linux-gnueabihf-gcc >/dev/null 2>&1 && command -v qemu-arm >/dev/null 2>&1 &&
   arm-linux-gnueabihf-gcc -static -o "$TMP/armab" "$TMP/ab.c" 2>/dev/null; then
	mkdir -p "$TMP/qa" "$TMP/x86"
	(cd "$TMP/qa" && ulimit -c unlimited && qemu-arm "$TMP/armab") 2>/dev/null
	qa=$(ls "$TMP"/qa/qemu_armab_*.core 2>/dev/null | head -n 1)
	cc -o "$TMP/x86/armab" "$TMP/ab.c"
	if [ -n "$qa" ]; then
		expect "qemu-arm core, an x86-64 armab" 1 "^mprof-core: $qa: core of a program for ARM, but $TMP/x86/armab is for x86-64$" "$TMP/x86/armab" "$qa"
	fi
fi

# --- a mistyped --debug-dir was ignored without a word (exit 0, names missing)
expect "--debug-dir missing" 1 "^mprof-core: $TMP/nodir: --debug-dir is not a directory$" --debug-dir "$TMP/nodir" "$prog" "$core"
expect "--debug-dir a file" 1 "^mprof-core: $core: --debug-dir is not a directory$" --debug-dir "$core" "$prog" "$core"
expect "diff --debug-dir missing" 1 "^mprof-core: $TMP/nodir: --debug-dir is not a directory$" diff --debug-dir "$TMP/nodir" "$prog" "$core" "$core"
"$M" --debug-dir "$TMP" "$prog" "$core" >"$TMP/out" 2>"$TMP/err"
check_eq "--debug-dir an existing directory: exit 0" 0 $?

# --- -o naming an input truncated it before it was read: the core (often the only
# one there is) became the report, the program became a report too
cp "$core" "$TMP/c.copy"; cp "$prog" "$TMP/p.copy"
sum_c=$(cksum <"$TMP/c.copy"); sum_p=$(cksum <"$TMP/p.copy")
expect "-o CORE" 2 "^mprof-core: -o $TMP/c.copy is an input of this run: it would be overwritten " -o "$TMP/c.copy" "$prog" "$TMP/c.copy"
expect "-o PROG (another spelling)" 2 "^mprof-core: -o $TMP/./p.copy is an input of this run" -o "$TMP/./p.copy" "$TMP/p.copy" "$core"
expect "diff -o NEW" 2 "^mprof-core: -o $TMP/c.copy is an input of this run" diff -o "$TMP/c.copy" "$prog" "$core" "$TMP/c.copy"
expect "--raw DUMP -o DUMP" 2 "^mprof-core: -o $TMP/c.copy is an input of this run" --raw "$TMP/c.copy" --elf "$prog" --base 0x1000 -o "$TMP/c.copy"
check_eq "-o CORE: the core is untouched" "$sum_c" "$(cksum <"$TMP/c.copy")"
check_eq "-o PROG: the program is untouched" "$sum_p" "$(cksum <"$TMP/p.copy")"

# --- a core without read permission (root reads everything: the check then runs
# as nobody through setpriv, or is left out)
cp "$core" "$TMP/c.noperm"; chmod 000 "$TMP/c.noperm"
if [ "$(id -u)" != 0 ]; then
	expect "core without read permission" 1 "^mprof-core: $TMP/c.noperm: Permission denied$" "$prog" "$TMP/c.noperm"
elif command -v setpriv >/dev/null 2>&1 &&
     setpriv --reuid=65534 --regid=65534 --clear-groups "$TOP/$M" --version >/dev/null 2>&1; then
	chmod 755 "$TMP"; chmod 755 "$prog"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TOP/$M" "$prog" "$TMP/c.noperm" >"$TMP/out" 2>"$TMP/err"
	check_eq "core without read permission (as nobody): exit 1" 1 $?
	check_eq "core without read permission (as nobody): one line" "mprof-core: $TMP/c.noperm: Permission denied" "$(cat "$TMP/err")"
	chmod 700 "$TMP"
fi

done_testing
