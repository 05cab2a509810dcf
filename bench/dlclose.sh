#!/bin/sh
# dlclose.sh - what libheapann's dlclose wrapper costs (the table of unloaded
# libraries, annotate/export_dl.c): a program dlopens and dlcloses a small
# library BENCH_DL_N times (each call unloads it) under libheapann and, in the
# same rounds alternated, under BENCH_LIB_BASE (a build without the wrapper),
# and plain. Prints each one's median CPU seconds per round and the ratio.
# Also the instructions (callgrind) of one run each when valgrind is there.
# Environment: B [build], BENCH_DL_N [2000], BENCH_DL_ROUNDS [7],
# BENCH_LIB_BASE [none: the new build and plain alone].
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
N=${BENCH_DL_N:-2000}
ROUNDS=${BENCH_DL_ROUNDS:-7}
LIB=$(pwd)/$B/libheapann.so
BASE=${BENCH_LIB_BASE:-}
echo "== dlclose: $N dlopen+dlclose pairs that unload a library"
[ -f "$LIB" ] || { echo "   skipped: build first"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "   skipped: python3 not installed"; exit 0; }
D=$(mktemp -d /tmp/dlclose.XXXXXX) || exit 1
trap 'rm -rf "$D"' EXIT
printf 'int dl_x(int v) { return v + 1; }\n' >"$D/lib.c"
cat >"$D/loop.c" <<'CEOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[2]);

	for (int i = 0; i < n; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);

		if (!h || dlclose(h) != 0)
			return 1;
	}
	return 0;
}
CEOF
cc -O2 -fPIC -shared -o "$D/lib.so" "$D/lib.c" && cc -O2 -o "$D/loop" "$D/loop.c" -ldl || exit 1
# medians of ROUNDS alternated runs: CPU of the child (user + sys)
python3 - "$D/loop" "$D/lib.so" "$N" "$ROUNDS" "$LIB" "$BASE" <<'PYEOF'
import os, resource, subprocess, sys
loop, lib, n, rounds, new, base = sys.argv[1:7]
confs = [("plain", None), ("libheapann", new)] + ([("base", base)] if base else [])
times = {c: [] for c, _ in confs}
for r in range(int(rounds)):
    for name, pre in confs:
        env = dict(os.environ)
        if pre:
            env["LD_PRELOAD"] = pre
        b = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([loop, lib, n], env=env, check=True)
        a = resource.getrusage(resource.RUSAGE_CHILDREN)
        times[name].append(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime)
med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
for k in med:
    print("   %-10s median %.3f s CPU (%s)" % (k, med[k], " ".join("%.3f" % t for t in times[k])))
if base:
    print("   libheapann / base: %.3fx; per pair %+.1f us" %
          (med["libheapann"] / med["base"], (med["libheapann"] - med["base"]) / int(n) * 1e6))
print("   libheapann / plain: %.3fx" % (med["libheapann"] / med["plain"]))
PYEOF
if command -v valgrind >/dev/null 2>&1; then
	for c in new base; do
		l=$LIB; [ $c = base ] && l=$BASE
		[ -n "$l" ] || continue
		env LD_PRELOAD="$l" valgrind --tool=callgrind --callgrind-out-file="$D/cg.$c" "$D/loop" "$D/lib.so" 200 \
			>/dev/null 2>"$D/cg.$c.err"
		ir=$(sed -n 's/^==[0-9]*== Collected : *\([0-9]*\)$/\1/p' "$D/cg.$c.err")
		echo "   callgrind, 200 pairs, $c: $ir instructions"
	done
fi
