#!/bin/sh
# run-hunt5-env.sh - a HEAPANN_* value libheapann cannot take as written gets one
# line at start-up saying what applies instead (fifth bug hunt: HEAPANN_DEPTH=abc,
# HEAPANN_UNWIND=libunwnid and the like fell back to defaults without a word, so a
# typo cost a whole run); a valid value says nothing.
. tests/lib.sh
[ -f "$B/libheapann.so" ] || skip "build first"
prog=$TMP/prog
printf '#include <stdlib.h>\nint main(void){ free(malloc(10)); return 0; }\n' >"$TMP/p.c"
cc -o "$prog" "$TMP/p.c" || skip "no cc"

# warns NAME=VALUE LINE: exit 0 and exactly LINE on stderr ("" for none)
warns() {
	env "$1" LD_PRELOAD="$TOP/$B/libheapann.so" "$prog" >"$TMP/out" 2>"$TMP/err"
	check_eq "$1: exit 0" 0 $?
	check_eq "$1: stderr" "$2" "$(cat "$TMP/err")"
}
warns HEAPANN_DEPTH=abc "heapann: HEAPANN_DEPTH=abc is not a number 0..256: the default 32 applies"
warns HEAPANN_DEPTH= "heapann: HEAPANN_DEPTH= is not a number 0..256: the default 32 applies"
warns HEAPANN_DEPTH=-1 "heapann: HEAPANN_DEPTH=-1 is not a number 0..256: the default 32 applies"
warns HEAPANN_DEPTH=6o "heapann: HEAPANN_DEPTH=6o is not a number 0..256: read as 6"
warns HEAPANN_DEPTH=1000 "heapann: HEAPANN_DEPTH=1000 is out of range 0..256: read as 256"
warns HEAPANN_GUARD=300 "heapann: HEAPANN_GUARD=300 is out of range 0..255: read as 255"
warns HEAPANN_ABORT_ON_CORRUPTION=yes "heapann: HEAPANN_ABORT_ON_CORRUPTION=yes is not a number 0..1: the default 0 applies"
warns HEAPANN_STATS=2 "heapann: HEAPANN_STATS=2 is out of range 0..1: read as 1"
warns HEAPANN_STATS_STACKS=3 "heapann: HEAPANN_STATS_STACKS=3 is out of range 16..4194304: read as 16"
warns HEAPANN_STATS_STACKS=99999999999 "heapann: HEAPANN_STATS_STACKS=99999999999 is out of range 16..4194304: read as 4194304"
warns HEAPANN_CHECK_INTERVAL=often "heapann: HEAPANN_CHECK_INTERVAL=often is not a number: the default 0 (off) applies"
warns HEAPANN_UNWIND=libunwnid "heapann: HEAPANN_UNWIND=libunwnid is not cfi, libunwind, gcc, fp, none or cfi-verify: the default applies"
for ok in HEAPANN_DEPTH=0 HEAPANN_DEPTH=256 HEAPANN_GUARD=0 HEAPANN_GUARD=255 HEAPANN_STATS=0 \
	  HEAPANN_STATS_STACKS=16 HEAPANN_CHECK_INTERVAL=100 HEAPANN_ABORT_ON_CORRUPTION=1 \
	  HEAPANN_UNWIND=cfi HEAPANN_UNWIND=libunwind HEAPANN_UNWIND=gcc HEAPANN_UNWIND=fp HEAPANN_UNWIND=none; do
	warns $ok ""
done
done_testing
