#!/bin/sh
# run-hunt5-launcher.sh - heapann refuses what cannot work before it runs the
# program (fifth bug hunt): an unknown --snapshot item (libheapann only warned,
# so the whole run ended with "no snapshot"), a --keep-core that is a file (every
# snapshot failed), and a bad report option (--format xml: found by mprof-core
# only after the run). Each: its exit status, one line, and the program not run.
. tests/lib.sh
[ -x "$B/heapann" ] && [ -x "$B/mprof-core" ] || skip "build first"
H=$B/heapann
prog=$TMP/prog
# the program leaves a mark when it runs
cat >"$TMP/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "w");
	char *p = malloc(1234);
	if (f)
		fclose(f);
	p[0] = 1;
	return 0;
}
C
cc -g -o "$prog" "$TMP/prog.c" || skip "no cc"

# refused NAME STATUS REGEX ARGS...: exit STATUS, one line on stderr matching REGEX,
# the program never started
refused() {
	name=$1 want=$2 re=$3; shift 3
	rm -f "$TMP/ran"
	"$H" "$@" "$prog" "$TMP/ran" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check_eq "$name: exit $want" "$want" "$rc"
	check_grep "$name: message" "$re" "$TMP/err"
	check_eq "$name: one line" 1 "$(wc -l <"$TMP/err")"
	check "$name: the program did not run" test ! -e "$TMP/ran"
}

refused "--snapshot bogus" 2 "^heapann: --snapshot takes exit, signal, signal:SIGNAME and abort, not 'bogus' " --snapshot bogus
refused "--snapshot exit,,abort" 2 "^heapann: --snapshot takes .*, not '' " --snapshot exit,,abort
refused "--snapshot signal:FOO" 2 "^heapann: --snapshot takes .*, not 'signal:FOO' " --snapshot signal:FOO
refused "--snapshot signal:KILL" 2 "^heapann: --snapshot takes .*, not 'signal:KILL' " --snapshot exit,signal:KILL
# the names libheapann knows (annotate/snapshot.c), not every name of the C library:
# SIGCHLD, SIGSEGV and the like were passed and then ignored inside the program
refused "--snapshot signal:CHLD" 2 "not 'signal:CHLD' " --snapshot signal:CHLD
refused "--snapshot signal:SIGSEGV" 2 "not 'signal:SIGSEGV' " --snapshot exit,signal:SIGSEGV
refused "--snapshot signal:POLL" 2 "not 'signal:POLL' " --snapshot signal:POLL
refused "--snapshot signal:RTMIN+99999" 2 "not 'signal:RTMIN\+99999' " --snapshot signal:RTMIN+99999
: >"$TMP/afile"
refused "--keep-core FILE" 125 "^heapann: --keep-core $TMP/afile: Not a directory$" --keep-core "$TMP/afile"
refused "--format xml" 2 "^mprof-core: --format must be text, json, .* not xml " --format xml
refused "--top abc" 2 "^mprof-core: bad number for --top " --top abc
refused "--report bogus" 2 "^mprof-core: unknown report 'bogus' " --report bogus
refused "--weight kg" 2 "^mprof-core: --weight must be bytes or blocks, not kg " --weight kg

# what libheapann takes still runs: the signals in each spelling, and the report
for l in exit,signal:SIGRTMIN+3 exit,signal:IO,signal:SIGWINCH exit,signal:12 exit,signal:USR1 exit,signal:SIGRTMAX-2 exit,signal,abort; do
	rm -f "$TMP/ran"
	"$H" --snapshot $l --report direct "$prog" "$TMP/ran" >"$TMP/out" 2>"$TMP/err"
	check_eq "--snapshot $l: exit 0" 0 $?
	check "--snapshot $l: the program ran" test -e "$TMP/ran"
	check_grep "--snapshot $l: main's one call for 1,234 bytes" '^ *[0-9.]+% +1,234 +1,234 +1 .* main$' "$TMP/out"
done
# good report options pass the check, and -o is written once, by the real report
rm -f "$TMP/r.json"
"$H" --format json -o "$TMP/r.json" --top 3 "$prog" "$TMP/ran" >"$TMP/out" 2>"$TMP/err"
check_eq "--format json -o FILE: exit 0" 0 $?
check_eq "--format json -o FILE: main's 1234-byte block" "main=1/1234" "$(sums "$TMP/r.json" main)"
# -o /dev/null (the report thrown away, the core kept) is no input of the run:
# the pre-check gives /dev/null for PROG and CORE, and -o naming an input must
# not count a device that is not a file (it was refused, exit 2, program not run)
rm -f "$TMP/ran"
"$H" --keep-core "$TMP/kc" -o /dev/null "$prog" "$TMP/ran" >"$TMP/out" 2>"$TMP/err"
check_eq "-o /dev/null: exit 0" 0 $?
check "-o /dev/null: the program ran" test -e "$TMP/ran"
check_eq "-o /dev/null: one core kept" 1 "$(ls "$TMP/kc" | wc -l)"
"$B/mprof-core" -o /dev/null /dev/null /dev/null 2>"$TMP/err"
check_eq "mprof-core -o /dev/null /dev/null /dev/null: exit 1 (not a usage error)" 1 $?
check_grep "mprof-core -o /dev/null: PROG refused as not a file" "^mprof-core: /dev/null: not a regular file" "$TMP/err"
done_testing
