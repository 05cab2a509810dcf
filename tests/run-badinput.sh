#!/bin/sh
# run-badinput.sh - every kind of bad input gets one clear line on stderr that names
# the file and the problem, and exit status 1 (2 for bad usage); never a crash.
. tests/lib.sh
[ -x "$B/mprof-core" ] || skip "build first"
M=$B/mprof-core
prog=$TMP/prog
cc -g -o "$prog" examples/massif_example.c
other=$TMP/other
printf 'int main(void){return 0;}\n' >"$TMP/other.c" && cc -o "$other" "$TMP/other.c"

# expect NAME STATUS REGEX ARGS...: exit status, one line on stderr matching REGEX
expect() {
	name=$1 want=$2 re=$3; shift 3
	"$M" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check_eq "$name: exit $want" "$want" "$rc"
	check_grep "$name: message" "$re" "$TMP/err"
	check_eq "$name: one line" 1 "$(wc -l <"$TMP/err")"
}

: >"$TMP/empty"
head -c 100000 /dev/urandom >"$TMP/random"
mkdir "$TMP/dir"
expect "missing core" 1 "^mprof-core: $TMP/nope: .*(No such file|not found)" "$prog" "$TMP/nope"
expect "empty core" 1 "^mprof-core: $TMP/empty: .*empty" "$prog" "$TMP/empty"
expect "random bytes" 1 "^mprof-core: $TMP/random: .*not an ELF" "$prog" "$TMP/random"
expect "directory" 1 "^mprof-core: $TMP/dir: .*directory" "$prog" "$TMP/dir"
expect "ELF that is not a core" 1 "^mprof-core: $prog: .*not a core" "$prog" "$prog"

# a core of the program run without libheapann: says so, and why, with exit 1
# (issue 13: it used to be an empty report and exit 0)
(cd "$TMP" && ulimit -c unlimited && "$prog" abort) 2>/dev/null
check "kernel core of a plain run written" test -s "$TMP/core"
expect "core without the library" 1 "^mprof-core: $TMP/core: no block annotated by libheapann and no statistics region: the program ran without libheapann: run it as heapann $prog or with LD_PRELOAD=/absolute/path/libheapann.so" "$prog" "$TMP/core"
mv "$TMP/core" "$TMP/core.plain"

# a real core for the rest, of the program under the preload
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$prog" abort) 2>/dev/null
check "kernel core written" test -s "$TMP/core"
expect "core of another program" 1 "^mprof-core: $TMP/core: core of another program: .*/prog \(build-id [0-9a-f]+\), not $other \(build-id [0-9a-f]+\)$" "$other" "$TMP/core"
expect "missing program" 1 "^mprof-core: $TMP/nope: " "$TMP/nope" "$TMP/core"
# truncated: headers intact, the rest cut: a partial result that says what is missing
size=$(stat -c %s "$TMP/core")
head -c $((size / 2)) "$TMP/core" >"$TMP/half"
"$M" "$prog" "$TMP/half" >"$TMP/out" 2>"$TMP/err"
check_eq "truncated core: still reports (exit 0)" 0 $?
check_grep "truncated core: says what is missing" "missing from the image: .*truncated" "$TMP/out"
# a plain run's core cut in half: libheapann is not among its mapped files, so it
# was not there (the file list is in the notes, at the start)
head -c $(($(stat -c %s "$TMP/core.plain") / 2)) "$TMP/core.plain" >"$TMP/half.plain"
expect "truncated core without the library" 1 "^mprof-core: $TMP/half.plain: no block annotated by libheapann" "$prog" "$TMP/half.plain"
# cut inside the ELF headers: an error, not a crash
head -c 100 "$TMP/core" >"$TMP/tiny"
expect "core cut in its headers" 1 "^mprof-core: $TMP/tiny: " "$prog" "$TMP/tiny"
# raw dumps
expect "raw: --elf is a core" 1 "^mprof-core: $TMP/core: .*core" --raw "$TMP/random" --elf "$TMP/core" --base 0x1000
expect "raw: --elf is random" 1 "^mprof-core: $TMP/random: .*not an ELF" --raw "$TMP/random" --elf "$TMP/random" --base 0x1000
expect "raw: missing dump" 1 "^mprof-core: $TMP/nope: " --raw "$TMP/nope" --elf "$prog" --base 0x1000
# usage errors
expect "no arguments" 2 "need PROG and CORE"
expect "bad --format" 2 "--format must be text, json, folded" --format=xml "$prog" "$TMP/core"
expect "--raw without --base" 2 "--raw needs --base" --raw "$TMP/random" --elf "$prog"
done_testing
