#!/bin/sh
# real.sh - the capture cost on real programs (issue 15): python3 with
# PYTHONMALLOC=malloc on a dict-heavy script, sqlite3 inserting rows into an
# indexed table, and gcc's cc1 -O2 on a generated C file; each run plain, under
# libheapann (default settings), under heaptrack (record only) and under valgrind
# massif. Paired runs: every round runs every program in every mode, the modes in
# a rotating order, and the table gives per program the median over the rounds of
# the CPU-time ratio to the same round's plain run. A benchmark, not a test.
#
# cc1 is run directly (the command `gcc -O2 -c` would run) rather than through the
# gcc driver: libheapann's LD_PRELOAD reaches a child anyway, but heaptrack and
# massif measure only the process they start unless told to follow children, so
# the cc1 process is what all four modes see.
#
# Environment (defaults in brackets):
#   BENCH_REAL_REPEAT [3]         rounds
#   BENCH_REAL_PROGS ["python sqlite cc1"]  programs
#   BENCH_REAL_MODES ["heapann heaptrack massif"]  modes besides plain; also
#                                 heapann-base: libheapann built before a change
#                                 (BENCH_LIB_BASE), measured in the same rounds
#   BENCH_REAL_SCALE [1]          multiplies the work of each program (python
#                                 rounds, sqlite rows = 300000 x SCALE, cc1 functions)
#   BENCH_LIB [$B/libheapann.so]  the preload library; B [build]
# Usage: sh bench/real.sh   (also `sh bench/run.sh real`; BENCH_REAL=0 skips it there)
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
REPEAT=${BENCH_REAL_REPEAT:-3}
PROGS=${BENCH_REAL_PROGS:-"python sqlite cc1"}
MODES=${BENCH_REAL_MODES:-"heapann heaptrack massif"}
SCALE=${BENCH_REAL_SCALE:-1}
LIB=${BENCH_LIB:-$(pwd)/$B/libheapann.so}
BB=$B/bench
CC=${CC:-cc}

mkdir -p "$BB" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-real.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$BB/runner" bench/runner.c || exit 1

echo "== real programs: CPU time (user+sys, whole process tree) against the plain run; $REPEAT rounds, medians"

# ---- the tools ------------------------------------------------------------
if ! [ -f "$LIB" ]; then
	echo "   $LIB missing: libheapann column skipped"
	MODES=$(echo " $MODES " | sed 's/ heapann / /')
fi
case " $MODES " in *" heaptrack "*)
	command -v heaptrack >/dev/null 2>&1 || sh scripts/install-deps.sh heaptrack >/dev/null 2>&1
	if ! command -v heaptrack >/dev/null 2>&1; then
		echo "   heaptrack not installed and could not be installed: column skipped"
		MODES=$(echo " $MODES " | sed 's/ heaptrack / /')
	fi ;;
esac
# Record only where heaptrack can: --record-only (newer versions) or --raw (1.x:
# "only record raw data, do not interpret it"); else the plain command.
HT_OPT=
if command -v heaptrack >/dev/null 2>&1; then
	hh=$(heaptrack --help 2>&1)
	case $hh in
	*--record-only*) HT_OPT=--record-only ;;
	*--raw*) HT_OPT=--raw ;;
	esac
fi
case " $MODES " in *" massif "*)
	command -v valgrind >/dev/null 2>&1 || sh scripts/install-deps.sh valgrind >/dev/null 2>&1
	if ! command -v valgrind >/dev/null 2>&1; then
		echo "   valgrind not installed and could not be installed: massif column skipped"
		MODES=$(echo " $MODES " | sed 's/ massif / /')
	fi ;;
esac

# ---- the programs ---------------------------------------------------------
# Each prog_PROG sets CMD (the command, as words) and ENV (extra NAME=VALUE
# words), or prints why it is skipped and returns 1.
py=
for p in /usr/bin/python3 /usr/local/bin/python3; do
	[ -x "$p" ] && { py=$p; break; }
done
[ -n "$py" ] || py=$(command -v python3 2>/dev/null)

# python3: dicts of strings and ints built, looked up, updated and dropped; a
# window of 200 dicts stays alive so the heap has a working set.
cat >"$TMP/dicts.py" <<EOF
import sys
rounds = 30000 * $SCALE
keep = [None] * 200
total = 0
for i in range(rounds):
    d = {"k%d" % j: j * i for j in range(24)}
    d.update({(i, j): str(j) for j in range(8)})
    total += d["k%d" % (i % 24)] + len(d)
    keep[i % 200] = d
print(total, file=sys.stderr)
EOF
prog_python() {
	[ -n "$py" ] || { echo "   python3 not found: skipped"; return 1; }
	CMD="$py $TMP/dicts.py"
	ENV="PYTHONMALLOC=malloc"
}

# sqlite3: 300000 rows (x SCALE) inserted one statement each, in one
# transaction, into a table with an index on a text column.
rows=$((300000 * SCALE))
prog_sqlite() {
	if ! command -v sqlite3 >/dev/null 2>&1; then
		sh scripts/install-deps.sh sqlite3 >/dev/null 2>&1
		command -v sqlite3 >/dev/null 2>&1 || { echo "   sqlite3 not installed and could not be installed: skipped"; return 1; }
	fi
	if ! [ -s "$TMP/ins.sql" ]; then
		awk -v n="$rows" 'BEGIN {
			print "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			print "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);"
			print "CREATE INDEX t_name ON t(name);"
			print "BEGIN;"
			for (i = 0; i < n; i++)
				printf "INSERT INTO t(name, v) VALUES (%ckey-%d-%d%c, %d);\n", 39, (i * 7919) % n, i, 39, i
			print "COMMIT;"
			print "SELECT count(*), sum(v) FROM t;"
		}' >"$TMP/ins.sql"
	fi
	CMD="sqlite3 -init $TMP/ins.sql $TMP/db.sqlite .quit"
	ENV=
}

# cc1 -O2 on a generated file of 150 (x SCALE) functions with loops, switches
# and structs: the compiler's own allocations (GC'd trees, obstacks, bitmaps).
prog_cc1() {
	cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
	case $cc1 in /*) ;; *) echo "   gcc's cc1 not found: skipped"; return 1 ;; esac
	if ! [ -s "$TMP/big.c" ]; then
		awk -v n="$((150 * SCALE))" 'BEGIN {
			print "struct s { int a, b; double c; struct s *next; };"
			for (i = 0; i < n; i++) {
				printf "int f%d(struct s *p, int x) {\n", i
				printf "  int r = %d;\n  for (int k = 0; k < x; k++) {\n", i
				printf "    switch ((k + r) %% 5) {\n"
				for (c = 0; c < 5; c++)
					printf "    case %d: r += p->a * %d + k; p->c += r * 0.5; break;\n", c, i + c
				printf "    }\n    if (p->next) r ^= f%d(p->next, x - 1);\n  }\n", (i > 0 ? i - 1 : 0)
				printf "  return r + (int)p->c;\n}\n"
			}
		}' >"$TMP/big.c"
	fi
	CMD="$cc1 -quiet -O2 $TMP/big.c -o $TMP/big.s"
	ENV=
}

# ---- one run --------------------------------------------------------------
# run_one ROUND PROG MODE: run the program once in MODE and append
# "PROG MODE ROUND cpu_s wall_s" to $TMP/results.
run_one() {
	round=$1 prog=$2 mode=$3
	rm -f "$TMP/db.sqlite" "$TMP"/ht* "$TMP"/massif.out
	case $mode in
	plain) pre= ;;
	heapann) pre="env LD_PRELOAD=$LIB" ;;
	heapann-base) pre="env LD_PRELOAD=${BENCH_LIB_BASE:-$LIB}" ;;
	heaptrack) pre="heaptrack $HT_OPT -o $TMP/ht" ;;
	massif) pre="valgrind -q --tool=massif --massif-out-file=$TMP/massif.out" ;;
	esac
	: >"$TMP/r.txt"
	# shellcheck disable=SC2086 # CMD and ENV are word lists on purpose
	if ! env $ENV "$BB/runner" "$TMP/r.txt" $pre $CMD >"$TMP/o.txt" 2>"$TMP/e.txt"; then
		echo "   $prog under $mode failed:" >&2
		tail -n 3 "$TMP/e.txt" >&2
		return 1
	fi
	cpu=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	echo "$prog $mode $round $cpu $wall" >>"$TMP/results"
}

: >"$TMP/results"
progs=
for p in $PROGS; do
	case $p in python|sqlite|cc1) ;; *) echo "real: unknown program '$p' (python, sqlite, cc1)" >&2; exit 2 ;; esac
	if prog_$p; then progs="$progs $p"; fi
done
allmodes="plain $MODES"
nm=$(echo $allmodes | wc -w)
r=1
while [ "$r" -le "$REPEAT" ]; do
	for p in $progs; do
		prog_$p >/dev/null
		# rotate the order each round so no mode always runs after the same one
		i=0
		while [ $i -lt "$nm" ]; do
			m=$(echo $allmodes | tr ' ' '\n' | sed -n "$(( (i + r - 1) % nm + 1 ))p")
			run_one $r $p $m
			i=$((i + 1))
		done
	done
	r=$((r + 1))
done

awk -v modes="$MODES" -v htopt="$HT_OPT" '
function median(s,   n, i, j, t, a) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n == 0) return -1
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(k, v) { vals[k] = (k in vals) ? vals[k] " " v : v }
{ cpu[$1, $2, $3] = $4; if (!($1 in seen)) { seen[$1] = 1; progs[++np] = $1 } }
END {
	nm = split(modes, m, " ")
	for (k in cpu) {
		split(k, p, SUBSEP)
		add("cpu" SUBSEP p[1] SUBSEP p[2], cpu[k])
		if ((p[1], "plain", p[3]) in cpu && cpu[p[1], "plain", p[3]] > 0)
			add("ratio" SUBSEP p[1] SUBSEP p[2], cpu[k] / cpu[p[1], "plain", p[3]])
	}
	hdr = sprintf("%-8s | %-11s", "program", "plain CPU s")
	for (j = 1; j <= nm; j++)
		hdr = hdr sprintf(" | %-17s", m[j] (m[j] == "heaptrack" && htopt != "" ? " " htopt : ""))
	print hdr
	line = "---------+-------------"
	for (j = 1; j <= nm; j++) line = line "+-------------------"
	print line
	for (i = 1; i <= np; i++) {
		q = progs[i]
		row = sprintf("%-8s | %-11.3f", q, median(vals["cpu" SUBSEP q SUBSEP "plain"]))
		for (j = 1; j <= nm; j++) {
			k = "ratio" SUBSEP q SUBSEP m[j]
			row = row sprintf(" | %-17s", (k in vals) ? sprintf("%.2fx (%.2f s)", median(vals[k]), median(vals["cpu" SUBSEP q SUBSEP m[j]])) : "-")
		}
		print row
	}
}' "$TMP/results"
