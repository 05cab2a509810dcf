#!/bin/sh
# icount.sh - instructions executed (valgrind callgrind's Ir), plain and under
# libheapann, for bench/alloc at depth 40 and a python3 dict script: on this
# shared, loaded machine CPU times move by 20% between runs, instruction counts
# by less than 0.1%, so decisions about the capture's code are taken on these
# (issue 15) and CPU-time ratios come from paired runs (bench/run.sh).
# BENCH_LIB_BASE (optional): another build of libheapann, counted too, with its
# difference to BENCH_LIB.
#
# Environment: BENCH_LIB [$B/libheapann.so], BENCH_LIB_BASE, B [build],
#   BENCH_ICOUNT_OPS [200000] alloc operations, BENCH_ICOUNT_PY [3000] python rounds
# Usage: sh bench/icount.sh   (also `sh bench/run.sh icount`)
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
LIB=${BENCH_LIB:-$(pwd)/$B/libheapann.so}
BASE=${BENCH_LIB_BASE:-}
OPS=${BENCH_ICOUNT_OPS:-200000}
PYR=${BENCH_ICOUNT_PY:-3000}
BB=$B/bench
CC=${CC:-cc}

command -v valgrind >/dev/null 2>&1 || sh scripts/install-deps.sh valgrind >/dev/null 2>&1
if ! command -v valgrind >/dev/null 2>&1; then
	echo "== icount: valgrind not installed and could not be installed: skipped"
	exit 0
fi
mkdir -p "$BB" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-icount.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude -pthread -fno-optimize-sibling-calls \
	-o "$BB/alloc" bench/alloc.c || exit 1

py=
for p in /usr/bin/python3 /usr/local/bin/python3; do
	[ -x "$p" ] && { py=$p; break; }
done
cat >"$TMP/dicts.py" <<EOF
keep = [None] * 200
total = 0
for i in range($PYR):
    d = {"k%d" % j: j * i for j in range(24)}
    d.update({(i, j): str(j) for j in range(8)})
    total += d["k%d" % (i % 24)] + len(d)
    keep[i % 200] = d
EOF

# ir NAME ENV...: -- CMD...: callgrind's instruction count of CMD run with ENV.
ir() {
	: >"$TMP/cg.err"
	env "$@" valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$PROG" $ARGS \
		>/dev/null 2>"$TMP/cg.err"
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$TMP/cg.err"
}

echo "== instructions executed (callgrind Ir), millions; ratio to the plain run"
printf "%-28s | %-9s | %-9s | %-7s" workload plain libheapann ratio
[ -n "$BASE" ] && printf " | %-9s | %-6s | %s" base ratio "lib vs base"
echo
for w in alloc python; do
	case $w in
	alloc) PROG=$BB/alloc ARGS="--ops $OPS --depth 40" name="alloc d40 $OPS ops"
		extra="HEAPANN_DEPTH=64" ;;
	python) [ -n "$py" ] || { echo "python: no python3: skipped"; continue; }
		PROG=$py ARGS=$TMP/dicts.py name="python3 dicts $PYR rounds"
		extra="PYTHONMALLOC=malloc PYTHONHASHSEED=0" ;;   # a fixed seed: repeatable counts
	esac
	plain=$(ir $extra)
	lib=$(ir $extra LD_PRELOAD="$LIB")
	awk -v n="$name" -v p="$plain" -v l="$lib" 'BEGIN { printf "%-28s | %-9.1f | %-9.1f | %.3fx ", n, p / 1e6, l / 1e6, l / p }'
	if [ -n "$BASE" ]; then
		base=$(ir $extra LD_PRELOAD="$BASE")
		awk -v p="$plain" -v l="$lib" -v b="$base" 'BEGIN { printf " | %-9.1f | %.3fx | %+.1f%%", b / 1e6, b / p, (l - b) * 100 / b }'
	fi
	echo
done
