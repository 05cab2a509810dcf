#!/bin/sh
# run-hunt4-long.sh - the statistics region after long runs
# (tests/prog/hunt4_long.c), against the numbers the program prints and the
# closed forms below: 44 million allocations with a live set of 1000 blocks
# (4.4 GB allocated: no 32-bit counter may wrap; the bins, the direct table's
# calls and the peak exact), one block grown 1 byte at a time to 1 MiB by
# realloc (549,756,338,176 bytes allocated over 1,048,576 calls), and a program
# in phases whose peak (1,500,000 bytes) and its time (3,500,000) it knows.
# HUNT4_CALLS=1 also makes 2^32 + 1000 calls of free(NULL) (about half a
# minute): the count of calls per entry point must not wrap either.
. tests/lib.sh
M=$B/mprof-core
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb >/dev/null 2>&1
command -v gdb >/dev/null 2>&1 || skip "gdb missing (gcore)"
exe=$TMP/long
check "build" cc -g -O2 -o "$exe" tests/prog/hunt4_long.c

# run_core OUT ARGS...: run the program under the preload until it prints
# "ready" (at most 5 minutes), gcore it, let it end; its line in $TMP/ready
run_core() {
	out=$1; shift
	rm -f "$TMP/fifo" "$TMP/ready"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" "$@" <"$TMP/fifo" >"$TMP/ready" &
	rp=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q '^ready' "$TMP/ready" 2>/dev/null && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done
	make_gcore $rp "$out"
	echo >&9; exec 9>&-
	wait $rp
}
# val KEY: a KEY=VALUE of the program's ready line
val() { tr ' ' '\n' <"$TMP/ready" | sed -n "s/^$1=//p"; }
# js FILE EXPR: a Python expression over the JSON report d
js() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- 44 million allocations, a bounded live set -----------------------------
N=44000000
check "churn: runs to its end" run_core "$TMP/churn.core" churn $N
check_eq "churn: the program's own counts" "allocs=$N frees=$((N - 1000))" \
	"allocs=$(val allocs) frees=$(val frees)"
B_ALLOC=$(val bytes) B_FREED=$(val freed)
check "churn: more than 4 GiB allocated" test "$B_ALLOC" -gt 4294967296
$M --report=direct,bins --format json "$exe" "$TMP/churn.core" >"$TMP/churn.json" 2>"$TMP/churn.err"
check_eq "churn: exit 0" 0 $?
check_eq "churn: allocations, frees, bytes, bytes freed" "$N $((N - 1000)) $B_ALLOC $B_FREED" \
	"$(js "$TMP/churn.json" "'%d %d %d %d' % tuple(d['statistics'][k] for k in ('allocs', 'frees', 'bytes', 'bytes_freed'))")"
# the ring holds each size of 1..200 five times: 5 x 20,100 bytes
check_eq "churn: live and peak bytes" "100500 100500 1000" \
	"$(js "$TMP/churn.json" "'%d %d %d' % (d['statistics']['live_bytes'], d['statistics']['peak_live_bytes'], d['statistics']['live_blocks'])")"
check_eq "churn: the direct table's row" "$N $B_ALLOC 100500" \
	"$(js "$TMP/churn.json" "' '.join('%d %d %d' % (r['calls'], r['bytes'], r['kept_bytes']) for r in d['direct'] if r['function'] == 'churn_site')")"
check_eq "churn: every bin's allocations, frees and kept blocks" "ok" "$(python3 - "$TMP/churn.json" $N <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
want = {}
for i in range(200):            # the sizes repeat every 200 allocations
    s = 1 + (i * 7) % 200
    want[s] = n // 200 + (1 if i < n % 200 else 0)
bins = {b["size"]: b for b in d["bins"]}
bad = [s for s in want if s not in bins or bins[s]["allocs"] != want[s] or
       bins[s]["kept_blocks"] != 5 or bins[s]["frees"] != want[s] - 5]
print("ok" if not bad and len(bins) == 200 else "bad sizes %s, %d bins" % (bad[:5], len(bins)))
PY
)"
$M --report=direct "$exe" "$TMP/churn.core" >"$TMP/churn.txt" 2>&1
check_grep "churn: the text's totals" \
	"^statistics \(whole run\): 44,000,000 allocations, 43,999,000 frees, $(python3 -c "print('{:,}'.format($B_ALLOC))") bytes allocated" "$TMP/churn.txt"

# ---- one block grown to 1 MiB, 1 byte at a time ----------------------------
check "grow: runs to its end" run_core "$TMP/grow.core" grow
$M --report=direct --format json "$exe" "$TMP/grow.core" >"$TMP/grow.json" 2>/dev/null
check_eq "grow: exit 0" 0 $?
# 1 + 2 + ... + 1,048,576 allocated, all but the last size freed
check_eq "grow: allocations, frees, bytes, bytes freed" \
	"1048576 1048575 549756338176 549755289600" \
	"$(js "$TMP/grow.json" "'%d %d %d %d' % tuple(d['statistics'][k] for k in ('allocs', 'frees', 'bytes', 'bytes_freed'))")"
check_eq "grow: the one live block" "1 1048576" "$(js "$TMP/grow.json" "'%d %d' % (d['blocks'], d['bytes'])")"
check_eq "grow: the direct table's row" "1048576 549756338176 1048576" \
	"$(js "$TMP/grow.json" "' '.join('%d %d %d' % (r['calls'], r['bytes'], r['kept_bytes']) for r in d['direct'] if r['function'] == 'grow_site')")"
check_eq "grow: no damage, no freed header left of the chain" "0" "$(js "$TMP/grow.json" "d['damaged_headers']")"

# ---- phases: the peak and when ---------------------------------------------
check "phases: runs to its end" run_core "$TMP/phases.core" phases
$M --report=timeline --format json "$exe" "$TMP/phases.core" >"$TMP/phases.json" 2>/dev/null
check_eq "phases: peak bytes, its time, live bytes" "$(val peak) $(val peak_time) $(val live)" \
	"$(js "$TMP/phases.json" "'%d %d %d' % (d['statistics']['peak_live_bytes'], d['statistics']['peak_time'], d['statistics']['live_bytes'])")"
check_eq "phases: the timeline's highest sample is the peak" "1500000" \
	"$(js "$TMP/phases.json" "max(s['live_bytes'] for s in d['timeline'])")"
$M --report=timeline "$exe" "$TMP/phases.core" >"$TMP/phases.txt" 2>/dev/null
check_grep "phases: the text says when" "^peak \(#\): 1,500,000 bytes live at time 3,500,000; now: 750,000 bytes live" "$TMP/phases.txt"

# ---- more than 2^32 calls (HUNT4_CALLS=1) ----------------------------------
if [ "${HUNT4_CALLS:-0}" = 1 ]; then
	run_core "$TMP/c0.core" calls 0
	base=$($M --report=direct --format json "$exe" "$TMP/c0.core" 2>/dev/null | python3 -c "import json, sys; print(json.load(sys.stdin)['statistics']['calls']['free'])")
	C=4294968296
	check "calls: runs to its end" run_core "$TMP/calls.core" calls $C
	check_eq "calls: free's count past 2^32" $((base + C)) \
		"$($M --report=direct --format json "$exe" "$TMP/calls.core" 2>/dev/null | python3 -c "import json, sys; print(json.load(sys.stdin)['statistics']['calls']['free'])")"
fi
done_testing
