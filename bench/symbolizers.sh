#!/bin/sh
# symbolizers.sh - the symbolizers side by side (called from bench/run.sh's
# symbolizer slot), in two parts:
# 1. one core of a running test program (gcore via mi_snapshot), N distinct
#    return addresses spread over libc, named by libdw and by gdb over MI in the
#    same run, each through tests/tools/migdb. Prints start-up time, time per
#    address and the ratio; the answers are compared too (gdb has no inline
#    chains: libdw's outermost function and innermost line are the reference).
# 2. a big generated program (tests/prog/symgen.py: BENCH_SYM_FUNCS functions,
#    four call sites each, half of them in inlined code; built once and kept in
#    $B/bench-symgen/), 1k/10k/100k distinct return addresses named by the libdw
#    backend (fast path), by its reference path (SYM_DW_REFERENCE: libdw asked
#    per address, the path before issue 15), by eu-addr2line -f -i (elfutils;
#    1k only unless BENCH_SYM_EU_MAX says more) and, for 1k only, by gdb over
#    MI. Whole-process wall time, medians of BENCH_SYM_REPEAT interleaved rounds, in us per address and as ratios to the
#    fast path; the fast path's answers are checked against the reference's.
#    BENCH_SYM_CALLGRIND=1 adds instruction counts (valgrind --tool=callgrind)
#    of fast and reference at 10k: repeatable on a loaded machine, unlike time.
#    Two more columns for the per-module index cache (symdw --cache-dir): "cold"
#    is the fast path writing the cache (the first run; the cache removed before
#    each round), "warm" answers from it (written by a run on the same addresses).
#    With BENCH_SYM_CALLGRIND=1, no cache, cold and warm counts at each size.
# 3. the same generated program built by clang-14 (no .debug_aranges), 10k
#    addresses: no cache, cold and warm (part "clang").
# In part 1 the libdw paths are timed cold and warm the same way.
# A benchmark, not a test.
#
# Environment: B [build], BENCH_SYM_ADDRS [10000] (part 1), BENCH_SYM_REPEAT [3],
# BENCH_SYM_FUNCS [26000], BENCH_SYM_SIZES ["1000 10000 100000"],
# BENCH_SYM_CALLGRIND [0], BENCH_SYM_PARTS ["libc gen clang"],
# BENCH_SYM_LIBC_REPEAT [1] (rounds of part 1's gdb comparison; its libdw paths
# use BENCH_SYM_REPEAT), BENCH_SYM_EU_MAX [1000] (eu-addr2line -i costs about
# 10 ms an address on this program: larger sets only on request).
set -u
B=${B:-build}
N=${BENCH_SYM_ADDRS:-10000}
REPEAT=${BENCH_SYM_REPEAT:-3}
NFUNCS=${BENCH_SYM_FUNCS:-26000}
SIZES=${BENCH_SYM_SIZES:-1000 10000 100000}
PARTS=${BENCH_SYM_PARTS:-libc gen clang}
MIGDB=$B/tests/tools/migdb
SYMDW=$B/tests/tools/symdw
command -v gdb >/dev/null 2>&1 || { echo "symbolizers: gdb not installed, skipped"; exit 0; }
make -s "$MIGDB" "$SYMDW" >/dev/null || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-symbench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT

# spread N RETS BASE: N distinct addresses taken evenly from the sorted file RETS
# (hex, one a line), plus BASE
spread() {
	python3 - "$1" "$3" "$2" <<'PY'
import sys
n, base = int(sys.argv[1]), int(sys.argv[2], 16)
rets = sorted({int(l, 16) for l in open(sys.argv[3]) if l.strip()})
step = max(1, len(rets) / n) if rets else 1
pick = sorted({rets[int(i * step)] for i in range(min(n, len(rets)))})
print("\n".join("0x%x" % (base + r) for r in pick))
PY
}

# call_rets EXE: the address after every call instruction (a return address)
call_rets() {
	objdump -d --no-show-raw-insn "$1" 2>/dev/null | awk '
		/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); if (want) { print a; want = 0 } if ($2 ~ /^call/) want = 1 }'
}

# wall CMD...: run CMD (output to $TMP/w.out), print its wall time in seconds
wall() {
	t0=$(date +%s%N)
	"$@" >"$TMP/w.out" 2>"$TMP/w.err"
	t1=$(date +%s%N)
	echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }

gen_part() {
	command -v python3 >/dev/null 2>&1 || { echo "symbolizers: python3 missing, generated-program part skipped"; return 0; }
	command -v eu-addr2line >/dev/null 2>&1 || sh scripts/install-deps.sh elfutils >/dev/null 2>&1
	G=$B/bench-symgen/$NFUNCS
	if [ ! -x "$G/prog" ]; then
		echo "building the generated program ($NFUNCS functions; once, kept in $G) ..."
		rm -rf "$G" && mkdir -p "$G" && python3 tests/prog/symgen.py "$NFUNCS" 30 "$G" || return 1
		(cd "$G" && ls gen*.c main.c | xargs -P2 -I{} nice gcc -g -O2 -c {} && gcc -o prog.tmp gen*.o main.o &&
			rm -f gen*.o main.o && mv prog.tmp prog) || { echo "symbolizers: cannot build $G/prog"; return 1; }
	fi
	call_rets "$G/prog" >"$TMP/grets"
	total=$(wc -l <"$TMP/grets")
	printf "\nsymbolizers, generated program: %d functions, %d call sites, %s MB; distinct return addresses,\n" \
		"$NFUNCS" "$total" "$(du -m "$G/prog" | cut -f1)"
	echo "whole-process wall time per address (median of $REPEAT interleaved rounds), ratio to the fast path:"
	printf "%-9s | %-13s | %-13s | %-13s | %-13s | %-13s | %-13s | %-8s | %-8s | %-8s | %-8s | %-9s | %s\n" addresses \
		"libdw fast" "cache cold" "cache warm" "libdw ref" "eu-addr2line" "gdb (MI)" "cold/fst" "fst/warm" \
		"ref/fast" "eu/fast" "gdb/fast" "fast = ref = warm"
	echo "----------+---------------+---------------+---------------+---------------+---------------+---------------+----------+----------+----------+----------+-----------+------------------"
	for n in $SIZES; do
		spread "$n" "$TMP/grets" 0 >"$TMP/a$n"
		k=$(wc -l <"$TMP/a$n")
		python3 -c '
import sys
for l in open(sys.argv[1]):
    if l.strip(): print("0x%x" % (int(l, 16) - 1))' "$TMP/a$n" >"$TMP/m$n"
		: >"$TMP/tf" ; : >"$TMP/tr" ; : >"$TMP/te" ; : >"$TMP/tg" ; : >"$TMP/tc" ; : >"$TMP/tw"
		r=0
		while [ $r -lt "$REPEAT" ]; do
			wall "$SYMDW" --quiet --addr-file "$TMP/a$n" --raw-elf "$G/prog" >>"$TMP/tf"
			rm -rf "$TMP/cache"
			wall "$SYMDW" --quiet --cache-dir "$TMP/cache" --addr-file "$TMP/a$n" --raw-elf "$G/prog" >>"$TMP/tc"
			wall "$SYMDW" --quiet --cache-dir "$TMP/cache" --addr-file "$TMP/a$n" --raw-elf "$G/prog" >>"$TMP/tw"
			wall "$SYMDW" --quiet --reference --addr-file "$TMP/a$n" --raw-elf "$G/prog" >>"$TMP/tr"
			if [ "$n" -le "${BENCH_SYM_EU_MAX:-1000}" ] && command -v eu-addr2line >/dev/null 2>&1; then
				t0=$(date +%s%N)
				eu-addr2line -f -i -C -e "$G/prog" <"$TMP/m$n" >/dev/null 2>&1
				t1=$(date +%s%N)
				echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }' >>"$TMP/te"
			fi
			if [ "$n" -le 1000 ]; then
				wall "$MIGDB" --time --addr-file "$TMP/a$n" --raw-elf "$G/prog" >>"$TMP/tg"
			fi
			r=$((r + 1))
		done
		"$SYMDW" --addr-file "$TMP/a$n" --raw-elf "$G/prog" >"$TMP/f.res" 2>/dev/null
		"$SYMDW" --reference --addr-file "$TMP/a$n" --raw-elf "$G/prog" >"$TMP/r.res" 2>/dev/null
		"$SYMDW" --cache-dir "$TMP/cache" --addr-file "$TMP/a$n" --raw-elf "$G/prog" >"$TMP/w.res" 2>/dev/null
		same=$(cmp -s "$TMP/f.res" "$TMP/r.res" && cmp -s "$TMP/w.res" "$TMP/r.res" && echo yes || echo NO)
		tf=$(median <"$TMP/tf") tr=$(median <"$TMP/tr") te=$(median <"$TMP/te") tg=$(median <"$TMP/tg")
		tc=$(median <"$TMP/tc") tw=$(median <"$TMP/tw")
		echo "$k $tf $tr $te $tg $same $tc $tw" | awk '
			function us(t) { return t > 0 ? sprintf("%.1f us", t * 1e6 / $1) : "-" }
			function ra(t) { return t > 0 && $2 > 0 ? sprintf("%.1fx", t / $2) : "-" }
			{ printf "%-9d | %-13s | %-13s | %-13s | %-13s | %-13s | %-13s | %-8s | %-8s | %-8s | %-8s | %-8s | %s\n",
				$1, us($2), us($7), us($8), us($3), us($4), us($5), ra($7),
				($8 > 0 ? sprintf("%.1fx", $2 / $8) : "-"), ra($3), ra($4), ra($5), $6 }'
	done
	echo "(gdb: whole run of tests/tools/migdb, start-up included, 1k addresses only; eu-addr2line reads the"
	echo " addresses minus one from stdin, up to BENCH_SYM_EU_MAX; fast = ref: the fast path's output is byte"
	echo " for byte the reference's)"
	if [ "${BENCH_SYM_CALLGRIND:-0}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
		for n in $SIZES; do
			spread "$n" "$TMP/grets" 0 >"$TMP/cg"
			rm -rf "$TMP/cgcache"
			modes="fast cold warm"
			[ "$n" = 10000 ] && modes="fast reference cold warm"
			for mode in $modes; do
				flag=
				case $mode in reference) flag=--reference ;; cold|warm) flag="--cache-dir $TMP/cgcache" ;; esac
				valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$mode" "$SYMDW" --quiet $flag \
					--addr-file "$TMP/cg" --raw-elf "$G/prog" 2>&1 | sed -n 's/.*refs: *//p' | tr -d , >"$TMP/ir.$mode"
			done
			[ "$n" = 10000 ] && awk -v f="$(cat "$TMP/ir.fast")" -v r="$(cat "$TMP/ir.reference")" 'BEGIN {
				printf "callgrind, 10k addresses: fast %.0fM instructions, reference %.0fM: %.2fx\n", f / 1e6, r / 1e6, r / f }'
			awk -v n="$n" -v f="$(cat "$TMP/ir.fast")" -v c="$(cat "$TMP/ir.cold")" -v w="$(cat "$TMP/ir.warm")" 'BEGIN {
				printf "callgrind, %d addresses, index cache: no cache %.1fM, cold (writing it) %.1fM = %.2fx, warm %.1fM: no cache/warm %.1fx\n",
					n, f / 1e6, c / 1e6, c / f, w / 1e6, f / w }'
		done
	fi
}

# clang_part: the generated program built by clang (no .debug_aranges: CUs are
# found by their own ranges, which the index cache keeps), 10k addresses: no
# cache, cold and warm, wall medians (and callgrind counts with
# BENCH_SYM_CALLGRIND=1); warm's answers compared with no cache's.
clang_part() {
	command -v python3 >/dev/null 2>&1 || { echo "symbolizers: python3 missing, clang part skipped"; return 0; }
	command -v clang-14 >/dev/null 2>&1 || sh scripts/install-deps.sh clang-14 >/dev/null 2>&1
	command -v clang-14 >/dev/null 2>&1 || { echo "symbolizers: clang-14 missing, clang part skipped"; return 0; }
	G=$B/bench-symgen/clang-$NFUNCS
	if [ ! -x "$G/prog" ]; then
		echo "building the generated program with clang-14 ($NFUNCS functions; once, kept in $G) ..."
		rm -rf "$G" && mkdir -p "$G" && python3 tests/prog/symgen.py "$NFUNCS" 30 "$G" || return 1
		(cd "$G" && ls gen*.c main.c | xargs -P2 -I{} nice clang-14 -g -O2 -c {} &&
			clang-14 -Wl,--build-id -o prog.tmp gen*.o main.o && rm -f gen*.o main.o && mv prog.tmp prog) ||
			{ echo "symbolizers: cannot build $G/prog"; return 1; }
	fi
	call_rets "$G/prog" >"$TMP/crets"
	spread 10000 "$TMP/crets" 0 >"$TMP/ca"
	k=$(wc -l <"$TMP/ca")
	: >"$TMP/cf"; : >"$TMP/cc"; : >"$TMP/cw"
	r=0
	while [ $r -lt "$REPEAT" ]; do
		wall "$SYMDW" --quiet --addr-file "$TMP/ca" --raw-elf "$G/prog" >>"$TMP/cf"
		rm -rf "$TMP/ccache"
		wall "$SYMDW" --quiet --cache-dir "$TMP/ccache" --addr-file "$TMP/ca" --raw-elf "$G/prog" >>"$TMP/cc"
		wall "$SYMDW" --quiet --cache-dir "$TMP/ccache" --addr-file "$TMP/ca" --raw-elf "$G/prog" >>"$TMP/cw"
		r=$((r + 1))
	done
	"$SYMDW" --addr-file "$TMP/ca" --raw-elf "$G/prog" >"$TMP/cf.res" 2>/dev/null
	"$SYMDW" --cache-dir "$TMP/ccache" --addr-file "$TMP/ca" --raw-elf "$G/prog" >"$TMP/cw.res" 2>/dev/null
	printf "\nsymbolizers, the generated program built by clang-14 (no .debug_aranges), %d addresses:\n" "$k"
	echo "$k $(median <"$TMP/cf") $(median <"$TMP/cc") $(median <"$TMP/cw") $(cmp -s "$TMP/cf.res" "$TMP/cw.res" && echo yes || echo NO) $(ls "$TMP/ccache" | grep -c symidx)" | awk '{
		printf "  no cache %.1f us each, cold (writing it) %.1f us each (%.2fx), warm %.1f us each (no cache/warm %.1fx); warm = no cache: %s; cache files: %d\n",
			$2 * 1e6 / $1, $3 * 1e6 / $1, ($2 > 0 ? $3 / $2 : 0), $4 * 1e6 / $1, ($4 > 0 ? $2 / $4 : 0), $5, $6 }'
	if [ "${BENCH_SYM_CALLGRIND:-0}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
		rm -rf "$TMP/ccgcache"
		for mode in fast cold warm; do
			flag=
			case $mode in cold|warm) flag="--cache-dir $TMP/ccgcache" ;; esac
			valgrind --tool=callgrind --callgrind-out-file="$TMP/ccg.$mode" "$SYMDW" --quiet $flag \
				--addr-file "$TMP/ca" --raw-elf "$G/prog" 2>&1 | sed -n 's/.*refs: *//p' | tr -d , >"$TMP/cir.$mode"
		done
		awk -v f="$(cat "$TMP/cir.fast")" -v c="$(cat "$TMP/cir.cold")" -v w="$(cat "$TMP/cir.warm")" 'BEGIN {
			printf "  callgrind: no cache %.1fM, cold %.1fM (%.2fx), warm %.1fM (no cache/warm %.1fx)\n",
				f / 1e6, c / 1e6, c / f, w / 1e6, f / w }'
	fi
}

libc_part() {
cc -g -O0 -shared -fPIC -o "$TMP/libmi_lib.so" tests/prog/mi_lib.c || exit 1
cc -g -O2 -o "$TMP/mi_prog" tests/prog/mi_prog.c -L"$TMP" -lmi_lib -Wl,-rpath,"$TMP" || exit 1
"$TMP/mi_prog" >"$TMP/out" 2>&1 &
pid=$!
n=0; while ! grep -q '^ready' "$TMP/out" && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
# libc's path and load address, from the process's own map
set -- $(awk '$6 ~ /\/libc\.so/ && $3 == "00000000" { split($1, r, "-"); print $6, r[1]; exit }' /proc/$pid/maps)
libc=${1:-} base=${2:-}
"$MIGDB" --snapshot $pid "$TMP/core" >"$TMP/snap" 2>&1
kill $pid; wait $pid 2>/dev/null
[ -n "$libc" ] && [ -s "$TMP/core" ] || { echo "symbolizers: could not make a core"; cat "$TMP/snap"; exit 1; }

# N distinct return addresses: the instruction after each call in libc (as a
# stack would hold them), spread evenly over the library
objdump -d --no-show-raw-insn "$libc" 2>/dev/null | awk '
	/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); if (want) { print a; want = 0 } if ($2 ~ /^call/) want = 1 }' >"$TMP/rets"
python3 - "$N" "$base" "$TMP/rets" >"$TMP/addrs" <<'PY' || exit 1
import sys
n, base = int(sys.argv[1]), int(sys.argv[2], 16)
rets = sorted({int(l, 16) for l in open(sys.argv[3]) if l.strip()})
step = max(1, len(rets) / n) if rets else 1
pick = sorted({rets[int(i * step)] for i in range(min(n, len(rets)))})
print("\n".join("0x%x" % (base + r) for r in pick))
PY
count=$(wc -l <"$TMP/addrs")

r=0
while [ $r -lt "${BENCH_SYM_LIBC_REPEAT:-1}" ]; do
	"$MIGDB" --time --compare --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >"$TMP/cmp" 2>"$TMP/time"
	awk -v n="$count" '
		/^gdb: open/ { gopen = $3; gres = $8 }
		/^dw: open/ { dopen = $3; dres = $8 }
		END {
			printf "symbolizers, %d return addresses in libc (one core, same run):\n", n
			printf "  libdw:    start %.3f s, %.3f s for all (%.1f us each)\n", dopen, dres, dres * 1e6 / n
			printf "  gdb (MI): start %.3f s, %.3f s for all (%.3f ms each)\n", gopen, gres, gres * 1e3 / n
			if (dres > 0) printf "  gdb/libdw time per address: %.1fx; gdb start-up adds %.2f s (libdw opens modules lazily)\n", gres / dres, gopen - dopen
		}' "$TMP/time"
	sed -n 's/^compared \(.*\)/  answers compared: \1 (gdb: one frame, line by its is_stmt rules; see README)/p' "$TMP/cmp"
	r=$((r + 1))
done
# the libdw backend's fast path against its reference path on the same addresses,
# and with the index cache: cold (writing it) and warm
: >"$TMP/lf"; : >"$TMP/lr"; : >"$TMP/lc"; : >"$TMP/lw"
r=0
while [ $r -lt "$REPEAT" ]; do
	wall "$SYMDW" --quiet --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >>"$TMP/lf"
	wall "$SYMDW" --quiet --reference --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >>"$TMP/lr"
	rm -rf "$TMP/lcache"
	wall "$SYMDW" --quiet --cache-dir "$TMP/lcache" --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >>"$TMP/lc"
	wall "$SYMDW" --quiet --cache-dir "$TMP/lcache" --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >>"$TMP/lw"
	r=$((r + 1))
done
"$SYMDW" --cache-dir "$TMP/lcache" --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >"$TMP/lw.res" 2>/dev/null
"$SYMDW" --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >"$TMP/lf.res" 2>/dev/null
"$SYMDW" --reference --addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" >"$TMP/lr.res" 2>/dev/null
echo "$count $(median <"$TMP/lf") $(median <"$TMP/lr") $(cmp -s "$TMP/lf.res" "$TMP/lr.res" && echo yes || echo NO)" | awk '{
	printf "  libdw fast path %.1f us each, reference path %.1f us each (whole process, median of '"$REPEAT"'): %.2fx; same output: %s\n",
		$2 * 1e6 / $1, $3 * 1e6 / $1, ($2 > 0 ? $3 / $2 : 0), $4 }'
echo "$count $(median <"$TMP/lf") $(median <"$TMP/lc") $(median <"$TMP/lw") $(median <"$TMP/lr") $(cmp -s "$TMP/lw.res" "$TMP/lr.res" && echo yes || echo NO)" | awk '{
	printf "  index cache: cold (writing it) %.1f us each (%.2fx fast), warm %.1f us each: fast/warm %.1fx, reference/warm %.1fx; warm = reference: %s\n",
		$3 * 1e6 / $1, ($2 > 0 ? $3 / $2 : 0), $4 * 1e6 / $1, ($4 > 0 ? $2 / $4 : 0), ($4 > 0 ? $5 / $4 : 0), $6 }'
if [ "${BENCH_SYM_CALLGRIND:-0}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
	rm -rf "$TMP/lcgcache"
	for mode in fast reference cold warm; do
		flag=
		case $mode in reference) flag=--reference ;; cold|warm) flag="--cache-dir $TMP/lcgcache" ;; esac
		valgrind --tool=callgrind --callgrind-out-file="$TMP/lcg.$mode" "$SYMDW" --quiet $flag \
			--addr-file "$TMP/addrs" "$TMP/mi_prog" "$TMP/core" 2>&1 | sed -n 's/.*refs: *//p' | tr -d , >"$TMP/lir.$mode"
	done
	awk -v f="$(cat "$TMP/lir.fast")" -v r="$(cat "$TMP/lir.reference")" -v c="$(cat "$TMP/lir.cold")" \
		-v w="$(cat "$TMP/lir.warm")" -v n="$count" 'BEGIN {
		printf "  callgrind, %d libc addresses: fast %.0fM, reference %.0fM, cache cold %.0fM (%.2fx fast), warm %.1fM (fast/warm %.1fx)\n",
			n, f / 1e6, r / 1e6, c / 1e6, c / f, w / 1e6, f / w }'
fi
}

for part in $PARTS; do
	case $part in
	libc) libc_part ;;
	gen) gen_part ;;
	clang) clang_part ;;
	*) echo "symbolizers: unknown part '$part' (libc, gen, clang)" >&2; exit 2 ;;
	esac
done
