#!/bin/sh
# html.sh - the HTML report's benchmark (issue 12; a section of bench/run.sh): cores
# with 1,000, 10,000 and 100,000 distinct allocation stacks (tests/html_fan.sh: 10
# call sites per level, 3 to 5 levels, one block per stack) under libheapann, then
# for each: the time to write --format html next to the plain text report of the
# same core, the file size and how many tree nodes were kept, and the time the page
# takes to open in headless Chromium (until the report has drawn itself and the
# first frame is painted) next to an empty page loaded by the same browser in the
# same run. Medians of BENCH_HTML_ROUNDS loads (default 5), files interleaved.
# Environment: B [build], BENCH_HTML_ROUNDS [5], BENCH_HTML_LEVELS ["3 4 5"].
set -u
# the symbol index cache would make every round after the first warm (and the
# old binary has none): each run names its frames from the debug info
MPROF_CACHE_DIR=${MPROF_CACHE_DIR-off}; export MPROF_CACHE_DIR
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
CC=${CC:-cc}
ROUNDS=${BENCH_HTML_ROUNDS:-5}
LEVELS=${BENCH_HTML_LEVELS:-"3 4 5"}
LIB=$(pwd)/$B/libheapann.so
MPROF=$(pwd)/$B/mprof-core
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-bench-html.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT

echo "== html: --format html on cores with 10^L distinct stacks; open time in headless Chromium"
for need in chromium node gdb; do
	if ! command -v $need >/dev/null 2>&1; then
		echo "   skipped: $need not installed"
		exit 0
	fi
done
if ! [ -x "$MPROF" ] || ! [ -f "$LIB" ]; then
	echo "   skipped: $B/mprof-core or $B/libheapann.so missing"
	exit 0
fi
$CC -std=c11 -D_GNU_SOURCE -O2 -o "$TMP/runner" bench/runner.c || exit 1

# fan_core L: $TMP/fanL (program) and $TMP/fanL.core (gcore while it waits)
fan_core() {
	p=$TMP/fan$1
	sh tests/html_fan.sh 10 "$1" 1 0 >"$p.c" && $CC -O0 -g -o "$p" "$p.c" || return 1
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD=$LIB "$p" <"$TMP/fifo" >"$p.out" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q '^ready' "$p.out" 2>/dev/null && [ $n -lt 1200 ]; do sleep 0.05; n=$((n + 1)); done
	gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' -p $pid \
		-ex "gcore $p.core" -ex detach >/dev/null 2>&1
	echo >&9; exec 9>&-
	wait $pid
	[ -s "$p.core" ]
}

# wall_of CMD...: the runner's wall seconds for one run of CMD (output discarded)
wall_of() {
	: >"$TMP/r.txt"
	"$TMP/runner" "$TMP/r.txt" "$@" >/dev/null 2>&1
	sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt"
}

files=""
: >"$TMP/rows"
for l in $LEVELS; do
	if ! fan_core "$l"; then
		echo "   10^$l stacks: could not make the core"
		continue
	fi
	p=$TMP/fan$l
	# export and text report, 3 runs each, interleaved; medians
	: >"$TMP/e.txt"; : >"$TMP/t.txt"
	for r in 1 2 3; do
		wall_of "$MPROF" -q --format html -o "$p.html" "$p" "$p.core" >>"$TMP/e.txt"
		wall_of "$MPROF" -q -o "$p.text" "$p" "$p.core" >>"$TMP/t.txt"
	done
	e=$(sort -n "$TMP/e.txt" | sed -n 2p); t=$(sort -n "$TMP/t.txt" | sed -n 2p)
	nodes=$(python3 -c "
import json; s = open('$p.html').read(); a = s.index('id=\"mprof-data\">') + 16
d = json.loads(s[a:s.index('</script>', a)]); p = d['pruned']
print('%d/%d' % (p['of'] - p['nodes'], p['of']))")
	echo "$l $(sed -n 's/.*blocks=\([0-9]*\).*/\1/p' "$p.out") $(wc -c <"$p.html") $nodes $e $t" >>"$TMP/rows"
	files="$files $p.html"
done
[ -n "$files" ] || exit 0
echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>empty</title></head><body></body></html>' \
	>"$TMP/empty.html"
# one browser: the empty page and every report, ROUNDS times in turn
if ! node tests/html_cdp.js open "$ROUNDS" "$TMP/empty.html" $files >"$TMP/open.txt" 2>"$TMP/open.err"; then
	echo "   open times: the Chromium driver failed: $(head -n 1 "$TMP/open.err")"
fi
empty=$(sed -n "s|^open $TMP/empty.html wall_ms=\([0-9.]*\) .*|\1|p" "$TMP/open.txt")
printf "   %-8s | %-7s | %-9s | %-13s | %-8s | %-8s | %-6s | %-8s | %-8s | %s\n" stacks blocks "file KB" \
	"nodes kept" "export s" "text s" ratio "open ms" "empty ms" "open/empty"
while read -r l blocks size nodes e t; do
	f=$TMP/fan$l.html
	o=$(sed -n "s|^open $f wall_ms=\([0-9.]*\) page_ms=\([0-9.]*\)|\1|p" "$TMP/open.txt")
	awk -v s="$(python3 -c "print(10 ** $l)")" -v b="$blocks" -v kb="$size" -v n="$nodes" -v e="$e" -v t="$t" \
		-v o="${o:--}" -v em="${empty:--}" 'BEGIN {
		printf "   %-8s | %-7s | %-9.1f | %-13s | %-8s | %-8s | %-6s | %-8s | %-8s | %s\n", s, b, kb / 1024, n, e, t,
			(t > 0 ? sprintf("%.2fx", e / t) : "-"), o, em, (o != "-" && em > 0 ? sprintf("%.1fx", o / em) : "-")
	}'
done <"$TMP/rows"
echo "   (export s, text s: wall seconds of mprof-core --format html and of the text report, median of 3;"
echo "    open ms: navigation to the report drawn and painted, median of $ROUNDS loads; empty: an empty page)"
