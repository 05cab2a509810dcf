#!/bin/sh
# htab.sh - the block scan with another build of mprof-core side by side (issue 15
# part 5: the one hash table must not slow the scan, whose stack table is probed
# once per block). Makes one core with bench/core.sh's mkcore under libheapann,
# then runs the default report with the base binary and ours alternately, and
# prints each one's median CPU time and the ratio ours/base, and whether the two
# reports are the same. With valgrind, also the instructions executed (callgrind's
# Ir: repeatable on a loaded machine, unlike time) of one run each on a smaller core.
#
#   BENCH_BASE_MPROF=/tmp/old/build/mprof-core sh bench/htab.sh
#
# Environment: B [build], BENCH_BASE_MPROF (required: e.g. built from 890319e in a
# /tmp copy), BENCH_CORE_BLOCKS [2000000], BENCH_HTAB_ROUNDS [7],
# BENCH_HTAB_IR_BLOCKS [200000] (0: no callgrind). A benchmark, not a test.
set -u
# the symbol index cache would make every round after the first warm (and the
# old binary has none): each run names its frames from the debug info
MPROF_CACHE_DIR=${MPROF_CACHE_DIR-off}; export MPROF_CACHE_DIR
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
BASE=${BENCH_BASE_MPROF:-}
N=${BENCH_CORE_BLOCKS:-2000000}
ROUNDS=${BENCH_HTAB_ROUNDS:-7}
IRN=${BENCH_HTAB_IR_BLOCKS:-200000}
OURS=$(pwd)/$B/mprof-core
RUNNER=$(pwd)/$B/bench/runner

if [ -z "$BASE" ] || ! [ -x "$BASE" ]; then
	echo "htab bench: set BENCH_BASE_MPROF to another mprof-core (e.g. built from 890319e): skipped"
	exit 0
fi
[ -x "$OURS" ] || { echo "htab bench: $OURS missing (make first): skipped"; exit 0; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-htab-bench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

MK=$(B=$B sh bench/core.sh --make-core "$N" "$TMP") || { echo "htab bench: no core: skipped"; exit 0; }
echo "== htab bench: the default report on $(head -n 1 "$TMP/mkcore.out" | sed 's/^mkcore: //')"

# cpu BIN OUT: one run under the runner; prints its CPU seconds
cpu() {
	: >"$TMP/r.txt"
	"$RUNNER" "$TMP/r.txt" "$1" "$MK" "$TMP/core" >"$2" 2>"$2.err"
	sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt"
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
: >"$TMP/base.cpu"
: >"$TMP/ours.cpu"
r=0
while [ $r -lt "$ROUNDS" ]; do
	cpu "$BASE" "$TMP/base.out" >>"$TMP/base.cpu"
	cpu "$OURS" "$TMP/ours.out" >>"$TMP/ours.cpu"
	r=$((r + 1))
done
mb=$(median <"$TMP/base.cpu")
mo=$(median <"$TMP/ours.cpu")
printf "%-10s | %-14s | %s\n" "binary" "median CPU s" "all rounds"
printf "%-10s | %-14s | %s\n" "base" "$mb" "$(tr '\n' ' ' <"$TMP/base.cpu")"
printf "%-10s | %-14s | %s\n" "ours" "$mo" "$(tr '\n' ' ' <"$TMP/ours.cpu")"
awk -v a="$mo" -v b="$mb" 'BEGIN { printf "ours/base CPU: %.3f (%d rounds, alternated)\n", a / b, '"$ROUNDS"' }'
cmp -s "$TMP/base.out" "$TMP/ours.out" && echo "reports: the same" || echo "reports: DIFFER (KEEP=1 keeps $TMP)"

if [ "$IRN" -gt 0 ] && command -v valgrind >/dev/null 2>&1; then
	mkdir -p "$TMP/small"
	B=$B sh bench/core.sh --make-core "$IRN" "$TMP/small" >/dev/null || exit 0
	for which in base ours; do
		bin=$BASE; [ $which = ours ] && bin=$OURS
		valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$which" "$bin" "$MK" \
			"$TMP/small/core" 2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d , >"$TMP/ir.$which"
	done
	ib=$(cat "$TMP/ir.base") io=$(cat "$TMP/ir.ours")
	echo "callgrind Ir, one run on $(head -n 1 "$TMP/small/mkcore.out" | sed 's/^mkcore: //;s/,.*//'):"
	echo "   base $ib, ours $io"
	awk -v a="$io" -v b="$ib" 'BEGIN { printf "   ours/base Ir: %.4f\n", a / b }'
fi
