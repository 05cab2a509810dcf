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
done_testing
