#!/bin/sh
# run.sh - `make bench`: the allocation benchmark side by side (plain, libheapann in
# each unwind mode, heaptrack), one stack capture per unwinding method
# (bench/unwind.c), then the core-reading benchmark (bench/core.sh) and the
# symbolizer comparison slot, and the HTML report's open time (bench/html.sh).
# Benchmarks, not tests: figures are ratios measured
# in one run, configurations interleaved and repeated, medians reported.
#
# Environment (defaults in brackets):
#   BENCH_OPS [1000000]         operations per alloc run (split among the threads)
#   BENCH_REPEAT [3]            rounds; every round runs every configuration once
#   BENCH_DEPTHS ["10 40"]      chain depths
#   BENCH_THREADS ["1 2"]       thread counts
#   BENCH_MODES ["cfi libunwind fp gcc none cfi:nostats"]
#                               HEAPANN_UNWIND modes; MODE:nostats also sets
#                               HEAPANN_STATS=0 (no statistics region: shows its cost)
#                               base:MODE runs MODE with BENCH_LIB_BASE, another build
#                               of libheapann (before a change), in the same rounds
#   BENCH_HEAPANN_DEPTH [64]    HEAPANN_DEPTH for every libheapann run
#   BENCH_HEAPTRACK [1]         0 skips heaptrack
#   BENCH_WINDOW [4096]         live blocks per thread in the alloc section
#   BENCH_SIZES [mix]           alloc sizes: mix (15/16 up to 512 B) or spread (16 B..64 KiB, log scale)
#   BENCH_WIDE_WINDOW [16384] BENCH_WIDE_OPS [300000] BENCH_WIDE_THREADS ["1 2 4"]
#   BENCH_WIDE_MODES ["cfi none cfi:nostats"]
#                               the wide section: alloc at depth 40, sizes spread,
#                               a larger window (about 130 MB live per thread), more threads
#   BENCH_REAL [1]              0 skips bench/real.sh (python3, sqlite3, cc1; slow)
#   BENCH_CORE [1]              0 skips bench/core.sh; BENCH_BIG=1 makes it 10M blocks
#   BENCH_ZCORE [1]             0 skips bench/zcore.sh (a 1 GB core, zstd'ed: read time)
#   BENCH_LIB [$B/libheapann.so] the preload library under test
#   BENCH_SNAP_MB ["100 1024"]  heap sizes (MiB) of the snapshot section (bench/snapshot.sh)
#   B [build]                   build directory
#   BENCH_EXPORT [1]            0 skips bench/export.sh (export time per --format)
# Usage: sh bench/run.sh [alloc] [wide] [unwind] [icount] [real] [core] [sym] [zcore] [export] [html] [snapshot]
#   (default: all; icount: instruction counts under callgrind, bench/icount.sh)
set -u
CALLER=$(pwd)
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
CC=${CC:-cc}
BB=$B/bench
OPS=${BENCH_OPS:-1000000}
REPEAT=${BENCH_REPEAT:-3}
DEPTHS=${BENCH_DEPTHS:-"10 40"}
THREADS=${BENCH_THREADS:-"1 2"}
MODES=${BENCH_MODES:-"cfi libunwind fp gcc none cfi:nostats"}
WINDOW=${BENCH_WINDOW:-4096}
SIZES=${BENCH_SIZES:-mix}
HDEPTH=${BENCH_HEAPANN_DEPTH:-64}
LIB=${BENCH_LIB:-$(pwd)/$B/libheapann.so}

mkdir -p "$BB" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-bench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# The benchmark is built like an ordinary -O2 program (no frame pointers), plus a
# frame-pointer build for the fp mode, whose premise is a program built with them.
# -fno-optimize-sibling-calls and noinline keep the chain a chain of real frames.
BFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude -pthread -fno-optimize-sibling-calls"
$CC $BFLAGS -o "$BB/alloc" bench/alloc.c || exit 1
$CC $BFLAGS -fno-omit-frame-pointer -o "$BB/alloc-fp" bench/alloc.c || exit 1
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$BB/runner" bench/runner.c || exit 1

have_lib=0
if [ -f "$LIB" ] && LD_PRELOAD=$LIB "$BB/alloc" --ops 100 >/dev/null 2>&1; then
	have_lib=1
else
	echo "bench: $B/libheapann.so missing or not working: libheapann rows skipped"
fi

have_ht=0
if [ "${BENCH_HEAPTRACK:-1}" = 1 ]; then
	command -v heaptrack >/dev/null 2>&1 || sh scripts/install-deps.sh heaptrack
	if command -v heaptrack >/dev/null 2>&1; then
		have_ht=1
	else
		echo "bench: heaptrack not installed and could not be installed: heaptrack rows skipped"
	fi
fi

# run_alloc ROUND CONFIG MODE CMD...: run CMD under the runner and append a result
# line "CONFIG MODE ROUND cpu_s self_maxrss_kb captured complete overhead" to
# $TMP/results. CPU is the whole tree's (heaptrack_interpret included); peak RSS is
# the benchmark process's own.
run_alloc() {
	round=$1 config=$2 mode=$3
	shift 3
	: >"$TMP/r.txt"
	if ! "$BB/runner" "$TMP/r.txt" "$@" >"$TMP/o.txt" 2>"$TMP/e.txt"; then
		echo "bench: $config $mode failed:" >&2
		tail -n 3 "$TMP/e.txt" >&2
		return 1
	fi
	cpu=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	line=$(grep '^alloc:' "$TMP/o.txt")
	get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	echo "$config $mode $round $cpu $(get maxrss_kb) $(get captured) $(get complete) $(get overhead_bytes)" \
		>>"$TMP/results"
}

alloc_bench() {
	: >"$TMP/results"
	echo "== allocation benchmark: $OPS ops, window $WINDOW, sizes $SIZES, seed 42, $REPEAT rounds (medians)"
	echo "   libheapann runs: HEAPANN_DEPTH=$HDEPTH; fp mode runs on a -fno-omit-frame-pointer build"
	r=1
	while [ "$r" -le "$REPEAT" ]; do
		for d in $DEPTHS; do
			for t in $THREADS; do
				c="d$d/t$t"
				args="--ops $OPS --depth $d --threads $t --window $WINDOW --sizes $SIZES"
				run_alloc $r $c plain "$BB/alloc" $args
				run_alloc $r $c plain-fp "$BB/alloc-fp" $args
				if [ $have_lib = 1 ]; then
					for m in $MODES; do
						# base:MODE runs MODE with $BENCH_LIB_BASE (an older build)
						lib=$LIB mm=$m
						case $m in base:*) lib=${BENCH_LIB_BASE:-$LIB} mm=${m#base:} ;; esac
						bin=$BB/alloc
						[ "${mm%%:*}" = fp ] && bin=$BB/alloc-fp
						stats=1
						[ "${mm#*:}" = nostats ] && stats=0
						run_alloc $r $c "$m" env LD_PRELOAD="$lib" HEAPANN_UNWIND="${mm%%:*}" \
							HEAPANN_STATS=$stats HEAPANN_DEPTH=$HDEPTH "$bin" $args
					done
				fi
				if [ $have_ht = 1 ]; then
					run_alloc $r $c heaptrack heaptrack -o "$TMP/ht" "$BB/alloc" $args
					rm -f "$TMP"/ht*
				fi
			done
		done
		r=$((r + 1))
	done
	alloc_table
}

# alloc_table: medians per (config, mode): CPU s, the per-round CPU ratio to the
# same round's plain run (plain-fp for fp), and the peak RSS ratio likewise.
alloc_table() {
	awk -v repeat="$REPEAT" '
	function median(key,   n, i, j, t, a) {
		n = split(vals[key], a, " ")
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
		if (n == 0) return -1
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function add(key, v) { vals[key] = (key in vals) ? vals[key] " " v : v }
	{ cpu[$1, $2, $3] = $4; rss[$1, $2, $3] = $5; cap[$1, $2] = $6; comp[$1, $2] = $7; ovh[$1, $2] = $8
	  if (!(($1) in seenc)) { seenc[$1] = 1; configs[++nc] = $1 }
	  if (!(($2) in seenm)) { seenm[$2] = 1; modes[++nm] = $2 }
	  rounds[$3] = 1 }
	END {
		for (k in cpu) {
			split(k, p, SUBSEP); c = p[1]; m = p[2]; r = p[3]
			base = (m ~ /^(base:)?fp/) ? "plain-fp" : "plain"
			add("cpu" SUBSEP c SUBSEP m, cpu[k])
			if ((c, base, r) in cpu && cpu[c, base, r] > 0) {
				add("ratio" SUBSEP c SUBSEP m, cpu[k] / cpu[c, base, r])
				add("rss" SUBSEP c SUBSEP m, rss[k] / rss[c, base, r])
			}
		}
		printf "%-7s | %-11s | %-17s | %-6s | %-6s | %-14s | %-14s | %s\n", "config", "plain CPU s", "mode", "CPU s", "ratio", "peak RSS ratio", "captured depth", "complete stacks"
		printf "%-7s-+-%-11s-+-%-17s-+-%-6s-+-%-6s-+-%-14s-+-%-14s-+-%s\n", "-------", "-----------", "-----------------", "------", "------", "--------------", "--------------", "---------------"
		for (i = 1; i <= nc; i++) {
			c = configs[i]
			for (j = 1; j <= nm; j++) {
				m = modes[j]
				if (m == "plain" || m == "plain-fp") continue
				if (!(("cpu" SUBSEP c SUBSEP m) in vals)) continue
				base = (m ~ /^(base:)?fp/) ? "plain-fp" : "plain"
				printf "%-7s | %-11.3f | %-17s | %-6.3f | %-6s | %-14s | %-14s | %s\n", c, median("cpu" SUBSEP c SUBSEP base), m,
					median("cpu" SUBSEP c SUBSEP m), sprintf("%.2fx", median("ratio" SUBSEP c SUBSEP m)),
					sprintf("%.2fx", median("rss" SUBSEP c SUBSEP m)),
					cap[c, m] < 0 ? "-" : cap[c, m], comp[c, m]
			}
		}
		# Header bytes per block: pad + (7 + captured depth) * 8 + guard, read from
		# the probe block of the first mode with frames.
		for (i = 1; i <= nc; i++) {
			c = configs[i]
			for (j = 1; j <= nm; j++)
				if (ovh[c, modes[j]] + 0 > 0 && !(c in shown) && c ~ /\/t1$/) {
					shown[c] = 1
					printf "header bytes per block at %s (%s, captured depth %d): %d\n", c, modes[j], cap[c, modes[j]], ovh[c, modes[j]]
				}
		}
	}' "$TMP/results"
}

# symbolizer_bench: slot for comparing the two symbolizer backends, mprof-core
# --symbolizer=gdb (MI) against --symbolizer=dw (libdw), in addresses per second.
# A generated program allocates once from each of BENCH_SYM_FUNCS functions (so
# its core holds that many distinct return addresses) under libheapann and aborts;
# both backends then report that core. Runs only once `mprof-core
# --symbolizer=gdb` works on it; otherwise says so and prints no numbers. Then
# bench/symbolizers.sh (the symbolizer's owner's driver: per-address times over
# tests/tools/migdb) when it exists.
symbolizer_bench() {
	echo "== symbolizer backends: gdb (MI) vs dw (libdw)"
	nf=${BENCH_SYM_FUNCS:-2000}
	mp=$(pwd)/$B/mprof-core
	if ! [ -x "$mp" ] || ! [ -f "$LIB" ]; then
		echo "   skipped: $B/mprof-core or $B/libheapann.so missing"
		return 0
	fi
	d=$TMP/sym
	mkdir -p "$d"
	awk -v n="$nf" 'BEGIN {
		print "#include <stdlib.h>"
		for (i = 0; i < n; i++)
			printf "__attribute__((noinline)) void *f%d(void) { void *p = malloc(%d); __asm__ volatile(\"\" : : \"r\"(p) : \"memory\"); return p; }\n", i, 16 + i % 97
		print "static void *(*const fns[])(void) = {"
		for (i = 0; i < n; i++)
			printf "f%d,\n", i
		print "};"
		print "int main(void) { for (unsigned i = 0; i < sizeof fns / sizeof fns[0]; i++) fns[i](); abort(); }"
	}' >"$d/symprog.c"
	$CC -O1 -g -o "$d/symprog" "$d/symprog.c" || { echo "   skipped: cannot build the program"; return 0; }
	(cd "$d" && ulimit -c unlimited 2>/dev/null && LD_PRELOAD=$LIB ./symprog; true) 2>/dev/null
	if ! [ -s "$d/core" ]; then
		echo "   skipped: no core from the generated program"
		return 0
	fi
	if ! "$mp" --symbolizer=gdb --format=json "$d/symprog" "$d/core" >"$d/gdb.json" 2>"$d/gdb.err"; then
		echo "   skipped: mprof-core --symbolizer=gdb does not work yet ($(head -n 1 "$d/gdb.err"))"
		return 0
	fi
	# Distinct frame addresses in the report: what each backend had to name.
	naddr=$(grep -o '"addr":"0x[0-9a-f]*"' "$d/gdb.json" | sort -u | wc -l)
	printf "   %-8s | %-7s | %-7s | %-11s | %s\n" backend "wall s" "CPU s" "addresses" "addresses/s"
	for be in dw gdb; do
		: >"$d/r.txt"
		"$BB/runner" "$d/r.txt" "$mp" --symbolizer=$be --format=json "$d/symprog" "$d/core" \
			>"$d/$be.json" 2>/dev/null
		wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$d/r.txt")
		cpu=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$d/r.txt")
		printf "   %-8s | %-7s | %-7s | %-11s | %s\n" $be "$wall" "$cpu" "$naddr" \
			"$(awk -v n="$naddr" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f", n / w; else print "-" }')"
	done
	echo "   (whole mprof-core runs on a core of $nf distinct call sites: start-up and the scan included)"
	# Per-address figures from the symbolizers' own driver, when it is there.
	if [ -f bench/symbolizers.sh ]; then
		B=$B timeout 600 sh bench/symbolizers.sh || echo "   bench/symbolizers.sh failed or timed out"
	fi
}

# unwind_bench: one stack capture per method at depths 10 and 40 (bench/unwind.c,
# x86-64 only: it runs libheapann's CFI walker outside the preload).
unwind_bench() {
	if [ "$(uname -m)" != x86_64 ]; then
		echo "== unwind: the CFI walker is x86-64 only: skipped"
		return
	fi
	$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude -Iannotate -fno-optimize-sibling-calls \
		-o "$BB/unwind" bench/unwind.c -ldl || return 1
	for d in $DEPTHS; do
		"$BB/unwind" "$d" || echo "bench: unwind at depth $d failed" >&2
	done
}

# Sections: all by default, or the ones named on the command line.
sections=${*:-alloc wide unwind icount real core sym zcore export html snapshot}
for sec in $sections; do
	case $sec in
	alloc) alloc_bench ;;
	wide)
		# the same benchmark with a working set beyond the caches: sizes spread
		# to 64 KiB (8 KiB on average), a larger window, 1, 2 and 4 threads, at depth 40
		(WINDOW=${BENCH_WIDE_WINDOW:-16384}; SIZES=spread; DEPTHS=40; OPS=${BENCH_WIDE_OPS:-300000}
		 THREADS=${BENCH_WIDE_THREADS:-"1 2 4"}; MODES=${BENCH_WIDE_MODES:-"cfi none cfi:nostats"}
		 alloc_bench) ;;
	real) [ "${BENCH_REAL:-1}" = 1 ] && B=$B BENCH_LIB=$LIB sh bench/real.sh ;;
	icount) B=$B BENCH_LIB=$LIB sh bench/icount.sh ;;
	unwind) unwind_bench ;;
	core) [ "${BENCH_CORE:-1}" = 1 ] && B=$B BENCH_LIB=$LIB sh bench/core.sh ;;
	sym) symbolizer_bench ;;
	zcore) [ "${BENCH_ZCORE:-1}" = 1 ] && B=$B BENCH_LIB=$LIB sh bench/zcore.sh ;;   # issue 12: a 1 GB .zst core
	export) [ "${BENCH_EXPORT:-1}" = 1 ] && B=$B BENCH_LIB=$LIB sh bench/export.sh ;;   # issue 12
	html) B=$B sh bench/html.sh ;;   # issue 12: HTML report open time
	snapshot) B=$B BENCH_LIB=$LIB sh bench/snapshot.sh ;;   # issue 13: libheapann's own cores against gcore
	*) echo "bench: unknown section '$sec' (alloc, wide, unwind, icount, real, core, sym, zcore, export, html, snapshot)" >&2; exit 2 ;;
	esac
	echo
done
