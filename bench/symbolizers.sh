#!/bin/sh
# symbolizers.sh - the two symbolizer backends side by side (called from
# bench/run.sh's symbolizer slot): one core of a running test program (gcore via
# mi_snapshot), N distinct return addresses spread over libc, named by libdw and by gdb over MI in the same run, each through
# tests/tools/migdb. Prints start-up time, time per address and the ratio; the
# answers are compared too (gdb has no inline chains: libdw's outermost function
# and innermost line are the reference). A benchmark, not a test.
#
# Environment: B [build], BENCH_SYM_ADDRS [10000], BENCH_SYM_REPEAT [1]
set -u
B=${B:-build}
N=${BENCH_SYM_ADDRS:-10000}
REPEAT=${BENCH_SYM_REPEAT:-1}
MIGDB=$B/tests/tools/migdb
command -v gdb >/dev/null 2>&1 || { echo "symbolizers: gdb not installed, skipped"; exit 0; }
make -s "$MIGDB" >/dev/null || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-symbench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT

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
while [ $r -lt "$REPEAT" ]; do
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
