#!/bin/sh
# export_massif.sh - cost of --format massif against the plain stacks report on the
# same core (issue 12): makes the core-reading benchmark's core (bench/core.sh
# --make-core: 2M live blocks by default), then runs both, interleaved, BENCH_REPEAT
# rounds, and prints the median wall and CPU time of each and their ratio. Both
# runs load and scan the whole core; the difference is the export itself (the tree
# and the statistics' timeline written out). A benchmark, not a test.
#
#   sh bench/export_massif.sh
# Environment: B [build], BENCH_CORE_BLOCKS [2000000], BENCH_REPEAT [3],
# BENCH_THREADS_ARG (passed as --threads N when set).
set -u
# the symbol index cache would make every round after the first warm (and the
# old binary has none): each run names its frames from the debug info
MPROF_CACHE_DIR=${MPROF_CACHE_DIR-off}; export MPROF_CACHE_DIR
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
BB=$B/bench
N=${BENCH_CORE_BLOCKS:-2000000}
REPEAT=${BENCH_REPEAT:-3}
MPROF=$(pwd)/$B/mprof-core
THR=${BENCH_THREADS_ARG:+--threads $BENCH_THREADS_ARG}

[ -x "$MPROF" ] || { echo "export_massif: build $MPROF first" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-export-bench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

echo "== --format massif export: $N live blocks"
MK=$(BENCH_CORE_BLOCKS=$N sh bench/core.sh --make-core "$N" "$TMP") || exit 1
echo "   $(head -n 1 "$TMP/mkcore.out"); core: $(du -m "$TMP/core" | cut -f1) MB"
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# run LABEL ARGS...: one timed run of mprof-core ARGS; appends "wall cpu" to TMP/LABEL
run() {
	label=$1
	shift
	: >"$TMP/r.txt"
	"$BB/runner" "$TMP/r.txt" "$MPROF" $THR "$@" >"$TMP/$label.out" 2>"$TMP/$label.err" ||
		{ echo "   $label: exit $? ($(head -n 1 "$TMP/$label.err"))"; return 1; }
	wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	cpu=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	echo "$wall $cpu" >>"$TMP/$label.t"
}

for r in $(seq "$REPEAT"); do
	run stacks "$MK" "$TMP/core" || exit 1
	run massif --format massif -o "$TMP/massif.out" "$MK" "$TMP/core" || exit 1
done

# median COLUMN FILE
median() { cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
sw=$(median 1 "$TMP/stacks.t"); sc=$(median 2 "$TMP/stacks.t")
mw=$(median 1 "$TMP/massif.t"); mc=$(median 2 "$TMP/massif.t")
printf "%-26s | %-8s | %-8s\n" "median of $REPEAT runs" "wall s" "CPU s"
printf "%-26s | %-8s | %-8s\n" "stacks report (default)" "$sw" "$sc"
printf "%-26s | %-8s | %-8s\n" "--format massif -o FILE" "$mw" "$mc"
printf "%-26s | %-8s | %-8s\n" "ratio massif / stacks" \
	"$(awk -v a="$mw" -v b="$sw" 'BEGIN { printf "%.2f", a / b }')" \
	"$(awk -v a="$mc" -v b="$sc" 'BEGIN { printf "%.2f", a / b }')"
echo "   massif.out: $(wc -c <"$TMP/massif.out") bytes, $(grep -c '^snapshot=' "$TMP/massif.out") snapshots"
echo "   load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
