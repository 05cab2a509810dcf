#!/bin/sh
# run-stress.sh - libheapann under load (issue 14): tests/prog/annot_stress.c runs
# 8 threads for STRESS_SECS (10) seconds allocating with every entry point,
# freeing across threads, reallocating (aligned and not, growing and shrinking in
# place) and forking from threads; then its gcore must hold exactly the live set
# the program printed (count and bytes), no damaged header, and mprof-core must
# exit 0. A deadlock fails the test: the program bounds itself with alarm() and
# the wait here is bounded too.
. tests/lib.sh
SO=$TOP/$B/libheapann.so
[ -f "$SO" ] && [ -x "$B/tests/tools/cpdump" ] || skip "build first"
SECS=${STRESS_SECS:-10}
cc -std=c11 -D_GNU_SOURCE -O2 -g -pthread -o "$TMP/stress" tests/prog/annot_stress.c ||
	skip "cannot compile annot_stress.c"

mkfifo "$TMP/fifo"
LD_PRELOAD=$SO "$TMP/stress" "$SECS" <"$TMP/fifo" >"$TMP/live" 2>"$TMP/err" &
pid=$!
exec 9>"$TMP/fifo"
n=0 limit=$(( (SECS + 60) * 10 ))
while ! grep -q '^total ' "$TMP/live" && kill -0 $pid 2>/dev/null && [ $n -lt $limit ]; do
	sleep 0.1; n=$((n + 1))
done
check_grep "the program ran ${SECS} s and printed its live set (no deadlock)" '^total [0-9]+ [0-9]+$' "$TMP/live"
make_gcore $pid "$TMP/core"
check "gcore of the parked process written" test -s "$TMP/core"
echo >&9; exec 9>&-
n=0
while kill -0 $pid 2>/dev/null && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
kill -9 $pid 2>/dev/null
wait $pid
check_eq "the program exits 0 (no failed check, no hung child)" 0 $?
[ -s "$TMP/err" ] && sed 's/^/    # /' "$TMP/err" | head -n 5
forks=$(sed -n 's/^forks \([0-9]*\) .*/\1/p' "$TMP/live")
ops=$(sed -n 's/^forks [0-9]* ops \([0-9]*\)$/\1/p' "$TMP/live")
echo "# $ops operations, $forks forks from threads in $SECS s"
check "it forked from its threads (${forks:-0} times)" test "${forks:-0}" -ge 8
check "it did at least 10,000 operations (${ops:-0})" test "${ops:-0}" -ge 10000

"$B/tests/tools/cpdump" "$TMP/core" >"$TMP/scan" 2>&1
check_eq "cpdump exits 0" 0 $?
liveset_cmp "$TMP/live" "$TMP/scan" >"$TMP/cmp"
read -r n found b bytes left <"$TMP/cmp"
check_eq "all $n live blocks of the program found live" "$n" "$found"
check_eq "with their $b requested bytes" "$b" "$bytes"
check_eq "none of the program's blocks missing" 0 "$left"
check_grep "no damaged header" ' damaged=0 ' "$TMP/scan"
check_grep "the core shows the 9 threads" '^files=[0-9]+ threads=9 ' "$TMP/scan"
"$B/mprof-core" "$TMP/stress" "$TMP/core" >"$TMP/rep" 2>&1
check_eq "mprof-core exits 0 (no corruption reported)" 0 $?
done_testing
