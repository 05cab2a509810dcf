#!/bin/sh
# export.sh - the export benchmark (called from bench/run.sh, section "export"):
# on the core of bench/mkcore (2M live blocks, as bench/core.sh makes it), run
# mprof-core once per output format per round (after one untimed run that pulls
# the core into the page cache), formats interleaved within each round, and print
# per format the median wall and CPU time, the medians of the per-round ratios to
# the text stacks report of the same round (1.0) in wall and in CPU time, the
# output size, and the export's own cost (median CPU minus the text report's:
# loading, scanning and symbolizing the core are common to all). On a loaded
# machine the CPU columns are the ones to believe. A format whose export fails is
# printed as "not built".
#
# Environment: B [build], BENCH_EXPORT_BLOCKS [2000000], BENCH_EXPORT_REPEAT [3],
# BENCH_EXPORT_FORMATS ["text json folded svg pprof massif html"].
set -u
# the symbol index cache would make every round after the first warm (and the
# old binary has none): each run names its frames from the debug info
MPROF_CACHE_DIR=${MPROF_CACHE_DIR-off}; export MPROF_CACHE_DIR
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
BB=$B/bench
MPROF=$(pwd)/$B/mprof-core
NBLOCKS=${BENCH_EXPORT_BLOCKS:-2000000}
REPEAT=${BENCH_EXPORT_REPEAT:-3}
FORMATS=${BENCH_EXPORT_FORMATS:-"text json folded svg pprof massif html"}

echo "== export benchmark: $NBLOCKS live blocks, $REPEAT rounds (medians; ratio to the text stacks report)"
if ! [ -x "$MPROF" ]; then
	echo "   export bench: $B/mprof-core missing: skipped"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-export-bench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

if ! PROG=$(B=$B sh bench/core.sh --make-core "$NBLOCKS" "$TMP" 2>"$TMP/make.err"); then
	echo "   export bench: no core ($(tail -n 1 "$TMP/make.err")): skipped"
	exit 0
fi
echo "   $(head -n 1 "$TMP/mkcore.out"); core $(du -m "$TMP/core" | cut -f1) MB"
[ -x "$BB/runner" ] || cc -std=c11 -D_GNU_SOURCE -O2 -o "$BB/runner" bench/runner.c || exit 1

# run_fmt ROUND FMT: one mprof-core run writing FMT to $TMP/out.FMT; appends
# "FMT ROUND wall cpu bytes" to $TMP/results, or "FMT ROUND fail" when it failed.
run_fmt() {
	r=$1 fmt=$2
	out=$TMP/out.$fmt
	rm -f "$out"
	: >"$TMP/r.txt"
	if [ "$fmt" = text ]; then
		set -- -o "$out" "$PROG" "$TMP/core"
	else
		set -- --format "$fmt" -o "$out" "$PROG" "$TMP/core"
	fi
	"$BB/runner" "$TMP/r.txt" "$MPROF" -q "$@" >/dev/null 2>"$TMP/err.$fmt"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
		echo "$fmt $r fail" >>"$TMP/results"
		return
	fi
	wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	cpu=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	echo "$fmt $r $wall $cpu $(wc -c <"$out")" >>"$TMP/results"
}

: >"$TMP/results"
run_fmt 0 text   # warm-up: not counted
: >"$TMP/results"
r=1
while [ "$r" -le "$REPEAT" ]; do
	for fmt in $FORMATS; do
		run_fmt $r "$fmt"
	done
	r=$((r + 1))
done

awk -v formats="$FORMATS" '
function median(s,   n, i, j, t, a) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(k, v) { vals[k] = (k in vals) ? vals[k] " " v : v }
$3 == "fail" { failed[$1] = 1; next }
{ wall[$1, $2] = $3; cpu[$1, $2] = $4; size[$1] = $5; add("wall" $1, $3); add("cpu" $1, $4) }
END {
	for (k in wall) {
		split(k, p, SUBSEP)
		if (("text", p[2]) in wall && wall["text", p[2]] > 0)
			add("ratio" p[1], wall[k] / wall["text", p[2]])
		if (("text", p[2]) in cpu && cpu["text", p[2]] > 0)
			add("cratio" p[1], cpu[k] / cpu["text", p[2]])
	}
	printf "   %-7s | %-7s | %-7s | %-10s | %-9s | %-12s | %s\n", "format", "wall s", "CPU s", "wall ratio", "CPU ratio", "export CPU s", "output bytes"
	printf "   %-7s-+-%-7s-+-%-7s-+-%-10s-+-%-9s-+-%-12s-+-%s\n", "-------", "-------", "-------", "----------", "---------", "------------", "------------"
	tc = ("cputext" in vals) ? median(vals["cputext"]) : 0
	n = split(formats, f, " ")
	for (i = 1; i <= n; i++) {
		if (!(("wall" f[i]) in vals)) {
			printf "   %-7s | not built (the export failed)\n", f[i]
			continue
		}
		c = median(vals["cpu" f[i]])
		printf "   %-7s | %-7.3f | %-7.3f | %-10s | %-9s | %-12s | %d\n", f[i], median(vals["wall" f[i]]), c,
			(("ratio" f[i]) in vals) ? sprintf("%.2fx", median(vals["ratio" f[i]])) : "-",
			(("cratio" f[i]) in vals) ? sprintf("%.2fx", median(vals["cratio" f[i]])) : "-",
			tc ? sprintf("%+.3f", c - tc) : "-", size[f[i]]
	}
}' "$TMP/results"
echo "   (each run loads, scans and symbolizes the core; \"export CPU s\" is what the format adds to the text report)"
